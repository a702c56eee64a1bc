/*
 * recipe.c - `d4r-splice recipe new|check`.
 *
 *   recipe new LAYER --phase N [options]
 *   recipe new --module FILE --phase N --template NAME -o FILE [options]
 *       writes recipes/LAYER/phase-NN.json (refuses to overwrite without
 *       --force) and the template skeleton ptx/LAYER/phase-NN.ptx (never
 *       overwritten: an existing template is kept and said so); neither
 *       may be one of the files it reads (base/file.h), checked first
 *   recipe new (LAYER | --module FILE) --phase N --through-wait [options]
 *       a wgmma phase cut through the wait_group that completes its groups,
 *       holding whole the loops between (a matmul's loop and the wait
 *       after its back edge): a statement-range recipe,
 *       recipes/LAYER/phase-NN-wait.json by default
 *   recipe new LAYER --phase N --native mma|f16|mma_sync [options]
 *       writes a native phase from the phase's facts (splice/native.h):
 *       recipes/LAYER/phase-NN.json and ptx/LAYER/phase-NN.ptx for mma,
 *       phase-NN-f16.json and phase-NN-f16.ptx for f16 (an e4m3 mma.sync
 *       phase), phase-NN-mma_sync.* for mma_sync (a wgmma phase); a template that
 *       exists is kept when it is the same bytes, and replaced only with
 *       --force
 *   recipe check RECIPE... [options]
 *       reads each recipe's template on its own (its header against its
 *       body, parsed as PTX), then splices the recipe in memory (and runs
 *       ptxas on the result with --check=ptxas), on --jobs threads, the
 *       lines in the order given; writes nothing; exit 0 when all pass, 2
 *       otherwise
 *   recipe best LAYER --ranking PROFILE.json --proof CHECK.json [options]
 *       writes recipes/LAYER/phase-NN-best.json (--name) for each phase of
 *       the ranking: a copy of the fastest variant's recipe among those the
 *       proof calls IDENTICAL (splice/best.h); a phase with none keeps the
 *       vendor's code and gets no file; refuses to replace a file without
 *       --force (then also removes the stale one of a phase left out)
 */
#include "base/err.h"
#include "base/file.h"
#include "base/layout.h"
#include "base/numlist.h"
#include "base/progress.h"
#include "cmd.h"
#include "gpu/manifest.h"
#include "ptx/parse.h"
#include "splice/locate.h"
#include "splice/best.h"
#include "splice/native.h"
#include "splice/ptxas.h"
#include "splice/splice.h"
#include "splice/template.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const usage_new[] = {
	"recipe new LAYER --phase N [options]",
	"recipe new --module FILE --phase N --template NAME -o FILE",
	"recipe new (LAYER | --module FILE) --phase N --through-wait [options]",
	"recipe new LAYER --phase N --native mma|f16|mma_sync [options]",
	"recipe new --module FILE --phase N --native mma|f16|mma_sync -o FILE",
	"recipe new (LAYER | --module FILE) --stmts A:B --template NAME -o FILE",
	NULL,
};
static const char *const usage_check[] = {"recipe check RECIPE... [options]", NULL};
static const char *const usage_best[] = {
	"recipe best LAYER --ranking PROFILE.json --proof CHECK.json [options]", NULL};

static bool exists(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0;
}

typedef struct {
	const char *corpus, *module, *entry, *ptx, *arch;
	bool no_cache; /* recipe check: ptxas runs, its cached answer is not used */
} Common;

/* The options both sub-verbs take: where the files are. */
#define COMMON_OPTS(c)                                                                   \
	OPT_STRING(0, "corpus", &(c)->corpus, "DIR", "the corpus folder"),               \
	OPT_STRING(0, "module", &(c)->module, "FILE",                                    \
	           "the module (default: the recipe's, the layer's)"),                   \
	OPT_STRING(0, "entry", &(c)->entry, "NAME",                                      \
	           "the function (default: the recipe's, the layer's)"),                 \
	OPT_STRING(0, "ptx", &(c)->ptx, "DIR", "the templates' folder (default: ptx/)")

/* Writes the template of a native phase at tpath: a new file, the same
 * bytes (kept), or other bytes (replaced only with force). */
static int write_native_template(const char *tpath, const StrBuf *tt, bool force,
                                 const char **action, Err *e)
{
	char *old = NULL;
	size_t n = 0;
	Err ignore = ERR_INIT;
	bool have = exists(tpath) && read_file(tpath, &old, &n, &ignore) == 0;
	err_release(&ignore);
	bool same = have && n == tt->n && !memcmp(old, tt->p, n);
	free(old);
	if (same) {
		fprintf(stderr, "template:  %s unchanged\n", cmd_path_shown(tpath));
		*action = "unchanged";
		return 0;
	}
	if (have && !force)
		return err_set(e, "'%s' exists and differs from the phase's native template "
		                  "(--force replaces it)", tpath);
	char *td = layout_dir_of(tpath);
	int mk = mkdir_p(td, e);
	free(td);
	if (mk < 0 || write_file_atomic(tpath, tt->p, tt->n, e) < 0)
		return -1;
	fprintf(stderr, "template:  wrote %s\n", cmd_path_shown(tpath));
	*action = "wrote";
	return 0;
}

/* Reads recipe r's template on its own, so that what is wrong with it
 * (its header, its body as PTX: template.h) is said even when the module
 * cannot be found or the recipe is stale, which the splice reports first. */
static int check_template(const Recipe *r, const char *ptx_root, Err *e)
{
	char *tpath = NULL, *display = NULL;
	Template t;
	int rc =
	    layout_template(r->template_name, r->path, ptx_root, &tpath, &display, e);
	if (rc == 0 && (rc = tpl_load(tpath, display, &t, e)) == 0)
		tpl_release(&t);
	free(tpath);
	free(display);
	return rc;
}

/* What the checker is given besides the recipe: the parsed module and its
 * entry, the folders, ptxas (and its -arch), and the template's text when
 * the template is about to be written (NULL: the file the recipe names). */
typedef struct {
	const Module *m;
	const char *entry, *module_name, *ptx_root, *arch;
	bool ptxas;
	bool force; /* a cut with a read/write dependency passes (splice --force) */
	const char *tpl_text;
	size_t tpl_len;
	char arch_used[64]; /* out: the -arch ptxas ran with ("" without ptxas) */
	PtxasCache pc;      /* in: no_cache; out: whether the answer was cached */
} CheckArgs;

/*
 * The check of `recipe check` on recipe r, once its module is parsed: the
 * recipe spliced in memory into a->m (which reads its template), then
 * ptxas on the result when asked.  `recipe new` calls it on what it is
 * about to write, so that no verb writes a recipe `recipe check` rejects.
 * 0, or -1 with the message; *res is filled (release it either way).
 */
static int check_recipe(const Recipe *r, CheckArgs *a, SpliceResult *res, StrBuf *log,
                        Err *e)
{
	SpliceRequest req = {a->m, a->entry, r, a->ptx_root, a->force};
	req.template_text = a->tpl_text;
	req.template_len = a->tpl_len;
	if (splice_run(&req, res, e) < 0)
		return -1;
	a->arch_used[0] = 0;
	if (!a->ptxas)
		return 0;
	char *arch = a->arch_used;
	if (a->arch)
		snprintf(arch, sizeof a->arch_used, "%s", a->arch);
	else if (splice_module_arch(a->m, arch, sizeof a->arch_used) < 0)
		return err_set(e, "%s: no .target: give --arch", a->module_name);
	int pr = splice_ptxas(res->text.p, res->text.n, arch, a->entry, res,
	                      a->module_name, &a->pc, log, e);
	if (pr < 0)
		return -1;
	if (pr)
		return err_set(e, "%s: ptxas -arch=%s rejects the spliced module%s:\n%s",
		               r->path, arch, cmd_ptxas_cached(&a->pc), log->p ? log->p : "");
	return 0;
}

/* What `recipe new` is about to write, checked as `recipe check` checks
 * it (check_recipe): the recipe text rj read back as a recipe at out_path,
 * spliced into the module it was written from, with the template text tt
 * when that is written too (NULL: the file that exists). */
static int check_new(const char *out_path, const StrBuf *rj, const Located *loc,
                     const Module *m, const char *ptx_root, const StrBuf *tt, bool force,
                     bool *invalid_cut, Err *e)
{
	Recipe r;
	if (rcp_parse(out_path, rj->p, rj->n, &r, e) < 0)
		return -1;
	CheckArgs ca = {m,     loc->entry,        map_name(loc->module_path), ptx_root, NULL,
	                false, force, tt ? tt->p : NULL, tt ? tt->n : 0};
	SpliceResult res = {0};
	StrBuf log = STRBUF_INIT;
	int rc = check_recipe(&r, &ca, &res, &log, e);
	*invalid_cut = res.invalid_cut || res.forced;
	splice_result_release(&res);
	sb_release(&log);
	rcp_release(&r);
	return rc;
}

/*
 * --through-wait: the cut of phase n from its first mma through the
 * wgmma.wait_group that completes its groups, holding whole the loops
 * between (groups_through_wait), into [*first, *last]; what it found goes
 * to stderr.  0, or -1 with the reason.
 */
static int through_wait(const Module *m, const char *entry, const char *who, uint32_t n,
                        uint32_t *first, uint32_t *last, Err *e)
{
	const Func *f = mod_func_find(m, str_c(entry));
	if (!f || (f->flags & FNF_DECL))
		return err_set(e, "no function '%s' with a body in module '%s'", entry,
		               m->name ? m->name : "?");
	uint32_t a, b;
	size_t np = 0;
	if (ana_phase_range(m, f, 0, n, false, &a, &b, &np) < 0)
		return ana_phase_missing(NULL, n, who, np, e);
	Dataflow *df = df_build(m, f, e);
	if (!df)
		return -1;
	int rc = 0;
	int64_t w = groups_through_wait(df, a, b, first, last);
	if (w < 0) {
		bool wg = false;
		for (uint32_t i = a; i <= b && !wg; i++)
			wg = stmt_opcode_is(m, func_stmt(m, f, i), "wgmma.mma_async");
		rc =
		    wg ? err_set(
		             e,
		             "phase %u (s%u-s%u): no wgmma.wait_group after it completes "
		             "its groups on every path: nothing to cut through",
		             n, a, b)
		       : err_set(
		             e,
		             "phase %u (s%u-s%u) is not a wgmma phase: its mma complete "
		             "as they issue, so '--through-wait' has no wait to reach "
		             "(cut the phase alone)",
		             n, a, b);
	} else {
		const DfLoop *lp;
		uint32_t nl = df_loops(df, &lp), held = 0;
		fprintf(stderr,
		        "through:   phase %u (s%u-s%u), its groups completed by s%u "
		        "(line %u)",
		        n, a, b, (uint32_t)w, func_stmt(m, f, (uint32_t)w)->line);
		for (uint32_t k = 0; k < nl; k++)
			if (lp[k].lo >= *first && lp[k].hi <= *last && lp[k].hi >= a)
				fprintf(stderr, "%s loop s%u..s%u (back edge s%u)",
				        held++ ? "," : "; holds the", lp[k].lo, lp[k].hi,
				        lp[k].back);
		fprintf(stderr, ": cut s%u..s%u\n", *first, *last);
	}
	df_free(df);
	return rc;
}

static int recipe_new(int argc, char **argv)
{
	const char *out_opt = NULL, *cut = "phase", *tname_opt = NULL, *native = NULL;
	const char *stmts = NULL;
	unsigned phase_n = 0;
	bool force = false, json = false, through = false;
	Common c = {0};
	const Opt opts[] = {
		OPT_PHASE(&phase_n, "the phase to cut"),
		OPT_CHOICE(0, "cut", &cut, "phase|phase+epilogue",
		           "the phase alone (default), or with its epilogue"),
		OPT_FLAG(0, "through-wait", &through,
		         "cut a wgmma phase through the wait_group that completes its groups, "
		         "holding the loops between whole"),
		OPT_STRING(0, "stmts", &stmts, "A:B",
		           "cut statements sA..sB instead of a phase (with --template and -o)"),
		OPT_STRING('o', "output", &out_opt, "FILE|-",
		           "the recipe file (default recipes/LAYER/phase-NN.json)"),
		OPT_STRING(0, "template", &tname_opt, "NAME",
		           "the template file under ptx/, or identity or perturb"),
		OPT_CHOICE(0, "native", &native, "mma|f16|mma_sync",
		           "write the native phase from its facts, in this form"),
		COMMON_OPTS(&c),
		OPT_FLAG(0, "force", &force,
		         "overwrite an existing recipe; write one for a cut with a read/write "
		         "dependency"),
		OPT_FLAG(0, "json", &json, "one JSON object (not with -o -)"),
		OPT_END(),
	};
	OptParse op = {.verb = "recipe new", .usage = usage_new, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (json && out_opt && !strcmp(out_opt, "-"))
		return opt_fail(&op, "option '--json' cannot be used with '%s -': one "
		                     "document on standard output",
		                opt_given(&op, "output"));
	if (opt_args(&op, nargs, argv, 0, 1, ""))
		return EXIT_ERROR;
	const char *layer = nargs ? argv[0] : NULL;
	long phase = phase_n ? (long)phase_n : -1;
	uint32_t first = 0, last = 0;
	if (stmts) {
		if (opt_conflicts(&op, "stmts", "phase", "cut", "native", NULL))
			return EXIT_ERROR;
		if (cmd_parse_range(stmts, &first, &last) < 0)
			return opt_fail(&op, "--stmts wants A:B (statement numbers, A <= B), not '%s'",
			                stmts);
		if (!out_opt || !tname_opt)
			return opt_usage_error(&op, "--stmts needs --template and -o (a range has "
			                            "no phase to name them by)");
		phase = 0;
	}
	if (through && opt_conflicts(&op, "through-wait", "cut", "native", NULL))
		return EXIT_ERROR;
	if ((!layer && !(c.module && out_opt && (tname_opt || native))) || phase < 0)
		return opt_usage_error(&op, "give LAYER and --phase N (or --module, "
		                            "--template and -o instead of LAYER; with "
		                            "--native, --template may be left out)");
	bool builtin = tname_opt && (!strcmp(tname_opt, "identity") || !strcmp(tname_opt, "perturb"));
	/* no skeleton to write for a built-in template, no file to keep on stdout */
	if (builtin && opt_given(&op, "ptx"))
		return opt_fail(&op, "option '%s' cannot be used with the built-in "
		                     "template '%s'", opt_given(&op, "ptx"), tname_opt);
	if (force && !strcmp(out_opt ? out_opt : "", "-"))
		return opt_fail(&op, "option '%s' cannot be used with '-o -'",
		                opt_given(&op, "force"));
	if (native && (builtin || strcmp(cut, "phase")))
		return opt_fail(&op, "option '%s' writes a phase's own template: it cannot be used "
		                     "with %s", opt_given(&op, "native"),
		                builtin ? "a built-in template" : "'--cut=phase+epilogue'");
	if (native && !strcmp(out_opt ? out_opt : "", "-"))
		return opt_fail(&op, "option '%s' writes a template beside the recipe: it cannot "
		                     "be used with '-o -'", opt_given(&op, "native"));
	/* the mma form is the phase's own file, the others variants by name */
	const char *variant = native && strcmp(native, "mma") ? native : NULL;

	int rc = EXIT_ERROR;
	Err e = ERR_INIT;
	Located loc = {0};
	MapFile mf = {0};
	bool have_mf = false;
	Module *m = NULL;
	StrBuf rj = STRBUF_INIT, tt = STRBUF_INIT, sum = STRBUF_INIT;
	char *layer_dir = NULL, *out_path = NULL, *root = NULL, *tpath = NULL, *tname = NULL;
	char *tdisplay = NULL;

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
		out_path = native    ? layout_recipe_variant(layer_dir, (unsigned)phase, variant)
		           : through ? layout_recipe_variant(layer_dir, (unsigned)phase, "wait")
		                     : layout_recipe_file(layer_dir, (unsigned)phase,
		                                          strcmp(cut, "phase") != 0);
	}
	/* a folder, or a file in a folder that does not exist, is said as such */
	if (out_check(out_path, &e) < 0)
		goto fail;
	if (strcmp(out_path, "-") && exists(out_path) && !force) {
		err_set(&e, "'%s' exists (--force overwrites it)", out_path);
		goto fail;
	}
	/* the template's name as the recipe stores it, and its file, both by
	 * the rule layout.h owns (a name the recipe cannot read back is refused) */
	if (!builtin && (c.ptx || !tname_opt || strncmp(tname_opt, "./", 2)))
		root = c.ptx ? xstrdup(c.ptx)
		             : layout_ptx_root(strcmp(out_path, "-") ? out_path : NULL);
	if (builtin)
		tname = xstrdup(tname_opt);
	else if (tname_opt) {
		if (layout_template_typed(tname_opt, root, &tname, &e) < 0)
			goto fail;
	} else if (native && !layer) {
		/* the template beside the recipe, named after it */
		const char *b = strrchr(out_path, '/');
		b = b ? b + 1 : out_path;
		size_t n = strlen(b);
		if (n > 5 && !strcmp(b + n - 5, ".json"))
			n -= 5;
		StrBuf sb = STRBUF_INIT;
		sb_addf(&sb, "./%.*s.ptx", (int)n, b);
		tname = sb.p;
	} else /* layer is set: checked above */
		tname = native    ? layout_template_variant(layer, (unsigned)phase, variant)
		        : through ? layout_template_variant(layer, (unsigned)phase, "wait")
		                  : layout_template_name(layer, (unsigned)phase,
		                                         strcmp(cut, "phase") != 0);
	if (!builtin && layout_template(tname, out_path, root, &tpath, &tdisplay, &e) < 0)
		goto fail;
	/* the outputs, checked before any work: never one of the inputs (a
	 * native template may replace its older self, so it is checked too) */
	file_input_add(loc.module_path, "module");
	if (layer) {
		Err ig = ERR_INIT;
		char *manifest = layout_find_layer(layer, &ig);
		file_input_add(manifest, "manifest");
		free(manifest);
		err_release(&ig);
	}
	if (out_check(out_path, &e) < 0 ||
	    (tpath && (native || !exists(tpath)) && out_check_mkdir(tpath, &e) < 0))
		goto fail;
	if (map_open(&mf, loc.module_path, &e) < 0)
		goto fail;
	have_mf = true;
	m = ptx_parse(map_name(loc.module_path), mf.p, mf.n, &e);
	if (!m)
		goto fail;
	if (native) {
		NativeRequest nr = {m, loc.entry, loc.layer, loc.module_rel, tname, (uint32_t)phase,
		                    (NativeForm)native_form_parse(native)};
		if (splice_native(&nr, &rj, &tt, &sum, &e) < 0)
			goto fail;
	} else {
		/* --through-wait: the phase's range through its wait, written as a
		 * statement range (the guards keep it from going stale) */
		if (through && through_wait(m, loc.entry, loc.layer ? loc.layer : loc.entry,
		                            (uint32_t)phase, &first, &last, &e) < 0)
			goto fail;
		ScaffoldRequest sr = {m,     loc.entry, loc.layer, loc.module_rel, tname,
		                      through ? 0 : (uint32_t)phase, strcmp(cut, "phase") != 0,
		                      first, last};
		if (splice_scaffold(&sr, &rj, &tt, &sum, &e) < 0)
			goto fail;
	}
	const char *action = "built_in"; /* what became of the template */
	fprintf(stderr, "%s", sum.p);
	bool keep = !builtin && !native && exists(tpath);
	bool invalid_cut = false;
	if (check_new(out_path, &rj, &loc, m, root, keep || builtin ? NULL : &tt, force, &invalid_cut,
	              &e) < 0) {
		char *why = xstrdup(err_msg(&e));
		if (invalid_cut)
			err_set(&e, "the cut cannot be spliced as it is: nothing written\n  %s\n  "
			            "(recipe new --force writes the recipe anyway; splice takes it "
			            "only with --force, and recipe check rejects it)", why);
		else if (keep)
			err_set(&e, "%s exists and is kept, and the recipe written for this cut does "
			            "not fit it: nothing written\n  %s\n  (give a new --template NAME "
			            "for a skeleton of its own, or --native mma|f16|mma_sync to write the phase's "
			            "native template again)", tpath, why);
		else
			err_set(&e, "the recipe written for this cut does not pass recipe check: "
			            "nothing written\n  %s", why);
		free(why);
		goto fail;
	}
	if (invalid_cut)
		fprintf(stderr, "note:      READ/WRITE DEPENDENCIES: cut invalid: written with "
		                "--force; splice takes it only with --force, recipe check rejects "
		                "it\n");
	if (builtin) {
		fprintf(stderr, "template:  %s (built in)\n", tname);
		goto write_recipe;
	}
	if (native) {
		if (write_native_template(tpath, &tt, force, &action, &e) < 0)
			goto fail;
	} else if (keep) {
		fprintf(stderr, "template:  %s exists, kept as it is\n", cmd_path_shown(tpath));
		action = "kept";
	} else {
		action = "wrote";
		char *td = layout_dir_of(tpath);
		int mk = mkdir_p(td, &e);
		free(td);
		if (mk < 0 || write_file_atomic(tpath, tt.p, tt.n, &e) < 0)
			goto fail;
		fprintf(stderr, "template:  wrote %s (skeleton: the cut as it stands)\n", cmd_path_shown(tpath));
	}
write_recipe:
	if (write_file_atomic(out_path, rj.p, rj.n, &e) < 0)
		goto fail;
	if (strcmp(out_path, "-"))
		fprintf(stderr, "recipe:    wrote %s\n", cmd_path_shown(out_path));
	rc = EXIT_OK;
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "recipe", out_path);
		cmd_json_str_or_null(o, "layer", loc.layer);
		cJSON_AddStringToObject(o, "module", map_name(loc.module_path));
		cJSON_AddStringToObject(o, "entry", loc.entry);
		if (phase > 0)
			cJSON_AddNumberToObject(o, "phase", (double)phase);
		else
			cJSON_AddNullToObject(o, "phase");
		cJSON_AddStringToObject(o, "template", builtin ? tname : tpath);
		cJSON_AddStringToObject(o, "template_action", action);
		cJSON_AddItemToObject(o, "cut", cmd_json_cut(m, loc.entry, through ? 0 : (unsigned)phase,
		                                             strcmp(cut, "phase") != 0, first, last));
		cmd_json_print(o, rc);
	}
	goto done;
fail:
	cmd_fail("recipe new: %s", err_msg(&e));
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
	free(tdisplay);
	free(tname);
	err_release(&e);
	return rc;
}

/* One recipe: its line into `out`, its reasons into `err`. */
static int check_one(const char *path, const Common *c, int ptxas, StrBuf *out, StrBuf *err,
                     cJSON *row)
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
	/* the template first: its faults are said even without a module */
	if (r.tkind == TPL_FILE && check_template(&r, c->ptx, &e) < 0)
		goto fail;
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
	CheckArgs ca = {m,          loc.entry, map_name(loc.module_path), c->ptx, c->arch,
	                ptxas != 0, false};
	ca.pc.no_cache = c->no_cache;
	if (check_recipe(&r, &ca, &res, &log, &e) < 0)
		goto fail;
	const char *verdict = ptxas ? (ca.pc.cached ? ", ptxas ok (cached)" : ", ptxas ok") : "";
	if (row) {
		cJSON_AddStringToObject(row, "result", "ok");
		cJSON_AddItemToObject(row, "stmt_range", cmd_json_range(res.first, res.last));
		cJSON_AddNumberToObject(row, "mma", res.mma);
		cmd_json_str_or_null(row, "template", res.template_name);
		cJSON_AddNumberToObject(row, "live_in", res.n_live_in);
		cJSON_AddNumberToObject(row, "live_out", res.n_live_out);
		/* the one "ptxas" object (jsonout.h), as splice and probe print it */
		cmd_json_ptxas(row, ptxas, ca.arch_used, true, &log, &ca.pc);
		cJSON_AddNullToObject(row, "message");
	}
	sb_addf(out, "ok    %s: s%u..s%u (%u mma), %s, %u live-in, %u live-out%s\n", path, res.first,
	        res.last, res.mma, res.template_name, res.n_live_in, res.n_live_out, verdict);
	rc = EXIT_OK;
	goto done;
fail:
	sb_addf(out, "FAIL  %s\n", path);
	sb_addf(err, "d4r-splice: recipe check: %s\n", err_msg(&e));
	if (row) {
		cJSON_AddStringToObject(row, "result", "fail");
		cJSON_AddStringToObject(row, "message", err_msg(&e));
	}
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

/* The recipes of one `recipe check`, handed out to --jobs threads. */
typedef struct {
	char **paths;
	size_t n;
	const Common *c;
	int ptxas;
	StrBuf *out, *err;
	cJSON **rows; /* --json: one object per recipe, else NULL */
	int *rc;
	Progress *pg;
	pthread_mutex_t lock;
	size_t next;
} CheckQueue;

static void *check_worker(void *arg)
{
	CheckQueue *q = arg;
	for (;;) {
		pthread_mutex_lock(&q->lock);
		size_t i = q->next++;
		pthread_mutex_unlock(&q->lock);
		if (i >= q->n)
			return NULL;
		progress_item(q->pg, q->paths[i]);
		q->rc[i] = check_one(q->paths[i], q->c, q->ptxas, &q->out[i], &q->err[i],
		                     q->rows ? q->rows[i] : NULL);
		progress_step(q->pg, NULL);
	}
}

static int recipe_check(int argc, char **argv)
{
	Common c = {0};
	const char *check = "none";
	OptArch arch = {0};
	unsigned jobs = 1;
	int n = 0, failed = 0;
	bool json = false;
	const Opt opts[] = {
		OPT_CHOICE_OPTARG("check", &check, "ptxas|none", "ptxas",
		                  "ptxas: run ptxas on each result (default none)"),
		OPT_ALIAS("ptxas", "check=ptxas", NULL),
		OPT_CALLBACK(0, "arch", &arch, "sm_XX", opt_arch,
		             "with --check=ptxas: the target (default .target)"),
		OPT_UINT(0, "jobs", &jobs, "N", 1, 256,
		         "check N recipes at a time (default 1)"),
		OPT_FLAG(0, "no-cache", &c.no_cache,
		         "with --check=ptxas: run ptxas, not its cached answer"),
		COMMON_OPTS(&c),
		OPT_FLAG(0, "json", &json, "one JSON object, a row per recipe"),
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
	if (c.no_cache && strcmp(check, "ptxas"))
		return opt_fail(&op, "option '%s' needs '--check=ptxas'",
		                opt_given(&op, "no-cache"));
	c.arch = opt_given(&op, "arch") ? arch.name : NULL;
	bool ptxas = !strcmp(check, "ptxas");
	StrBuf *out = xcalloc((size_t)nargs, sizeof(StrBuf)), *err = xcalloc((size_t)nargs, sizeof(StrBuf));
	int *rcs = xcalloc((size_t)nargs, sizeof(int));
	cJSON **rows = NULL;
	if (json) {
		rows = xcalloc((size_t)nargs, sizeof(cJSON *));
		for (int i = 0; i < nargs; i++) {
			rows[i] = cJSON_CreateObject();
			cJSON_AddStringToObject(rows[i], "recipe", argv[i]);
		}
	}
	Progress *pg = nargs > 1 || ptxas ? progress_start("recipe check", (size_t)nargs, "recipes")
	                                 : NULL;
	CheckQueue q = {argv, (size_t)nargs, &c, ptxas, out, err, rows, rcs, pg,
	                PTHREAD_MUTEX_INITIALIZER, 0};
	if (jobs > (unsigned)nargs)
		jobs = (unsigned)nargs;
	pthread_t *th = xcalloc(jobs, sizeof(pthread_t));
	unsigned started = 0;
	for (unsigned j = 1; j < jobs; j++)
		if (pthread_create(&th[started], NULL, check_worker, &q) == 0)
			started++;
	check_worker(&q);
	for (unsigned j = 0; j < started; j++)
		pthread_join(th[j], NULL);
	free(th);
	progress_end(pg);
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	cJSON *jr = doc ? cJSON_AddArrayToObject(doc, "recipes") : NULL;
	for (int i = 0; i < nargs; i++) {
		n++;
		failed += rcs[i] != EXIT_OK;
		if (jr)
			cJSON_AddItemToArray(jr, rows[i]);
		else
			fputs(out[i].p ? out[i].p : "", stdout);
		fflush(stdout);
		fputs(err[i].p ? err[i].p : "", stderr);
		sb_release(&out[i]);
		sb_release(&err[i]);
	}
	free(out);
	free(err);
	free(rcs);
	free(rows);
	fflush(stdout);
	if (n > 1)
		fprintf(stderr, "%d recipes, %d failed\n", n, failed);
	int rc = failed ? EXIT_ERROR : EXIT_OK;
	if (doc) {
		cJSON_AddNumberToObject(doc, "ok", n - failed);
		cJSON_AddNumberToObject(doc, "failed", failed);
		if (failed) {
			char msg[64];
			snprintf(msg, sizeof msg, "%d of %d recipes failed", failed, n);
			cJSON_AddStringToObject(doc, "message", msg);
		}
		cmd_json_print(doc, rc);
	}
	return rc;
}

/* ---- recipe best -------------------------------------------------------------- */

static int recipe_best(int argc, char **argv)
{
	const char *ranking = NULL, *proof = NULL, *name = "best", *corpus = NULL;
	bool force = false, json = false, per_phase = false;
	const Opt opts[] = {
		OPT_STRING(0, "ranking", &ranking, "FILE",
		           "profile LAYER --phases LIST --variant A,B --json"),
		OPT_FLAG(0, "per-phase", &per_phase,
		         "rank each phase by its cycles even where the probes changed the "
		         "compiled code"),
		OPT_STRING(0, "proof", &proof, "FILE", "check LAYER --json"),
		OPT_STRING(0, "name", &name, "NAME",
		           "the variant written: phase-NN-NAME.json (default best)"),
		OPT_STRING(0, "corpus", &corpus, "DIR", "the corpus folder"),
		OPT_FLAG(0, "force", &force, "replace the files of an earlier best-of layer"),
		OPT_FLAG(0, "json", &json, "one JSON object, a row per phase"),
		OPT_END(),
	};
	OptParse op = {.verb = "recipe best", .usage = usage_best, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (opt_args(&op, nargs, argv, 1, 1, "no layer given"))
		return EXIT_ERROR;
	if (!ranking || !proof)
		return opt_usage_error(&op, "name the ranking and the proof: --ranking "
		                            "PROFILE.json --proof CHECK.json");
	if (cmd_check_variant(name))
		return EXIT_ERROR;
	Err e = ERR_INIT;
	Manifest mf;
	memset(&mf, 0, sizeof mf);
	BestRanking r;
	BestProof pf;
	memset(&r, 0, sizeof r);
	memset(&pf, 0, sizeof pf);
	BestPick *picks = NULL;
	char *rtext = NULL, *ptext = NULL, *dir = NULL;
	size_t rn = 0, pn = 0;
	char **paths = NULL;
	int rc = EXIT_ERROR;
	StrBuf sb = STRBUF_INIT, why = STRBUF_INIT;
	NumList written = {0};
	if (mf_load_layer(argv[0], corpus, &mf, &e) < 0 || read_file(ranking, &rtext, &rn, &e) < 0 ||
	    best_read_ranking(ranking, rtext, rn, &r, &e) < 0 ||
	    read_file(proof, &ptext, &pn, &e) < 0 || best_read_proof(proof, ptext, pn, &pf, &e) < 0)
		goto fail;
	const char *layer = mf.layer ? mf.layer : argv[0];
	if (strcmp(r.layer, layer)) {
		err_set(&e, "%s: a ranking of layer '%s', not of '%s'", ranking, r.layer, layer);
		goto fail;
	}
	for (size_t i = 0; i < r.n; i++)
		for (size_t k = 0; k < r.v[i].n; k++)
			if (!strcmp(r.v[i].c[k].variant, name)) {
				err_set(&e, "option '--name': '%s' is a variant of the ranking; the "
				            "best-of layer would replace its recipes", name);
				goto fail;
			}
	dir = layout_dir_of(mf.path);
	BestRule rule = best_rule(&r, &why);
	if (per_phase && rule != BEST_PER_PHASE) {
		rule = BEST_PER_PHASE;
		sb_reset(&why);
		sb_adds(&why, "per phase, by the probed cycles (--per-phase), although the probes "
		              "changed the compiled code");
	}
	best_choose(&r, &pf, dir, rule, &picks);
	/* every file first: nothing is written when one may not be replaced */
	paths = xcalloc(r.n + 1, sizeof *paths);
	for (size_t i = 0; i < r.n; i++) {
		paths[i] = layout_recipe_variant(dir, picks[i].phase, name);
		if (exists(paths[i]) && !force) {
			err_set(&e, "'%s' exists (--force replaces an earlier best-of layer)",
			        paths[i]);
			goto fail;
		}
	}
	for (size_t i = 0; i < r.n; i++) {
		if (!picks[i].variant) {
			if (exists(paths[i]) && unlink(paths[i]) != 0) {
				err_set(&e, "'%s': cannot remove it", paths[i]);
				goto fail;
			}
			continue;
		}
		char *data;
		size_t n;
		if (read_file(picks[i].recipe, &data, &n, &e) < 0)
			goto fail;
		int w = write_file_atomic(paths[i], data, n, &e);
		free(data);
		if (w < 0)
			goto fail;
		VEC_PUSH(written, picks[i].phase);
	}
	if (json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "layer", layer);
		cJSON_AddStringToObject(doc, "ranking", ranking);
		cJSON_AddStringToObject(doc, "proof", proof);
		cJSON_AddStringToObject(doc, "name", name);
		cJSON_AddStringToObject(doc, "rule",
		                        rule == BEST_WHOLE_LAYER ? "whole-layer" : "per-phase");
		cJSON_AddStringToObject(doc, "rule_reason", why.p ? why.p : "");
		cJSON *ja = cJSON_AddArrayToObject(doc, "picks");
		for (size_t i = 0; i < r.n; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "phase", picks[i].phase);
			if (picks[i].variant) {
				cJSON_AddStringToObject(o, "variant", picks[i].variant);
				cJSON_AddNumberToObject(o, "ratio", picks[i].ratio);
				cJSON_AddStringToObject(o, "recipe", picks[i].recipe);
				cJSON_AddStringToObject(o, "written", paths[i]);
			} else {
				cJSON_AddNullToObject(o, "variant");
				cJSON_AddNullToObject(o, "ratio");
				cJSON_AddNullToObject(o, "recipe");
				cJSON_AddNullToObject(o, "written");
			}
			cJSON_AddStringToObject(o, "passed_over",
			                        picks[i].passed.p ? picks[i].passed.p : "");
			cJSON_AddItemToArray(ja, o);
		}
		numlist_format(&written, &sb);
		cJSON_AddStringToObject(doc, "phases", sb.p ? sb.p : "");
		cmd_json_print(doc, EXIT_OK);
	} else {
		printf("%s best-of layer (ranking %s, proof %s): %zu of %zu phases proven\n", layer,
		       ranking, proof, written.n, r.n);
		printf("  rule      %s\n", why.p ? why.p : "");
		for (size_t i = 0; i < r.n; i++) {
			const BestPick *pk = &picks[i];
			char ph[24], ra[24] = "";
			snprintf(ph, sizeof ph, "phase %u", pk->phase);
			if (pk->variant)
				snprintf(ra, sizeof ra, "%.2fx", pk->ratio);
			sb_reset(&sb);
			sb_addf(&sb, "  %-10s %-8s %-5s", ph, pk->variant ? pk->variant : "-", ra);
			if (pk->passed.n)
				sb_addf(&sb, "  passed over: %s", pk->passed.p);
			if (!pk->variant)
				sb_adds(&sb, " (the vendor's code stays)");
			while (sb.n && sb.p[sb.n - 1] == ' ')
				sb.p[--sb.n] = 0;
			printf("%s\n", sb.p);
		}
		sb_reset(&sb);
		numlist_format(&written, &sb);
		if (written.n) {
			printf("  wrote     %s/phase-NN-%s.json for phases %s (copies of the "
			       "chosen recipes)\n",
			       dir, name, sb.p);
			printf("  next      d4r-splice %s --phases %s --variant %s   (proves and "
			       "times it)\n",
			       layer, sb.p, name);
		} else
			printf("  wrote     nothing: no phase has a variant proven IDENTICAL\n");
	}
	rc = EXIT_OK;
	goto out;
fail:
	cmd_fail("recipe best: %s", err_msg(&e));
	if (json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "layer", argv[0]);
		cJSON_AddStringToObject(doc, "message", err_msg(&e));
		cmd_json_print(doc, EXIT_ERROR);
	}
out:
	sb_release(&why);
	numlist_release(&written);
	if (paths)
		for (size_t i = 0; i < r.n; i++)
			free(paths[i]);
	free(paths);
	if (picks)
		best_picks_free(picks, r.n);
	best_ranking_release(&r);
	best_proof_release(&pf);
	free(rtext);
	free(ptext);
	free(dir);
	sb_release(&sb);
	mf_release(&mf);
	err_release(&e);
	return rc;
}

const CmdVerb cmd_recipe_verbs[] = {
	{"new", recipe_new, "write a recipe scaffold and its template skeleton", NULL},
	{"check", recipe_check, "splice recipes in memory; say whether they pass", NULL},
	{"best", recipe_best, "the layer of the fastest proven variant of each phase", NULL},
	{NULL, NULL, NULL, NULL},
};

static const char *const usage[] = {
	"recipe new LAYER --phase N [options]",
	"recipe check RECIPE... [options]",
	"recipe best LAYER --ranking PROFILE.json --proof CHECK.json [options]",
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
	int sub = cmd_sub_verb("recipe", cmd_recipe_verbs, argc, argv);
	if (sub >= 0)
		return sub;
	const Opt opts[] = {OPT_END()};
	OptParse op = {.verb = "recipe", .usage = usage, .opts = opts,
	               .more_help = list_verbs};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (!nargs)
		return opt_usage_error(&op, "no sub-verb given (new, check or best)");
	return opt_usage_error(&op, "unknown subcommand '%s' (expected new, check or best)",
	                       argv[0]);
}
