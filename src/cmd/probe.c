/*
 * probe.c - `d4r-splice probe`: write a module instrumented with probes.
 *
 *   d4r-splice probe MODULE [--entry E] [--at phase-end|epilogue-end]
 *                    [--phases LIST] [--registers live-out|all] -o OUT.ptx
 *
 * One record per chosen phase of the entry, after the phase's last mma (or
 * its epilogue's last statement), holding the live-out registers of that
 * range (or every register it defines); the library does the work
 * (splice/probe.h).  The summary on stderr gives the dump's layout, which
 * is what a reader of the dump needs; --check=ptxas runs ptxas -e ENTRY on
 * the result.  Nothing here needs a GPU.
 */
#include "splice/probe.h"
#include "base/file.h"
#include "base/numlist.h"
#include "cmd.h"
#include "splice/ptxas.h"
#include "splice/splice.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {
    "probe MODULE [--entry NAME] [--at phase-end|epilogue-end] [--phases LIST] "
    "[--registers live-out|all] -o FILE",
    NULL,
};

/* The dump's layout as JSON: what a reader of the dump needs. */
static char *layout_json(const Module *m, const Func *f, const ProbePlan *p,
                         const ProbeResult *res)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "symbol", res->symbol);
	cJSON_AddStringToObject(root, "order", "warp record value lane");
	cJSON_AddNumberToObject(root, "bytes_per_warp", (double)p->warp_bytes);
	cJSON *recs = cJSON_AddArrayToObject(root, "records");
	StrBuf sb = STRBUF_INIT;
	for (size_t i = 0; i < p->recs.n; i++) {
		const ProbeRecord *r = &p->recs.v[i];
		cJSON *rj = cJSON_CreateObject();
		sb_reset(&sb);
		probe_record_name(r, &sb);
		cJSON_AddStringToObject(rj, "point", sb.p);
		if (r->phase)
			cJSON_AddNumberToObject(rj, "phase", r->phase);
		cJSON_AddNumberToObject(rj, r->before ? "before" : "after", r->at);
		cJSON_AddNumberToObject(rj, "line", func_stmt(m, f, r->at)->line);
		cJSON_AddBoolToObject(rj, "per_warp", r->per_warp);
		cJSON_AddNumberToObject(rj, "offset", (double)r->off);
		cJSON_AddNumberToObject(rj, "bytes", (double)r->bytes);
		cJSON *vj = cJSON_AddArrayToObject(rj, "values");
		for (size_t k = 0; k < r->vals.n; k++) {
			const ProbeValue *v = &r->vals.v[k];
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "register", v->name);
			cJSON_AddStringToObject(x, "type",
			                        probe_fmt_name((ProbeFmt)v->fmt));
			cJSON_AddNumberToObject(x, "offset", v->off);
			cJSON_AddNumberToObject(
			    x, "slot", probe_fmt_bits((ProbeFmt)v->fmt) == 64 ? 8 : 4);
			cJSON_AddItemToArray(vj, x);
		}
		cJSON_AddItemToArray(recs, rj);
	}
	sb_release(&sb);
	char *txt = cJSON_Print(root);
	cJSON_Delete(root);
	return txt;
}

int cmd_probe(int argc, char **argv)
{
	const char *entry = NULL, *out = NULL, *at = "phase-end", *regs = "live-out";
	const char *check = "none", *layout = NULL;
	NumList phases = {0};
	bool quiet = false, json = false, keep_rejected = false, no_cache = false;
	OptArch arch_o = {0};
	const Opt opts[] = {
	    OPT_STRING(0, "entry", &entry, "NAME",
	               "the function (default: the only one with mma)"),
	    OPT_CHOICE(0, "at", &at, "phase-end|epilogue-end",
	               "after each phase's last mma (default) or its epilogue"),
	    OPT_CALLBACK(0, "phases", &phases, "LIST", opt_phase_list,
	                 "the phases to probe, as 1-10,13,21-60 (default: all)"),
	    OPT_CHOICE(0, "registers", &regs, "live-out|all",
	               "the range's live-out registers (default) or all it defines"),
	    OPT_STRING('o', "output", &out, "FILE|-", "the instrumented module"),
	    OPT_STRING(0, "layout", &layout, "FILE.json",
	               "write the dump's layout as JSON"),
	    OPT_CHOICE_OPTARG("check", &check, "ptxas|none", "ptxas",
	                      "run ptxas -e ENTRY on the result"),
	    OPT_CALLBACK(0, "arch", &arch_o, "sm_XX", opt_arch,
	                 "with --check=ptxas: the target (default .target)"),
	    OPT_FLAG(0, "keep-rejected", &keep_rejected,
	             "with --check=ptxas: write a module ptxas rejects to -o all the same "
	             "(default: beside it, as NAME.rejected.ptx)"),
	    OPT_FLAG(0, "no-cache", &no_cache,
	             "with --check=ptxas: run ptxas, not its cached answer"),
	    OPT_FLAG('q', "quiet", &quiet, "no summary on standard error"),
	    OPT_FLAG(0, "json", &json, "the summary as one JSON object (not with -o -)"),
	    OPT_END(),
	};
	OptParse op = {.verb = "probe", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0) {
		numlist_release(&phases);
		return op.status;
	}
	int rc = opt_args(&op, nargs, argv, 1, 1, "no module given");
	if (!rc && !out)
		rc = opt_usage_error(
		    &op, "no output given (-o FILE, or -o - for standard output)");
	if (!rc && json && !strcmp(out, "-"))
		rc = opt_fail(&op,
		              "option '--json' cannot be used with '%s -': one "
		              "document on standard output",
		              opt_given(&op, "output"));
	if (!rc && opt_given(&op, "arch") && strcmp(check, "ptxas"))
		rc = opt_fail(&op, "option '%s' needs '--check=ptxas'",
		              opt_given(&op, "arch"));
	if (!rc && keep_rejected && strcmp(check, "ptxas"))
		rc = opt_fail(&op, "option '%s' needs '--check=ptxas'",
		              opt_given(&op, "keep-rejected"));
	if (!rc && no_cache && strcmp(check, "ptxas"))
		rc = opt_fail(&op, "option '%s' needs '--check=ptxas'",
		              opt_given(&op, "no-cache"));
	if (rc) {
		numlist_release(&phases);
		return rc;
	}

	Err e = ERR_INIT;
	LoadedModule lm = {0};
	Dataflow *df = NULL;
	PhaseList pl = {0};
	ProbePlan plan = {0};
	ProbeResult res = {0};
	StrBuf log = STRBUF_INIT, sel = STRBUF_INIT;
	char *written = NULL;
	PtxasCache pc = {.no_cache = no_cache};
	rc = EXIT_ERROR;
	/* the outputs, checked before any work: never the module it reads */
	file_input_add(argv[0], "module");
	if (out_check(out, &e) < 0 || (layout && out_check(layout, &e) < 0))
		goto fail;
	if (cmd_load_module(argv[0], &lm) < 0)
		goto done;
	const Func *f = cmd_pick_func(lm.m, entry);
	if (!f)
		goto done;
	Str fname = mod_str(lm.m, f->name);
	ana_phase_find(lm.m, f, 0, &pl);
	if (!pl.n) {
		cmd_fail("probe: '%.*s' has no mma phase", (int)fname.n, fname.p);
		goto done;
	}
	for (size_t i = 0; i < phases.n; i++)
		if (phases.v[i] > pl.n) {
			char *who = xstrndup(fname.p, fname.n);
			ana_phase_missing("probe: --phases", phases.v[i], who, pl.n, &e);
			free(who);
			cmd_fail("%s", err_msg(&e));
			goto done;
		}
	df = df_build(lm.m, f, &e);
	if (!df)
		goto fail;
	ProbeAt where =
	    !strcmp(at, "epilogue-end") ? PROBE_AT_EPILOGUE_END : PROBE_AT_PHASE_END;
	ProbeRegs which = !strcmp(regs, "all") ? PROBE_REGS_ALL : PROBE_REGS_LIVE_OUT;
	if (probe_plan_phases(df, &pl, phases.n ? &phases : NULL, where, which, &plan,
	                      &e) < 0)
		goto fail;
	probe_plan_sort(&plan);
	if (probe_plan_layout(&plan, &e) < 0)
		goto fail;
	ProbeRequest req = {lm.m, f, &plan, NULL};
	if (probe_instrument(&req, &res, &e) < 0)
		goto fail;
	if (!quiet) {
		if (phases.n)
			numlist_format(&phases, &sel);
		fprintf(
		    stderr,
		    "probe:     %zu records (%s, phases %s of %zu), %u values (%s), %llu "
		    "bytes per warp\n",
		    plan.recs.n, at, phases.n ? sel.p : "all", pl.n, res.nvalues, regs,
		    (unsigned long long)plan.warp_bytes);
		if (plan.skipped)
			fprintf(stderr,
			        "skipped:   %u registers: vectors (a probe stores "
			        "scalars), or "
			        "of a { } scope that has closed at the record\n",
			        plan.skipped);
		fprintf(stderr,
		        "dump:      symbol %s (.u64, the dump's address), layout "
		        "[warp][record][value][lane], registers %s*\n",
		        res.symbol, res.prefix);
	}
	int ptxas_rc = 0;
	char arch[64] = "";
	if (!strcmp(check, "ptxas")) {
		if (opt_given(&op, "arch"))
			snprintf(arch, sizeof arch, "%s", arch_o.name);
		else if (splice_module_arch(lm.m, arch, sizeof arch) < 0) {
			err_set(
			    &e,
			    "%s: no .target to take the architecture from: give --arch",
			    argv[0]);
			goto fail;
		}
		char *ename = xstrndup(fname.p, fname.n);
		ptxas_rc = splice_ptxas(res.text.p, res.text.n, arch, ename, NULL,
		                        "instrumented", &pc, &log, &e);
		free(ename);
		if (ptxas_rc < 0)
			goto fail;
		if (!quiet || ptxas_rc)
			fprintf(stderr, "ptxas:     -arch=%s -e %.*s: %s%s\n", arch,
			        (int)fname.n, fname.p, ptxas_rc ? "REJECTED" : "ok",
			        cmd_ptxas_cached(&pc));
		if (log.n)
			fprintf(stderr, "%s", log.p);
	}
	if (layout) {
		char *txt = layout_json(lm.m, f, &plan, &res);
		int lrc = write_file_atomic(layout, txt, strlen(txt), &e);
		free(txt);
		if (lrc < 0)
			goto fail;
	}
	if (cmd_write_module(out, res.text.p, res.text.n, ptxas_rc != 0, keep_rejected, quiet,
	                     &written, &e) < 0)
		goto fail;
	rc = ptxas_rc ? cmd_fail_rejected("probe", "instrumented", out, written, keep_rejected)
	              : EXIT_OK;
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "module", map_name(argv[0]));
		cmd_json_strn(o, "entry", fname.p, fname.n);
		cJSON_AddStringToObject(o, "at", at);
		cJSON_AddStringToObject(o, "registers", regs);
		cJSON *ph = cJSON_AddArrayToObject(o, "phases");
		for (size_t i = 0; i < pl.n; i++) {
			bool sel_i = !phases.n;
			for (size_t k = 0; k < phases.n && !sel_i; k++)
				sel_i = phases.v[k] == i + 1;
			if (sel_i)
				cJSON_AddItemToArray(ph,
				                     cJSON_CreateNumber((double)(i + 1)));
		}
		cJSON_AddNumberToObject(o, "records", (double)plan.recs.n);
		cJSON_AddNumberToObject(o, "values", res.nvalues);
		cJSON_AddNumberToObject(o, "bytes_per_warp", (double)plan.warp_bytes);
		cJSON_AddNumberToObject(o, "skipped_registers", plan.skipped);
		cJSON_AddStringToObject(o, "symbol", res.symbol);
		cJSON_AddStringToObject(o, "register_prefix", res.prefix);
		cJSON_AddStringToObject(o, "output", out);
		cmd_json_str_or_null(o, "rejected", ptxas_rc ? written : NULL);
		cJSON_AddNumberToObject(o, "bytes", (double)res.text.n);
		cmd_json_str_or_null(o, "layout", layout);
		cmd_json_ptxas(o, arch[0] != 0, arch, ptxas_rc == 0, &log, &pc);
		cmd_json_print(o, rc);
	}
	goto done;
fail:
	cmd_fail("%s", err_msg(&e));
	rc = EXIT_ERROR;
done:
	probe_result_release(&res);
	probe_plan_release(&plan);
	phases_release(&pl);
	if (df)
		df_free(df);
	if (lm.m)
		cmd_unload_module(&lm);
	numlist_release(&phases);
	sb_release(&log);
	sb_release(&sel);
	free(written);
	err_release(&e);
	return rc;
}
