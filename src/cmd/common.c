/*
 * common.c - what every verb shares: error printing, loading a module,
 * picking its function (usage and options: options.c).
 */
#include "cmd.h"

#include <stdarg.h>
#include "ana/ana.h"
#include "base/file.h"
#include "base/layout.h"
#include "ptx/parse.h"
#include "splice/recipe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cmd_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = xmalloc(n > 0 ? (size_t)n + 1 : 1);
	msg[0] = 0;
	va_start(ap, fmt);
	if (n > 0)
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	fprintf(stderr, "d4r-splice: %s\n", msg);
	cmd_json_error(msg); /* the error document's message (jsonout.h) */
	free(msg);
	return EXIT_ERROR;
}

int cmd_load_module(const char *path, LoadedModule *lm)
{
	Err e = ERR_INIT;
	memset(lm, 0, sizeof(*lm));
	if (map_open(&lm->mf, path, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		err_release(&e);
		return -1;
	}
	double t0 = now_seconds();
	lm->m = ptx_parse(map_name(path), lm->mf.p, lm->mf.n, &e);
	lm->parse_s = now_seconds() - t0;
	if (!lm->m) {
		fprintf(stderr, "%s\n", err_msg(&e));
		cmd_json_error(err_msg(&e));
		err_release(&e);
		map_close(&lm->mf);
		return -1;
	}
	err_release(&e);
	return 0;
}

void cmd_unload_module(LoadedModule *lm)
{
	mod_free(lm->m);
	map_close(&lm->mf);
	memset(lm, 0, sizeof(*lm));
}

const Func *cmd_pick_func(const Module *m, const char *entry)
{
	const Func *found = NULL;
	size_t bodies = 0, with_mma = 0;
	const Func *only = NULL, *only_mma = NULL;
	for (size_t i = 0; i < m->funcs.n; i++) {
		const Func *f = &m->funcs.v[i];
		if (f->flags & FNF_DECL)
			continue;
		bodies++;
		only = f;
		if (ana_func_has_mma(m, f)) {
			with_mma++;
			only_mma = f;
		}
		if (entry && str_eqc(mod_str(m, f->name), entry))
			found = f;
	}
	if (entry && found)
		return found;
	if (!entry && with_mma == 1)
		return only_mma;
	if (!entry && bodies == 1)
		return only;
	StrBuf sb = STRBUF_INIT;
	for (size_t i = 0; i < m->funcs.n; i++) {
		const Func *f = &m->funcs.v[i];
		if (f->flags & FNF_DECL)
			continue;
		sb_addf(&sb, "\n  %s %.*s", f->kind == FN_ENTRY ? ".entry" : ".func ",
		        (int)f->name.len, m->src + f->name.off);
	}
	if (entry)
		cmd_fail("%s: unknown entry '%s'; the module has:%s", m->name, entry,
		         sb.n ? sb.p : " no functions");
	else
		cmd_fail("%s: %zu functions%s; choose one with --entry:%s", m->name, bodies,
		         with_mma ? " have mma statements" : "", sb.n ? sb.p : "");
	sb_release(&sb);
	return NULL;
}

int cmd_parse_uint(const char *s, unsigned *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || errno || v > 0xffffffffUL || s[0] == '-')
		return -1;
	*out = (unsigned)v;
	return 0;
}

int cmd_parse_range(const char *s, uint32_t *a, uint32_t *b)
{
	const char *colon = strchr(s, ':');
	if (!colon)
		return -1;
	char buf[64];
	size_t n = (size_t)(colon - s);
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	const char *x = buf[0] == 's' ? buf + 1 : buf;
	const char *y = colon[1] == 's' ? colon + 2 : colon + 1;
	unsigned ua, ub;
	if (cmd_parse_uint(x, &ua) < 0 || cmd_parse_uint(y, &ub) < 0 || ua > ub)
		return -1;
	*a = ua;
	*b = ub;
	return 0;
}


void cmd_recipe_inputs(const Recipe *r, const char *ptx_root)
{
	file_input_add(r->path, "recipe");
	if (r->tkind != TPL_FILE)
		return;
	char *path = NULL, *display = NULL;
	Err ig = ERR_INIT;
	if (layout_template(r->template_name, r->path, ptx_root, &path, &display, &ig) == 0)
		file_input_add(path, "template");
	free(path);
	free(display);
	err_release(&ig);
}

int cmd_check_variant(const char *variant)
{
	if (!variant)
		return 0;
	bool ok = *variant != 0;
	for (const char *p = variant; *p; p++)
		ok &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '_';
	if (ok)
		return 0;
	return cmd_fail("option '--variant': '%s' is not a variant name (letters, digits and '_')",
	                variant);
}

char *cmd_rejected_name(const char *out)
{
	if (!out || !strcmp(out, "-"))
		return NULL;
	struct stat st;
	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode))
		return NULL;
	size_t n = strlen(out);
	const char *base = strrchr(out, '/');
	base = base ? base + 1 : out;
	if (n - (size_t)(base - out) > 4 && !strcmp(out + n - 4, ".ptx"))
		n -= 4;
	StrBuf sb = STRBUF_INIT;
	sb_addf(&sb, "%.*s.rejected.ptx", (int)n, out);
	return sb.p;
}

int cmd_write_module(const char *out, const char *text, size_t n, bool rejected, bool keep,
                     bool quiet, char **written, Err *e)
{
	*written = NULL;
	char *path = !rejected || keep ? xstrdup(out) : cmd_rejected_name(out);
	if (!path)
		return 0;
	if (out_check(path, e) < 0 || write_file_atomic(path, text, n, e) < 0) {
		free(path);
		return -1;
	}
	if (!quiet && strcmp(path, "-"))
		fprintf(stderr, "wrote:     %s (%zu bytes)%s\n", path, n,
		        rejected ? ", rejected by ptxas" : "");
	*written = path;
	return 0;
}

int cmd_fail_rejected(const char *verb, const char *what, const char *out, const char *written,
                      bool keep)
{
	if (keep)
		return cmd_fail("%s: ptxas rejects the %s module (written to '%s' all the same, as "
		                "--keep-rejected asks)", verb, what, out);
	if (!strcmp(out, "-"))
		return cmd_fail("%s: ptxas rejects the %s module: nothing written to standard "
		                "output (--keep-rejected writes it there)", verb, what);
	if (!written)
		return cmd_fail("%s: ptxas rejects the %s module: nothing written to '%s' "
		                "(--keep-rejected writes it there)", verb, what, out);
	return cmd_fail("%s: ptxas rejects the %s module: '%s' not written (it keeps what it "
	                "had); the module is in '%s', for inspection (--keep-rejected writes "
	                "it to '%s')", verb, what, out, written, out);
}

const char *cmd_nearest(const char *word, const char *const *names, size_t n)
{
	return str_nearest(word, strlen(word), names, n);
}

const char *cmd_nearest_verb(const char *word, const CmdVerb *table)
{
	const char *names[64];
	size_t n = 0;
	for (const CmdVerb *v = table; v->name && n < ARRAY_SIZE(names); v++)
		names[n++] = v->name;
	return cmd_nearest(word, names, n);
}

int cmd_sub_verb(const char *verb, const CmdVerb *subs, int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-')
		return -1;
	for (const CmdVerb *v = subs; v->name; v++)
		if (!strcmp(argv[1], v->name))
			return v->fn(argc - 1, argv + 1);
	StrBuf list = STRBUF_INIT;
	for (const CmdVerb *v = subs; v->name; v++)
		sb_addf(&list, "%s%s", v == subs ? "" : v[1].name ? ", " : " or ", v->name);
	const char *near = cmd_nearest_verb(argv[1], subs);
	int rc;
	if (near)
		rc = cmd_fail("%s: unknown sub-verb '%s' (did you mean '%s'?)", verb, argv[1],
		              near);
	else
		rc = cmd_fail("%s: unknown sub-verb '%s' (the sub-verbs are %s)", verb, argv[1],
		              list.p);
	sb_release(&list);
	return rc;
}
