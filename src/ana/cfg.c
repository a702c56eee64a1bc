/*
 * cfg.c - the control flow of one function: basic blocks, their successors
 * and predecessors, and dominators.
 *
 * Basic blocks start at statement 0, at every label and after every
 * bra/brx/ret/exit/trap; a block ending in a guarded branch or return
 * falls through as well.  Dominators are built on the first query that
 * needs them (live.c's reaching definitions), natural loops on the first
 * query about loops (a cut's, cut.c).
 *
 * Decisions (documented for the users of ana.h):
 *  - brx.idx may go to any label of the function (its .branchtargets list is
 *    not in the model).  A bra whose label is not in the function likewise;
 *    a bra to a label declared in several scopes may go to any of them.
 */
#include "df_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- blocks -------------------------------------------------------------- */

static bool is_terminator(Op op)
{
	return op == OP_BRA || op == OP_BRX || op == OP_RET || op == OP_EXIT || op == OP_TRAP;
}

int df_blocks_build(Dataflow *df, Err *e)
{
	const Module *m = df->m;
	const Func *f = df->f;
	uint32_t n = df->nstmt;
	uint8_t *leader = xcalloc(n + 1, 1);
	leader[0] = 1;
	for (uint32_t i = 0; i < f->nlabel; i++) {
		const Label *l = &m->labels.v[f->label0 + i];
		if (l->stmt <= n)
			leader[l->stmt] = 1;
	}
	for (uint32_t i = 0; i < n; i++)
		if (is_terminator((Op)func_stmt(m, f, i)->op))
			leader[i + 1] = 1;
	uint32_t nb = 0;
	for (uint32_t i = 0; i < n; i++)
		nb += leader[i];
	if (n == 0)
		nb = 0;
	df->nblk = nb;
	df->blk_start = xmalloc((nb + 1) * sizeof(uint32_t));
	df->blk_of = xmalloc((n + 1) * sizeof(uint32_t));
	uint32_t b = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (leader[i] && i > 0)
			b++;
		if (leader[i])
			df->blk_start[b] = i;
		df->blk_of[i] = b;
	}
	df->blk_start[nb] = n;
	df->blk_of[n] = nb; /* "past the end" */
	free(leader);

	/* successors */
	VEC(uint32_t) sv = {0};
	df->succ_off = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *all_labels = NULL;
	uint32_t nall = 0;
	for (b = 0; b < nb; b++) {
		df->succ_off[b] = (uint32_t)sv.n;
		uint32_t last = df->blk_start[b + 1] - 1;
		const Stmt *s = func_stmt(m, f, last);
		bool guarded = (s->flags & STMT_GUARD) != 0;
		bool fall = true;
		if (s->op == OP_BRA || s->op == OP_BRX) {
			int32_t target = -1;
			const Operand *o = s->nopd >= 1 ? stmt_opd(m, s, 0) : NULL;
			NameEnt *ne = NULL;
			if (s->op == OP_BRA && o && o->kind == OPD_IDENT) {
				ne = df_name_entry(df, m->src + o->off, o->len);
				if (ne->p && ne->kind == NK_LABEL)
					target = ne->id;
			}
			if (target >= 0 && ne->scoped) {
				/* a label declared in several scopes (never seen in compiler
				 * output): any of them */
				for (uint32_t i = 0; i < f->nlabel; i++) {
					const Label *l = &m->labels.v[f->label0 + i];
					if (l->stmt < n && l->name.len == o->len &&
					    memcmp(m->src + l->name.off, m->src + o->off, o->len) == 0)
						VEC_PUSH(sv, df->blk_of[l->stmt]);
				}
			} else if (target >= 0) {
				if ((uint32_t)target < n)
					VEC_PUSH(sv, df->blk_of[target]);
			} else {
				/* brx.idx, or a label we do not know: every label */
				if (!all_labels) {
					all_labels = xmalloc((f->nlabel + 1) * sizeof(uint32_t));
					for (uint32_t i = 0; i < f->nlabel; i++) {
						uint32_t st = m->labels.v[f->label0 + i].stmt;
						if (st < n)
							all_labels[nall++] = df->blk_of[st];
					}
				}
				for (uint32_t i = 0; i < nall; i++)
					VEC_PUSH(sv, all_labels[i]);
			}
			fall = guarded;
		} else if (s->op == OP_RET || s->op == OP_EXIT || s->op == OP_TRAP) {
			fall = guarded;
		}
		if (fall && b + 1 < nb)
			VEC_PUSH(sv, b + 1);
		/* dedupe this block's successors */
		uint32_t s0 = df->succ_off[b], w = s0;
		for (uint32_t i = s0; i < sv.n; i++) {
			uint32_t j;
			for (j = s0; j < w && sv.v[j] != sv.v[i]; j++)
				;
			if (j == w)
				sv.v[w++] = sv.v[i];
		}
		sv.n = w;
	}
	df->succ_off[nb] = (uint32_t)sv.n;
	df->succ = sv.v ? sv.v : xmalloc(sizeof(uint32_t));
	free(all_labels);

	/* predecessors */
	df->pred_off = xcalloc(nb + 2, sizeof(uint32_t));
	for (uint32_t i = 0; i < sv.n; i++)
		df->pred_off[sv.v[i] + 2]++;
	for (b = 0; b < nb; b++)
		df->pred_off[b + 2] += df->pred_off[b + 1];
	df->pred = xmalloc((sv.n + 1) * sizeof(uint32_t));
	for (b = 0; b < nb; b++)
		for (uint32_t i = df->succ_off[b]; i < df->succ_off[b + 1]; i++)
			df->pred[df->pred_off[df->succ[i] + 1]++] = b;
	(void)e;
	return 0;
}

uint32_t df_nblocks(const Dataflow *df) { return df->nblk; }
uint32_t df_block_of(const Dataflow *df, uint32_t stmt)
{
	return stmt < df->nstmt ? df->blk_of[stmt] : df->nblk;
}
void df_block_range(const Dataflow *df, uint32_t b, uint32_t *first, uint32_t *end)
{
	*first = df->blk_start[b];
	*end = df->blk_start[b + 1];
}
const uint32_t *df_block_succs(const Dataflow *df, uint32_t b, uint32_t *n)
{
	*n = df->succ_off[b + 1] - df->succ_off[b];
	return df->succ + df->succ_off[b];
}
const uint32_t *df_block_preds(const Dataflow *df, uint32_t b, uint32_t *n)
{
	*n = df->pred_off[b + 1] - df->pred_off[b];
	return df->pred + df->pred_off[b];
}

/* ---- dominators ---------------------------------------------------------- */

/*
 * Dominators, built on the first reaching-definition query that needs them
 * (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm"): the
 * immediate dominator of each block reachable from the entry, iterated to a
 * fixpoint in reverse postorder, then the dominator tree numbered in
 * preorder and postorder so that "a dominates b" is two compares.  Blocks
 * not reachable from the entry have no numbers and dominate nothing.
 */
static uint32_t dom_meet(const uint32_t *idom, const uint32_t *rpo_no, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (rpo_no[a] > rpo_no[b])
			a = idom[a];
		while (rpo_no[b] > rpo_no[a])
			b = idom[b];
	}
	return a;
}

static void build_dom(Dataflow *df)
{
	uint32_t nb = df->nblk;
	const uint32_t NONE = UINT32_MAX;
	uint32_t *rpo = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *rpo_no = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *idom = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *stack = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *next = xmalloc((nb + 1) * sizeof(uint32_t)); /* next successor to visit */
	for (uint32_t b = 0; b < nb; b++)
		rpo_no[b] = NONE, idom[b] = NONE, next[b] = df->succ_off[b];
	/* postorder by an explicit DFS from block 0, then reversed */
	uint32_t npo = 0, sp = 0;
	if (nb) {
		stack[sp++] = 0;
		rpo_no[0] = 0; /* visited mark for now */
	}
	while (sp) {
		uint32_t b = stack[sp - 1];
		if (next[b] < df->succ_off[b + 1]) {
			uint32_t t = df->succ[next[b]++];
			if (rpo_no[t] == NONE) {
				rpo_no[t] = 0;
				stack[sp++] = t;
			}
			continue;
		}
		rpo[npo++] = b;
		sp--;
	}
	for (uint32_t i = 0; i < npo / 2; i++) {
		uint32_t t = rpo[i];
		rpo[i] = rpo[npo - 1 - i];
		rpo[npo - 1 - i] = t;
	}
	for (uint32_t i = 0; i < npo; i++)
		rpo_no[rpo[i]] = i;
	if (npo)
		idom[rpo[0]] = rpo[0];
	for (bool changed = npo > 1; changed;) {
		changed = false;
		for (uint32_t i = 1; i < npo; i++) {
			uint32_t b = rpo[i], nd = NONE;
			for (uint32_t k = df->pred_off[b]; k < df->pred_off[b + 1]; k++) {
				uint32_t p = df->pred[k];
				if (idom[p] == NONE)
					continue; /* unreachable, or not processed yet */
				nd = nd == NONE ? p : dom_meet(idom, rpo_no, p, nd);
			}
			if (nd != idom[b]) {
				idom[b] = nd;
				changed = true;
			}
		}
	}
	/* the tree's preorder and postorder numbers, children through `next`
	 * reused as first-child / `stack` as next-sibling lists */
	df->dom_pre = xmalloc((nb + 1) * sizeof(uint32_t));
	df->dom_post = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *child = next, *sib = stack;
	for (uint32_t b = 0; b < nb; b++)
		child[b] = NONE, df->dom_pre[b] = NONE, df->dom_post[b] = 0;
	for (uint32_t i = npo; i-- > 1;) {
		uint32_t b = rpo[i];
		sib[b] = child[idom[b]];
		child[idom[b]] = b;
	}
	uint32_t pre = 0, post = 0;
	if (npo) {
		/* iterative preorder/postorder: rpo reused as the DFS stack */
		uint32_t *st = rpo, top = 0;
		st[top++] = 0;
		df->dom_pre[0] = pre++;
		while (top) {
			uint32_t b = st[top - 1];
			uint32_t c = child[b];
			if (c != NONE) {
				child[b] = sib[c];
				df->dom_pre[c] = pre++;
				st[top++] = c;
			} else {
				df->dom_post[b] = post++;
				top--;
			}
		}
	}
	free(rpo);
	free(rpo_no);
	free(idom);
	free(stack);
	free(next);
}

/* Does block a dominate block b (a != b)? */
bool df_dominates(Dataflow *df, uint32_t a, uint32_t b)
{
	if (!df->dom_pre)
		build_dom(df);
	return df->dom_pre[a] != UINT32_MAX && df->dom_pre[b] != UINT32_MAX &&
	       df->dom_pre[a] < df->dom_pre[b] && df->dom_post[b] < df->dom_post[a];
}

/* ---- natural loops ------------------------------------------------------- */

/*
 * Loops, built on the first query: a back edge is an edge b -> h where h
 * dominates b (or b is h); the loop of header h is h and every block from
 * which one of its back edges is reached without passing h.  Back edges to
 * one header make one loop (compiler output has one per header).  Blocks
 * not reachable from the entry are in no loop: nothing dominates them.
 */
static void build_loops(Dataflow *df)
{
	uint32_t nb = df->nblk, W = (nb + 64) / 64;
	VEC(DfLoop) lv = {0};
	VEC(uint64_t) bits = {0};
	VEC(uint32_t) st = {0};
	df->loops_built = true;
	for (uint32_t h = 0; h < nb; h++) {
		size_t base = bits.n;
		bool any = false;
		uint32_t latch = UINT32_MAX;
		for (uint32_t i = df->pred_off[h]; i < df->pred_off[h + 1]; i++) {
			uint32_t b = df->pred[i];
			if (b != h && !df_dominates(df, h, b))
				continue;
			if (!any) {
				for (uint32_t w = 0; w < W; w++)
					VEC_PUSH(bits, 0);
				bits.v[base + h / 64] |= 1ull << (h % 64);
				any = true;
			}
			latch = latch == UINT32_MAX ? b : MAX(latch, b);
			/* the blocks that reach b without passing h */
			st.n = 0;
			if (!(bits.v[base + b / 64] >> (b % 64) & 1)) {
				bits.v[base + b / 64] |= 1ull << (b % 64);
				VEC_PUSH(st, b);
			}
			while (st.n) {
				uint32_t x = st.v[--st.n];
				for (uint32_t k = df->pred_off[x];
				     k < df->pred_off[x + 1]; k++) {
					uint32_t p = df->pred[k];
					if (bits.v[base + p / 64] >> (p % 64) & 1)
						continue;
					bits.v[base + p / 64] |= 1ull << (p % 64);
					VEC_PUSH(st, p);
				}
			}
		}
		if (!any)
			continue;
		DfLoop l = {df->blk_start[h], df->blk_start[latch + 1] - 1, UINT32_MAX, 0,
		            0};
		for (uint32_t b = 0; b < nb; b++)
			if (bits.v[base + b / 64] >> (b % 64) & 1) {
				l.lo = MIN(l.lo, df->blk_start[b]);
				l.hi = MAX(l.hi, df->blk_start[b + 1] - 1);
				l.nstmt += df->blk_start[b + 1] - df->blk_start[b];
			}
		VEC_PUSH(lv, l);
	}
	VEC_FREE(st);
	df->loops = lv.v;
	df->nloops = (uint32_t)lv.n;
	df->loop_blocks = bits.v;
}

uint32_t df_loops(Dataflow *df, const DfLoop **loops)
{
	if (!df->loops_built)
		build_loops(df);
	*loops = df->loops;
	return df->nloops;
}

bool df_loop_holds(Dataflow *df, uint32_t k, uint32_t stmt)
{
	if (!df->loops_built)
		build_loops(df);
	if (k >= df->nloops || stmt >= df->nstmt)
		return false;
	uint32_t W = (df->nblk + 64) / 64, b = df->blk_of[stmt];
	return df->loop_blocks[(size_t)k * W + b / 64] >> (b % 64) & 1;
}
