/*
 * fuzz_template.c - libFuzzer target for the template reader, its body
 * check and the expander (splice/template.h).
 *
 * The input's first byte picks the parameters' values (small, near the top
 * or the bottom of the 64-bit range, zero), the rest is a template.
 * Reading it may fail, but only with a message at the template
 * ("fuzz.ptx:LINE:COL: ..."): the body check runs the PTX parser and the
 * dataflow on what the expander makes of it.  A template that is accepted
 * is rendered with every formal bound to registers of its own and every
 * parameter given a value; rendering may fail (an overflow, a division by
 * zero), again only with a located message, and when it succeeds the
 * output has exactly the template's lines (the splicer's line map relies
 * on it) and no hole left outside comments and strings.
 */
#include "base/err.h"
#include "ptx/lex.h"
#include "splice/recipe.h"
#include "splice/template.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void located(const Err *e)
{
	unsigned line, col;
	if (!e->set || sscanf(err_msg(e), "fuzz.ptx:%u:%u: ", &line, &col) != 2) {
		fprintf(stderr, "refused without a located message: '%s'\n",
		        e->set ? err_msg(e) : "(none)");
		abort();
	}
}

static size_t lines(const char *p, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += p[i] == '\n';
	return k;
}

/* A Recipe made in code: each formal bound to "%fN" registers, each
 * parameter the value `profile` gives its index. */
static void make_recipe(const Template *t, unsigned profile, Recipe *r)
{
	memset(r, 0, sizeof *r);
	r->path = "fuzz.json";
	r->tkind = TPL_FILE;
	for (size_t i = 0; i < t->formals.n; i++) {
		const Formal *f = &t->formals.v[i];
		RecipeBind b = {0};
		b.formal = f->name;
		b.list = f->count > 0;
		b.nregs = f->count ? f->count : 1;
		b.regs = xcalloc(b.nregs, sizeof(char *));
		for (uint32_t k = 0; k < b.nregs; k++) {
			char buf[32];
			snprintf(buf, sizeof buf, "%%f%zu_%u", i, k);
			b.regs[k] = xstrdup(buf);
		}
		VEC_PUSH(r->binds, b);
	}
	for (size_t i = 0; i < t->params.n; i++) {
		int64_t v;
		switch (profile % 4) {
		case 0: v = (int64_t)i - 2; break;
		case 1: v = INT64_MAX - (int64_t)i; break;
		case 2: v = INT64_MIN + (int64_t)i; break;
		default: v = 0; break;
		}
		RecipeParam p = {t->params.v[i], v};
		VEC_PUSH(r->params, p);
	}
}

static void free_recipe(Recipe *r)
{
	for (size_t i = 0; i < r->binds.n; i++) {
		for (uint32_t k = 0; k < r->binds.v[i].nregs; k++)
			free(r->binds.v[i].regs[k]);
		free(r->binds.v[i].regs);
	}
	VEC_FREE(r->binds);
	VEC_FREE(r->params);
}

/* No "%{" or "${" outside comments and strings, as the lexer cuts them. */
static void no_hole_left(const char *p, size_t n)
{
	Lexer lx = ptx_lex_init(p, n);
	for (;;) {
		Token k = ptx_lex_next(&lx);
		if (k.kind == TK_END)
			return;
		if (k.kind == TK_COMMENT || k.kind == TK_STRING)
			continue;
		for (size_t i = 0; i + 1 < k.n; i++)
			if ((k.p[i] == '%' || k.p[i] == '$') && k.p[i + 1] == '{')
				abort();
		if (k.n == 1 && (*k.p == '%' || *k.p == '$') && k.p + 1 < p + n && k.p[1] == '{')
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	unsigned profile = data[0];
	size--;
	/* A private copy so reads past the end are caught by ASan. */
	char *text = malloc(size ? size : 1);
	if (size)
		memcpy(text, data + 1, size);
	Err e = ERR_INIT;
	Template t;
	if (tpl_parse("fuzz.ptx", text, size, &t, &e) < 0) {
		located(&e);
	} else {
		Recipe r;
		make_recipe(&t, profile, &r);
		StrBuf out = STRBUF_INIT;
		if (tpl_render(&t, &r, "%spl0_", &out, &e) < 0) {
			located(&e);
		} else {
			if (lines(out.p, out.n) != lines(text, size))
				abort();
			no_hole_left(out.p ? out.p : "", out.n);
		}
		sb_release(&out);
		free_recipe(&r);
		tpl_release(&t);
	}
	err_release(&e);
	free(text);
	return 0;
}
