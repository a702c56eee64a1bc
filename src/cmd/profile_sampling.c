/*
 * profile_sampling.c - `d4r-splice profile` with PC sampling (the default
 * where libcupti loads; --sampling insists, --no-sampling leaves it out):
 * samples, share of the kernel, stall reasons and SASS instructions per
 * phase and epilogue of the unmodified original and spliced modules.
 *
 * The map and the run are sample/'s (sample.h, run.h): each module gets a
 * .loc line per statement of its entry (the spliced module's regions
 * carried over from the original's, as --sass carries them), the driver
 * JIT-compiles it with line information beside the plain build, the two
 * images must hold the same instructions, and the .loc build runs the
 * layer's launches under CUPTI PC sampling in its own child, one module
 * after the other.  Then CUPTI's SASS-to-source correlation of the image
 * that ran maps each instruction to its statement, each statement to its
 * region.  The probes still run after it (their cycles are what sampling
 * cannot say: per warp, with spread), and where the two disagree on a
 * region's share of the kernel by more than SHARE_POINTS, both are printed.
 *
 * Decisions:
 *  - The JIT of the driver, not ptxas: the code sampled is the code `run`
 *    and the main job run (run.h says more).  The plain builds and the
 *    probed modules are compiled in the same first step, all side by side,
 *    so the probe job after it loads them from the image cache.
 *  - Where sampling was not asked for by name and cannot be had (no
 *    libcupti, the device or the driver refuses), one line says why and
 *    the probes' profile follows as before; with --sampling it is an error.
 *  - The ratio of a region is spliced samples over original samples: both
 *    modules run the same launches the same number of times at the same
 *    period, so samples count time (on every SM, summed).
 */
#include "gpu/layer.h"
#include "profile_internal.h"
#include "sample/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the probes and sampling agree on a share within this many points */
#define SHARE_POINTS 3.0
#define TOP_REASONS 3

static const char *const mod_name[2] = {"original", "spliced"};

void prof_sampled_release(ProfSampled *s)
{
	for (int k = 0; k < 2; k++) {
		sample_profile_release(&s->prof[k]);
		sample_pcs_release(&s->pcs[k]);
		free(s->frame[k]);
	}
	free(s->why);
	memset(s, 0, sizeof *s);
}

/* The .loc text of module m's entry f, reduced as the plain one is. */
static int loc_text(Prof *p, const Module *m, const Func *f, const char *name,
                    StrBuf *out, Err *e)
{
	StrBuf loc = STRBUF_INIT;
	sample_loc_text(m, f, &loc);
	int rc = gpu_reduce_text(&p->mf, name, loc.p, loc.n, out, NULL, NULL, e);
	sb_release(&loc);
	return rc;
}

/* Sampling failed: an error with --sampling, else a line of why. */
static int not_taken(Prof *p, ProfSampled *s, const char *why, Err *e)
{
	if (p->sampling)
		return err_set(e, "--sampling: %s", why);
	s->why = xstrdup(why);
	return 0;
}

int profile_sampling_take(Prof *p, ProfSampled *s, Err *e)
{
	memset(s, 0, sizeof *s);
	Err ce = ERR_INIT;
	if (sample_cupti_load(&ce) < 0) {
		int rc = not_taken(p, s, err_msg(&ce), e);
		err_release(&ce);
		return rc;
	}
	int rc = -1;
	StrBuf loc[2] = {STRBUF_INIT, STRBUF_INIT};
	SampleRegion *reg[2] = {NULL, NULL};
	uint32_t *match = NULL, nmatched = 0;
	SampleCut *cuts = NULL;
	SampleRunResult jit, run;
	memset(&jit, 0, sizeof jit);
	memset(&run, 0, sizeof run);
	SampleMap map[2];
	memset(map, 0, sizeof map);
	const Func *fns[2] = {p->fo, p->fs};
	if (loc_text(p, p->lm.m, p->fo, "original (lines)", &loc[0], e) < 0 ||
	    loc_text(p, p->ms, p->fs, "spliced (lines)", &loc[1], e) < 0)
		goto out;

	/* 1. every JIT side by side: the plain builds (their images come
	 *    back), the probed ones into the cache, the .loc builds */
	SampleModule jm[6] = {
	    {"original", p->red[0].p, p->red[0].n, false, true, false},
	    {"spliced", p->red[1].p, p->red[1].n, false, true, false},
	    {"original (lines)", loc[0].p, loc[0].n, true, false, false},
	    {"spliced (lines)", loc[1].p, loc[1].n, true, false, false},
	    {"original (probed)", p->red[2].p, p->red[2].n, false, true, false},
	    {"spliced (probed)", p->red[3].p, p->red[3].n, false, true, false},
	};
	SampleJob job = {.manifest = &p->mf,
	                 .modules = jm,
	                 .nmodules = p->no_cache ? 2 : 6,
	                 .timeout_s = p->timeout,
	                 .no_cache = p->no_cache,
	                 .runs = p->runs,
	                 .period = p->sampling_period};
	if (sample_run(&job, &jit, e) < 0)
		goto out;
	if (jit.status != GPU_OK) {
		/* a plain or probed module that does not compile fails the
		 * profile anyway; a .loc build alone is sampling's failure */
		bool loc_only = true;
		for (size_t k = 0; k < job.nmodules; k++)
			if (jit.mods[k].status != GPU_OK && !jm[k].line_info)
				loc_only = false;
		if (loc_only)
			rc = not_taken(p, s, jit.message ? jit.message : "a .loc build did not compile",
			               e);
		else
			err_set(e, "%s", jit.message ? jit.message : "a module did not compile");
		goto out;
	}
	/* 2. the .loc builds sampled, one after the other */
	SampleModule sm[2] = {jm[2], jm[3]};
	sm[0].sample = sm[1].sample = true;
	job.modules = sm;
	job.nmodules = 2;
	job.serial = true;
	if (sample_run(&job, &run, e) < 0)
		goto out;
	if (run.status != GPU_OK) {
		rc = not_taken(p, s, run.message ? run.message : "the sampled run failed",
		               e);
		goto out;
	}
	/* 3. the map of each image that ran, and the regions */
	reg[0] = xcalloc(p->fo->nstmt + 1, sizeof *reg[0]);
	reg[1] = xcalloc(p->fs->nstmt + 1, sizeof *reg[1]);
	size_t nph = sample_regions(p->lm.m, p->fo, reg[0]);
	probe_align(p->lm.m, p->fo, p->ms, p->fs, &match, &nmatched);
	cuts = xcalloc(p->cuts.n + 1, sizeof *cuts);
	for (size_t i = 0; i < p->cuts.n; i++)
		cuts[i] = (SampleCut){p->cuts.v[i].first, p->cuts.v[i].last};
	sample_regions_carried(reg[0], p->fo->nstmt, match, cuts, p->cuts.n, p->fs->nstmt,
	                       reg[1]);
	const char *entry = p->mf.entry;
	for (int k = 0; k < 2; k++) {
		SampleModuleResult *mr = &run.mods[k], *plain = &jit.mods[k];
		const unsigned char *t;
		size_t tl;
		if (sample_same_stream(mr->image, mr->image_len, plain->image,
		                       plain->image_len, entry, &s->same[k],
		                       &s->first_diff[k], e) < 0 ||
		    sample_cubin_text(plain->image, plain->image_len, entry, &t, &tl, e) <
		        0 ||
		    sample_map(mr->image, mr->image_len, entry, fns[k]->nstmt, &map[k],
		               e) < 0 ||
		    sample_profile(&mr->pcs, &map[k], reg[k], nph, &s->prof[k], e) < 0) {
			err_set(e, "the %s module's samples: %s", mod_name[k],
			        err_msg(e));
			goto out;
		}
		s->n_plain[k] = tl / SAMPLE_INSN_BYTES;
		s->unattributed[k] = map[k].unattributed;
		s->pcs[k] = mr->pcs;
		memset(&mr->pcs, 0, sizeof mr->pcs);
		s->frame_len[k] = mr->frame_len;
		s->frame[k] = mr->frame;
		mr->frame = NULL;
		s->jit_cached[k] = mr->jit_cached;
	}
	snprintf(s->device, sizeof s->device, "%s", run.mods[0].device);
	s->cc_major = run.mods[0].cc_major;
	s->cc_minor = run.mods[0].cc_minor;
	s->taken = true;
	rc = 0;
out:
	for (int k = 0; k < 2; k++) {
		sample_map_release(&map[k]);
		sb_release(&loc[k]);
		free(reg[k]);
	}
	free(match);
	free(cuts);
	sample_run_release(&jit);
	sample_run_release(&run);
	return rc;
}

/* ---- output ------------------------------------------------------------------- */

static double share(const SampleProfile *sp, size_t r)
{
	return sp->kernel ? (double)sp->row[r].samples / (double)sp->kernel * 100 : 0;
}

static void row_name(size_t r, size_t nph, char *b, size_t n)
{
	if (r == 0)
		snprintf(b, n, "prologue");
	else if (r == SAMPLE_ROW_OTHER(nph))
		snprintf(b, n, "other");
	else
		snprintf(b, n, "%s %zu", r % 2 ? "phase" : "epilogue", (r + 1) / 2);
}

/* The probes' share of row r (percent), or -1 where they did not time it. */
static double probe_share(const Prof *p, const ProfResult *pr, size_t r, size_t nph)
{
	if (r == 0 || r == SAMPLE_ROW_OTHER(nph) || pr->kernel.mean <= 0)
		return -1;
	unsigned ph = (unsigned)((r + 1) / 2);
	for (size_t i = 0; i < p->po.phases.n; i++) {
		if (p->po.phases.v[i].phase != ph)
			continue;
		const ProfStat *st =
		    r % 2 ? &pr->phases[i].phase : &pr->phases[i].epilogue;
		return st->n ? st->mean / pr->kernel.mean * 100 : -1;
	}
	return -1;
}

static void reasons_text(const SampleProfile *sp, const SamplePcs *pcs, size_t r,
                         StrBuf *sb)
{
	size_t top[TOP_REASONS];
	size_t n = sample_top_reasons(sp, r, top, TOP_REASONS);
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, "%s%s %.0f%%", i ? ", " : "",
		        sample_reason_short(pcs->reason[top[i]]),
		        (double)sp->row[r].reason[top[i]] / (double)sp->row[r].samples *
		            100);
	if (!n)
		sb_adds(sb, "-");
}

void profile_sampling_text(const Prof *p, const ProfSampled *s, const ProfResult *pr[2],
                           const unsigned char *plain_frame[2])
{
	if (!s->taken) {
		if (s->why)
			printf("  sampling  not taken: %s; the probes' figures above are "
			       "all there "
			       "is\n",
			       s->why);
		return;
	}
	const SampleProfile *o = &s->prof[0], *sp = &s->prof[1];
	size_t nph = o->nphases;
	printf("  sampling  CUPTI PC sampling of the unmodified modules, JIT-compiled "
	       "with line "
	       "information: every 2^%u cycles, %u runs each\n",
	       s->pcs[0].period, s->pcs[0].runs);
	for (int k = 0; k < 2; k++) {
		const char *lead = k ? "          " : "  .loc    ";
		if (s->same[k])
			printf("%s %-8s: %zu SASS instructions, the same with and "
			       "without the .loc "
			       "lines\n",
			       lead, mod_name[k], s->prof[k].insns);
		else
			printf("%s %-8s: the .loc lines CHANGED the code (%zu "
			       "instructions with them, "
			       "%zu without, first difference at instruction %zu): the "
			       "samples are of "
			       "the build with them\n",
			       lead, mod_name[k], s->prof[k].insns, s->n_plain[k],
			       s->first_diff[k]);
	}
	for (int k = 0; k < 2; k++) {
		const SamplePcs *c = &s->pcs[k];
		long long rest = (long long)c->total - (long long)c->dropped -
		                 (long long)c->non_user - (long long)s->prof[k].kernel -
		                 (long long)c->other;
		printf("  %-9s %s: %llu samples of the kernel (CUPTI counted %llu: %llu "
		       "dropped, "
		       "%llu of other kernels, %lld not in a record)%s\n",
		       k ? "" : "samples", mod_name[k],
		       (unsigned long long)s->prof[k].kernel,
		       (unsigned long long)c->total, (unsigned long long)c->dropped,
		       (unsigned long long)(c->non_user + c->other), rest,
		       c->buffer_full ? "; CUPTI'S HARDWARE BUFFER FILLED" : "");
	}
	for (int k = 0; k < 2; k++)
		if (plain_frame && plain_frame[k] && s->frame[k])
			printf("  %-9s %s .loc build's frame %s the %s build's\n",
			       k ? "" : "frame", mod_name[k],
			       memcmp(s->frame[k], plain_frame[k], p->mf.frame_size)
			           ? "DIFFERS from"
			           : "=",
			       "plain");
	printf("  samples per region: samples, share of the kernel, SASS instructions; "
	       "ratio "
	       "spliced/original; top stall reasons (original | spliced)\n");
	printf("  %-12s %-28s %-28s %-6s %s\n", "", "original", "spliced", "ratio",
	       "stalls");
	StrBuf sb = STRBUF_INIT;
	double sum[2] = {0, 0};
	for (size_t r = 0; r < SAMPLE_ROWS(nph); r++) {
		char name[32], a[64], b[64], ratio[16] = "-";
		row_name(r, nph, name, sizeof name);
		snprintf(a, sizeof a, "%llu %5.1f%% %6zu",
		         (unsigned long long)o->row[r].samples, share(o, r),
		         o->row[r].insns);
		snprintf(b, sizeof b, "%llu %5.1f%% %6zu",
		         (unsigned long long)sp->row[r].samples, share(sp, r),
		         sp->row[r].insns);
		if (o->row[r].samples)
			snprintf(ratio, sizeof ratio, "%.2fx",
			         (double)sp->row[r].samples / (double)o->row[r].samples);
		sb_reset(&sb);
		reasons_text(o, &s->pcs[0], r, &sb);
		sb_adds(&sb, " | ");
		reasons_text(sp, &s->pcs[1], r, &sb);
		printf("  %-12s %-28s %-28s %-6s %s\n", name, a, b, ratio, sb.p);
		sum[0] += share(o, r);
		sum[1] += share(sp, r);
	}
	{
		char a[64], b[64], ratio[16] = "-";
		snprintf(a, sizeof a, "%llu %5.1f%% %6zu", (unsigned long long)o->kernel,
		         100.0, o->insns);
		snprintf(b, sizeof b, "%llu %5.1f%% %6zu", (unsigned long long)sp->kernel,
		         100.0, sp->insns);
		if (o->kernel)
			snprintf(ratio, sizeof ratio, "%.2fx",
			         (double)sp->kernel / (double)o->kernel);
		printf("  %-12s %-28s %-28s %s\n", "kernel", a, b, ratio);
	}
	printf("  sum       the regions' shares add up to %.1f%% (original) and %.1f%% "
	       "(spliced) "
	       "of the kernel's samples\n",
	       sum[0], sum[1]);
	/* where the probes say otherwise */
	for (int k = 0; k < 2; k++)
		for (size_t r = 0; pr && pr[k] && r < SAMPLE_ROWS(nph); r++) {
			double ps = probe_share(p, pr[k], r, nph),
			       ss = share(&s->prof[k], r);
			if (ps < 0 || fabs(ps - ss) <= SHARE_POINTS)
				continue;
			char name[32];
			row_name(r, nph, name, sizeof name);
			printf("  DISAGREE  %s %s: sampled %.1f%% of the kernel, probes "
			       "%.1f%% (of the "
			       "probed kernel's cycles)\n",
			       mod_name[k], name, ss, ps);
		}
	sb_release(&sb);
}

static cJSON *row_json(const SampleProfile *sp, const SamplePcs *pcs, size_t r, double ps)
{
	cJSON *x = cJSON_CreateObject();
	cJSON_AddNumberToObject(x, "samples", (double)sp->row[r].samples);
	cJSON_AddNumberToObject(
	    x, "share", sp->kernel ? (double)sp->row[r].samples / (double)sp->kernel : 0);
	cJSON_AddNumberToObject(x, "instructions", (double)sp->row[r].insns);
	if (ps >= 0)
		cJSON_AddNumberToObject(x, "probe_share", ps / 100);
	cJSON *st = cJSON_AddObjectToObject(x, "stalls");
	for (size_t i = 0; i < sp->nreasons; i++)
		if (sp->row[r].reason[i])
			cJSON_AddNumberToObject(st, sample_reason_short(pcs->reason[i]),
			                        (double)sp->row[r].reason[i]);
	return x;
}

cJSON *profile_sampling_json(const Prof *p, const ProfSampled *s, const ProfResult *pr[2],
                             const unsigned char *plain_frame[2])
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "taken", s->taken);
	if (!s->taken) {
		cJSON_AddStringToObject(o, "why", s->why ? s->why : "--no-sampling");
		return o;
	}
	size_t nph = s->prof[0].nphases;
	cJSON_AddNumberToObject(o, "period_log2_cycles", s->pcs[0].period);
	cJSON_AddNumberToObject(o, "runs", s->pcs[0].runs);
	cJSON *mj = cJSON_AddObjectToObject(o, "modules");
	for (int k = 0; k < 2; k++) {
		const SamplePcs *c = &s->pcs[k];
		cJSON *x = cJSON_AddObjectToObject(mj, mod_name[k]);
		cJSON_AddNumberToObject(x, "samples", (double)s->prof[k].kernel);
		cJSON_AddNumberToObject(x, "cupti_total", (double)c->total);
		cJSON_AddNumberToObject(x, "dropped", (double)c->dropped);
		cJSON_AddNumberToObject(x, "other_kernels",
		                        (double)(c->non_user + c->other));
		cJSON_AddBoolToObject(x, "buffer_full", c->buffer_full);
		cJSON_AddNumberToObject(x, "instructions", (double)s->prof[k].insns);
		cJSON_AddNumberToObject(x, "instructions_without_loc",
		                        (double)s->n_plain[k]);
		cJSON_AddBoolToObject(x, "same_stream", s->same[k]);
		cJSON_AddNumberToObject(x, "unattributed", (double)s->unattributed[k]);
		if (plain_frame && plain_frame[k] && s->frame[k])
			cJSON_AddBoolToObject(
			    x, "frame_is_plain_builds",
			    !memcmp(s->frame[k], plain_frame[k], p->mf.frame_size));
		cJSON *rs = cJSON_AddArrayToObject(x, "reasons");
		for (size_t i = 0; i < c->nreasons; i++)
			cJSON_AddItemToArray(rs, cJSON_CreateString(c->reason[i]));
	}
	cJSON *rj = cJSON_AddArrayToObject(o, "regions");
	double sum[2] = {0, 0};
	for (size_t r = 0; r < SAMPLE_ROWS(nph); r++) {
		cJSON *x = cJSON_CreateObject();
		const char *kind = r == 0                       ? "prologue"
		                   : r == SAMPLE_ROW_OTHER(nph) ? "other"
		                   : r % 2                      ? "phase"
		                                                : "epilogue";
		cJSON_AddStringToObject(x, "region", kind);
		cJSON_AddNumberToObject(
		    x, "phase", r == SAMPLE_ROW_OTHER(nph) ? 0 : (double)((r + 1) / 2));
		for (int k = 0; k < 2; k++) {
			double ps = pr && pr[k] ? probe_share(p, pr[k], r, nph) : -1;
			cJSON_AddItemToObject(x, mod_name[k],
			                      row_json(&s->prof[k], &s->pcs[k], r, ps));
			sum[k] += share(&s->prof[k], r);
		}
		if (s->prof[0].row[r].samples)
			cJSON_AddNumberToObject(x, "ratio",
			                        (double)s->prof[1].row[r].samples /
			                            (double)s->prof[0].row[r].samples);
		cJSON_AddItemToArray(rj, x);
	}
	cJSON *sj = cJSON_AddObjectToObject(o, "shares_sum");
	cJSON_AddNumberToObject(sj, "original", sum[0] / 100);
	cJSON_AddNumberToObject(sj, "spliced", sum[1] / 100);
	cJSON_AddNumberToObject(o, "agree_points", SHARE_POINTS);
	return o;
}
