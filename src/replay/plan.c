/*
 * plan.c - the state plan of a cut: what a replay must load at the cut's
 * start and compare at its end, and what it cannot do.
 *
 * A cut runs alone when everything it reads is put back as the original
 * kernel had it at the cut's start:
 *  - registers: the live-ins of the original's cut and of the spliced one
 *    (a template may read registers the original's cut does not, the
 *    address bases of the loads it issues again), every thread's;
 *  - shared memory: each block's, every variable the kernel's state holds,
 *    static and dynamic, whole (a cut reads shared memory other warps
 *    wrote; the address facts do not bound it across threads);
 *  - global memory and arrays: the buffers the cuts read, taken whole at
 *    the launch's start, and the arrays they read or write (plan_mem.c
 *    says when that is the state at the cut, and refuses the rest).
 * At the end: the original's live-outs, the blocks' shared memory, the
 * bytes of the launch buffers the cuts write (bounded by the address
 * facts, else the whole buffer; refused when anything else of the kernel
 * may write them) and the arrays they write through a surface.
 *
 * Decisions:
 *  - Refusals are collected, not returned at the first: the plan says
 *    everything that stands in the way, each with its statement, so one
 *    run tells the author all of it.  The plan is otherwise complete, so
 *    --plan shows what would be taken even when it refuses.
 *  - Control flow: a cut replays when its statements are entered only at
 *    the first and left only after the last.  A branch to a label outside
 *    the cut (before it: a loop back edge leaving the cut), a label inside
 *    it that a branch outside reaches, a ret or exit: refused.  A loop
 *    wholly inside the cut, and bar.sync (whole blocks replay), replay.
 *  - Asynchronous work in flight at the cut's start (a wgmma group or a
 *    cp.async group committed before the cut and not waited for with
 *    wait_group 0 before it) writes registers or shared memory during the
 *    cut that no state at its start holds: refused.  So are, inside a cut,
 *    atomics (their result depends on other blocks), mbarrier and
 *    asynchronous copies, calls, local memory (spills: per-thread state the
 *    dump does not take) and surface reductions.
 *  - Pointer-valued live-ins are rebased (replay.h says how and why); the
 *    walk that classifies them is memoised per defining statement.
 */
#include "replay/plan_internal.h"

#include "ptx/lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *replay_value_kind_name(ReplayValueKind k)
{
	return k == RV_PARAM ? "param" : k == RV_SYMBOL ? "symbol" : "data";
}

/* ---- 1. what a value is made of --------------------------------------------------- */

static Val val_data(void)
{
	Val v = {RV_DATA, 0, {0}, 0, 0, NULL};
	return v;
}

static Val val_refuse(uint32_t stmt, const char *why)
{
	Val v = {-1, 0, {0}, 0, stmt, why};
	return v;
}

static bool same_base(const Val *a, const Val *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == RV_PARAM)
		return a->param_off == b->param_off && str_eq(a->sym, b->sym);
	if (a->kind == RV_SYMBOL)
		return str_eq(a->sym, b->sym);
	return true;
}

/* a + b (sign -1: a - b) */
static Val val_add(Val a, Val b, int sign, uint32_t stmt)
{
	if (a.kind < 0)
		return a;
	if (b.kind < 0)
		return b;
	if (b.kind == RV_DATA)
		return a;
	if (a.kind == RV_DATA)
		return sign > 0 ? b
		                : val_refuse(stmt, "subtracts an address from data (the "
		                                   "negated base cannot be rebased)");
	if (sign < 0 && same_base(&a, &b))
		return val_data(); /* the difference of two addresses of one base */
	return val_refuse(stmt, "adds two addresses (a base counted twice cannot be "
	                        "rebased)");
}

static Val val_of_reg(Walk *w, uint32_t use, uint32_t reg);

/* The class of a register operand (index oi in m->opds) at statement s;
 * literals are data. */
Val plan_val_of_opd(Walk *w, uint32_t s, uint32_t oi)
{
	const Operand *o = &w->m->opds.v[oi];
	if (o->kind == OPD_REG || o->kind == OPD_IDENT) {
		int64_t r = df_opd_reg(w->df, oi);
		if (r >= 0) {
			const RegInfo *ri = df_reg(w->df, (uint32_t)r);
			if (ri->special)
				return val_data();
			return val_of_reg(w, s, (uint32_t)r);
		}
	}
	if (o->kind == OPD_VEC) {
		/* a pack of registers: data unless an element is an address */
		for (uint32_t k = oi + 1; k <= oi + o->sub; k = opd_next(w->m, k)) {
			Val e = plan_val_of_opd(w, s, k);
			if (e.kind != RV_DATA)
				return e.kind < 0
				           ? e
				           : val_refuse(s, "packs an address into a "
				                           "vector");
		}
	}
	return val_data();
}

/* A name that is not a register: the kernel's parameter (its address), or a
 * symbol. */
static Val val_of_name(Walk *w, uint32_t s, Str name)
{
	for (uint32_t i = 0; i < w->f->nparam; i++)
		if (str_eq(mod_str(w->m, w->m->params.v[w->f->param0 + i].name), name))
			return val_refuse(s, "takes the address of the parameter block "
			                     "(another launch's is elsewhere)");
	Val v = {RV_SYMBOL, 0, name, s, 0, NULL};
	return v;
}

/* The offset in the parameter block of kernel parameter `name` of f: each
 * parameter at the next multiple of its alignment (.align N, else its
 * element's size), as the launch lays them out; -1 if f has none so named. */
int64_t plan_param_start(const Module *m, const Func *f, Str name)
{
	uint64_t off = 0;
	for (uint32_t i = 0; i < f->nparam; i++) {
		const Param *pa = &m->params.v[f->param0 + i];
		Str t = mod_str(m, pa->type);
		uint64_t el = t.n >= 3 ? strtoul(t.p + 2, NULL, 10) / 8 : 1;
		if (!el)
			el = 1;
		uint64_t al = pa->align ? pa->align : el;
		off = (off + al - 1) / al * al;
		if (str_eq(mod_str(m, pa->name), name))
			return (int64_t)off;
		off += el * (pa->array ? pa->array : 1);
	}
	return -1;
}

/* What the register statement s defines is made of. */
static Val val_of_def(Walk *w, uint32_t s, uint32_t reg)
{
	const Module *m = w->m;
	const Stmt *st = func_stmt(m, w->f, s);
	uint32_t nd;
	df_defs(w->df, s, &nd);
	bool memo = nd == 1;
	if (memo && w->state[s] == 2)
		return w->memo[s];
	if (memo && w->state[s] == 1)
		return val_data(); /* a cycle (a loop): its other definitions decide */
	if (++w->depth > 20000) {
		w->depth--;
		return val_refuse(s, "a definition chain too long to follow");
	}
	if (memo)
		w->state[s] = 1;
	Val v = val_data();
	unsigned n = st->nopd;
	uint32_t oi[8];
	for (unsigned i = 0; i < n && i < 8; i++)
		oi[i] = stmt_opd_index(m, st, i);
	switch (st->op) {
	case OP_LD:
	case OP_LDU: {
		Addr a;
		if (stmt_space(m, st) == SP_PARAM && addr_resolve(w->df, s, &a) == 1 &&
		    a.base == AB_PARAM && !a.param_ptr && !a.variable) {
			const RegInfo *ri = df_reg(w->df, reg);
			if (ri->bits == 64) {
				int64_t p0 = plan_param_start(m, w->f, a.base_name);
				int64_t off = a.param_off + a.offset;
				const Operand *d = &m->opds.v[oi[0]];
				if (d->kind == OPD_VEC) {
					unsigned k = 0;
					for (uint32_t c = oi[0] + 1; c <= oi[0] + d->sub;
					     c = opd_next(m, c), k++)
						if (df_opd_reg(w->df, c) == (int64_t)reg)
							break;
					off += 8 * (int64_t)k;
				}
				v = (Val){RV_PARAM, off, a.base_name, s, 0, NULL};
				if (p0 < 0)
					v = val_refuse(
					    s, "loads from a parameter the kernel does "
					       "not declare");
			}
		}
		break; /* any other load: the bits loaded */
	}
	case OP_MOV:
	case OP_CVTA:
	case OP_CVT:
		if (n >= 2) {
			const Operand *o = &m->opds.v[oi[1]];
			uint32_t src = oi[1];
			if (o->kind == OPD_EXPR)
				src = oi[1] + 1; /* sym+4: its first term */
			const Operand *so = &m->opds.v[src];
			if (so->kind == OPD_IDENT && df_opd_reg(w->df, src) < 0)
				v = val_of_name(w, s, opd_str(m, so));
			else
				v = plan_val_of_opd(w, s, oi[1]);
			if (v.kind > 0 && st->op == OP_CVT &&
			    (stmt_has_mod(m, st, ".f32") || stmt_has_mod(m, st, ".f64") ||
			     stmt_has_mod(m, st, ".f16")))
				v = val_refuse(s, "turns an address into a float");
		}
		break;
	case OP_ADD:
	case OP_SUB:
		if (n >= 3)
			v = val_add(plan_val_of_opd(w, s, oi[1]),
			            plan_val_of_opd(w, s, oi[2]),
			            st->op == OP_SUB ? -1 : 1, s);
		break;
	case OP_MAD:
		if (n >= 4) {
			Val a = plan_val_of_opd(w, s, oi[1]),
			    b = plan_val_of_opd(w, s, oi[2]);
			if (a.kind != RV_DATA || b.kind != RV_DATA)
				v = a.kind < 0   ? a
				    : b.kind < 0 ? b
				                 : val_refuse(s, "multiplies an address");
			else
				v = plan_val_of_opd(w, s, oi[3]);
		}
		break;
	case OP_SELP:
		if (n >= 3) {
			Val a = plan_val_of_opd(w, s, oi[1]),
			    b = plan_val_of_opd(w, s, oi[2]);
			v = a.kind < 0   ? a
			    : b.kind < 0 ? b
			    : same_base(&a, &b)
			        ? a
			        : val_refuse(s,
			                     "selects between values of different bases");
		}
		break;
	case OP_ATOM:
	case OP_TEX:
	case OP_TLD4:
	case OP_SULD:
	case OP_LDMATRIX:
	case OP_SHFL:
	case OP_MMA:
	case OP_WGMMA:
	case OP_WMMA:
		break; /* values computed from memory or other lanes: data */
	default:
		/* any other operation of an address cannot be rebased */
		for (unsigned i = 1; i < n && i < 8 && v.kind >= 0; i++) {
			Val a = plan_val_of_opd(w, s, oi[i]);
			if (a.kind < 0)
				v = a;
			else if (a.kind != RV_DATA)
				v = val_refuse(
				    s, "computes with an address (not a sum of one "
				       "base and data)");
		}
	}
	w->depth--;
	if (memo) {
		w->state[s] = 2;
		w->memo[s] = v;
	}
	return v;
}

/* What register reg holds at the use at statement `use`. */
static Val val_of_reg(Walk *w, uint32_t use, uint32_t reg)
{
	int64_t d = df_reaching_def(w->df, use, reg);
	if (d == DF_DEF_NONE)
		return val_data(); /* undefined: whatever bits it has */
	if (d >= 0)
		return val_of_def(w, (uint32_t)d, reg);
	uint32_t defs[64];
	uint32_t nd = df_reaching_defs(w->df, use, reg, defs, 64, NULL);
	if (nd > 64)
		return val_refuse(use, "reads it where more definitions reach it than "
		                       "replay follows");
	Val v = val_data();
	bool any = false;
	for (uint32_t i = 0; i < nd; i++) {
		Val x = val_of_def(w, defs[i], reg);
		if (x.kind < 0)
			return x;
		if (!any)
			v = x;
		else if (!same_base(&v, &x))
			return val_refuse(use,
			                  "reads it where definitions of different bases "
			                  "reach it (a loop or a join of two addresses)");
		any = true;
	}
	return v;
}

/* ---- 2. registers ------------------------------------------------------------------ */

static ReplayReg *find_reg(ReplayPlan *p, Str name, bool out)
{
	VEC(ReplayReg) *v = out ? (void *)&p->live_out : (void *)&p->live_in;
	for (size_t i = 0; i < v->n; i++)
		if (str_eqc(name, v->v[i].name))
			return &v->v[i];
	return NULL;
}

void plan_refuse(ReplayPlan *p, const Module *m, const Func *f, uint32_t stmt,
                 bool spliced, const char *fmt, ...)
{
	va_list ap;
	if (stmt < f->nstmt)
		sb_addf(&p->refused, "%ss%u (line %u): ", spliced ? "spliced " : "", stmt,
		        func_stmt(m, f, stmt)->line);
	va_start(ap, fmt);
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	sb_adds(&p->refused, buf);
	sb_addc(&p->refused, '\n');
	p->nrefused++;
}

/* Adds the live-ins of one cut (df over its module) to the plan. */
static void add_live_in(ReplayPlan *p, const ReplayRequest *q, Walk *w, bool spliced,
                        Dataflow *df, uint32_t first, uint32_t last, Err *e, int *rc)
{
	CutInterface cut = {0};
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	if (df_cut(df, first, last, &cut, e) < 0) {
		*rc = -1;
		cut_release(&cut);
		return;
	}
	for (size_t i = 0; i < cut.live_in.n; i++) {
		const CutReg *cr = &cut.live_in.v[i];
		const RegInfo *ri = df_reg(df, cr->reg);
		if (ri->special)
			continue;
		ReplayReg *have = find_reg(p, ri->name, false);
		if (have) {
			if (spliced)
				have->spliced = true;
			else
				have->original = true;
			continue;
		}
		ReplayReg r = {0};
		r.name = xstrndup(ri->name.p, ri->name.n);
		r.original = !spliced;
		r.spliced = spliced;
		r.stmt = cr->stmt;
		if (ri->vec) {
			plan_refuse(
			    p, m, f, cr->stmt, spliced,
			    "live-in '%s' is a vector register (.v%u): the state holds "
			    "scalars",
			    r.name, ri->vec);
			VEC_PUSH(p->live_in, r);
			continue;
		}
		/* its value as the original has it before the cut */
		int64_t ro = df_reg_find(q->dfo, ri->name);
		int64_t d = ro < 0 ? DF_DEF_NONE
		                   : df_reaching_def(q->dfo, q->first, (uint32_t)ro);
		const Stmt *ds = d >= 0 ? func_stmt(q->mo, q->fo, (uint32_t)d) : NULL;
		const RegInfo *rio = ro < 0 ? ri : df_reg(q->dfo, (uint32_t)ro);
		int fmt = probe_value_fmt(q->mo, ds, rio);
		if (fmt < 0) {
			plan_refuse(
			    p, m, f, cr->stmt, spliced,
			    "live-in '%s' has %u bits, a width the state does not store",
			    r.name, ri->bits);
			fmt = PF_HEX32;
		}
		r.fmt = (uint8_t)fmt;
		if (ro < 0)
			plan_refuse(p, m, f, cr->stmt, spliced,
			            "live-in '%s' is not a register of the original",
			            r.name);
		else {
			Val v = val_of_reg(w, q->first, (uint32_t)ro);
			if (v.kind < 0) {
				plan_refuse(
				    p, q->mo, q->fo, v.why_stmt, false,
				    "live-in '%s' cannot be rebased: this statement %s",
				    r.name, v.why);
			} else {
				r.kind = (uint8_t)v.kind;
				r.param_in = v.param_off;
				if (v.kind == RV_PARAM) {
					r.param = xstrndup(v.sym.p, v.sym.n);
					r.param_off =
					    plan_param_start(q->mo, q->fo, v.sym) +
					    v.param_off;
				}
				r.evidence = v.evidence;
				if (v.kind == RV_SYMBOL)
					r.symbol = xstrndup(v.sym.p, v.sym.n);
			}
		}
		VEC_PUSH(p->live_in, r);
	}
	if (!spliced)
		for (size_t i = 0; i < cut.live_out.n; i++) {
			const CutReg *cr = &cut.live_out.v[i];
			const RegInfo *ri = df_reg(df, cr->reg);
			ReplayReg r = {0};
			r.name = xstrndup(ri->name.p, ri->name.n);
			r.original = r.spliced = true;
			r.stmt = cr->stmt;
			int fmt = ri->vec
			              ? -1
			              : probe_value_fmt(m, func_stmt(m, f, cr->stmt), ri);
			if (fmt < 0) {
				plan_refuse(p, m, f, cr->stmt, false,
				            "live-out '%s' is a vector or of a width the "
				            "state does "
				            "not store",
				            r.name);
				fmt = PF_HEX32;
			}
			r.fmt = (uint8_t)fmt;
			VEC_PUSH(p->live_out, r);
		}
	cut_release(&cut);
}

/* ---- 3. control flow and asynchronous work ---------------------------------------- */

/* The statement label `name` of f stands before, or -1. */
static int64_t label_stmt(const Module *m, const Func *f, Str name)
{
	for (uint32_t i = 0; i < f->nlabel; i++)
		if (str_eq(mod_str(m, m->labels.v[f->label0 + i].name), name))
			return m->labels.v[f->label0 + i].stmt;
	return -1;
}

/* The label a branch statement names, or an empty Str. */
static Str branch_target(const Module *m, const Stmt *s)
{
	for (unsigned i = 0; i < s->nopd; i++) {
		const Operand *o = stmt_opd(m, s, i);
		if (o->kind == OPD_IDENT)
			return opd_str(m, o);
	}
	return str_of(NULL, 0);
}

static void check_flow(ReplayPlan *p, const Module *m, const Func *f, uint32_t first,
                       uint32_t last, bool spliced)
{
	for (uint32_t i = 0; i < f->nstmt; i++) {
		const Stmt *s = func_stmt(m, f, i);
		bool in = i >= first && i <= last;
		if (in && (s->op == OP_RET || s->op == OP_EXIT || s->op == OP_TRAP)) {
			plan_refuse(p, m, f, i, spliced,
			            "'%.*s' inside the cut: the cut must "
			            "end after its last statement",
			            (int)s->oplen, m->src + s->off + s->opdelta);
			continue;
		}
		if (s->op != OP_BRA && s->op != OP_BRX)
			continue;
		if (s->op == OP_BRX) {
			if (in)
				plan_refuse(p, m, f, i, spliced,
				            "an indirect branch (brx) inside the "
				            "cut");
			continue;
		}
		Str t = branch_target(m, s);
		int64_t to = label_stmt(m, f, t);
		if (to < 0)
			continue;
		bool to_in = to >= first && to <= last;
		if (in && !to_in && to != (int64_t)last + 1)
			plan_refuse(p, m, f, i, spliced,
			            "%s: a branch to '%.*s' (s%lld) %s the cut",
			            to <= (int64_t)i ? "a loop back edge leaving the cut"
			                             : "a branch leaving the cut",
			            (int)t.n, t.p, (long long)to,
			            to < (int64_t)first ? "before" : "after");
		else if (in && to == (int64_t)first)
			plan_refuse(
			    p, m, f, i, spliced,
			    "a loop back edge to the cut's first statement ('%.*s'): "
			    "the state at the cut's start would be taken on every "
			    "iteration; start the cut before the loop's label (a "
			    "whole loop inside the cut replays)",
			    (int)t.n, t.p);
		else if (!in && to_in && to != (int64_t)first)
			plan_refuse(
			    p, m, f, i, spliced,
			    "a branch from outside enters the cut at '%.*s' (s%lld)",
			    (int)t.n, t.p, (long long)to);
	}
}

/* The cut's text [off, end) must hold whole `{ }` scopes: the replay entry
 * copies it into a function body of its own. */
static void check_scopes(ReplayPlan *p, const Module *m, const Func *f, size_t off,
                         size_t end, uint32_t first, bool spliced)
{
	for (uint32_t k = 1; k < f->nscope; k++) {
		const Scope *sc = &m->scopes.v[f->scope0 + k];
		bool o = sc->open >= off && sc->open < end;
		bool c = sc->close >= off && sc->close < end;
		if (o != c || (!o && sc->open < off && sc->close >= end)) {
			plan_refuse(
			    p, m, f, first, spliced,
			    "the cut %s a '{ }' scope (lines of its own braces): it must "
			    "hold whole scopes",
			    o != c ? "splits" : "lies inside");
			return;
		}
	}
}

/* Is s the `wait_group 0` (or wait_all) of its family? */
static bool waits_all(const Module *m, const Stmt *s)
{
	if (stmt_has_mod(m, s, ".wait_all"))
		return true;
	if (!stmt_has_mod(m, s, ".wait_group") || !s->nopd)
		return false;
	const Operand *o = stmt_opd(m, s, 0);
	return o->kind == OPD_INT && str_eqc(opd_str(m, o), "0");
}

/* Asynchronous groups in flight at the cut's start (original's numbering). */
static void check_async(ReplayPlan *p, const Module *m, const Func *f, uint32_t first)
{
	int64_t wg = -1, cp = -1; /* the last issue not yet waited for */
	for (uint32_t i = 0; i < first; i++) {
		const Stmt *s = func_stmt(m, f, i);
		if (s->op == OP_WGMMA) {
			if (waits_all(m, s))
				wg = -1;
			else if (stmt_has_mod(m, s, ".mma_async") && wg < 0)
				wg = i;
		} else if (s->op == OP_CP && stmt_has_mod(m, s, ".async")) {
			if (waits_all(m, s))
				cp = -1;
			else if (!stmt_has_mod(m, s, ".wait_group") && cp < 0)
				cp = i;
		}
	}
	if (wg >= 0)
		plan_refuse(
		    p, m, f, (uint32_t)wg, false,
		    "a wgmma group in flight at the cut's start: no 'wgmma.wait_group 0' "
		    "between this wgmma and s%u, so the group's results land during the "
		    "cut",
		    first);
	if (cp >= 0)
		plan_refuse(
		    p, m, f, (uint32_t)cp, false,
		    "an asynchronous copy in flight at the cut's start: no "
		    "'cp.async.wait_group 0' or wait_all between this copy and s%u",
		    first);
}

/* ---- 5. shared memory -----------------------------------------------------------------
 */

static uint64_t type_bytes(Str t)
{
	if (t.n < 3)
		return 0;
	unsigned bits = (unsigned)strtoul(t.p + 2, NULL, 10);
	if (t.p[1] == 'v')
		return 0;
	return bits / 8;
}

/*
 * Reads the shared declarations in text[0..n) (a function's declaration
 * lines, or one module-level variable) with the lexer: `.shared [.align A]
 * .TYPE name[N]...;`, each appended to the plan.
 */
static void scan_shared(ReplayPlan *p, const ReplayRequest *q, const char *text, size_t n)
{
	Lexer lx = ptx_lex_init(text, n);
	for (;;) {
		Token t = ptx_lex_next(&lx);
		if (t.kind == TK_END)
			break;
		if (t.kind != TK_DIRECTIVE || !str_eqc(str_of(t.p, t.n), ".shared"))
			continue;
		ReplayShared sh = {0};
		uint64_t elem = 1, count = 1;
		bool unsized = false, is_extern = false;
		Str name = {0};
		for (;;) {
			Token u = ptx_lex_next(&lx);
			Str us = str_of(u.p, u.n);
			if (u.kind == TK_END ||
			    (u.kind == TK_PUNCT && (*u.p == ';' || *u.p == '=')))
				break;
			if (u.kind == TK_DIRECTIVE) {
				if (str_eqc(us, ".align")) {
					Token a;
					do
						a = ptx_lex_next(&lx);
					while (a.kind == TK_SPACE ||
					       a.kind == TK_COMMENT);
					sh.align = (uint32_t)strtoul(a.p, NULL, 0);
				} else if (str_eqc(us, ".extern"))
					is_extern = true;
				else if (type_bytes(us))
					elem = type_bytes(us);
			} else if (u.kind == TK_NAME && !name.n)
				name = us;
			else if (u.kind == TK_PUNCT && *u.p == '[') {
				Token c;
				do
					c = ptx_lex_next(&lx);
				while (c.kind == TK_SPACE);
				if (c.kind == TK_NUMBER)
					count *= strtoull(c.p, NULL, 0);
				else
					unsized = true;
			}
		}
		if (!name.n)
			continue;
		sh.name = xstrndup(name.p, name.n);
		sh.dynamic = unsized;
		(void)is_extern;
		sh.bytes = sh.dynamic ? q->launch->dynamic_shared_bytes : elem * count;
		if (!sh.align)
			sh.align = (uint32_t)elem;
		VEC_PUSH(p->shared, sh);
	}
}

static void find_shared(ReplayPlan *p, const ReplayRequest *q)
{
	const Module *m = q->mo;
	for (size_t i = 0; i < m->items.n; i++) {
		const Item *it = &m->items.v[i];
		if (it->kind == ITEM_VAR && it->space == 's')
			scan_shared(p, q, m->src + it->text.off, it->text.len);
	}
	/* the function's own: its declaration lines, before the first statement */
	size_t from = q->fo->body_open + 1;
	size_t to = q->fo->nstmt ? func_stmt(m, q->fo, 0)->off : q->fo->body_close;
	scan_shared(p, q, m->src + from, to - from);
	uint64_t off = 0;
	for (size_t i = 0; i < p->shared.n; i++) {
		ReplayShared *sh = &p->shared.v[i];
		uint64_t al = sh->align < 16 ? 16 : sh->align;
		off = (off + al - 1) / al * al;
		sh->off = off;
		off += (sh->bytes + 15) / 16 * 16;
	}
	p->shared_bytes = off;
}

/* ---- 6. the plan ------------------------------------------------------------------- */

int replay_plan(const ReplayRequest *q, ReplayPlan *p, Err *e)
{
	memset(p, 0, sizeof *p);
	p->first = q->first;
	p->last = q->last;
	p->s_first = q->s_first;
	p->s_last = q->s_last;
	if (q->first > q->last || q->last >= q->fo->nstmt || q->s_first > q->s_last ||
	    q->s_last >= q->fs->nstmt)
		return err_set(e, "replay: the cut s%u-s%u is not inside the function",
		               q->first, q->last);
	p->first_line = func_stmt(q->mo, q->fo, q->first)->line;
	p->last_line = func_stmt(q->mo, q->fo, q->last)->line;
	memcpy(p->grid, q->launch->grid, sizeof p->grid);
	memcpy(p->block, q->launch->block, sizeof p->block);
	p->param_size = q->launch->param_size;
	p->warps = probe_grid_warps(p->grid, p->block);
	p->blocks = (uint64_t)p->grid[0] * p->grid[1] * p->grid[2];

	Walk w = {q->dfo, q->mo, q->fo, NULL, NULL, 0};
	w.memo = xcalloc(q->fo->nstmt + 1, sizeof(Val));
	w.state = xcalloc(q->fo->nstmt + 1, 1);
	int rc = 0;
	add_live_in(p, q, &w, false, q->dfo, q->first, q->last, e, &rc);
	if (!rc && q->dfs != q->dfo)
		add_live_in(p, q, &w, true, q->dfs, q->s_first, q->s_last, e, &rc);
	free(w.memo);
	free(w.state);
	if (rc < 0)
		return -1;
	check_flow(p, q->mo, q->fo, q->first, q->last, false);
	if (q->dfs != q->dfo)
		check_flow(p, q->ms, q->fs, q->s_first, q->s_last, true);
	{
		const Stmt *a = func_stmt(q->mo, q->fo, q->first);
		const Stmt *b = func_stmt(q->mo, q->fo, q->last);
		check_scopes(p, q->mo, q->fo, a->off, (size_t)b->off + b->len, q->first,
		             false);
		if (q->dfs != q->dfo && q->s_len)
			check_scopes(p, q->ms, q->fs, q->s_off, q->s_off + q->s_len,
			             q->s_first, true);
	}
	check_async(p, q->mo, q->fo, q->first);
	plan_check_memory(p, q, q->dfo, q->first, q->last, false);
	if (q->dfs != q->dfo)
		plan_check_memory(p, q, q->dfs, q->s_first, q->s_last, true);
	plan_join_spans(p);
	plan_check_outside_writes(p, q);
	find_shared(p, q);
	/* the dump's records go before the first statement and after the last */
	ProbeRecord at[2] = {{.at = q->first, .before = true}, {.at = q->last}};
	for (int i = 0; i < 2; i++) {
		Err pe = ERR_INIT;
		if (probe_record_check(q->mo, q->fo, &at[i], &pe) < 0)
			plan_refuse(p, q->mo, q->fo, at[i].at, false,
			            "the dump cannot store the state "
			            "%s it: %s",
			            i ? "after" : "before", err_msg(&pe));
		err_release(&pe);
	}
	return 0;
}

void replay_plan_release(ReplayPlan *p)
{
	for (size_t i = 0; i < p->live_in.n; i++) {
		free(p->live_in.v[i].name);
		free(p->live_in.v[i].symbol);
		free(p->live_in.v[i].param);
	}
	for (size_t i = 0; i < p->live_out.n; i++)
		free(p->live_out.v[i].name);
	for (size_t i = 0; i < p->shared.n; i++)
		free(p->shared.v[i].name);
	for (size_t i = 0; i < p->access.n; i++)
		free(p->access.v[i].what);
	VEC_FREE(p->live_in);
	VEC_FREE(p->live_out);
	VEC_FREE(p->shared);
	VEC_FREE(p->access);
	VEC_FREE(p->buffers_in);
	VEC_FREE(p->textures);
	VEC_FREE(p->buffers_out);
	VEC_FREE(p->spans);
	VEC_FREE(p->arrays_in);
	VEC_FREE(p->arrays_out);
	sb_release(&p->refused);
	memset(p, 0, sizeof *p);
}
