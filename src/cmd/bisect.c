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

/* OptCallback for a phase list (1-10,13,21-60): o->value is a NumList. */
static int opt_phase_list(const Opt *o, const char *word, Err *e)
{
	NumList *l = o->value;
	numlist_release(l);
	return numlist_parse(word, 1, UINT32_MAX, l, e);
}

/* OptCallback for a size: N, NK, NM, NG (powers of 1024); o->value is a uint64_t. */
static int opt_size(const Opt *o, const char *word, Err *e)
{
	char *end;
	unsigned long long v = strtoull(word, &end, 10);
	uint64_t mul = 1;
	if (end == word)
		return err_set(e, "'%s' is not a size (N, NK, NM or NG)", word);
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1ull << 20, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1ull << 30, end++;
	if (*end || !v || v > (1ull << 50) / mul)
		return err_set(e, "'%s' is not a size (N, NK, NM or NG)", word);
	*(uint64_t *)o->value = v * mul;
	return 0;
}

typedef struct {
	uint32_t first, last;
	uint32_t phase; /* the recipe's phase, 0 for a statement range */
	char *recipe;
	char *template_name;
	size_t recipe_index; /* into the recipes being spliced */
} Cut;

typedef struct {
	/* options */
	const char *layer, *recipe_opt, *module_opt, *oracle_opt, *corpus, *keep;
	unsigned phase;
	NumList phases, window;
	ProbeAt at;
	ProbeRegs regs;
	uint64_t dump_limit; /* --dump-limit, 0: what the device and the host allow */
	double timeout;
	bool json, no_cache, force, serial;
	/* the layer and the two modules */
	Manifest mf;
	char *module_path;
	LoadedModule lm;
	const Func *fo;
	StrBuf spliced;
	Module *ms;
	const Func *fs;
	VEC(Cut) cuts;
	char *mode_text; /* what the spliced module is, for the output */
	/* the probes */
	unsigned grid[3], block[3];
	size_t nphases;
	ProbePlan po, ps; /* the same records in the original and the spliced module */
	ProbeIndexVec dropped;
	size_t unprobed;     /* points a probe cannot go to */
	StrBuf unprobed_why; /* the first one's reason */
	size_t planned;      /* records before the size limit */
	uint64_t full_bytes; /* the dump of all planned records */
	StrBuf left_out;     /* the phases the size limit left out */
	ProbeResult ro, rs;
	StrBuf red_o, red_s;
	uint32_t nmatched;
	/* the device's memory, asked on a thread while the host prepares */
	pthread_t mem_thread;
	bool mem_started;
	int mem_rc;
	Err mem_err;
	uint64_t dev_free, dev_total;
	char dev_name[128];
	uint64_t limit;        /* the limit applied */
	const char *limit_why; /* where it comes from, for the output */
	/* times */
	double t_prep;
} Bisect;

/* ---- the spliced module ------------------------------------------------------- */

static int cmp_cut_desc(const void *a, const void *b)
{
	const Cut *x = a, *y = b;
	return x->first < y->first ? 1 : x->first > y->first ? -1 : 0;
}

/* The cut of recipe r in the original, before any splice. */
static int recipe_range(const Bisect *b, const Recipe *r, Cut *c, Err *e)
{
	if (r->cut == CUT_STMTS) {
		if (r->last >= b->fo->nstmt || r->first > r->last)
			return err_set(e, "%s: cut s%u..s%u is not inside '%s'", r->path,
			               r->first, r->last, b->mf.entry);
		c->first = r->first;
		c->last = r->last;
		return 0;
	}
	size_t n = 0;
	if (ana_phase_range(b->lm.m, b->fo, 0, r->phase, r->with_epilogue, &c->first,
	                    &c->last, &n) < 0)
		return err_set(e, "%s: cut phase %u: '%s' has %zu mma phases", r->path,
		               r->phase, b->mf.entry, n);
	c->phase = r->phase;
	return 0;
}

/*
 * Splices the recipes rpaths[0..n) into the original, the cut furthest
 * down first: a splice moves only the statements after its cut, so each
 * recipe's statement numbers (and phase numbers) still hold for the ones
 * above it.  The cuts go into b->cuts, the text into b->spliced.
 */
static int splice_recipes(Bisect *b, char **rpaths, size_t n, Err *e)
{
	Recipe *rs = xcalloc(n + 1, sizeof(Recipe));
	int rc = -1;
	for (size_t i = 0; i < n; i++) {
		if (rcp_load(rpaths[i], &rs[i], e) < 0)
			goto out;
		Cut c = {0};
		if (recipe_range(b, &rs[i], &c, e) < 0)
			goto out;
		c.recipe = xstrdup(rpaths[i]);
		c.recipe_index = i;
		VEC_PUSH(b->cuts, c);
	}
	qsort(b->cuts.v, b->cuts.n, sizeof(Cut), cmp_cut_desc);
	for (size_t i = 1; i < b->cuts.n; i++)
		if (b->cuts.v[i].last >= b->cuts.v[i - 1].first) {
			err_set(e,
			        "the cuts of '%s' (s%u..s%u) and '%s' (s%u..s%u) overlap",
			        b->cuts.v[i].recipe, b->cuts.v[i].first,
			        b->cuts.v[i].last, b->cuts.v[i - 1].recipe,
			        b->cuts.v[i - 1].first, b->cuts.v[i - 1].last);
			goto out;
		}
	const Module *cur = b->lm.m;
	Module *owned = NULL;
	StrBuf text = STRBUF_INIT;
	for (size_t i = 0; i < b->cuts.n; i++) {
		Cut *c = &b->cuts.v[i];
		const Recipe *r = &rs[c->recipe_index];
		SpliceResult sr;
		memset(&sr, 0, sizeof sr);
		SpliceRequest req = {
		    .module = cur, .entry = b->mf.entry, .recipe = r, .force = b->force};
		if (splice_run(&req, &sr, e) < 0) {
			splice_result_release(&sr);
			if (owned)
				mod_free(owned);
			sb_release(&text);
			goto out;
		}
		if (sr.first != c->first || sr.last != c->last) {
			err_set(e,
			        "%s: the cut moved while splicing (s%u..s%u, expected "
			        "s%u..s%u)",
			        r->path, sr.first, sr.last, c->first, c->last);
			splice_result_release(&sr);
			if (owned)
				mod_free(owned);
			sb_release(&text);
			goto out;
		}
		c->template_name = xstrdup(sr.template_name ? sr.template_name : "?");
		if (owned)
			mod_free(owned);
		owned = NULL;
		sb_release(&text);
		text = sr.text;
		memset(&sr.text, 0, sizeof sr.text);
		splice_result_release(&sr);
		if (i + 1 < b->cuts.n) {
			owned = ptx_parse("spliced", text.p, text.n, e);
			if (!owned) {
				sb_release(&text);
				goto out;
			}
			cur = owned;
		}
	}
	b->spliced = text;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		rcp_release(&rs[i]);
	free(rs);
	return rc;
}

static int make_spliced(Bisect *b, Err *e)
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
		char **paths = xcalloc(b->phases.n + 1, sizeof(char *));
		rc = 0;
		for (size_t i = 0; i < b->phases.n && !rc; i++) {
			paths[i] = layout_recipe_file(dir, b->phases.v[i], false);
			if (access(paths[i], F_OK) != 0)
				rc = err_set(e,
				             "layer '%s' has no recipe for phase %u: "
				             "'%s' does not exist",
				             b->layer, b->phases.v[i], paths[i]);
		}
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
			rpath = layout_recipe_file(dir, b->phase, false);
			free(dir);
			if (access(rpath, F_OK) != 0) {
				err_set(e,
				        "layer '%s' has no recipe for phase %u: '%s' "
				        "does not exist\n"
				        "  (write one with 'd4r-splice recipe new %s "
				        "--phase %u')",
				        b->layer, b->phase, rpath, b->layer, b->phase);
				free(rpath);
				return -1;
			}
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

static void plan_phases(const ProbePlan *p, size_t from, size_t to, StrBuf *sb);

static const char *size_text(uint64_t n, char buf[32]);

static void *mem_query(void *p)
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
		         size_text(host * 8, s1));
	} else {
		b->limit = dev;
		snprintf(why, sizeof why,
		         "half of what the device's free %s of %s leaves",
		         size_text(b->dev_free, s1), size_text(b->dev_total, s2));
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

static int plan_probes(Bisect *b, Err *e)
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
			err_set(e, "--window: '%s' has %zu phases, there is no phase %u",
			        b->mf.entry, pl.n, b->window.v[i]);
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
			        size_text(b->po.recs.v[0].bytes * warps, s1),
			        size_text(b->limit, s2), b->limit_why);
			goto out;
		}
		plan_phases(&b->po, k, b->po.recs.n, &b->left_out);
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

static void note_o(void *ctx, unsigned line, StrBuf *out)
{
	const Bisect *b = ctx;
	probe_where(&b->ro, &b->po, "original", line, out);
}

static void note_s(void *ctx, unsigned line, StrBuf *out)
{
	const Bisect *b = ctx;
	probe_where(&b->rs, &b->ps, "spliced", line, out);
}

/* ---- output ----------------------------------------------------------------------- */

/* "1.5 GB", "12.3 MB", "4.0 KB", "512 bytes" */
static const char *size_text(uint64_t n, char buf[32])
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

/* The phases a plan's records belong to, as a list. */
static void plan_phases(const ProbePlan *p, size_t from, size_t to, StrBuf *sb)
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
	b->mem_started = pthread_create(&b->mem_thread, NULL, mem_query, b) == 0;
	if (!b->mem_started)
		mem_query(b);
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
	if (make_spliced(b, &e) < 0 || plan_probes(b, &e) < 0)
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
	    {"original", b->red_o.p, b->red_o.n, b->ro.symbol, dump_bytes, note_o, b},
	    {"spliced", b->red_s.p, b->red_s.n, b->rs.symbol, dump_bytes, note_s, b},
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
		       size_text(b->po.warp_bytes, s1), (unsigned long long)warps,
		       size_text(dump_bytes, s2));
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
			plan_phases(&b->po, 0, b->po.recs.n, &sb);
			char s3[32], s4[32];
			printf("  window    phases %s only: the dump of all %zu records "
			       "would take %s, over "
			       "the limit of %s (%s); the rest: --window %s\n",
			       sb.p ? sb.p : "-", b->planned,
			       size_text(b->full_bytes, s3), size_text(b->limit, s4),
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
				plan_phases(&b->po, 0, (size_t)first, &sb);
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
