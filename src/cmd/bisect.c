/*
 * bisect.c - `d4r-splice bisect`: where an original and a spliced module
 * first differ, inside the kernel.
 *
 *   d4r-splice bisect LAYER --phase N [--recipe FILE] [options]
 *   d4r-splice bisect LAYER --phases LIST [options]
 *   d4r-splice bisect LAYER --module SPLICED.ptx [options]
 *
 * The spliced module is one recipe's, several recipes' (spliced into one
 * module, the cut furthest down first, so the statement numbers of the
 * others still hold), or a file.  Both modules are instrumented at the same
 * logical points (splice/probe.h): after each phase of the original (or its
 * epilogue), and at each cut after the spliced code, with the registers the
 * cut binds; the points are carried over by aligning the two functions'
 * statements.  Both run side by side (gpu/probe.h) on the layer's inputs;
 * then, in the order the kernel reaches them, the first record whose dump
 * differs is shown there (phase, block, warp, lane, register, both values,
 * the distance in ulps), with one line per record from there on (how many
 * values differ, the largest distance), and the final frames are compared.
 * The instrumented original's frame must be the oracle: the probes must not
 * change what they observe.
 *
 * Exit status: 0 no record differs and the spliced frame is the oracle, 1
 * something differs, 2 an error (the instrumented original does not
 * reproduce the oracle among them).
 *
 * Decisions:
 *  - The dump of every probed phase must fit: in half of what the device's
 *    free memory leaves (two dumps are on it at once), asked in a child
 *    while the host prepares the modules, and in an eighth of the host's
 *    memory; or in --dump-limit.  When it does not, the first records that
 *    fit are probed and the output says which phases were left out and how
 *    to reach them (--window).
 *  - A record at a cut's end holds the cut's live-out registers whatever
 *    --registers says: those are the registers the splice binds, the only
 *    ones both modules have there.
 */
#include "bisect_internal.h"
#include "base/file.h"
#include "base/layout.h"
#include "base/numlist.h"
#include "cmd.h"
#include "gpu/frame.h"
#include "gpu/layer.h"
#include "gpu/probe.h"
#include "ptx/parse.h"
#include "splice/probe.h"
#include "splice/splice.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {
    "bisect LAYER --phase N [--recipe FILE] [options]",
    "bisect LAYER --phases LIST [options]",
    "bisect LAYER --module SPLICED.ptx [options]",
    NULL,
};

/* ---- output ----------------------------------------------------------------------- */

static void dist_text(ProbeFmt f, uint64_t d, StrBuf *sb)
{
	if (d == PROBE_DIST_NAN) {
		sb_adds(sb, "nan");
		return;
	}
	bool fl = f == PF_F16 || f == PF_BF16 || f == PF_F32 || f == PF_F64 ||
	          f == PF_F16X2 || f == PF_BF16X2;
	sb_addf(sb, "%llu%s", (unsigned long long)d,
	        fl ? (d == 1 ? " ulp" : " ulps") : "");
}

/* Each line of text, after the output's indent. */
static void print_indented(const char *text)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		printf("            %.*s\n", (int)n, p);
		p += n + (nl != NULL);
	}
}

static int write_keep(const char *dir, const char *name, const void *p, size_t n)
{
	Err e = ERR_INIT;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int rc = write_file_atomic(path, p, n, &e);
	if (rc < 0)
		cmd_fail("%s", err_msg(&e));
	err_release(&e);
	return rc;
}

int cmd_bisect(int argc, char **argv)
{
	Bisect bb, *b = &bb;
	memset(b, 0, sizeof bb);
	b->layer = argv[0];
	const char *at = "phase-end", *regs = "live-out";
	b->timeout = 120;
	const Opt opts[] = {
	    OPT_PHASE(&b->phase, "the phase; its recipe: recipes/LAYER/phase-NN.json"),
	    OPT_STRING(0, "recipe", &b->recipe_opt, "FILE",
	               "the recipe (instead of the layer's)"),
	    OPT_CALLBACK(0, "phases", &b->phases, "LIST", opt_phase_list,
	                 "several phases' recipes spliced into one module (1-10,13)"),
	    OPT_STRING(0, "module", &b->module_opt, "FILE",
	               "a spliced module to compare"),
	    OPT_CHOICE(0, "at", &at, "phase-end|epilogue-end",
	               "probe after each phase's last mma (default) or its epilogue"),
	    OPT_CHOICE(0, "registers", &regs, "live-out|all",
	               "the live-out registers (default) or all the range defines"),
	    OPT_CALLBACK(0, "window", &b->window, "LIST", opt_phase_list,
	                 "the phases to probe (default: all that fit)"),
	    OPT_CALLBACK(0, "dump-limit", &b->dump_limit, "SIZE", opt_size,
	                 "the most one module's dump may take (default: what fits)"),
	    OPT_STRING(0, "oracle", &b->oracle_opt, "FILE",
	               "the oracle frame (default: the manifest's)"),
	    OPT_STRING(0, "corpus", &b->corpus, "DIR", "the corpus folder"),
	    OPT_CALLBACK(0, "timeout", &b->timeout, "S", opt_seconds,
	                 "kill the launches after S seconds (default 120)"),
	    OPT_FLAG(0, "no-cache", &b->no_cache,
	             "neither read nor write the compiled-image cache"),
	    OPT_FLAG(0, "serial", &b->serial, "JIT the two modules one after the other"),
	    OPT_FLAG(0, "force", &b->force, "splice a cut the splicer would refuse"),
	    OPT_FLAG(0, "json", &b->json, "one JSON object, for CI"),
	    OPT_STRING_OPTARG("keep", &b->keep, "DIR", "",
	                      "write the modules, frames and dumps into DIR"),
	    OPT_END(),
	};
	OptParse op = {.verb = "bisect", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	int rc = EXIT_ERROR;
	if (nargs < 0) {
		rc = op.status;
		goto free_opts;
	}
	if ((rc = opt_args(&op, nargs, argv, 1, 1, "no layer given")))
		goto free_opts;
	b->layer = argv[0];
	if ((rc = opt_conflicts(&op, "module", "phase", "recipe", "phases", "force",
	                        NULL)) ||
	    (rc = opt_conflicts(&op, "phases", "phase", "recipe", NULL)))
		goto free_opts;
	if (!b->phase && !b->recipe_opt && !b->phases.n && !b->module_opt) {
		rc = opt_usage_error(&op,
		                     "name the spliced module: --phase N, --recipe FILE, "
		                     "--phases LIST or --module FILE");
		goto free_opts;
	}
	b->at = !strcmp(at, "epilogue-end") ? PROBE_AT_EPILOGUE_END : PROBE_AT_PHASE_END;
	b->regs = !strcmp(regs, "all") ? PROBE_REGS_ALL : PROBE_REGS_LIVE_OUT;
	rc = EXIT_ERROR;

	double t_start = now_seconds();
	Err e = ERR_INIT;
	b->mem_err = (Err)ERR_INIT;
	b->mem_started = pthread_create(&b->mem_thread, NULL, bisect_mem_query, b) == 0;
	if (!b->mem_started)
		bisect_mem_query(b);
	GpuProbeResult gr;
	memset(&gr, 0, sizeof gr);
	unsigned char *oracle = NULL;
	size_t oracle_len = 0;
	char *oracle_path = NULL, *keep_dir = NULL;
	FrameLayout lay = {0};
	FrameDiff d_orig = {0}, d_spl = {0};
	ProbeRecordDiff *diffs = NULL;
	StrBuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	cJSON *root = NULL;

	if (mf_load_layer(b->layer, b->corpus, &b->mf, &e) < 0 ||
	    mf_corpus_path(&b->mf, b->mf.module, &b->module_path, &e) < 0)
		goto fail;
	if (cmd_load_module(b->module_path, &b->lm) < 0)
		goto done;
	b->fo = mod_func_find(b->lm.m, str_c(b->mf.entry));
	if (!b->fo || (b->fo->flags & FNF_DECL)) {
		err_set(&e, "%s: no function '%s' with a body", b->module_path,
		        b->mf.entry);
		goto fail;
	}
	if (bisect_make_spliced(b, &e) < 0 || bisect_plan_probes(b, &e) < 0)
		goto fail;
	ProbeRequest qo = {b->lm.m, b->fo, &b->po, NULL},
	             qs = {b->ms, b->fs, &b->ps, NULL};
	if (probe_instrument(&qo, &b->ro, &e) < 0)
		goto fail;
	if (probe_instrument(&qs, &b->rs, &e) < 0) {
		err_set(&e, "the spliced module: %s", err_msg(&e));
		goto fail;
	}
	if (gpu_reduce_text(&b->mf, "original (probed)", b->ro.text.p, b->ro.text.n,
	                    &b->red_o, NULL, NULL, &e) < 0 ||
	    gpu_reduce_text(&b->mf, "spliced (probed)", b->rs.text.p, b->rs.text.n,
	                    &b->red_s, NULL, NULL, &e) < 0)
		goto fail;
	b->t_prep = now_seconds() - t_start;
	uint64_t dump_bytes = probe_dump_bytes(&b->po, b->grid, b->block);
	if (b->keep) {
		char dir[4096];
		if (*b->keep)
			snprintf(dir, sizeof dir, "%s", b->keep);
		else
			snprintf(dir, sizeof dir, "d4r-bisect-%s",
			         b->mf.layer ? b->mf.layer : b->layer);
		keep_dir = xstrdup(dir);
		if (mkdir_p(dir, &e) < 0)
			goto fail;
		if (write_keep(dir, "spliced.ptx", b->spliced.p, b->spliced.n) < 0 ||
		    write_keep(dir, "original.probed.ptx", b->ro.text.p, b->ro.text.n) <
		        0 ||
		    write_keep(dir, "spliced.probed.ptx", b->rs.text.p, b->rs.text.n) < 0)
			goto done;
	}

	GpuProbeModule mods[2] = {
	    {"original", b->red_o.p, b->red_o.n, b->ro.symbol, dump_bytes, bisect_note_o, b},
	    {"spliced", b->red_s.p, b->red_s.n, b->rs.symbol, dump_bytes, bisect_note_s, b},
	};
	GpuProbeJob job = {.manifest = &b->mf,
	                   .modules = mods,
	                   .nmodules = 2,
	                   .timeout_s = b->timeout,
	                   .no_cache = b->no_cache,
	                   .serial = b->serial};
	if (gpu_probe_run(&job, &gr, &e) < 0)
		goto fail;
	double t1 = now_seconds();
	const GpuProbeModuleResult *o = &gr.mods[0], *s = &gr.mods[1];
	int have_oracle = gpu_read_oracle(&b->mf, b->oracle_opt, &oracle, &oracle_len,
	                                  &oracle_path, &e) == 0;
	frame_layout_from_manifest(&b->mf, &lay);
	int orig_differs = -1, spl_differs = -1;
	if (have_oracle && o->status == GPU_OK)
		orig_differs = frame_compare(&lay, o->frame, o->frame_len, oracle,
		                             oracle_len, &d_orig);
	const unsigned char *ref = have_oracle           ? oracle
	                           : o->status == GPU_OK ? o->frame
	                                                 : NULL;
	size_t ref_len = have_oracle ? oracle_len : o->frame_len;
	if (ref && s->status == GPU_OK)
		spl_differs =
		    frame_compare(&lay, s->frame, s->frame_len, ref, ref_len, &d_spl);
	int64_t first = -1;
	bool dumps = o->status == GPU_OK && s->status == GPU_OK &&
	             o->dump_len == dump_bytes && s->dump_len == dump_bytes;
	diffs = xcalloc(b->po.recs.n + 1, sizeof(ProbeRecordDiff));
	if (dumps)
		first = probe_compare(&b->po, b->grid, b->block, o->dump, s->dump, diffs);
	double t_compare = now_seconds() - t1;
	if (keep_dir) {
		if (o->status == GPU_OK) {
			write_keep(keep_dir, "original.frame", o->frame, o->frame_len);
			write_keep(keep_dir, "original.dump", o->dump, o->dump_len);
		}
		if (s->status == GPU_OK) {
			write_keep(keep_dir, "spliced.frame", s->frame, s->frame_len);
			write_keep(keep_dir, "spliced.dump", s->dump, s->dump_len);
		}
	}

	/* the verdict */
	const char *verdict;
	const char *why = NULL;
	if (o->status != GPU_OK || s->status != GPU_OK) {
		const GpuProbeModuleResult *bad = o->status != GPU_OK ? o : s;
		verdict = bad->status == GPU_FAULT  ? "FAULT"
		          : bad->status == GPU_HANG ? "HANG"
		                                    : "ERROR";
		why = gr.message;
		rc = EXIT_ERROR;
	} else if (orig_differs == 1) {
		verdict = "ERROR";
		why = "the instrumented original's frame differs from the oracle: the "
		      "probes changed "
		      "what they observe, or the oracle is stale";
		rc = EXIT_ERROR;
	} else if (!dumps) {
		verdict = "ERROR";
		why = "a dump came back with the wrong size";
		rc = EXIT_ERROR;
	} else if (first >= 0 || spl_differs == 1) {
		verdict = "DIFFERS";
		rc = EXIT_DIFFERS;
	} else if (spl_differs == 0) {
		verdict = "IDENTICAL";
		rc = EXIT_OK;
	} else {
		verdict = "ERROR";
		why = "no frame to compare";
		rc = EXIT_ERROR;
	}
	double total = now_seconds() - t_start;
	double jit_max =
	    o->jit_seconds > s->jit_seconds ? o->jit_seconds : s->jit_seconds;
	double budget = jit_max + 2.0;
	uint64_t warps = probe_grid_warps(b->grid, b->block);
	unsigned nvals = b->ro.nvalues;
	const char *layer = b->mf.layer ? b->mf.layer : b->layer;
	const char *at_text =
	    b->at == PROBE_AT_EPILOGUE_END ? "epilogue-end" : "phase-end";
	const char *regs_text = b->regs == PROBE_REGS_ALL ? "all" : "live-out";
	bool windowed = b->po.recs.n < b->planned;

	/* the first difference */
	unsigned fb[3] = {0, 0, 0}, fw = 0;
	const ProbeRecord *fr = first >= 0 ? &b->po.recs.v[first] : NULL;
	const ProbeRecordDiff *fd = first >= 0 ? &diffs[first] : NULL;
	const ProbeValue *fv = fr ? &fr->vals.v[fd->val] : NULL;
	int half = 0;
	if (fr) {
		probe_warp_where(fd->warp, b->grid, b->block, fb, &fw);
		probe_distance((ProbeFmt)fv->fmt, fd->a, fd->b, &half);
	}

	if (b->json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "layer", layer);
		cJSON_AddStringToObject(root, "verdict", verdict);
		cJSON_AddNumberToObject(root, "exit", rc);
		if (why)
			cJSON_AddStringToObject(root, "message", why);
		cJSON_AddStringToObject(root, "source", b->mode_text);
		cJSON *cuts = cJSON_AddArrayToObject(root, "cuts");
		for (size_t i = b->cuts.n; i-- > 0;) {
			const Cut *c = &b->cuts.v[i];
			cJSON *cj = cJSON_CreateObject();
			cJSON_AddStringToObject(cj, "recipe", c->recipe);
			cJSON_AddStringToObject(cj, "template",
			                        c->template_name ? c->template_name : "");
			if (c->phase)
				cJSON_AddNumberToObject(cj, "phase", c->phase);
			cJSON_AddNumberToObject(cj, "first", c->first);
			cJSON_AddNumberToObject(cj, "last", c->last);
			cJSON_AddItemToArray(cuts, cj);
		}
		cJSON *pj = cJSON_AddObjectToObject(root, "probes");
		cJSON_AddStringToObject(pj, "at", at_text);
		cJSON_AddStringToObject(pj, "registers", regs_text);
		cJSON_AddNumberToObject(pj, "records", (double)b->po.recs.n);
		cJSON_AddNumberToObject(pj, "registers_per_lane", nvals);
		cJSON_AddNumberToObject(pj, "bytes_per_warp", (double)b->po.warp_bytes);
		cJSON_AddNumberToObject(pj, "warps", (double)warps);
		cJSON_AddNumberToObject(pj, "dump_bytes", (double)dump_bytes);
		cJSON_AddBoolToObject(pj, "windowed", windowed);
		if (windowed) {
			cJSON_AddNumberToObject(pj, "all_records", (double)b->planned);
			cJSON_AddNumberToObject(pj, "all_dump_bytes",
			                        (double)b->full_bytes);
			cJSON_AddNumberToObject(pj, "dump_limit", (double)b->limit);
			cJSON_AddStringToObject(pj, "limit_from", b->limit_why);
			cJSON_AddStringToObject(pj, "left_out",
			                        b->left_out.p ? b->left_out.p : "");
		}
		cJSON_AddNumberToObject(pj, "inside_cuts", (double)b->dropped.n);
		cJSON_AddNumberToObject(pj, "unprobed", (double)b->unprobed);
		if (b->unprobed)
			cJSON_AddStringToObject(pj, "unprobed_first", b->unprobed_why.p);
		cJSON_AddStringToObject(pj, "symbol", b->ro.symbol);
		cJSON *oj = cJSON_AddObjectToObject(root, "original");
		cJSON *sj = cJSON_AddObjectToObject(root, "spliced");
		const GpuProbeModuleResult *mr[2] = {o, s};
		cJSON *mj[2] = {oj, sj};
		for (int k = 0; k < 2; k++) {
			cJSON_AddStringToObject(mj[k], "status",
			                        gpu_status_name(mr[k]->status));
			if (mr[k]->message)
				cJSON_AddStringToObject(mj[k], "message", mr[k]->message);
			cJSON_AddStringToObject(mj[k], "frame_sha256", mr[k]->sha256);
			cJSON_AddNumberToObject(mj[k], "jit_seconds", mr[k]->jit_seconds);
			cJSON_AddBoolToObject(mj[k], "jit_cached", mr[k]->jit_cached);
			cJSON_AddNumberToObject(mj[k], "run_ms", mr[k]->run_ms);
		}
		cJSON_AddStringToObject(oj, "oracle",
		                        orig_differs < 0 ? "none"
		                        : orig_differs   ? "differs"
		                                         : "matches");
		if (spl_differs >= 0)
			cJSON_AddBoolToObject(sj, "frame_identical", spl_differs == 0);
		if (fr) {
			cJSON *fj = cJSON_AddObjectToObject(root, "first");
			cJSON_AddNumberToObject(fj, "record", (double)first);
			sb_reset(&sb);
			probe_record_name(fr, &sb);
			cJSON_AddStringToObject(fj, "point", sb.p);
			if (fr->phase)
				cJSON_AddNumberToObject(fj, "phase", fr->phase);
			cJSON_AddNumberToObject(fj, "stmt", fr->at);
			cJSON_AddNumberToObject(fj, "stmt_spliced",
			                        b->ps.recs.v[first].at);
			cJSON *bj = cJSON_AddArrayToObject(fj, "block");
			for (int k = 0; k < 3; k++)
				cJSON_AddItemToArray(bj, cJSON_CreateNumber(fb[k]));
			cJSON_AddNumberToObject(fj, "warp", fw);
			cJSON_AddNumberToObject(fj, "lane", fd->lane);
			cJSON_AddStringToObject(fj, "register", fv->name);
			cJSON_AddStringToObject(fj, "type",
			                        probe_fmt_name((ProbeFmt)fv->fmt));
			sb_reset(&sb);
			probe_value_text((ProbeFmt)fv->fmt, fd->a, &sb);
			cJSON_AddStringToObject(fj, "original", sb.p);
			sb_reset(&sb);
			probe_value_text((ProbeFmt)fv->fmt, fd->b, &sb);
			cJSON_AddStringToObject(fj, "spliced", sb.p);
			if (fd->dist == PROBE_DIST_NAN)
				cJSON_AddStringToObject(fj, "distance", "nan");
			else
				cJSON_AddNumberToObject(fj, "distance", (double)fd->dist);
			if (fv->fmt == PF_F16X2 || fv->fmt == PF_BF16X2)
				cJSON_AddStringToObject(fj, "half",
				                        half ? "high" : "low");
		}
		cJSON *rj = cJSON_AddArrayToObject(root, "records");
		for (size_t i = 0; dumps && i < b->po.recs.n; i++) {
			cJSON *x = cJSON_CreateObject();
			sb_reset(&sb);
			probe_record_name(&b->po.recs.v[i], &sb);
			cJSON_AddStringToObject(x, "point", sb.p);
			if (b->po.recs.v[i].phase)
				cJSON_AddNumberToObject(x, "phase",
				                        b->po.recs.v[i].phase);
			cJSON_AddNumberToObject(x, "values", (double)diffs[i].values);
			cJSON_AddNumberToObject(x, "differ", (double)diffs[i].differ);
			cJSON_AddNumberToObject(x, "max_distance",
			                        (double)diffs[i].max_dist);
			cJSON_AddBoolToObject(x, "nan", diffs[i].any_nan);
			cJSON_AddItemToArray(rj, x);
		}
		if (spl_differs == 1) {
			sb_reset(&sb);
			sb_addc(&sb, '{');
			frame_diff_json(&lay, &d_spl, &sb);
			sb_addc(&sb, '}');
			cJSON *dj = cJSON_Parse(sb.p);
			if (dj)
				cJSON_AddItemToObject(root, "frame_diff", dj);
		}
		cJSON *t = cJSON_AddObjectToObject(root, "seconds");
		cJSON_AddNumberToObject(t, "prepare", b->t_prep);
		cJSON_AddNumberToObject(t, "jit_original", o->jit_seconds);
		cJSON_AddNumberToObject(t, "jit_spliced", s->jit_seconds);
		cJSON_AddBoolToObject(t, "side_by_side", !b->serial);
		cJSON_AddNumberToObject(t, "gpu_wall", gr.wall_seconds);
		cJSON_AddNumberToObject(t, "compare", t_compare);
		cJSON_AddNumberToObject(t, "total", total);
		cJSON_AddNumberToObject(t, "budget", budget);
		cJSON_AddStringToObject(root, "device",
		                        o->device[0] ? o->device : s->device);
		cmd_json_print(root, rc);
		root = NULL;
	} else {
		printf("%s bisect (%s): %s", layer, b->mode_text, verdict);
		if (fr) {
			sb_reset(&sb);
			probe_record_name(fr, &sb);
			printf(" at %s\n", sb.p);
		} else if (rc == EXIT_DIFFERS)
			printf(": no probe differs, the frame does\n");
		else if (rc == EXIT_OK)
			printf(" (no probe differs, spliced frame = %s)\n",
			       have_oracle ? "oracle" : "original's frame");
		else
			printf(" (%s)\n", why ? why : "?");
		for (size_t i = b->cuts.n; i-- > 0;) {
			const Cut *c = &b->cuts.v[i];
			printf("  cut       s%u-s%u", c->first, c->last);
			if (c->phase)
				printf(" (phase %u)", c->phase);
			printf(", recipe %s, template %s\n", c->recipe,
			       c->template_name ? c->template_name : "?");
		}
		char s1[32], s2[32];
		printf("  probes    %zu records (%s, %s registers), %u registers per "
		       "lane, %s per "
		       "warp x %llu warps = %s per module\n",
		       b->po.recs.n, at_text, regs_text, nvals,
		       bisect_size_text(b->po.warp_bytes, s1), (unsigned long long)warps,
		       bisect_size_text(dump_bytes, s2));
		if (b->dropped.n)
			printf("            %zu points inside a cut have no counterpart "
			       "in the spliced "
			       "module\n",
			       b->dropped.n);
		if (b->unprobed)
			printf("            %zu points left out: a probe cannot go there "
			       "(the first: %s)\n",
			       b->unprobed, b->unprobed_why.p);
		if (windowed) {
			sb_reset(&sb);
			bisect_plan_phases(&b->po, 0, b->po.recs.n, &sb);
			char s3[32], s4[32];
			printf("  window    phases %s only: the dump of all %zu records "
			       "would take %s, over "
			       "the limit of %s (%s); the rest: --window %s\n",
			       sb.p ? sb.p : "-", b->planned,
			       bisect_size_text(b->full_bytes, s3), bisect_size_text(b->limit, s4),
			       b->limit_why, b->left_out.p ? b->left_out.p : "-");
		}
		if (orig_differs == 0)
			printf("  original  instrumented frame = oracle (the probes do "
			       "not change what "
			       "they observe)\n");
		else if (orig_differs == 1) {
			sb_reset(&sb);
			frame_diff_describe(&lay, &d_orig, &sb);
			printf(
			    "  original  instrumented frame DIFFERS from the oracle\n");
			print_indented(sb.p);
		} else if (!have_oracle)
			printf("  original  no oracle (%s): compared with the original's "
			       "frame\n",
			       err_msg(&e));
		if (fr) {
			sb_reset(&sb);
			probe_record_name(fr, &sb);
			printf("  first     %s (after s%u, line %u; spliced s%u): block "
			       "(%u,%u,%u) warp %u "
			       "lane %u register %s (%s)\n",
			       sb.p, fr->at, func_stmt(b->lm.m, b->fo, fr->at)->line,
			       b->ps.recs.v[first].at, fb[0], fb[1], fb[2], fw, fd->lane,
			       fv->name, probe_fmt_name((ProbeFmt)fv->fmt));
			sb_reset(&sb);
			probe_value_text((ProbeFmt)fv->fmt, fd->a, &sb);
			printf("            original %s\n", sb.p);
			sb_reset(&sb);
			probe_value_text((ProbeFmt)fv->fmt, fd->b, &sb);
			printf("            spliced  %s\n", sb.p);
			sb_reset(&sb);
			dist_text((ProbeFmt)fv->fmt, fd->dist, &sb);
			printf("            distance %s%s\n", sb.p,
			       fv->fmt == PF_F16X2 || fv->fmt == PF_BF16X2
			           ? (half ? " (high half)" : " (low half)")
			           : "");
			if (first > 0) {
				sb_reset(&sb);
				bisect_plan_phases(&b->po, 0, (size_t)first, &sb);
				printf(
				    "  before    %lld record%s identical (phase%s %s)\n",
				    (long long)first, first == 1 ? "" : "s",
				    strpbrk(sb.n ? sb.p : "", ",-") ? "s" : "",
				    sb.n ? sb.p : "-");
			}
			printf("  spread    %-34s %10s %12s %12s\n", "record", "differ",
			       "of", "max distance");
			for (size_t i = (size_t)first; i < b->po.recs.n; i++) {
				sb_reset(&sb);
				probe_record_name(&b->po.recs.v[i], &sb);
				sb_reset(&sb2);
				const ProbeRecordDiff *d = &diffs[i];
				if (!d->differ)
					sb_adds(&sb2, "-");
				else if (d->max_dist == 0 && d->any_nan)
					sb_adds(&sb2, "nan");
				else {
					ProbeFmt f0 =
					    b->po.recs.v[i].vals.n
					        ? (ProbeFmt)b->po.recs.v[i].vals.v[0].fmt
					        : PF_HEX32;
					dist_text(f0, d->max_dist, &sb2);
					if (d->any_nan)
						sb_adds(&sb2, ", nan");
				}
				printf("            %-34s %10llu %12llu %12s\n", sb.p,
				       (unsigned long long)d->differ,
				       (unsigned long long)d->values, sb2.p);
			}
		} else if (dumps)
			printf("  probes    all %zu records identical\n", b->po.recs.n);
		if (spl_differs == 1) {
			sb_reset(&sb);
			frame_diff_describe(&lay, &d_spl, &sb);
			printf("  frame     spliced frame DIFFERS from the %s\n",
			       have_oracle ? "oracle" : "original's frame");
			print_indented(sb.p);
		} else if (spl_differs == 0)
			printf("  frame     spliced frame = %s (sha256 %.16s)\n",
			       have_oracle ? "oracle" : "original's frame", s->sha256);
		printf("  seconds   prepare %.2f, JIT %.2f original%s %s %.2f spliced%s "
		       "(%s), setup "
		       "%.2f, launches %.3f, read-back %.2f, compare %.2f, total %.2f "
		       "(longer JIT + 2 s "
		       "= %.2f: %s)\n",
		       b->t_prep, o->jit_seconds, o->jit_cached ? " cached" : "",
		       b->serial ? "+" : "||", s->jit_seconds,
		       s->jit_cached ? " cached" : "",
		       b->serial ? "one after the other" : "side by side",
		       o->setup_seconds > s->setup_seconds ? o->setup_seconds
		                                           : s->setup_seconds,
		       (o->run_ms + s->run_ms) / 1000.0,
		       o->read_seconds > s->read_seconds ? o->read_seconds
		                                         : s->read_seconds,
		       t_compare, total, budget, total <= budget ? "met" : "NOT met");
		const char *dev = o->device[0] ? o->device : s->device;
		if (*dev)
			printf("  device    %s (sm_%d%d, driver %d)\n", dev, o->cc_major,
			       o->cc_minor, o->driver_version);
		if (keep_dir)
			printf("  kept      %s/\n", keep_dir);
	}
	if (rc == EXIT_ERROR && why)
		fprintf(stderr, "d4r-splice: bisect: %s\n", why);
	goto done;
fail:
	cmd_fail("%s", err_msg(&e));
	rc = EXIT_ERROR;
done:
	if (b->mem_started)
		pthread_join(b->mem_thread, NULL);
	err_release(&b->mem_err);
	cJSON_Delete(root);
	free(diffs);
	frame_diff_release(&d_orig);
	frame_diff_release(&d_spl);
	frame_layout_release(&lay);
	free(oracle);
	free(oracle_path);
	free(keep_dir);
	sb_release(&sb);
	sb_release(&sb2);
	gpu_probe_result_release(&gr);
	probe_result_release(&b->ro);
	probe_result_release(&b->rs);
	probe_plan_release(&b->po);
	probe_plan_release(&b->ps);
	VEC_FREE(b->dropped);
	sb_release(&b->red_o);
	sb_release(&b->red_s);
	for (size_t i = 0; i < b->cuts.n; i++) {
		free(b->cuts.v[i].recipe);
		free(b->cuts.v[i].template_name);
	}
	VEC_FREE(b->cuts);
	free(b->mode_text);
	sb_release(&b->left_out);
	sb_release(&b->unprobed_why);
	if (b->ms)
		mod_free(b->ms);
	sb_release(&b->spliced);
	if (b->lm.m)
		cmd_unload_module(&b->lm);
	free(b->module_path);
	mf_release(&b->mf);
	err_release(&e);
free_opts:
	numlist_release(&b->phases);
	numlist_release(&b->window);
	return rc;
}
