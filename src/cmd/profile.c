/*
 * profile.c - `d4r-splice profile`: cycles per phase and per epilogue,
 * original vs spliced.
 *
 *   d4r-splice profile LAYER --phase N [--recipe FILE] [options]
 *   d4r-splice profile LAYER --phases LIST [--variant NAME] [options]
 *   d4r-splice profile LAYER --module SPLICED.ptx [options]
 *   d4r-splice profile LAYER --phases LIST --variant A,B [options]
 *       (profile_variants.c: each variant in turn, ranked per phase)
 *
 * The spliced module is made as the main job makes it (splice_run for one
 * recipe, splice_many for several) or read from a file.  Both modules get
 * the clock reads of a profile plan (splice/profile.h), the spliced one at
 * the original's points carried over.  Four modules then run one after the
 * other (gpu/probe.h), each timed over --runs runs: original, spliced,
 * and both instrumented.  Printed: the kernel times and the probes'
 * overhead (instrumented vs not, in this run), the clock's resolution as
 * measured in the kernel, registers / local / shared memory of each module
 * and the JIT's spill lines, and per phase and epilogue the median, p10
 * and p90 of cycles over all warps of all blocks, the share of the
 * kernel's cycles, spliced vs original and their ratio.
 *
 * Before the four, where libcupti loads (or with --sampling), PC sampling
 * profiles the unmodified modules (profile_sampling.c): samples, share,
 * stall reasons and SASS instructions per phase and epilogue, printed
 * after the probes' table, with both shares where the two disagree.
 *
 * Exit status: 0 the profile was taken, 2 an error (including a module
 * that fails to run or an instrumented original whose frame is not the
 * original's: the probes must not change what the kernel computes).
 *
 * Decisions:
 *  - The four modules are timed serially: children at once would share
 *    the GPU while being timed.  Their JITs run first side by side into the
 *    image cache (one launch each, untimed), so the timed children load
 *    compiled images; with --no-cache each JIT is paid in its turn.
 *  - The overhead target is 3% of the kernel's time either way (Triton's
 *    Proton quotes under 3% for its intra-kernel mode): a probed kernel
 *    that runs faster than the plain one is as much another program as
 *    one that runs slower (on the H200 the clock reads cut enc4's spills
 *    from 3,120 to 1,724 bytes and the kernel ran 22% faster).
 *  - The probes changed the compiled kernel when its registers or local
 *    memory (cuFuncGetAttribute) or its spill stores or loads (the JIT's
 *    verbose log) differ from the plain build's: the first lines after the
 *    heading say so with the figures, since every cycle below is then of
 *    the probed program.  The figures and the overhead are of the window
 *    that ran (--window: fewer reads, perhaps a kernel left alone).
 *  - Share of the kernel: a phase's mean cycles over the kernel's mean
 *    cycles, so the shares of phases and epilogues add up like the cycles.
 */
#include "profile_internal.h"
#include "base/file.h"
#include "base/layout.h"
#include "base/numlist.h"
#include "cmd.h"
#include "gpu/chart.h"
#include "gpu/layer.h"
#include "gpu/probe.h"
#include "ptx/parse.h"
#include "splice/multi.h"
#include "splice/splice.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static const char *const usage[] = {
    "profile LAYER --phase N [--recipe FILE] [options]",
    "profile LAYER --phases LIST [--variant NAME] [options]",
    "profile LAYER --module SPLICED.ptx [options]",
    "profile LAYER --phases LIST --variant A,B[,...] [options]",
    NULL,
};


/* ---- the spliced module ----------------------------------------------------- */

static int make_spliced(Prof *p, Err *e)
{
	StrBuf src = STRBUF_INIT;
	if (p->module_opt) {
		char *data;
		size_t n;
		if (read_file(p->module_opt, &data, &n, e) < 0)
			return -1;
		p->spliced.p = data;
		p->spliced.n = p->spliced.cap = n;
		sb_addf(&src, "module %s", p->module_opt);
	} else if (p->phases_opt) {
		char *dir = layout_dir_of(p->mf.path);
		LayerRecipes lr = {p->layer, dir, p->corpus, mf_layout_layer};
		int rc = splice_select(&lr, p->phases_opt, p->variant, &p->sel, &p->nsel, e);
		free(dir);
		if (rc < 0)
			return -1;
		const Recipe **selp = xcalloc(p->nsel + 1, sizeof(Recipe *));
		for (size_t i = 0; i < p->nsel; i++)
			selp[i] = &p->sel[i];
		SpliceManyRequest req = {p->lm.m, p->mf.entry, selp,
		                         p->nsel, NULL,        p->force};
		rc = splice_many(&req, &p->sm, e);
		free(selp);
		if (rc < 0)
			return -1;
		for (size_t i = 0; i < p->sm.n; i++) {
			ProbeCut c = {p->sm.cuts[i].first, p->sm.cuts[i].last};
			VEC_PUSH(p->cuts, c);
		}
		p->spliced = p->sm.text;
		memset(&p->sm.text, 0, sizeof p->sm.text);
		sb_addf(&src, "phases %s%s%s", p->phases_opt,
		        p->variant ? " variant " : "", p->variant ? p->variant : "");
	} else {
		char *dir = layout_dir_of(p->mf.path);
		LayerRecipes lr = {p->layer, dir, p->corpus, mf_layout_layer};
		int rc = splice_layer_recipe(&lr, p->phase, p->variant, p->recipe_opt, &p->rcp, e);
		free(dir);
		if (rc < 0) {
			sb_release(&src);
			return -1;
		}
		sb_addf(&src, "recipe %s", p->rcp.path);
		SpliceRequest req = {p->lm.m, p->mf.entry, &p->rcp, NULL, p->force};
		if (splice_run(&req, &p->sr, e) < 0) {
			sb_release(&src);
			return -1;
		}
		ProbeCut c = {p->sr.first, p->sr.last};
		VEC_PUSH(p->cuts, c);
		p->spliced = p->sr.text;
		memset(&p->sr.text, 0, sizeof p->sr.text);
	}
	p->source = src.p;
	p->ms = ptx_parse(p->module_opt ? p->module_opt : "spliced", p->spliced.p,
	                  p->spliced.n, e);
	if (!p->ms)
		return -1;
	p->fs = mod_func_find(p->ms, str_c(p->mf.entry));
	if (!p->fs || (p->fs->flags & FNF_DECL))
		return err_set(e, "the spliced module has no function '%s' with a body",
		               p->mf.entry);
	return 0;
}

/* The grid and block of the entry's launches (all of one shape). */
static int launch_shape(Prof *p, Err *e)
{
	const MfLaunch *l = NULL;
	for (size_t i = 0; i < p->mf.nlaunches; i++) {
		const MfLaunch *li = &p->mf.launches[i];
		if (strcmp(li->entry, p->mf.entry))
			continue;
		if (l && (memcmp(l->grid, li->grid, sizeof l->grid) ||
		          memcmp(l->block, li->block, sizeof l->block)))
			return err_set(
			    e,
			    "%s: '%s' is launched with different grids or blocks: "
			    "one dump cannot hold them",
			    p->mf.path, p->mf.entry);
		l = li;
	}
	if (!l)
		return err_set(e, "%s: no launch runs '%s'", p->mf.path, p->mf.entry);
	memcpy(p->grid, l->grid, sizeof p->grid);
	memcpy(p->block, l->block, sizeof p->block);
	return 0;
}

/* One line per value of the plan's record: "value K: WHAT", what the
 * read at that point marks ("epilogue 7 end = phase 8 start"); the read's
 * line in the instrumented module says "probe 0 value K". */
static void points_text(const ProfilePlan *pp, StrBuf *sb)
{
	const ProbeRecord *r = &pp->plan.recs.v[0];
	StrBuf w = STRBUF_INIT;
	for (size_t k = 0; k < r->vals.n; k++) {
		int32_t ki = (int32_t)k;
		sb_reset(&w);
#define NAME(...)                                                                        \
	do {                                                                             \
		if (w.n)                                                                 \
			sb_adds(&w, " = ");                                              \
		sb_addf(&w, __VA_ARGS__);                                                \
	} while (0)
		if (ki == pp->v_gt)
			NAME("kernel start (%%globaltimer)");
		if (ki == pp->v_k0)
			NAME("kernel start");
		if (ki == pp->v_k1)
			NAME("kernel start (second read)");
		for (size_t i = 0; i < pp->phases.n; i++) {
			const ProfilePhase *q = &pp->phases.v[i];
			if (ki == q->v_epi_end)
				NAME("epilogue %u end", q->phase);
		}
		for (size_t i = 0; i < pp->phases.n; i++) {
			const ProfilePhase *q = &pp->phases.v[i];
			if (ki == q->v_end)
				NAME("phase %u end", q->phase);
			if (ki == q->v_start)
				NAME("phase %u start", q->phase);
		}
		if (ki == pp->v_end)
			NAME("kernel end");
#undef NAME
		sb_addf(sb, "value %zu: %s\n", k, w.p ? w.p : "?");
	}
	sb_release(&w);
}

/* ---- output ------------------------------------------------------------------- */

static double overhead_pct(const GpuProbeModuleResult *plain,
                           const GpuProbeModuleResult *pr)
{
	if (!plain->times.n || !pr->times.n || plain->times.median_ms <= 0)
		return 0;
	return (pr->times.median_ms / plain->times.median_ms - 1) * 100;
}

bool overhead_met(double pct) { return fabs(pct) <= OVERHEAD_TARGET; }

/* "22% faster", "4% slower", "as fast" */
static void speed_text(double pct, StrBuf *sb)
{
	if (fabs(pct) < 0.5)
		sb_adds(sb, "as fast");
	else
		sb_addf(sb, "%.0f%% %s", fabs(pct), pct < 0 ? "faster" : "slower");
}

static void probe_change(const GpuProbeModuleResult *plain, const GpuProbeModuleResult *pr,
                         const char *entry, ProbeChange *pc)
{
	GpuLogAttrs la, lb;
	gpu_log_func_attrs(plain->jit_log, entry, &la);
	gpu_log_func_attrs(pr->jit_log, entry, &lb);
	pc->n = gpu_compiled_changes(&plain->attrs, &la, &pr->attrs, &lb, pc->c);
}

/* "the probes changed the compiled kernel: spill stores 3120 -> 1724 B, 22%
 * faster; the cycles below are of the probed kernel"; nothing when they
 * did not */
void probe_change_text(const ProbeChange *pc, double ov, StrBuf *sb)
{
	if (!pc->n)
		return;
	sb_adds(sb, "the probes changed the compiled kernel: ");
	gpu_compiled_changes_text(pc->c, pc->n, sb);
	sb_adds(sb, ", ");
	speed_text(ov, sb);
	sb_adds(sb, "; the cycles below are of the probed kernel");
}

cJSON *probe_change_json(const ProbeChange *pc, double ov)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "changed", pc->n > 0);
	cJSON *f = cJSON_AddObjectToObject(o, "figures");
	for (unsigned i = 0; i < pc->n; i++) {
		cJSON *x = cJSON_AddObjectToObject(f, pc->c[i].key);
		cJSON_AddNumberToObject(x, "plain", (double)pc->c[i].a);
		cJSON_AddNumberToObject(x, "probed", (double)pc->c[i].b);
	}
	cJSON_AddNumberToObject(o, "overhead_percent", ov);
	StrBuf sb = STRBUF_INIT;
	probe_change_text(pc, ov, &sb);
	cJSON_AddStringToObject(o, "note", sb.p ? sb.p : "");
	sb_release(&sb);
	return o;
}

static void stat_text(const ProfStat *s, double kernel_mean, StrBuf *sb)
{
	if (!s->n) {
		sb_addf(sb, "%-28s", "-");
		return;
	}
	char b[64];
	snprintf(b, sizeof b, "%.0f [%.0f, %.0f]", s->median, s->p10, s->p90);
	sb_addf(sb, "%-21s %5.1f%%", b,
	        kernel_mean > 0 ? s->mean / kernel_mean * 100 : 0);
}

static void ratio_text(const ProfStat *a, const ProfStat *b, StrBuf *sb)
{
	if (a->n && b->n && a->median > 0)
		sb_addf(sb, "%.2fx", b->median / a->median);
	else
		sb_adds(sb, "-");
}

static cJSON *stat_json(const ProfStat *s, double kernel_mean)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "warps", (double)s->n);
	cJSON_AddNumberToObject(o, "median", s->median);
	cJSON_AddNumberToObject(o, "p10", s->p10);
	cJSON_AddNumberToObject(o, "p90", s->p90);
	cJSON_AddNumberToObject(o, "min", s->min);
	cJSON_AddNumberToObject(o, "max", s->max);
	cJSON_AddNumberToObject(o, "mean", s->mean);
	cJSON_AddNumberToObject(o, "share", kernel_mean > 0 ? s->mean / kernel_mean : 0);
	return o;
}

static cJSON *attrs_json(const GpuProbeModuleResult *r, const char *entry)
{
	cJSON *o = cJSON_CreateObject();
	GpuLogAttrs la;
	gpu_log_func_attrs(r->jit_log, entry, &la);
	cJSON_AddNumberToObject(o, "registers", r->attrs.regs);
	cJSON_AddNumberToObject(o, "local_bytes", r->attrs.local_bytes);
	cJSON_AddNumberToObject(o, "shared_bytes", r->attrs.shared_bytes);
	cJSON_AddBoolToObject(o, "jit_log_known", la.known);
	cJSON_AddNumberToObject(o, "spill_store_bytes", (double)la.spill_stores);
	cJSON_AddNumberToObject(o, "spill_load_bytes", (double)la.spill_loads);
	return o;
}

/* Does module b spill where a does not: spill bytes in the JIT log's block
 * of the entry, or local memory (cuFuncGetAttribute) where a has none? */
static bool spills_more(const GpuProbeModuleResult *a, const GpuProbeModuleResult *b,
                        const char *entry)
{
	GpuLogAttrs la, lb;
	gpu_log_func_attrs(a->jit_log, entry, &la);
	gpu_log_func_attrs(b->jit_log, entry, &lb);
	bool a_sp = la.spill_stores || la.spill_loads || a->attrs.local_bytes > 0;
	bool b_sp = lb.spill_stores || lb.spill_loads || b->attrs.local_bytes > 0;
	return b_sp && !a_sp;
}

/* ---- a list of variants ------------------------------------------------------- */

/* A phase's median cycles and its epilogue's: the code from the phase's
 * start to the next phase's, where a splice may move work between the
 * two; -1 when the phase was not read. */
static double phase_cycles(const ProfPhaseStat *ps)
{
	if (!ps->phase.n)
		return -1;
	return ps->phase.median + (ps->epilogue.n ? ps->epilogue.median : 0);
}

/* profile_internal.h */
int profile_body(Prof *p, VariantRun *vr)
{
	int rc = EXIT_ERROR;
	Err e = ERR_INIT;
	GpuProbeResult gr;
	memset(&gr, 0, sizeof gr);
	ProfResult pro, prs;
	memset(&pro, 0, sizeof pro);
	memset(&prs, 0, sizeof prs);
	StrBuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	cJSON *root = NULL;
	char *window = NULL;
	ProfSampled samp;
	memset(&samp, 0, sizeof samp);

	if (mf_load_layer(p->layer, p->corpus, &p->mf, &e) < 0 ||
	    mf_corpus_path(&p->mf, p->mf.module, &p->module_path, &e) < 0)
		goto fail;
	if (p->chart && out_check(p->chart, &e) < 0)
		goto fail;
	if (cmd_load_module(p->module_path, &p->lm) < 0) {
		if (vr)
			vr->message = xstrdup("the module did not load");
		goto done;
	}
	p->fo = mod_func_find(p->lm.m, str_c(p->mf.entry));
	if (!p->fo || (p->fo->flags & FNF_DECL)) {
		err_set(&e, "%s: no function '%s' with a body", p->module_path,
		        p->mf.entry);
		goto fail;
	}
	if (make_spliced(p, &e) < 0)
		goto fail;
	if (p->sass && !vr) {
		rc = profile_sass(p);
		goto done;
	}
	if (launch_shape(p, &e) < 0)
		goto fail;
	if (prof_plan(p->lm.m, p->fo, p->window.n ? &p->window : NULL, &p->po, &e) < 0)
		goto fail;
	uint32_t *match = NULL, nmatched = 0;
	probe_align(p->lm.m, p->fo, p->ms, p->fs, &match, &nmatched);
	int mrc = prof_plan_map(&p->po, p->lm.m, p->fo, p->ms, p->fs, match, p->cuts.v,
	                        p->cuts.n, &p->ps, &e);
	free(match);
	if (mrc < 0)
		goto fail;
	ProbeRequest qo = {p->lm.m, p->fo, &p->po.plan, NULL},
	             qs = {p->ms, p->fs, &p->ps.plan, NULL};
	if (probe_instrument(&qo, &p->ro, &e) < 0)
		goto fail;
	if (probe_instrument(&qs, &p->rs, &e) < 0) {
		err_set(&e, "the spliced module: %s", err_msg(&e));
		goto fail;
	}
	if (gpu_reduce_module(&p->mf, p->lm.m, &p->red[0], NULL, NULL, &e) < 0 ||
	    gpu_reduce_text(&p->mf, "spliced", p->spliced.p, p->spliced.n, &p->red[1],
	                    NULL, NULL, &e) < 0 ||
	    gpu_reduce_text(&p->mf, "original (probed)", p->ro.text.p, p->ro.text.n,
	                    &p->red[2], NULL, NULL, &e) < 0 ||
	    gpu_reduce_text(&p->mf, "spliced (probed)", p->rs.text.p, p->rs.text.n,
	                    &p->red[3], NULL, NULL, &e) < 0)
		goto fail;
	if (p->keep) {
		static const char *const names[4] = {"original.ptx", "spliced.ptx",
		                                     "original.probed.ptx",
		                                     "spliced.probed.ptx"};
		const StrBuf *texts[4] = {NULL, &p->spliced, &p->ro.text, &p->rs.text};
		if (mkdir_p(p->keep, &e) < 0)
			goto fail;
		for (int k = 1; k < 4; k++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", p->keep, names[k]);
			if (write_file_atomic(path, texts[k]->p, texts[k]->n, &e) < 0)
				goto fail;
		}
		const ProfilePlan *plans[2] = {&p->po, &p->ps};
		static const char *const pnames[2] = {"original.points.txt",
		                                      "spliced.points.txt"};
		for (int k = 0; k < 2; k++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", p->keep, pnames[k]);
			sb_reset(&sb);
			points_text(plans[k], &sb);
			if (write_file_atomic(path, sb.p, sb.n, &e) < 0)
				goto fail;
		}
		if (p->no_run) {
			printf("%s profile (%s): modules and read points written to %s/ "
			       "(not run)\n",
			       p->mf.layer ? p->mf.layer : p->layer, p->source, p->keep);
			rc = EXIT_OK;
			goto done;
		}
	}
	if (!vr && !p->no_sampling && profile_sampling_take(p, &samp, &e) < 0)
		goto fail;
	uint64_t dbo = probe_dump_bytes(&p->po.plan, p->grid, p->block);
	uint64_t dbs = probe_dump_bytes(&p->ps.plan, p->grid, p->block);
	GpuProbeModule mods[4] = {
	    {"original", p->red[0].p, p->red[0].n, NULL, 0, NULL, NULL},
	    {"spliced", p->red[1].p, p->red[1].n, NULL, 0, NULL, NULL},
	    {"original (probed)", p->red[2].p, p->red[2].n, p->ro.symbol, dbo, NULL,
	     NULL},
	    {"spliced (probed)", p->red[3].p, p->red[3].n, p->rs.symbol, dbs, NULL, NULL},
	};
	GpuProbeJob job = {.manifest = &p->mf,
	                   .modules = mods,
	                   .nmodules = 4,
	                   .timeout_s = p->timeout,
	                   .no_cache = p->no_cache,
	                   .serial = true,
	                   .runs = p->runs,
	                   .warmup = 3,
	                   .attrs = true};
	if (!p->no_cache) {
		/* the four JITs side by side, into the image cache; the timed runs
		 * after them, one module at a time, load the images */
		GpuProbeJob warm = job;
		warm.serial = false;
		warm.runs = warm.warmup = 0;
		if (gpu_probe_run(&warm, &gr, &e) < 0)
			goto fail;
		if (gr.status != GPU_OK) {
			err_set(&e, "%s",
			        gr.message ? gr.message : "a module did not run");
			goto fail;
		}
		gpu_probe_result_release(&gr);
	}
	if (gpu_probe_run(&job, &gr, &e) < 0)
		goto fail;
	const GpuProbeModuleResult *m0 = &gr.mods[0], *m1 = &gr.mods[1],
	                           *m2 = &gr.mods[2], *m3 = &gr.mods[3];
	if (gr.status != GPU_OK) {
		err_set(&e, "%s", gr.message ? gr.message : "a module did not run");
		goto fail;
	}
	if (m0->frame_len != m2->frame_len ||
	    memcmp(m0->frame, m2->frame, m0->frame_len)) {
		err_set(
		    &e,
		    "the instrumented original's frame differs from the original's: the "
		    "probes changed what the kernel computes");
		goto fail;
	}
	if (prof_analyse(&p->po, p->grid, p->block, m2->dump, m2->dump_len, &pro, &e) <
	        0 ||
	    prof_analyse(&p->ps, p->grid, p->block, m3->dump, m3->dump_len, &prs, &e) < 0)
		goto fail;
	bool same_frame = m1->frame_len == m0->frame_len &&
	                  !memcmp(m1->frame, m0->frame, m0->frame_len);
	double ov_o = overhead_pct(m0, m2), ov_s = overhead_pct(m1, m3);
	bool ov_met = overhead_met(ov_o) && overhead_met(ov_s);
	ProbeChange ch_o, ch_s;
	probe_change(m0, m2, p->mf.entry, &ch_o);
	probe_change(m1, m3, p->mf.entry, &ch_s);
	size_t nreads = p->po.plan.recs.v[0].vals.n;
	sb_reset(&sb);
	if (p->window.n)
		numlist_format(&p->window, &sb);
	window = xstrdup(p->window.n ? sb.p : "all");
	bool spill_flag = spills_more(m0, m1, p->mf.entry);
	uint32_t resolution = pro.resolution;
	if (prs.resolution && (!resolution || prs.resolution < resolution))
		resolution = prs.resolution;
	const char *layer = p->mf.layer ? p->mf.layer : p->layer;
	if (vr) {
		/* one variant of a list: what the ranking needs */
		const GpuProbeModuleResult *mr[4] = {m0, m1, m2, m3};
		for (int i = 0; i < 4; i++)
			vr->ms[i] = mr[i]->times.median_ms;
		vr->ov_o = ov_o;
		vr->ov_s = ov_s;
		vr->ch_o = ch_o;
		vr->ch_s = ch_s;
		vr->same_frame = same_frame;
		vr->source = xstrdup(p->source);
		vr->n = p->po.phases.n;
		vr->phase = xcalloc(vr->n + 1, sizeof *vr->phase);
		vr->orig = xcalloc(vr->n + 1, sizeof *vr->orig);
		vr->spl = xcalloc(vr->n + 1, sizeof *vr->spl);
		for (size_t i = 0; i < vr->n; i++) {
			vr->phase[i] = p->po.phases.v[i].phase;
			vr->orig[i] = phase_cycles(&pro.phases[i]);
			vr->spl[i] = phase_cycles(&prs.phases[i]);
		}
		vr->ok = true;
		rc = EXIT_OK;
		goto done;
	}
	const ProfResult *prs2[2] = {&pro, &prs};
	const unsigned char *plain_frames[2] = {m0->frame, m1->frame};
	static const char *const scheduling =
	    "probes can change the scheduling around them: ptxas may keep code from "
	    "crossing a read, or move code across it, and each read holds a register to "
	    "the exit";

	if (p->chart) {
		size_t n = p->po.phases.n;
		ChartBar *bars = xcalloc(n + 1, sizeof(ChartBar));
		for (size_t i = 0; i < n; i++) {
			snprintf(bars[i].label, sizeof bars[i].label, "%u",
			         p->po.phases.v[i].phase);
			bars[i].a =
			    pro.phases[i].phase.n ? pro.phases[i].phase.median : -1;
			bars[i].b =
			    prs.phases[i].phase.n ? prs.phases[i].phase.median : -1;
		}
		char title[256];
		snprintf(title, sizeof title,
		         "%s: median cycles per phase, original vs %s", layer, p->source);
		ChartSpec cs = {title, "original", "spliced", "phase", "cycles", bars, n};
		int crc = chart_bars_png(p->chart, &cs, &e);
		free(bars);
		if (crc < 0)
			goto fail;
	}

	if (p->json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "layer", layer);
		cJSON_AddStringToObject(root, "source", p->source);
		cJSON_AddStringToObject(root, "device", m0->device);
		cJSON_AddNumberToObject(root, "warps", (double)pro.warps);
		cJSON_AddNumberToObject(root, "blocks", (double)pro.blocks);
		cJSON_AddBoolToObject(root, "spliced_frame_is_original", same_frame);
		cJSON *k = cJSON_AddObjectToObject(root, "kernel_ms");
		const GpuProbeModuleResult *mr[4] = {m0, m1, m2, m3};
		static const char *const kn[4] = {"original", "spliced",
		                                  "original_probed", "spliced_probed"};
		for (int i = 0; i < 4; i++) {
			cJSON *t = cJSON_AddObjectToObject(k, kn[i]);
			cJSON_AddNumberToObject(t, "median", mr[i]->times.median_ms);
			cJSON_AddNumberToObject(t, "min", mr[i]->times.min_ms);
			cJSON_AddNumberToObject(t, "max", mr[i]->times.max_ms);
			cJSON_AddNumberToObject(t, "runs", mr[i]->times.n);
		}
		cJSON *ov = cJSON_AddObjectToObject(root, "overhead_percent");
		cJSON_AddNumberToObject(ov, "original", ov_o);
		cJSON_AddNumberToObject(ov, "spliced", ov_s);
		cJSON_AddNumberToObject(ov, "target", OVERHEAD_TARGET);
		cJSON_AddBoolToObject(ov, "met", ov_met);
		cJSON_AddStringToObject(ov, "window", window);
		cJSON_AddNumberToObject(ov, "reads", (double)nreads);
		cJSON *pc = cJSON_AddObjectToObject(root, "probes_changed_code");
		cJSON_AddItemToObject(pc, "original", probe_change_json(&ch_o, ov_o));
		cJSON_AddItemToObject(pc, "spliced", probe_change_json(&ch_s, ov_s));
		cJSON *cl = cJSON_AddObjectToObject(root, "clock");
		cJSON_AddStringToObject(cl, "register", "%clock64 (low 32 bits)");
		cJSON_AddNumberToObject(cl, "resolution_cycles", resolution);
		cJSON_AddNumberToObject(cl, "block_start_spread_ns", pro.block_spread_ns);
		cJSON_AddStringToObject(cl, "note", scheduling);
		cJSON *cm = cJSON_AddObjectToObject(root, "compiled");
		for (int i = 0; i < 4; i++)
			cJSON_AddItemToObject(cm, kn[i], attrs_json(mr[i], p->mf.entry));
		cJSON_AddBoolToObject(cm, "spliced_spills_where_original_does_not",
		                      spill_flag);
		cJSON *pj = cJSON_AddArrayToObject(root, "phases");
		for (size_t i = 0; i < p->po.phases.n; i++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddNumberToObject(x, "phase", p->po.phases.v[i].phase);
			cJSON *o = cJSON_AddObjectToObject(x, "original");
			cJSON_AddItemToObject(
			    o, "phase", stat_json(&pro.phases[i].phase, pro.kernel.mean));
			cJSON_AddItemToObject(
			    o, "epilogue",
			    stat_json(&pro.phases[i].epilogue, pro.kernel.mean));
			cJSON *s = cJSON_AddObjectToObject(x, "spliced");
			cJSON_AddItemToObject(
			    s, "phase", stat_json(&prs.phases[i].phase, prs.kernel.mean));
			cJSON_AddItemToObject(
			    s, "epilogue",
			    stat_json(&prs.phases[i].epilogue, prs.kernel.mean));
			const ProfStat *a = &pro.phases[i].phase,
			               *b = &prs.phases[i].phase;
			if (a->n && b->n && a->median > 0)
				cJSON_AddNumberToObject(x, "ratio",
				                        b->median / a->median);
			cJSON_AddItemToArray(pj, x);
		}
		cJSON *kc = cJSON_AddObjectToObject(root, "kernel_cycles");
		cJSON_AddItemToObject(kc, "original",
		                      stat_json(&pro.kernel, pro.kernel.mean));
		cJSON_AddItemToObject(kc, "spliced",
		                      stat_json(&prs.kernel, prs.kernel.mean));
		cJSON_AddNumberToObject(root, "unread_points_original", p->po.unread);
		cJSON_AddNumberToObject(root, "unread_points_spliced", p->ps.unread);
		cJSON_AddItemToObject(root, "sampling",
		                      profile_sampling_json(p, &samp, prs2, plain_frames));
		cmd_json_print(root, EXIT_OK); /* the one document (cmd/jsonout.h) */
		root = NULL;
	} else {
		printf("%s profile (%s): %llu warps in %llu blocks, %zu phases timed\n",
		       layer, p->source, (unsigned long long)pro.warps,
		       (unsigned long long)pro.blocks, p->po.phases.n);
		const ProbeChange *chs[2] = {&ch_o, &ch_s};
		const double ovs[2] = {ov_o, ov_s};
		for (int i = 0; i < 2; i++) {
			sb_reset(&sb);
			probe_change_text(chs[i], ovs[i], &sb);
			if (sb.n)
				printf("  CHANGED   %s: %s\n", i ? "spliced" : "original", sb.p);
		}
		printf("  probes    %zu clock reads, window %s%s\n", nreads, window,
		       p->window.n ? "" : " (every phase)");
		printf("  kernel    original %.4f ms, probed %.4f ms: overhead %+.1f%%\n",
		       m0->times.median_ms, m2->times.median_ms, ov_o);
		printf("            spliced  %.4f ms, probed %.4f ms: overhead %+.1f%% "
		       "(medians of %u runs)\n",
		       m1->times.median_ms, m3->times.median_ms, ov_s, p->runs);
		if (ov_met)
			printf("            overhead within the %.0f%% target (either way)\n",
			       OVERHEAD_TARGET);
		/* a probed kernel slower by more than the target, or faster by
		 * more: both are another program than the one timed above */
		if (ov_o > OVERHEAD_TARGET || ov_s > OVERHEAD_TARGET)
			printf("            OVERHEAD ABOVE THE %.0f%% TARGET: the figures below "
			       "are of a kernel the probes slowed (fewer points: --window)\n",
			       OVERHEAD_TARGET);
		if (ov_o < -OVERHEAD_TARGET || ov_s < -OVERHEAD_TARGET)
			printf("            PROBED KERNEL FASTER BY MORE THAN %.0f%%: the figures "
			       "below are of a kernel the probes changed (fewer points: "
			       "--window)\n",
			       OVERHEAD_TARGET);
		printf(
		    "  clock     %%clock64 (low 32 bits), resolution %u cycles (least "
		    "nonzero "
		    "difference of back-to-back reads, measured in the kernel); blocks "
		    "start over %.1f us (%%globaltimer)\n",
		    resolution, pro.block_spread_ns / 1000.0);
		printf("  note      %s; where ptxas moved code across a read is checked "
		       "on the SASS by scripts/sass-probe-check (--keep DIR writes the "
		       "modules)\n",
		       scheduling);
		const GpuProbeModuleResult *mr[4] = {m0, m1, m2, m3};
		static const char *const kn[4] = {"original", "spliced",
		                                  "original probed", "spliced probed"};
		for (int i = 0; i < 4; i++) {
			sb_reset(&sb);
			gpu_func_attrs_text(&mr[i]->attrs, &sb);
			printf("  %-9s %-16s %s\n", i ? "" : "compiled", kn[i], sb.p);
		}
		for (int i = 0; i < 4; i++) {
			GpuLogAttrs la;
			gpu_log_func_attrs(mr[i]->jit_log, p->mf.entry, &la);
			if (la.spill_stores || la.spill_loads)
				printf("  spills    %s: %s\n", kn[i], la.spill_line);
		}
		if (spill_flag)
			printf("  SPILLS    the spliced kernel spills where the original "
			       "does not\n");
		printf("  frame     spliced frame %s the original's\n",
		       same_frame ? "=" : "DIFFERS from");
		if (p->po.unread || p->ps.unread)
			printf("  unread    %u points of the original, %u of the spliced "
			       "module "
			       "(the first: %s)\n",
			       p->po.unread, p->ps.unread,
			       p->po.unread ? p->po.why.p : p->ps.why.p);
		printf("  cycles per warp over all warps: median [p10, p90], share of "
		       "the kernel\n");
		printf("  %-12s %-28s %-28s %s\n", "", "original", "spliced", "ratio");
		for (size_t i = 0; i < p->po.phases.n; i++) {
			const ProfilePhase *q = &p->po.phases.v[i];
			for (int ep = 0; ep < 2; ep++) {
				if (ep && !q->epilogue)
					continue;
				const ProfStat *a =
				    ep ? &pro.phases[i].epilogue : &pro.phases[i].phase;
				const ProfStat *b =
				    ep ? &prs.phases[i].epilogue : &prs.phases[i].phase;
				char name[32];
				snprintf(name, sizeof name, "%s %u",
				         ep ? "epilogue" : "phase", q->phase);
				sb_reset(&sb);
				stat_text(a, pro.kernel.mean, &sb);
				sb_reset(&sb2);
				stat_text(b, prs.kernel.mean, &sb2);
				printf("  %-12s %s %s ", name, sb.p, sb2.p);
				sb_reset(&sb);
				ratio_text(a, b, &sb);
				printf("%s\n", sb.p);
			}
		}
		sb_reset(&sb);
		stat_text(&pro.kernel, pro.kernel.mean, &sb);
		sb_reset(&sb2);
		stat_text(&prs.kernel, prs.kernel.mean, &sb2);
		printf("  %-12s %s %s ", "kernel", sb.p, sb2.p);
		sb_reset(&sb);
		ratio_text(&pro.kernel, &prs.kernel, &sb);
		printf("%s\n", sb.p);
		profile_sampling_text(p, &samp, prs2, plain_frames);
		if (m0->device[0])
			printf("  device    %s (sm_%d%d, driver %d)\n", m0->device,
			       m0->cc_major, m0->cc_minor, m0->driver_version);
		if (p->chart)
			printf("  chart     %s\n", p->chart);
		if (p->keep)
			printf("  kept      %s/\n", p->keep);
	}
	rc = EXIT_OK;
	goto done;
fail:
	cmd_fail("profile: %s%s%s%s", vr ? "variant " : "", vr ? vr->variant : "",
	         vr ? ": " : "", err_msg(&e));
	if (vr)
		vr->message = xstrdup(err_msg(&e));
	else if (p->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "layer", p->layer);
		cJSON_AddStringToObject(o, "status", "error");
		cJSON_AddStringToObject(o, "message", err_msg(&e));
		cmd_json_print(o, EXIT_ERROR);
	}
	rc = EXIT_ERROR;
done:
	cJSON_Delete(root);
	free(window);
	prof_sampled_release(&samp);
	prof_result_release(&pro);
	prof_result_release(&prs);
	gpu_probe_result_release(&gr);
	sb_release(&sb);
	sb_release(&sb2);
	for (int i = 0; i < 4; i++)
		sb_release(&p->red[i]);
	probe_result_release(&p->ro);
	probe_result_release(&p->rs);
	prof_plan_release(&p->po);
	prof_plan_release(&p->ps);
	if (p->ms)
		mod_free(p->ms);
	VEC_FREE(p->cuts);
	free(p->source);
	sb_release(&p->spliced);
	splice_result_release(&p->sr);
	splice_many_release(&p->sm);
	for (size_t i = 0; i < p->nsel; i++)
		rcp_release(&p->sel[i]);
	free(p->sel);
	rcp_release(&p->rcp);
	if (p->lm.m)
		cmd_unload_module(&p->lm);
	free(p->module_path);
	mf_release(&p->mf);
	err_release(&e);
	return rc;
}

int cmd_profile(int argc, char **argv)
{
	Prof pp, *p = &pp;
	memset(p, 0, sizeof pp);
	p->runs = 20;
	p->timeout = 120;
	p->sampling_period = 8;
	const Opt opts[] = {
	    OPT_PHASE(&p->phase, "the phase; its recipe: recipes/LAYER/phase-NN.json"),
	    OPT_STRING(0, "recipe", &p->recipe_opt, "FILE",
	               "the recipe (instead of the layer's)"),
	    OPT_STRING(0, "phases", &p->phases_opt, "LIST",
	               "those phases' recipes in one module (1-10,13,21-60)"),
	    OPT_STRING(0, "variant", &p->variant, "NAME[,NAME...]",
	               "the recipes phase-NN-NAME.json (phase-08-f16.json); several: "
	               "each profiled, the variants of each phase ranked"),
	    OPT_STRING(0, "module", &p->module_opt, "FILE",
	               "a spliced module to profile"),
	    OPT_CALLBACK(0, "window", &p->window, "LIST", opt_phase_list,
	                 "the phases timed (default: all; each point holds a register)"),
	    OPT_UINT(0, "runs", &p->runs, "N", 1, 100000,
	             "timed runs of each module (default 20)"),
	    OPT_STRING(0, "chart", &p->chart, "FILE.png",
	               "bars per phase, original vs spliced"),
	    OPT_STRING(0, "corpus", &p->corpus, "DIR", "the corpus folder"),
	    OPT_CALLBACK(0, "timeout", &p->timeout, "S", opt_seconds,
	                 "kill the launches after S seconds (default 120)"),
	    OPT_FLAG(0, "no-cache", &p->no_cache,
	             "neither read nor write the compiled-image cache"),
	    OPT_FLAG(0, "force", &p->force, "splice a cut the splicer would refuse"),
	    OPT_FLAG(0, "json", &p->json, "one JSON object, for CI"),
	    OPT_STRING(0, "keep", &p->keep, "DIR",
	               "write the modules and their read points into DIR"),
	    OPT_FLAG(0, "no-run", &p->no_run, "with --keep: stop before the GPU"),
	    OPT_FLAG(0, "sass", &p->sass,
	             "SASS instructions per phase and epilogue, by ptxas and CUPTI (no GPU)"),
	    OPT_FLAG(0, "sampling", &p->sampling,
	             "CUPTI PC sampling of the unmodified modules, or an error (default: "
	             "where libcupti loads)"),
	    OPT_FLAG(0, "no-sampling", &p->no_sampling, "the probes' profile alone"),
	    OPT_UINT(0, "sampling-period", &p->sampling_period, "LOG2", 5, 31,
	             "sample every 2^LOG2 cycles (default 8)"),
	    OPT_END(),
	};
	OptParse op = {.verb = "profile", .usage = usage, .opts = opts};
	int nargs = opt_parse(&op, argc, argv);
	int rc = EXIT_ERROR;
	if (nargs < 0) {
		rc = op.status;
		goto free_opts;
	}
	if ((rc = opt_args(&op, nargs, argv, 1, 1, "no layer given")))
		goto free_opts;
	p->layer = argv[0];
	if ((rc = opt_conflicts(&op, "module", "phase", "recipe", "phases", "variant",
	                        "force", NULL)) ||
	    (rc = opt_conflicts(&op, "phases", "phase", "recipe", NULL)) ||
	    (rc = opt_conflict(&op, "variant", "recipe")) ||
	    (rc = !strchr(p->variant ? p->variant : "", ',') && cmd_check_variant(p->variant)
	              ? EXIT_ERROR
	              : 0))
		goto free_opts;
	if ((rc = opt_conflicts(&op, "sampling", "no-sampling", "sass", NULL)) ||
	    (rc = opt_conflicts(&op, "no-sampling", "sampling-period", "sass", NULL)))
		goto free_opts;
	if (p->sampling && strchr(p->variant ? p->variant : "", ',')) {
		rc = opt_usage_error(&op, "a list of variants is profiled by the probes: "
		                          "'--sampling' takes one variant");
		goto free_opts;
	}
	if (p->no_run && !p->keep) {
		rc = opt_usage_error(&op, "option '--no-run' needs '--keep DIR'");
		goto free_opts;
	}
	if (!p->phase && !p->recipe_opt && !p->phases_opt && !p->module_opt) {
		rc = opt_usage_error(&op,
		                     "name the spliced module: --phase N, --recipe FILE, "
		                     "--phases LIST or --module FILE");
		goto free_opts;
	}
	if (strchr(p->variant ? p->variant : "", ','))
		rc = profile_variants(p, &op);
	else
		rc = profile_body(p, NULL);
free_opts:
	numlist_release(&p->window);
	return rc;
}
