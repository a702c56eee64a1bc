/*
 * replay.c - `d4r-splice replay`: one cut of a layer run alone, from the
 * state the original kernel had at the cut's start (src/replay/ does the
 * work; replay.h has the design).
 *
 *   d4r-splice replay LAYER --phase N [--recipe FILE | --variant NAME]
 *                     (--plan | --emit FILE) [--check=ptxas] [--json]
 *
 * --plan prints the state plan: the registers every thread carries into
 * and out of the cut and how each survives another process, the blocks'
 * shared memory, the global buffers taken and compared, and what the cut
 * holds that replay refuses.  --emit writes the replay module (its two
 * entries) and with --check=ptxas runs ptxas on it.  Nothing here needs a
 * GPU.  Exit status: 0, 1 when the plan refuses the cut, 2 on errors.
 */
#include "replay/replay.h"

#include "base/file.h"
#include "base/layout.h"
#include "cmd.h"
#include "jsonout.h"
#include "options.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {
    "replay LAYER --phase N [--recipe FILE | --variant NAME] --plan [--json]",
    "replay LAYER --phase N [--recipe FILE | --variant NAME] --emit FILE "
    "[--dump-module FILE] [--check=ptxas] [--json]",
    NULL,
};

int cmd_replay(int argc, char **argv)
{
	unsigned phase = 0;
	const char *recipe = NULL, *variant = NULL, *corpus = NULL, *emit = NULL;
	const char *dump_out = NULL;
	const char *check = "none";
	bool plan_only = false, json = false;
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
	if (!rc && !plan_only && !emit)
		rc =
		    opt_usage_error(&op, "nothing to do: give --plan or --emit FILE (the "
		                         "run on the GPU is not part of this build)");
	if (!rc)
		rc = opt_conflict(&op, "plan", "emit");
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
			                        &log, &e);
			if (ptxas_rc < 0)
				goto fail;
			if (!json)
				fprintf(stderr, "ptxas:     -arch=%s: %s\n", arch,
				        ptxas_rc ? "REJECTED" : "ok");
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
			cmd_json_ptxas(o, ptxas_rc >= 0, arch, ptxas_rc == 0, &log);
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
