/*
 * profile_variants.c - `d4r-splice profile LAYER --phases LIST --variant
 * A,B,...`: the variants of each phase ranked.
 *
 * Each variant's spliced module is profiled as one variant is (profile.c's
 * profile_body: the original and the spliced module, plain and probed, in
 * one run), one variant after the other; per phase, the variants are then
 * ranked by the median cycles of the phase and its epilogue over the
 * original's of the same run.  The ranking (--json) is what `recipe best`
 * (splice/best.h) reads to write the layer of the fastest proven variant.
 *
 * Decisions:
 *  - Each variant against the original of its own run, not the cycles of
 *    different runs against one another: a run's clocks and the probes'
 *    effect on the compile are its own.
 *  - A phase and its epilogue together: the code from one phase's start to
 *    the next's, where a splice may move work between the two (the f16
 *    forms leave most epilogues at the clock's 8 cycles).
 *  - The cycles are of the probed kernels, said with the CHANGED lines of
 *    each variant: the probes change the compile, and a ranking can only be
 *    trusted as far as the same probes change every variant alike.
 */
#include "profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void variant_run_release(VariantRun *v)
{
	free(v->source);
	free(v->message);
	free(v->phase);
	free(v->orig);
	free(v->spl);
}

/* Candidate k of phase i: its cycles over its own run's original's. */
static double variant_ratio(const VariantRun *v, size_t i)
{
	return v->orig[i] > 0 && v->spl[i] >= 0 ? v->spl[i] / v->orig[i] : -1;
}

/* The variants of phase i, fastest first (unread last). */
static void rank_phase(const VariantRun *runs, size_t nruns, size_t i, size_t *order)
{
	for (size_t k = 0; k < nruns; k++)
		order[k] = k;
	for (size_t a = 1; a < nruns; a++)
		for (size_t b = a; b > 0; b--) {
			double x = variant_ratio(&runs[order[b - 1]], i),
			       y = variant_ratio(&runs[order[b]], i);
			if (!((x < 0 && y >= 0) || (y >= 0 && y < x)))
				break;
			size_t t = order[b];
			order[b] = order[b - 1];
			order[b - 1] = t;
		}
}

/*
 * `--variant A,B,...`: the profile of each variant's spliced module in turn
 * (each against the original, in its own run), then per phase the variants
 * ranked by the cycles of the phase and its epilogue over the original's of
 * the same run.  The ranking (--json) is what `recipe best` reads.
 */
int profile_variants(Prof *base, OptParse *op)
{
	if (base->keep || base->chart || base->module_opt || base->recipe_opt || base->sass)
		return opt_usage_error(op, "a list of variants takes neither '--keep', '--chart', "
		                           "'--module', '--recipe' nor '--sass': profile one variant "
		                           "for those");
	char *list = xstrdup(base->variant);
	VariantRun *runs = xcalloc(strlen(list) + 1, sizeof *runs);
	size_t nruns = 0;
	int rc = EXIT_OK;
	char *save = NULL;
	for (char *v = strtok_r(list, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
		if (cmd_check_variant(v)) {
			rc = EXIT_ERROR;
			break;
		}
		Prof q = *base;
		q.variant = v;
		VariantRun *vr = &runs[nruns++];
		vr->variant = v;
		if ((rc = profile_body(&q, vr)) != EXIT_OK)
			break;
	}
	const char *layer = base->layer;
	StrBuf sb = STRBUF_INIT;
	if (rc != EXIT_OK) {
		if (base->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "layer", layer);
			cJSON_AddStringToObject(o, "status", "error");
			sb_addf(&sb, "variant %s: %s", nruns ? runs[nruns - 1].variant : "?",
			        nruns && runs[nruns - 1].message ? runs[nruns - 1].message
			                                         : "not a variant name");
			cJSON_AddStringToObject(o, "message", sb.p);
			cmd_json_print(o, EXIT_ERROR);
		}
		goto out;
	}
	size_t n = runs[0].n, *order = xcalloc(nruns, sizeof *order);
	unsigned *wins = xcalloc(nruns, sizeof *wins);
	for (size_t i = 0; i < n; i++) {
		rank_phase(runs, nruns, i, order);
		if (variant_ratio(&runs[order[0]], i) >= 0)
			wins[order[0]]++;
	}
	const char *what = base->phases_opt ? base->phases_opt : "";
	char one[16];
	if (!base->phases_opt) {
		snprintf(one, sizeof one, "%u", base->phase);
		what = one;
	}
	if (base->json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "layer", layer);
		cJSON_AddStringToObject(root, "phases", what);
		cJSON_AddStringToObject(root, "measure",
		                        "median cycles of the phase and its epilogue over "
		                        "the original's in the same run (probed kernels)");
		cJSON *vj = cJSON_AddArrayToObject(root, "variants");
		for (size_t k = 0; k < nruns; k++) {
			const VariantRun *v = &runs[k];
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "variant", v->variant);
			cJSON_AddStringToObject(x, "source", v->source);
			cJSON *km = cJSON_AddObjectToObject(x, "kernel_ms");
			static const char *const kn[4] = {"original", "spliced", "original_probed",
			                                  "spliced_probed"};
			for (int t = 0; t < 4; t++)
				cJSON_AddNumberToObject(km, kn[t], v->ms[t]);
			cJSON *ov = cJSON_AddObjectToObject(x, "overhead_percent");
			cJSON_AddNumberToObject(ov, "original", v->ov_o);
			cJSON_AddNumberToObject(ov, "spliced", v->ov_s);
			cJSON_AddBoolToObject(ov, "met", overhead_met(v->ov_o) && overhead_met(v->ov_s));
			cJSON *pc = cJSON_AddObjectToObject(x, "probes_changed_code");
			cJSON_AddItemToObject(pc, "original", probe_change_json(&v->ch_o, v->ov_o));
			cJSON_AddItemToObject(pc, "spliced", probe_change_json(&v->ch_s, v->ov_s));
			cJSON_AddBoolToObject(x, "spliced_frame_is_original", v->same_frame);
			cJSON_AddNumberToObject(x, "fastest_phases", wins[k]);
			cJSON_AddItemToArray(vj, x);
		}
		cJSON *rj = cJSON_AddArrayToObject(root, "ranking");
		for (size_t i = 0; i < n; i++) {
			rank_phase(runs, nruns, i, order);
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "phase", runs[0].phase[i]);
			cJSON *cj = cJSON_AddArrayToObject(x, "variants");
			for (size_t k = 0; k < nruns; k++) {
				const VariantRun *v = &runs[order[k]];
				cJSON *c = cJSON_CreateObject();
				cJSON_AddStringToObject(c, "variant", v->variant);
				cJSON_AddNumberToObject(c, "cycles", v->spl[i]);
				cJSON_AddNumberToObject(c, "original_cycles", v->orig[i]);
				if (variant_ratio(v, i) >= 0)
					cJSON_AddNumberToObject(c, "ratio", variant_ratio(v, i));
				else
					cJSON_AddNullToObject(c, "ratio");
				cJSON_AddItemToArray(cj, c);
			}
			cJSON_AddItemToArray(rj, x);
		}
		cmd_json_print(root, EXIT_OK);
	} else {
		printf("%s profile (phases %s, variants %s): per phase, the median cycles of the "
		       "phase and its epilogue, each variant against the original in its own run\n",
		       layer, what, base->variant);
		for (size_t k = 0; k < nruns; k++) {
			const VariantRun *v = &runs[k];
			printf("  %-9s kernel original %.4f ms, spliced %.4f ms (%.2fx); probes' "
			       "overhead %+.1f%%, %+.1f%%; spliced frame %s the original's\n",
			       v->variant, v->ms[0], v->ms[1], v->ms[0] > 0 ? v->ms[1] / v->ms[0] : 0,
			       v->ov_o, v->ov_s, v->same_frame ? "=" : "DIFFERS from");
			const ProbeChange *chs[2] = {&v->ch_o, &v->ch_s};
			const double ovs[2] = {v->ov_o, v->ov_s};
			for (int t = 0; t < 2; t++) {
				sb_reset(&sb);
				probe_change_text(chs[t], ovs[t], &sb);
				if (sb.n)
					printf("  CHANGED   %s, %s: %s\n", v->variant,
					       t ? "spliced" : "original", sb.p);
			}
			if (!overhead_met(v->ov_o) || !overhead_met(v->ov_s))
				printf("            OVERHEAD BEYOND THE %.0f%% TARGET: the cycles "
				       "below are of kernels the probes changed\n",
				       OVERHEAD_TARGET);
		}
		printf("  %-12s %-10s", "", "original");
		for (size_t k = 0; k < nruns; k++)
			printf(" %-16s", runs[k].variant);
		printf(" fastest\n");
		for (size_t i = 0; i < n; i++) {
			char name[32], b[48];
			snprintf(name, sizeof name, "phase %u", runs[0].phase[i]);
			snprintf(b, sizeof b, "%.0f", runs[0].orig[i]);
			printf("  %-12s %-10s", name, runs[0].orig[i] >= 0 ? b : "-");
			for (size_t k = 0; k < nruns; k++) {
				double r = variant_ratio(&runs[k], i);
				if (r < 0)
					snprintf(b, sizeof b, "-");
				else
					snprintf(b, sizeof b, "%.0f %.2fx", runs[k].spl[i], r);
				printf(" %-16s", b);
			}
			rank_phase(runs, nruns, i, order);
			printf(" %s\n",
			       variant_ratio(&runs[order[0]], i) >= 0 ? runs[order[0]].variant : "-");
		}
		printf("  fastest  ");
		for (size_t k = 0; k < nruns; k++)
			printf("%s %s %u phase%s", k ? "," : "", runs[k].variant, wins[k],
			       wins[k] == 1 ? "" : "s");
		printf(" (the layer of the fastest proven: recipe best %s --ranking FILE "
		       "--proof CHECK.json, FILE this profile's --json)\n",
		       layer);
	}
	free(order);
	free(wins);
out:
	for (size_t k = 0; k < nruns; k++)
		variant_run_release(&runs[k]);
	free(runs);
	free(list);
	sb_release(&sb);
	return rc;
}

