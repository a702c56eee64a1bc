/*
 * profile_sass.c - `d4r-splice profile LAYER ... --sass`: SASS instructions
 * per phase and epilogue of the original and the spliced module, offline.
 *
 * The first, offline step of profiling the kernel as it is (sample/sample.h):
 * each module is compiled by ptxas for the architecture, as it is and with
 * a .loc line per statement; the two builds must hold the same
 * instructions; CUPTI's SASS-to-source correlation (libcupti, no device)
 * gives each instruction's statement, and the statements' phases and
 * epilogues are profile's (the spliced module's carried over from the
 * original's).  No GPU is used and no clock read added.
 *
 * Decisions:
 *  - The architecture is $D4R_SASS_ARCH, else the module's .target, and the
 *    output says which: the GPU runs code compiled for its own
 *    architecture (sm_90 on the H200, where enc4's PTX says sm_89), which
 *    scripts/device-arch prints on the GPU machine.
 *  - The two modules are compiled one after the other: each ptxas run of
 *    the enc4 kernel takes 5-9 s of one CPU.
 */
#include "profile_internal.h"
#include "sample/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *region_name(int kind)
{
	return kind == SR_PHASE ? "phase" : kind == SR_EPILOGUE ? "epilogue" : "prologue";
}

int profile_sass(Prof *p)
{
	Err e = ERR_INIT;
	char arch[64];
	const char *from = "the module's .target";
	const char *env = getenv("D4R_SASS_ARCH");
	if (env && *env) {
		snprintf(arch, sizeof arch, "%s", env);
		from = "$D4R_SASS_ARCH";
	} else if (splice_module_arch(p->lm.m, arch, sizeof arch) < 0)
		snprintf(arch, sizeof arch, "sm_90");
	SampleRegion *ro = xcalloc(p->fo->nstmt + 1, sizeof *ro),
	             *rs = xcalloc(p->fs->nstmt + 1, sizeof *rs);
	size_t nph = sample_regions(p->lm.m, p->fo, ro);
	uint32_t *match = NULL, nmatched = 0;
	probe_align(p->lm.m, p->fo, p->ms, p->fs, &match, &nmatched);
	SampleCut *cuts = xcalloc(p->cuts.n + 1, sizeof *cuts);
	for (size_t i = 0; i < p->cuts.n; i++)
		cuts[i] = (SampleCut){p->cuts.v[i].first, p->cuts.v[i].last};
	sample_regions_carried(ro, p->fo->nstmt, match, cuts, p->cuts.n, p->fs->nstmt, rs);
	SampleSass so, ss;
	memset(&so, 0, sizeof so);
	memset(&ss, 0, sizeof ss);
	int rc = EXIT_ERROR;
	if (sample_sass(p->lm.m, p->fo, ro, nph, arch, &so, &e) < 0 ||
	    sample_sass(p->ms, p->fs, rs, nph, arch, &ss, &e) < 0) {
		cmd_fail("profile: %s", err_msg(&e));
		if (p->json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "layer", p->layer);
			cJSON_AddStringToObject(o, "message", err_msg(&e));
			cmd_json_print(o, EXIT_ERROR);
		}
		goto out;
	}
	const char *layer = p->mf.layer ? p->mf.layer : p->layer;
	const SampleSass *sv[2] = {&so, &ss};
	if (p->json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "layer", layer);
		cJSON_AddStringToObject(root, "source", p->source);
		cJSON_AddStringToObject(root, "arch", arch);
		cJSON_AddStringToObject(root, "arch_from", from);
		cJSON *mj = cJSON_AddObjectToObject(root, "modules");
		for (int k = 0; k < 2; k++) {
			cJSON *x = cJSON_AddObjectToObject(mj, k ? "spliced" : "original");
			cJSON_AddNumberToObject(x, "instructions", (double)sv[k]->n_loc);
			cJSON_AddNumberToObject(x, "instructions_without_loc", (double)sv[k]->n_plain);
			cJSON_AddBoolToObject(x, "same_stream", sv[k]->same);
			cJSON_AddNumberToObject(x, "unattributed", (double)sv[k]->unattributed);
		}
		cJSON *rj = cJSON_AddArrayToObject(root, "regions");
		for (size_t i = 0; i <= 2 * nph; i++) {
			int kind = i == 0 ? SR_PROLOGUE : i % 2 ? SR_PHASE : SR_EPILOGUE;
			size_t ph = (i + 1) / 2;
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "region", region_name(kind));
			cJSON_AddNumberToObject(x, "phase", (double)ph);
			for (int k = 0; k < 2; k++)
				cJSON_AddNumberToObject(x, k ? "spliced" : "original",
				                        (double)(i == 0       ? sv[k]->prologue
				                                 : i % 2 ? sv[k]->phase[ph - 1]
				                                         : sv[k]->epilogue[ph - 1]));
			cJSON_AddItemToArray(rj, x);
		}
		cmd_json_print(root, EXIT_OK);
	} else {
		printf("%s SASS per phase (%s): ptxas -O3 -arch=%s (%s), no GPU\n", layer, p->source,
		       arch, from);
		for (int k = 0; k < 2; k++) {
			const SampleSass *s = sv[k];
			if (s->same)
				printf("  %-9s %s: %zu instructions, the same with and without the .loc "
				       "lines\n",
				       k ? "" : ".loc", k ? "spliced " : "original", s->n_loc);
			else
				printf("  %-9s %s: the .loc lines CHANGED the code (%zu instructions with "
				       "them, %zu without, first difference at instruction %zu): the "
				       "counts are of the build with them\n",
				       k ? "" : ".loc", k ? "spliced " : "original", s->n_loc, s->n_plain,
				       s->first_diff);
		}
		printf("  SASS instructions per region (each mapped to its PTX statement by CUPTI's "
		       "SASS-to-source correlation)\n");
		printf("  %-12s %10s %10s %s\n", "", "original", "spliced", "ratio");
		for (size_t i = 0; i <= 2 * nph + 2; i++) {
			char name[32];
			size_t a, b;
			size_t ph = (i + 1) / 2;
			if (i == 0) {
				snprintf(name, sizeof name, "prologue");
				a = so.prologue, b = ss.prologue;
			} else if (i <= 2 * nph) {
				snprintf(name, sizeof name, "%s %zu", i % 2 ? "phase" : "epilogue", ph);
				a = i % 2 ? so.phase[ph - 1] : so.epilogue[ph - 1];
				b = i % 2 ? ss.phase[ph - 1] : ss.epilogue[ph - 1];
			} else if (i == 2 * nph + 1) {
				snprintf(name, sizeof name, "unattributed");
				a = so.unattributed, b = ss.unattributed;
			} else {
				snprintf(name, sizeof name, "kernel");
				a = so.n_loc, b = ss.n_loc;
			}
			char ratio[16] = "-";
			if (a)
				snprintf(ratio, sizeof ratio, "%.2fx", (double)b / (double)a);
			printf("  %-12s %10zu %10zu %s\n", name, a, b, ratio);
		}
	}
	rc = EXIT_OK;
out:
	sample_sass_release(&so);
	sample_sass_release(&ss);
	free(cuts);
	free(match);
	free(ro);
	free(rs);
	err_release(&e);
	return rc;
}
