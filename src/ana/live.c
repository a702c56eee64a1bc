/*
 * live.c - liveness and reaching definitions in one function.
 *
 * Liveness is solved register by register, and only for the registers a
 * query asks about (the phase locator asks about none, a cut about the
 * registers it touches): from the blocks that read a register before
 * killing it, backwards through predecessors until a killing block (see
 * solve_reg); the result is a word bitset over blocks per register.
 * Reaching definitions are answered on demand: a walk back inside the
 * block, then, if no killing definition was found, a search back over
 * predecessor blocks whose result is memoised per (block, register).  That
 * keeps df_build linear and makes the common query (straight-line
 * tensor-core code: the definition is in the same block) a binary search.
 * The memo keeps at most two definitions per (block, register); the whole
 * set, for the few uses whose every definition matters (an accumulator at
 * a loop head), is df_reaching_defs's walk, not memoised.
 *
 * Decisions (documented for the users of ana.h):
 *  - The function entry counts as a definition for reaching definitions: a
 *    value defined on one path and undefined on another is DF_DEF_MANY.
 *  - A guarded definition reaches past itself together with the one
 *    before it (dataflow.c: it does not kill).
 */
#include "df_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- liveness ------------------------------------------------------------ */

/*
 * Liveness, one register at a time: every block where the register is read
 * before any killing definition is live-in; from there the register is
 * live-out of each predecessor, and live-in there too unless that block
 * kills it, and so on backwards.  The work is proportional to the size of
 * the live sets (most registers live in a few blocks), not to blocks x
 * registers x iterations as the bitset fixpoint would be on functions with
 * a thousand blocks and ten thousand registers.  The results are still
 * stored as one bitset over blocks per register.
 */
static bool block_kills(const Dataflow *df, uint32_t b, uint32_t reg)
{
	uint32_t lo = df->rkill_off[reg], hi = df->rkill_off[reg + 1];
	uint32_t p = lower_bound(df->rkill, lo, hi, df->blk_start[b]);
	return p < hi && df->rkill[p] < df->blk_start[b + 1];
}

/* Solves liveness of one register, the first time a query needs it: the
 * phase locator never asks, and a cut asks about the few hundred registers
 * it touches, so most registers of a large function are never solved. */
static void solve_reg(Dataflow *df, uint32_t r)
{
	df_need_reg(df, r);
	if (!df->live_in) {
		size_t sz = (size_t)df->nbuilt * df->words;
		df->live_in = xcalloc(sz ? sz : 1, sizeof(uint64_t));
		df->live_out = xcalloc(sz ? sz : 1, sizeof(uint64_t));
		df->solved = xcalloc((df->nbuilt + 63) / 64 + 1, sizeof(uint64_t));
	}
	if (bit_get(df->solved, r))
		return;
	bit_set(df->solved, r);
	uint32_t W = df->words;
	uint64_t *in = df->live_in + (size_t)r * W, *out = df->live_out + (size_t)r * W;
	/* upward-exposed uses: walk uses and kills of r in statement order */
	uint32_t u = df->ruse_off[r], ue = df->ruse_off[r + 1];
	uint32_t k = df->rkill_off[r], ke = df->rkill_off[r + 1];
	uint32_t lastb = UINT32_MAX;
	df->lwork.n = 0;
	for (; u < ue; u++) {
		uint32_t st = df->ruse[u], b = df->blk_of[st];
		if (b == lastb)
			continue;
		lastb = b;
		/* a kill in b strictly before this (first) use of b hides it */
		while (k < ke && df->rkill[k] < df->blk_start[b])
			k++;
		if (k < ke && df->rkill[k] < st)
			continue;
		if (!bit_get(in, b)) {
			bit_set(in, b);
			VEC_PUSH(df->lwork, b);
		}
	}
	while (df->lwork.n) {
		uint32_t b = df->lwork.v[--df->lwork.n];
		for (uint32_t i = df->pred_off[b]; i < df->pred_off[b + 1]; i++) {
			uint32_t pb = df->pred[i];
			if (bit_get(out, pb))
				continue;
			bit_set(out, pb);
			if (!bit_get(in, pb) && !block_kills(df, pb, r)) {
				bit_set(in, pb);
				VEC_PUSH(df->lwork, pb);
			}
		}
	}
}

/* The live-in / live-out bitset over blocks of reg, solved on demand. */
static const uint64_t *live_set(Dataflow *df, uint32_t reg, bool out)
{
	solve_reg(df, reg);
	return (out ? df->live_out : df->live_in) + (size_t)reg * df->words;
}

/* ---- reaching definitions ------------------------------------------------ */

static void reach_add(Reach *r, uint32_t d)
{
	if (r->n == 0) {
		r->n = 1;
		r->min = r->max = d;
		return;
	}
	if (r->n == 1 && d == r->min)
		return;
	if (d == r->min || d == r->max) {
		return;
	}
	r->n = 2;
	if (d < r->min)
		r->min = d;
	if (d > r->max)
		r->max = d;
}

static void reach_merge(Reach *r, const Reach *o)
{
	if (o->n >= 1)
		reach_add(r, o->min);
	if (o->n >= 1 && o->max != o->min)
		reach_add(r, o->max);
	if (o->n >= 2)
		r->n = 2;
	r->entry |= o->entry;
}

/* Definitions of reg in [from, to) walking backwards from to: adds them to
 * r until a killing one; returns true if one killed. */
static bool scan_back(const Dataflow *df, uint32_t reg, uint32_t from, uint32_t to, Reach *r)
{
	uint32_t lo = df->rdef_off[reg], hi = df->rdef_off[reg + 1];
	uint32_t p = lower_bound(df->rdef, lo, hi, to);
	while (p > lo && df->rdef[p - 1] >= from) {
		p--;
		reach_add(r, df->rdef[p]);
		if (df->rdef_kill[p])
			return true;
	}
	return false;
}

static MemoEnt *memo_slot(Dataflow *df, uint64_t key)
{
	uint32_t mask = df->memocap - 1;
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
	while (df->memo[h].key && df->memo[h].key != key)
		h = (h + 1) & mask;
	return &df->memo[h];
}

static void memo_put(Dataflow *df, uint64_t key, const Reach *r)
{
	if ((df->memon + 1) * 2 > df->memocap) {
		uint32_t oldcap = df->memocap;
		MemoEnt *old = df->memo;
		df->memocap = oldcap ? oldcap * 2 : 256;
		df->memo = xcalloc(df->memocap, sizeof(MemoEnt));
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i].key)
				*memo_slot(df, old[i].key) = old[i];
		free(old);
	}
	MemoEnt *e = memo_slot(df, key);
	if (!e->key)
		df->memon++;
	e->key = key;
	e->n = r->n;
	e->min = r->min;
	e->max = r->max;
	e->entry = r->entry;
}

/* Definitions of reg reaching the entry of block b. */
static Reach block_entry_reach(Dataflow *df, uint32_t b, uint32_t reg)
{
	uint64_t key = (((uint64_t)b << 32) | reg) + 1;
	if (df->memocap) {
		MemoEnt *e = memo_slot(df, key);
		if (e->key) {
			Reach r = {e->n, e->min, e->max, e->entry != 0};
			return r;
		}
	}
	Reach r = {0};
	uint32_t ep = df_next_epoch(df);
	df->work.n = 0;
	if (b == 0)
		r.entry = true;
	for (uint32_t i = df->pred_off[b]; i < df->pred_off[b + 1]; i++) {
		uint32_t p = df->pred[i];
		if (df->mark[p] != ep) {
			df->mark[p] = ep;
			VEC_PUSH(df->work, p);
		}
	}
	while (df->work.n) {
		uint32_t p = df->work.v[--df->work.n];
		if (scan_back(df, reg, df->blk_start[p], df->blk_start[p + 1], &r))
			continue;
		if (p == 0)
			r.entry = true;
		for (uint32_t i = df->pred_off[p]; i < df->pred_off[p + 1]; i++) {
			uint32_t q = df->pred[i];
			if (df->mark[q] != ep) {
				df->mark[q] = ep;
				VEC_PUSH(df->work, q);
			}
		}
	}
	memo_put(df, key, &r);
	return r;
}

/* All definitions of reg reaching the use at stmt. */
Reach df_reach(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	Reach r = {0};
	if (reg >= df->ndef_regs)
		return r; /* first named by a use: nothing defines it */
	uint32_t b = df->blk_of[stmt];
	if (scan_back(df, reg, df->blk_start[b], stmt, &r))
		return r;
	/* a register with one definition, which kills, in a block that
	 * dominates this one: every path to the use passes it and nothing
	 * else defines the register (most of compiler output) */
	if (df->rdef_off[reg + 1] - df->rdef_off[reg] == 1 && df->rdef_kill[df->rdef_off[reg]]) {
		uint32_t d = df->rdef[df->rdef_off[reg]];
		if (df->blk_of[d] != b && df_dominates(df, df->blk_of[d], b)) {
			reach_add(&r, d);
			return r;
		}
	}
	Reach in = block_entry_reach(df, b, reg);
	reach_merge(&r, &in);
	return r;
}

int64_t df_reaching_def(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	if (stmt >= df->nstmt || reg >= df->nbuilt)
		return DF_DEF_NONE;
	Reach r = df_reach(df, stmt, reg);
	if (r.n == 0)
		return DF_DEF_NONE;
	if (r.n == 1 && !r.entry)
		return r.min;
	return DF_DEF_MANY;
}

int64_t df_def_before_in_block(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	if (stmt >= df->nstmt || reg >= df->ndef_regs)
		return DF_DEF_NONE;
	uint32_t lo = df->rdef_off[reg], hi = df->rdef_off[reg + 1];
	uint32_t p = lower_bound(df->rdef, lo, hi, stmt);
	if (p > lo && df->rdef[p - 1] >= df->blk_start[df->blk_of[stmt]])
		return df->rdef[p - 1];
	return DF_DEF_NONE;
}

typedef VEC(uint32_t) DefList;

/* Definitions of reg in [from, to), backwards from to, into v until a
 * killing one; true if one killed. */
static bool collect_back(const Dataflow *df, uint32_t reg, uint32_t from, uint32_t to,
                         DefList *v)
{
	uint32_t lo = df->rdef_off[reg], hi = df->rdef_off[reg + 1];
	uint32_t p = lower_bound(df->rdef, lo, hi, to);
	while (p > lo && df->rdef[p - 1] >= from) {
		p--;
		VEC_PUSH(*v, df->rdef[p]);
		if (df->rdef_kill[p])
			return true;
	}
	return false;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

uint32_t df_reaching_defs(Dataflow *df, uint32_t stmt, uint32_t reg, uint32_t *out,
                          uint32_t max, bool *entry)
{
	bool ent = false;
	DefList v = {0};
	if (stmt < df->nstmt && reg < df->ndef_regs) {
		uint32_t b = df->blk_of[stmt];
		if (!collect_back(df, reg, df->blk_start[b], stmt, &v)) {
			/* back over the predecessors, each block once */
			uint32_t ep = df_next_epoch(df);
			VEC(uint32_t) wl = {0};
			if (b == 0)
				ent = true;
			for (uint32_t i = df->pred_off[b]; i < df->pred_off[b + 1]; i++)
				if (df->mark[df->pred[i]] != ep) {
					df->mark[df->pred[i]] = ep;
					VEC_PUSH(wl, df->pred[i]);
				}
			while (wl.n) {
				uint32_t p = wl.v[--wl.n];
				if (collect_back(df, reg, df->blk_start[p],
				                 df->blk_start[p + 1], &v))
					continue;
				if (p == 0)
					ent = true;
				for (uint32_t i = df->pred_off[p];
				     i < df->pred_off[p + 1]; i++)
					if (df->mark[df->pred[i]] != ep) {
						df->mark[df->pred[i]] = ep;
						VEC_PUSH(wl, df->pred[i]);
					}
			}
			VEC_FREE(wl);
		}
	} else if (stmt < df->nstmt)
		ent = true; /* nothing defines it */
	if (v.n > 1)
		qsort(v.v, v.n, sizeof(uint32_t), cmp_u32);
	uint32_t n = 0;
	for (size_t i = 0; i < v.n; i++) {
		if (i && v.v[i] == v.v[i - 1])
			continue;
		if (n < max)
			out[n] = v.v[i];
		n++;
	}
	VEC_FREE(v);
	if (entry)
		*entry = ent;
	return n;
}

/* ---- liveness queries ---------------------------------------------------- */

/* First element of list[off[reg]..off[reg+1]) that is > after, or UINT32_MAX. */
static uint32_t next_in(const uint32_t *off, const uint32_t *list, uint32_t reg, uint32_t after)
{
	uint32_t lo = off[reg], hi = off[reg + 1];
	uint32_t p = lower_bound(list, lo, hi, after + 1);
	return p < hi ? list[p] : UINT32_MAX;
}

/* Is reg live at the start of statement s (s < end of its block)? */
static bool live_before(Dataflow *df, uint32_t s, uint32_t reg)
{
	df_need_reg(df, reg);
	uint32_t b = df->blk_of[s], end = df->blk_start[b + 1];
	uint32_t u = s ? next_in(df->ruse_off, df->ruse, reg, s - 1)
	               : (df->ruse_off[reg] < df->ruse_off[reg + 1] ? df->ruse[df->ruse_off[reg]]
	                                                           : UINT32_MAX);
	uint32_t k = s ? next_in(df->rkill_off, df->rkill, reg, s - 1)
	               : (df->rkill_off[reg] < df->rkill_off[reg + 1] ? df->rkill[df->rkill_off[reg]]
	                                                             : UINT32_MAX);
	if (u < end && u <= k)
		return true;
	if (k < end)
		return false;
	return bit_get(live_set(df, reg, true), b);
}

bool df_live_after(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	df_need_reg(df, reg);
	if (stmt >= df->nstmt || reg >= df->nbuilt)
		return false;
	uint32_t b = df->blk_of[stmt], end = df->blk_start[b + 1];
	if (stmt + 1 < end)
		return live_before(df, stmt + 1, reg);
	return bit_get(live_set(df, reg, true), b);
}

bool df_live_in_block(Dataflow *df, uint32_t b, uint32_t reg)
{
	df_need_reg(df, reg);
	return b < df->nblk && reg < df->nbuilt && bit_get(live_set(df, reg, false), b);
}

/* Uses of reg in [from, end of block) up to and including the first kill;
 * returns true if a kill ended the scan.  Calls add for each use. */
static bool scan_fwd(Dataflow *df, uint32_t reg, uint32_t from, uint32_t end,
                     void (*add)(void *, uint32_t), void *ctx)
{
	df_need_reg(df, reg);
	uint32_t k = from ? next_in(df->rkill_off, df->rkill, reg, from - 1)
	                  : (df->rkill_off[reg] < df->rkill_off[reg + 1]
	                         ? df->rkill[df->rkill_off[reg]]
	                         : UINT32_MAX);
	uint32_t lo = df->ruse_off[reg], hi = df->ruse_off[reg + 1];
	for (uint32_t p = lower_bound(df->ruse, lo, hi, from); p < hi; p++) {
		uint32_t u = df->ruse[p];
		if (u >= end || u > k)
			break;
		add(ctx, u);
	}
	return k < end;
}

/* Forward search from just after stmt over every path: calls add for every
 * use the value live there reaches. */
static void uses_after(Dataflow *df, uint32_t stmt, uint32_t reg,
                       void (*add)(void *, uint32_t), void *ctx)
{
	uint32_t b = df->blk_of[stmt];
	if (scan_fwd(df, reg, stmt + 1, df->blk_start[b + 1], add, ctx))
		return;
	uint32_t ep = df_next_epoch(df);
	VEC(uint32_t) wl = {0};
	for (uint32_t i = df->succ_off[b]; i < df->succ_off[b + 1]; i++) {
		uint32_t s = df->succ[i];
		if (df->mark[s] != ep) {
			df->mark[s] = ep;
			VEC_PUSH(wl, s);
		}
	}
	for (size_t h = 0; h < wl.n; h++) {
		uint32_t s = wl.v[h];
		if (scan_fwd(df, reg, df->blk_start[s], df->blk_start[s + 1], add, ctx))
			continue;
		for (uint32_t i = df->succ_off[s]; i < df->succ_off[s + 1]; i++) {
			uint32_t t = df->succ[i];
			if (df->mark[t] != ep) {
				df->mark[t] = ep;
				VEC_PUSH(wl, t);
			}
		}
	}
	VEC_FREE(wl);
}

typedef struct {
	VEC(uint32_t) v;
} UseList;

static void add_to_list(void *ctx, uint32_t u)
{
	UseList *l = ctx;
	VEC_PUSH(l->v, u);
}

uint32_t df_uses_of(Dataflow *df, uint32_t stmt, uint32_t reg, uint32_t *out, uint32_t max)
{
	df_need_reg(df, reg);
	if (stmt >= df->nstmt || reg >= df->nbuilt)
		return 0;
	UseList l = {{0}};
	uses_after(df, stmt, reg, add_to_list, &l);
	if (l.v.n)
		qsort(l.v.v, l.v.n, sizeof(uint32_t), cmp_u32);
	uint32_t n = 0;
	for (size_t i = 0; i < l.v.n; i++) {
		if (i && l.v.v[i] == l.v.v[i - 1])
			continue;
		if (n < max)
			out[n] = l.v.v[i];
		n++;
	}
	VEC_FREE(l.v);
	return n;
}

typedef struct {
	uint32_t first;   /* smallest use found */
	uint32_t from;    /* prefer uses at index > from (program order after the cut) */
	uint32_t after;   /* smallest use > from */
} FirstUse;

static void add_first(void *ctx, uint32_t u)
{
	FirstUse *f = ctx;
	if (u < f->first)
		f->first = u;
	if (u > f->from && u < f->after)
		f->after = u;
}

uint32_t df_first_use_after(Dataflow *df, uint32_t last, uint32_t reg)
{
	FirstUse f = {UINT32_MAX, last, UINT32_MAX};
	uses_after(df, last, reg, add_first, &f);
	return f.after != UINT32_MAX ? f.after : f.first;
}
