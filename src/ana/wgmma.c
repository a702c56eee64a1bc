/*
 * wgmma.c - the facts of each wgmma.mma_async of a range (wgmma.h).
 *
 * The operands, in the PTX ISA's order:
 *
 *     wgmma.mma_async.sync.aligned.SHAPE.DTYPE.ATYPE.BTYPE
 *         d, a-desc | {a regs}, b-desc, scale-d [, imm-scale-a, imm-scale-b
 *         [, imm-trans-a], imm-trans-b]
 *
 * f16/bf16 take both scales and both transposes (trans-a only with A from
 * a descriptor); tf32 and the fp8 types the scales alone; integer and b1
 * none.  The count of operands says which were given.
 *
 * A matrix descriptor is a 64-bit value (the PTX ISA, "Matrix Descriptor
 * Format"): bits 0-13 the start address >> 4, 16-29 the leading dimension
 * byte offset >> 4, 32-45 the stride dimension byte offset >> 4, 49-51 the
 * matrix base offset, 62-63 the swizzle mode (0 none, 1 128B, 2 64B, 3 32B);
 * bits 14-15, 30-31, 46-48 and 52-61 are reserved.  Compilers build it as
 * Triton does:
 *
 *     bfe.u32     %x, %addr, 4, 14;      the address's bits 4-17
 *     cvt.u64.u32 %xd, %x;
 *     or.b64      %desc, %xd, C;         or add.s64 %desc, %xd, C
 *
 * and the decoding follows that chain back and takes the fields from C:
 *  - or: exact when C's start field is 0 (the field is then the address's);
 *  - add: the start field is x + C's start field (x < 2^14, so a carry goes
 *    at most into bit 14); exact when C's bits 14-15 are 0, so the carry
 *    lands in reserved bits and LBO, SBO, base offset and swizzle are C's.
 *    The start field read by the hardware (bits 0-13) is then
 *    (x + C.start) mod 2^14, i.e. the address + 16 x C.start modulo the
 *    256 KiB the field spans; shared addresses on sm_90 stay below that
 *    (228 KiB of shared memory per SM), so the start address is the
 *    address plus 16 x C.start;
 *  - the address register is resolved by addr_value (a symbol, an
 *    offset, a variable part); mov.b64 %desc, C gives an absolute start.
 *    When it does not resolve as a whole, its add.s32 / add.u32 chain is
 *    taken apart (sum_parts): a symbol and constants that resolve, plus a
 *    term that does not (a stage index carried round a loop), give the
 *    symbol and the constant part, the offset itself unknown.
 * Anything else (the value assembled from two 32-bit halves, a
 * descriptor loaded from memory, a merge of definitions) leaves the
 * descriptor unknown with the reason.  The low 4 bits of the address are
 * dropped by the field: an offset that is not a multiple of 16 leaves the
 * start unknown.
 *
 * The bytes read through a descriptor (range): the layouts of the PTX ISA
 * ("Shared Memory Matrix Layout"), with R rows along M (A) or N (B) and 32
 * bytes of K per row (every dense shape reads 32 bytes of K: k16 x 16 bits,
 * k32 x 8 bits, k8 x 32 bits):
 *  - K-major (trans 0), swizzle W bytes (128, 64, 32): row r at
 *    (r / 8) x SBO + (r % 8) x W, its 32 bytes at the start's offset in the
 *    row; LBO is not used.  Without swizzle: core matrices of 8 rows x 16
 *    bytes (row r at (r / 8) x SBO + (r % 8) x 16), the second 16 bytes of
 *    K at LBO.
 *  - MN-major (trans 1), swizzle W: element (k, x) at
 *    (x / (W / e)) x LBO + (k / 8) x SBO + (k % 8) x W + (x % (W / e)) x e,
 *    e the element bytes.  MN-major without swizzle is not decoded.
 *  The swizzle permutes the 16-byte chunks of each W-byte row by absolute
 *  address bits (bits 4.. XOR bits 7..), and base offset 0 states that the
 *  pattern (8 rows of W bytes) starts aligned; a row's bytes stay in the
 *  row, so every W-byte row the layout places is read whole or in part.
 *  The range is [first row, last row + W) relative to the symbol, stated
 *  on the premise that the symbol lies on a pattern boundary (the PTX does
 *  not declare that; the JSON says it as "premise").  A start offset that
 *  is not known, a base offset other than 0, or a K slice that crosses a
 *  row leaves the range unknown.
 *
 * The same bytes as memory facts (wgmma_reads, for cut.c's read/write
 * dependencies) may not rest on that premise: the swizzle keeps each
 * 16-byte chunk inside the absolutely aligned W-byte row around it, so
 * where the symbol's declared .align is below W the range widens by W on
 * each side (and by 16 more below an .align of 16, the field dropping the
 * address's low 4 bits).  A start that resolves only in part reads
 * somewhere in its symbol; one that does not resolve, somewhere in shared
 * memory.
 *
 * Decisions:
 *  - The JSON and text renderings live here beside the analysis (the
 *    fields are this file's; splice/facts.c renders the mma.sync facts).
 *  - The wgmma.fence before and commit_group after are looked for in the
 *    mma's basic block only: which wait completes a group is a question of
 *    the groups in flight, across blocks, not answered here.
 */
#include "wgmma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wg_swizzle_name(unsigned mode)
{
	static const char *const n[4] = {"none", "128B", "64B", "32B"};
	return n[mode & 3];
}

static uint32_t swz_width(unsigned mode)
{
	return mode == WG_SWZ_128B  ? 128
	       : mode == WG_SWZ_64B ? 64
	       : mode == WG_SWZ_32B ? 32
	                            : 0;
}

uint32_t wg_swizzle(unsigned mode, uint32_t addr)
{
	uint32_t mask = mode == WG_SWZ_128B  ? 7
	                : mode == WG_SWZ_64B ? 3
	                : mode == WG_SWZ_32B ? 1
	                                     : 0;
	return addr ^ (((addr >> 7) & mask) << 4);
}

uint32_t wg_kmajor_offset(const WgDesc *d, uint32_t row, uint32_t kbyte)
{
	uint32_t w = swz_width(d->swizzle);
	if (w)
		return (row / 8) * d->sbo + (row % 8) * w + kbyte;
	return (row / 8) * d->sbo + (row % 8) * 16 + (kbyte / 16) * d->lbo + kbyte % 16;
}

uint32_t wg_mnmajor_offset(const WgDesc *d, uint32_t e, uint32_t k, uint32_t x)
{
	uint32_t w = swz_width(d->swizzle), per = w / e;
	return (x / per) * d->lbo + (k / 8) * d->sbo + (k % 8) * w + (x % per) * e;
}

/* ---- the descriptor chain ------------------------------------------------ */

static const Stmt *st(Dataflow *df, uint32_t i)
{
	return func_stmt(df_module(df), df_func(df), i);
}

/* The single reaching definition of the register operand `opd` (an index
 * into the module's operands) read at statement `at`, or -1. */
static int64_t def_of(Dataflow *df, uint32_t at, uint32_t opd, uint32_t *reg)
{
	int64_t r = df_opd_reg(df, opd);
	if (r < 0)
		return -1;
	if (reg)
		*reg = (uint32_t)r;
	int64_t d = df_reaching_def(df, at, (uint32_t)r);
	if (d < 0)
		return -1;
	bool kills = false;
	if (!df_stmt_defines(df, (uint32_t)d, (uint32_t)r, &kills) || !kills ||
	    (st(df, (uint32_t)d)->flags & STMT_GUARD))
		return -1;
	return d;
}

static bool opd_int(const Module *m, const Stmt *s, unsigned i, int64_t *v)
{
	const Operand *o = stmt_opd(m, s, i);
	return o->kind == OPD_INT && ana_int_value(opd_str(m, o), v);
}

/* Follows the start field x back from statement `at` (which reads it as
 * operand index `opd`): cvt.u64.u32 of bfe.u32 y, a, 4, 14.  Sets
 * d->field_stmt, d->addr_reg; returns false with d->start_why. */
static bool start_field(Dataflow *df, uint32_t at, uint32_t opd, WgDesc *d)
{
	const Module *m = df_module(df);
	int64_t c = def_of(df, at, opd, NULL);
	if (c < 0) {
		d->start_why = "the start field has no single unguarded definition";
		return false;
	}
	const Stmt *s = st(df, (uint32_t)c);
	if (stmt_opcode_is(m, s, "cvt.u64.u32") && s->nopd == 2) {
		c = def_of(df, (uint32_t)c, stmt_opd_index(m, s, 1), NULL);
		if (c < 0) {
			d->start_why =
			    "the start field has no single unguarded definition";
			return false;
		}
		s = st(df, (uint32_t)c);
	}
	int64_t pos, len;
	if (!(stmt_opcode_is(m, s, "bfe.u32") || stmt_opcode_is(m, s, "bfe.u64")) ||
	    s->nopd != 4 || !opd_int(m, s, 2, &pos) || !opd_int(m, s, 3, &len) ||
	    pos != 4 || len != 14) {
		d->start_why = "the start field is not bfe.u32 of an address's bits 4-17";
		return false;
	}
	d->field_stmt = (uint32_t)c;
	int64_t r = df_opd_reg(df, stmt_opd_index(m, s, 1));
	if (r < 0) {
		d->start_why = "the bfe does not read a register";
		return false;
	}
	d->addr_reg = (uint32_t)r;
	d->addr_stmt = (uint32_t)c;
	return true;
}

static void range_of(const WgmmaFact *w, WgDesc *d, bool is_a, int tnsp);

/* An address that addr_value cannot resolve as a whole, taken apart along
 * its adds: the parts that resolve (at most one symbol, constants) and the
 * first part that does not (var_stmt, its defining statement). */
typedef struct {
	Str sym;
	int64_t off;
	int64_t var_stmt;
	unsigned nvar;
} Parts;

static int sum_parts(Dataflow *df, uint32_t at, uint32_t reg, unsigned depth, Parts *pt)
{
	const Module *m = df_module(df);
	Addr a;
	if (addr_value(df, at, reg, &a) == 1) {
		if (a.base == AB_SYMBOL) {
			if (pt->sym.n)
				return -1; /* two symbols */
			pt->sym = a.base_name;
			pt->off += a.offset;
			if (a.variable && !pt->nvar++)
				pt->var_stmt = -1;
			return 0;
		}
		if (a.base == AB_ABSOLUTE) {
			pt->off += a.offset;
			return 0;
		}
		if (a.base == AB_SPECIAL) {
			pt->off += a.offset;
			if (!pt->nvar++)
				pt->var_stmt = -1;
			return 0;
		}
		return -1;
	}
	int64_t d = df_reaching_def(df, at, reg);
	bool kills = false;
	const Stmt *s = d >= 0 ? st(df, (uint32_t)d) : NULL;
	if (depth < 8 && s && df_stmt_defines(df, (uint32_t)d, reg, &kills) && kills &&
	    !(s->flags & STMT_GUARD) && s->nopd == 3 &&
	    (stmt_opcode_is(m, s, "add.s32") || stmt_opcode_is(m, s, "add.u32"))) {
		for (unsigned i = 1; i < 3; i++) {
			int64_t v;
			if (opd_int(m, s, i, &v)) {
				pt->off += v;
				continue;
			}
			int64_t r = df_opd_reg(df, stmt_opd_index(m, s, i));
			if (r < 0 ||
			    sum_parts(df, (uint32_t)d, (uint32_t)r, depth + 1, pt) < 0)
				return -1;
		}
		return 0;
	}
	/* a part that does not resolve */
	if (!pt->nvar++)
		pt->var_stmt = d >= 0 ? d : -1;
	return 0;
}

static void decode(Dataflow *df, uint32_t at, uint32_t opd, WgDesc *d)
{
	const Module *m = df_module(df);
	d->known = false;
	d->start_known = false;
	d->range_known = false;
	d->var_stmt = -1;
	d->var_why = NULL;
	int64_t def = def_of(df, at, opd, &d->reg);
	if (def < 0) {
		d->why = df_opd_reg(df, opd) < 0
		             ? "the descriptor is not a register"
		             : "the descriptor has no single unguarded definition";
		return;
	}
	d->def = (uint32_t)def;
	const Stmt *s = st(df, (uint32_t)def);
	int64_t c = 0;
	uint32_t xopd = UINT32_MAX;
	if ((stmt_opcode_is(m, s, "or.b64") || stmt_opcode_is(m, s, "add.s64") ||
	     stmt_opcode_is(m, s, "add.u64")) &&
	    s->nopd == 3) {
		snprintf(d->op, sizeof d->op, "%s",
		         stmt_opcode_is(m, s, "or") ? "or" : "add");
		if (opd_int(m, s, 2, &c))
			xopd = stmt_opd_index(m, s, 1);
		else if (opd_int(m, s, 1, &c))
			xopd = stmt_opd_index(m, s, 2);
		else {
			d->why = "the descriptor's definition has no constant operand";
			return;
		}
	} else if ((stmt_opcode_is(m, s, "mov.b64") || stmt_opcode_is(m, s, "mov.u64")) &&
	           s->nopd == 2 && opd_int(m, s, 1, &c))
		snprintf(d->op, sizeof d->op, "mov");
	else {
		d->why = "the descriptor is not or.b64 / add.s64 of a start field and a "
		         "constant, "
		         "nor mov.b64 of a constant";
		return;
	}
	uint64_t u = (uint64_t)c;
	d->constant = u;
	uint32_t cstart = (uint32_t)(u & 0x3fff);
	if (!strcmp(d->op, "or") && cstart) {
		d->why = "or.b64 with a constant whose start field is not 0: the start "
		         "field is "
		         "an or of two values";
		return;
	}
	if (!strcmp(d->op, "add") && ((u >> 14) & 3)) {
		d->why = "add.s64 with a constant that sets reserved bits 14-15: a carry "
		         "of the "
		         "start field may reach the other fields";
		return;
	}
	d->known = true;
	d->start_add = cstart << 4;
	d->lbo = (uint32_t)((u >> 16) & 0x3fff) << 4;
	d->sbo = (uint32_t)((u >> 32) & 0x3fff) << 4;
	d->base_offset = (uint8_t)((u >> 49) & 7);
	d->swizzle = (uint8_t)(u >> 62);
	if (!strcmp(d->op, "mov")) {
		d->start_known = true;
		d->addr.base = AB_ABSOLUTE;
		d->addr.space = SP_SHARED;
		d->start_off = d->start_add;
		return;
	}
	if (!start_field(df, d->def, xopd, d))
		return;
	if (addr_value(df, d->addr_stmt, d->addr_reg, &d->addr) != 1) {
		const char *why =
		    d->addr.why ? d->addr.why : "the address did not resolve";
		Parts pt;
		memset(&pt, 0, sizeof pt);
		if (sum_parts(df, d->addr_stmt, d->addr_reg, 0, &pt) < 0 || !pt.sym.n) {
			d->start_why = why;
			return;
		}
		/* a symbol plus terms that do not resolve: the symbol is a fact, the
		 * offset is not */
		memset(&d->addr, 0, sizeof d->addr);
		d->addr.base = AB_SYMBOL;
		d->addr.space = SP_SHARED;
		d->addr.base_name = pt.sym;
		d->addr.offset = pt.off;
		d->addr.variable = true;
		d->addr.why = why;
		d->var_stmt = pt.var_stmt;
		d->var_why = why;
	}
	if (d->addr.base != AB_SYMBOL && d->addr.base != AB_ABSOLUTE) {
		d->start_why = "the address is not a shared symbol's";
		return;
	}
	if (!d->addr.variable && d->addr.offset % 16) {
		d->start_why =
		    "the address is not a multiple of 16 from its symbol: the field "
		    "drops its low 4 bits";
		return;
	}
	d->start_known = true;
	d->start_off = d->addr.offset + d->start_add;
}

/* [lo, hi) of the W-byte rows (or 16-byte core rows) the layout places. */
static void range_of(const WgmmaFact *w, WgDesc *d, bool is_a, int tnsp)
{
	d->range_known = false;
	if (!d->known || !d->start_known) {
		d->range_why = "the start address is not known";
		return;
	}
	if (d->addr.variable) {
		d->range_why = "the start address has a variable part";
		return;
	}
	if (d->base_offset) {
		d->range_why = "the matrix base offset is not 0";
		return;
	}
	if (w->sparse) {
		d->range_why = "a sparse wgmma's layout is not decoded";
		return;
	}
	uint32_t rows = is_a ? w->m : w->n;
	uint32_t wd = swz_width(d->swizzle);
	int64_t start = d->start_off;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	if (tnsp == 1) {
		uint32_t e = w->elem_bits / 8;
		if (!wd || !e) {
			d->range_why =
			    "an MN-major layout without swizzle is not decoded";
			return;
		}
		if ((start % wd + wd) % wd) {
			d->range_why =
			    "the start is not at a row boundary of the swizzle";
			return;
		}
		for (uint32_t k = 0; k < w->k; k++)
			for (uint32_t x = 0; x < rows; x += wd / e) {
				int64_t a = start + wg_mnmajor_offset(d, e, k, x);
				int64_t r0 = a - ((a % wd + wd) % wd);
				lo = r0 < lo ? r0 : lo;
				hi = r0 + wd > hi ? r0 + wd : hi;
			}
	} else if (wd) {
		if ((start % wd + wd) % wd + 32 > wd) {
			d->range_why = "the 32 bytes of K cross a row of the swizzle";
			return;
		}
		for (uint32_t r = 0; r < rows; r++) {
			int64_t a = start + wg_kmajor_offset(d, r, 0);
			int64_t r0 = a - ((a % wd + wd) % wd);
			lo = r0 < lo ? r0 : lo;
			hi = r0 + wd > hi ? r0 + wd : hi;
		}
	} else
		for (uint32_t r = 0; r < rows; r++)
			for (uint32_t kb = 0; kb < 32; kb += 16) {
				int64_t a = start + wg_kmajor_offset(d, r, kb);
				lo = a < lo ? a : lo;
				hi = a + 16 > hi ? a + 16 : hi;
			}
	d->range_known = true;
	d->lo = lo;
	d->hi = hi;
}

/* ---- the instruction ------------------------------------------------------ */

static void component(Str op, unsigned i, char *buf, size_t n)
{
	const char *p = op.p, *end = op.p + op.n;
	for (unsigned k = 0; k < i && p < end; k++) {
		const char *q = memchr(p, '.', (size_t)(end - p));
		p = q ? q + 1 : end;
	}
	const char *q = memchr(p, '.', (size_t)(end - p));
	size_t len = (size_t)((q ? q : end) - p);
	snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

static uint32_t vec_count(const Module *m, const Stmt *s, unsigned i)
{
	uint32_t oi = stmt_opd_index(m, s, i);
	const Operand *o = &m->opds.v[oi];
	if (o->kind != OPD_VEC)
		return 1;
	uint32_t n = 0;
	for (uint32_t k = oi + 1; k < oi + 1 + o->sub; k = opd_next(m, k))
		n++;
	return n;
}

static uint32_t type_bits(const char *t)
{
	if (!strcmp(t, "f16") || !strcmp(t, "bf16"))
		return 16;
	if (!strcmp(t, "tf32"))
		return 32;
	if (!strcmp(t, "e4m3") || !strcmp(t, "e5m2") || !strcmp(t, "s8") ||
	    !strcmp(t, "u8"))
		return 8;
	if (!strcmp(t, "b1"))
		return 1;
	return 0;
}

static int fact_of(Dataflow *df, uint32_t i, WgmmaFact *w)
{
	const Module *m = df_module(df);
	const Stmt *s = st(df, i);
	memset(w, 0, sizeof *w);
	w->stmt = i;
	Str op = stmt_opcode(m, s);
	unsigned c = 2; /* wgmma . mma_async . [sp .] sync . aligned . SHAPE */
	char buf[16];
	component(op, c, buf, sizeof buf);
	if (!strcmp(buf, "sp")) {
		w->sparse = true;
		c++;
	}
	c += 2; /* sync aligned */
	component(op, c, w->shape, sizeof w->shape);
	if (sscanf(w->shape, "m%un%uk%u", &w->m, &w->n, &w->k) != 3)
		w->m = w->n = w->k = 0;
	component(op, c + 1, w->dtype, sizeof w->dtype);
	component(op, c + 2, w->atype, sizeof w->atype);
	component(op, c + 3, w->btype, sizeof w->btype);
	w->elem_bits = type_bits(w->atype);
	w->d_nregs = vec_count(m, s, 0);
	w->a_regs = stmt_opd(m, s, 1)->kind == OPD_VEC;
	w->a_nregs = w->a_regs ? vec_count(m, s, 1) : 0;
	w->imm_scale_a = w->imm_scale_b = w->tnsp_a = w->tnsp_b = -2;
	w->fence = w->commit = -1;
	/* sparse forms carry the metadata and selector after b: not decoded */
	unsigned sd = w->sparse ? 5 : 3;
	if (s->nopd > sd) {
		const Operand *o = stmt_opd(m, s, sd);
		int64_t v;
		if (o->kind == OPD_INT && ana_int_value(opd_str(m, o), &v))
			w->scale_d_imm = v;
		else {
			int64_t r = df_opd_reg(df, stmt_opd_index(m, s, sd));
			if (r >= 0) {
				w->scale_d_pred = true;
				w->scale_d_reg = (uint32_t)r;
				w->scale_d_not = (o->flags & OPDF_NOT) != 0;
			}
		}
	}
	unsigned extra = s->nopd > sd + 1 ? s->nopd - sd - 1 : 0;
	int64_t v[4] = {-2, -2, -2, -2};
	for (unsigned k = 0; k < extra && k < 4; k++)
		if (!opd_int(m, s, sd + 1 + k, &v[k]))
			v[k] = -2;
	if (extra >= 2) {
		w->imm_scale_a = (int)v[0];
		w->imm_scale_b = (int)v[1];
	}
	if (extra == 4) {
		w->tnsp_a = (int)v[2];
		w->tnsp_b = (int)v[3];
	} else if (extra == 3 && w->a_regs)
		w->tnsp_b = (int)v[2];
	/* the fence and the commit in the block */
	uint32_t blk = df_block_of(df, i), b0, b1;
	df_block_range(df, blk, &b0, &b1);
	for (uint32_t k = i; k-- > b0;)
		if (stmt_opcode_is(m, st(df, k), "wgmma.fence")) {
			w->fence = k;
			break;
		}
	for (uint32_t k = i + 1; k < b1; k++)
		if (stmt_opcode_is(m, st(df, k), "wgmma.commit_group")) {
			w->commit = k;
			break;
		}
	if (w->sparse) {
		w->a.why = w->b.why = "a sparse wgmma is not decoded";
		return 0;
	}
	if (!w->a_regs) {
		decode(df, i, stmt_opd_index(m, s, 1), &w->a);
		range_of(w, &w->a, true, w->tnsp_a < 0 ? 0 : w->tnsp_a);
	}
	decode(df, i, stmt_opd_index(m, s, 2), &w->b);
	range_of(w, &w->b, false, w->tnsp_b < 0 ? 0 : w->tnsp_b);
	return 0;
}

int ana_wgmma(Dataflow *df, uint32_t first, uint32_t last, WgmmaFacts *out, Err *e)
{
	memset(out, 0, sizeof *out);
	if (first > last || last >= df_nstmt(df))
		return err_set(e, "s%u..s%u is outside the function (%u statements)",
		               first, last, df_nstmt(df));
	const Module *m = df_module(df);
	for (uint32_t i = first; i <= last; i++)
		if (stmt_opcode_is(m, st(df, i), "wgmma.mma_async")) {
			WgmmaFact w;
			fact_of(df, i, &w);
			VEC_PUSH(out->v, w);
		}
	return 0;
}

void wgmma_facts_release(WgmmaFacts *w)
{
	VEC_FREE(w->v);
}

/* ---- the bytes read, as memory facts ---------------------------------------- */

/* The .align of module variable `name` (0: not declared, or not a
 * module-level variable: a function's own .shared is not an item). */
static uint32_t var_align(const Module *m, Str name)
{
	for (size_t i = 0; i < m->items.n; i++) {
		const Item *it = &m->items.v[i];
		if (it->kind != ITEM_VAR || !str_eq(mod_str(m, it->name), name))
			continue;
		Str t = mod_str(m, it->text);
		for (size_t k = 0; k + 7 <= t.n; k++)
			if (!memcmp(t.p + k, ".align", 6) &&
			    (t.p[k + 6] == ' ' || t.p[k + 6] == '\t'))
				return (uint32_t)strtoul(t.p + k + 7, NULL, 0);
		return 0;
	}
	return 0;
}

static void read_of(Dataflow *df, const WgDesc *d, char which, WgRead *r)
{
	memset(r, 0, sizeof *r);
	r->which = which;
	r->addr.space = SP_SHARED;
	if (d->range_known) {
		r->kind = WR_RANGE;
		r->addr.base = d->addr.base;
		r->addr.base_name = d->addr.base_name;
		if (d->addr.base == AB_SYMBOL) {
			/* wgmma.c's rows are the symbol's: exact when the symbol
			 * starts on a row of the swizzle (every byte read stays in
			 * the aligned W-byte row of its 16-byte chunk) and on 16
			 * bytes (the field keeps the address's bits 4-17) */
			uint32_t w = swz_width(d->swizzle);
			uint32_t al = var_align(df_module(df), d->addr.base_name);
			r->addr.dynamic_shared = df_var_unsized(df, d->addr.base_name);
			if (al < 16)
				r->widen += 16;
			if (w && al < w)
				r->widen += w;
		}
		r->lo = d->lo - r->widen;
		r->hi = d->hi + r->widen;
		r->addr.offset = r->lo;
		r->addr.elem_bytes = 1;
		r->addr.nelem = (uint32_t)(r->hi - r->lo);
		return;
	}
	if (d->known && d->start_known && d->addr.base == AB_SYMBOL) {
		r->kind = WR_SYMBOL;
		r->addr.base = AB_SYMBOL;
		r->addr.base_name = d->addr.base_name;
		r->addr.dynamic_shared = df_var_unsized(df, d->addr.base_name);
		r->addr.variable = true;
		r->why = d->range_why;
		return;
	}
	r->kind = WR_SHARED;
	r->addr.base = AB_NONE;
	r->why = !d->known ? d->why : !d->start_known ? d->start_why : d->range_why;
	r->addr.why = r->why;
}

int wgmma_reads(Dataflow *df, uint32_t stmt, WgRead out[2])
{
	if (stmt >= df_nstmt(df) ||
	    !stmt_opcode_is(df_module(df), st(df, stmt), "wgmma.mma_async"))
		return 0;
	WgmmaFact w;
	fact_of(df, stmt, &w);
	int n = 0;
	if (!w.a_regs)
		read_of(df, &w.a, 'a', &out[n++]);
	read_of(df, &w.b, 'b', &out[n++]);
	return n;
}

/* ---- renderings ------------------------------------------------------------ */

static const char *reg_name(Dataflow *df, uint32_t reg, char *buf, size_t n)
{
	Str s = df_reg(df, reg)->name;
	snprintf(buf, n, "%.*s", (int)s.n, s.p);
	return buf;
}

static void num_or_null(cJSON *o, const char *k, bool known, double v)
{
	if (known)
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static cJSON *desc_json(Dataflow *df, const WgDesc *d)
{
	char buf[64];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "reg", reg_name(df, d->reg, buf, sizeof buf));
	cJSON_AddBoolToObject(o, "known", d->known);
	if (!d->known) {
		cJSON_AddStringToObject(o, "why", d->why ? d->why : "unknown");
		return o;
	}
	cJSON_AddNumberToObject(o, "def_stmt", d->def);
	cJSON_AddStringToObject(o, "op", d->op);
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)d->constant);
	cJSON_AddStringToObject(o, "constant", buf);
	cJSON_AddNumberToObject(o, "start_add", d->start_add);
	cJSON_AddNumberToObject(o, "lbo", d->lbo);
	cJSON_AddNumberToObject(o, "sbo", d->sbo);
	cJSON_AddNumberToObject(o, "base_offset", d->base_offset);
	cJSON_AddStringToObject(o, "swizzle", wg_swizzle_name(d->swizzle));
	cJSON *sa = cJSON_AddObjectToObject(o, "start");
	cJSON_AddBoolToObject(sa, "known", d->start_known);
	if (!d->start_known)
		cJSON_AddStringToObject(sa, "why",
		                        d->start_why ? d->start_why : "unknown");
	else {
		if (strcmp(d->op, "mov"))
			cJSON_AddNumberToObject(sa, "field_stmt", d->field_stmt);
		if (d->addr.base == AB_SYMBOL) {
			snprintf(buf, sizeof buf, "%.*s", (int)d->addr.base_name.n,
			         d->addr.base_name.p);
			cJSON_AddStringToObject(sa, "symbol", buf);
		} else
			cJSON_AddNullToObject(sa, "symbol");
		cJSON_AddBoolToObject(sa, "variable", d->addr.variable);
		if (d->var_why) {
			num_or_null(sa, "variable_stmt", d->var_stmt >= 0,
			            (double)d->var_stmt);
			cJSON_AddStringToObject(sa, "variable_why", d->var_why);
		}
		num_or_null(sa, "offset", !d->addr.variable, (double)d->start_off);
		cJSON_AddNumberToObject(sa, "constant_offset",
		                        (double)(d->addr.offset + d->start_add));
	}
	cJSON *r = cJSON_AddObjectToObject(o, "range");
	cJSON_AddBoolToObject(r, "known", d->range_known);
	if (d->range_known) {
		cJSON_AddNumberToObject(r, "lo", (double)d->lo);
		cJSON_AddNumberToObject(r, "hi", (double)d->hi);
		if (d->swizzle)
			cJSON_AddStringToObject(
			    r, "premise",
			    d->swizzle == WG_SWZ_128B  ? "symbol aligned to 1024 bytes"
			    : d->swizzle == WG_SWZ_64B ? "symbol aligned to 512 bytes"
			                               : "symbol aligned to 256 bytes");
		else
			cJSON_AddNullToObject(r, "premise");
	} else
		cJSON_AddStringToObject(r, "why",
		                        d->range_why ? d->range_why : "unknown");
	return o;
}

static void imm_or_null(cJSON *o, const char *k, int v)
{
	num_or_null(o, k, v != -2, v);
}

cJSON *wgmma_facts_json(Dataflow *df, const WgmmaFacts *wf)
{
	cJSON *arr = cJSON_CreateArray();
	char buf[64];
	for (size_t i = 0; i < wf->v.n; i++) {
		const WgmmaFact *w = &wf->v.v[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "stmt", w->stmt);
		cJSON_AddNumberToObject(o, "line", st(df, w->stmt)->line);
		cJSON_AddStringToObject(o, "shape", w->shape);
		cJSON_AddStringToObject(o, "dtype", w->dtype);
		cJSON_AddStringToObject(o, "atype", w->atype);
		cJSON_AddStringToObject(o, "btype", w->btype);
		cJSON_AddBoolToObject(o, "sparse", w->sparse);
		cJSON_AddNumberToObject(o, "d_regs", w->d_nregs);
		cJSON *a = cJSON_AddObjectToObject(o, "a");
		cJSON_AddStringToObject(a, "from",
		                        w->a_regs ? "registers" : "descriptor");
		if (w->a_regs)
			cJSON_AddNumberToObject(a, "regs", w->a_nregs);
		else
			cJSON_AddItemToObject(a, "desc", desc_json(df, &w->a));
		cJSON_AddItemToObject(o, "b", desc_json(df, &w->b));
		cJSON *sd = cJSON_AddObjectToObject(o, "scale_d");
		if (w->scale_d_pred) {
			cJSON_AddStringToObject(sd, "kind", "predicate");
			cJSON_AddStringToObject(
			    sd, "reg", reg_name(df, w->scale_d_reg, buf, sizeof buf));
			cJSON_AddBoolToObject(sd, "negated", w->scale_d_not);
		} else {
			cJSON_AddStringToObject(sd, "kind", "constant");
			cJSON_AddNumberToObject(sd, "value", (double)w->scale_d_imm);
		}
		imm_or_null(o, "imm_scale_a", w->imm_scale_a);
		imm_or_null(o, "imm_scale_b", w->imm_scale_b);
		imm_or_null(o, "trans_a", w->tnsp_a);
		imm_or_null(o, "trans_b", w->tnsp_b);
		num_or_null(o, "fence_stmt", w->fence >= 0, (double)w->fence);
		num_or_null(o, "commit_stmt", w->commit >= 0, (double)w->commit);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void desc_text(Dataflow *df, const char *role, const WgDesc *d, StrBuf *out)
{
	char buf[64];
	sb_addf(out, "    %s descriptor %s", role, reg_name(df, d->reg, buf, sizeof buf));
	if (!d->known) {
		sb_addf(out, ": unknown (%s)\n", d->why);
		return;
	}
	sb_addf(out, " = s%u %s 0x%016llx: lbo %u, sbo %u, swizzle %s, base offset %u\n",
	        d->def, d->op, (unsigned long long)d->constant, d->lbo, d->sbo,
	        wg_swizzle_name(d->swizzle), d->base_offset);
	sb_adds(out, "      start ");
	if (!d->start_known)
		sb_addf(out, "unknown (%s)", d->start_why);
	else if (d->addr.base == AB_SYMBOL) {
		sb_addf(out, "%.*s", (int)d->addr.base_name.n, d->addr.base_name.p);
		if (d->addr.variable && d->var_why && d->var_stmt >= 0)
			sb_addf(out, " + %lld + a variable part (s%lld: %s)",
			        (long long)(d->addr.offset + d->start_add),
			        (long long)d->var_stmt, d->var_why);
		else if (d->addr.variable)
			sb_addf(out, " + %lld + a variable part",
			        (long long)(d->addr.offset + d->start_add));
		else
			sb_addf(out, "+%lld", (long long)d->start_off);
	} else
		sb_addf(out, "%lld (absolute)", (long long)d->start_off);
	if (d->range_known)
		sb_addf(
		    out, "; reads [%lld, %lld)%s\n", (long long)d->lo, (long long)d->hi,
		    d->swizzle ? " (premise: the symbol on a swizzle-pattern boundary)"
		               : "");
	else
		sb_addf(out, "; range unknown (%s)\n", d->range_why);
}

void wgmma_facts_text(Dataflow *df, const WgmmaFacts *wf, StrBuf *out)
{
	char buf[64];
	if (!wf->v.n)
		return;
	sb_addf(out, "wgmma: %zu wgmma.mma_async\n", wf->v.n);
	for (size_t i = 0; i < wf->v.n; i++) {
		const WgmmaFact *w = &wf->v.v[i];
		sb_addf(out, "  s%u %s %s.%s.%s%s, D %u regs, A ", w->stmt, w->shape,
		        w->dtype, w->atype, w->btype, w->sparse ? " (sparse)" : "",
		        w->d_nregs);
		if (w->a_regs)
			sb_addf(out, "%u registers", w->a_nregs);
		else
			sb_adds(out, "descriptor");
		sb_adds(out, ", scale-d ");
		if (w->scale_d_pred)
			sb_addf(out, "%s%s", w->scale_d_not ? "!" : "",
			        reg_name(df, w->scale_d_reg, buf, sizeof buf));
		else
			sb_addf(out, "%lld", (long long)w->scale_d_imm);
		if (w->imm_scale_a != -2)
			sb_addf(out, ", scale-a %d, scale-b %d", w->imm_scale_a,
			        w->imm_scale_b);
		if (w->tnsp_a != -2)
			sb_addf(out, ", trans-a %d", w->tnsp_a);
		if (w->tnsp_b != -2)
			sb_addf(out, ", trans-b %d", w->tnsp_b);
		if (w->fence >= 0)
			sb_addf(out, ", fence s%lld", (long long)w->fence);
		if (w->commit >= 0)
			sb_addf(out, ", commit s%lld", (long long)w->commit);
		sb_addc(out, '\n');
		if (!w->a_regs)
			desc_text(df, "A", &w->a, out);
		desc_text(df, "B", &w->b, out);
	}
}
