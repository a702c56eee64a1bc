/*
 * operands.c - the operands of the mma statements of a range: where each
 * A, B and C register's value comes from, which tile and k-step each mma
 * computes, and whether loading an operand again at the start of the
 * range reads the same bytes the vendor's load read.
 *
 * These are the facts a native phase is written from (splice/native.c
 * writes one from them, `phases --json` and `show --live` print them), so
 * each is derived from the statements with its evidence, and a value that
 * cannot be proven is reported as such:
 *
 *  - per operand register: its reaching definition at the mma, and what
 *    that is (a load, with its statement and the place of the register in
 *    the load's destination; a mov of zero; the D of an earlier mma of the
 *    range; the D of an mma of another phase; a conversion or pack;
 *    anything else; no single definition);
 *  - chains by reaching definition: an mma whose every C word is the
 *    same-position D word of one earlier mma of the range continues that
 *    mma's chain, one k-step further; otherwise it heads a chain;
 *  - tiles: chains that read the same sequence of A tuples (one per k-step)
 *    compute the same m-tile, chains that read the same sequence of B
 *    tuples the same n-tile, so a banded "5x20" phase is 1 m-tile x 4
 *    n-tiles x 5 k-steps;
 *  - per load: the address operand (the base register and the constant
 *    displacement of [reg+disp]), what addr.c resolves it to, and the
 *    reload verdict with the statements that prove or refute it.
 *
 * Decisions:
 *  - Reload safety is proven on the straight line from the load to the
 *    range: no label in between (a label lets another path reach the range
 *    without the load), the base register with the same reaching definition
 *    at the load and at the range, and no statement in between that may
 *    change the bytes: no barrier or fence (other threads' stores become
 *    visible across it), no call, no store or atomic in a space that may
 *    alias the load's unless addr.c resolves both and proves them disjoint.
 *    A guarded or volatile/relaxed/acquire load is never reloaded: it may
 *    not have run, or a second access is a different program.
 *  - The facts cover mma.sync and mma.sp statements, whose operands are D,
 *    A, B, C tuples of registers.  A range with wmma or wgmma statements,
 *    or with an operand that is not a register, gets `unsupported` with the
 *    statement and the reason, and no facts.
 *  - What a conversion and a zero are is dataflow.c's one definition
 *    (df_stmt_is_conversion, df_stmt_is_zero_mov), the phase table's too,
 *    so the two agree; and whether two spaces may alias is cut.c's
 *    (space_may_alias).  A load here is ld/ldu/ldmatrix: the loads whose
 *    address the facts can give.
 */
#include "ana/ana.h"

#include <stdlib.h>
#include <string.h>

const char *opd_role_name(OpdRole r)
{
	static const char *const n[] = {"d", "a", "b", "c"};
	return (unsigned)r < ARRAY_SIZE(n) ? n[r] : "?";
}

const char *opd_value_name(OpdValue v)
{
	static const char *const n[] = {"load",      "zero",     "mma",       "phase",
	                                "converted", "computed", "undefined", "merge"};
	return (unsigned)v < ARRAY_SIZE(n) ? n[v] : "?";
}

const char *addr_base_name(AddrBase b)
{
	static const char *const n[] = {"unresolved", "param", "symbol", "special",
	                                "absolute"};
	return (unsigned)b < ARRAY_SIZE(n) ? n[b] : "?";
}

/* ---- what a definition is ------------------------------------------------ */

static bool is_load_op(const Stmt *s)
{
	return s->op == OP_LD || s->op == OP_LDU || s->op == OP_LDMATRIX;
}

/* ---- operand tuples -------------------------------------------------------- */

/* The leaf operands of a tuple (a vector's elements, or the operand itself):
 * their operand indices into out[0..max); returns how many. */
static unsigned tuple_leaves(const Module *m, uint32_t oi, uint32_t *out, unsigned max)
{
	const Operand *o = &m->opds.v[oi];
	unsigned n = 0;
	if (o->kind == OPD_VEC) {
		for (uint32_t k = oi + 1; k < oi + 1 + o->sub; k = opd_next(m, k))
			if (n < max)
				out[n++] = k;
	} else if (n < max)
		out[n++] = oi;
	return n;
}

/* The destination operand of a load: its index, or UINT32_MAX. */
static uint32_t load_dest(const Module *m, const Stmt *s)
{
	return s->nopd >= 2 ? stmt_opd_index(m, s, 0) : UINT32_MAX;
}

/* Where `reg` sits in the destination of the load at `st` (0-based). */
static uint32_t dest_elem(Dataflow *df, uint32_t st, uint32_t reg, uint32_t *ndest)
{
	const Module *m = df_module(df);
	const Stmt *s = func_stmt(m, df_func(df), st);
	uint32_t d = load_dest(m, s), leaves[64];
	unsigned n = d == UINT32_MAX ? 0 : tuple_leaves(m, d, leaves, 64);
	uint32_t at = 0;
	bool found = false;
	for (unsigned i = 0; i < n; i++)
		if (!found && df_opd_reg(df, leaves[i]) == (int64_t)reg) {
			at = i;
			found = true;
		}
	if (ndest)
		*ndest = n;
	return at;
}

/* ---- reload safety ----------------------------------------------------------- */

static bool has_any_mod(const Module *m, const Stmt *s, const char *const *mods, size_t n)
{
	return stmt_mod_any(m, s, mods, n) >= 0;
}

int ana_reload_check(Dataflow *df, uint32_t load, uint32_t at, OpdLoad *out)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	memset(out, 0, sizeof *out);
	out->stmt = load;
	out->base_reg = -1;
	out->base_def = DF_DEF_NONE;
	out->blocker = -1;
	if (load >= f->nstmt || at >= f->nstmt)
		return -1;
	const Stmt *s = func_stmt(m, f, load);
	if (!is_load_op(s))
		return -1;
	out->space = s->op == OP_LDMATRIX ? SP_SHARED : stmt_space(m, s);
	out->resolved = addr_resolve(df, load, &out->addr) == 1;
	uint32_t d = load_dest(m, s), leaves[64];
	out->ndest = d == UINT32_MAX ? 0 : tuple_leaves(m, d, leaves, 64);
	/* the address operand: [reg] (ADDR > REG) or [reg+disp] (ADDR > EXPR >
	 * REG, INT), one element */
	uint32_t a = s->nopd >= 2 ? stmt_opd_index(m, s, 1) : UINT32_MAX;
	if (a != UINT32_MAX && m->opds.v[a].kind == OPD_ADDR && m->opds.v[a].sub >= 1) {
		uint32_t el = a + 1, reg_opd = UINT32_MAX, int_opd = UINT32_MAX;
		const Operand *x = &m->opds.v[el];
		if (opd_next(m, el) != a + 1 + m->opds.v[a].sub)
			; /* more than one element: [tex, coords] */
		else if (x->kind == OPD_REG || x->kind == OPD_IDENT)
			reg_opd = el;
		else if (x->kind == OPD_EXPR && x->sub == 2 &&
		         (m->opds.v[el + 1].kind == OPD_REG ||
		          m->opds.v[el + 1].kind == OPD_IDENT) &&
		         m->opds.v[el + 2].kind == OPD_INT) {
			reg_opd = el + 1;
			int_opd = el + 2;
		}
		int64_t r = reg_opd != UINT32_MAX ? df_opd_reg(df, reg_opd) : -1;
		if (r >= 0 && !df_reg(df, (uint32_t)r)->special) {
			out->base_reg = r;
			if (int_opd != UINT32_MAX) {
				Str t = opd_str(m, &m->opds.v[int_opd]);
				char buf[32];
				size_t n = t.n < sizeof buf - 1 ? t.n : sizeof buf - 1;
				memcpy(buf, t.p, n);
				buf[n] = 0;
				out->disp = strtoll(buf, NULL, 0);
			}
			out->base_def = df_reaching_def(df, load, (uint32_t)r);
		}
	}
	static const char *const order[] = {".volatile", ".relaxed", ".acquire", ".mmio"};
	if (load >= at) {
		out->why = "the load is not before the cut";
		return 0;
	}
	if (s->flags & STMT_GUARD) {
		out->why = "the load is guarded: it may not have run";
		return 0;
	}
	if (has_any_mod(m, s, order, ARRAY_SIZE(order))) {
		out->why = "a volatile, relaxed or acquire load: loading again is "
		           "another access";
		return 0;
	}
	if (out->base_reg < 0) {
		out->why = "the address is not [register] or [register+offset]";
		return 0;
	}
	for (uint32_t i = 0; i < f->nlabel; i++) {
		const Label *l = &m->labels.v[f->label0 + i];
		if (l->stmt > load && l->stmt <= at) {
			out->why = "a label between the load and the cut: another path "
			           "reaches the cut";
			out->blocker = l->stmt;
			return 0;
		}
	}
	int64_t def_at = df_reaching_def(df, at, (uint32_t)out->base_reg);
	if (out->base_def == DF_DEF_MANY || def_at != out->base_def) {
		out->why = "the base register does not hold the same value at the cut";
		out->blocker = def_at >= 0 ? def_at : -1;
		return 0;
	}
	const Addr *la = out->resolved ? &out->addr : NULL;
	for (uint32_t k = load + 1; k < at; k++) {
		MemEffect me = df_mem_effect(df, k);
		if (me.flags & ME_BARRIER) {
			out->why = "a barrier or fence between the load and the cut";
			out->blocker = k;
			return 0;
		}
		if (me.flags & ME_CALL) {
			out->why = "a call between the load and the cut";
			out->blocker = k;
			return 0;
		}
		if (func_stmt(m, f, k)->op == OP_CP &&
		    (me.flags & (ME_STORE | ME_ATOMIC))) {
			out->why = "an asynchronous copy between the load and the cut";
			out->blocker = k;
			return 0;
		}
		if (!(me.flags & (ME_STORE | ME_ATOMIC)) ||
		    !space_may_alias(me.store, out->space))
			continue;
		const Addr *sa = addr_cached(df, k);
		if (!la || !sa || !addr_disjoint(la, sa)) {
			out->why =
			    "a store between the load and the cut may write its bytes";
			out->blocker = k;
			return 0;
		}
		VEC_PUSH(out->checked, k);
	}
	out->reload_safe = true;
	return 0;
}

/* ---- the facts of a range ------------------------------------------------ */

/* Phase number of mma statement st (0 when it is in none). */
static uint32_t phase_of(const PhaseList *pl, uint32_t st)
{
	size_t lo = 0, hi = pl ? pl->n : 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pl->v[mid].last < st)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pl && lo < pl->n && pl->v[lo].first <= st && st <= pl->v[lo].last)
		return pl->v[lo].number;
	return 0;
}

static int32_t find_mma(const PhaseOperands *po, uint32_t st)
{
	size_t lo = 0, hi = po->mma.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (po->mma.v[mid].stmt < st)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < po->mma.n && po->mma.v[lo].stmt == st ? (int32_t)lo : -1;
}

static int32_t load_index(Dataflow *df, PhaseOperands *po, uint32_t st, OpdRole role)
{
	for (size_t i = 0; i < po->loads.n; i++)
		if (po->loads.v[i].stmt == st) {
			po->loads.v[i].roles |= 1u << role;
			return (int32_t)i;
		}
	OpdLoad l;
	ana_reload_check(df, st, po->first, &l);
	l.roles = 1u << role;
	VEC_PUSH(po->loads, l);
	return (int32_t)po->loads.n - 1;
}

static void unsupported(PhaseOperands *po, uint32_t st, const char *why)
{
	if (!po->unsupported) {
		po->unsupported = why;
		po->unsupported_stmt = st;
	}
}

/* Interns the tuple of registers regs[0..n) into ids: its index. */
typedef struct {
	VEC(uint32_t) regs;  /* concatenated */
	VEC(uint32_t) start; /* per tuple: start in regs, then one past the last */
} Intern;

static uint32_t intern(Intern *in, const uint32_t *v, uint32_t n)
{
	size_t nt = in->start.n ? in->start.n - 1 : 0;
	for (size_t t = 0; t < nt; t++) {
		uint32_t a = in->start.v[t], b = in->start.v[t + 1];
		if (b - a == n &&
		    (!n || !memcmp(in->regs.v + a, v, n * sizeof(uint32_t))))
			return (uint32_t)t;
	}
	if (!in->start.n)
		VEC_PUSH(in->start, 0);
	for (uint32_t i = 0; i < n; i++)
		VEC_PUSH(in->regs, v[i]);
	VEC_PUSH(in->start, (uint32_t)in->regs.n);
	return (uint32_t)nt;
}

static void intern_free(Intern *in)
{
	VEC_FREE(in->regs);
	VEC_FREE(in->start);
}

/* Chains, k-steps and tiles of the mma of po (words filled). */
static void tiles(PhaseOperands *po)
{
	size_t n = po->mma.n;
	uint32_t *tuple_a = xcalloc(n + 1, sizeof(uint32_t)),
	         *tuple_b = xcalloc(n + 1, sizeof(uint32_t));
	Intern ta = {0}, tb = {0}, sa = {0}, sb = {0};
	uint32_t regs[64];
	for (size_t i = 0; i < n; i++) {
		OpdMma *x = &po->mma.v[i];
		for (int r = ROLE_A; r <= ROLE_B; r++) {
			uint32_t k = x->nword[r];
			for (uint32_t j = 0; j < k && j < 64; j++)
				regs[j] = po->words.v[x->word[r] + j].reg;
			if (r == ROLE_A)
				tuple_a[i] = intern(&ta, regs, k);
			else
				tuple_b[i] = intern(&tb, regs, k);
		}
		/* chain: every C word is the same-position D word of one earlier mma */
		x->prev = -1;
		const OpdWord *c = &po->words.v[x->word[ROLE_C]];
		if (x->nword[ROLE_C] && c[0].value == OV_MMA) {
			int32_t j = c[0].src;
			bool chained = po->mma.v[j].nword[ROLE_D] == x->nword[ROLE_C];
			for (uint32_t w = 0; w < x->nword[ROLE_C] && chained; w++)
				chained = c[w].value == OV_MMA && c[w].src == j &&
				          c[w].elem == w;
			if (chained)
				x->prev = j;
		}
		if (x->prev >= 0) {
			x->k_step = po->mma.v[x->prev].k_step + 1;
			x->chain = po->mma.v[x->prev].chain;
		} else {
			x->k_step = 0;
			x->chain = po->chains++;
		}
		if (x->k_step + 1 > po->k_steps)
			po->k_steps = x->k_step + 1;
	}
	/* per chain, the sequence of A (B) tuples over its k-steps */
	VEC(uint32_t) seq = {0};
	uint32_t *mt = xcalloc(po->chains + 1, sizeof(uint32_t)),
	         *nt = xcalloc(po->chains + 1, sizeof(uint32_t));
	for (uint32_t ch = 0; ch < po->chains; ch++)
		for (int r = 0; r < 2; r++) {
			seq.n = 0;
			for (size_t i = 0; i < n; i++)
				if (po->mma.v[i].chain == ch)
					VEC_PUSH(seq, r ? tuple_b[i] : tuple_a[i]);
			uint32_t id = intern(r ? &sb : &sa, seq.v, (uint32_t)seq.n);
			(r ? nt : mt)[ch] = id;
		}
	po->m_tiles = sa.start.n ? (uint32_t)sa.start.n - 1 : 0;
	po->n_tiles = sb.start.n ? (uint32_t)sb.start.n - 1 : 0;
	for (size_t i = 0; i < n; i++) {
		po->mma.v[i].m_tile = mt[po->mma.v[i].chain];
		po->mma.v[i].n_tile = nt[po->mma.v[i].chain];
	}
	VEC_FREE(seq);
	free(mt);
	free(nt);
	free(tuple_a);
	free(tuple_b);
	intern_free(&ta);
	intern_free(&tb);
	intern_free(&sa);
	intern_free(&sb);
}

static void classify(Dataflow *df, const PhaseList *pl, PhaseOperands *po, uint32_t mi,
                     OpdWord *w, OpdRole role)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	uint32_t at = po->mma.v[mi].stmt;
	int64_t d = df_reaching_def(df, at, w->reg);
	w->def = d;
	w->src = -1;
	if (d == DF_DEF_NONE) {
		w->value = OV_UNDEF;
		return;
	}
	if (d < 0) {
		w->value = OV_MERGE;
		return;
	}
	const Stmt *ds = func_stmt(m, f, (uint32_t)d);
	if ((ds->flags & STMT_MMA) && (uint32_t)d >= po->first &&
	    (uint32_t)d <= po->last) {
		int32_t j = find_mma(po, (uint32_t)d);
		if (j >= 0) {
			w->value = OV_MMA;
			w->src = j;
			const OpdMma *x = &po->mma.v[j];
			for (uint32_t k = 0; k < x->nword[ROLE_D]; k++)
				if (po->words.v[x->word[ROLE_D] + k].reg == w->reg)
					w->elem = k;
			return;
		}
	}
	if (ds->flags & STMT_MMA) {
		w->value = OV_PHASE;
		w->src = (int32_t)phase_of(pl, (uint32_t)d);
		return;
	}
	if (is_load_op(ds)) {
		w->value = OV_LOAD;
		w->src = load_index(df, po, (uint32_t)d, role);
		w->elem = dest_elem(df, (uint32_t)d, w->reg, NULL);
		return;
	}
	if (df_stmt_is_zero_mov(m, ds))
		w->value = OV_ZERO;
	else if (df_stmt_is_conversion(m, ds))
		w->value = OV_CONVERTED;
	else
		w->value = OV_COMPUTED;
}

int ana_operands(Dataflow *df, const PhaseList *pl, uint32_t first, uint32_t last,
                 PhaseOperands *out, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	memset(out, 0, sizeof *out);
	if (first > last || last >= f->nstmt)
		return err_set(
		    e, "statement range [%u, %u] is outside the function (s0..s%u)",
		    first, last, f->nstmt ? f->nstmt - 1 : 0);
	out->first = first;
	out->last = last;
	/* the mma statements and their words; D words first, so that a later
	 * mma's operand can name an earlier one's D */
	for (uint32_t st = first; st <= last; st++) {
		const Stmt *s = func_stmt(m, f, st);
		if (!(s->flags & STMT_MMA))
			continue;
		if (s->op != OP_MMA || s->nopd < 4) {
			unsupported(out, st,
			            s->op == OP_WGMMA
			                ? "a wgmma statement: its operands are not "
			                  "register tuples"
			            : s->op == OP_WMMA
			                ? "a wmma statement: its fragments are not "
			                  "described"
			                : "an mma statement with fewer than four "
			                  "operands");
			continue;
		}
		OpdMma x;
		memset(&x, 0, sizeof x);
		x.stmt = st;
		for (int r = 0; r < ROLE__N; r++) {
			uint32_t leaves[64];
			unsigned n = tuple_leaves(m, stmt_opd_index(m, s, (unsigned)r),
			                          leaves, 64);
			x.word[r] = (uint32_t)out->words.n;
			for (unsigned k = 0; k < n; k++) {
				int64_t reg = df_opd_reg(df, leaves[k]);
				if (reg < 0 || df_opd_partial(df, leaves[k])) {
					unsupported(out, st,
					            "an operand element that is not a "
					            "whole register");
					continue;
				}
				OpdWord w;
				memset(&w, 0, sizeof w);
				w.reg = (uint32_t)reg;
				w.opd = leaves[k];
				w.def = st;
				w.value = OV_MMA;
				w.src = (int32_t)out->mma.n;
				w.elem = (uint32_t)x.nword[r];
				VEC_PUSH(out->words, w);
				x.nword[r]++;
			}
		}
		VEC_PUSH(out->mma, x);
	}
	if (out->unsupported)
		return 0;
	for (uint32_t i = 0; i < out->mma.n; i++) {
		OpdMma *x = &out->mma.v[i];
		for (int r = ROLE_A; r < ROLE__N; r++)
			for (uint32_t k = 0; k < x->nword[r]; k++)
				classify(df, pl, out, i, &out->words.v[x->word[r] + k],
				         (OpdRole)r);
		const OpdWord *c = &out->words.v[x->word[ROLE_C]];
		for (uint32_t a = 0; a < x->nword[ROLE_C]; a++)
			for (uint32_t b = a + 1; b < x->nword[ROLE_C]; b++)
				if (c[a].reg == c[b].reg)
					x->c_dup = true;
	}
	tiles(out);
	return 0;
}

void phase_operands_release(PhaseOperands *po)
{
	for (size_t i = 0; i < po->loads.n; i++)
		VEC_FREE(po->loads.v[i].checked);
	VEC_FREE(po->mma);
	VEC_FREE(po->words);
	VEC_FREE(po->loads);
	memset(po, 0, sizeof *po);
}
