/*
 * splice.c - `d4r-splice splice`: apply one recipe and write the module.
 *
 *   d4r-splice splice LAYER --phase N [--recipe FILE] [-o OUT] [--check=ptxas|none]
 *                     [--arch sm_XX] [--force] [--corpus DIR] [--ptx DIR]
 *   d4r-splice splice --module M [--entry E] --recipe FILE [-o OUT] ...
 *
 * The work is splice_run (splice/splice.h); this file finds the files,
 * writes the output atomically and prints the summary on stderr.
 */
#include "base/err.h"
#include "base/file.h"
#include "cmd.h"
#include "ptx/parse.h"
#include "splice/locate.h"
#include "splice/splice.h"

#include "ana/ana.h"
#include "base/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_str[] =
	"d4r-splice splice LAYER --phase N [--recipe FILE] [-o OUT.ptx|-] [--check=ptxas|none]\n"
	"                         [--arch sm_XX] [--force] [--corpus DIR] [--ptx DIR] [--quiet]\n"
	"   or: d4r-splice splice --module FILE [--entry NAME] --recipe FILE [-o OUT.ptx|-] ...\n"
	"   or: d4r-splice splice --module FILE --every-phase [--entry NAME] [--template identity|perturb]\n"
	"                         [--check=ptxas|none] [--arch sm_XX]";

/*
 * --every-phase: the built-in template spliced into every mma phase of every
 * entry (or --entry) of one module, in memory, one line per phase.  Each
 * splice is checked to keep every byte outside its region, and with
 * --check=ptxas the spliced module must pass ptxas -e ENTRY.  This is the
 * mechanism's proof on real vendor code (tests/corpus/t0300) and the
 * splice-time benchmark (times against the parse of the same run).
 */
static int every_phase(const char *module_path, const char *entry_opt, const char *tname,
                       const char *check, const char *arch_opt)
{
	Err e = ERR_INIT;
	MapFile mf;
	if (map_open(&mf, module_path, &e) < 0) {
		cmd_fail("%s", err_msg(&e));
		err_release(&e);
		return EXIT_ERROR;
	}
	double t0 = now_seconds();
	Module *m = ptx_parse(module_path, mf.p, mf.n, &e);
	double t_parse = now_seconds() - t0;
	if (!m) {
		cmd_fail("%s", err_msg(&e));
		err_release(&e);
		map_close(&mf);
		return EXIT_ERROR;
	}
	char arch[64] = "";
	if (arch_opt)
		snprintf(arch, sizeof arch, "%s", arch_opt);
	else
		splice_module_arch(m, arch, sizeof arch);
	unsigned n = 0, failed = 0;
	double t_splice = 0, t_max = 0;
	for (size_t fi = 0; fi < m->funcs.n; fi++) {
		const Func *f = &m->funcs.v[fi];
		if ((f->flags & FNF_DECL) || !f->nstmt || f->kind != FN_ENTRY)
			continue;
		Str fname = mod_str(m, f->name);
		if (entry_opt && !str_eqc(fname, entry_opt))
			continue;
		if (!f->nstmt)
			continue;
		char *ename = xstrndup(fname.p, fname.n);
		Dataflow *df = df_build(m, f, &e);
		PhaseList pl = {0};
		if (!df || ana_phases(df, 0, &pl, &e) < 0) {
			printf("FAIL  %s: %s\n", ename, err_msg(&e));
			failed++;
			if (df)
				df_free(df);
			free(ename);
			continue;
		}
		for (size_t p = 0; p < pl.n; p++) {
			Recipe r;
			memset(&r, 0, sizeof r);
			r.path = (char *)"(every-phase)";
			r.cut = CUT_STMTS;
			r.first = pl.v[p].first;
			r.last = pl.v[p].last;
			r.tkind = !strcmp(tname, "perturb") ? TPL_PERTURB : TPL_IDENTITY;
			r.template_name = (char *)tname;
			StrBuf txt = STRBUF_INIT;
			char hex[65];
			splice_cut_text(m, f, r.first, r.last, &txt);
			sha256_hex(txt.p ? txt.p : "", txt.n, hex);
			sb_release(&txt);
			r.sha256 = hex;
			SpliceResult res;
			memset(&res, 0, sizeof res);
			SpliceRequest req = {m, ename, &r, NULL, false};
			n++;
			double s0 = now_seconds();
			int rc = splice_run(&req, &res, &e);
			double dt = now_seconds() - s0;
			t_splice += dt;
			if (dt > t_max)
				t_max = dt;
			const char *why = NULL;
			StrBuf log = STRBUF_INIT;
			if (rc < 0)
				why = err_msg(&e);
			else {
				/* bytes outside the region are the input's */
				size_t pre = res.region_off;
				size_t suf = res.text.n - res.region_off - res.region_len;
				if (pre + suf > mf.n || memcmp(res.text.p, mf.p, pre) ||
				    memcmp(res.text.p + res.text.n - suf, mf.p + mf.n - suf, suf))
					why = "bytes outside the cut changed";
				else if (!strcmp(check, "ptxas")) {
					int pr = splice_ptxas(res.text.p, res.text.n, arch, ename, &res, module_path,
					                      &log, &e);
					if (pr < 0)
						why = err_msg(&e);
					else if (pr)
						why = log.p ? log.p : "ptxas rejects it";
				}
			}
			if (why) {
				failed++;
				printf("FAIL  %s phase %u s%u..s%u: %s\n", ename, pl.v[p].number, r.first, r.last,
				       why);
			} else
				printf("ok    %s phase %u s%u..s%u: %u mma, %u live-in, %u live-out, %u renamed, "
				       "%.2f ms%s\n", ename, pl.v[p].number, r.first, r.last, res.mma,
				       res.n_live_in, res.n_live_out, res.n_renamed, dt * 1e3,
				       strcmp(check, "ptxas") ? "" : ", ptxas ok");
			fflush(stdout);
			sb_release(&log);
			splice_result_release(&res);
		}
		phases_release(&pl);
		df_free(df);
		free(ename);
	}
	printf("%s: %zu bytes, parse %.2f ms; %u splices (%s), %u failed; splice mean %.2f ms, max "
	       "%.2f ms (%.2fx the parse)\n", module_path, mf.n, t_parse * 1e3, n, tname, failed,
	       n ? t_splice / n * 1e3 : 0.0, t_max * 1e3, t_parse > 0 ? t_max / t_parse : 0.0);
	mod_free(m);
	map_close(&mf);
	err_release(&e);
	return failed ? EXIT_ERROR : EXIT_OK;
}

static int need(int argc, char **argv, int i)
{
	if (i + 1 >= argc) {
		cmd_fail("splice: option '%s' needs a value\nusage: %s", argv[i], usage_str);
		return 0;
	}
	return 1;
}

int cmd_splice(int argc, char **argv)
{
	const char *layer = NULL, *recipe_opt = NULL, *out_opt = NULL, *check = "none";
	const char *arch_opt = NULL, *corpus = NULL, *module_opt = NULL, *entry_opt = NULL;
	const char *ptx_root = NULL;
	long phase = -1;
	int force = 0, quiet = 0, every = 0;
	const char *tname = "identity";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("usage: %s\n", usage_str);
			return EXIT_OK;
		} else if (!strcmp(a, "--phase")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			char *q;
			phase = strtol(argv[++i], &q, 10);
			if (*q || phase < 1)
				return cmd_fail("splice: --phase: '%s' is not a phase number (1, 2, ...)", argv[i]);
		} else if (!strcmp(a, "--recipe")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			recipe_opt = argv[++i];
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			out_opt = argv[++i];
		} else if (!strncmp(a, "--check=", 8)) {
			check = a + 8;
			if (strcmp(check, "ptxas") && strcmp(check, "none"))
				return cmd_fail("splice: --check: '%s': expected ptxas or none", check);
		} else if (!strcmp(a, "--check")) {
			check = "ptxas";
		} else if (!strcmp(a, "--arch")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			arch_opt = argv[++i];
			if (strncmp(arch_opt, "sm_", 3) && strncmp(arch_opt, "compute_", 8))
				return cmd_fail("splice: --arch: bad architecture '%s' (expected sm_XX)", arch_opt);
		} else if (!strcmp(a, "--every-phase")) {
			every = 1;
		} else if (!strcmp(a, "--template")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			tname = argv[++i];
			if (strcmp(tname, "identity") && strcmp(tname, "perturb"))
				return cmd_fail("splice: --template: '%s': --every-phase takes identity or perturb",
				                tname);
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			quiet = 1;
		} else if (!strcmp(a, "--corpus")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			corpus = argv[++i];
		} else if (!strcmp(a, "--module")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			module_opt = argv[++i];
		} else if (!strcmp(a, "--entry")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			entry_opt = argv[++i];
		} else if (!strcmp(a, "--ptx")) {
			if (!need(argc, argv, i))
				return EXIT_ERROR;
			ptx_root = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			return cmd_fail("splice: unknown option '%s'\nusage: %s", a, usage_str);
		} else if (!layer) {
			layer = a;
		} else
			return cmd_fail("splice: unexpected argument '%s'\nusage: %s", a, usage_str);
	}
	if (every) {
		if (!module_opt)
			return cmd_fail("splice: --every-phase needs --module FILE\nusage: %s", usage_str);
		return every_phase(module_opt, entry_opt, tname, check, arch_opt);
	}
	if (!recipe_opt && (!layer || phase < 0))
		return cmd_fail("splice: give LAYER --phase N, or --recipe FILE\nusage: %s", usage_str);

	int rc = EXIT_ERROR;
	Err e = ERR_INIT;
	Recipe r;
	bool have_r = false;
	Located loc = {0};
	MapFile mf = {0};
	bool have_mf = false;
	Module *m = NULL;
	SpliceResult res = {0};
	StrBuf log = STRBUF_INIT;
	char *recipe_path = NULL, *out_path = NULL;

	if (recipe_opt)
		recipe_path = xstrdup(recipe_opt);
	else {
		char *dir = splice_layer_dir(layer, &e);
		if (!dir)
			goto fail;
		size_t n = strlen(dir) + 32;
		recipe_path = xmalloc(n);
		snprintf(recipe_path, n, "%s/phase-%02ld.json", dir, phase);
		free(dir);
	}
	if (rcp_load(recipe_path, &r, &e) < 0)
		goto fail;
	have_r = true;
	if (phase > 0 && r.cut == CUT_PHASE && (long)r.phase != phase) {
		err_set(&e, "%s: the recipe cuts phase %u, --phase says %ld", recipe_path, r.phase, phase);
		goto fail;
	}
	if (splice_locate(layer, corpus, module_opt, entry_opt, &r, &loc, &e) < 0)
		goto fail;
	if (!loc.entry) {
		err_set(&e, "%s: no entry: give --entry, or \"entry\" in the recipe", recipe_path);
		goto fail;
	}
	if (map_open(&mf, loc.module_path, &e) < 0)
		goto fail;
	have_mf = true;
	m = ptx_parse(loc.module_path, mf.p, mf.n, &e);
	if (!m)
		goto fail;
	SpliceRequest req = {m, loc.entry, &r, ptx_root, force != 0};
	if (splice_run(&req, &res, &e) < 0)
		goto fail;

	/* the output name */
	if (out_opt)
		out_path = xstrdup(out_opt);
	else {
		StrBuf sb = STRBUF_INIT;
		if (loc.layer && r.cut == CUT_PHASE)
			sb_addf(&sb, "%s-phase-%02u%s.spliced.ptx", loc.layer, r.phase,
			        r.with_epilogue ? "-epi" : "");
		else {
			const char *b = strrchr(recipe_path, '/');
			b = b ? b + 1 : recipe_path;
			size_t n = strlen(b);
			if (n > 5 && !strcmp(b + n - 5, ".json"))
				n -= 5;
			sb_addf(&sb, "%.*s.spliced.ptx", (int)n, b);
		}
		out_path = sb.p;
	}
	if (!quiet) {
		fprintf(stderr, "%s", res.summary.p);
	}
	int ptxas_rc = 0;
	if (!strcmp(check, "ptxas")) {
		char arch[64];
		if (arch_opt)
			snprintf(arch, sizeof arch, "%s", arch_opt);
		else if (splice_module_arch(m, arch, sizeof arch) < 0) {
			err_set(&e, "%s: no .target to take the architecture from: give --arch",
			        loc.module_path);
			goto fail;
		}
		ptxas_rc = splice_ptxas(res.text.p, res.text.n, arch, loc.entry, &res, loc.module_path,
		                        &log, &e);
		if (ptxas_rc < 0)
			goto fail;
		if (!quiet || ptxas_rc)
			fprintf(stderr, "ptxas:     -arch=%s -e %s: %s\n", arch, loc.entry,
			        ptxas_rc ? "REJECTED" : "ok");
		if (log.n)
			fprintf(stderr, "%s", log.p);
	}
	if (write_file_atomic(out_path, res.text.p, res.text.n, &e) < 0)
		goto fail;
	if (!quiet && strcmp(out_path, "-"))
		fprintf(stderr, "wrote:     %s (%zu bytes)\n", out_path, res.text.n);
	if (ptxas_rc) {
		fprintf(stderr, "d4r-splice: splice: ptxas rejects the spliced module (written for "
		                "inspection)\n");
		rc = EXIT_ERROR;
	} else
		rc = EXIT_OK;
	goto done;
fail:
	fprintf(stderr, "d4r-splice: %s\n", err_msg(&e));
	rc = EXIT_ERROR;
done:
	splice_result_release(&res);
	sb_release(&log);
	if (m)
		mod_free(m);
	if (have_mf)
		map_close(&mf);
	located_release(&loc);
	if (have_r)
		rcp_release(&r);
	free(recipe_path);
	free(out_path);
	err_release(&e);
	return rc;
}
