/*
 * native_wgmma.c - the native forms of a wgmma phase (native.h), written
 * from the facts of its wgmma.mma_async statements (ana/wgmma.h) and the
 * cut interface (df_cut).
 *
 * Two forms:
 *
 *   mma       the vendor's instruction: each wgmma.mma_async written again
 *             from its facts (shape, types, A registers or descriptor, B's
 *             descriptor, scale-d, the immediate scales and transposes),
 *             the same descriptor registers, in the same order.  The
 *             phase holds only the mma statements: the wgmma.fence before
 *             them and the wgmma.commit_group / wgmma.wait_group after
 *             them stay in the module, so the group structure is the
 *             vendor's.  Bit-exact by construction.
 *
 *   mma_sync  the exact mma.sync form of an f16 wgmma (f32 accumulate,
 *             scales 1, A K-major or in registers): each warp w of the
 *             warpgroup computes rows 16w..16w+15 of the m64 tile with one
 *             mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 per 8
 *             columns of N, in the wgmma's k order (one k16 step each).
 *             The accumulator registers are the wgmma's: its fragment
 *             (the PTX ISA's wgmma D figure for m64nNk16: register i of a
 *             thread holds row 16w + g + 8 * ((i / 2) % 2), column
 *             8 * (i / 4) + 2 * t + i % 2, g = lane / 4, t = lane % 4) is,
 *             per warp, the m16n8 C fragment repeated along N: registers
 *             4j..4j+3 are the C of column block j.  A in registers has
 *             the m16n8k16 A fragment per warp (the wgmma A figure), so
 *             they are used as they are.  A and B from shared memory are
 *             loaded with ldmatrix through the descriptor's layout: the
 *             start address read from the descriptor register at run time
 *             ((desc & 0x3fff) << 4, what the hardware reads), the lane's
 *             offset from the layout (LBO, SBO, the swizzle mode: the
 *             descriptor's constant fields, known from the facts), then
 *             the swizzle applied to the absolute address (bits 4..
 *             XOR bits 7..: 3 bits for 128B, 2 for 64B, 1 for 32B), as the
 *             hardware applies it.  K-major tiles load with ldmatrix.x4,
 *             MN-major B (trans-b 1) with ldmatrix.x4.trans.
 *             scale-d: C is the D registers when it is 1, and -0.0 when it
 *             is 0 (-0.0 + x = x for every x, +0.0 included, so D = A * B
 *             exactly); a predicate selects between them per register.
 *             The wgmma pipeline around it: the form starts with
 *             wgmma.commit_group and wgmma.wait_group 0 (any wgmma of the
 *             module still in flight, whose accumulators this form reads
 *             or writes, completes first) and ends with wgmma.fence (a
 *             later wgmma that reads these registers sees the writes).
 *
 * Decisions:
 *  - The warp of the warpgroup is (linear thread index / 32) % 4, the
 *    linear index from %tid and %ntid, as the PTX ISA defines warpgroups.
 *  - A fact the form needs and the analysis cannot give (a descriptor not
 *    decoded, a base offset other than 0, another type, an MN-major A or
 *    an MN-major B without swizzle, N not a multiple of 16) is refused
 *    with the statement and the reason, never assumed.
 *  - Bit-exactness of mma_sync rests on a measurement, not on the ISA: on
 *    an H200, Triton's mma.sync m16n8k16 and wgmma m64nNk16 builds of one
 *    f16 matmul gave identical f32 accumulators (doc/wgmma-native.md).
 *    The GPU test t0201 checks both forms on every f16 wgmma phase of the
 *    Triton fixtures.
 */
#include "native_internal.h"

#include "ana/ana.h"
#include "ana/wgmma.h"
#include "splice.h"
#include "template.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *const MMA16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";

/* ---- formals ---------------------------------------------------------------- */

typedef NativeFormal WFormal;

typedef struct {
	Dataflow *df;
	const WgmmaFacts *wf;
	const CutInterface *cut;
	NativeFormals formals;
	StrBuf err;
} WGen;

static bool has_reg(const CutReg *v, size_t n, uint32_t reg)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].reg == reg)
			return true;
	return false;
}

static WFormal *wformal(WGen *g, const char *name, const char *type, uint8_t dir,
                        bool list)
{
	return native_formal(&g->formals, name, type, dir, list);
}

/* The template name of module register `reg` read or written by the
 * phase: a scalar formal for descriptors and predicates (prefix "a_desc",
 * "b_desc", "scale_d"), a list element for D and A registers. */
static void name_of(WGen *g, uint32_t reg, const char *prefix, bool list, char *out,
                    size_t n)
{
	for (size_t i = 0; i < g->formals.n; i++) {
		const WFormal *f = &g->formals.v[i];
		for (size_t k = 0; k < f->regs.n; k++)
			if (f->regs.v[k] == reg) {
				if (f->list)
					snprintf(out, n, "%%{%s[%zu]}", f->name, k);
				else
					snprintf(out, n, "%%{%s}", f->name);
				return;
			}
	}
	const RegInfo *ri = df_reg(g->df, reg);
	bool in = has_reg(g->cut->live_in.v, g->cut->live_in.n, reg);
	bool out_ = has_reg(g->cut->live_out.v, g->cut->live_out.n, reg);
	char type[8];
	snprintf(type, sizeof type, ".b%u", ri->bits == 1 ? 1 : ri->bits);
	if (ri->bits == 1)
		snprintf(type, sizeof type, ".pred");
	char name[16];
	if (list) {
		/* D: inout when read and kept, in when only read (written here,
		 * dead after), else out */
		const char *ln = !strcmp(prefix, "a") ? "a"
		                 : in && out_         ? "d"
		                 : in                 ? "din"
		                                      : "dout";
		uint8_t dir = !strcmp(prefix, "a") ? FM_IN
		              : in && out_         ? FM_INOUT
		              : in                 ? FM_IN
		                                   : FM_OUT;
		WFormal *f = wformal(g, ln, type, dir, true);
		VEC_PUSH(f->regs, reg);
		snprintf(out, n, "%%{%s[%zu]}", f->name, f->regs.n - 1);
		return;
	}
	unsigned k = 0;
	for (size_t i = 0; i < g->formals.n; i++)
		k += !strncmp(g->formals.v[i].name, prefix, strlen(prefix)) &&
		     !g->formals.v[i].list;
	if (!strcmp(prefix, "scale_d"))
		snprintf(name, sizeof name, k ? "scale_d%u" : "scale_d", k);
	else
		snprintf(name, sizeof name, "%s%u", prefix, k);
	WFormal *f = wformal(g, name, type, FM_IN, false);
	VEC_PUSH(f->regs, reg);
	snprintf(out, n, "%%{%s}", f->name);
}

#define wrefuse(g, ...) native_refuse(&(g)->err, __VA_ARGS__)

/* The registers of operand i (a vector) of statement s, in order. */
static uint32_t vec_regs(Dataflow *df, const Stmt *s, unsigned i, uint32_t *out,
                         uint32_t max)
{
	const Module *m = df_module(df);
	uint32_t oi = stmt_opd_index(m, s, i), n = 0;
	const Operand *o = &m->opds.v[oi];
	if (o->kind != OPD_VEC)
		return 0;
	for (uint32_t k = oi + 1; k < oi + 1 + o->sub; k = opd_next(m, k)) {
		int64_t r = df_opd_reg(df, k);
		if (r < 0 || df_opd_partial(df, k) || n >= max)
			return UINT32_MAX;
		out[n++] = (uint32_t)r;
	}
	return n;
}

/* ---- the vendor's form -------------------------------------------------------- */

static int body_wgmma(WGen *g, StrBuf *body)
{
	const Module *m = df_module(g->df);
	const Func *f = df_func(g->df);
	char nm[40];
	for (size_t i = 0; i < g->wf->v.n; i++) {
		const WgmmaFact *w = &g->wf->v.v[i];
		const Stmt *s = func_stmt(m, f, w->stmt);
		if (w->sparse)
			return wrefuse(g, "s%u (line %u) is a sparse wgmma: not written",
			               w->stmt, s->line);
		if (s->flags & STMT_GUARD)
			return wrefuse(
			    g,
			    "s%u (line %u) is a guarded wgmma: the facts do not say when "
			    "it runs",
			    w->stmt, s->line);
		uint32_t d[256], a[8];
		uint32_t nd = vec_regs(g->df, s, 0, d, 256);
		uint32_t na = w->a_regs ? vec_regs(g->df, s, 1, a, 8) : 0;
		if (nd == UINT32_MAX || nd != w->d_nregs || na == UINT32_MAX)
			return wrefuse(
			    g,
			    "s%u (line %u): an operand is not a list of whole registers",
			    w->stmt, s->line);
		sb_addf(body, "\t// s%u: %s, A %s, scale-d ", w->stmt, w->shape,
		        w->a_regs ? "in registers" : "by descriptor");
		if (w->scale_d_pred)
			sb_adds(body, "a predicate\n");
		else
			sb_addf(body, "%lld\n", (long long)w->scale_d_imm);
		sb_addf(body, "\twgmma.mma_async.sync.aligned.%s.%s.%s.%s \t{", w->shape,
		        w->dtype, w->atype, w->btype);
		for (uint32_t k = 0; k < nd; k++) {
			name_of(g, d[k], "d", true, nm, sizeof nm);
			sb_addf(body, "%s%s", k ? ", " : "", nm);
		}
		sb_adds(body, "}, ");
		if (w->a_regs) {
			sb_addc(body, '{');
			for (uint32_t k = 0; k < na; k++) {
				name_of(g, a[k], "a", true, nm, sizeof nm);
				sb_addf(body, "%s%s", k ? ", " : "", nm);
			}
			sb_adds(body, "}, ");
		} else {
			name_of(g, w->a.reg, "a_desc", false, nm, sizeof nm);
			sb_addf(body, "%s, ", nm);
		}
		name_of(g, w->b.reg, "b_desc", false, nm, sizeof nm);
		sb_addf(body, "%s, ", nm);
		if (w->scale_d_pred) {
			name_of(g, w->scale_d_reg, "scale_d", false, nm, sizeof nm);
			sb_addf(body, "%s%s", w->scale_d_not ? "!" : "", nm);
		} else
			sb_addf(body, "%lld", (long long)w->scale_d_imm);
		if (w->imm_scale_a != -2)
			sb_addf(body, ", %d, %d", w->imm_scale_a, w->imm_scale_b);
		if (w->tnsp_a != -2)
			sb_addf(body, ", %d", w->tnsp_a);
		if (w->tnsp_b != -2)
			sb_addf(body, ", %d", w->tnsp_b);
		sb_adds(body, ";\n");
	}
	return 0;
}

/* ---- the mma.sync form -------------------------------------------------------- */

static uint32_t swz_mask(unsigned mode)
{
	return mode == WG_SWZ_128B  ? 0x70
	       : mode == WG_SWZ_64B ? 0x30
	       : mode == WG_SWZ_32B ? 0x10
	                            : 0;
}

static uint32_t swz_width(unsigned mode)
{
	return mode == WG_SWZ_128B  ? 128
	       : mode == WG_SWZ_64B ? 64
	       : mode == WG_SWZ_32B ? 32
	                            : 0;
}

static int check_sync(WGen *g, const WgmmaFact *w, const Stmt *s)
{
	if (strcmp(w->dtype, "f32") || strcmp(w->atype, "f16") || strcmp(w->btype, "f16"))
		return wrefuse(
		    g,
		    "s%u (line %u) is %s.%s.%s.%s: the mma_sync form is exact for "
		    "f16 inputs with f32 accumulation only (%s)",
		    w->stmt, s->line, w->shape, w->dtype, w->atype, w->btype, MMA16);
	if (w->m != 64 || w->k != 16 || w->n % 16)
		return wrefuse(
		    g,
		    "s%u (line %u): shape %s; the mma_sync form takes m64nNk16 with N a "
		    "multiple of 16",
		    w->stmt, s->line, w->shape);
	if (w->imm_scale_a != 1 || w->imm_scale_b != 1)
		return wrefuse(
		    g,
		    "s%u (line %u): imm-scale-a %d, imm-scale-b %d; the mma_sync form "
		    "takes 1 and 1",
		    w->stmt, s->line, w->imm_scale_a, w->imm_scale_b);
	if (!w->a_regs && w->tnsp_a != 0)
		return wrefuse(g, "s%u (line %u): A is MN-major (trans-a 1): not written",
		               w->stmt, s->line);
	const WgDesc *ds[2] = {w->a_regs ? NULL : &w->a, &w->b};
	for (int k = 0; k < 2; k++) {
		const WgDesc *d = ds[k];
		if (!d)
			continue;
		const char *r = k ? "B" : "A";
		if (!d->known)
			return wrefuse(g,
			               "s%u (line %u): %s's descriptor is not known: %s",
			               w->stmt, s->line, r, d->why);
		if (d->base_offset)
			return wrefuse(g,
			               "s%u (line %u): %s's descriptor has base offset "
			               "%u: not written",
			               w->stmt, s->line, r, d->base_offset);
		if (k && w->tnsp_b == 1 && !d->swizzle)
			return wrefuse(
			    g,
			    "s%u (line %u): B is MN-major without swizzle: its layout is "
			    "not decoded",
			    w->stmt, s->line);
	}
	if (w->a_regs && w->a_nregs != 4)
		return wrefuse(
		    g, "s%u (line %u): A has %u registers, the m16n8k16 A fragment 4",
		    w->stmt, s->line, w->a_nregs);
	return 0;
}

/* "add.u32 x, start, lane_off [+ static]; swizzle x" into body; the
 * address register is %x. */
static void address(StrBuf *body, const char *start, const char *lane, uint32_t stat,
                    unsigned swz)
{
	sb_addf(body, "\tadd.u32 \t%%x, %s, %s;\n", start, lane);
	if (stat)
		sb_addf(body, "\tadd.u32 \t%%x, %%x, %u;\n", stat);
	if (swz_mask(swz)) {
		sb_adds(body, "\tshr.u32 \t%y, %x, 3;\n");
		sb_addf(body, "\tand.b32 \t%%y, %%y, %u;\n", swz_mask(swz));
		sb_adds(body, "\txor.b32 \t%x, %x, %y;\n");
	}
}

/* The lane's offset into a descriptor's tile, into register `dst`:
 * K-major rows (A, or B with trans-b 0) or MN-major (B with trans-b 1),
 * from the lane pieces %l7 = lane & 7, %l3 = (lane >> 3) & 1,
 * %l4 = lane >> 4 and, for A, the warp %wq. */
static void lane_offset(StrBuf *body, const char *dst, const WgDesc *d, bool is_a,
                        bool mn)
{
	uint32_t wd = swz_width(d->swizzle);
	if (is_a) {
		/* rows 16w + l7 + 8 l3, k bytes 16 l4 */
		sb_adds(body, "\tshl.b32 \t%u, %wq, 1;\n\tadd.u32 \t%u, %u, %l3;\n");
		sb_addf(body, "\tmul.lo.u32 \t%s, %%u, %u;\n", dst, d->sbo);
		sb_addf(body, "\tmad.lo.u32 \t%s, %%l7, %u, %s;\n", dst, wd ? wd : 16,
		        dst);
		sb_addf(body, "\tmad.lo.u32 \t%s, %%l4, %u, %s;\n", dst, wd ? 16 : d->lbo,
		        dst);
	} else if (!mn) {
		/* n rows l7 + 8 l4 (block 2jj + l4), k bytes 16 l3 */
		sb_addf(body, "\tmul.lo.u32 \t%s, %%l4, %u;\n", dst, d->sbo);
		sb_addf(body, "\tmad.lo.u32 \t%s, %%l7, %u, %s;\n", dst, wd ? wd : 16,
		        dst);
		sb_addf(body, "\tmad.lo.u32 \t%s, %%l3, %u, %s;\n", dst, wd ? 16 : d->lbo,
		        dst);
	} else {
		/* k rows l7 + 8 l3, n block l4 (8 elements of 2 bytes) */
		sb_addf(body, "\tmul.lo.u32 \t%s, %%l3, %u;\n", dst, d->sbo);
		sb_addf(body, "\tmad.lo.u32 \t%s, %%l7, %u, %s;\n", dst, wd, dst);
		sb_addf(body, "\tmad.lo.u32 \t%s, %%l4, 16, %s;\n", dst, dst);
	}
}

/* The start address of descriptor formal `desc` into `dst`. */
static void start_of(StrBuf *body, const char *dst, const char *desc)
{
	sb_addf(body, "\tcvt.u32.u64 \t%s, %s;\n", dst, desc);
	sb_addf(body, "\tand.b32 \t%s, %s, 16383;\n", dst, dst);
	sb_addf(body, "\tshl.b32 \t%s, %s, 4;\n", dst, dst);
}

static int body_sync(WGen *g, StrBuf *body, uint32_t *nmma)
{
	const Module *m = df_module(g->df);
	const Func *f = df_func(g->df);
	char nm[40];
	for (size_t i = 0; i < g->wf->v.n; i++) {
		const WgmmaFact *w = &g->wf->v.v[i];
		const Stmt *s = func_stmt(m, f, w->stmt);
		if (w->sparse || (s->flags & STMT_GUARD))
			return wrefuse(g, "s%u (line %u) is a %s wgmma: not written",
			               w->stmt, s->line,
			               w->sparse ? "sparse" : "guarded");
		if (check_sync(g, w, s) < 0)
			return -1;
	}
	sb_adds(body,
	        "\t// the wgmma in flight complete before their accumulators are read\n"
	        "\twgmma.commit_group.sync.aligned;\n"
	        "\twgmma.wait_group.sync.aligned 0;\n");
	sb_adds(body,
	        "\t// lane and warp of the warpgroup\n"
	        "\tmov.u32 \t%q0, %tid.x;\n\tmov.u32 \t%q1, %tid.y;\n\tmov.u32 \t%q2, "
	        "%tid.z;\n"
	        "\tmov.u32 \t%q3, %ntid.x;\n\tmov.u32 \t%q4, %ntid.y;\n"
	        "\tmad.lo.u32 \t%q1, %q2, %q4, %q1;\n\tmad.lo.u32 \t%q0, %q1, %q3, %q0;\n"
	        "\tand.b32 \t%lane, %q0, 31;\n\tshr.u32 \t%wq, %q0, 5;\n"
	        "\tand.b32 \t%wq, %wq, 3;\n\tand.b32 \t%l7, %lane, 7;\n"
	        "\tshr.u32 \t%l3, %lane, 3;\n\tand.b32 \t%l3, %l3, 1;\n"
	        "\tshr.u32 \t%l4, %lane, 4;\n"
	        "\tmov.b32 \t%nz, 0x80000000;\n");
	*nmma = 0;
	for (size_t i = 0; i < g->wf->v.n; i++) {
		const WgmmaFact *w = &g->wf->v.v[i];
		const Stmt *s = func_stmt(m, f, w->stmt);
		uint32_t d[256], a[8];
		uint32_t nd = vec_regs(g->df, s, 0, d, 256);
		uint32_t na = w->a_regs ? vec_regs(g->df, s, 1, a, 8) : 0;
		if (nd == UINT32_MAX || nd != w->n / 2 || na == UINT32_MAX)
			return wrefuse(g, "s%u (line %u): D is not %u whole registers",
			               w->stmt, s->line, w->n / 2);
		sb_addf(body,
		        "\t// s%u: %s as %u x m16n8k16 per warp (rows 16w..16w+15)\n",
		        w->stmt, w->shape, w->n / 8);
		char an[4][40];
		if (w->a_regs)
			for (uint32_t k = 0; k < 4; k++)
				name_of(g, a[k], "a", true, an[k], sizeof an[k]);
		else {
			name_of(g, w->a.reg, "a_desc", false, nm, sizeof nm);
			start_of(body, "%sa", nm);
			lane_offset(body, "%oa", &w->a, true, false);
			address(body, "%sa", "%oa", 0, w->a.swizzle);
			sb_adds(body, "\tldmatrix.sync.aligned.m8n8.x4.shared.b16 "
			              "\t{%fa0, %fa1, %fa2, %fa3}, "
			              "[%x];\n");
			for (uint32_t k = 0; k < 4; k++)
				snprintf(an[k], sizeof an[k], "%%fa%u", k);
		}
		bool mn = w->tnsp_b == 1;
		name_of(g, w->b.reg, "b_desc", false, nm, sizeof nm);
		start_of(body, "%sb", nm);
		lane_offset(body, "%ob", &w->b, false, mn);
		char sd[40] = "";
		if (w->scale_d_pred)
			name_of(g, w->scale_d_reg, "scale_d", false, sd, sizeof sd);
		uint32_t wd = swz_width(w->b.swizzle);
		for (uint32_t jj = 0; jj < w->n / 16; jj++) {
			uint32_t stat;
			if (!mn)
				stat = 2 * jj * w->b.sbo;
			else {
				uint32_t per = wd / 2;
				stat = (16 * jj / per) * w->b.lbo + (16 * jj % per) * 2;
			}
			address(body, "%sb", "%ob", stat, w->b.swizzle);
			sb_addf(body,
			        "\tldmatrix.sync.aligned.m8n8.x4%s.shared.b16 \t{%%fb0, "
			        "%%fb1, %%fb2, "
			        "%%fb3}, [%%x];\n",
			        mn ? ".trans" : "");
			for (uint32_t h = 0; h < 2; h++) {
				uint32_t j = 2 * jj + h;
				char dn[4][40], cn[4][40];
				for (uint32_t k = 0; k < 4; k++) {
					name_of(g, d[4 * j + k], "d", true, dn[k],
					        sizeof dn[k]);
					if (w->scale_d_pred) {
						/* selp takes no negated predicate: !p
						 * swaps the two values */
						sb_addf(
						    body,
						    "\tselp.b32 \t%%fc%u, %s, %s, %s;\n",
						    k, w->scale_d_not ? "%nz" : dn[k],
						    w->scale_d_not ? dn[k] : "%nz", sd);
						snprintf(cn[k], sizeof cn[k], "%%fc%u",
						         k);
					} else if (w->scale_d_imm)
						memcpy(cn[k], dn[k], sizeof cn[k]);
					else
						snprintf(cn[k], sizeof cn[k], "%%nz");
				}
				sb_addf(body,
				        "\t%s \t{%s, %s, %s, %s}, {%s, %s, %s, %s}, "
				        "{%%fb%u, %%fb%u}, "
				        "{%s, %s, %s, %s};\n",
				        MMA16, dn[0], dn[1], dn[2], dn[3], an[0], an[1],
				        an[2], an[3], 2 * h, 2 * h + 1, cn[0], cn[1],
				        cn[2], cn[3]);
				(*nmma)++;
			}
		}
	}
	sb_adds(body, "\t// a later wgmma that reads these registers sees the writes\n"
	              "\twgmma.fence.sync.aligned;\n");
	return 0;
}

/* ---- the entry point ------------------------------------------------------------ */

bool native_is_wgmma(const Module *m, const char *entry, uint32_t phase)
{
	const Func *f = mod_func_find(m, str_c(entry));
	if (!f || (f->flags & FNF_DECL))
		return false;
	uint32_t first, last;
	if (ana_phase_range(m, f, 0, phase, false, &first, &last, NULL) < 0)
		return false;
	for (uint32_t i = first; i <= last; i++)
		if (stmt_opcode_is(m, func_stmt(m, f, i), "wgmma.mma_async"))
			return true;
	return false;
}

static const char *const list_order[] = {"a", "din", "d", "dout"};

int splice_native_wgmma(const NativeRequest *req, StrBuf *recipe_json,
                        StrBuf *template_text, StrBuf *summary, Err *e)
{
	const Module *m = req->module;
	const Func *f = mod_func_find(m, str_c(req->entry));
	if (!f || (f->flags & FNF_DECL))
		return err_set(e, "no function '%s' with a body in module '%s'",
		               req->entry, m->name ? m->name : "?");
	if (req->form == NATIVE_F16)
		return err_set(
		    e,
		    "phase %u holds wgmma.mma_async: the f16 form is the form of an e4m3 "
		    "mma.sync phase (--native mma writes the vendor's wgmma, --native "
		    "mma_sync its exact mma.sync form)",
		    req->phase);
	uint32_t first, last;
	size_t np = 0;
	if (ana_phase_range(m, f, 0, req->phase, false, &first, &last, &np) < 0)
		return ana_phase_missing(NULL, req->phase,
		                         req->layer ? req->layer : req->entry, np, e);
	Dataflow *df = df_build(m, f, e);
	if (!df)
		return -1;
	int rc = -1;
	CutInterface cut;
	memset(&cut, 0, sizeof cut);
	bool have_cut = false;
	WgmmaFacts wf;
	memset(&wf, 0, sizeof wf);
	WGen g;
	memset(&g, 0, sizeof g);
	cJSON *root = NULL;
	StrBuf body = STRBUF_INIT, who = STRBUF_INIT, txt = STRBUF_INIT;
	const char *form_name = native_form_name(req->form);
	bool sync = req->form == NATIVE_MMA_SYNC;
	if (df_cut(df, first, last, &cut, e) < 0)
		goto out;
	have_cut = true;
	if (cut.rw_dependency) {
		err_set(e,
		        "phase %u (s%u..s%u): READ/WRITE DEPENDENCIES: cut invalid:\n%s",
		        req->phase, first, last, cut.rw_reason.p ? cut.rw_reason.p : "");
		goto out;
	}
	if (ana_wgmma(df, first, last, &wf, e) < 0)
		goto out;
	if (ana_mma_count(m, f, first, last) != wf.v.n) {
		err_set(
		    e,
		    "phase %u (s%u..s%u) mixes wgmma.mma_async with other mma statements",
		    req->phase, first, last);
		goto out;
	}
	g.df = df;
	g.wf = &wf;
	g.cut = &cut;
	uint32_t nmma = 0;
	if ((sync ? body_sync(&g, &body, &nmma) : body_wgmma(&g, &body)) < 0) {
		err_set(e, "phase %u (s%u..s%u), %s form: %s", req->phase, first, last,
		        form_name, g.err.p);
		goto out;
	}
	/* every live-in and live-out register of the cut has its formal */
	for (size_t i = 0; i < cut.live_out.n; i++) {
		bool found = false;
		for (size_t k = 0; k < g.formals.n && !found; k++)
			for (size_t j = 0; j < g.formals.v[k].regs.n && !found; j++)
				found =
				    g.formals.v[k].regs.v[j] == cut.live_out.v[i].reg &&
				    g.formals.v[k].dir != FM_IN;
		if (!found) {
			Str n = df_reg(df, cut.live_out.v[i].reg)->name;
			err_set(e,
			        "phase %u (s%u..s%u): live-out register '%.*s' is not a "
			        "D register of "
			        "a wgmma",
			        req->phase, first, last, (int)n.n, n.p);
			goto out;
		}
	}

	/* ---- the template */
	if (req->layer)
		sb_addf(&who, "d4r-splice recipe new %s --phase %u --native %s",
		        req->layer, req->phase, form_name);
	else {
		const char *b = m->name ? strrchr(m->name, '/') : NULL;
		sb_addf(&who, "d4r-splice recipe new --module %s --phase %u --native %s",
		        b         ? b + 1
		        : m->name ? m->name
		                  : "MODULE",
		        req->phase, form_name);
	}
	StrBuf *t = template_text;
	const WgmmaFact *w0 = &wf.v.v[0];
	sb_addf(t, "// ptx/%s - phase %u of %s (s%u..s%u), %s\n", req->template_name,
	        req->phase, req->entry, first, last,
	        sync ? "in exact mma.sync form" : "the vendor's instruction");
	sb_addf(t,
	        "//\n// Written by `%s` from the phase's facts;\n"
	        "// write it again rather than edit it.\n",
	        who.p);
	sb_addf(t, "// %zu x wgmma.mma_async.%s.%s.%s.%s", wf.v.n, w0->shape, w0->dtype,
	        w0->atype, w0->btype);
	if (w0->fence >= 0 || w0->commit >= 0)
		sb_addf(t,
		        "; wgmma.fence at s%lld and wgmma.commit_group at s%lld stay in "
		        "the module",
		        (long long)w0->fence, (long long)w0->commit);
	sb_adds(t, ".\n");
	if (sync)
		sb_addf(t,
		        "// Each warp w of the warpgroup: rows 16w..16w+15 as %u x %s\n"
		        "// (one per 8 columns, the wgmma's k order); A and B by "
		        "ldmatrix through the\n"
		        "// descriptors' layout and swizzle; the accumulators are the "
		        "wgmma's registers.\n",
		        nmma, MMA16);
	else
		sb_adds(t, "// The vendor's instruction, operand for operand, the same "
		           "descriptors: "
		           "bit-exact\n// by construction.\n");
	native_formals_header(g.formals.v, g.formals.n, list_order, ARRAY_SIZE(list_order), t);
	/* both forms read the tiles from shared memory: the wgmma through its
	 * descriptors, the mma.sync form by ldmatrix */
	sb_adds(t, "//! reads shared\n//! writes none\n//! barriers 0\n");
	if (sync) {
		sb_adds(t, "\t.reg .b32 %q<5>;\n\t.reg .b32 %lane;\n\t.reg .b32 %wq;\n"
		           "\t.reg .b32 %l7;\n\t.reg .b32 %l3;\n\t.reg .b32 %l4;\n\t.reg "
		           ".b32 %u;\n"
		           "\t.reg .b32 %nz;\n\t.reg .b32 %sa;\n\t.reg .b32 %sb;\n\t.reg "
		           ".b32 %oa;\n"
		           "\t.reg .b32 %ob;\n\t.reg .b32 %x;\n\t.reg .b32 %y;\n\t.reg "
		           ".b32 %fa<4>;\n"
		           "\t.reg .b32 %fb<4>;\n\t.reg .b32 %fc<4>;\n");
	}
	sb_addn(t, body.p ? body.p : "", body.n);

	/* ---- the recipe */
	root = native_recipe_begin(req, df, g.formals.v, g.formals.n, list_order,
	                           ARRAY_SIZE(list_order));
	cJSON *gd = cJSON_AddObjectToObject(root, "guards");
	splice_guards_json(m, f, first, last, gd);
	sb_addf(&txt, "written by `%s` from %s: %zu wgmma.mma_async %s; %s", who.p,
	        req->module_rel ? req->module_rel : "the module", wf.v.n, w0->shape,
	        sync ? "each as mma.sync m16n8k16 per warp (exact f16 form)"
	             : "the vendor's instruction");
	cJSON_AddStringToObject(root, "note", txt.p);
	char *js = cJSON_Print(root);
	sb_adds(recipe_json, js);
	sb_addc(recipe_json, '\n');
	free(js);
	if (summary) {
		const Stmt *s0 = func_stmt(m, f, first), *s1 = func_stmt(m, f, last);
		sb_addf(
		    summary,
		    "cut:       phase %u, s%u..s%u (lines %u..%u) of %s, %zu "
		    "wgmma.mma_async %s\n"
		    "form:      %s (%s)\n",
		    req->phase, first, last, s0->line, s1->line, req->entry, wf.v.n,
		    w0->shape, form_name,
		    sync ? "mma.sync m16n8k16 per warp, ldmatrix through the descriptors"
		         : "the vendor's wgmma instruction");
	}
	rc = 0;
out:
	if (root)
		cJSON_Delete(root);
	for (size_t i = 0; i < g.formals.n; i++)
		VEC_FREE(g.formals.v[i].regs);
	VEC_FREE(g.formals);
	sb_release(&g.err);
	sb_release(&body);
	sb_release(&who);
	sb_release(&txt);
	wgmma_facts_release(&wf);
	if (have_cut)
		cut_release(&cut);
	df_free(df);
	return rc;
}
