/*
 * job.c - the main job: `d4r-splice LAYER --phase N`.
 *
 * Splice the recipe into the layer's module (with --phases, the recipes of
 * those phases into one module: splice_many), JIT-load the original and the
 * spliced module through the CUDA driver (in a child process, each module
 * reduced to the entries the launches need), run both on the same inputs,
 * compare the spliced frame byte for byte with the oracle and the original's
 * frame with the oracle too, and print the verdict with both timings, the
 * JIT time and the tool's own overhead, each measured in this run.
 *
 * Exit status: 0 identical, 1 differs, 2 error (including a spliced kernel
 * that faults or hangs, and an original that does not reproduce the oracle:
 * then no verdict can be trusted).
 *
 * What the job promises:
 *   - a verdict needs its oracle: a missing or unreadable oracle, or one
 *     whose sha256 is not the manifest's, is exit 2 naming the file before
 *     any GPU work; nothing is ever compared with the original's frame
 *     instead;
 *   - what can be checked without a GPU is checked before the driver is
 *     touched (in this order): the manifest, the recipe, the outputs (none
 *     may be an input: base/file.h), the init files, the oracle, the launch
 *     entries in the module, the splice itself;
 *   - with --json, every exit path prints one JSON object on stdout, errors
 *     included ({"status": "error", "message": ...}); --help excepted.
 */
#include "base/file.h"
#include "base/layout.h"
#include "cmd.h"
#include "gpu/frame.h"
#include "gpu/gpu.h"
#include "gpu/layer.h"
#include "ptx/parse.h"
#include "splice/multi.h"
#include "splice/splice.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const usage[] = {"LAYER --phase N [options]",
                                    "LAYER --phases LIST [--variant NAME] [options]",
                                    "LAYER --recipe FILE [options]", NULL};

static void line_note(void *ctx, unsigned line, StrBuf *out)
{
	const SpliceResult *sr = ctx;
	splice_where(sr, "spliced", line, out);
}

static void line_note_many(void *ctx, unsigned line, StrBuf *out)
{
	const SpliceManyResult *sm = ctx;
	splice_many_where(sm, "spliced", line, out);
}

/* --phases: the cut line of the several cuts, and its JSON */
static void many_text(const SpliceManyResult *sm, StrBuf *out)
{
	uint32_t in = 0, outn = 0;
	for (size_t i = 0; i < sm->n; i++) {
		in += sm->cuts[i].n_live_in;
		outn += sm->cuts[i].n_live_out;
	}
	sb_addf(out, "%zu cuts s%u-s%u, %u mma, live-in %u, live-out %u (summed)", sm->n,
	        sm->cuts[0].first, sm->cuts[sm->n - 1].last, sm->mma, in, outn);
}

static void times_text(const GpuModuleResult *r, StrBuf *sb)
{
	if (r->times.n)
		sb_addf(sb, "%.3f ms median (min %.3f, max %.3f, %u runs)", r->times.median_ms,
		        r->times.min_ms, r->times.max_ms, r->times.n);
	else if (r->status == GPU_OK)
		sb_addf(sb, "%.3f ms (one run; no timing)", r->frame_run_ms);
	else
		sb_adds(sb, "-");
}

/* How the job reports an error: on stderr, and with --json also as one
 * JSON object on stdout. */
typedef struct {
	bool json;
	const char *layer;
	unsigned phase;
} Report;

/* The JSON object of a job that ended in an error with status `st`. */
static void error_json(const Report *r, const char *msg, int st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "layer", r->layer ? r->layer : "");
	if (r->phase)
		cJSON_AddNumberToObject(o, "phase", r->phase);
	cJSON_AddStringToObject(o, "status", "error");
	cJSON_AddStringToObject(o, "verdict", "ERROR");
	cJSON_AddNumberToObject(o, "exit", st);
	cJSON_AddStringToObject(o, "message", msg);
	char *txt = cJSON_Print(o);
	puts(txt);
	free(txt);
	cJSON_Delete(o);
}

static int job_error(const Report *r, const char *msg)
{
	fprintf(stderr, "d4r-splice: %s\n", msg);
	if (r->json)
		error_json(r, msg, EXIT_ERROR);
	return EXIT_ERROR;
}

/* Was --json among the words before a "--"?  Looked for before the options
 * are parsed, so that an option error is a JSON object too. */
static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

/* The option parser's message, without its "d4r-splice: " and usage
 * lines (they stay on stderr). */
static void first_line(const char *text, StrBuf *out)
{
	const char *p = text ? text : "";
	if (!strncmp(p, "d4r-splice: ", 12))
		p += 12;
	const char *nl = strchr(p, '\n');
	sb_addn(out, p, nl ? (size_t)(nl - p) : strlen(p));
	if (!out->n)
		sb_adds(out, "invalid options");
}

/* DIR/NAME into path[cap]. */
static void keep_path(char *path, size_t cap, const char *dir, const char *name)
{
	snprintf(path, cap, "%s/%s", dir, name);
}

static int write_keep(const char *dir, const char *name, const void *p, size_t n)
{
	Err e = ERR_INIT;
	char path[4096];
	keep_path(path, sizeof path, dir, name);
	int rc = write_file_atomic(path, p, n, &e);
	if (rc < 0)
		cmd_fail("%s", err_msg(&e));
	err_release(&e);
	return rc;
}

/* The module, mapped and parsed, or -1 with the message in e. */
static int load_module(const char *path, LoadedModule *lm, Err *e)
{
	memset(lm, 0, sizeof(*lm));
	if (map_open(&lm->mf, path, e) < 0)
		return -1;
	lm->m = ptx_parse(path, lm->mf.p, lm->mf.n, e);
	if (!lm->m) {
		map_close(&lm->mf);
		return -1;
	}
	return 0;
}

int cmd_job(int argc, char **argv)
{
	const char *layer = argv[0], *recipe_path = NULL, *oracle_opt = NULL, *corpus = NULL;
	const char *keep = NULL, *diff_png = NULL, *phases = NULL, *variant = NULL;
	unsigned phase = 0, runs = 20;
	double timeout = 120;
	bool json = false, no_cache = false, force = false;
	const Opt opts[] = {
		OPT_PHASE(&phase, "the phase; its recipe: recipes/LAYER/phase-NN.json"),
		OPT_STRING(0, "phases", &phases, "LIST",
		           "those phases' recipes in one module (1-10,13,21-60)"),
		OPT_STRING(0, "variant", &variant, "NAME",
		           "the recipes phase-NN-NAME.json (phase-08-f16.json)"),
		OPT_STRING(0, "recipe", &recipe_path, "FILE",
		           "the recipe (instead of the layer's)"),
		OPT_STRING(0, "oracle", &oracle_opt, "FILE",
		           "the oracle frame (default: the manifest's)"),
		OPT_STRING(0, "corpus", &corpus, "DIR", "the corpus folder"),
		OPT_UINT(0, "runs", &runs, "N", 0, 100000,
		         "timed runs of each module (default 20)"),
		OPT_CALLBACK(0, "timeout", &timeout, "S", opt_seconds,
		             "kill the launches after S seconds (default 120)"),
		OPT_FLAG(0, "no-cache", &no_cache,
		         "neither read nor write the compiled-image cache"),
		OPT_FLAG(0, "force", &force, "splice a cut the splicer would refuse"),
		OPT_FLAG(0, "json", &json, "one JSON object, for CI"),
		OPT_STRING_OPTARG("keep", &keep, "DIR", "",
		                  "write the spliced module and both frames into DIR"),
		OPT_STRING(0, "diff-image", &diff_png, "FILE.png",
		           "draw where the spliced frame differs"),
		OPT_END(),
	};
	OptParse op = {.verb = "", .usage = usage, .opts = opts};
	Report rep = {wants_json(argc, argv), layer, 0};
	/* With --json, the parser's errors are kept for the JSON object too. */
	char *perr = NULL;
	size_t nperr = 0;
	FILE *pf = rep.json ? open_memstream(&perr, &nperr) : NULL;
	op.err = pf;
	int nargs = opt_parse(&op, argc, argv);
	int urc = -1;
	if (nargs >= 0 && nargs)
		urc = opt_usage_error(&op, "unexpected argument '%s' after the layer "
		                           "'%s' (d4r-splice --help lists the verbs)",
		                      argv[0], layer);
	else if (nargs >= 0 && (opt_conflicts(&op, "phases", "phase", "recipe", NULL) ||
	                        opt_conflict(&op, "variant", "recipe") ||
	                        cmd_check_variant(variant)))
		urc = EXIT_ERROR;
	else if (nargs >= 0 && !phase && !recipe_path && !phases)
		urc = opt_usage_error(&op, "'%s' is not a verb; the main job needs "
		                           "--phase N\n  (d4r-splice --help lists the "
		                           "verbs)", layer);
	if (pf) {
		fclose(pf);
		if (nperr)
			fputs(perr, stderr);
	}
	if (nargs < 0 || urc >= 0) {
		int st = nargs < 0 ? op.status : urc;
		if (st && rep.json) {
			rep.phase = phase;
			StrBuf m = STRBUF_INIT;
			first_line(perr, &m);
			error_json(&rep, m.p, st);
			sb_release(&m);
		}
		free(perr);
		return st;
	}
	free(perr);
	rep.json = json;
	rep.phase = phase;

	double t_start = now_seconds();
	Err e = ERR_INIT;
	int rc = EXIT_ERROR;
	Manifest mf;
	memset(&mf, 0, sizeof mf);
	Recipe rcp;
	memset(&rcp, 0, sizeof rcp);
	SpliceResult sr;
	memset(&sr, 0, sizeof sr);
	SpliceManyResult sm;
	memset(&sm, 0, sizeof sm);
	Recipe *sel = NULL;
	size_t nsel = 0;
	const Recipe **selp = NULL;
	GpuResult gr;
	memset(&gr, 0, sizeof gr);
	LoadedModule lm = {0};
	StrBuf red_orig = STRBUF_INIT, red_spl = STRBUF_INIT, line = STRBUF_INIT, msg = STRBUF_INIT;
	unsigned char *oracle = NULL;
	size_t oracle_len = 0;
	char *oracle_path = NULL, *module_path = NULL, *rpath = NULL, *keep_dir = NULL;
	FrameLayout lay = {0};
	cJSON *root = NULL;

	if (mf_load_layer(layer, corpus, &mf, &e) < 0) {
		job_error(&rep, err_msg(&e));
		goto out;
	}
	if (mf.layer)
		rep.layer = mf.layer;
	{
		char *dir = layout_dir_of(mf.path);
		LayerRecipes lr = {layer, dir, corpus, mf_layout_layer};
		int sel_rc = 0;
		if (phases) {
			sel_rc = splice_select(&lr, phases, variant, &sel, &nsel, &e);
			if (sel_rc == 0) {
				StrBuf sb = STRBUF_INIT;
				sb_addf(&sb, "%s/phase-NN%s%s.json (phases %s)", dir, variant ? "-" : "",
				        variant ? variant : "", phases);
				rpath = sb.p;
			}
		} else {
			sel_rc = splice_layer_recipe(&lr, phase, variant, recipe_path, &rcp, &e);
			if (sel_rc == 0)
				rpath = xstrdup(rcp.path);
		}
		free(dir);
		if (sel_rc < 0) {
			job_error(&rep, err_msg(&e));
			goto out;
		}
	}
	if (mf_corpus_path(&mf, mf.module, &module_path, &e) < 0) {
		job_error(&rep, err_msg(&e));
		goto out;
	}
	/* The outputs: none may be one of the inputs (checked before any work). */
	gpu_layer_inputs(&mf, oracle_opt);
	if (phases)
		for (size_t i = 0; i < nsel; i++)
			cmd_recipe_inputs(&sel[i], NULL);
	else
		cmd_recipe_inputs(&rcp, NULL);
	file_input_add(module_path, "module");
	if (keep) {
		char dir[4096];
		if (*keep)
			snprintf(dir, sizeof dir, "%s", keep);
		else if (phases)
			snprintf(dir, sizeof dir, "d4r-keep-%s-phases-%s%s%s", mf.layer ? mf.layer : layer,
			         phases, variant ? "-" : "", variant ? variant : "");
		else
			snprintf(dir, sizeof dir, "d4r-keep-%s-phase-%02u", mf.layer ? mf.layer : layer,
			         phase ? phase : rcp.phase);
		keep_dir = xstrdup(dir);
		static const char *const kept[] = {"spliced.ptx", "spliced.frame", "original.frame"};
		for (size_t i = 0; i < ARRAY_SIZE(kept); i++) {
			char path[4096];
			keep_path(path, sizeof path, keep_dir, kept[i]);
			if (out_check_mkdir(path, &e) < 0) {
				job_error(&rep, err_msg(&e));
				goto out;
			}
		}
	}
	if (diff_png && out_check(diff_png, &e) < 0) {
		job_error(&rep, err_msg(&e));
		goto out;
	}
	/* What needs no GPU: init files, the oracle, the launch entries. */
	if (gpu_layer_precheck(&mf, &e) < 0 ||
	    gpu_read_oracle(&mf, oracle_opt, &oracle, &oracle_len, &oracle_path, &e) < 0) {
		job_error(&rep, err_msg(&e));
		goto out;
	}
	if (load_module(module_path, &lm, &e) < 0 ||
	    gpu_reduce_module(&mf, lm.m, &red_orig, NULL, NULL, &e) < 0) {
		job_error(&rep, err_msg(&e));
		goto out;
	}
	double t0 = now_seconds();
	if (phases) {
		selp = xcalloc(nsel, sizeof(Recipe *));
		for (size_t i = 0; i < nsel; i++)
			selp[i] = &sel[i];
		SpliceManyRequest mreq = {lm.m, mf.entry, selp, nsel, NULL, force};
		if (splice_many(&mreq, &sm, &e) < 0) {
			job_error(&rep, err_msg(&e));
			goto out;
		}
	} else {
		SpliceRequest req = {lm.m, mf.entry, &rcp, NULL, force};
		if (splice_run(&req, &sr, &e) < 0) {
			job_error(&rep, err_msg(&e));
			goto out;
		}
	}
	const StrBuf *spl_text = phases ? &sm.text : &sr.text;
	if (gpu_reduce_text(&mf, "spliced", spl_text->p, spl_text->n, &red_spl, NULL, NULL, &e) < 0) {
		job_error(&rep, err_msg(&e));
		goto out;
	}
	double t_splice = now_seconds() - t0;
	if (keep_dir) {
		if (mkdir_p(keep_dir, &e) < 0) {
			job_error(&rep, err_msg(&e));
			goto out;
		}
		char path[4096];
		keep_path(path, sizeof path, keep_dir, "spliced.ptx");
		if (write_file_atomic(path, spl_text->p, spl_text->n, &e) < 0) {
			job_error(&rep, err_msg(&e));
			goto out;
		}
	}
	GpuModuleSrc mods[2] = {
		{"original", red_orig.p, red_orig.n, NULL, NULL},
		{"spliced", red_spl.p, red_spl.n, phases ? line_note_many : line_note,
		 phases ? (void *)&sm : (void *)&sr},
	};
	GpuJob job = {0};
	job.manifest = &mf;
	job.modules = mods;
	job.nmodules = 2;
	job.runs = runs;
	job.warmup = runs ? 3 : 0;
	job.timeout_s = timeout;
	job.no_cache = no_cache;
	job.parallel_jit = true;
	job.verbose_jit = true; /* the log's registers, stack, shared memory, spills */
	if (gpu_job_run(&job, &gr, &e) < 0) {
		job_error(&rep, err_msg(&e));
		goto out;
	}
	double t1 = now_seconds();
	frame_layout_from_manifest(&mf, &lay);
	const GpuModuleResult *o = &gr.mods[0], *s = &gr.mods[1];
	FrameDiff d_orig = {0}, d_spl = {0};
	int orig_differs = -1, spl_differs = -1;
	if (o->status == GPU_OK)
		orig_differs = frame_compare(&lay, o->frame, o->frame_len, oracle, oracle_len, &d_orig);
	if (s->status == GPU_OK)
		spl_differs = frame_compare(&lay, s->frame, s->frame_len, oracle, oracle_len, &d_spl);
	double t_compare = now_seconds() - t1;
	/* The verdict, and the headline's reason when there is none: it names
	 * the frame that failed. */
	const char *verdict;
	sb_reset(&msg);
	if (s->status != GPU_OK) {
		verdict = s->status == GPU_FAULT ? "FAULT" : s->status == GPU_HANG ? "HANG" : "ERROR";
		sb_addf(&msg, "spliced: %s", s->message ? s->message : gpu_status_name(s->status));
		rc = EXIT_ERROR;
	} else if (o->status != GPU_OK) {
		verdict = "ERROR";
		sb_addf(&msg, "original: %s", o->message ? o->message : gpu_status_name(o->status));
		rc = EXIT_ERROR;
	} else if (orig_differs == 1) {
		verdict = "ERROR";
		sb_addf(&msg, "the original's frame differs from the oracle '%s': a stale oracle or "
		              "changed inputs; no verdict on the spliced frame", oracle_path);
		rc = EXIT_ERROR;
	} else if (spl_differs == 1) {
		verdict = "DIFFERS";
		rc = EXIT_DIFFERS;
	} else {
		verdict = "IDENTICAL";
		rc = EXIT_OK;
	}
	if (diff_png && spl_differs == 1 && frame_diff_image(diff_png, &lay, oracle, s->frame, s->frame_len, &d_spl, &e) < 0)
		fprintf(stderr, "d4r-splice: %s\n", err_msg(&e));
	if (keep_dir && s->status == GPU_OK)
		write_keep(keep_dir, "spliced.frame", s->frame, s->frame_len);
	if (keep_dir && o->status == GPU_OK)
		write_keep(keep_dir, "original.frame", o->frame, o->frame_len);
	double total = now_seconds() - t_start;
	/* Side by side, the JITs cost the job their wall, not their sum. */
	double jit = gr.jit_parallel ? gr.jit_wall_seconds : o->jit_seconds + s->jit_seconds;
	double jit_longest = MAX(o->jit_seconds, s->jit_seconds);
	double gpu_ms = 0;
	if (o->times.n)
		gpu_ms += o->times.median_ms * (o->times.n + job.warmup);
	if (s->times.n)
		gpu_ms += s->times.median_ms * (s->times.n + job.warmup);
	double own = total - jit - gr.setup_seconds - gpu_ms / 1e3;
	if (own < 0)
		own = 0;
	/* what the compiler made of each kernel (profile: d4r-splice profile) */
	GpuLogAttrs la_o, la_s;
	gpu_log_func_attrs(o->jit_log, mf.entry, &la_o);
	gpu_log_func_attrs(s->jit_log, mf.entry, &la_s);
	bool spills_more = gpu_log_attrs_spill_more(&la_o, &la_s);
	double ratio = (o->times.n && s->times.n && o->times.median_ms > 0)
	                   ? s->times.median_ms / o->times.median_ms
	                   : 0;
	if (json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "layer", mf.layer ? mf.layer : layer);
		if (phases) {
			cJSON_AddStringToObject(root, "phases", phases);
			if (variant)
				cJSON_AddStringToObject(root, "variant", variant);
		} else
			cJSON_AddNumberToObject(root, "phase", phase ? phase : rcp.phase);
		cJSON_AddStringToObject(root, "status",
		                        rc != EXIT_ERROR ? "ok"
		                        : s->status != GPU_OK ? gpu_status_name(s->status)
		                        : o->status != GPU_OK ? gpu_status_name(o->status)
		                                              : "error");
		if (msg.n)
			cJSON_AddStringToObject(root, "message", msg.p);
		cJSON_AddStringToObject(root, "verdict", verdict);
		cJSON_AddNumberToObject(root, "exit", rc);
		cJSON_AddStringToObject(root, "recipe", rpath);
		cJSON_AddStringToObject(root, "module", module_path);
		cJSON_AddStringToObject(root, "template", sr.template_name ? sr.template_name : "");
		if (phases) {
			cJSON *cuts = cJSON_AddArrayToObject(root, "cuts");
			for (size_t i = 0; i < sm.n; i++) {
				const SpliceResult *c = &sm.cuts[i];
				cJSON *co = cJSON_CreateObject();
				cJSON_AddStringToObject(co, "recipe", sm.recipes[i]->path);
				cJSON_AddStringToObject(co, "template", c->template_name ? c->template_name : "");
				cJSON_AddNumberToObject(co, "first", c->first);
				cJSON_AddNumberToObject(co, "last", c->last);
				cJSON_AddNumberToObject(co, "mma", c->mma);
				cJSON_AddNumberToObject(co, "live_in", c->n_live_in);
				cJSON_AddNumberToObject(co, "live_out", c->n_live_out);
				cJSON_AddStringToObject(co, "sha256", c->sha256);
				cJSON_AddStringToObject(co, "prefix", c->prefix);
				cJSON_AddItemToArray(cuts, co);
			}
		}
		cJSON *cut = cJSON_AddObjectToObject(root, "cut");
		cJSON_AddNumberToObject(cut, "first", phases ? sm.cuts[0].first : sr.first);
		cJSON_AddNumberToObject(cut, "last", phases ? sm.cuts[sm.n - 1].last : sr.last);
		cJSON_AddNumberToObject(cut, "mma", phases ? sm.mma : sr.mma);
		cJSON_AddNumberToObject(cut, "live_in", sr.n_live_in);
		cJSON_AddNumberToObject(cut, "live_out", sr.n_live_out);
		cJSON_AddStringToObject(cut, "sha256", sr.sha256);
		cJSON_AddBoolToObject(cut, "forced", sr.forced);
		cJSON_AddStringToObject(root, "oracle", oracle_path);
		cJSON_AddBoolToObject(root, "compared_with_oracle", true);
		cJSON_AddStringToObject(root, "device", gr.device);
		for (int k = 0; k < 2; k++) {
			const GpuModuleResult *r = &gr.mods[k];
			cJSON *mo = cJSON_AddObjectToObject(root, k ? "spliced" : "original");
			cJSON_AddStringToObject(mo, "status", gpu_status_name(r->status));
			if (r->message)
				cJSON_AddStringToObject(mo, "message", r->message);
			cJSON_AddStringToObject(mo, "frame_sha256", r->sha256);
			cJSON_AddNumberToObject(mo, "jit_seconds", r->jit_seconds);
			cJSON_AddBoolToObject(mo, "jit_cached", r->jit_cached);
			cJSON_AddNumberToObject(mo, "runs", r->times.n);
			cJSON_AddNumberToObject(mo, "median_ms", r->times.median_ms);
			cJSON_AddNumberToObject(mo, "min_ms", r->times.min_ms);
			cJSON_AddNumberToObject(mo, "max_ms", r->times.max_ms);
			cJSON_AddBoolToObject(mo, "repeatable", r->repeatable);
			int differs = k ? spl_differs : orig_differs;
			if (differs >= 0)
				cJSON_AddBoolToObject(mo, "identical", differs == 0);
		}
		/* where the failing frame differs: the original's when it does not
		 * reproduce the oracle, else the spliced one's */
		if (orig_differs == 1 || spl_differs == 1) {
			sb_reset(&line);
			sb_addc(&line, '{');
			frame_diff_json(&lay, orig_differs == 1 ? &d_orig : &d_spl, &line);
			sb_addc(&line, '}');
			cJSON *dj = cJSON_Parse(line.p);
			if (dj)
				cJSON_AddItemToObject(root, orig_differs == 1 ? "original_diff" : "diff", dj);
		}
		cJSON *cm = cJSON_AddObjectToObject(root, "compiled");
		const GpuLogAttrs *las[2] = {&la_o, &la_s};
		for (int k = 0; k < 2; k++) {
			cJSON *c = cJSON_AddObjectToObject(cm, k ? "spliced" : "original");
			cJSON_AddBoolToObject(c, "known", las[k]->known);
			cJSON_AddNumberToObject(c, "registers", las[k]->regs);
			cJSON_AddNumberToObject(c, "stack_bytes", las[k]->stack_bytes);
			cJSON_AddNumberToObject(c, "shared_bytes", las[k]->shared_bytes);
			cJSON_AddNumberToObject(c, "spill_store_bytes", (double)las[k]->spill_stores);
			cJSON_AddNumberToObject(c, "spill_load_bytes", (double)las[k]->spill_loads);
		}
		cJSON_AddBoolToObject(cm, "spliced_spills_where_original_does_not", spills_more);
		cJSON_AddNumberToObject(root, "ratio", ratio);
		cJSON *t = cJSON_AddObjectToObject(root, "seconds");
		cJSON_AddNumberToObject(t, "splice", t_splice);
		cJSON_AddNumberToObject(t, "jit", jit);
		cJSON_AddBoolToObject(t, "jit_parallel", gr.jit_parallel);
		cJSON_AddNumberToObject(t, "jit_longest", jit_longest);
		cJSON_AddNumberToObject(t, "setup", gr.setup_seconds);
		cJSON_AddNumberToObject(t, "launches", gpu_ms / 1e3);
		cJSON_AddNumberToObject(t, "compare", t_compare);
		cJSON_AddNumberToObject(t, "tool", own);
		cJSON_AddNumberToObject(t, "total", total);
		cmd_json_paths(root);
		char *txt = cJSON_Print(root);
		puts(txt);
		free(txt);
	} else {
		if (phases)
			printf("%s phases %s%s%s: %s", mf.layer ? mf.layer : layer, phases,
			       variant ? " variant " : "", variant ? variant : "", verdict);
		else
			printf("%s phase %u: %s", mf.layer ? mf.layer : layer, phase ? phase : rcp.phase,
			       verdict);
		if (msg.n)
			printf(" (%s)\n", msg.p);
		else if (spl_differs == 0)
			printf(" (spliced frame = oracle, %zu bytes, sha256 %.16s)\n", s->frame_len, s->sha256);
		else
			printf(" (spliced frame differs from the oracle)\n");
		if (phases) {
			sb_reset(&line);
			many_text(&sm, &line);
			printf("  recipes   %s\n", rpath);
			printf("  cuts      %s\n", line.p);
		} else {
			printf("  recipe    %s  template %s\n", rpath,
			       sr.template_name ? sr.template_name : "?");
			printf("  cut       s%u-s%u (lines %u-%u), %u mma, live-in %u, live-out %u%s\n",
			       sr.first, sr.last, sr.first_line, sr.last_line, sr.mma, sr.n_live_in,
			       sr.n_live_out, sr.forced ? "  FORCED past a refusal" : "");
		}
		printf("  oracle    %s\n", cmd_path_shown(oracle_path));
		sb_reset(&line);
		times_text(o, &line);
		printf("  original  %s  [%s%s]\n", line.p, gpu_status_name(o->status),
		       orig_differs == 1 ? ", DOES NOT REPRODUCE THE ORACLE" : orig_differs == 0 ? ", = oracle" : "");
		sb_reset(&line);
		times_text(s, &line);
		printf("  spliced   %s  [%s]\n", line.p, gpu_status_name(s->status));
		if (ratio > 0)
			printf("  ratio     spliced/original %.2fx (%s)\n", ratio,
			       ratio > 1.02 ? "slower" : ratio < 0.98 ? "faster" : "about the same");
		if (la_o.known || la_s.known) {
			sb_reset(&line);
			gpu_log_attrs_text(&la_o, &line);
			printf("  compiled  original %s\n", line.p);
			sb_reset(&line);
			gpu_log_attrs_text(&la_s, &line);
			printf("            spliced  %s%s\n", line.p,
			       spills_more ? "  SPILLS where the original does not" : "");
		}
		if (orig_differs == 1 || spl_differs == 1) {
			sb_reset(&line);
			frame_diff_describe(&lay, orig_differs == 1 ? &d_orig : &d_spl, &line);
			printf("  diff      %s%s\n", orig_differs == 1 ? "original vs oracle: " : "", line.p);
		}
		printf("  seconds   splice %.3f, JIT %.2f (%soriginal %.2f%s, spliced %.2f%s), setup %.2f, "
		       "launches %.3f, compare %.3f, tool %.3f, total %.2f\n",
		       t_splice, jit, gr.jit_parallel ? "parallel: " : "", o->jit_seconds,
		       o->jit_cached ? " cached" : "", s->jit_seconds, s->jit_cached ? " cached" : "",
		       gr.setup_seconds, gpu_ms / 1e3, t_compare, own, total);
		if (gr.device[0])
			printf("  device    %s (sm_%d%d, driver %d)\n", gr.device, gr.cc_major, gr.cc_minor,
			       gr.driver_version);
		if (keep_dir)
			printf("  kept      %s/\n", keep_dir);
	}
	frame_diff_release(&d_orig);
	frame_diff_release(&d_spl);
out:
	cJSON_Delete(root);
	frame_layout_release(&lay);
	free(oracle);
	free(oracle_path);
	free(module_path);
	free(rpath);
	free(keep_dir);
	sb_release(&red_orig);
	sb_release(&red_spl);
	sb_release(&line);
	sb_release(&msg);
	gpu_result_release(&gr);
	splice_result_release(&sr);
	splice_many_release(&sm);
	for (size_t i = 0; i < nsel; i++)
		rcp_release(&sel[i]);
	free(sel);
	free(selp);
	if (lm.m)
		cmd_unload_module(&lm);
	rcp_release(&rcp);
	mf_release(&mf);
	err_release(&e);
	return rc;
}
