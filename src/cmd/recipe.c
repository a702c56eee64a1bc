/*
 * recipe.c - `d4r-splice recipe new|check`.
 *
 *   recipe new LAYER --phase N [options]
 *   recipe new --module FILE --phase N --template NAME -o FILE [options]
 *       writes recipes/LAYER/phase-NN.json (refuses to overwrite without
 *       --force) and the template skeleton ptx/LAYER/phase-NN.ptx (never
 *       overwritten: an existing template is kept and said so); neither
 *       may be one of the files it reads (base/file.h), checked first
 *   recipe check RECIPE... [options]
 *       splices each recipe in memory (and runs ptxas on the result with
 *       --check=ptxas); writes nothing; exit 0 when all pass, 2 otherwise
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

static const char *const usage_new[] = {
	"recipe new LAYER --phase N [options]",
	"recipe new --module FILE --phase N --template NAME -o FILE",
	NULL,
};
static const char *const usage_check[] = {"recipe check RECIPE... [options]", NULL};

static bool exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

typedef struct {
	const char *corpus, *module, *entry, *ptx, *arch;
} Common;

/* The options both sub-verbs take: where the files are. */
#define COMMON_OPTS(c)                                                                   \
	OPT_STRING(0, "corpus", &(c)->corpus, "DIR", "the corpus folder"),               \
	OPT_STRING(0, "module", &(c)->module, "FILE",                                    \
	           "the module (default: the recipe's, the layer's)"),                   \
	OPT_STRING(0, "entry", &(c)->entry, "NAME",                                      \
	           "the function (default: the recipe's, the layer's)"),                 \
	OPT_STRING(0, "ptx", &(c)->ptx, "DIR", "the templates' folder (default: ptx/)")

static int recipe_new(int argc, char **argv)
{
	const char *out_opt = NULL, *cut = "phase", *tname_opt = NULL;
	unsigned phase_n = 0;
	bool force = false;
	Common c = {0};
	const Opt opts[] = {
		OPT_PHASE(&phase_n, "the phase to cut"),
		OPT_CHOICE(0, "cut", &cut, "phase|phase+epilogue",
		           "the phase alone (default), or with its epilogue"),
		OPT_STRING('o', "output", &out_opt, "FILE|-",
		           "the recipe file (default recipes/LAYER/phase-NN.json)"),
		OPT_STRING(0, "template", &tname_opt, "NAME",
		           "the template file under ptx/, or identity or perturb"),
		COMMON_OPTS(&c),
		OPT_FLAG(0, "force", &force, "overwrite an existing recipe"),
		OPT_END(),
	};
	OptParse op = {.verb = "recipe new", .usage = usage_new, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 0, 1, ""))
		return EXIT_ERROR;
	const char *layer = nargs ? argv[0] : NULL;
	long phase = phase_n ? (long)phase_n : -1;
	if ((!layer && !(c.module && out_opt && tname_opt)) || phase < 0)
		return opt_usage_error(&op, "give LAYER and --phase N (or --module, "
		                            "--template and -o instead of LAYER)");
	bool builtin = tname_opt && (!strcmp(tname_opt, "identity") || !strcmp(tname_opt, "perturb"));
	/* no skeleton to write for a built-in template, no file to keep on stdout */
	if (builtin && opt_given(&op, "ptx"))
		return opt_fail(&op, "option '%s' cannot be used with the built-in "
		                     "template '%s'", opt_given(&op, "ptx"), tname_opt);
	if (force && !strcmp(out_opt ? out_opt : "", "-"))
		return opt_fail(&op, "option '%s' cannot be used with '-o -'",
		                opt_given(&op, "force"));

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
		if (layer)
			err_set(&e, "layer '%s': no entry (give --entry)", layer);
		else
			err_set(&e, "%s: no entry (give --entry)", loc.module_path);
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
	/* the template skeleton, beside the other templates, never overwritten */
	if (!builtin) {
		if (c.ptx)
			root = xstrdup(c.ptx);
		else {
			char *d = strcmp(out_path, "-") ? layout_dir_of(out_path) : xstrdup(".");
			root = layout_ptx_root(d);
			free(d);
		}
		if (!root) {
			err_set(&e, "no ptx/ folder above '%s' or the current folder (give --ptx DIR)",
			        out_path);
			goto fail;
		}
		tpath = layout_join(root, tname);
	}
	/* the outputs, checked before any work: never one of the inputs */
	file_input_add(loc.module_path, "module");
	if (layer) {
		Err ig = ERR_INIT;
		char *manifest = layout_find_layer(layer, &ig);
		file_input_add(manifest, "manifest");
		free(manifest);
		err_release(&ig);
	}
	if (out_check(out_path, &e) < 0 || (tpath && !exists(tpath) && out_check(tpath, &e) < 0))
		goto fail;
	if (map_open(&mf, loc.module_path, &e) < 0)
		goto fail;
	have_mf = true;
	m = ptx_parse(map_name(loc.module_path), mf.p, mf.n, &e);
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
	m = ptx_parse(map_name(loc.module_path), mf.p, mf.n, &e);
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
		int pr = splice_ptxas(res.text.p, res.text.n, arch, loc.entry, &res, map_name(loc.module_path),
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
	const char *check = "none";
	OptArch arch = {0};
	int n = 0, failed = 0;
	const Opt opts[] = {
		OPT_CHOICE_OPTARG("check", &check, "ptxas|none", "ptxas",
		                  "ptxas: run ptxas on each result (default none)"),
		OPT_ALIAS("ptxas", "check=ptxas", NULL),
		OPT_CALLBACK(0, "arch", &arch, "sm_XX", opt_arch,
		             "with --check=ptxas: the target (default .target)"),
		COMMON_OPTS(&c),
		OPT_END(),
	};
	OptParse op = {.verb = "recipe check", .usage = usage_check, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, -1, "no recipe given"))
		return EXIT_ERROR;
	if (opt_given(&op, "arch") && strcmp(check, "ptxas"))
		return opt_fail(&op, "option '%s' needs '--check=ptxas'",
		                opt_given(&op, "arch"));
	c.arch = opt_given(&op, "arch") ? arch.name : NULL;
	bool ptxas = !strcmp(check, "ptxas");
	for (int i = 0; i < nargs; i++) {
		n++;
		failed += check_one(argv[i], &c, ptxas) != EXIT_OK;
	}
	fflush(stdout);
	if (n > 1)
		fprintf(stderr, "%d recipes, %d failed\n", n, failed);
	return failed ? EXIT_ERROR : EXIT_OK;
}

const CmdVerb cmd_recipe_verbs[] = {
	{"new", recipe_new, "write a recipe scaffold and its template skeleton", NULL},
	{"check", recipe_check, "splice recipes in memory; say whether they pass", NULL},
	{NULL, NULL, NULL, NULL},
};

static const char *const usage[] = {
	"recipe new LAYER --phase N [options]",
	"recipe check RECIPE... [options]",
	NULL,
};

static void list_verbs(FILE *f)
{
	fputs("\nsub-verbs (d4r-splice recipe VERB --help for their options):\n", f);
	for (const CmdVerb *v = cmd_recipe_verbs; v->name; v++)
		fprintf(f, "  %-8s %s\n", v->name, v->help);
}

int cmd_recipe(int argc, char **argv)
{
	for (const CmdVerb *v = cmd_recipe_verbs; argc > 1 && v->name; v++)
		if (!strcmp(argv[1], v->name))
			return v->fn(argc - 1, argv + 1);
	const Opt opts[] = {OPT_END()};
	OptParse op = {.verb = "recipe", .usage = usage, .opts = opts,
	               .more_help = list_verbs};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (!nargs)
		return opt_usage_error(&op, "no sub-verb given (new or check)");
	return opt_usage_error(&op, "unknown subcommand '%s' (expected new or check)",
	                       argv[0]);
}
