/*
 * test_native.c - operand facts, the native-phase generator and the
 * several-recipe splice, on small hand-written kernels.
 *
 * The expected templates are written out by hand from the PTX ISA: the
 * vendor's mma with its loads issued again (mma form), and for the f16 form
 * the m16n8k32 e4m3 fragments taken apart as the ISA lays them out (A word
 * j holds four e4m3 of one row, k = 4t..4t+3, +16 for a2/a3; B likewise),
 * so that the low 16 bits of every word, converted to f16x2, are the
 * m16n8k16 fragment of k = {4t, 4t+1, 16+4t, 16+4t+1}, and the high bits
 * the rest: two k16 mma, the first with C = 0, then one f16x2 add of C.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana/ana.h"
#include "base/file.h"
#include "base/sha256.h"
#include "ptx/parse.h"
#include "splice/multi.h"
#include "splice/native.h"
#include "splice/recipe.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define E4M3 "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"
#define K16 "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"

/* One phase of two mma in one chain: the A tuple shared, B from two loads,
 * C of the first zero, C of the second the D of the first.  s0..s10. */
#define BODY_HEAD                                                               \
	".version 8.7\n.target sm_89\n.address_size 64\n"                       \
	".visible .entry k(.param .u64 k_param_0)\n"                            \
	"{\n"                                                                   \
	"\t.reg .b32 %r<40>;\n"                                                 \
	"\t.reg .b64 %rd<4>;\n"                                                 \
	"\t.shared .align 16 .b8 smem[1024];\n"                                 \
	"\tld.param.u64 %rd1, [k_param_0];\n"                         /* s0 */  \
	"\tcvta.to.global.u64 %rd2, %rd1;\n"                          /* s1 */  \
	"\tmov.u32 %r1, smem;\n"                                      /* s2 */  \
	"\tld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [%r1+16];\n"        /* s3 */  \
	"\tld.global.nc.v2.u32 {%r6, %r7}, [%rd2+8];\n"               /* s4 */  \
	"\tld.global.nc.v2.u32 {%r8, %r9}, [%rd2+64];\n"              /* s5 */

static const char K1[] = BODY_HEAD
	"\tmov.b32 %r10, 0;\n"                                                         /* s6 */
	"\t" E4M3 " {%r11, %r12}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r10, %r10};\n"  /* s7 */
	"\t" E4M3 " {%r13, %r14}, {%r2, %r3, %r4, %r5}, {%r8, %r9}, {%r11, %r12};\n"  /* s8 */
	"\tst.global.v2.u32 [%rd2], {%r13, %r14};\n"                                   /* s9 */
	"\tret;\n"
	"}\n";

/* The same with a shared store between the A load and the phase, and an
 * f32-accumulating e4m3 mma after it as a second phase. */
static const char K2[] = BODY_HEAD
	"\tst.shared.u32 [%r1+16], %r20;\n"                                            /* s6 */
	"\tmov.b32 %r10, 0;\n"                                                         /* s7 */
	"\t" E4M3 " {%r11, %r12}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r10, %r10};\n"  /* s8 */
	"\t" E4M3 " {%r13, %r14}, {%r2, %r3, %r4, %r5}, {%r8, %r9}, {%r11, %r12};\n"  /* s9 */
	"\tst.global.v2.u32 [%rd2], {%r13, %r14};\n"                                   /* s10 */
	"\tmov.b32 %r30, 0;\n"                                                         /* s11 */
	"\tmma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%r31, %r32, %r33, %r34}, "
	"{%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r30, %r30, %r30, %r30};\n"                /* s12 */
	"\tst.global.v4.u32 [%rd2+16], {%r31, %r32, %r33, %r34};\n"                    /* s13 */
	"\tret;\n"
	"}\n";

/* A banded phase: two chains of two k-steps reading the same A tuples in
 * the same order, each with its own B; the second chain's C is one word
 * twice. */
static const char K3[] = BODY_HEAD
	"\tmov.b32 %r10, 0;\n"                                                         /* s6 */
	"\t" E4M3 " {%r11, %r12}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r10, %r10};\n"  /* s7 */
	"\t" E4M3 " {%r13, %r14}, {%r5, %r4, %r3, %r2}, {%r8, %r9}, {%r11, %r12};\n"  /* s8 */
	"\t" E4M3 " {%r15, %r16}, {%r2, %r3, %r4, %r5}, {%r8, %r9}, {%r20, %r20};\n"  /* s9 */
	"\t" E4M3 " {%r17, %r18}, {%r5, %r4, %r3, %r2}, {%r6, %r7}, {%r15, %r16};\n"  /* s10 */
	"\tst.global.v4.u32 [%rd2], {%r13, %r14, %r17, %r18};\n"                       /* s11 */
	"\tret;\n"
	"}\n";

/* The lines of t that are not comments ('//' after indentation). */
static char *code_lines(const char *t)
{
	StrBuf sb = STRBUF_INIT;
	for (const char *p = t; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *q = p;
		while (q < p + n && (*q == ' ' || *q == '\t'))
			q++;
		if (!(q + 1 < p + n && q[0] == '/' && q[1] == '/'))
			sb_addf(&sb, "%.*s\n", (int)n, p);
		p += n + (nl != NULL);
	}
	return sb.p ? sb.p : xstrdup("");
}

static Module *parse(const char *text)
{
	Err e = ERR_INIT;
	Module *m = ptx_parse("t.ptx", text, strlen(text), &e);
	if (!m)
		fail_msg("%s", err_msg(&e));
	err_release(&e);
	return m;
}

static void gen(const char *text, uint32_t phase, NativeForm form, StrBuf *rj, StrBuf *tt)
{
	Module *m = parse(text);
	Err e = ERR_INIT;
	NativeRequest nr = {m, "k", NULL, NULL, "t/phase.ptx", phase, form};
	if (splice_native(&nr, rj, tt, NULL, &e) < 0)
		fail_msg("%s", err_msg(&e));
	err_release(&e);
	mod_free(m);
}

static void test_native__operand_facts(void **state)
{
	(void)state;
	Module *m = parse(K3);
	Err e = ERR_INIT;
	Dataflow *df = df_build(m, &m->funcs.v[0], &e);
	assert_non_null(df);
	PhaseList pl;
	ana_phase_find(m, &m->funcs.v[0], 0, &pl);
	assert_int_equal(pl.n, 1);
	PhaseOperands po;
	assert_int_equal(ana_operands(df, &pl, 7, 10, &po, &e), 0);
	assert_null(po.unsupported);
	assert_int_equal(po.mma.n, 4);
	/* chains s7 -> s8 and s9 -> s10; both read A (r2..r5) then A' (r5..r2),
	 * so one m-tile; B sequences (r6 r7, r8 r9) and (r8 r9, r6 r7): two
	 * n-tiles; two k-steps */
	assert_int_equal(po.chains, 2);
	assert_int_equal(po.k_steps, 2);
	assert_int_equal(po.m_tiles, 1);
	assert_int_equal(po.n_tiles, 2);
	assert_int_equal(po.mma.v[1].prev, 0);
	assert_int_equal(po.mma.v[1].k_step, 1);
	assert_int_equal(po.mma.v[2].prev, -1);
	assert_int_equal(po.mma.v[3].prev, 2);
	assert_int_equal(po.mma.v[2].n_tile, 1);
	assert_int_equal(po.mma.v[3].m_tile, 0);
	assert_true(po.mma.v[0].c_dup); /* {%r10, %r10} */
	assert_true(po.mma.v[2].c_dup); /* {%r20, %r20} */
	assert_false(po.mma.v[1].c_dup);
	/* sources: A from the shared load s3 (element 3 is %r5), C of s9 from
	 * nothing (live into the function) */
	const OpdWord *a = &po.words.v[po.mma.v[1].word[ROLE_A]];
	assert_int_equal(a[0].value, OV_LOAD);
	assert_int_equal(po.loads.v[a[0].src].stmt, 3);
	assert_int_equal(a[0].elem, 3);
	const OpdWord *c = &po.words.v[po.mma.v[2].word[ROLE_C]];
	assert_int_equal(c[0].value, OV_UNDEF);
	const OpdWord *c1 = &po.words.v[po.mma.v[1].word[ROLE_C]];
	assert_int_equal(c1[1].value, OV_MMA);
	assert_int_equal(c1[1].src, 0);
	assert_int_equal(c1[1].elem, 1);
	/* the loads: [%r1+16] shared, [%rd2+8] global, all safe to issue again */
	const OpdLoad *l = &po.loads.v[a[0].src];
	assert_int_equal(l->space, SP_SHARED);
	assert_int_equal(l->disp, 16);
	assert_int_equal(l->base_def, 2);
	assert_true(l->resolved);
	assert_int_equal(l->addr.base, AB_SYMBOL);
	assert_int_equal(l->addr.offset, 16);
	assert_true(l->reload_safe);
	phase_operands_release(&po);
	phases_release(&pl);
	df_free(df);
	mod_free(m);
	err_release(&e);
}

static void test_native__reload_check(void **state)
{
	(void)state;
	/* K2: st.shared [%r1+16] at s6 writes the bytes s3 loaded; the global
	 * loads s4, s5 are in another space */
	Module *m = parse(K2);
	Err e = ERR_INIT;
	Dataflow *df = df_build(m, &m->funcs.v[0], &e);
	OpdLoad l;
	assert_int_equal(ana_reload_check(df, 3, 8, &l), 0);
	assert_false(l.reload_safe);
	assert_int_equal(l.blocker, 6);
	assert_non_null(strstr(l.why, "store"));
	VEC_FREE(l.checked);
	assert_int_equal(ana_reload_check(df, 4, 8, &l), 0);
	assert_true(l.reload_safe);
	assert_int_equal(l.base_reg, df_reg_find(df, str_c("%rd2")));
	assert_int_equal(l.disp, 8);
	VEC_FREE(l.checked);
	/* not a load */
	assert_int_equal(ana_reload_check(df, 6, 8, &l), -1);
	VEC_FREE(l.checked);
	/* a load after the cut's start */
	assert_int_equal(ana_reload_check(df, 4, 4, &l), 0);
	assert_false(l.reload_safe);
	VEC_FREE(l.checked);
	df_free(df);
	mod_free(m);

	/* a store to another shared variable is proved disjoint; a barrier, a
	 * redefined base register and a label are not crossed */
	static const char K4[] =
		".version 8.7\n.target sm_89\n.address_size 64\n"
		".visible .entry k()\n{\n"
		"\t.reg .b32 %r<20>;\n"
		"\t.shared .align 16 .b8 s1[64];\n"
		"\t.shared .align 16 .b8 s2[64];\n"
		"\tmov.u32 %r1, s1;\n"                      /* s0 */
		"\tld.shared.u32 %r3, [%r1+8];\n"           /* s1 */
		"\tst.shared.u32 [s2+4], %r9;\n"            /* s2 */
		"\tld.shared.u32 %r4, [%r1+12];\n"          /* s3 */
		"\tbar.sync 0;\n"                           /* s4 */
		"\tld.shared.u32 %r5, [%r1+16];\n"          /* s5 */
		"\tadd.s32 %r1, %r1, 4;\n"                  /* s6 */
		"\tld.shared.u32 %r6, [s1+4];\n"            /* s7 */
		"L1:\n"
		"\tadd.s32 %r7, %r4, %r3;\n"                /* s8 */
		"\tret;\n}\n";
	m = parse(K4);
	df = df_build(m, &m->funcs.v[0], &e);
	assert_int_equal(ana_reload_check(df, 1, 3, &l), 0);
	assert_true(l.reload_safe);
	assert_int_equal(l.checked.n, 1); /* the store to s2 at s2 */
	assert_int_equal(l.checked.v[0], 2);
	VEC_FREE(l.checked);
	assert_int_equal(ana_reload_check(df, 3, 5, &l), 0);
	assert_false(l.reload_safe);
	assert_int_equal(l.blocker, 4);
	assert_non_null(strstr(l.why, "barrier"));
	VEC_FREE(l.checked);
	assert_int_equal(ana_reload_check(df, 5, 7, &l), 0);
	assert_false(l.reload_safe);
	assert_int_equal(l.blocker, 6);
	assert_non_null(strstr(l.why, "base register"));
	VEC_FREE(l.checked);
	assert_int_equal(ana_reload_check(df, 5, 8, &l), 0);
	assert_false(l.reload_safe);
	assert_int_equal(l.blocker, 8);
	assert_non_null(strstr(l.why, "label"));
	VEC_FREE(l.checked);
	assert_int_equal(ana_reload_check(df, 7, 8, &l), 0);
	assert_false(l.reload_safe);
	assert_int_equal(l.base_reg, -1);
	VEC_FREE(l.checked);
	df_free(df);
	mod_free(m);
	err_release(&e);
}

static const char *const K1_MMA =
	"\t.reg .b32 %a<4>;\n"
	"\t.reg .b32 %b<4>;\n"
	"\t.reg .b32 %t<2>;\n"
	"\t.reg .b32 %z;\n"
	"\tld.shared.v4.u32 \t{%a0, %a1, %a2, %a3}, [%{a_base0}+16];\t// s3\n"
	"\tld.global.nc.v2.u32 \t{%b0, %b1}, [%{b_base0}+8];\t// s4\n"
	"\tld.global.nc.v2.u32 \t{%b2, %b3}, [%{b_base0}+64];\t// s5\n"
	"\tmov.b32 \t%z, 0;\n"
	"\t" E4M3 " \t{%t0, %t1}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%z, %z};\n"
	"\t" E4M3 " \t{%{d[0]}, %{d[1]}}, {%a0, %a1, %a2, %a3}, {%b2, %b3}, {%t0, %t1};\n";

static void test_native__mma_form(void **state)
{
	(void)state;
	StrBuf rj = STRBUF_INIT, tt = STRBUF_INIT;
	gen(K1, 1, NATIVE_MMA, &rj, &tt);
	char *code = code_lines(tt.p);
	/* the header lines are '//!' comments: the formals and effects */
	assert_non_null(strstr(tt.p, "//! in    .b32 a_base0\n//! in    .b64 b_base0\n"
	                             "//! out   .b32 d[2]\n//! reads global shared\n"
	                             "//! writes none\n//! barriers 0\n"));
	assert_string_equal(code, K1_MMA);
	free(code);
	Err e = ERR_INIT;
	Recipe r;
	if (rcp_parse("r.json", rj.p, rj.n, &r, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_string_equal(rcp_bind_find(&r, "a_base0")->regs[0], "%r1");
	assert_string_equal(rcp_bind_find(&r, "b_base0")->regs[0], "%rd2");
	const RecipeBind *d = rcp_bind_find(&r, "d");
	assert_int_equal(d->nregs, 2);
	assert_string_equal(d->regs[0], "%r13");
	assert_string_equal(d->regs[1], "%r14");
	assert_int_equal(r.reloads.n, 3);
	assert_int_equal(r.reloads.v[0], 3);
	assert_int_equal(r.reloads.v[2], 5);
	assert_int_equal(r.mma, 2);
	rcp_release(&r);
	sb_release(&rj);
	sb_release(&tt);
	err_release(&e);
}

static const char *const K1_F16 =
	"\t.reg .b32 %a<4>;\n"
	"\t.reg .b32 %b<4>;\n"
	"\t.reg .b32 %t<2>;\n"
	"\t.reg .b32 %z;\n"
	"\t.reg .b16 %e<16>;\n"
	"\t.reg .b32 %lo<8>;\n"
	"\t.reg .b32 %hi<8>;\n"
	"\t.reg .b32 %s<4>;\n"
	"\tld.shared.v4.u32 \t{%a0, %a1, %a2, %a3}, [%{a_base0}+16];\t// s3\n"
	"\tld.global.nc.v2.u32 \t{%b0, %b1}, [%{b_base0}+8];\t// s4\n"
	"\tld.global.nc.v2.u32 \t{%b2, %b3}, [%{b_base0}+64];\t// s5\n"
	"\tmov.b32 \t%z, 0;\n"
	/* s7: every A and B word taken apart and converted */
	"\tmov.b32 \t{%e0, %e1}, %a0;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo0, %e0;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi0, %e1;\n"
	"\tmov.b32 \t{%e2, %e3}, %a1;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo1, %e2;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi1, %e3;\n"
	"\tmov.b32 \t{%e4, %e5}, %a2;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo2, %e4;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi2, %e5;\n"
	"\tmov.b32 \t{%e6, %e7}, %a3;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo3, %e6;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi3, %e7;\n"
	"\tmov.b32 \t{%e8, %e9}, %b0;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo4, %e8;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi4, %e9;\n"
	"\tmov.b32 \t{%e10, %e11}, %b1;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo5, %e10;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi5, %e11;\n"
	"\t" K16 " \t{%s0, %s1}, {%lo0, %lo1, %lo2, %lo3}, {%lo4, %lo5}, {%z, %z};\n"
	"\t" K16 " \t{%s0, %s1}, {%hi0, %hi1, %hi2, %hi3}, {%hi4, %hi5}, {%s0, %s1};\n"
	"\tadd.rn.f16x2 \t%t0, %s0, %z;\n"
	"\tadd.rn.f16x2 \t%t1, %s1, %z;\n"
	/* s8: the A halves reused, the new B converted */
	"\tmov.b32 \t{%e12, %e13}, %b2;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo6, %e12;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi6, %e13;\n"
	"\tmov.b32 \t{%e14, %e15}, %b3;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%lo7, %e14;\n"
	"\tcvt.rn.f16x2.e4m3x2 \t%hi7, %e15;\n"
	"\t" K16 " \t{%s2, %s3}, {%lo0, %lo1, %lo2, %lo3}, {%lo6, %lo7}, {%z, %z};\n"
	"\t" K16 " \t{%s2, %s3}, {%hi0, %hi1, %hi2, %hi3}, {%hi6, %hi7}, {%s2, %s3};\n"
	"\tadd.rn.f16x2 \t%{d[0]}, %s2, %t0;\n"
	"\tadd.rn.f16x2 \t%{d[1]}, %s3, %t1;\n";

static void test_native__f16_form(void **state)
{
	(void)state;
	StrBuf rj = STRBUF_INIT, tt = STRBUF_INIT;
	gen(K1, 1, NATIVE_F16, &rj, &tt);
	char *code = code_lines(tt.p);
	assert_string_equal(code, K1_F16);
	free(code);
	/* writing it again gives the same bytes */
	StrBuf rj2 = STRBUF_INIT, tt2 = STRBUF_INIT;
	gen(K1, 1, NATIVE_F16, &rj2, &tt2);
	assert_string_equal(rj.p, rj2.p);
	assert_string_equal(tt.p, tt2.p);
	sb_release(&rj);
	sb_release(&tt);
	sb_release(&rj2);
	sb_release(&tt2);
}

static void test_native__inputs_and_refusals(void **state)
{
	(void)state;
	/* K2: the A load is not safe to issue again (the store at s6): A is an
	 * input list bound to the vendor's registers; B still loaded here */
	StrBuf rj = STRBUF_INIT, tt = STRBUF_INIT;
	gen(K2, 1, NATIVE_MMA, &rj, &tt);
	assert_non_null(strstr(tt.p, "//! in    .b64 b_base0\n//! in    .b32 a[4]\n"));
	assert_null(strstr(tt.p, "a_base0"));
	assert_non_null(strstr(tt.p, "{%{a[0]}, %{a[1]}, %{a[2]}, %{a[3]}}, {%b0, %b1}"));
	Err e = ERR_INIT;
	Recipe r;
	if (rcp_parse("r.json", rj.p, rj.n, &r, &e) < 0)
		fail_msg("%s", err_msg(&e));
	const RecipeBind *a = rcp_bind_find(&r, "a");
	assert_int_equal(a->nregs, 4);
	assert_string_equal(a->regs[0], "%r2");
	assert_string_equal(a->regs[3], "%r5");
	assert_int_equal(r.reloads.n, 2);
	rcp_release(&r);
	sb_reset(&rj);
	sb_reset(&tt);

	/* phase 2 of K2 accumulates in f32: the mma form writes it, the f16 form
	 * refuses it by name */
	gen(K2, 2, NATIVE_MMA, &rj, &tt);
	assert_non_null(strstr(tt.p, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 \t"
	                             "{%{d[0]}, %{d[1]}, %{d[2]}, %{d[3]}}"));
	Module *m = parse(K2);
	NativeRequest nr = {m, "k", NULL, NULL, "t/p.ptx", 2, NATIVE_F16};
	sb_reset(&rj);
	sb_reset(&tt);
	assert_int_equal(splice_native(&nr, &rj, &tt, NULL, &e), -1);
	assert_non_null(strstr(err_msg(&e), "s12"));
	assert_non_null(strstr(err_msg(&e), "the f16 form is exact for " E4M3 " only"));
	err_clear(&e);
	nr.phase = 3;
	assert_int_equal(splice_native(&nr, &rj, &tt, NULL, &e), -1);
	assert_non_null(strstr(err_msg(&e), "phase 3 does not exist: k has 2 phases"));
	mod_free(m);

	/* a wmma phase has no operand facts */
	static const char KW[] =
		".version 8.7\n.target sm_89\n.address_size 64\n"
		".visible .entry k()\n{\n"
		"\t.reg .b32 %r<40>;\n"
		"\t.reg .f32 %f<10>;\n"
		"\twmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, "
		"%f7}, {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, {%r8, %r9, %r10, %r11, %r12, %r13, "
		"%r14, %r15}, {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};\n"
		"\tret;\n}\n";
	m = parse(KW);
	nr.module = m;
	nr.phase = 1;
	nr.form = NATIVE_MMA;
	err_clear(&e);
	assert_int_equal(splice_native(&nr, &rj, &tt, NULL, &e), -1);
	assert_non_null(strstr(err_msg(&e), "s0 is a wmma statement"));
	mod_free(m);
	sb_release(&rj);
	sb_release(&tt);
	err_release(&e);
}

static void test_native__phase_list(void **state)
{
	(void)state;
	uint32_t *v;
	size_t n;
	Err e = ERR_INIT;
	assert_int_equal(splice_phase_list("1-10,13,21-23", &v, &n, &e), 0);
	uint32_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 21, 22, 23};
	assert_int_equal(n, ARRAY_SIZE(want));
	assert_memory_equal(v, want, sizeof want);
	free(v);
	assert_int_equal(splice_phase_list("5,3-4", &v, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0], 3);
	assert_int_equal(v[2], 5);
	free(v);
	static const char *const bad[][2] = {
		{"", "phase list '': an empty list"},
		{"0", "'0': the numbers count from 1"},
		{"5-3", "the range '5-3' runs backwards"},
		{"1,,2", "'' is not a number or a range A-B"},
		{"1-", "'1-' is not a number or a range A-B"},
		{"x", "'x' is not a number or a range A-B"},
		{"1,", "'' is not a number or a range A-B"},
		{"3 ", "'3 ' is not a number"},
		{"5,3,3-4", "phase list '5,3,3-4': 3 is listed twice (in '3' and '3-4')"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err_clear(&e);
		assert_int_equal(splice_phase_list(bad[i][0], &v, &n, &e), -1);
		if (!strstr(err_msg(&e), bad[i][1]))
			fail_msg("'%s': '%s' has no '%s'", bad[i][0], err_msg(&e), bad[i][1]);
	}
	err_release(&e);
}

/* A file under dir, written. */
static void write_file(const char *dir, const char *name, const char *text)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Two phases of K1's shape, one after the other. */
static const char KM[] = BODY_HEAD
	"\tmov.b32 %r10, 0;\n"                                                         /* s6 */
	"\t" E4M3 " {%r11, %r12}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r10, %r10};\n"  /* s7 */
	"\tadd.s32 %r20, %r11, 1;\n"                                                   /* s8 */
	"\t" E4M3 " {%r13, %r14}, {%r2, %r3, %r4, %r5}, {%r8, %r9}, {%r11, %r12};\n"  /* s9 */
	"\tst.global.v2.u32 [%rd2], {%r13, %r14};\n"                                   /* s10 */
	"\tst.global.u32 [%rd2+8], %r20;\n"                                            /* s11 */
	"\tret;\n"
	"}\n";

static void test_native__splice_many(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-test-native-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char ptx[600];
	snprintf(ptx, sizeof ptx, "%s/ptx/t", dir);
	Err e = ERR_INIT;
	assert_int_equal(mkdir_p(ptx, &e), 0);
	snprintf(ptx, sizeof ptx, "%s/ptx", dir);
	Module *m = parse(KM);
	Recipe r[3];
	const char *names[3] = {"t/phase-01-f16.ptx", "t/phase-02.ptx", "t/phase-01.ptx"};
	uint32_t phase[3] = {1, 2, 1};
	NativeForm form[3] = {NATIVE_F16, NATIVE_MMA, NATIVE_MMA};
	for (int i = 0; i < 3; i++) {
		StrBuf rj = STRBUF_INIT, tt = STRBUF_INIT;
		NativeRequest nr = {m, "k", NULL, NULL, names[i], phase[i], form[i]};
		if (splice_native(&nr, &rj, &tt, NULL, &e) < 0)
			fail_msg("%s", err_msg(&e));
		char rp[700];
		snprintf(rp, sizeof rp, "%s/%s", ptx, names[i]);
		write_file(ptx, names[i], tt.p);
		snprintf(rp, sizeof rp, "%s/r%d.json", dir, i);
		if (rcp_parse(rp, rj.p, rj.n, &r[i], &e) < 0)
			fail_msg("%s", err_msg(&e));
		sb_release(&rj);
		sb_release(&tt);
	}
	/* phases 1 (f16) and 2 (mma), given in the other order */
	const Recipe *two[2] = {&r[1], &r[0]};
	SpliceManyRequest req = {m, "k", two, 2, ptx, false};
	SpliceManyResult res = {0};
	if (splice_many(&req, &res, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_int_equal(res.n, 2);
	assert_int_equal(res.cuts[0].first, 7);
	assert_int_equal(res.cuts[1].first, 9);
	/* each cut its own prefix, in the order given */
	assert_string_equal(res.cuts[1].prefix, "%spl0_");
	assert_string_equal(res.cuts[0].prefix, "%spl1_");
	assert_int_equal(res.mma, 2);
	/* every byte outside the two cuts, found from the text of KM itself */
	const char *c1 = strstr(KM, "\t" E4M3 " {%r11") + 1, *c1e = strstr(c1, ";\n") + 1;
	const char *c2 = strstr(KM, "\t" E4M3 " {%r13") + 1, *c2e = strstr(c2, ";\n") + 1;
	const char *o = res.text.p;
	size_t n1 = (size_t)(c1 - KM), mid = (size_t)(c2 - c1e), tail = strlen(c2e);
	assert_memory_equal(o, KM, n1);
	assert_true(!strncmp(o + n1, "{\t// d4r-splice: begin ptx/t/phase-01-f16.ptx for s7..s7", 56));
	const char *end1 = strstr(o + n1, "}\t// d4r-splice: end") + 20;
	assert_memory_equal(end1, c1e, mid);
	assert_true(!strncmp(end1 + mid, "{\t// d4r-splice: begin ptx/t/phase-02.ptx for s9..s9", 52));
	const char *end2 = strstr(end1 + mid, "}\t// d4r-splice: end") + 20;
	assert_string_equal(end2, c2e);
	(void)tail;
	/* line mapping: a line of the second region is its template's */
	uint32_t ln = 1;
	for (const char *p = o; p < end1 + mid; p++)
		ln += *p == '\n';
	StrBuf w = STRBUF_INIT;
	splice_many_where(&res, "t.ptx", ln + 1, &w);
	assert_non_null(strstr(w.p, "template ptx/t/phase-02.ptx:"));
	sb_reset(&w);
	uint32_t last = 1;
	for (const char *p = o; *p; p++)
		last += *p == '\n';
	splice_many_where(&res, "t.ptx", last - 1, &w);
	uint32_t orig_last = 1;
	for (const char *p = KM; *p; p++)
		orig_last += *p == '\n';
	char want[64];
	snprintf(want, sizeof want, "t.ptx:%u", orig_last - 1);
	assert_string_equal(w.p, want);
	sb_release(&w);
	splice_many_release(&res);

	/* two recipes of one phase overlap */
	const Recipe *dup[2] = {&r[0], &r[2]};
	SpliceManyRequest req2 = {m, "k", dup, 2, ptx, false};
	SpliceManyResult res2 = {0};
	assert_int_equal(splice_many(&req2, &res2, &e), -1);
	assert_non_null(strstr(err_msg(&e), "cut overlapping statements (s7..s7 and s7..s7)"));
	splice_many_release(&res2);
	for (int i = 0; i < 3; i++)
		rcp_release(&r[i]);
	mod_free(m);
	err_release(&e);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Phase 1's D is read by nothing after it; a template of phase 2 that reads
 * it as an input would read what phase 1's template need not write. */
static const char KX[] = BODY_HEAD
	"\tmov.b32 %r10, 0;\n"                                                         /* s6 */
	"\t" E4M3 " {%r11, %r12}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r10, %r10};\n"  /* s7 */
	"\tadd.s32 %r20, %r10, 1;\n"                                                   /* s8 */
	"\t" E4M3 " {%r13, %r14}, {%r2, %r3, %r4, %r5}, {%r8, %r9}, {%r10, %r10};\n"  /* s9 */
	"\tst.global.v2.u32 [%rd2], {%r13, %r14};\n"                                   /* s10 */
	"\tst.global.u32 [%rd2+8], %r20;\n"                                            /* s11 */
	"\tret;\n"
	"}\n";

static void test_native__splice_many_inputs(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-test-native-XXXXXX";
	assert_non_null(mkdtemp(dir));
	Module *m = parse(KX);
	Err e = ERR_INIT;
	write_file(dir, "p2.ptx",
	           "//! in    .b32 x\n"
	           "//! in    .b32 a[4]\n"
	           "//! in    .b32 b[2]\n"
	           "//! in    .b32 z\n"
	           "//! out   .b32 d[2]\n"
	           "\t" E4M3 " {%{d[0]}, %{d[1]}}, {%{a[0]}, %{a[1]}, %{a[2]}, %{a[3]}}, "
	           "{%{b[0]}, %{b[1]}}, {%{z}, %{x}};\n");
	char p1[600], p2[600];
	snprintf(p1, sizeof p1, "%s/p1.json", dir);
	snprintf(p2, sizeof p2, "%s/p2.json", dir);
	static const char r1[] = "{\"cut\": {\"phase\": 1}, \"template\": \"identity\", "
	                         "\"guards\": {\"sha256\": \"%s\"}}";
	static const char r2[] =
		"{\"cut\": {\"phase\": 2}, \"template\": \"./p2.ptx\", \"bind\": {\"x\": \"%%r11\", "
		"\"a\": [\"%%r2\", \"%%r3\", \"%%r4\", \"%%r5\"], \"b\": [\"%%r8\", \"%%r9\"], "
		"\"z\": \"%%r10\", \"d\": [\"%%r13\", \"%%r14\"]}, \"guards\": {\"sha256\": \"%s\"}}";
	char t[2048], hex1[65], hex2[65];
	StrBuf txt = STRBUF_INIT;
	splice_cut_text(m, &m->funcs.v[0], 7, 7, &txt);
	sha256_hex(txt.p, txt.n, hex1);
	sb_reset(&txt);
	splice_cut_text(m, &m->funcs.v[0], 9, 9, &txt);
	sha256_hex(txt.p, txt.n, hex2);
	sb_release(&txt);
	Recipe r[2];
	snprintf(t, sizeof t, r1, hex1);
	if (rcp_parse(p1, t, strlen(t), &r[0], &e) < 0)
		fail_msg("%s", err_msg(&e));
	snprintf(t, sizeof t, r2, hex2);
	if (rcp_parse(p2, t, strlen(t), &r[1], &e) < 0)
		fail_msg("%s", err_msg(&e));
	/* alone, phase 2's recipe splices: %r11 is defined before its cut */
	SpliceRequest sr = {m, "k", &r[1], NULL, false, 0};
	SpliceResult one;
	memset(&one, 0, sizeof one);
	if (splice_run(&sr, &one, &e) < 0)
		fail_msg("%s", err_msg(&e));
	splice_result_release(&one);
	/* with phase 1 cut too, %r11 comes from inside that cut, dead after it */
	const Recipe *two[2] = {&r[0], &r[1]};
	SpliceManyRequest req = {m, "k", two, 2, NULL, false};
	SpliceManyResult res = {0};
	assert_int_equal(splice_many(&req, &res, &e), -1);
	assert_non_null(strstr(err_msg(&e), "input '%r11' ('bind.x') is defined at s7, inside the "
	                                    "cut of"));
	splice_many_release(&res);
	rcp_release(&r[0]);
	rcp_release(&r[1]);
	mod_free(m);
	err_release(&e);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native__operand_facts),
		cmocka_unit_test(test_native__reload_check),
		cmocka_unit_test(test_native__mma_form),
		cmocka_unit_test(test_native__f16_form),
		cmocka_unit_test(test_native__inputs_and_refusals),
		cmocka_unit_test(test_native__phase_list),
		cmocka_unit_test(test_native__splice_many),
		cmocka_unit_test(test_native__splice_many_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
