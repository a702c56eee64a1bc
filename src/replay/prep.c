/*
 * prep.c - a cut made ready for replay: the recipe spliced into the
 * original alone, both entries' dataflow, the cut's statement range in
 * each module and the launch that runs the entry.
 *
 * Decisions:
 *  - The splice is splice_many's with one recipe, as the main job and
 *    bisect splice, so the spliced cut replayed is the one they check.
 *  - The spliced cut is the statements inside the region the splice wrote
 *    (SpliceResult.region_off/len in the output): the template's own
 *    statements, whatever their number.
 *  - One launch shape: the replay module is launched as the entry is, and
 *    a manifest that launches the entry with two grids or blocks has no one
 *    state to take (refused, as bisect refuses it).
 */
#include "replay/replay.h"

#include "base/sha256.h"
#include "ptx/parse.h"
#include "splice/multi.h"

#include <stdlib.h>
#include <string.h>

int replay_prepare(const Manifest *mf, const Module *mo, const Recipe *r,
                   const char *ptx_root, ReplayCut *c, Err *e)
{
	memset(c, 0, sizeof *c);
	ReplayRequest *q = &c->req;
	q->mf = mf;
	q->mo = mo;
	sha256_hex(mo->src, mo->len, c->sha256);
	const char *entry = mf->entry;
	q->fo = mod_func_find(mo, str_c(entry));
	if (!q->fo || (q->fo->flags & FNF_DECL))
		return err_set(e, "%s: no function '%s' with a body", mo->name, entry);
	for (size_t i = 0; i < mf->nlaunches; i++) {
		const MfLaunch *l = &mf->launches[i];
		if (strcmp(l->entry, entry))
			continue;
		if (q->launch && (memcmp(q->launch->grid, l->grid, sizeof l->grid) ||
		                  memcmp(q->launch->block, l->block, sizeof l->block)))
			return err_set(
			    e,
			    "%s: '%s' is launched with different grids or blocks "
			    "(launches[%zu]): one state cannot hold them",
			    mf->path, entry, i);
		q->launch = l;
	}
	if (!q->launch)
		return err_set(e, "%s: no launch runs '%s'", mf->path, entry);

	const Recipe *rp = r;
	SpliceManyRequest sq = {mo, entry, &rp, 1, ptx_root, false};
	SpliceManyResult sm;
	memset(&sm, 0, sizeof sm);
	if (splice_many(&sq, &sm, e) < 0) {
		splice_many_release(&sm);
		return -1;
	}
	const SpliceResult *cut = &sm.cuts[0];
	q->first = cut->first;
	q->last = cut->last;
	c->phase = r->cut == CUT_PHASE ? r->phase : 0;
	c->template_name = xstrdup(cut->template_name ? cut->template_name : "?");
	size_t r0 = cut->region_off, r1 = cut->region_off + cut->region_len;
	c->spliced = sm.text;
	memset(&sm.text, 0, sizeof sm.text);
	splice_many_release(&sm);

	c->ms = ptx_parse("spliced", c->spliced.p, c->spliced.n, e);
	if (!c->ms)
		return -1;
	q->ms = c->ms;
	q->fs = mod_func_find(c->ms, str_c(entry));
	if (!q->fs || (q->fs->flags & FNF_DECL))
		return err_set(e, "the spliced module has no function '%s' with a body",
		               entry);
	bool any = false;
	for (uint32_t i = 0; i < q->fs->nstmt; i++) {
		const Stmt *s = func_stmt(c->ms, q->fs, i);
		if (s->off < r0 || s->off >= r1)
			continue;
		if (!any)
			q->s_first = i;
		q->s_last = i;
		any = true;
	}
	if (!any)
		return err_set(
		    e,
		    "the spliced cut of s%u-s%u holds no statement: nothing to "
		    "replay",
		    q->first, q->last);
	c->dfo = df_build(mo, q->fo, e);
	if (!c->dfo)
		return -1;
	c->dfs = df_build(c->ms, q->fs, e);
	if (!c->dfs)
		return -1;
	q->s_off = r0;
	q->s_len = r1 - r0;
	q->dfo = c->dfo;
	q->dfs = c->dfs;
	return 0;
}

void replay_cut_release(ReplayCut *c)
{
	if (c->dfo)
		df_free(c->dfo);
	if (c->dfs)
		df_free(c->dfs);
	if (c->ms)
		mod_free(c->ms);
	sb_release(&c->spliced);
	free(c->template_name);
	memset(c, 0, sizeof *c);
}
