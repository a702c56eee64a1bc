/*
 * phases.c - mma phases, their gemm shape, operand sources and epilogues.
 *
 * A phase is a maximal run of consecutive mma statements in one function
 * (with --gap N, up to N other statements may sit between two of its mma).
 * That definition, and the one of an epilogue, is applied in one place
 * ("what a phase is" below), from the statement flags and labels alone:
 * every caller that wants phase N's statements asks ana_phase_range, which
 * costs a scan of the flags, and ana_phases starts from the same list.
 * Everything else here is derived from the statements by the definitions in
 * d4r-splice(1), and each derived value keeps the statement that shows it:
 *
 *  - chain: a sequence of mma where each one's C operand is textually the D
 *    operand of the one before; k_chain_len is the longest, chains =
 *    mma / k_chain_len; m_tiles / n_tiles count distinct A / B operands;
 *    k = instruction K x k_chain_len; banded = m_tiles * n_tiles != mma.
 *  - A source: the reaching definition of each A register decides: a load
 *    from shared memory (with the constant offsets the address resolves to),
 *    from global memory, a conversion (cvt to e4m3/e5m2, f16 packs) whose
 *    backward slice reaches the D of an earlier phase q ("converted", the
 *    latest such q), registers defined before an earlier phase and not by a
 *    load or conversion ("passthrough"), else "computed".
 *  - C operand of the chain heads: all zero, exactly the D of phase q
 *    ("phase_acc"), loaded (space and element byte offsets), or computed.
 *  - B: when every B register is loaded through an address that resolves,
 *    the [lowest, highest] element offset from that base (weight_bytes).
 *
 * Values that do not resolve are reported as such, never guessed.
 */
#include "ana/ana.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *asrc_kind_name(ASrcKind k)
{
	static const char *const n[] = {"shared", "global", "converted", "passthrough",
	                                "computed", "mixed"};
	return (unsigned)k < ARRAY_SIZE(n) ? n[k] : "?";
}

const char *ckind_name(CKind k)
{
	static const char *const n[] = {"zero", "phase_acc", "loaded", "computed", "mixed"};
	return (unsigned)k < ARRAY_SIZE(n) ? n[k] : "?";
}

/* The operand's text without whitespace (tuples compare textually). */
static void compact(const Module *m, const Operand *o, StrBuf *out)
{
	sb_reset(out);
	opd_render_compact(m, (uint32_t)(o - m->opds.v), out);
}

/* Registers of a leaf or vector operand (sinks and immediates skipped). */
static unsigned tuple_regs(Dataflow *df, uint32_t oi, uint32_t *regs, unsigned max)
{
	const Module *m = df_module(df);
	const Operand *o = &m->opds.v[oi];
	unsigned n = 0;
	if (o->kind == OPD_VEC) {
		for (uint32_t k = oi + 1; k < oi + 1 + o->sub; k = opd_next(m, k)) {
			int64_t r = df_opd_reg(df, k);
			if (r >= 0 && n < max)
				regs[n++] = (uint32_t)r;
		}
	} else {
		int64_t r = df_opd_reg(df, oi);
		if (r >= 0 && n < max)
			regs[n++] = (uint32_t)r;
	}
	return n;
}

/* Operand positions of D, A, B, C for the mma forms; 0 if unknown. */
static int mma_operands(const Module *m, const Stmt *s, uint32_t idx[4])
{
	if (s->nopd < 3)
		return 0;
	for (unsigned i = 0; i < 4; i++)
		idx[i] = i < s->nopd ? stmt_opd_index(m, s, i) : stmt_opd_index(m, s, 0);
	if (s->op == OP_WGMMA) /* wgmma accumulates in place: C is D */
		idx[3] = idx[0];
	return s->nopd >= 4 || s->op == OP_WGMMA;
}

/* "m16n8k32" in the opcode, and the text after it. */
static void shape_of(const Module *m, const Stmt *s, Phase *ph)
{
	Str op = stmt_opcode(m, s);
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p;
		while (q < end && *q != '.')
			q++;
		if (q - p >= 6 && p[0] == 'm' && (p[1] >= '0' && p[1] <= '9')) {
			const char *k = memchr(p, 'k', (size_t)(q - p));
			const char *n = memchr(p, 'n', (size_t)(q - p));
			if (k && n) {
				ph->shape = str_of(p, (size_t)(q - p));
				ph->inst_k = (uint32_t)strtoul(k + 1, NULL, 10);
				ph->types = str_of(q, (size_t)(end - q));
				return;
			}
		}
		p = q + 1;
	}
}

/* ---- backward slices ----------------------------------------------------- */

typedef struct {
	Dataflow *df;
	const int32_t *phase_of;   /* stmt -> phase number (0 if none) */
	uint32_t *seen;            /* per statement: the slice that saw it last */
	uint32_t epoch;            /* this slice's number */
	uint32_t *stack;
	size_t nstack, cap;
	int32_t max_phase;         /* latest phase whose D the slice reaches */
	uint32_t loads, visited;
	int hit_conversion;
} Slice;

static int is_load(const Stmt *s)
{
	return s->op == OP_LD || s->op == OP_LDU || s->op == OP_LDMATRIX || s->op == OP_TEX ||
	       s->op == OP_TLD4 || s->op == OP_SULD;
}

/* cvt to or from a packed/half type, or a pack: what turns one phase's D
 * into another's A. */
static int is_conversion(const Module *m, const Stmt *s)
{
	if (s->op == OP_CVT) {
		static const char *const mods[] = {".e4m3x2", ".e5m2x2", ".f16x2", ".bf16x2", ".f16", ".bf16"};
		return stmt_mod_any(m, s, mods, ARRAY_SIZE(mods)) >= 0;
	}
	if (s->op == OP_MOV && s->nopd == 2) /* mov.b32 %r, {%rs1, %rs2}: a pack */
		return stmt_opd(m, s, 1)->kind == OPD_VEC;
	return 0;
}

static void slice_push(Slice *sl, uint32_t st)
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
static void slice_run(Slice *sl, uint32_t at, const uint32_t *regs, unsigned nregs, uint32_t limit)
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
		if (is_load(s)) {
			sl->loads++;
			continue;
		}
		if (is_conversion(m, s))
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

static void slice_reset(Slice *sl, uint32_t nstmt)
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

/* ---- operand classification ---------------------------------------------- */

static int is_zero_mov(const Module *m, const Stmt *s)
{
	if (s->op != OP_MOV || s->nopd != 2)
		return 0;
	const Operand *o = stmt_opd(m, s, 1);
	Str t = opd_str(m, o);
	if (o->kind == OPD_INT) {
		for (size_t i = 0; i < t.n; i++)
			if (t.p[i] != '0' && t.p[i] != 'x' && t.p[i] != 'X' && t.p[i] != 'U' && t.p[i] != 'u')
				return 0;
		return 1;
	}
	if (o->kind == OPD_FLOAT) {
		for (size_t i = 2; i < t.n; i++)
			if (t.p[i] != '0')
				return 0;
		return 1;
	}
	return 0;
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


static void classify_a(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm,
                       const int32_t *phase_of, Slice *sl, const Phase *phases)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	int kind = -1;
	int32_t from = -1;
	StrBuf seen = STRBUF_INIT, tmp = STRBUF_INIT;
	for (uint32_t i = 0; i < nm; i++) {
		const Stmt *s = func_stmt(m, f, mmas[i]);
		uint32_t idx[4];
		if (!mma_operands(m, s, idx))
			continue;
		compact(m, &m->opds.v[idx[1]], &tmp);
		sb_addc(&tmp, '\n');
		if (seen.n && strstr(seen.p, tmp.p))
			continue; /* this A tuple was classified already */
		sb_adds(&seen, tmp.p);
		uint32_t regs[64];
		unsigned nr = tuple_regs(df, idx[1], regs, 64);
		int k = -1;
		int32_t q = -1;
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, mmas[i], regs[r]);
			int rk;
			if (d < 0) {
				rk = AK_COMPUTED;
			} else {
				const Stmt *ds = func_stmt(m, f, (uint32_t)d);
				Addr a;
				if (is_load(ds) && (ds->op == OP_LDMATRIX || stmt_space(m, ds) == SP_SHARED)) {
					rk = AK_SHARED;
					if (addr_resolve(df, (uint32_t)d, &a) == 1)
						push_unique(&ph->a_offsets, a.offset);
				} else if (is_load(ds)) {
					rk = AK_GLOBAL;
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
						/* defined before an earlier phase began? */
						rk = AK_COMPUTED;
						for (uint32_t p = 0; p + 1 < ph->number; p++)
							if ((uint64_t)d < phases[p].first) {
								rk = AK_PASSTHROUGH;
								q = (int32_t)phases[p].number;
								break;
							}
					}
				}
				if (!ph->a_evidence)
					ph->a_evidence = (uint32_t)d;
			}
			if (k < 0)
				k = rk;
			else if (k != rk)
				k = AK_MIXED;
		}
		if (kind < 0)
			kind = k;
		else if (kind != k)
			kind = AK_MIXED;
		if (q > from)
			from = q;
	}
	ph->a_kind = kind < 0 ? AK_COMPUTED : (ASrcKind)kind;
	ph->a_from_phase = (ph->a_kind == AK_CONVERTED || ph->a_kind == AK_PASSTHROUGH) ? from : -1;
	sb_release(&seen);
	sb_release(&tmp);
}

static void classify_c(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm,
                       const uint8_t *chained, const int32_t *phase_of)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	int kind = -1;
	int32_t from = -1;
	ph->c_space = SP_GENERIC;
	for (uint32_t i = 0; i < nm; i++) {
		if (chained[i])
			continue;
		const Stmt *s = func_stmt(m, f, mmas[i]);
		uint32_t idx[4];
		if (!mma_operands(m, s, idx))
			continue;
		uint32_t regs[64];
		unsigned nr = tuple_regs(df, idx[3], regs, 64);
		int k = -1;
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, mmas[i], regs[r]);
			int rk = CK_COMPUTED;
			if (d >= 0) {
				const Stmt *ds = func_stmt(m, f, (uint32_t)d);
				if (!ph->c_evidence)
					ph->c_evidence = (uint32_t)d;
				if (is_zero_mov(m, ds)) {
					rk = CK_ZERO;
				} else if ((ds->flags & STMT_MMA) && phase_of[d] > 0 &&
				           (uint32_t)phase_of[d] != ph->number) {
					rk = CK_PHASE_ACC;
					if (phase_of[d] > from)
						from = phase_of[d];
				} else if (is_load(ds)) {
					Addr a;
					if (addr_resolve(df, (uint32_t)d, &a) == 1) {
						rk = CK_LOADED;
						ph->c_space = a.space;
						push_unique(&ph->c_bytes,
						            a.offset + (int64_t)a.elem_bytes *
						                           dest_index(df, (uint32_t)d, regs[r]));
					} else
						rk = CK_COMPUTED;
				}
			}
			if (k < 0)
				k = rk;
			else if (k != rk)
				k = CK_MIXED;
		}
		if (k < 0)
			continue;
		if (kind < 0)
			kind = k;
		else if (kind != k)
			kind = CK_MIXED;
	}
	ph->c_kind = kind < 0 ? CK_COMPUTED : (CKind)kind;
	ph->c_from_phase = ph->c_kind == CK_PHASE_ACC ? from : -1;
	if (ph->c_kind != CK_LOADED)
		ph->c_bytes.n = 0;
	if (ph->c_bytes.n > 1)
		qsort(ph->c_bytes.v, ph->c_bytes.n, sizeof(int64_t), cmp_i64);
}

static void classify_b(Dataflow *df, Phase *ph, const uint32_t *mmas, uint32_t nm)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	int all = 1, any = 0;
	for (uint32_t i = 0; i < nm && all; i++) {
		const Stmt *s = func_stmt(m, f, mmas[i]);
		uint32_t idx[4];
		if (!mma_operands(m, s, idx))
			continue;
		uint32_t regs[64];
		unsigned nr = tuple_regs(df, idx[2], regs, 64);
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, mmas[i], regs[r]);
			Addr a;
			if (d < 0 || !is_load(func_stmt(m, f, (uint32_t)d)) ||
			    addr_resolve(df, (uint32_t)d, &a) != 1 ||
			    (a.base != AB_PARAM && a.base != AB_SYMBOL) ||
			    (a.base == AB_PARAM && !a.param_ptr)) {
				all = 0;
				break;
			}
			int64_t off = a.offset + (int64_t)a.elem_bytes * dest_index(df, (uint32_t)d, regs[r]);
			if (!any) {
				ph->b_lo = ph->b_hi = off;
				ph->b_base = a.base_name;
				ph->b_param_off = a.param_off;
				ph->b_evidence = (uint32_t)d;
				any = 1;
			} else if (!str_eq(a.base_name, ph->b_base) || a.param_off != ph->b_param_off) {
				all = 0; /* B from more than one base: no single byte range */
				break;
			} else {
				if (off < ph->b_lo)
					ph->b_lo = off;
				if (off > ph->b_hi)
					ph->b_hi = off;
			}
		}
	}
	ph->b_loaded = all && any;
}

/* ---- epilogues ----------------------------------------------------------- */

typedef struct {
	const char *name;
	VEC(uint32_t) at;
} OpHit;

enum {
	E_E4M3, E_E5M2, E_F16PACK, E_SOFTMAX, E_RMSNORM, E_ACT, E_RESIDUAL, E_SHSTAGE,
	E_SHLOAD_A, E_NEXT_B, E_NEXT_C, E_NEXT_A_LOAD, E_OTHER_LOAD, E_TEX, E_SULD, E_SUST,
	E_SCATTER, E_BARRIER, E__N
};
static const char *const epi_names[E__N] = {
	"e4m3_requantise", "e5m2_requantise", "f16_pack", "softmax", "rms_norm",
	"activation", "residual_add", "shared_stage", "shared_load_next_a", "next_b_load",
	"next_c_load", "next_a_load", "other_load", "texture_read", "surface_read",
	"surface_write", "plane_scatter", "barrier"};

static void hit(OpHit *h, int e, uint32_t st)
{
	VEC_PUSH(h[e].at, st);
}

/* The statements whose values the next phase's mma read as operand
 * `which` (1 A, 2 B, 3 C): the reaching definitions of those registers,
 * sorted, found once per epilogue rather than once per load in it. */
typedef struct {
	VEC(uint32_t) defs;
	bool done;
} Feeds;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void feeds_build(Dataflow *df, const Phase *next, int which, Feeds *fd)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	fd->done = true;
	for (uint32_t st = next->first; st <= next->last; st++) {
		const Stmt *s = func_stmt(m, f, st);
		if (!(s->flags & STMT_MMA))
			continue;
		uint32_t idx[4];
		if (!mma_operands(m, s, idx))
			continue;
		uint32_t regs[64];
		unsigned nr = tuple_regs(df, idx[which], regs, 64);
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, st, regs[r]);
			if (d >= 0)
				VEC_PUSH(fd->defs, (uint32_t)d);
		}
	}
	if (fd->defs.n)
		qsort(fd->defs.v, fd->defs.n, sizeof(uint32_t), cmp_u32);
}

/* Does the value defined at def_stmt reach operand `which` of an mma of the
 * next phase? */
static int feeds(Dataflow *df, const Phase *next, uint32_t def_stmt, int which, Feeds *fd)
{
	if (!next)
		return 0;
	if (!fd[which].done)
		feeds_build(df, next, which, &fd[which]);
	return fd[which].defs.n &&
	       bsearch(&def_stmt, fd[which].defs.v, fd[which].defs.n, sizeof(uint32_t), cmp_u32);
}

/* " N": a statement number, without the cost of a printf per number */
static void add_num(StrBuf *sb, uint32_t v)
{
	char buf[12];
	int n = 0;
	do
		buf[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	sb_addc(sb, ' ');
	while (n)
		sb_addc(sb, buf[--n]);
}

static void classify_epilogue(Dataflow *df, Phase *ph, const Phase *next)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	OpHit h[E__N];
	memset(h, 0, sizeof h);
	int has_max = 0, has_ex2 = 0, has_rcp = 0, has_rsqrt = 0, has_min = 0;
	Feeds fd[4];
	memset(fd, 0, sizeof fd);
	for (uint32_t st = ph->epi_first; st <= ph->epi_last && ph->epi_last >= ph->epi_first; st++) {
		const Stmt *s = func_stmt(m, f, st);
		switch (s->op) {
		case OP_CVT:
			if (stmt_has_mod(m, s, ".e4m3x2"))
				hit(h, E_E4M3, st);
			else if (stmt_has_mod(m, s, ".e5m2x2"))
				hit(h, E_E5M2, st);
			else if (stmt_has_mod(m, s, ".f16x2") || stmt_has_mod(m, s, ".bf16x2"))
				hit(h, E_F16PACK, st);
			break;
		case OP_MOV:
			if (s->nopd == 2 && stmt_opd(m, s, 1)->kind == OPD_VEC)
				hit(h, E_F16PACK, st);
			break;
		case OP_MAX:
			has_max = 1;
			break;
		case OP_MIN:
			has_min = 1;
			break;
		case OP_EX2:
			has_ex2 = 1;
			break;
		case OP_RCP:
		case OP_DIV:
			has_rcp = 1;
			break;
		case OP_RSQRT:
			has_rsqrt = 1;
			hit(h, E_RMSNORM, st);
			break;
		case OP_TANH:
			hit(h, E_ACT, st);
			break;
		case OP_BAR:
		case OP_BARRIER:
			hit(h, E_BARRIER, st);
			break;
		case OP_TEX:
		case OP_TLD4:
			hit(h, E_TEX, st);
			break;
		case OP_SULD:
			hit(h, E_SULD, st);
			break;
		case OP_SUST:
			hit(h, E_SUST, st);
			break;
		case OP_ST:
			if (stmt_space(m, s) == SP_SHARED)
				hit(h, E_SHSTAGE, st);
			else if (stmt_space(m, s) == SP_GLOBAL || stmt_space(m, s) == SP_GENERIC)
				hit(h, E_SCATTER, st);
			break;
		case OP_LD:
		case OP_LDU:
		case OP_LDMATRIX: {
			Space sp = stmt_space(m, s);
			if (sp == SP_PARAM)
				break;
			if (feeds(df, next, st, 2, fd))
				hit(h, E_NEXT_B, st);
			else if (feeds(df, next, st, 3, fd))
				hit(h, E_NEXT_C, st);
			else if (feeds(df, next, st, 1, fd))
				hit(h, sp == SP_SHARED || s->op == OP_LDMATRIX ? E_SHLOAD_A : E_NEXT_A_LOAD, st);
			else
				hit(h, E_OTHER_LOAD, st);
			break;
		}
		case OP_ADD:
			if (stmt_has_mod(m, s, ".f16x2") || stmt_has_mod(m, s, ".f16") ||
			    stmt_has_mod(m, s, ".f32")) {
				/* residual add: one addend is this phase's D, the other a
				 * value defined before the phase began */
				uint32_t nu;
				const uint32_t *u = df_uses(df, st, &nu);
				int from_d = 0, from_before = 0;
				for (uint32_t k = 0; k < nu; k++) {
					int64_t d = df_reaching_def(df, st, u[k]);
					if (d >= (int64_t)ph->first && d <= (int64_t)ph->last)
						from_d = 1;
					else if (d >= 0 && d < (int64_t)ph->first)
						from_before = 1;
				}
				if (from_d && from_before)
					hit(h, E_RESIDUAL, st);
			}
			break;
		default:
			break;
		}
	}
	if (has_max && has_ex2 && has_rcp) {
		for (uint32_t st = ph->epi_first; st <= ph->epi_last; st++)
			if (func_stmt(m, f, st)->op == OP_EX2)
				hit(h, E_SOFTMAX, st);
	} else if (has_max && has_min && !has_rsqrt) {
		for (uint32_t st = ph->epi_first; st <= ph->epi_last; st++)
			if (func_stmt(m, f, st)->op == OP_MIN)
				hit(h, E_ACT, st);
	}
	for (int w = 0; w < 4; w++)
		VEC_FREE(fd[w].defs);
	sb_reset(&ph->epilogue_ops);
	for (int e = 0; e < E__N; e++) {
		if (!h[e].at.n)
			continue;
		sb_adds(&ph->epilogue_ops, epi_names[e]);
		for (size_t i = 0; i < h[e].at.n; i++)
			add_num(&ph->epilogue_ops, h[e].at.v[i]);
		sb_addc(&ph->epilogue_ops, '\n');
		VEC_FREE(h[e].at);
	}
}

/* ---- what a phase is ----------------------------------------------------- */

/*
 * The definition (d4r-splice(1), Definitions), in the one place that
 * applies it: a phase is a maximal run of mma statements in which two
 * consecutive mma are at most `gap` other statements apart (gap 0: a run
 * of consecutive mma).  Its epilogue is the statements after it up to the
 * next phase; after the last phase, up to the end of the straight-line
 * region that follows (the next label, or the next bra/brx/ret/exit, not
 * included).  Both need the statement flags and the labels only, so the
 * ranges cost one pass over the flags, and a caller that wants phase N
 * stops scanning once phase N and its epilogue are known.
 */

static bool stmt_is_mma(const Module *m, const Func *f, uint32_t i)
{
	return (func_stmt(m, f, i)->flags & STMT_MMA) != 0;
}

/* The first phase whose first mma is at or after statement `from`: first,
 * last and mma of *p; false when there is none. */
static bool scan_phase(const Module *m, const Func *f, unsigned gap, uint32_t from,
                       Phase *p)
{
	uint32_t i = from;
	while (i < f->nstmt && !stmt_is_mma(m, f, i))
		i++;
	if (i >= f->nstmt)
		return false;
	p->first = p->last = i;
	p->mma = 1;
	for (uint32_t j = i + 1; j < f->nstmt && j - p->last <= gap + 1; j++)
		if (stmt_is_mma(m, f, j)) {
			p->last = j;
			p->mma++;
		}
	return true;
}

/* The epilogue of the last phase p: up to the next label after it, or the
 * next bra/brx/ret/exit before that, whichever comes first. */
static void last_epilogue(const Module *m, const Func *f, Phase *p)
{
	uint32_t end = f->nstmt;
	for (uint32_t l = 0; l < f->nlabel; l++) {
		uint32_t ls = m->labels.v[f->label0 + l].stmt;
		if (ls > p->last && ls < end)
			end = ls;
	}
	for (uint32_t st = p->last + 1; st < end; st++) {
		const Stmt *s = func_stmt(m, f, st);
		if (s->op == OP_BRA || s->op == OP_BRX || s->op == OP_RET ||
		    s->op == OP_EXIT) {
			end = st;
			break;
		}
	}
	p->epi_first = p->last + 1;
	p->epi_last = end - 1;
}

void ana_phase_find(const Module *m, const Func *f, unsigned gap, PhaseList *out)
{
	memset(out, 0, sizeof(*out));
	VEC(Phase) ph = {0};
	Phase p = {0};
	uint32_t from = 0;
	while (scan_phase(m, f, gap, from, &p)) {
		if (ph.n) /* the one before ends where this one starts */
			ph.v[ph.n - 1].epi_last = p.first - 1;
		p.number = (uint32_t)ph.n + 1;
		p.epi_first = p.last + 1;
		VEC_PUSH(ph, p);
		from = p.last + 1;
		memset(&p, 0, sizeof p);
	}
	if (ph.n)
		last_epilogue(m, f, &ph.v[ph.n - 1]);
	out->v = ph.v;
	out->n = ph.n;
}

int ana_phase_range(const Module *m, const Func *f, unsigned gap, uint32_t n,
                    bool with_epilogue, uint32_t *first, uint32_t *last, size_t *nphases)
{
	Phase p = {0}, next;
	uint32_t k = 0, from = 0;
	while ((k < n || !n) && scan_phase(m, f, gap, from, &p)) {
		k++;
		from = p.last + 1;
	}
	if (!n || k < n) {
		if (nphases)
			*nphases = k;
		return -1;
	}
	*first = p.first;
	if (with_epilogue) {
		p.epi_first = p.last + 1;
		if (scan_phase(m, f, gap, p.last + 1, &next))
			p.epi_last = next.first - 1;
		else
			last_epilogue(m, f, &p);
	}
	*last = phase_cut_last(&p, with_epilogue);
	if (nphases)
		*nphases = k;
	return 0;
}

uint32_t phase_cut_last(const Phase *p, bool with_epilogue)
{
	return with_epilogue && p->epi_last >= p->epi_first ? p->epi_last : p->last;
}

uint32_t ana_mma_count(const Module *m, const Func *f, uint32_t first, uint32_t last)
{
	uint32_t n = 0;
	for (uint32_t i = first; i <= last && i < f->nstmt; i++)
		n += stmt_is_mma(m, f, i);
	return n;
}

int64_t ana_mma_first(const Module *m, const Func *f, uint32_t first, uint32_t last)
{
	for (uint32_t i = first; i <= last && i < f->nstmt; i++)
		if (stmt_is_mma(m, f, i))
			return i;
	return -1;
}

bool ana_func_has_mma(const Module *m, const Func *f)
{
	return f->nstmt && ana_mma_first(m, f, 0, f->nstmt - 1) >= 0;
}

/* ---- the locator --------------------------------------------------------- */

int ana_phases(Dataflow *df, unsigned gap, PhaseList *out, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	PhaseList found;
	ana_phase_find(m, f, gap, &found);
	Phase *ph = found.v;
	size_t nph = found.n;
	/* the mma statements, phase by phase: all[start[p] .. start[p + 1]) */
	VEC(uint32_t) all = {0};
	uint32_t *start = xmalloc((nph + 1) * sizeof(uint32_t));
	int32_t *phase_of = xcalloc(f->nstmt + 1, sizeof(int32_t));
	for (size_t p = 0; p < nph; p++) {
		start[p] = (uint32_t)all.n;
		for (uint32_t i = ph[p].first; i <= ph[p].last; i++)
			if (stmt_is_mma(m, f, i)) {
				VEC_PUSH(all, i);
				phase_of[i] = (int32_t)ph[p].number;
			}
	}
	start[nph] = (uint32_t)all.n;
	Slice sl = {df, phase_of, xcalloc(f->nstmt + 1, sizeof(uint32_t)), 1, NULL, 0, 0, 0, 0, 0, 0};
	StrBuf a = STRBUF_INIT, b = STRBUF_INIT;
	for (size_t p = 0; p < nph; p++) {
		Phase *P = &ph[p];
		const uint32_t *mm = all.v + start[p];
		uint32_t nm = start[p + 1] - start[p];
		/* chains, tiles */
		uint8_t *chained = xcalloc(nm + 1, 1);
		uint32_t run = 1, best = 1;
		StrBuf tiles_a = STRBUF_INIT, tiles_b = STRBUF_INIT;
		for (uint32_t i = 0; i < nm; i++) {
			const Stmt *s = func_stmt(m, f, mm[i]);
			uint32_t idx[4];
			if (!mma_operands(m, s, idx))
				continue;
			if (i == 0)
				shape_of(m, s, P);
			compact(m, &m->opds.v[idx[1]], &a);
			sb_addc(&a, '\n');
			if (!tiles_a.n || !strstr(tiles_a.p, a.p)) {
				sb_adds(&tiles_a, a.p);
				P->m_tiles++;
			}
			compact(m, &m->opds.v[idx[2]], &a);
			sb_addc(&a, '\n');
			if (!tiles_b.n || !strstr(tiles_b.p, a.p)) {
				sb_adds(&tiles_b, a.p);
				P->n_tiles++;
			}
			if (i > 0) {
				const Stmt *prev = func_stmt(m, f, mm[i - 1]);
				uint32_t pidx[4];
				compact(m, &m->opds.v[idx[3]], &a);
				if (mma_operands(m, prev, pidx)) {
					compact(m, &m->opds.v[pidx[0]], &b);
					if (a.n == b.n && !memcmp(a.p, b.p, a.n)) {
						chained[i] = 1;
						run++;
					} else
						run = 1;
				}
			}
			if (run > best)
				best = run;
		}
		sb_release(&tiles_a);
		sb_release(&tiles_b);
		P->k_chain_len = best;
		P->chains = P->mma / best;
		P->k = P->inst_k * best;
		P->banded = P->m_tiles * P->n_tiles != P->mma;
		classify_a(df, P, mm, nm, phase_of, &sl, ph);
		classify_c(df, P, mm, nm, chained, phase_of);
		classify_b(df, P, mm, nm);
		free(chained);
	}
	for (size_t p = 0; p < nph; p++)
		classify_epilogue(df, &ph[p], p + 1 < nph ? &ph[p + 1] : NULL);
	sb_release(&a);
	sb_release(&b);
	free(sl.seen);
	free(sl.stack);
	free(phase_of);
	free(start);
	VEC_FREE(all);
	*out = found;
	(void)e;
	return 0;
}

void phases_release(PhaseList *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		VEC_FREE(pl->v[i].a_offsets);
		VEC_FREE(pl->v[i].c_bytes);
		sb_release(&pl->v[i].epilogue_ops);
	}
	free(pl->v);
	pl->v = NULL;
	pl->n = 0;
}

/* ---- several functions at once ------------------------------------------- */

typedef struct {
	const Module *m;
	const Func *const *fns;
	FuncPhases *out;
	const uint32_t *order;      /* indices into fns, largest first */
	size_t n;
	unsigned gap;
	atomic_size_t next;
} PhaseJobs;

static void phases_one(PhaseJobs *q, size_t i)
{
	FuncPhases *o = &q->out[i];
	Dataflow *df = df_build(q->m, q->fns[i], &o->err);
	o->rc = df && ana_phases(df, q->gap, &o->pl, &o->err) == 0 ? 0 : -1;
	df_free(df);
}

static void *phases_worker(void *arg)
{
	PhaseJobs *q = arg;
	for (;;) {
		size_t k = atomic_fetch_add(&q->next, 1);
		if (k >= q->n)
			return NULL;
		phases_one(q, q->order[k]);
	}
}

static int by_size_desc(const void *a, const void *b, void *ctx)
{
	const PhaseJobs *q = ctx;
	uint32_t x = q->fns[*(const uint32_t *)a]->nstmt, y = q->fns[*(const uint32_t *)b]->nstmt;
	return x > y ? -1 : x < y;
}

void ana_phases_funcs(const Module *m, const Func *const *fns, size_t n, unsigned gap,
                      unsigned jobs, FuncPhases *out)
{
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].f = fns[i];
		out[i].err = (Err)ERR_INIT;
	}
	if (!jobs) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = c > 0 ? (unsigned)c : 1;
	}
	if (jobs > n)
		jobs = (unsigned)n;
	uint32_t *order = xmalloc((n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	PhaseJobs q = {m, fns, out, order, n, gap, 0};
	if (jobs <= 1) {
		for (size_t i = 0; i < n; i++)
			phases_one(&q, i);
		free(order);
		return;
	}
	qsort_r(order, n, sizeof(uint32_t), by_size_desc, &q);
	pthread_t *th = xmalloc(jobs * sizeof(pthread_t));
	unsigned started = 0;
	for (unsigned j = 1; j < jobs; j++)
		if (pthread_create(&th[started], NULL, phases_worker, &q) == 0)
			started++;
	phases_worker(&q); /* this thread works too; with no thread started, it does all */
	for (unsigned j = 0; j < started; j++)
		pthread_join(th[j], NULL);
	free(th);
	free(order);
}

void func_phases_release(FuncPhases *fp, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		phases_release(&fp[i].pl);
		err_release(&fp[i].err);
	}
}
