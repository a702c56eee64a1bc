/*
 * recipe.c - `d4r-splice recipe new|check`.
 *
 *   recipe new LAYER --phase N [--cut phase|phase+epilogue] [-o FILE|-]
 *              [--template NAME] [--corpus DIR] [--module M] [--entry E]
 *              [--ptx DIR] [--force]
 *       writes recipes/LAYER/phase-NN.json (refuses to overwrite without
 *       --force) and the template skeleton ptx/LAYER/phase-NN.ptx (never
 *       overwritten: an existing template is kept and said so)
 *   recipe check RECIPE... [--ptxas] [--arch sm_XX] [--corpus DIR]
 *              [--module M] [--entry E] [--ptx DIR]
 *       splices each recipe in memory (and runs ptxas on the result with
 *       --ptxas); writes nothing; exit 0 when all pass, 2 otherwise
 */
#include "base/err.h"
#include "base/file.h"
#include "base/layout.h"
#include "cmd.h"
#include "gpu/manifest.h"
#include "ptx/parse.h"
#include "splice/locate.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_str[] =
	"d4r-splice recipe new LAYER --phase N [--cut phase|phase+epilogue] [-o FILE|-]\n"
	"                          [--template NAME] [--corpus DIR] [--module M] [--entry E]\n"
	"                          [--ptx DIR] [--force]\n"
	"   or: d4r-splice recipe check RECIPE... [--ptxas] [--arch sm_XX] [--corpus DIR]\n"
	"                          [--module M] [--entry E] [--ptx DIR]";

static bool exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

typedef struct {
	const char *corpus, *module, *entry, *ptx, *arch;
} Common;

static int common_opt(int argc, char **argv, int *i, Common *c, int *bad)
{
	const char *a = argv[*i];
	const char **slot = !strcmp(a, "--corpus") ? &c->corpus
	                    : !strcmp(a, "--module") ? &c->module
	                    : !strcmp(a, "--entry")  ? &c->entry
	                    : !strcmp(a, "--ptx")    ? &c->ptx
	                    : !strcmp(a, "--arch")   ? &c->arch
	                                             : NULL;
	if (!slot)
		return 0;
	if (*i + 1 >= argc) {
		cmd_fail("recipe: option '%s' needs a value\nusage: %s", a, usage_str);
		*bad = 1;
		return 1;
	}
	*slot = argv[++*i];
	return 1;
}

static int recipe_new(int argc, char **argv)
{
	const char *layer = NULL, *out_opt = NULL, *cut = "phase", *tname_opt = NULL;
	long phase = -1;
	int force = 0, bad = 0;
	Common c = {0};
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (common_opt(argc, argv, &i, &c, &bad)) {
			if (bad)
				return EXIT_ERROR;
		} else if (!strcmp(a, "--phase") && i + 1 < argc) {
			char *q;
			phase = strtol(argv[++i], &q, 10);
			if (*q || phase < 1)
				return cmd_fail("recipe new: --phase: '%s' is not a phase number", argv[i]);
		} else if (!strcmp(a, "--cut") && i + 1 < argc) {
			cut = argv[++i];
			if (strcmp(cut, "phase") && strcmp(cut, "phase+epilogue"))
				return cmd_fail("recipe new: --cut: '%s': expected phase or phase+epilogue", cut);
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
			out_opt = argv[++i];
		} else if (!strcmp(a, "--template") && i + 1 < argc) {
			tname_opt = argv[++i];
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else if (a[0] == '-' && a[1]) {
			return cmd_fail("recipe new: unknown option or missing value '%s'\nusage: %s", a,
			                usage_str);
		} else if (!layer) {
			layer = a;
		} else
			return cmd_fail("recipe new: unexpected argument '%s'\nusage: %s", a, usage_str);
	}
	if ((!layer && !(c.module && out_opt && tname_opt)) || phase < 0)
		return cmd_fail("recipe new: give LAYER and --phase N (or --module, --template and -o "
		                "instead of LAYER)\nusage: %s", usage_str);
	bool builtin = tname_opt && (!strcmp(tname_opt, "identity") || !strcmp(tname_opt, "perturb"));

	int rc = EXIT_ERROR;
	Err e = ERR_INIT;
	Located loc = {0};
	MapFile mf = {0};
	bool have_mf = false;
	Module *m = NULL;
	StrBuf rj = STRBUF_INIT, tt = STRBUF_INIT, sum = STRBUF_INIT;
	char *layer_dir = NULL, *out_path = NULL, *root = NULL, *tpath = NULL, *tname = NULL;

	if (splice_locate(layer, c.corpus, c.module, c.entry, NULL, mf_layout_layer, &loc, &e) < 0)
		goto fail;
	if (!loc.entry) {
		err_set(&e, "layer '%s': no entry (give --entry)", layer);
		goto fail;
	}
	if (out_opt)
		out_path = xstrdup(out_opt);
	else {
		layer_dir = layout_layer_dir(layer, &e);
		if (!layer_dir)
			goto fail;
		out_path = layout_recipe_file(layer_dir, (unsigned)phase, strcmp(cut, "phase") != 0);
	}
	if (strcmp(out_path, "-") && exists(out_path) && !force) {
		err_set(&e, "'%s' exists (--force overwrites it)", out_path);
		goto fail;
	}
	if (tname_opt)
		tname = xstrdup(tname_opt);
	else /* layer is set: checked above */
		tname = layout_template_name(layer, (unsigned)phase, strcmp(cut, "phase") != 0);
	if (map_open(&mf, loc.module_path, &e) < 0)
		goto fail;
	have_mf = true;
	m = ptx_parse(loc.module_path, mf.p, mf.n, &e);
	if (!m)
		goto fail;
	ScaffoldRequest sr = {m, loc.entry, loc.layer, loc.module_rel, tname, (uint32_t)phase,
	                      strcmp(cut, "phase") != 0, 0, 0};
	if (splice_scaffold(&sr, &rj, &tt, &sum, &e) < 0)
		goto fail;
	if (builtin) {
		fprintf(stderr, "%stemplate:  %s (built in)\n", sum.p, tname);
		goto write_recipe;
	}
	/* the template skeleton, beside the other templates, never overwritten */
	if (c.ptx)
		root = xstrdup(c.ptx);
	else {
		char *d = strcmp(out_path, "-") ? layout_dir_of(out_path) : xstrdup(".");
		root = layout_ptx_root(d);
		free(d);
	}
	if (!root) {
		err_set(&e, "no ptx/ folder above '%s' or the current folder (give --ptx DIR)", out_path);
		goto fail;
	}
	tpath = layout_join(root, tname);
	fprintf(stderr, "%s", sum.p);
	if (exists(tpath)) {
		fprintf(stderr, "template:  %s exists, kept as it is\n", tpath);
	} else {
		char *td = layout_dir_of(tpath);
		int mk = mkdir_p(td, &e);
		free(td);
		if (mk < 0 || write_file_atomic(tpath, tt.p, tt.n, &e) < 0)
			goto fail;
		fprintf(stderr, "template:  wrote %s (skeleton: the cut as it stands)\n", tpath);
	}
write_recipe:
	if (write_file_atomic(out_path, rj.p, rj.n, &e) < 0)
		goto fail;
	if (strcmp(out_path, "-"))
		fprintf(stderr, "recipe:    wrote %s\n", out_path);
	rc = EXIT_OK;
	goto done;
fail:
	fprintf(stderr, "d4r-splice: recipe new: %s\n", err_msg(&e));
done:
	if (m)
		mod_free(m);
	if (have_mf)
		map_close(&mf);
	located_release(&loc);
	sb_release(&rj);
	sb_release(&tt);
	sb_release(&sum);
	free(layer_dir);
	free(out_path);
	free(root);
	free(tpath);
	free(tname);
	err_release(&e);
	return rc;
}

static int check_one(const char *path, const Common *c, int ptxas)
{
	Err e = ERR_INIT;
	Recipe r;
	Located loc = {0};
	MapFile mf = {0};
	bool have_r = false, have_mf = false;
	Module *m = NULL;
	SpliceResult res = {0};
	StrBuf log = STRBUF_INIT;
	int rc = EXIT_ERROR;
	if (rcp_load(path, &r, &e) < 0)
		goto fail;
	have_r = true;
	if (splice_locate(NULL, c->corpus, c->module, c->entry, &r, mf_layout_layer, &loc, &e) < 0)
		goto fail;
	if (!loc.entry) {
		err_set(&e, "%s: no entry (give --entry or \"entry\")", path);
		goto fail;
	}
	if (map_open(&mf, loc.module_path, &e) < 0)
		goto fail;
	have_mf = true;
	m = ptx_parse(loc.module_path, mf.p, mf.n, &e);
	if (!m)
		goto fail;
	SpliceRequest req = {m, loc.entry, &r, c->ptx, false};
	if (splice_run(&req, &res, &e) < 0)
		goto fail;
	const char *verdict = "";
	if (ptxas) {
		char arch[64];
		if (c->arch)
			snprintf(arch, sizeof arch, "%s", c->arch);
		else if (splice_module_arch(m, arch, sizeof arch) < 0) {
			err_set(&e, "%s: no .target: give --arch", loc.module_path);
			goto fail;
		}
		int pr = splice_ptxas(res.text.p, res.text.n, arch, loc.entry, &res, loc.module_path,
		                      &log, &e);
		if (pr < 0)
			goto fail;
		if (pr) {
			err_set(&e, "%s: ptxas -arch=%s rejects the spliced module:\n%s", path, arch,
			        log.p ? log.p : "");
			goto fail;
		}
		verdict = ", ptxas ok";
	}
	printf("ok    %s: s%u..s%u (%u mma), %s, %u live-in, %u live-out%s\n", path, res.first,
	       res.last, res.mma, res.template_name, res.n_live_in, res.n_live_out, verdict);
	rc = EXIT_OK;
	goto done;
fail:
	printf("FAIL  %s\n", path);
	fprintf(stderr, "d4r-splice: recipe check: %s\n", err_msg(&e));
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
	err_release(&e);
	return rc;
}

static int recipe_check(int argc, char **argv)
{
	Common c = {0};
	int ptxas = 0, bad = 0, n = 0, failed = 0;
	for (int i = 2; i < argc; i++) {
		if (common_opt(argc, argv, &i, &c, &bad)) {
			if (bad)
				return EXIT_ERROR;
		} else if (!strcmp(argv[i], "--ptxas"))
			ptxas = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return cmd_fail("recipe check: unknown option '%s'\nusage: %s", argv[i], usage_str);
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--corpus") || !strcmp(a, "--module") || !strcmp(a, "--entry") ||
		    !strcmp(a, "--ptx") || !strcmp(a, "--arch")) {
			i++;
			continue;
		}
		if (a[0] == '-' && a[1])
			continue;
		n++;
		failed += check_one(a, &c, ptxas) != EXIT_OK;
	}
	if (!n)
		return cmd_fail("recipe check: no recipe given\nusage: %s", usage_str);
	fflush(stdout);
	if (n > 1)
		fprintf(stderr, "%d recipes, %d failed\n", n, failed);
	return failed ? EXIT_ERROR : EXIT_OK;
}

int cmd_recipe(int argc, char **argv)
{
	if (argc < 2)
		return cmd_usage(usage_str);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		printf("usage: %s\n", usage_str);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "new"))
		return recipe_new(argc, argv);
	if (!strcmp(argv[1], "check"))
		return recipe_check(argc, argv);
	return cmd_fail("recipe: unknown subcommand '%s' (expected new or check)\nusage: %s", argv[1],
	                usage_str);
}
