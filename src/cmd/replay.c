/*
 * replay.c - `d4r-splice replay`: one cut of a layer run alone, from the
 * state the original kernel had at the cut's start (src/replay/ does the
 * work; replay.h has the design).
 *
 *   d4r-splice replay LAYER --phase N [--recipe FILE | --variant NAME]
 *                     [--no-cache] [--timeout S] [--json]
 *   d4r-splice replay LAYER --phase N ... --plan [--json]
 *   d4r-splice replay LAYER --phase N ... --emit FILE [--dump-module FILE]
 *                     [--check=ptxas] [--json]
 *
 * The run: the state (cached beside the image cache, or dumped now), the
 * replay module's two entries, the proof (the original's entry reproduces
 * the dumped end state) and the verdict; exit 0 identical, 1 differs, 2
 * error, refused or invalid.  --frame: after a DIFFERS (the phase's
 * contract, stricter than the frame), the whole-module check of the recipe
 * as `check LAYER RECIPE` runs it (cmd_check itself, not a copy of it),
 * whose verdict is then the exit status, and a line saying whether the
 * frame differs too.  --plan prints the state plan (exit 1 when it
 * refuses the cut); --emit writes the replay module.  Neither needs a GPU.
 */
#include "replay/replay.h"

#include "base/file.h"
#include "base/layout.h"
#include "cmd.h"
#include "gpu/driver.h"
#include "gpu/layer.h"
#include "jsonout.h"
#include "options.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {
    "replay LAYER --phase N [--recipe FILE | --variant NAME] [--no-cache] "
    "[--timeout S] [--frame | --json]",
    "replay LAYER --phase N [--recipe FILE | --variant NAME] --plan [--json]",
    "replay LAYER --phase N [--recipe FILE | --variant NAME] --emit FILE "
    "[--dump-module FILE] [--check=ptxas] [--json]",
    NULL,
};

/* The replay on the GPU: the state (cached, or dumped now), both entries,
 * the proof and the verdict.  Returns the exit status, or -1 with e set. */
static int run_replay(const Manifest *mf, bool frame, ReplayCut *cut,
                      const ReplayPlan *plan, const Module *mo, bool no_cache,
                      double timeout, bool json, Err *e)
{
	double t0 = now_seconds();
	if (plan->nrefused)
		return err_set(
		    e,
		    "replay refuses the cut s%u-s%u (no verdict; the whole-module "
		    "check decides):\n%s",
		    plan->first, plan->last, plan->refused.p);
	ProbePlan dp = {0};
	StrBuf dump = STRBUF_INIT, red = STRBUF_INIT, mod = STRBUF_INIT, sf = STRBUF_INIT,
	       o = STRBUF_INIT, dt = STRBUF_INIT;
	ReplayState cached;
	memset(&cached, 0, sizeof cached);
	ReplayRun run;
	memset(&run, 0, sizeof run);
	char key[65] = "", *dir = NULL, *path = NULL;
	int rc = -1;
	size_t k = 0;
	for (size_t i = 0; i < mf->nlaunches; i++)
		if (!strcmp(mf->launches[i].entry, mf->entry))
			k = i;
	if (replay_dump_plan(plan, mo, cut->req.fo, &dp, e) < 0 ||
	    replay_module(plan, &dp, &cut->req, &mod, e) < 0 ||
	    replay_dump_module(&dp, mo, cut->req.fo, &dump, e) < 0 ||
	    gpu_reduce_text(mf, "dump", dump.p, dump.n, &red, NULL, NULL, e) < 0 ||
	    replay_state_key(red.p, red.n, mf, key, e) < 0)
		goto out;
	bool have = false;
	if (!no_cache && (dir = user_cache_dir())) {
		size_t n = strlen(dir) + 96;
		path = xmalloc(n);
		snprintf(path, n, "%s/replay/%s.state", dir, key);
		char *data;
		size_t len;
		Err ce = ERR_INIT;
		if (access(path, R_OK) == 0 && read_file(path, &data, &len, &ce) == 0) {
			have = replay_state_read((unsigned char *)data, len, plan, mf,
			                         &dp, &cached, &ce) == 0;
			free(data);
		}
		err_release(&ce);
	}
	ReplayJob job = {mf,
	                 k,
	                 plan,
	                 &dp,
	                 have ? NULL : red.p,
	                 red.n,
	                 have ? &cached : NULL,
	                 mod.p,
	                 mod.n,
	                 timeout,
	                 no_cache,
	                 NULL,
	                 0};
	if (replay_run(&job, &run, e) < 0)
		goto out;
	if (run.status != GPU_OK) {
		err_set(e, "replay: %s: %s", gpu_status_name(run.status),
		        run.message ? run.message : "");
		goto out;
	}
	const ReplayState *st = have ? &cached : &run.state;
	if (run.dumped && path) {
		char *sub = xmalloc(strlen(dir) + 16);
		sprintf(sub, "%s/replay", dir);
		Err ce = ERR_INIT;
		replay_state_write(&run.state, &sf);
		if (mkdir_p(sub, &ce) < 0 || write_file_atomic(path, sf.p, sf.n, &ce) < 0)
			fprintf(stderr,
			        "d4r-splice: replay: the state is not cached: %s\n",
			        err_msg(&ce));
		err_release(&ce);
		free(sub);
	}
	ReplayDiff proof, verdict;
	memset(&verdict, 0, sizeof verdict);
	replay_prove(plan, &dp, mf, st, &run.end[0], &proof);
	if (!proof.any)
		replay_compare(plan, &dp, mf, &run.end[0], &run.end[1], &verdict);
	double wall = now_seconds() - t0;
	const char *v = proof.any ? "INVALID" : verdict.any ? "DIFFERS" : "IDENTICAL";
	rc = proof.any ? EXIT_ERROR : verdict.any ? EXIT_DIFFERS : EXIT_OK;
	if (proof.any)
		replay_diff_text(&proof, &dt);
	else if (verdict.any)
		replay_diff_text(&verdict, &dt);
	if (!json) {
		sb_addf(&o, "replay:    %s s%u-s%u (lines %u-%u), template %s\n",
		        mf->layer, plan->first, plan->last, plan->first_line,
		        plan->last_line, cut->template_name);
		sb_addf(&o, "state:     %s (%llu register bytes, %llu shared bytes",
		        have ? "cached" : "dumped", (unsigned long long)st->regs_len,
		        (unsigned long long)st->shared_len);
		if (st->span_len)
			sb_addf(&o, ", %llu written global bytes",
			        (unsigned long long)st->span_len);
		if (plan->arrays_in.n)
			sb_addf(&o, ", %zu arrays", plan->arrays_in.n);
		sb_addc(&o, ')');
		if (run.dumped)
			sb_addf(&o, ", dump JIT %.2f s%s, run %.3f ms", run.dump_jit_s,
			        run.dump_jit_cached ? " (cached)" : "", run.dump_run_ms);
		sb_addf(&o,
		        "\nrun:       JIT %.2f s%s, original %.3f ms, spliced %.3f ms on "
		        "%s\n",
		        run.replay_jit_s, run.replay_jit_cached ? " (cached)" : "",
		        run.end[0].ms, run.end[1].ms, run.device);
		if (proof.any)
			sb_addf(&o,
			        "proof:     the original's entry does not reproduce the "
			        "dumped end "
			        "state: %s\n  (state the dump does not hold, or a cut "
			        "that is not "
			        "deterministic: no verdict)\n",
			        dt.p);
		else
			sb_adds(&o, "proof:     replay reproduces the original phase "
			            "(end state bit for "
			            "bit)\n");
		sb_addf(&o, "verdict:   %s", v);
		if (verdict.any)
			sb_addf(&o, ": first difference at %s", dt.p);
		if (verdict.any)
			sb_addf(
			    &o,
			    "\ncontract:  the phase's end state, bit for bit: stricter "
			    "than the frame (a difference a later epilogue rounds away "
			    "is DIFFERS here; the main job decides for the frame)\n"
			    "frame:     %s",
			    frame ? "the whole-module check of the recipe follows"
			          : "not checked (--frame runs the whole-module check of "
			            "the recipe)");
		sb_addf(&o, "\nwall:      %.2f s\n", wall);
		fputs(o.p, stdout);
	} else {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "layer", mf->layer);
		cJSON_AddStringToObject(j, "verdict", v);
		cJSON_AddItemToObject(j, "cut", cmd_json_range(plan->first, plan->last));
		cJSON_AddStringToObject(j, "template", cut->template_name);
		cJSON_AddStringToObject(j, "state", have ? "cached" : "dumped");
		cJSON_AddBoolToObject(j, "proved", !proof.any);
		if (proof.any || verdict.any) {
			const ReplayDiff *d = proof.any ? &proof : &verdict;
			cJSON_AddItemToObject(j, "first_difference", replay_diff_json(d));
		}
		cJSON_AddStringToObject(j, "device", run.device);
		cJSON_AddNumberToObject(j, "jit_seconds", run.replay_jit_s);
		cJSON_AddNumberToObject(j, "original_ms", run.end[0].ms);
		cJSON_AddNumberToObject(j, "spliced_ms", run.end[1].ms);
		cJSON_AddNumberToObject(j, "seconds", wall);
		cmd_json_print(j, rc);
	}
out:
	replay_run_release(&run, plan);
	replay_state_release(&cached);
	probe_plan_release(&dp);
	sb_release(&dump);
	sb_release(&red);
	sb_release(&mod);
	sb_release(&sf);
	sb_release(&o);
	sb_release(&dt);
	free(dir);
	free(path);
	return rc;
}

/*
 * --frame after a DIFFERS: the whole-module check of the recipe, check's
 * own (its lines follow replay's), then whether the frame differs too.
 * Returns check's exit status: the frame's verdict.
 */
static int frame_check(const char *layer, const char *rpath, const char *corpus,
                       bool no_cache, double timeout)
{
	char secs[32];
	snprintf(secs, sizeof secs, "%g", timeout);
	char *av[10];
	int n = 0;
	av[n++] = (char *)"check";
	av[n++] = (char *)layer;
	av[n++] = (char *)rpath;
	av[n++] = (char *)"--timeout";
	av[n++] = secs;
	if (corpus) {
		av[n++] = (char *)"--corpus";
		av[n++] = (char *)corpus;
	}
	if (no_cache)
		av[n++] = (char *)"--no-cache";
	av[n] = NULL;
	fflush(stdout);
	int rc = cmd_check(n, av);
	fflush(stdout);
	if (rc == EXIT_OK)
		printf("frame:     IDENTICAL, replay DIFFERS: the phase contract is "
		       "stricter "
		       "than the frame\n");
	else if (rc == EXIT_DIFFERS)
		printf("frame:     DIFFERS, as replay does\n");
	else
		printf("frame:     no verdict (the whole-module check failed)\n");
	return rc;
}

int cmd_replay(int argc, char **argv)
{
	unsigned phase = 0;
	const char *recipe = NULL, *variant = NULL, *corpus = NULL, *emit = NULL;
	const char *dump_out = NULL;
	const char *check = "none";
	bool plan_only = false, json = false, no_cache = false, frame = false;
	double timeout = 120;
	OptArch arch_o = {0};
	const Opt opts[] = {
	    OPT_PHASE(&phase, "the cut of phase N (its recipe, by default)"),
	    OPT_STRING(0, "recipe", &recipe, "FILE", "the recipe (default: the phase's)"),
	    OPT_STRING(0, "variant", &variant, "NAME",
	               "the phase's recipe of a variant (phase-NN-NAME.json)"),
	    OPT_STRING(0, "corpus", &corpus, "DIR", "the corpus folder"),
	    OPT_FLAG(0, "plan", &plan_only, "print the state plan and stop"),
	    OPT_STRING(0, "emit", &emit, "FILE|-", "write the replay module"),
	    OPT_STRING(0, "dump-module", &dump_out, "FILE",
	               "with --emit: also write the instrumented original that takes the "
	               "state"),
	    OPT_CHOICE_OPTARG("check", &check, "ptxas|none", "ptxas",
	                      "with --emit: run ptxas on the replay module"),
	    OPT_CALLBACK(0, "arch", &arch_o, "sm_XX", opt_arch,
	                 "with --check=ptxas: the target (default .target)"),
	    OPT_FLAG(0, "no-cache", &no_cache,
	             "take the state again and compile without the image cache"),
	    OPT_CALLBACK(0, "timeout", &timeout, "S", opt_seconds,
	                 "limit for the replay's launches (default 120)"),
	    OPT_FLAG(0, "frame", &frame,
	             "after a DIFFERS, the whole-module check of the recipe: the frame "
	             "decides"),
	    OPT_FLAG(0, "json", &json, "one JSON object on standard output"),
	    OPT_END(),
	};
	OptParse op = {.verb = "replay", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	int rc = opt_args(&op, nargs, argv, 1, 1, "no layer given");
	if (!rc && !phase && !recipe)
		rc = opt_usage_error(&op, "no cut given (--phase N or --recipe FILE)");
	if (!rc)
		rc = opt_conflict(&op, "recipe", "variant");
	if (!rc)
		rc = opt_conflict(&op, "plan", "emit");
	if (!rc && (plan_only || emit))
		rc = opt_conflicts(&op, plan_only ? "plan" : "emit", "no-cache",
		                   "timeout", "frame", NULL);
	if (!rc)
		rc = opt_conflict(&op, "frame", "json");
	if (!rc)
		rc = opt_needs(&op, "check", "emit");
	if (!rc)
		rc = opt_needs(&op, "dump-module", "emit");
	if (!rc && opt_given(&op, "arch") && strcmp(check, "ptxas"))
		rc = opt_fail(&op, "option '%s' needs '--check=ptxas'",
		              opt_given(&op, "arch"));
	if (!rc && json && emit && !strcmp(emit, "-"))
		rc = opt_fail(&op,
		              "option '--json' cannot be used with '%s -': one "
		              "document on standard output",
		              opt_given(&op, "emit"));
	if (!rc)
		rc = cmd_check_variant(variant);
	if (rc)
		return rc;
	if (json)
		cmd_json_start();

	Err e = ERR_INIT;
	Manifest mf = {0};
	char *module_path = NULL, *rpath = NULL;
	LoadedModule lm = {0};
	Recipe rcp;
	memset(&rcp, 0, sizeof rcp);
	bool have_rcp = false;
	ReplayCut cut;
	memset(&cut, 0, sizeof cut);
	ReplayPlan plan;
	memset(&plan, 0, sizeof plan);
	ProbePlan dp = {0};
	StrBuf text = STRBUF_INIT, mod = STRBUF_INIT, log = STRBUF_INIT;
	char arch[64] = "";
	int ptxas_rc = -1;
	PtxasCache pc = {.no_cache = no_cache};
	rc = EXIT_ERROR;

	if (mf_load_layer(argv[0], corpus, &mf, &e) < 0 ||
	    mf_corpus_path(&mf, mf.module, &module_path, &e) < 0)
		goto fail;
	if (recipe)
		rpath = xstrdup(recipe);
	else {
		char *dir = layout_dir_of(mf.path);
		rpath = layout_recipe_variant(dir, phase, variant);
		free(dir);
		if (access(rpath, F_OK) != 0) {
			err_set(
			    &e,
			    "layer '%s' has no recipe for phase %u: '%s' does not exist",
			    argv[0], phase, rpath);
			goto fail;
		}
	}
	if (rcp_load(rpath, &rcp, &e) < 0)
		goto fail;
	have_rcp = true;
	cmd_recipe_inputs(&rcp, NULL);
	if (phase && (rcp.cut != CUT_PHASE || rcp.phase != phase)) {
		err_set(&e, "%s: the recipe cuts %s, not phase %u", rpath,
		        rcp.cut == CUT_PHASE ? "another phase" : "a statement range",
		        phase);
		goto fail;
	}
	if (cmd_load_module(module_path, &lm) < 0)
		goto done;
	if (replay_prepare(&mf, lm.m, &rcp, NULL, &cut, &e) < 0 ||
	    replay_plan(&cut.req, &plan, &e) < 0)
		goto fail;

	if (emit) {
		if (plan.nrefused) {
			err_set(&e, "replay refuses the cut s%u-s%u:\n%s", plan.first,
			        plan.last, plan.refused.p);
			goto fail;
		}
		if (replay_dump_plan(&plan, lm.m, cut.req.fo, &dp, &e) < 0 ||
		    replay_module(&plan, &dp, &cut.req, &mod, &e) < 0)
			goto fail;
		if (dump_out) {
			StrBuf dm = STRBUF_INIT;
			int drc = replay_dump_module(&dp, lm.m, cut.req.fo, &dm, &e);
			if (!drc)
				drc = write_file_atomic(dump_out, dm.p, dm.n, &e);
			sb_release(&dm);
			if (drc < 0)
				goto fail;
		}
		if (!strcmp(check, "ptxas")) {
			if (opt_given(&op, "arch"))
				snprintf(arch, sizeof arch, "%s", arch_o.name);
			else if (splice_module_arch(lm.m, arch, sizeof arch) < 0) {
				err_set(
				    &e,
				    "%s: no .target to take the architecture from: give "
				    "--arch",
				    module_path);
				goto fail;
			}
			ptxas_rc = splice_ptxas(mod.p, mod.n, arch, NULL, NULL, "replay",
			                        &pc, &log, &e);
			if (ptxas_rc < 0)
				goto fail;
			if (!json)
				fprintf(stderr, "ptxas:     -arch=%s: %s%s\n", arch,
				        ptxas_rc ? "REJECTED" : "ok",
				        cmd_ptxas_cached(&pc));
			if (log.n && !json)
				fprintf(stderr, "%s", log.p);
		}
		if (write_file_atomic(emit, mod.p, mod.n, &e) < 0)
			goto fail;
		if (!json && strcmp(emit, "-"))
			fprintf(stderr, "wrote:     %s (%zu bytes; entries %s, %s)\n",
			        emit, mod.n, REPLAY_ENTRY_ORIGINAL, REPLAY_ENTRY_SPLICED);
		rc = ptxas_rc > 0 ? EXIT_ERROR : EXIT_OK;
		if (ptxas_rc > 0)
			cmd_fail("replay: ptxas rejects the replay module (written for "
			         "inspection)");
	} else if (!plan_only) {
		rc = run_replay(&mf, frame, &cut, &plan, lm.m, no_cache, timeout, json,
		                &e);
		if (rc < 0)
			goto fail;
		if (frame && rc == EXIT_DIFFERS)
			rc = frame_check(argv[0], rpath, corpus, no_cache, timeout);
		goto done;
	} else {
		rc = plan.nrefused ? EXIT_DIFFERS : EXIT_OK;
		if (!json) {
			sb_addf(&text, "layer:     %s, %s\nrecipe:    %s (template %s)\n",
			        mf.layer, map_name(module_path), rpath,
			        cut.template_name);
			replay_plan_text(&plan, &mf, &text);
			fputs(text.p, stdout);
		}
	}
	if (json) {
		cJSON *o = replay_plan_json(&plan, &mf);
		cJSON_AddStringToObject(o, "layer", mf.layer);
		cJSON_AddStringToObject(o, "recipe", rpath);
		cJSON_AddStringToObject(o, "template", cut.template_name);
		if (emit) {
			cJSON_AddStringToObject(o, "output", emit);
			cJSON_AddNumberToObject(o, "bytes", (double)mod.n);
			cmd_json_ptxas(o, ptxas_rc >= 0, arch, ptxas_rc == 0, &log, &pc);
		}
		cmd_json_print(o, rc);
	}
	goto done;
fail:
	cmd_fail("%s", err_msg(&e));
	rc = EXIT_ERROR;
done:
	probe_plan_release(&dp);
	replay_plan_release(&plan);
	replay_cut_release(&cut);
	if (have_rcp)
		rcp_release(&rcp);
	if (lm.m)
		cmd_unload_module(&lm);
	mf_release(&mf);
	free(module_path);
	free(rpath);
	sb_release(&text);
	sb_release(&mod);
	sb_release(&log);
	err_release(&e);
	return rc;
}
