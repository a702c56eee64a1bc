/*
 * bisect_prep.c - what `d4r-splice bisect` prepares before the GPU: the
 * spliced module (from the recipes, the phases' recipes or --module) and
 * the probe plans of the original and the spliced module, the same records
 * at the same logical points, within the dump's size limit (bisect.c's
 * essay has the decisions).
 */
#include "bisect_internal.h"

#include "base/file.h"
#include "base/layout.h"
#include "gpu/layer.h"
#include "ptx/parse.h"
#include "splice/multi.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the spliced module ------------------------------------------------------- */

/*
 * Splices the recipes rpaths[0..n) into the original as one module, as the
 * main job's --phases does (splice_many: each recipe's statement numbers
 * are the original's, overlaps and dependencies between cuts refused).
 * The cuts go into b->cuts, the furthest down first; the text into
 * b->spliced.
 */
static int splice_recipes(Bisect *b, char **rpaths, size_t n, Err *e)
{
	Recipe *rs = xcalloc(n + 1, sizeof(Recipe));
	const Recipe **rp = xcalloc(n + 1, sizeof(Recipe *));
	SpliceManyResult sm;
	memset(&sm, 0, sizeof sm);
	size_t loaded = 0;
	int rc = -1;
	for (; loaded < n; loaded++) {
		if (rcp_load(rpaths[loaded], &rs[loaded], e) < 0)
			goto out;
		rp[loaded] = &rs[loaded];
		/* --phase N --recipe FILE: FILE cuts phase N (b->phase is 0
		 * with --phases) */
		if (splice_recipe_phase_check(&rs[loaded], b->phase, e) < 0) {
			loaded++;
			goto out;
		}
	}
	SpliceManyRequest req = {b->lm.m, b->mf.entry, rp, n, NULL, b->force};
	if (splice_many(&req, &sm, e) < 0)
		goto out;
	for (size_t i = sm.n; i-- > 0;) {
		const SpliceResult *r = &sm.cuts[i];
		const Recipe *rcp = sm.recipes[i];
		Cut c = {r->first, r->last, rcp->cut == CUT_PHASE ? rcp->phase : 0,
		         xstrdup(rcp->path),
		         xstrdup(r->template_name ? r->template_name : "?")};
		VEC_PUSH(b->cuts, c);
	}
	b->spliced = sm.text;
	memset(&sm.text, 0, sizeof sm.text);
	rc = 0;
out:
	splice_many_release(&sm);
	for (size_t i = 0; i < loaded; i++)
		rcp_release(&rs[i]);
	free(rs);
	free(rp);
	return rc;
}

int bisect_make_spliced(Bisect *b, Err *e)
{
	StrBuf mt = STRBUF_INIT;
	int rc = -1;
	if (b->module_opt) {
		char *data;
		size_t n;
		if (read_file(b->module_opt, &data, &n, e) < 0)
			return -1;
		b->spliced.p = data;
		b->spliced.n = b->spliced.cap = n;
		sb_addf(&mt, "module %s", b->module_opt);
		rc = 0;
	} else if (b->phases.n) {
		char *dir = layout_dir_of(b->mf.path);
		LayerRecipes lr = {b->layer, dir, b->corpus, mf_layout_layer};
		char **paths = xcalloc(b->phases.n + 1, sizeof(char *));
		rc = 0;
		for (size_t i = 0; i < b->phases.n && !rc; i++)
			rc = splice_phase_recipe(&lr, b->phases.v[i], NULL, &paths[i], e);
		if (!rc)
			rc = splice_recipes(b, paths, b->phases.n, e);
		for (size_t i = 0; i < b->phases.n; i++)
			free(paths[i]);
		free(paths);
		free(dir);
		sb_adds(&mt, "recipes of phases ");
		numlist_format(&b->phases, &mt);
	} else {
		char *rpath;
		if (b->recipe_opt)
			rpath = xstrdup(b->recipe_opt);
		else {
			char *dir = layout_dir_of(b->mf.path);
			LayerRecipes lr = {b->layer, dir, b->corpus, mf_layout_layer};
			int prc = splice_phase_recipe(&lr, b->phase, NULL, &rpath, e);
			free(dir);
			if (prc < 0)
				return -1;
		}
		rc = splice_recipes(b, &rpath, 1, e);
		sb_addf(&mt, "recipe %s", rpath);
		free(rpath);
	}
	b->mode_text = mt.p ? mt.p : xstrdup("");
	if (rc < 0)
		return -1;
	b->ms = ptx_parse(b->module_opt ? b->module_opt : "spliced", b->spliced.p,
	                  b->spliced.n, e);
	if (!b->ms)
		return -1;
	b->fs = mod_func_find(b->ms, str_c(b->mf.entry));
	if (!b->fs || (b->fs->flags & FNF_DECL))
		return err_set(e, "the spliced module has no function '%s' with a body",
		               b->mf.entry);
	return 0;
}

/* ---- the probes ------------------------------------------------------------------- */

void *bisect_mem_query(void *p)
{
	Bisect *b = p;
	b->mem_rc = gpu_probe_device_memory(0, &b->dev_free, &b->dev_total, b->dev_name,
	                                    &b->mem_err);
	return NULL;
}

/*
 * The most one module's dump may take: --dump-limit, else what two dumps
 * at once leave of the device's free memory (less the layer's buffers and
 * arrays twice, and 512 MB for the driver and the code), and no more than
 * an eighth of the host's memory (the dumps cross a pipe and are held
 * while they are compared).
 */
static int dump_limit(Bisect *b, Err *e)
{
	static char why[160];
	if (b->mem_started) {
		pthread_join(b->mem_thread, NULL);
		b->mem_started = false;
		if (b->mem_rc < 0)
			return err_set(e, "%s", err_msg(&b->mem_err));
	}
	if (b->dump_limit) {
		b->limit = b->dump_limit;
		b->limit_why = "--dump-limit";
		return 0;
	}
	uint64_t layer = 0;
	for (size_t i = 0; i < b->mf.nbuffers; i++)
		layer += b->mf.buffers[i].size;
	for (size_t i = 0; i < b->mf.narrays; i++)
		layer += mf_array_bytes(&b->mf.arrays[i]);
	uint64_t keep = 2 * layer + (512ull << 20);
	uint64_t dev = b->dev_free > keep ? (b->dev_free - keep) / 2 : 0;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t host = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 8 : dev;
	char s1[32], s2[32];
	if (host < dev) {
		b->limit = host;
		snprintf(why, sizeof why, "an eighth of the host's %s",
		         bisect_size_text(host * 8, s1));
	} else {
		b->limit = dev;
		snprintf(why, sizeof why,
		         "half of what the device's free %s of %s leaves",
		         bisect_size_text(b->dev_free, s1),
		         bisect_size_text(b->dev_total, s2));
	}
	b->limit_why = why;
	return 0;
}

static bool cut_end(const Bisect *b, uint32_t at)
{
	for (size_t i = 0; i < b->cuts.n; i++)
		if (b->cuts.v[i].last == at)
			return true;
	return false;
}

int bisect_plan_probes(Bisect *b, Err *e)
{
	const Module *m = b->lm.m;
	PhaseList pl = {0};
	ana_phase_find(m, b->fo, 0, &pl);
	b->nphases = pl.n;
	int rc = -1;
	ProbePlan all = {0};
	Dataflow *df = NULL;
	if (!pl.n) {
		err_set(e, "'%s' has no mma phase to probe", b->mf.entry);
		goto out;
	}
	for (size_t i = 0; i < b->window.n; i++)
		if (b->window.v[i] > pl.n) {
			ana_phase_missing("--window", b->window.v[i],
			                  b->mf.layer ? b->mf.layer : b->layer, pl.n, e);
			goto out;
		}
	df = df_build(m, b->fo, e);
	if (!df)
		goto out;
	if (probe_plan_phases(df, &pl, b->window.n ? &b->window : NULL, b->at, b->regs,
	                      &all, e) < 0)
		goto out;
	/* a cut's end holds the registers the cut binds */
	size_t u = 0;
	for (size_t i = 0; i < all.recs.n; i++) {
		ProbeRecord *r = &all.recs.v[i];
		if (cut_end(b, r->at)) {
			for (size_t k = 0; k < r->vals.n; k++)
				free(r->vals.v[k].name);
			VEC_FREE(r->vals);
			continue;
		}
		all.recs.v[u++] = *r;
	}
	all.recs.n = u;
	for (size_t i = 0; i < b->cuts.n; i++) {
		const Cut *c = &b->cuts.v[i];
		if (probe_plan_range(df, c->first, c->last, PROBE_REGS_LIVE_OUT,
		                     PR_CUT_END, c->phase, &all, e) < 0)
			goto out;
	}
	probe_plan_sort(&all);

	/* carried over to the spliced module */
	uint32_t *match = NULL;
	probe_align(m, b->fo, b->ms, b->fs, &match, &b->nmatched);
	ProbeCut *pc = xcalloc(b->cuts.n + 1, sizeof(ProbeCut));
	for (size_t i = 0; i < b->cuts.n; i++) {
		pc[i].first = b->cuts.v[i].first;
		pc[i].last = b->cuts.v[i].last;
	}
	probe_plan_map(&all, match, b->fo->nstmt, b->fs->nstmt, pc, b->cuts.n, &b->po,
	               &b->ps, &b->dropped);
	free(pc);
	free(match);
	/* points a probe cannot go to (a statement sharing its line, a hidden
	 * register) are left out of both, and said */
	size_t u2 = 0;
	for (size_t i = 0; i < b->po.recs.n; i++) {
		Err ce = ERR_INIT;
		bool ok = probe_record_check(m, b->fo, &b->po.recs.v[i], &ce) == 0 &&
		          probe_record_check(b->ms, b->fs, &b->ps.recs.v[i], &ce) == 0;
		if (ok) {
			b->po.recs.v[u2] = b->po.recs.v[i];
			b->ps.recs.v[u2++] = b->ps.recs.v[i];
			err_release(&ce);
			continue;
		}
		if (!b->unprobed++)
			sb_adds(&b->unprobed_why, err_msg(&ce));
		err_release(&ce);
		ProbeRecord *pr[2] = {&b->po.recs.v[i], &b->ps.recs.v[i]};
		for (int k = 0; k < 2; k++) {
			for (size_t q = 0; q < pr[k]->vals.n; q++)
				free(pr[k]->vals.v[q].name);
			VEC_FREE(pr[k]->vals);
		}
	}
	b->po.recs.n = b->ps.recs.n = u2;
	if (!b->po.recs.n) {
		err_set(e,
		        "no probe point of the original has a counterpart in the spliced "
		        "module%s%s",
		        b->unprobed ? " that a probe can go to: " : "",
		        b->unprobed ? b->unprobed_why.p : "");
		goto out;
	}

	/* the launch that runs the entry, and the dump's size: a later launch
	 * overwrites what an earlier one stored, so the dump is the last one's
	 * (and launches of other shapes would store outside it: refused) */
	const MfLaunch *l = NULL;
	for (size_t i = 0; i < b->mf.nlaunches; i++) {
		const MfLaunch *li = &b->mf.launches[i];
		if (strcmp(li->entry, b->mf.entry))
			continue;
		if (l && (memcmp(l->grid, li->grid, sizeof l->grid) ||
		          memcmp(l->block, li->block, sizeof l->block))) {
			err_set(e,
			        "%s: '%s' is launched with different grids or blocks "
			        "(launches[%zu]): "
			        "one dump cannot hold them",
			        b->mf.path, b->mf.entry, i);
			goto out;
		}
		l = li;
	}
	if (!l) {
		err_set(e, "%s: no launch runs '%s'", b->mf.path, b->mf.entry);
		goto out;
	}
	memcpy(b->grid, l->grid, sizeof b->grid);
	memcpy(b->block, l->block, sizeof b->block);
	if (probe_plan_layout(&b->po, e) < 0 || probe_plan_layout(&b->ps, e) < 0)
		goto out;
	b->planned = b->po.recs.n;
	b->full_bytes = probe_dump_bytes(&b->po, b->grid, b->block);
	/* the window that fits: the first records */
	if (dump_limit(b, e) < 0)
		goto out;
	uint64_t warps = probe_grid_warps(b->grid, b->block);
	if (b->full_bytes > b->limit) {
		uint64_t sum = 0;
		size_t k = 0;
		while (k < b->po.recs.n &&
		       sum + b->po.recs.v[k].bytes * warps <= b->limit)
			sum += b->po.recs.v[k++].bytes * warps;
		if (!k) {
			char s1[32], s2[32];
			err_set(e,
			        "the first probe record alone needs %s, over the limit "
			        "of %s (%s)",
			        bisect_size_text(b->po.recs.v[0].bytes * warps, s1),
			        bisect_size_text(b->limit, s2), b->limit_why);
			goto out;
		}
		bisect_plan_phases(&b->po, k, b->po.recs.n, &b->left_out);
		ProbePlan *pp[2] = {&b->po, &b->ps};
		for (int s = 0; s < 2; s++) {
			for (size_t i = k; i < pp[s]->recs.n; i++) {
				for (size_t q = 0; q < pp[s]->recs.v[i].vals.n; q++)
					free(pp[s]->recs.v[i].vals.v[q].name);
				VEC_FREE(pp[s]->recs.v[i].vals);
			}
			pp[s]->recs.n = k;
			if (probe_plan_layout(pp[s], e) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	probe_plan_release(&all);
	phases_release(&pl);
	if (df)
		df_free(df);
	return rc;
}

void bisect_note_o(void *ctx, unsigned line, StrBuf *out)
{
	const Bisect *b = ctx;
	probe_where(&b->ro, &b->po, "original", line, out);
}

void bisect_note_s(void *ctx, unsigned line, StrBuf *out)
{
	const Bisect *b = ctx;
	probe_where(&b->rs, &b->ps, "spliced", line, out);
}

/* ---- text shared with the output ------------------------------------------- */

/* "1.5 GB", "12.3 MB", "4.0 KB", "512 bytes" */
const char *bisect_size_text(uint64_t n, char buf[32])
{
	if (n >= (1ull << 30))
		snprintf(buf, 32, "%.1f GB", n / 1073741824.0);
	else if (n >= 1048576)
		snprintf(buf, 32, "%.1f MB", n / 1048576.0);
	else if (n >= 1024)
		snprintf(buf, 32, "%.1f KB", n / 1024.0);
	else
		snprintf(buf, 32, "%llu bytes", (unsigned long long)n);
	return buf;
}

/* The phases a plan's records belong to, as a list. */
void bisect_plan_phases(const ProbePlan *p, size_t from, size_t to, StrBuf *sb)
{
	NumList l = {0};
	for (size_t i = from; i < to && i < p->recs.n; i++)
		if (p->recs.v[i].phase && !numlist_has(&l, p->recs.v[i].phase)) {
			VEC_PUSH(l, p->recs.v[i].phase);
			for (size_t j = l.n - 1; j && l.v[j] < l.v[j - 1]; j--) {
				uint32_t t = l.v[j];
				l.v[j] = l.v[j - 1];
				l.v[j - 1] = t;
			}
		}
	numlist_format(&l, sb);
	numlist_release(&l);
}
