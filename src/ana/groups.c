/*
 * groups.c - wgmma groups in flight: the commit/wait structure of a
 * function's wgmma.mma_async, at every statement.
 *
 * A wgmma.mma_async runs asynchronously: wgmma.commit_group closes the
 * mma issued since the last commit into a group, and wgmma.wait_group N
 * waits until at most the N most recent committed groups are pending.
 * Until the group of an mma is complete its accumulators may not be read
 * or written (the PTX ISA leaves it undefined; ptxas injects waits).  In a
 * loop the groups of one iteration are often completed in the next one
 * (a wait_group 1 after the next commit) or after the loop's back edge (a
 * wait_group 0 after the loop), so the question "is this group complete
 * here" is a dataflow question over the control flow, not a walk down
 * straight-line code.
 *
 * A forward dataflow over the blocks, joined by union, solved to a
 * fixpoint (the sets only grow, and they are finite): per statement the
 * set of possible numbers of committed groups in flight (0..31; 31 stands
 * for 31 or more), whether a wgmma.mma_async may be issued and not yet
 * committed, and, for a chosen set of writer statements (the mma of a
 * phase, or every mma that writes one register), the set of possible
 * numbers of commits since the latest writer while its group is not
 * complete, or "complete" (no writer pending).  A writer with k commits
 * after it is complete at a wait_group N when k > N.
 *
 * Decisions:
 *  - A guarded statement may or may not take effect: the state after it
 *    is the union of both.
 *  - A wait_group whose operand is not an integer constant completes
 *    nothing (never seen in compiler output; it keeps the answer safe).
 *  - wgmma.commit_group with nothing issued still makes a group (an empty
 *    one, as the PTX ISA says), so it counts.
 */
#include "df_internal.h"

#include <stdlib.h>
#include <string.h>

enum { WK_OTHER, WK_MMA, WK_COMMIT, WK_WAIT, WK_FENCE };

struct WgGroups {
	Dataflow *df;
	uint32_t nstmt;
	WgState *after;  /* per statement */
	WgState *in;     /* per block: the state at its start */
	uint8_t *kind;   /* per statement: WK_* */
	uint8_t *wait_n; /* WK_WAIT: N, or 255 when not a constant */
	uint8_t *writer; /* per statement: a writer */
};

static uint8_t wg_kind(const Module *m, const Stmt *s, uint8_t *n)
{
	if (s->op != OP_WGMMA)
		return WK_OTHER;
	if (stmt_opcode_is(m, s, "wgmma.mma_async"))
		return WK_MMA;
	if (stmt_opcode_is(m, s, "wgmma.commit_group"))
		return WK_COMMIT;
	if (stmt_opcode_is(m, s, "wgmma.fence"))
		return WK_FENCE;
	if (!stmt_opcode_is(m, s, "wgmma.wait_group"))
		return WK_OTHER;
	*n = 255;
	if (s->nopd >= 1 && stmt_opd(m, s, 0)->kind == OPD_INT) {
		Str t = opd_str(m, stmt_opd(m, s, 0));
		char buf[24];
		snprintf(buf, sizeof buf, "%.*s", (int)(t.n < 23 ? t.n : 23), t.p);
		char *q;
		unsigned long v = strtoul(buf, &q, 0);
		if (!*q && v < 255)
			*n = (uint8_t)v;
	}
	return WK_WAIT;
}

/* One statement's effect on the state. */
static WgState step(const WgGroups *g, uint32_t i, WgState s)
{
	WgState t = s;
	switch (g->kind[i]) {
	case WK_MMA:
		t.open = WG_OPEN;
		if (g->writer[i])
			t.writer = 1;
		break;
	case WK_COMMIT:
		t.pending = (s.pending << 1) | (s.pending & 0x80000000u);
		t.open = WG_CLOSED;
		t.writer = (s.writer & WG_DONE) |
		           ((s.writer & 0x3FFFFFFFFFFFFFFFull) << 1) |
		           (s.writer & 0x4000000000000000ull);
		break;
	case WK_WAIT: {
		unsigned n = g->wait_n[i];
		if (n == 255)
			break;
		t.pending = 0;
		for (unsigned c = 0; c < 32; c++)
			if (s.pending >> c & 1)
				t.pending |= 1u << (c < n ? c : n);
		t.writer = s.writer & WG_DONE;
		for (unsigned k = 0; k < 63; k++)
			if (s.writer >> k & 1)
				t.writer |= k > n ? WG_DONE : 1ull << k;
		break;
	}
	default:
		break;
	}
	if (func_stmt(df_module(g->df), df_func(g->df), i)->flags & STMT_GUARD) {
		t.pending |= s.pending;
		t.open |= s.open;
		t.writer |= s.writer;
	}
	return t;
}

WgGroups *groups_build(Dataflow *df, const uint32_t *writers, size_t nw)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	WgGroups *g = xcalloc(1, sizeof *g);
	uint32_t n = df->nstmt, nb = df->nblk;
	g->df = df;
	g->nstmt = n;
	g->kind = xcalloc(n + 1, 1);
	g->wait_n = xcalloc(n + 1, 1);
	g->writer = xcalloc(n + 1, 1);
	g->after = xcalloc(n + 1, sizeof(WgState));
	g->in = xcalloc(nb + 1, sizeof(WgState));
	for (uint32_t i = 0; i < n; i++) {
		g->kind[i] = wg_kind(m, func_stmt(m, f, i), &g->wait_n[i]);
	}
	for (size_t i = 0; i < nw; i++)
		if (writers[i] < n)
			g->writer[writers[i]] = 1;
	if (!nb)
		return g;
	/* the fixpoint over blocks: a work list of blocks whose start grew */
	uint8_t *queued = xcalloc(nb, 1);
	VEC(uint32_t) wl = {0};
	WgState entry = {1, WG_CLOSED, WG_DONE};
	g->in[0] = entry;
	VEC_PUSH(wl, 0);
	queued[0] = 1;
	while (wl.n) {
		uint32_t b = wl.v[--wl.n];
		queued[b] = 0;
		WgState s = g->in[b];
		for (uint32_t i = df->blk_start[b]; i < df->blk_start[b + 1]; i++)
			g->after[i] = s = step(g, i, s);
		for (uint32_t k = df->succ_off[b]; k < df->succ_off[b + 1]; k++) {
			uint32_t t = df->succ[k];
			WgState o = g->in[t],
			        u = {o.pending | s.pending, (uint8_t)(o.open | s.open),
			             o.writer | s.writer};
			if (u.pending == o.pending && u.open == o.open &&
			    u.writer == o.writer)
				continue;
			g->in[t] = u;
			if (!queued[t]) {
				queued[t] = 1;
				VEC_PUSH(wl, t);
			}
		}
	}
	VEC_FREE(wl);
	free(queued);
	return g;
}

void groups_free(WgGroups *g)
{
	if (!g)
		return;
	free(g->after);
	free(g->in);
	free(g->kind);
	free(g->wait_n);
	free(g->writer);
	free(g);
}

WgState groups_after(const WgGroups *g, uint32_t stmt)
{
	WgState none = {0, 0, 0};
	return stmt < g->nstmt ? g->after[stmt] : none;
}

WgState groups_before(const WgGroups *g, uint32_t stmt)
{
	WgState none = {0, 0, 0};
	if (stmt >= g->nstmt)
		return none;
	uint32_t b = g->df->blk_of[stmt];
	return stmt == g->df->blk_start[b] ? g->in[b] : g->after[stmt - 1];
}

int64_t groups_completing_wait(const WgGroups *g, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i <= to && i < g->nstmt; i++) {
		if (g->kind[i] != WK_WAIT)
			continue;
		WgState b = groups_before(g, i), a = g->after[i];
		if ((b.writer & ~WG_DONE) && a.writer == WG_DONE)
			return i;
	}
	return -1;
}

bool groups_is_wgmma(const WgGroups *g, uint32_t stmt, const char **what)
{
	static const char *const names[] = {"", "mma_async", "commit_group", "wait_group",
	                                    "fence"};
	if (stmt >= g->nstmt || g->kind[stmt] == WK_OTHER)
		return false;
	if (what)
		*what = names[g->kind[stmt]];
	return true;
}

void groups_range(uint32_t mask, unsigned *lo, unsigned *hi)
{
	*lo = *hi = 0;
	if (!mask)
		return;
	*lo = (unsigned)__builtin_ctz(mask);
	*hi = 31u - (unsigned)__builtin_clz(mask);
}

int64_t groups_through_wait(Dataflow *df, uint32_t first, uint32_t last,
                            uint32_t *cut_first, uint32_t *cut_last)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	VEC(uint32_t) w = {0};
	for (uint32_t i = first; i <= last && i < df->nstmt; i++)
		if (func_stmt(m, f, i)->op == OP_WGMMA &&
		    stmt_opcode_is(m, func_stmt(m, f, i), "wgmma.mma_async"))
			VEC_PUSH(w, i);
	int64_t at = -1;
	if (w.n) {
		WgGroups *g = groups_build(df, w.v, w.n);
		at = groups_completing_wait(g, last, df->nstmt ? df->nstmt - 1 : 0);
		groups_free(g);
	}
	VEC_FREE(w);
	if (at < 0)
		return -1;
	*cut_first = first;
	*cut_last = (uint32_t)at;
	df_cut_hold_loops(df, cut_first, cut_last);
	return at;
}
