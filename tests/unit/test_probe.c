/*
 * test_probe.c - the probe layer (splice/probe.h): the dump's indexing and
 * the distances between values (expected values worked out by hand from
 * the layout and the formats' bit patterns), plans from the cut interface,
 * instrumented text checked on its own terms (every input line still
 * there, in order; each store's offset the hand-computed one), positions
 * and registers that are refused, reads and per-warp records ptxas
 * accepts, and a plan carried over to a spliced module.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ana/ana.h"
#include "ptx/parse.h"
#include "splice/probe.h"
#include "splice/ptxas.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a hand-made plan ------------------------------------------------------------ */

static ProbeValue val(const char *name, ProbeFmt f)
{
	ProbeValue v = {.kind = PV_REG, .fmt = (uint8_t)f, .def = UINT32_MAX};
	v.name = strdup(name);
	return v;
}

/* record 0: an f16x2 and a b64 per lane; record 1: one u64 per warp */
static void hand_plan(ProbePlan *p)
{
	memset(p, 0, sizeof *p);
	ProbeRecord r0 = {.at = 10, .what = PR_PHASE_END, .phase = 1};
	VEC_PUSH(r0.vals, val("%r1", PF_F16X2));
	VEC_PUSH(r0.vals, val("%rd1", PF_HEX64));
	ProbeRecord r1 = {.at = 20, .per_warp = true, .what = PR_OTHER};
	VEC_PUSH(r1.vals, val("%rd2", PF_U64));
	VEC_PUSH(p->recs, r0);
	VEC_PUSH(p->recs, r1);
	Err e = ERR_INIT;
	assert_int_equal(probe_plan_layout(p, &e), 0);
	err_release(&e);
}

static void test_probe__dump_indexing(void **state)
{
	(void)state;
	ProbePlan p;
	hand_plan(&p);
	/* record 0: %r1 at 0 (32 lanes x 4 bytes), %rd1 at 128 (32 x 8): 384
	 * bytes; record 1 at 384: one 8-byte value; a warp's area 392 bytes */
	assert_int_equal(p.recs.v[0].off, 0);
	assert_int_equal(p.recs.v[0].vals.v[1].off, 128);
	assert_int_equal(p.recs.v[0].bytes, 384);
	assert_int_equal(p.recs.v[1].off, 384);
	assert_int_equal(p.recs.v[1].bytes, 8);
	assert_int_equal(p.warp_bytes, 392);
	assert_int_equal(p.recs.v[0].nvals, 64);
	assert_int_equal(p.recs.v[1].nvals, 1);
	/* warp 3, lane 5, %rd1: 3 * 392 + 128 + 5 * 8 */
	assert_int_equal(probe_dump_offset(&p, 0, 1, 3, 5), 1344);
	/* warp 0, lane 31, %r1: 31 * 4 */
	assert_int_equal(probe_dump_offset(&p, 0, 0, 0, 31), 124);
	/* the per-warp record ignores the lane: 2 * 392 + 384 */
	assert_int_equal(probe_dump_offset(&p, 1, 0, 2, 9), 1168);
	/* a grid of 2x3x1 blocks of 40 threads: 2 warps each, 12 warps */
	unsigned grid[3] = {2, 3, 1}, block[3] = {40, 1, 1};
	assert_int_equal(probe_block_warps(block), 2);
	assert_int_equal(probe_grid_warps(grid, block), 12);
	assert_int_equal(probe_dump_bytes(&p, grid, block), 12 * 392);
	unsigned b[3], w;
	probe_warp_where(7, grid, block, b, &w); /* block 3 = (1,1,0), its warp 1 */
	assert_int_equal(b[0], 1);
	assert_int_equal(b[1], 1);
	assert_int_equal(b[2], 0);
	assert_int_equal(w, 1);
	/* enc4's launch: 11x7x1 blocks of 32x1x4; warp 154 is block 38 = (5,3,0), warp 2
	 */
	unsigned g4[3] = {11, 7, 1}, b4[3] = {32, 1, 4};
	assert_int_equal(probe_grid_warps(g4, b4), 308);
	probe_warp_where(154, g4, b4, b, &w);
	assert_int_equal(b[0], 5);
	assert_int_equal(b[1], 3);
	assert_int_equal(b[2], 0);
	assert_int_equal(w, 2);
	unsigned g3[3] = {2, 2, 3},
	         b3[3] = {8, 8, 1}; /* a z coordinate: block 9 = (1,0,2) */
	probe_warp_where(9 * 2 + 1, g3, b3, b, &w);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[1], 0);
	assert_int_equal(b[2], 2);
	assert_int_equal(w, 1);
	probe_plan_release(&p);
}

static void test_probe__distances(void **state)
{
	(void)state;
	int half = -1;
	/* f16: 1.0 and its neighbours */
	assert_int_equal(probe_distance(PF_F16, 0x3c00, 0x3c01, NULL), 1);
	assert_int_equal(probe_distance(PF_F16, 0x3c00, 0x3bff, NULL), 1);
	assert_int_equal(probe_distance(PF_F16, 0x3c00, 0x3c00, NULL), 0);
	/* +0 and -0 are neighbours; +min subnormal to -min subnormal: 3 */
	assert_int_equal(probe_distance(PF_F16, 0x0000, 0x8000, NULL), 1);
	assert_int_equal(probe_distance(PF_F16, 0x0001, 0x8001, NULL), 3);
	/* -1.0 (0xbc00) to +1.0: 0x3c00 + 1 + 0x3c00 */
	assert_int_equal(probe_distance(PF_F16, 0xbc00, 0x3c00, NULL), 0x7801);
	/* infinity and the largest finite; NaN */
	assert_int_equal(probe_distance(PF_F16, 0x7c00, 0x7bff, NULL), 1);
	assert_true(probe_distance(PF_F16, 0x7e00, 0x3c00, NULL) == PROBE_DIST_NAN);
	assert_int_equal(probe_distance(PF_F16, 0x7e00, 0x7e00, NULL), 0);
	/* f16x2: the larger half, and which */
	assert_int_equal(probe_distance(PF_F16X2, 0x3c003c00, 0x3c053c01, &half), 5);
	assert_int_equal(half, 1);
	assert_int_equal(probe_distance(PF_F16X2, 0x3c003c00, 0x3c003c01, &half), 1);
	assert_int_equal(half, 0);
	/* f32: 1.0f and three steps up; -1.0f to 1.0f */
	assert_int_equal(probe_distance(PF_F32, 0x3f800000, 0x3f800003, NULL), 3);
	assert_int_equal(probe_distance(PF_F32, 0xbf800000, 0x3f800000, NULL),
	                 2130706433);
	assert_true(probe_distance(PF_F32, 0x7fc00000, 0, NULL) == PROBE_DIST_NAN);
	assert_int_equal(probe_distance(PF_BF16, 0x3f80, 0x3f81, NULL), 1);
	assert_int_equal(probe_distance(PF_BF16X2, 0x3f803f80, 0x3f823f80, &half), 2);
	assert_int_equal(half, 1);
	assert_int_equal(
	    probe_distance(PF_F64, 0x3ff0000000000000ull, 0x3ff0000000000001ull, NULL),
	    1);
	/* integers: |a - b| as the type reads */
	assert_int_equal(probe_distance(PF_S32, 0xffffffffu, 1, NULL), 2);
	assert_int_equal(probe_distance(PF_U32, 0xffffffffu, 1, NULL), 0xfffffffeu);
	assert_int_equal(probe_distance(PF_HEX32, 0x10, 0x30, NULL), 0x20);
	assert_int_equal(probe_distance(PF_S16, 0x8000, 0x7fff, NULL), 0xffff);
	assert_int_equal(probe_distance(PF_PRED, 0, 1, NULL), 1);
	assert_int_equal(probe_distance(PF_PRED, 1, 1, NULL), 0);
}

static void text_is(ProbeFmt f, uint64_t bits, const char *want)
{
	StrBuf sb = STRBUF_INIT;
	probe_value_text(f, bits, &sb);
	assert_string_equal(sb.p, want);
	sb_release(&sb);
}

static void test_probe__value_text(void **state)
{
	(void)state;
	text_is(PF_F16X2, 0x3c003800, "0x3c003800 (0.5, 1)"); /* low half first */
	text_is(PF_F16X2, 0x80007c00, "0x80007c00 (inf, -0)");
	text_is(PF_F16, 0x3555, "0.333251953 (0x3555)");
	text_is(PF_F32, 0x3fc00000, "1.5 (0x3fc00000)");
	text_is(PF_BF16X2, 0x3f80c000, "0x3f80c000 (-2, 1)");
	text_is(PF_F64, 0x3ff8000000000000ull, "1.5 (0x3ff8000000000000)");
	text_is(PF_S32, 0xffffffff, "-1");
	text_is(PF_U32, 42, "42");
	text_is(PF_HEX32, 42, "0x0000002a");
	text_is(PF_HEX16, 0xbeef, "0xbeef");
	text_is(PF_PRED, 1, "true");
	text_is(PF_PRED, 0, "false");
	unsigned char slot[8] = {0x01, 0x3c, 0x00, 0x38, 0xaa, 0xbb, 0xcc, 0xdd};
	assert_int_equal(probe_value_bits(PF_F16X2, slot), 0x38003c01);
	assert_int_equal(probe_value_bits(PF_HEX16, slot), 0x3c01);
	assert_true(probe_value_bits(PF_HEX64, slot) == 0xddccbbaa38003c01ull);
}

static void test_probe__compare(void **state)
{
	(void)state;
	ProbePlan p;
	hand_plan(&p);
	unsigned grid[3] = {2, 3, 1}, block[3] = {40, 1, 1};
	size_t n = (size_t)probe_dump_bytes(&p, grid, block);
	unsigned char *a = calloc(1, n), *b = calloc(1, n);
	ProbeRecordDiff d[2];
	assert_int_equal(probe_compare(&p, grid, block, a, b, d), -1);
	assert_int_equal(d[0].values, 12 * 64);
	assert_int_equal(d[1].values, 12);
	/* %r1 of warp 7, lane 17 one ulp up in its high half; the u64 of warp 4 off by 5
	 */
	a[7 * 392 + 17 * 4 + 2] = 0x00, a[7 * 392 + 17 * 4 + 3] = 0x3c;
	b[7 * 392 + 17 * 4 + 2] = 0x01, b[7 * 392 + 17 * 4 + 3] = 0x3c;
	b[7 * 392 + 20 * 4 + 2] = 0x01; /* a second, later difference in the same warp */
	b[4 * 392 + 384] = 5;
	assert_int_equal(probe_compare(&p, grid, block, a, b, d), 0);
	assert_int_equal(d[0].differ, 2);
	assert_int_equal(d[0].warp, 7);
	assert_int_equal(d[0].lane, 17);
	assert_int_equal(d[0].val, 0);
	assert_int_equal(d[0].a, 0x3c000000);
	assert_int_equal(d[0].b, 0x3c010000);
	assert_int_equal(d[0].dist, 1);
	/* 0x0000 -> 0x0001 is 1 ulp, 0x3c00 -> 0x3c01 too */
	assert_int_equal(d[0].max_dist, 1);
	assert_int_equal(d[1].differ, 1);
	assert_int_equal(d[1].warp, 4);
	assert_int_equal(d[1].dist, 5);
	free(a);
	free(b);
	probe_plan_release(&p);
}

/* ---- plans and instrumenting on a small kernel ------------------------------------ */

/* Three phases: two chained f16 mma, one f16 mma, one f32 mma; a select and
 * a store after them. */
static const char K[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry k(\n"
    "\t.param .u64 out,\n"
    "\t.param .u32 c\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<4>;\n"
    "\t.reg .b16 \t%rs<4>;\n"
    "\t.reg .b32 \t%r<40>;\n"
    "\t.reg .f32 \t%f<8>;\n"
    "\t.reg .b64 \t%rd<8>;\n"
    "\n"
    "\tld.param.u64 \t%rd1, [out];\n"      /* s0 */
    "\tcvta.to.global.u64 \t%rd2, %rd1;\n" /* s1 */
    "\tld.param.u32 \t%r1, [c];\n"         /* s2 */
    "\tmov.u32 \t%r2, %tid.x;\n"           /* s3 */
    "\tmul.wide.u32 \t%rd3, %r2, 4;\n"     /* s4 */
    "\tadd.s64 \t%rd4, %rd2, %rd3;\n"      /* s5 */
    "\tld.global.u32 \t%r3, [%rd4];\n"     /* s6 */
    "\txor.b32 \t%r4, %r3, %r1;\n"         /* s7 */
    "\tmov.b32 \t%r7, 0x3c003c00;\n"       /* s8 */
    "\tmov.b32 \t%r9, 0;\n"                /* s9 */
    "\tmma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r11, %r12}, {%r3, %r4, %r3, "
    "%r4}, "
    "{%r7, %r7}, {%r9, %r9};\n" /* s10 */
    "\tmma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r13, %r14}, {%r3, %r4, %r3, "
    "%r4}, "
    "{%r7, %r7}, {%r11, %r12};\t// phase 1 ends here\n" /* s11 */
    "\tadd.rn.f16x2 \t%r15, %r13, %r14;\n"              /* s12 */
    "\tmov.b32 \t{%rs1, %rs2}, %r15;\n"                 /* s13 */
    "\tsetp.ne.u32 \t%p1, %r15, 0;\n"                   /* s14 */
    "\tmma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r16, %r17}, {%r3, %r4, %r3, "
    "%r4}, "
    "{%r7, %r15}, {%r13, %r14};\n"          /* s15 */
    "\tselp.b32 \t%r18, %r16, %r17, %p1;\n" /* s16 */
    "\tcvt.f32.f16 \t%f1, %rs1;\n"          /* s17 */
    "\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f3, %f4, %f5, %f6}, "
    "{%r3, %r4, %r3, %r18}, {%r7, %r7}, {%f1, %f1, %f1, %f1};\n" /* s18 */
    "\tadd.f32 \t%f7, %f3, %f4;\n"                               /* s19 */
    "\tadd.f32 \t%f7, %f7, %f5;\n"                               /* s20 */
    "\tadd.f32 \t%f7, %f7, %f6;\n"                               /* s21 */
    "\tmov.b32 \t%r19, %f7; st.global.u32 \t[%rd4], %r19;\n"     /* s22, s23 */
    "\t@%p1 bra \t$L__done;\n"                                   /* s24 */
    "\tst.global.u32 \t[%rd4+4], %r18;\n"                        /* s25 */
    "$L__done:\n"
    "\tret;\n" /* s26 */
    "}\n";

typedef struct {
	Module *m;
	const Func *f;
	Dataflow *df;
	PhaseList pl;
	Err e;
} Kx;

static void kx_open(Kx *x, const char *text)
{
	memset(x, 0, sizeof *x);
	x->e = (Err)ERR_INIT;
	x->m = ptx_parse("k.ptx", text, strlen(text), &x->e);
	if (!x->m)
		fail_msg("%s", err_msg(&x->e));
	x->f = &x->m->funcs.v[0];
	x->df = df_build(x->m, x->f, &x->e);
	assert_non_null(x->df);
	ana_phase_find(x->m, x->f, 0, &x->pl);
}

static void kx_close(Kx *x)
{
	phases_release(&x->pl);
	df_free(x->df);
	mod_free(x->m);
	err_release(&x->e);
}

static const ProbeValue *find_val(const ProbeRecord *r, const char *name)
{
	for (size_t k = 0; k < r->vals.n; k++)
		if (!strcmp(r->vals.v[k].name, name))
			return &r->vals.v[k];
	return NULL;
}

static void test_probe__plan_from_phases(void **state)
{
	(void)state;
	Kx x;
	kx_open(&x, K);
	assert_int_equal(x.pl.n, 3);
	ProbePlan p = {0};
	assert_int_equal(probe_plan_phases(x.df, &x.pl, NULL, PROBE_AT_PHASE_END,
	                                   PROBE_REGS_LIVE_OUT, &p, &x.e),
	                 0);
	probe_plan_sort(&p);
	assert_int_equal(p.recs.n, 3);
	/* phase 1 (s10-s11): %r11/%r12 die inside it; %r13, %r14 are read after */
	const ProbeRecord *r = &p.recs.v[0];
	assert_int_equal(r->at, 11);
	assert_int_equal(r->phase, 1);
	assert_int_equal(r->vals.n, 2);
	assert_string_equal(r->vals.v[0].name, "%r13");
	assert_string_equal(r->vals.v[1].name, "%r14");
	assert_int_equal(r->vals.v[0].fmt, PF_F16X2); /* an f16 mma's D */
	/* phase 2 (s15): %r16, %r17 */
	r = &p.recs.v[1];
	assert_int_equal(r->at, 15);
	assert_int_equal(r->vals.n, 2);
	assert_string_equal(r->vals.v[1].name, "%r17");
	/* phase 3 (s18): the f32 D, declared .f32 */
	r = &p.recs.v[2];
	assert_int_equal(r->at, 18);
	assert_int_equal(r->vals.n, 4);
	assert_int_equal(r->vals.v[3].fmt, PF_F32);
	probe_plan_release(&p);

	/* phase 1 and its epilogue, every register defined: the formats */
	NumList one = {0};
	VEC_PUSH(one, 1);
	assert_int_equal(probe_plan_phases(x.df, &x.pl, &one, PROBE_AT_EPILOGUE_END,
	                                   PROBE_REGS_ALL, &p, &x.e),
	                 0);
	numlist_release(&one);
	assert_int_equal(p.recs.n, 1);
	r = &p.recs.v[0];
	assert_int_equal(r->at, 14);
	assert_int_equal(r->what, PR_EPILOGUE_END);
	assert_int_equal(r->vals.n, 8);
	assert_int_equal(find_val(r, "%r11")->fmt, PF_F16X2);
	assert_int_equal(find_val(r, "%r15")->fmt, PF_F16X2); /* add.rn.f16x2 */
	assert_int_equal(find_val(r, "%rs1")->fmt,
	                 PF_HEX16); /* mov.b32 {..}: 16 bits, untyped */
	assert_int_equal(find_val(r, "%p1")->fmt, PF_PRED);
	assert_int_equal(find_val(r, "%p1")->def, 14);
	assert_int_equal(probe_plan_layout(&p, &x.e), 0);
	/* 8 values x 128 bytes */
	assert_int_equal(p.warp_bytes, 1024);
	probe_plan_release(&p);
	kx_close(&x);
}

/* Is every line of `orig` a line of `out`, in order?  (An independent check
 * of "the probes are insertions": whatever the inserter does, the input's
 * lines must all come out, unchanged.)  *extra gets the lines added. */
static bool lines_kept(const char *orig, const char *out, size_t *extra)
{
	const char *a = orig, *b = out;
	size_t added = 0;
	while (*a) {
		const char *ae = strchr(a, '\n');
		size_t an = ae ? (size_t)(ae - a) : strlen(a);
		for (;;) {
			if (!*b)
				return false;
			const char *be = strchr(b, '\n');
			size_t bn = be ? (size_t)(be - b) : strlen(b);
			bool same = bn == an && !memcmp(a, b, an);
			b += bn + (be != NULL);
			if (same)
				break;
			added++;
		}
		a += an + (ae != NULL);
	}
	while (*b) {
		const char *be = strchr(b, '\n');
		b += be ? (size_t)(be - b) + 1 : strlen(b);
		added++;
	}
	*extra = added;
	return true;
}

static void test_probe__instrument_inserts_lines(void **state)
{
	(void)state;
	Kx x;
	kx_open(&x, K);
	ProbePlan p = {0};
	assert_int_equal(probe_plan_phases(x.df, &x.pl, NULL, PROBE_AT_PHASE_END,
	                                   PROBE_REGS_LIVE_OUT, &p, &x.e),
	                 0);
	probe_plan_sort(&p);
	assert_int_equal(probe_plan_layout(&p, &x.e), 0);
	ProbeRequest req = {x.m, x.f, &p, NULL};
	ProbeResult res = {0};
	if (probe_instrument(&req, &res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	sb_addc(&res.text, 0);
	const char *t = res.text.p;
	size_t extra = 0;
	assert_true(lines_kept(K, t, &extra));
	assert_true(extra > 3 * 20);
	assert_string_equal(res.symbol, "__d4r_probe_dump");
	assert_string_equal(res.prefix, "%prb0_");
	/* the symbol right after .address_size */
	assert_non_null(
	    strstr(t, ".address_size 64\n// d4r-splice probe: dump __d4r_probe_dump, 3 "
	              "records, 1024 bytes per warp"));
	assert_non_null(
	    strstr(t, "\n.visible .global .align 8 .u64 __d4r_probe_dump;\n"));
	/* phase 1's record after s11's line, its comment included */
	assert_non_null(
	    strstr(t, "// phase 1 ends here\n{\t// d4r-splice probe 0: phase 1 end"));
	/* each store at the offset the layout gives: record 1 (phase 2) at 256,
	 * %r17 its second value: 256 + 128; record 2's %f6: 512 + 3 * 128 */
	assert_non_null(strstr(t, "\tst.global.b32 \t[%prb0_0_a1+0], %r13;\n"));
	assert_non_null(strstr(t, "\tst.global.b32 \t[%prb0_1_a1+384], %r17;\n"));
	assert_non_null(strstr(t, "\tst.global.b32 \t[%prb0_2_a1+896], %f6;\n"));
	assert_non_null(strstr(t, "\tmul.wide.u32 \t%prb0_1_a1, %prb0_1_t1, 1024;\n"));
	/* the instrumented text parses, and ptxas takes it where it is installed */
	Err e = ERR_INIT;
	Module *m2 = ptx_parse("out.ptx", res.text.p, res.text.n - 1, &e);
	assert_non_null(m2);
	mod_free(m2);
	StrBuf log = STRBUF_INIT;
	int pr = splice_ptxas(res.text.p, res.text.n - 1, "sm_90", "k", NULL, "probed", NULL,
	                      &log, &e);
	if (pr > 0)
		fail_msg("ptxas rejects the instrumented kernel:\n%s", log.p);
	sb_release(&log);
	err_release(&e);
	StrBuf where = STRBUF_INIT;
	/* a line of the record after phase 2 */
	const char *hit = strstr(t, "[%prb0_1_a1+384]");
	unsigned line = 1;
	for (const char *q = t; q < hit; q++)
		line += *q == '\n';
	probe_where(&res, &p, "k.ptx", line, &where);
	assert_string_equal(where.p, "probe record 1 (phase 2 end)");
	sb_reset(&where);
	probe_where(&res, &p, "k.ptx", (unsigned)(res.text.n ? line + 1000 : 0), &where);
	assert_non_null(strstr(where.p, "k.ptx line"));
	sb_release(&where);
	probe_result_release(&res);
	probe_plan_release(&p);
	kx_close(&x);
}

/* A plan of one record at `at` holding `reg` (with its definition `def`). */
static int one_record(Kx *x, uint32_t at, bool before, const char *reg, uint32_t def,
                      ProbeFmt f, ProbeResult *res)
{
	ProbePlan p = {0};
	ProbeRecord r = {.at = at, .before = before};
	ProbeValue v = val(reg, f);
	v.def = def;
	VEC_PUSH(r.vals, v);
	VEC_PUSH(p.recs, r);
	assert_int_equal(probe_plan_layout(&p, &x->e), 0);
	ProbeRequest req = {x->m, x->f, &p, NULL};
	memset(res, 0, sizeof *res);
	err_clear(&x->e);
	int rc = probe_instrument(&req, res, &x->e);
	probe_plan_release(&p);
	return rc;
}

static void expect_refused(Kx *x, uint32_t at, bool before, const char *reg,
                           const char *msg)
{
	ProbeResult res;
	assert_int_equal(one_record(x, at, before, reg, UINT32_MAX, PF_HEX32, &res), -1);
	if (!strstr(err_msg(&x->e), msg))
		fail_msg("got '%s', expected '%s'", err_msg(&x->e), msg);
	probe_result_release(&res);
}

static void test_probe__positions_refused(void **state)
{
	(void)state;
	Kx x;
	kx_open(&x, K);
	ProbeResult res;
	/* s22 shares its line with s23 */
	expect_refused(&x, 22, false, "%r19", "code follows s22 on its line (line 38)");
	expect_refused(&x, 23, true, "%r19", "s23 (line 38) shares its line with s22");
	/* after the guarded branch, before ret (a label) */
	expect_refused(&x, 24, false, "%r18", "s24 (line 39) is a branch, ret or exit");
	expect_refused(&x, 26, true, "%r18", "follows a label");
	expect_refused(&x, 26, false, "%r18", "is a branch, ret or exit");
	expect_refused(&x, 0, true, "%r1", "before the first statement");
	/* a width that is not the register's */
	assert_int_equal(one_record(&x, 21, false, "%f7", UINT32_MAX, PF_HEX64, &res),
	                 -1);
	assert_non_null(
	    strstr(err_msg(&x.e), "register '%f7' has 32 bits, its format b64 has 64"));
	probe_result_release(&res);
	expect_refused(&x, 21, false, "%nosuch",
	               "register '%nosuch' is not visible after s21");
	expect_refused(&x, 25, true, "%r18",
	               "s25 (line 40) follows a branch, ret or exit");
	/* fine: after s23 (the end of that line), and before s21 */
	assert_int_equal(one_record(&x, 23, false, "%r19", UINT32_MAX, PF_HEX32, &res),
	                 0);
	probe_result_release(&res);
	assert_int_equal(one_record(&x, 21, true, "%f7", UINT32_MAX, PF_F32, &res), 0);
	probe_result_release(&res);
	kx_close(&x);

	/* registers of { } scopes: one that has closed, one hidden by a nearer
	 * declaration of its name */
	static const char S[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
	                        ".visible .entry s(.param .u64 o)\n{\n"
	                        "\t.reg .b32 %r<4>;\n"
	                        "\tmov.u32 %r1, %tid.x;\n" /* s0 */
	                        "\t{\n\t.reg .b32 t;\n"
	                        "\tadd.u32 t, %r1, 1;\n" /* s1 */
	                        "\tmov.u32 %r2, t;\n"    /* s2 */
	                        "\t}\n"
	                        "\t{\n\t.reg .b32 %r1;\n"
	                        "\tmov.u32 %r1, 7;\n"   /* s3 */
	                        "\tmov.u32 %r3, %r1;\n" /* s4 */
	                        "\t}\n"
	                        "\tret;\n" /* s5 */
	                        "}\n";
	kx_open(&x, S);
	expect_refused(&x, 4, false, "t", "register 't' is not visible after s4");
	assert_int_equal(one_record(&x, 1, false, "t", 1, PF_HEX32, &res),
	                 0); /* inside its scope */
	probe_result_release(&res);
	/* %r1 defined at s0 (the body's) is hidden inside the second scope */
	assert_int_equal(one_record(&x, 3, false, "%r1", 0, PF_HEX32, &res), -1);
	assert_non_null(
	    strstr(err_msg(&x.e), "hidden at the probe by another declaration"));
	probe_result_release(&res);
	/* after s2: the scope closes on the next line, so the record is inside it */
	assert_int_equal(one_record(&x, 2, false, "%r2", 2, PF_HEX32, &res), 0);
	probe_result_release(&res);
	kx_close(&x);
}

static void test_probe__reads_and_per_warp(void **state)
{
	(void)state;
	Kx x;
	kx_open(&x, K);
	/* clock at phase 1's start and end, stored once per warp after phase 3,
	 * with a register */
	ProbePlan p = {0};
	ProbeRecord r = {.at = 18, .per_warp = true};
	ProbeValue c0 = val("%clock64", PF_U64), c1 = val("%clock64", PF_U64);
	c0.kind = c1.kind = PV_READ;
	c0.read_at = 10;
	c0.read_before = true;
	c1.read_at = 11;
	VEC_PUSH(r.vals, c0);
	VEC_PUSH(r.vals, c1);
	VEC_PUSH(r.vals, val("%r18", PF_HEX32));
	VEC_PUSH(p.recs, r);
	assert_int_equal(probe_plan_layout(&p, &x.e), 0);
	assert_int_equal(p.warp_bytes, 24); /* 8 + 8 + 4, aligned to 8 */
	ProbeRequest req = {x.m, x.f, &p, NULL};
	ProbeResult res = {0};
	if (probe_instrument(&req, &res, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	sb_addc(&res.text, 0);
	const char *t = res.text.p;
	size_t extra;
	assert_true(lines_kept(K, t, &extra));
	assert_non_null(strstr(t, "\t.reg .b64 \t%rd<8>;\n\t.reg .b64 \t%prb0_c<2>;"));
	assert_non_null(
	    strstr(t, "\tmov.b32 \t%r9, 0;\n\tmov.u64 \t%prb0_c0, %clock64;"));
	assert_non_null(strstr(t, "phase 1 ends here\n\tmov.u64 \t%prb0_c1, %clock64;"));
	assert_non_null(
	    strstr(t, "\t@%prb0_0_p st.global.b64 \t[%prb0_0_a0+8], %prb0_c1;\n"));
	assert_non_null(
	    strstr(t, "\t@%prb0_0_p st.global.b32 \t[%prb0_0_a0+16], %r18;\n"));
	Err e = ERR_INIT;
	StrBuf log = STRBUF_INIT;
	int pr = splice_ptxas(res.text.p, res.text.n - 1, "sm_90", "k", NULL, "probed", NULL,
	                      &log, &e);
	if (pr > 0)
		fail_msg("ptxas rejects the reads:\n%s", log.p);
	sb_release(&log);
	err_release(&e);
	probe_result_release(&res);
	/* a read after its store is refused */
	p.recs.v[0].vals.v[0].read_at = 20;
	memset(&res, 0, sizeof res);
	assert_int_equal(probe_instrument(&req, &res, &x.e), -1);
	assert_non_null(
	    strstr(err_msg(&x.e), "'%clock64' is read at before s20, after the record"));
	probe_result_release(&res);
	probe_plan_release(&p);
	kx_close(&x);
}

static void test_probe__map_onto_a_splice(void **state)
{
	(void)state;
	Kx x;
	kx_open(&x, K);
	ProbePlan p = {0};
	assert_int_equal(probe_plan_phases(x.df, &x.pl, NULL, PROBE_AT_PHASE_END,
	                                   PROBE_REGS_LIVE_OUT, &p, &x.e),
	                 0);
	probe_plan_sort(&p);
	/* perturb phase 2: its mma, then a mov and an add of the splicer's own */
	Recipe rc;
	memset(&rc, 0, sizeof rc);
	rc.path = (char *)"t.json";
	rc.cut = CUT_PHASE;
	rc.phase = 2;
	rc.tkind = TPL_PERTURB;
	rc.template_name = (char *)"perturb";
	SpliceRequest sq = {.module = x.m, .entry = "k", .recipe = &rc};
	SpliceResult sr;
	memset(&sr, 0, sizeof sr);
	if (splice_run(&sq, &sr, &x.e) < 0)
		fail_msg("%s", err_msg(&x.e));
	Err e = ERR_INIT;
	Module *ms = ptx_parse("spliced", sr.text.p, sr.text.n, &e);
	assert_non_null(ms);
	const Func *fs = &ms->funcs.v[0];
	assert_int_equal(fs->nstmt, x.f->nstmt + 2);
	uint32_t *match, nm;
	probe_align(x.m, x.f, ms, fs, &match, &nm);
	assert_int_equal(nm, x.f->nstmt); /* every original statement is there */
	assert_int_equal(match[15], 15);
	assert_int_equal(match[16], 18);
	ProbeCut cut = {15, 15};
	ProbePlan kept, mapped;
	ProbeIndexVec dropped = {0};
	probe_plan_map(&p, match, x.f->nstmt, fs->nstmt, &cut, 1, &kept, &mapped,
	               &dropped);
	assert_int_equal(dropped.n, 0);
	assert_int_equal(mapped.recs.n, 3);
	assert_int_equal(mapped.recs.v[0].at,
	                 11); /* before the cut: the same statement */
	assert_int_equal(mapped.recs.v[1].at,
	                 17); /* after the splice's add, not its mma */
	assert_int_equal(mapped.recs.v[2].at, 20); /* after the cut: moved by two */
	assert_string_equal(mapped.recs.v[1].vals.v[0].name, "%r16");
	/* the spliced record ends the perturb's scope ("}" on its line) and still
	 * sees %r16 and %r17 */
	assert_int_equal(probe_plan_layout(&kept, &e), 0);
	assert_int_equal(probe_plan_layout(&mapped, &e), 0);
	assert_int_equal(kept.warp_bytes, mapped.warp_bytes);
	ProbeRequest rq = {ms, fs, &mapped, NULL};
	ProbeResult res = {0};
	if (probe_instrument(&rq, &res, &e) < 0)
		fail_msg("%s", err_msg(&e));
	probe_result_release(&res);
	probe_plan_release(&kept);
	probe_plan_release(&mapped);
	VEC_FREE(dropped);

	/* a cut of phase 1 with its epilogue: phase 1's end falls inside it */
	ProbeCut cut2 = {10, 14};
	probe_plan_map(&p, match, x.f->nstmt, fs->nstmt, &cut2, 1, &kept, &mapped,
	               &dropped);
	assert_int_equal(dropped.n, 1);
	assert_int_equal(dropped.v[0], 0);
	assert_int_equal(kept.recs.n, 2);
	probe_plan_release(&kept);
	probe_plan_release(&mapped);
	VEC_FREE(dropped);
	free(match);
	mod_free(ms);
	err_release(&e);
	splice_result_release(&sr);
	probe_plan_release(&p);
	kx_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_probe__dump_indexing),
	    cmocka_unit_test(test_probe__distances),
	    cmocka_unit_test(test_probe__value_text),
	    cmocka_unit_test(test_probe__compare),
	    cmocka_unit_test(test_probe__plan_from_phases),
	    cmocka_unit_test(test_probe__instrument_inserts_lines),
	    cmocka_unit_test(test_probe__positions_refused),
	    cmocka_unit_test(test_probe__reads_and_per_warp),
	    cmocka_unit_test(test_probe__map_onto_a_splice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
