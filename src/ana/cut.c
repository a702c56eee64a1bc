/*
 * cut.c - the cut interface of a statement range: the registers live into
 * and out of it, its memory effects, and whether the range may be replaced
 * without breaking a read/write dependency.
 *
 * It sits above both the dataflow (liveness and reaching definitions,
 * read from the Dataflow's lists directly) and the address tracking: two
 * accesses conflict unless addr.c resolves both and addr_disjoint proves
 * them apart, so a cut asks addr.c, and neither of those depends on this
 * file.
 *
 * A cut may hold whole loops (a wgmma loop and the wait after it that
 * completes its groups): live-in and live-out come from the reaching
 * definitions and liveness of the whole function, so a loop-carried
 * accumulator (defined before the loop, redefined in its body, read after
 * it) is both, and a load that a store later in the loop body feeds
 * through the back edge is a read/write dependency of the range.  A range
 * that holds part of a loop and code outside it cuts the loop in two:
 * df_cut_loop_split says so, and the splicer refuses it.
 *
 * A wgmma.mma_async loads shared memory through its matrix descriptors
 * (mem.c): the bytes wgmma_reads bounds, or the whole of the symbol, or of
 * shared memory, where it does not.  So the cp.async or st.shared that
 * fills a wgmma's tile, earlier in the range or later in a loop it holds
 * (the next stage's tile), is a read/write dependency unless the two are
 * proved apart, and a store of the range that a wgmma after it reads is
 * one as well.
 *
 * Decisions:
 *  - live-in is what the range needs from before it: the registers it
 *    reads whose value comes from outside, and those it writes only by
 *    definitions that do not kill (guarded, one vector element) while
 *    they are live after that write, whose old value leaves the range
 *    when the write does not take effect (a guarded mma's D).  The
 *    latter are flagged (CutReg.through): nothing in the range reads
 *    them.
 */
#include "df_internal.h"
#include "wgmma.h"

#include <stdlib.h>
#include <string.h>

/* ---- aliasing ------------------------------------------------------------ */

/* May accesses to spaces a and b touch the same memory? */
static bool spaces_alias(Space a, Space b)
{
	if (a == b)
		return true;
	bool ta = a == SP_TEX || a == SP_SURF, tb = b == SP_TEX || b == SP_SURF;
	if (ta || tb)
		return ta && tb; /* a surface written, a texture over the same array read */
	return a == SP_GENERIC || b == SP_GENERIC;
}

/* A memory statement of interest to the read/write check.  A
 * wgmma.mma_async reads through its descriptors (nrd of them, wgmma_reads)
 * and has no address operand of its own. */
typedef struct {
	uint32_t stmt;
	MemEffect me;
	const Addr *addr;  /* NULL: unresolved */
	bool opaque;       /* call or cp.*: never provably disjoint */
	uint8_t nrd;
	WgRead rd[2];
} MemAcc;

static MemAcc mem_acc(Dataflow *df, uint32_t stmt, MemEffect me)
{
	uint16_t op = func_stmt(df->m, df->f, stmt)->op;
	MemAcc a = {stmt, me, NULL, (me.flags & ME_CALL) || op == OP_CP, 0, {{0}}};
	if (op == OP_WGMMA)
		a.nrd = (uint8_t)wgmma_reads(df, stmt, a.rd);
	else if (!a.opaque)
		a.addr = addr_cached(df, stmt);
	return a;
}

bool addr_disjoint(const Addr *a, const Addr *b)
{
	if (!a || !b || a->base == AB_NONE || b->base == AB_NONE)
		return false;
	if (a->base != b->base)
		return false;
	uint64_t na = (uint64_t)a->elem_bytes * a->nelem, nb = (uint64_t)b->elem_bytes * b->nelem;
	if (a->base == AB_SYMBOL && !str_eq(a->base_name, b->base_name)) {
		/* Two different variables never overlap (out-of-bounds access is
		 * undefined in PTX), except: texture and surface references may be
		 * bound to one array, and unsized `.extern .shared` arrays all start
		 * at the dynamic shared memory (compare offsets from there). */
		bool ta = a->space == SP_TEX || a->space == SP_SURF;
		bool tb = b->space == SP_TEX || b->space == SP_SURF;
		if (ta || tb)
			return false;
		if (!(a->dynamic_shared && b->dynamic_shared))
			return true;
	} else if (a->base == AB_PARAM) {
		/* two pointer parameters may point into one buffer */
		if (!str_eq(a->base_name, b->base_name) || a->param_off != b->param_off ||
		    a->param_ptr != b->param_ptr)
			return false;
	}
	if (!na || !nb)
		return false;
	if (a->variable || b->variable) {
		/* The same variable part is the same address only within one thread;
		 * other threads may reach it through another offset, so this proves
		 * nothing except for per-thread (.local) memory. */
		if (!(a->space == SP_LOCAL && b->space == SP_LOCAL && a->variable && b->variable &&
		      a->var_key && a->var_key == b->var_key))
			return false;
	}
	return a->offset + (int64_t)na <= b->offset || b->offset + (int64_t)nb <= a->offset;
}

/* May the store of s reach the load of t?  A call may touch anything; a
 * cp.* copy has two addresses (only the first is resolved): both never
 * provably disjoint. */
static bool conflicts(const MemAcc *s, const MemAcc *t, const WgRead **via)
{
	*via = NULL;
	if (!(s->me.flags & ME_STORE) || !(t->me.flags & ME_LOAD))
		return false;
	if (!spaces_alias(s->me.store, t->me.load))
		return false;
	if (s->opaque || t->opaque)
		return true;
	if (t->nrd) { /* a wgmma: any of its descriptors' bytes */
		for (unsigned k = 0; k < t->nrd; k++)
			if (!addr_disjoint(s->addr, &t->rd[k].addr)) {
				*via = &t->rd[k];
				return true;
			}
		return false;
	}
	return !addr_disjoint(s->addr, t->addr);
}

/* ---- the cut interface --------------------------------------------------- */

/* How a pair conflicts: a store read after the cut, a load of what the cut
 * wrote before it, a load of what a later store of a loop the cut holds
 * wrote in the previous iteration (the loop's back edge at `edge`). */
enum { RW_AFTER, RW_EARLIER, RW_BACK_EDGE };

/* What a wgmma reads through the descriptor of a pair, for its line. */
static void via_text(StrBuf *o, const WgRead *v)
{
	int n = (int)v->addr.base_name.n;
	const char *p = v->addr.base_name.p;
	sb_addf(o, " (through %c's descriptor: ", v->which == 'a' ? 'A' : 'B');
	if (v->kind == WR_RANGE && v->addr.base == AB_SYMBOL)
		sb_addf(o, "%.*s[%lld, %lld))", n, p, (long long)v->lo, (long long)v->hi);
	else if (v->kind == WR_RANGE)
		sb_addf(o, "shared [%lld, %lld))", (long long)v->lo, (long long)v->hi);
	else if (v->kind == WR_SYMBOL)
		sb_addf(o, "somewhere in %.*s: %s)", n, p,
		        v->why ? v->why : "range unknown");
	else
		sb_addf(o, "somewhere in shared memory: %s)",
		        v->why ? v->why : "start unknown");
}

static void cut_reason(CutInterface *c, const Dataflow *df, uint32_t a, uint32_t b,
                       MemEffect ma, int how, uint32_t edge, const WgRead *via)
{
	const Module *m = df->m;
	const Stmt *sa = func_stmt(m, df->f, a), *sb = func_stmt(m, df->f, b);
	Str oa = stmt_opcode(m, sa), ob = stmt_opcode(m, sb);
	/* first two components of the opcode are enough to read the line */
	size_t na = 0, nb = 0;
	int dots = 0;
	while (na < oa.n && !(oa.p[na] == '.' && ++dots == 2))
		na++;
	dots = 0;
	while (nb < ob.n && !(ob.p[nb] == '.' && ++dots == 2))
		nb++;
	VEC_PUSH(c->rw_pairs, a);
	VEC_PUSH(c->rw_pairs, b);
	if (how == RW_AFTER)
		sb_addf(&c->rw_reason,
		        "s%u %.*s may be read by s%u %.*s after the cut (%s)", a, (int)na,
		        oa.p, b, (int)nb, ob.p, space_name(ma.store));
	else if (how == RW_BACK_EDGE)
		sb_addf(&c->rw_reason,
		        "s%u %.*s reads %s memory that s%u %.*s writes in the "
		        "iteration before (the loop's back edge s%u)",
		        a, (int)na, oa.p, space_name(ma.load), b, (int)nb, ob.p, edge);
	else
		sb_addf(
		    &c->rw_reason,
		    "s%u %.*s reads %s memory that s%u %.*s writes earlier in the cut", a,
		    (int)na, oa.p, space_name(ma.load), b, (int)nb, ob.p);
	if (via)
		via_text(&c->rw_reason, via);
	sb_addc(&c->rw_reason, '\n');
}

/*
 * Where control leaves [first, last]: past its last statement when the
 * range ends inside a block (after_last), and the blocks outside it that a
 * block ending in the range goes to: the fall-through after the last
 * statement, a branch out of the range's middle, and a back edge to a loop
 * header before `first`.  A back edge to a header inside the range stays
 * in it: a cut that ends on the loop's back edge has no live-out through
 * it (what the next iteration reads is the range's own business).
 */
typedef struct {
	bool after_last;
	VEC(uint32_t) blocks;
} RangeExits;

static void range_exits(Dataflow *df, uint32_t first, uint32_t last, RangeExits *x)
{
	memset(x, 0, sizeof *x);
	for (uint32_t b = df->blk_of[first]; b < df->nblk && df->blk_start[b] <= last;
	     b++) {
		if (df->blk_start[b + 1] - 1 > last) {
			x->after_last = true; /* the range ends inside b */
			continue;
		}
		for (uint32_t i = df->succ_off[b]; i < df->succ_off[b + 1]; i++) {
			uint32_t t = df->blk_start[df->succ[i]];
			if (t < first || t > last)
				VEC_PUSH(x->blocks, df->succ[i]);
		}
	}
}

/* Is r live where control leaves the range?  *use gets the first use of
 * its value there: after the range in statement order when it is live past
 * the last statement, else in (or after) the first exit block it is live
 * into. */
static bool live_at_exits(Dataflow *df, const RangeExits *x, uint32_t last, uint32_t r,
                          uint32_t *use)
{
	if (x->after_last && df_live_after(df, last, r)) {
		*use = df_first_use_after(df, last, r);
		return true;
	}
	for (size_t i = 0; i < x->blocks.n; i++) {
		uint32_t v = x->blocks.v[i];
		if (!df_live_in_block(df, v, r))
			continue;
		uint32_t lo = df->ruse_off[r], hi = df->ruse_off[r + 1];
		uint32_t p = lower_bound(df->ruse, lo, hi, df->blk_start[v]);
		if (df->blk_start[v] == last + 1)
			*use = df_first_use_after(df, last, r); /* the fall-through */
		else if (p < hi && df->ruse[p] < df->blk_start[v + 1])
			*use = df->ruse[p];
		else
			*use = df_first_use_after(df, df->blk_start[v + 1] - 1, r);
		if (*use == UINT32_MAX)
			*use = last; /* never: live means read on some path */
		return true;
	}
	return false;
}

int df_cut(Dataflow *df, uint32_t first, uint32_t last, CutInterface *out, Err *e)
{
	memset(out, 0, sizeof *out);
	out->first = first;
	out->last = last;
	if (first > last || last >= df->nstmt)
		return err_set(e, "statement range [%u, %u] is outside the function (s0..s%u)", first,
		               last, df->nstmt ? df->nstmt - 1 : 0);
	uint32_t nr = (uint32_t)df->regs.n, W = (nr + 63) / 64;
	uint64_t *seen = xcalloc(W + 1, sizeof(uint64_t));

	/* live-in: a use whose reaching definitions include one outside the
	 * range (or the function entry) */
	for (uint32_t s = first; s <= last; s++) {
		uint32_t nu;
		const uint32_t *us = df_uses(df, s, &nu);
		for (uint32_t u = 0; u < nu; u++) {
			uint32_t r = us[u];
			if (bit_get(seen, r))
				continue;
			Reach rr = df_reach(df, s, r);
			bool outside = rr.n == 0 || rr.entry || rr.min < first || rr.max > last;
			if (outside) {
				bit_set(seen, r);
				CutReg cr = {r, s, 0, false};
				VEC_PUSH(out->live_in, cr);
			}
		}
	}

	/* the registers the range defines: only their uses are needed for
	 * what follows */
	uint64_t *defd = xcalloc(W + 1, sizeof(uint64_t));
	VEC(uint32_t) cands = {0};
	for (uint32_t s = first; s <= last; s++)
		for (uint32_t d = df->def_off[s]; d < df->def_off[s + 1]; d++)
			if (!bit_get(defd, df->defs.v[d])) {
				bit_set(defd, df->defs.v[d]);
				VEC_PUSH(cands, df->defs.v[d]);
			}
	df_need_uses_of(df, cands.v, cands.n);
	VEC_FREE(cands);
	free(defd);

	/* live-in through a definition that does not kill (a guarded one, or
	 * one vector element): when it does not take effect the value from
	 * before the range is what the register holds after it, so that value
	 * is an input of the range if the register is live past the
	 * definition.  In statement order among the uses above. */
	for (uint32_t s = first; s <= last; s++)
		for (uint32_t d = df->def_off[s]; d < df->def_off[s + 1]; d++) {
			uint32_t r = df->defs.v[d];
			if (df->defkill.v[d] || bit_get(seen, r))
				continue;
			Reach rr = df_reach(df, s, r);
			bool outside =
			    rr.n == 0 || rr.entry || rr.min < first || rr.max > last;
			if (!outside || !df_live_after(df, s, r))
				continue;
			bit_set(seen, r);
			size_t at = out->live_in.n;
			while (at > 0 && out->live_in.v[at - 1].stmt > s)
				at--;
			CutReg cr = {r, s, 0, true};
			VEC_PUSH(out->live_in, cr);
			memmove(out->live_in.v + at + 1, out->live_in.v + at,
			        (out->live_in.n - 1 - at) * sizeof(CutReg));
			out->live_in.v[at] = cr;
		}

	/* live-out: defined in the range, live where control leaves it */
	RangeExits ex;
	range_exits(df, first, last, &ex);
	memset(seen, 0, (W + 1) * sizeof(uint64_t));
	for (uint32_t s = first; s <= last; s++) {
		for (uint32_t d = df->def_off[s]; d < df->def_off[s + 1]; d++) {
			uint32_t r = df->defs.v[d];
			if (bit_get(seen, r))
				continue;
			bit_set(seen, r);
			uint32_t use;
			if (!live_at_exits(df, &ex, last, r, &use))
				continue;
			uint32_t lo = df->rdef_off[r], hi = df->rdef_off[r + 1];
			uint32_t p = lower_bound(df->rdef, lo, hi, last + 1);
			CutReg cr = {r, df->rdef[p - 1], use, false};
			VEC_PUSH(out->live_out, cr);
		}
	}
	free(seen);
	VEC_FREE(ex.blocks);

	/* memory effects */
	VEC(MemAcc) stores = {0};
	const WgRead *via;
	for (uint32_t s = first; s <= last; s++) {
		MemEffect me = df_mem_effect(df, s);
		if (me.flags & ME_LOAD)
			out->loads[me.load]++;
		if (me.flags & ME_STORE)
			out->stores[me.store]++;
		if (me.flags & ME_ATOMIC)
			out->atomics++;
		if (me.flags & ME_BARRIER)
			out->barriers++;
		if (!(me.flags & (ME_LOAD | ME_STORE)))
			continue;
		MemAcc acc = mem_acc(df, s, me);
		/* (b) a load after a store of the range to the same memory: the
		 * pair is (load, the nearest such store) */
		if (me.flags & ME_LOAD) {
			for (size_t i = stores.n; i-- > 0;)
				if (conflicts(&stores.v[i], &acc, &via)) {
					out->rw_dependency = true;
					cut_reason(out, df, s, stores.v[i].stmt, me,
					           RW_EARLIER, 0, via);
					break;
				}
		}
		if (me.flags & ME_STORE)
			VEC_PUSH(stores, acc);
	}

	/* (c) a load that a later store of a loop the range holds may feed
	 * through the back edge (the next iteration reads what this one wrote) */
	const DfLoop *lp;
	uint32_t nl = df_loops(df, &lp);
	for (uint32_t k = 0; k < nl; k++) {
		if (lp[k].lo < first || lp[k].hi > last)
			continue;
		VEC_PUSH(out->loops, k);
		for (size_t i = 0; i < stores.n; i++) {
			if (!df_loop_holds(df, k, stores.v[i].stmt))
				continue;
			for (uint32_t s = lp[k].lo; s < stores.v[i].stmt; s++) {
				MemEffect me = df_mem_effect(df, s);
				if (!(me.flags & ME_LOAD) || !df_loop_holds(df, k, s))
					continue;
				MemAcc acc = mem_acc(df, s, me);
				if (conflicts(&stores.v[i], &acc, &via)) {
					out->rw_dependency = true;
					cut_reason(out, df, s, stores.v[i].stmt, me,
					           RW_BACK_EDGE, lp[k].back, via);
					break;
				}
			}
		}
	}

	/* (a) a store of the range read after it: loads reachable from the end
	 * of the range (on any path, around loops too), outside the range; the
	 * pair is (store, the first such load found: the rest of the block,
	 * then blocks breadth-first) */
	if (stores.n) {
		VEC(MemAcc) after = {0};
		uint32_t b = df->blk_of[last];
		uint32_t ep = df_next_epoch(df);
		VEC(uint32_t) wl = {0};
		for (uint32_t s = last + 1; s < df->blk_start[b + 1]; s++) {
			MemEffect me = df_mem_effect(df, s);
			if (me.flags & ME_LOAD)
				VEC_PUSH(after, mem_acc(df, s, me));
		}
		for (uint32_t i = df->succ_off[b]; i < df->succ_off[b + 1]; i++)
			if (df->mark[df->succ[i]] != ep) {
				df->mark[df->succ[i]] = ep;
				VEC_PUSH(wl, df->succ[i]);
			}
		for (size_t h = 0; h < wl.n; h++) {
			uint32_t x = wl.v[h];
			for (uint32_t s = df->blk_start[x]; s < df->blk_start[x + 1]; s++) {
				if (s >= first && s <= last)
					continue;
				if (x == b && s > last)
					continue; /* already listed */
				MemEffect me = df_mem_effect(df, s);
				if (me.flags & ME_LOAD)
					VEC_PUSH(after, mem_acc(df, s, me));
			}
			for (uint32_t i = df->succ_off[x]; i < df->succ_off[x + 1]; i++)
				if (df->mark[df->succ[i]] != ep) {
					df->mark[df->succ[i]] = ep;
					VEC_PUSH(wl, df->succ[i]);
				}
		}
		VEC_FREE(wl);
		for (size_t i = 0; i < stores.n; i++)
			for (size_t j = 0; j < after.n; j++)
				if (conflicts(&stores.v[i], &after.v[j], &via)) {
					out->rw_dependency = true;
					cut_reason(out, df, stores.v[i].stmt,
					           after.v[j].stmt, stores.v[i].me,
					           RW_AFTER, 0, via);
					break;
				}
		VEC_FREE(after);
	}
	VEC_FREE(stores);
	(void)e;
	return 0;
}

/* ---- loops and cuts ----------------------------------------------------- */

int64_t df_cut_loop_split(Dataflow *df, uint32_t first, uint32_t last, uint32_t *in,
                          uint32_t *out)
{
	const DfLoop *lp;
	uint32_t nl = df_loops(df, &lp);
	for (uint32_t k = 0; k < nl; k++) {
		const DfLoop *l = &lp[k];
		if (l->hi < first || l->lo > last)
			continue;
		uint32_t lo = MAX(first, l->lo), hi = MIN(last, l->hi), n = 0, w = 0;
		for (uint32_t s = lo; s <= hi; s++)
			if (df_loop_holds(df, k, s) && !n++)
				w = s;
		if (n == 0 || n == l->nstmt || n == last - first + 1)
			continue; /* apart, held whole, or inside the body */
		*in = w;
		/* a statement of the loop the range leaves out: the header or the
		 * back edge when one of them is, else the first one */
		if (l->header < first || l->header > last)
			*out = l->header;
		else if (l->back < first || l->back > last)
			*out = l->back;
		else
			for (uint32_t s = l->lo; s <= l->hi; s++)
				if ((s < first || s > last) && df_loop_holds(df, k, s)) {
					*out = s;
					break;
				}
		return k;
	}
	return -1;
}

void df_cut_hold_loops(Dataflow *df, uint32_t *first, uint32_t *last)
{
	const DfLoop *lp;
	uint32_t in, out;
	int64_t k;
	(void)df_loops(df, &lp);
	while ((k = df_cut_loop_split(df, *first, *last, &in, &out)) >= 0) {
		*first = MIN(*first, lp[k].lo);
		*last = MAX(*last, lp[k].hi);
	}
}

void cut_release(CutInterface *c)
{
	VEC_FREE(c->loops);
	VEC_FREE(c->live_in);
	VEC_FREE(c->live_out);
	VEC_FREE(c->rw_pairs);
	sb_release(&c->rw_reason);
}

uint32_t cut_warp_bytes(const Dataflow *df, const CutReg *regs, size_t n)
{
	uint32_t bytes = 0;
	for (size_t i = 0; i < n; i++) {
		const RegInfo *ri = df_reg(df, regs[i].reg);
		uint32_t bits = ri->bits ? ri->bits : 32;
		if (bits < 8)
			bits = 8; /* a predicate still occupies a register per lane */
		bytes += bits / 8 * (ri->vec ? ri->vec : 1) * 32;
	}
	return bytes;
}

bool space_may_alias(Space a, Space b)
{
	return spaces_alias(a, b);
}
