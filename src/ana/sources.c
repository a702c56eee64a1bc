/*
 * sources.c - where the operands of a phase come from: A, B and C.
 *
 * Each mma operand is followed back by reaching definition (live.c) and
 * classified by the definitions in d4r-splice(1); every kind keeps the
 * statement that shows it, and a value that does not resolve is reported
 * as such, never guessed:
 *
 *  - A source: the reaching definition of each A register decides: a load
 *    (ld, ldmatrix, wmma.load, tex ...) gives the kind of the space it
 *    reads, the opcode's, or for a generic address the space the address
 *    resolves into: shared (with the constant offsets), global, generic
 *    (unknown), or loaded with another space; the same through statements
 *    that only move or convert bits (mov, prmt, cvt) from loads of one
 *    kind, the opcodes noted ("through"); a wgmma's A descriptor is shared
 *    (the PTX ISA: it describes a matrix in shared memory).  Else a
 *    conversion (cvt to e4m3/e5m2, f16 packs) whose backward slice reaches
 *    the D of an earlier phase q ("converted", the latest such q),
 *    registers defined before an earlier phase ("passthrough"), else
 *    "computed".
 *  - C operand of the chain heads, per register from the definitions that
 *    reach it, each followed back through mov copies: all zero (a mov of
 *    the immediate 0; a wgmma with scale-d 0 reads no C), exactly the D of
 *    phase q ("phase_acc"), loaded (space, and the element byte offsets of
 *    plain loads whose addresses resolve), loop_carried (the phase's own D
 *    around a loop, with the kind of the value on entry), or computed.
 *  - B: when every B register is loaded by a plain load through an
 *    address that resolves, the [lowest, highest] element offset from that
 *    base (weight_bytes), and the strides of the thread-dependent part when
 *    every load has the same exact ones; B from the thread's own stack
 *    (.local: a spill, or -G code) is not followed.
 *
 *
 * The backward slice (below) walks the definitions an operand depends on,
 * once per operand, with an epoch instead of clearing its marks.
 */
#include "ana/ana.h"
#include "ana/phase_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- backward slices ----------------------------------------------------- */

struct PhSlice {
	Dataflow *df;
	const int32_t *phase_of; /* stmt -> phase number (0 if none) */
	uint32_t *seen;          /* per statement: the slice that saw it last */
	uint32_t epoch;          /* this slice's number */
	uint32_t *stack;
	size_t nstack, cap;
	int32_t max_phase; /* latest phase whose D the slice reaches */
	uint32_t loads, visited;
	int hit_conversion;
};

static bool is_wmma_load(const Module *m, const Stmt *s)
{
	return s->op == OP_WMMA && stmt_opcode_is(m, s, "wmma.load");
}

/* A statement that loads registers from memory. */
static int is_load(const Module *m, const Stmt *s)
{
	return s->op == OP_LD || s->op == OP_LDU || s->op == OP_LDMATRIX ||
	       s->op == OP_TEX || s->op == OP_TLD4 || s->op == OP_SULD ||
	       is_wmma_load(m, s);
}

/* A load whose destination registers hold consecutive elements at its
 * address (ld, ldu, the .vN forms): the bytes each register holds are
 * known from the address.  ldmatrix and wmma.load give each lane parts of
 * rows other lanes address, tex and suld go through a sampler. */
static bool is_plain_load(const Stmt *s)
{
	return s->op == OP_LD || s->op == OP_LDU;
}

/* The state space a load reads: its opcode's, or for a generic address
 * the space its address resolves into (a cvta, a .shared symbol); generic
 * when that is unknown.  ldmatrix reads shared memory. */
static Space load_space(Dataflow *df, uint32_t st)
{
	const Stmt *s = func_stmt(df_module(df), df_func(df), st);
	if (s->op == OP_LDMATRIX)
		return SP_SHARED;
	Space sp = stmt_space(df_module(df), s);
	Addr a;
	if (sp == SP_GENERIC && addr_resolve(df, st, &a) == 1)
		sp = a.space;
	return sp;
}

static void slice_push(PhSlice *sl, uint32_t st)
{
	if (sl->seen[st] == sl->epoch)
		return;
	sl->seen[st] = sl->epoch;
	if (sl->nstack == sl->cap) {
		sl->cap = sl->cap ? sl->cap * 2 : 256;
		sl->stack = xrealloc(sl->stack, sl->cap * sizeof(uint32_t));
	}
	sl->stack[sl->nstack++] = st;
}

/* Walks definitions backwards from the defs of `regs` used at `at`; stops at
 * mma statements (recording their phase) and at loads. */
static void slice_run(PhSlice *sl, uint32_t at, const uint32_t *regs, unsigned nregs,
                      uint32_t limit)
{
	const Module *m = df_module(sl->df);
	const Func *f = df_func(sl->df);
	for (unsigned i = 0; i < nregs; i++) {
		int64_t d = df_reaching_def(sl->df, at, regs[i]);
		if (d >= 0)
			slice_push(sl, (uint32_t)d);
	}
	while (sl->nstack && sl->visited < limit) {
		uint32_t st = sl->stack[--sl->nstack];
		sl->visited++;
		const Stmt *s = func_stmt(m, f, st);
		if (s->flags & STMT_MMA) {
			if (sl->phase_of[st] > sl->max_phase)
				sl->max_phase = sl->phase_of[st];
			continue;
		}
		if (is_load(m, s)) {
			sl->loads++;
			continue;
		}
		if (df_stmt_is_conversion(m, s))
			sl->hit_conversion = 1;
		uint32_t nu;
		const uint32_t *u = df_uses(sl->df, st, &nu);
		for (uint32_t k = 0; k < nu; k++) {
			int64_t d = df_reaching_def(sl->df, st, u[k]);
			if (d >= 0)
				slice_push(sl, (uint32_t)d);
		}
	}
}

static void slice_reset(PhSlice *sl, uint32_t nstmt)
{
	if (++sl->epoch == 0) { /* wrapped: start the marks afresh */
		memset(sl->seen, 0, (nstmt + 1) * sizeof(uint32_t));
		sl->epoch = 1;
	}
	sl->nstack = 0;
	sl->max_phase = 0;
	sl->loads = sl->visited = 0;
	sl->hit_conversion = 0;
}

PhSlice *ph_slice_new(Dataflow *df, const int32_t *phase_of)
{
	PhSlice *sl = xcalloc(1, sizeof *sl);
	sl->df = df;
	sl->phase_of = phase_of;
	sl->seen = xcalloc(df_func(df)->nstmt + 1, sizeof(uint32_t));
	sl->epoch = 1;
	return sl;
}

void ph_slice_free(PhSlice *sl)
{
	if (!sl)
		return;
	free(sl->seen);
	free(sl->stack);
	free(sl);
}

/* ---- operand classification ---------------------------------------------- */

/* mov with one register source into one register: a copy of its value. */
static bool is_copy(Dataflow *df, const Stmt *s, uint32_t *src)
{
	const Module *m = df_module(df);
	if (s->op != OP_MOV || s->nopd != 2)
		return false;
	const Operand *d = stmt_opd(m, s, 0), *o = stmt_opd(m, s, 1);
	if ((d->kind != OPD_REG && d->kind != OPD_IDENT) ||
	    (o->kind != OPD_REG && o->kind != OPD_IDENT))
		return false;
	uint32_t oi = stmt_opd_index(m, s, 1);
	if (df_opd_reg(df, oi) < 0 || df_opd_partial(df, oi) ||
	    df_opd_partial(df, stmt_opd_index(m, s, 0)))
		return false;
	*src = oi;
	return true;
}

/* Position of `reg` among the defined registers of a load's destination. */
static unsigned dest_index(Dataflow *df, uint32_t st, uint32_t reg)
{
	uint32_t n;
	const uint32_t *d = df_defs(df, st, &n);
	for (uint32_t i = 0; i < n; i++)
		if (d[i] == reg)
			return i;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void push_unique(I64Vec *v, int64_t x)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] == x)
			return;
	VEC_PUSH(*v, x);
}

/* The A kind of values loaded from space sp. */
static ASrcKind a_kind_of_space(Space sp)
{
	return sp == SP_SHARED    ? AK_SHARED
	       : sp == SP_GLOBAL  ? AK_GLOBAL
	       : sp == SP_GENERIC ? AK_GENERIC
	                          : AK_LOADED;
}

/* A load behind an A register: its kind (and space), and the constant
 * offset of a shared address. */
static void a_load(Dataflow *df, Phase *ph, uint32_t st, int *k, Space *sp)
{
	*sp = load_space(df, st);
	*k = (int)a_kind_of_space(*sp);
	Addr a;
	if (*k == AK_SHARED && addr_resolve(df, st, &a) == 1)
		push_unique(&ph->a_offsets, a.offset);
}

/*
 * The value statement d gives, followed back through the statements that
 * only move or convert bits (mov copies, packs and unpacks, prmt, cvt) to
 * the loads it comes from: true when every path ends at a load or an
 * immediate, at least one at a load, and the loads agree on their kind
 * (*k, *sp).  The opcodes met are noted in ph (a_through) only then.  Gives
 * up past 64 statements.
 */
static bool moved_from_loads(Dataflow *df, Phase *ph, uint32_t d, int *k, Space *sp)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	uint32_t stack[64], seen[64], loads[64];
	unsigned ns = 0, nseen = 0, nl = 0;
	Str ops[4];
	unsigned nops = 0;
	uint32_t first_op = UINT32_MAX;
	stack[ns++] = d;
	seen[nseen++] = d;
	while (ns) {
		uint32_t st = stack[--ns];
		const Stmt *s = func_stmt(m, f, st);
		if (is_load(m, s)) {
			loads[nl++] = st;
			continue;
		}
		if (s->op != OP_MOV && s->op != OP_PRMT && s->op != OP_CVT)
			return false;
		if (s->nopd < 2 || (s->op == OP_PRMT && s->nopd != 4))
			return false;
		Str opc = stmt_opcode(m, s);
		unsigned j = 0;
		while (j < nops && !str_eq(ops[j], opc))
			j++;
		if (j == nops && nops < ARRAY_SIZE(ops))
			ops[nops++] = opc;
		if (st < first_op)
			first_op = st;
		/* the data operands: prmt's fourth is the selector */
		unsigned last = s->op == OP_PRMT ? 2 : s->nopd - 1;
		for (unsigned i = 1; i <= last; i++) {
			uint32_t oi = stmt_opd_index(m, s, i);
			const Operand *o = &m->opds.v[oi];
			uint32_t k0 = oi, k1 = oi + 1;
			if (o->kind == OPD_VEC) {
				k0 = oi + 1;
				k1 = oi + 1 + o->sub;
			}
			for (uint32_t kk = k0; kk < k1; kk = opd_next(m, kk)) {
				const Operand *e = &m->opds.v[kk];
				if (e->kind == OPD_INT || e->kind == OPD_FLOAT)
					continue;
				int64_t r = df_opd_reg(df, kk);
				if (r < 0 || df_opd_partial(df, kk))
					return false;
				int64_t rd = df_reaching_def(df, st, (uint32_t)r);
				if (rd < 0)
					return false;
				unsigned q = 0;
				while (q < nseen && seen[q] != (uint32_t)rd)
					q++;
				if (q < nseen)
					continue;
				if (nseen == ARRAY_SIZE(seen))
					return false;
				seen[nseen++] = (uint32_t)rd;
				stack[ns++] = (uint32_t)rd;
			}
		}
	}
	if (!nl)
		return false;
	int kind = -1;
	Space space = SP_GENERIC;
	for (unsigned i = 0; i < nl; i++) {
		Space ls = load_space(df, loads[i]);
		int lk = (int)a_kind_of_space(ls);
		if (kind >= 0 && (lk != kind || (lk == AK_LOADED && ls != space)))
			return false;
		kind = lk;
		space = ls;
	}
	for (unsigned i = 0; i < nl; i++) {
		int lk;
		Space ls;
		a_load(df, ph, loads[i], &lk, &ls);
	}
	for (unsigned i = 0; i < nops; i++) {
		unsigned j = 0;
		while (j < ph->a_nthrough && !str_eq(ph->a_through[j], ops[i]))
			j++;
		if (j == ph->a_nthrough && j < ARRAY_SIZE(ph->a_through))
			ph->a_through[ph->a_nthrough++] = ops[i];
	}
	if (first_op != UINT32_MAX && !ph->a_through_evidence)
		ph->a_through_evidence = first_op;
	*k = kind;
	*sp = space;
	return true;
}

void ph_classify_a(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm,
                   const int32_t *phase_of, PhSlice *sl, const Phase *phases)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	int kind = -1;
	int32_t from = -1;
	Space space = SP_GENERIC;
	StrBuf seen = STRBUF_INIT, tmp = STRBUF_INIT;
	uint32_t *regs = xmalloc(MAX_TUPLE * sizeof(uint32_t));
	for (uint32_t i = 0; i < nm; i++) {
		const Stmt *s = func_stmt(m, f, mmas[i]);
		MmaOps mo;
		if (!ph_mma_ops(m, s, &mo))
			continue;
		ph_compact(m, &m->opds.v[mo.idx[1]], &tmp);
		sb_addc(&tmp, '\n');
		if (seen.n && strstr(seen.p, tmp.p))
			continue; /* this A tuple was classified already */
		sb_adds(&seen, tmp.p);
		int k = -1;
		int32_t q = -1;
		Space ksp = SP_GENERIC;
		if (mo.a_desc) {
			/* a matrix descriptor: the PTX ISA's wgmma reads A from the
			 * shared memory it describes */
			k = AK_SHARED;
			ph->a_descriptor = true;
			if (!ph->a_evidence)
				ph->a_evidence = mmas[i];
		}
		unsigned nr =
		    mo.a_desc ? 0 : ph_tuple_regs(df, mo.idx[1], regs, MAX_TUPLE);
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, mmas[i], regs[r]);
			int rk;
			Space rsp = SP_GENERIC;
			if (d < 0) {
				rk = AK_COMPUTED;
			} else {
				const Stmt *ds = func_stmt(m, f, (uint32_t)d);
				if (is_load(m, ds)) {
					a_load(df, ph, (uint32_t)d, &rk, &rsp);
				} else if (moved_from_loads(df, ph, (uint32_t)d, &rk,
				                            &rsp)) {
					/* loaded, then permuted or converted: the loads'
					 * kind */
				} else {
					slice_reset(sl, f->nstmt);
					slice_run(sl, mmas[i], &regs[r], 1, 1u << 16);
					if (sl->max_phase > 0 && sl->hit_conversion) {
						rk = AK_CONVERTED;
						if (sl->max_phase > q)
							q = sl->max_phase;
					} else if (sl->max_phase > 0) {
						rk = AK_COMPUTED;
					} else {
						/* defined before an earlier phase began?
						 */
						rk = AK_COMPUTED;
						for (uint32_t p = 0; p + 1 < ph->number;
						     p++)
							if ((uint64_t)d <
							    phases[p].first) {
								rk = AK_PASSTHROUGH;
								q = (int32_t)phases[p]
								        .number;
								break;
							}
					}
				}
				if (!ph->a_evidence)
					ph->a_evidence = (uint32_t)d;
			}
			if (k < 0) {
				k = rk;
				ksp = rsp;
			} else if (k != rk || (k == AK_LOADED && ksp != rsp))
				k = AK_MIXED;
		}
		if (kind < 0) {
			kind = k;
			space = ksp;
		} else if (kind != k || (kind == AK_LOADED && space != ksp))
			kind = AK_MIXED;
		if (q > from)
			from = q;
	}
	free(regs);
	ph->a_kind = kind < 0 ? AK_COMPUTED : (ASrcKind)kind;
	ph->a_from_phase =
	    (ph->a_kind == AK_CONVERTED || ph->a_kind == AK_PASSTHROUGH) ? from : -1;
	ph->a_space = ph->a_kind == AK_LOADED ? space : SP_GENERIC;
	if (ph->a_kind != AK_SHARED && ph->a_kind != AK_MIXED)
		ph->a_offsets.n = 0;
	sb_release(&seen);
	sb_release(&tmp);
}

/* What the value of a C register is (see classify_c). */
enum { CV_OWN = -1 }; /* the D of this phase's own mma: around a loop */
typedef struct {
	int kind;        /* CK_ZERO, CK_PHASE_ACC, CK_LOADED, CK_COMPUTED, CV_OWN */
	int32_t from;    /* CK_PHASE_ACC: the phase */
	Space space;     /* CK_LOADED */
	bool byte_known; /* CK_LOADED: byte is the element's offset from its base */
	int64_t byte;
} CVal;

/* The value statement d gives register reg, followed back through mov
 * copies (at most 16).  A copy of a register that several definitions
 * reach has their value when they all agree (two zeros on two paths, say),
 * looking `depth` merges further back; otherwise it is computed. */
static CVal c_value(Dataflow *df, uint32_t d, uint32_t reg, const int32_t *phase_of,
                    uint32_t phase, unsigned depth)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	CVal v = {CK_COMPUTED, -1, SP_GENERIC, false, 0};
	const Stmt *ds = func_stmt(m, f, d);
	uint32_t src;
	for (unsigned hop = 0; hop < 16 && is_copy(df, ds, &src); hop++) {
		uint32_t sreg = (uint32_t)df_opd_reg(df, src);
		int64_t sd = df_reaching_def(df, d, sreg);
		if (sd == DF_DEF_MANY && depth) {
			uint32_t defs[16];
			bool entry = false;
			uint32_t nd = df_reaching_defs(df, d, sreg, defs, 16, &entry);
			if (entry || nd > 16)
				return v;
			CVal w = {-2, -1, SP_GENERIC, false, 0};
			for (uint32_t k = 0; k < nd; k++) {
				CVal x = c_value(df, defs[k], sreg, phase_of, phase,
				                 depth - 1);
				if (x.kind == CV_OWN || x.kind == CK_COMPUTED ||
				    (w.kind != -2 &&
				     (x.kind != w.kind || x.from != w.from ||
				      x.space != w.space)))
					return v;
				w = x;
			}
			w.byte_known = false; /* which load depends on the path */
			return w;
		}
		if (sd < 0)
			return v;
		d = (uint32_t)sd;
		reg = sreg;
		ds = func_stmt(m, f, d);
	}
	if (df_stmt_is_zero_mov(m, ds)) {
		v.kind = CK_ZERO;
	} else if (ds->flags & STMT_MMA) {
		if ((uint32_t)phase_of[d] == phase)
			v.kind = CV_OWN;
		else if (phase_of[d] > 0) {
			v.kind = CK_PHASE_ACC;
			v.from = phase_of[d];
		}
	} else if (is_load(m, ds)) {
		Addr a;
		v.kind = CK_LOADED;
		v.space = load_space(df, d);
		if (is_plain_load(ds) && addr_resolve(df, d, &a) == 1) {
			v.byte_known = true;
			v.byte =
			    a.offset + (int64_t)a.elem_bytes * dest_index(df, d, reg);
		}
	}
	return v;
}

/* Values met so far: one kind, or mixed. */
typedef struct {
	int kind; /* -1: none yet */
	int32_t from;
	Space space;
} CComb;

static void comb_add(CComb *c, int kind, int32_t from, Space space)
{
	if (c->kind < 0) {
		c->kind = kind;
		c->from = from;
		c->space = space;
		return;
	}
	if (c->kind == CK_MIXED)
		return;
	if (c->kind != kind || (kind == CK_LOADED && c->space != space))
		c->kind = CK_MIXED;
	else if ((kind == CK_PHASE_ACC || kind == CK_LOOP_CARRIED) && from > c->from)
		c->from = from;
}

/* The blocks reachable from statement `from` by a path of at least one
 * statement (its own block is in the set only around a cycle): one walk
 * over the successors, for "does this definition come round a loop". */
static uint8_t *reachable_from(Dataflow *df, uint32_t from)
{
	uint32_t nb = df_nblocks(df), b0 = df_block_of(df, from), n;
	uint8_t *in = xcalloc(nb + 1, 1);
	VEC(uint32_t) wl = {0};
	VEC_PUSH(wl, b0);
	while (wl.n) {
		uint32_t b = wl.v[--wl.n];
		const uint32_t *sc = df_block_succs(df, b, &n);
		for (uint32_t i = 0; i < n; i++)
			if (!in[sc[i]]) {
				in[sc[i]] = 1;
				VEC_PUSH(wl, sc[i]);
			}
	}
	VEC_FREE(wl);
	return in;
}

/* Does definition d, reaching statement j, come round a cycle through j:
 * after j in the text and reachable from it? */
static bool comes_round(Dataflow *df, const uint8_t *reach, uint32_t j, uint32_t d)
{
	uint32_t bd = df_block_of(df, d);
	return d > j && (reach[bd] || bd == df_block_of(df, j));
}

/*
 * The C operand of the chain heads: for each register, the definitions
 * that reach the head.  One definition: its value (through copies).
 * Several (a merge of paths): the value of each; when some are the D of an
 * mma that comes round a loop to the head (this phase's own, or a later
 * phase's of the loop body: from_phase says which) and the others agree,
 * the kind is loop_carried with theirs as the entry kind.  A wgmma with
 * scale-d 0 reads no C: zero.
 */
void ph_classify_c(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm,
                   const uint8_t *chained, const int32_t *phase_of)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	CComb all = {-1, -1, SP_GENERIC}, entry = {-1, -1, SP_GENERIC};
	bool bytes_known = true;
	uint32_t *regs = xmalloc(MAX_TUPLE * sizeof(uint32_t));
	uint32_t defs[64];
	uint8_t *reach = NULL; /* blocks reachable from the phase's first mma */
	for (uint32_t i = 0; i < nm; i++) {
		if (chained[i])
			continue;
		const Stmt *s = func_stmt(m, f, mmas[i]);
		MmaOps mo;
		if (!ph_mma_ops(m, s, &mo))
			continue;
		if (!mo.has_c) {
			comb_add(&all, CK_ZERO, -1, SP_GENERIC);
			if (!ph->c_evidence)
				ph->c_evidence = mmas[i];
			continue;
		}
		unsigned nr = ph_tuple_regs(df, mo.idx[3], regs, MAX_TUPLE);
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, mmas[i], regs[r]);
			if (d >= 0) {
				if (!ph->c_evidence)
					ph->c_evidence = (uint32_t)d;
				CVal v = c_value(df, (uint32_t)d, regs[r], phase_of,
				                 ph->number, 2);
				if (v.kind == CV_OWN)
					v.kind = CK_COMPUTED; /* the D of an earlier mma,
					                         not a chain */
				comb_add(&all, v.kind, v.from, v.space);
				if (v.kind == CK_LOADED) {
					if (v.byte_known)
						push_unique(&ph->c_bytes, v.byte);
					else
						bytes_known = false;
				}
				continue;
			}
			/* several definitions, or none */
			bool from_entry = d == DF_DEF_NONE;
			uint32_t nd = d == DF_DEF_MANY
			                  ? df_reaching_defs(df, mmas[i], regs[r], defs,
			                                     64, &from_entry)
			                  : 0;
			if (nd > 64 || nd == 0) {
				comb_add(&all, CK_COMPUTED, -1, SP_GENERIC);
				continue;
			}
			int32_t round = -1; /* the phase whose D comes round a loop */
			CComb in = {-1, -1, SP_GENERIC};
			if (from_entry)
				comb_add(&in, CK_COMPUTED, -1,
				         SP_GENERIC); /* undefined on a path */
			if (!reach)
				reach = reachable_from(df, mmas[0]);
			for (uint32_t k = 0; k < nd; k++) {
				CVal v = c_value(df, defs[k], regs[r], phase_of,
				                 ph->number, 2);
				bool mma_d = func_stmt(m, f, defs[k])->flags & STMT_MMA;
				if (v.kind == CV_OWN ||
				    (mma_d && v.kind == CK_PHASE_ACC &&
				     comes_round(df, reach, mmas[i], defs[k]))) {
					int32_t q = v.kind == CV_OWN ? (int32_t)ph->number
					                             : v.from;
					if (q > round)
						round = q;
					continue;
				}
				if (!ph->c_evidence)
					ph->c_evidence = defs[k];
				comb_add(&in, v.kind, v.from, v.space);
			}
			if (round >= 0 && in.kind >= 0) {
				comb_add(&all, CK_LOOP_CARRIED, round, SP_GENERIC);
				comb_add(&entry, in.kind, in.from, in.space);
			} else if (in.kind >= 0) {
				/* the same kind on every path (zero, say) */
				comb_add(&all, in.kind, in.from, in.space);
				if (in.kind == CK_LOADED)
					bytes_known = false;
			} else
				comb_add(&all, CK_COMPUTED, -1, SP_GENERIC);
		}
	}
	free(regs);
	free(reach);
	ph->c_kind = all.kind < 0 ? CK_COMPUTED : (CKind)all.kind;
	ph->c_from_phase =
	    ph->c_kind == CK_PHASE_ACC || ph->c_kind == CK_LOOP_CARRIED ? all.from : -1;
	ph->c_space = ph->c_kind == CK_LOADED ? all.space : SP_GENERIC;
	ph->c_entry_kind = CK_COMPUTED;
	ph->c_entry_from_phase = -1;
	ph->c_entry_space = SP_GENERIC;
	if (ph->c_kind == CK_LOOP_CARRIED) {
		ph->c_entry_kind = entry.kind < 0 ? CK_COMPUTED : (CKind)entry.kind;
		ph->c_entry_from_phase =
		    ph->c_entry_kind == CK_PHASE_ACC ? entry.from : -1;
		ph->c_entry_space =
		    ph->c_entry_kind == CK_LOADED ? entry.space : SP_GENERIC;
	}
	ph->c_bytes_known = ph->c_kind == CK_LOADED && bytes_known;
	if (!ph->c_bytes_known)
		ph->c_bytes.n = 0;
	if (ph->c_bytes.n > 1)
		qsort(ph->c_bytes.v, ph->c_bytes.n, sizeof(int64_t), cmp_i64);
}

/*
 * B: when every B register is loaded by a plain load (ld, ldu) from one
 * kernel-parameter pointer or one variable outside the thread's stack,
 * through an address that resolves, the [lowest, highest] constant offset
 * of the elements (weight_bytes), and the address's variable part when
 * every load has the same exact strides of special registers.
 */
void ph_classify_b(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	int all = 1, any = 0;
	bool stride = true;
	uint32_t *regs = xmalloc(MAX_TUPLE * sizeof(uint32_t));
	for (uint32_t i = 0; i < nm && all; i++) {
		const Stmt *s = func_stmt(m, f, mmas[i]);
		MmaOps mo;
		if (!ph_mma_ops(m, s, &mo))
			continue;
		unsigned nr = ph_tuple_regs(df, mo.idx[2], regs, MAX_TUPLE);
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, mmas[i], regs[r]);
			Addr a;
			if (d < 0 || !is_plain_load(func_stmt(m, f, (uint32_t)d)) ||
			    addr_resolve(df, (uint32_t)d, &a) != 1 ||
			    (a.base != AB_PARAM && a.base != AB_SYMBOL) ||
			    (a.base == AB_PARAM && !a.param_ptr) || a.space == SP_LOCAL) {
				all = 0;
				break;
			}
			int64_t off = a.offset + (int64_t)a.elem_bytes *
			                             dest_index(df, (uint32_t)d, regs[r]);
			if (!any) {
				ph->b_lo = ph->b_hi = off;
				ph->b_base = a.base_name;
				ph->b_param_off = a.param_off;
				ph->b_evidence = (uint32_t)d;
				stride = a.stride_known;
				ph->b_nstride = a.nstride;
				for (unsigned k = 0; k < a.nstride; k++) {
					ph->b_stride[k].reg =
					    df_reg(df, a.stride[k].reg)->name;
					ph->b_stride[k].bytes = a.stride[k].bytes;
				}
				any = 1;
			} else if (!str_eq(a.base_name, ph->b_base) ||
			           a.param_off != ph->b_param_off) {
				all = 0; /* B from more than one base: no single byte
				            range */
				break;
			} else {
				if (off < ph->b_lo)
					ph->b_lo = off;
				if (off > ph->b_hi)
					ph->b_hi = off;
				bool same = a.stride_known && a.nstride == ph->b_nstride;
				for (unsigned k = 0; same && k < a.nstride; k++)
					same = str_eq(df_reg(df, a.stride[k].reg)->name,
					              ph->b_stride[k].reg) &&
					       a.stride[k].bytes == ph->b_stride[k].bytes;
				stride &= same;
			}
		}
	}
	free(regs);
	ph->b_loaded = all && any;
	ph->b_stride_known = ph->b_loaded && stride;
	if (!ph->b_stride_known)
		ph->b_nstride = 0;
}
