/*
 * test_phases.c - the phase locator on a small hand-written kernel whose
 * every derived value is known: chains, tiles, banded, A/B/C sources,
 * byte offsets, epilogue ranges and operations, --gap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana/ana.h"
#include "ptx/parse.h"

#define MMA "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 "

static const char kernel[] =
	".version 8.7\n"
	".target sm_89\n"
	".address_size 64\n"
	".visible .entry k(.param .align 8 .b8 k_param_0[144])\n"
	"{\n"
	"  .reg .b16 %rs<20>;\n"
	"  .reg .b32 %r<200>;\n"
	"  .reg .b64 %rd<20>;\n"
	"  .shared .align 16 .b8 arena[16384];\n"
	"  ld.param.u64 %rd1, [k_param_0+40];\n"                         /* s0 */
	"  cvta.to.global.u64 %rd2, %rd1;\n"                             /* s1 */
	"  mov.u32 %r1, %tid.x;\n"                                       /* s2 */
	"  mul.wide.u32 %rd3, %r1, 16;\n"                                /* s3 */
	"  add.s64 %rd4, %rd2, %rd3;\n"                                  /* s4 */
	"  mov.u32 %r2, arena;\n"                                        /* s5 */
	"  shl.b32 %r3, %r1, 4;\n"                                       /* s6 */
	"  add.s32 %r4, %r2, %r3;\n"                                     /* s7 */
	"  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r4];\n"          /* s8 */
	"  ld.shared.v4.u32 {%r14, %r15, %r16, %r17}, [%r4+2560];\n"     /* s9 */
	"  ld.global.nc.v4.u32 {%r20, %r21, %r22, %r23}, [%rd4+320];\n"  /* s10 */
	"  mov.b32 %r30, 0;\n"                                           /* s11 */
	/* phase 1: 2 x 2 tiles, C zero */
	"  " MMA "{%r40, %r41}, {%r10, %r11, %r12, %r13}, {%r20, %r21}, {%r30, %r30};\n" /* s12 */
	"  " MMA "{%r42, %r43}, {%r10, %r11, %r12, %r13}, {%r22, %r23}, {%r30, %r30};\n" /* s13 */
	"  " MMA "{%r44, %r45}, {%r14, %r15, %r16, %r17}, {%r20, %r21}, {%r30, %r30};\n" /* s14 */
	"  " MMA "{%r46, %r47}, {%r14, %r15, %r16, %r17}, {%r22, %r23}, {%r30, %r30};\n" /* s15 */
	/* epilogue 1: requantise D1 as the next A, load the next C */
	"  cvt.rn.satfinite.e4m3x2.f16x2 %rs1, %r40;\n"                  /* s16 */
	"  cvt.rn.satfinite.e4m3x2.f16x2 %rs2, %r41;\n"                  /* s17 */
	"  mov.b32 %r50, {%rs1, %rs2};\n"                                /* s18 */
	"  cvt.rn.satfinite.e4m3x2.f16x2 %rs3, %r42;\n"                  /* s19 */
	"  cvt.rn.satfinite.e4m3x2.f16x2 %rs4, %r43;\n"                  /* s20 */
	"  mov.b32 %r51, {%rs3, %rs4};\n"                                /* s21 */
	"  ld.global.nc.u32 %r60, [%rd4+1024];\n"                        /* s22 */
	/* phase 2: one chain of two, A converted from phase 1, C loaded */
	"  " MMA "{%r70, %r71}, {%r50, %r51, %r50, %r51}, {%r20, %r21}, {%r60, %r60};\n" /* s23 */
	"  " MMA "{%r72, %r73}, {%r50, %r51, %r50, %r51}, {%r22, %r23}, {%r70, %r71};\n" /* s24 */
	"  add.f16x2 %r80, %r72, %r73;\n"                                /* s25 */
	"  st.global.u32 [%rd4], %r80;\n"                                /* s26 */
	/* phase 3: C is phase 1's D; banded chain of three with distinct A and B */
	"  " MMA "{%r90, %r91}, {%r10, %r11, %r12, %r13}, {%r20, %r21}, {%r46, %r47};\n" /* s27 */
	"  " MMA "{%r92, %r93}, {%r14, %r15, %r16, %r17}, {%r22, %r23}, {%r90, %r91};\n" /* s28 */
	"  " MMA "{%r94, %r95}, {%r50, %r51, %r50, %r51}, {%r21, %r20}, {%r92, %r93};\n" /* s29 */
	"  st.global.u32 [%rd4+4], %r94;\n"                              /* s30 */
	"  st.shared.u32 [%r4], %r95;\n"                                 /* s31 */
	"  ret;\n"                                                       /* s32 */
	"}\n";

typedef struct {
	Module *m;
	Dataflow *df;
	PhaseList pl;
} Fix;

static void load(Fix *x, const char *src, unsigned gap)
{
	Err e = ERR_INIT;
	x->m = ptx_parse("k.ptx", src, strlen(src), &e);
	assert_non_null(x->m);
	x->df = df_build(x->m, &x->m->funcs.v[0], &e);
	assert_non_null(x->df);
	assert_int_equal(ana_phases(x->df, gap, &x->pl, &e), 0);
	err_release(&e);
}

static void unload(Fix *x)
{
	phases_release(&x->pl);
	df_free(x->df);
	mod_free(x->m);
}

static void test_phases__gemm_fields(void **state)
{
	(void)state;
	Fix x;
	load(&x, kernel, 0);
	assert_int_equal(x.pl.n, 3);
	const Phase *p1 = &x.pl.v[0], *p2 = &x.pl.v[1], *p3 = &x.pl.v[2];
	assert_int_equal(p1->first, 12);
	assert_int_equal(p1->last, 15);
	assert_int_equal(p1->mma, 4);
	assert_int_equal(p1->m_tiles, 2);
	assert_int_equal(p1->n_tiles, 2);
	assert_int_equal(p1->k_chain_len, 1);
	assert_int_equal(p1->chains, 4);
	assert_int_equal(p1->k, 32);
	assert_false(p1->banded);
	assert_int_equal(p1->inst_k, 32);
	assert_true(str_eqc(p1->shape, "m16n8k32"));
	/* phase 2: one chain of two mma, one A tuple, two B tuples */
	assert_int_equal(p2->mma, 2);
	assert_int_equal(p2->k_chain_len, 2);
	assert_int_equal(p2->chains, 1);
	assert_int_equal(p2->m_tiles, 1);
	assert_int_equal(p2->n_tiles, 2);
	assert_int_equal(p2->k, 64);
	assert_false(p2->banded);
	/* phase 3: a chain of three with distinct A and B: banded */
	assert_int_equal(p3->mma, 3);
	assert_int_equal(p3->k_chain_len, 3);
	assert_int_equal(p3->chains, 1);
	assert_int_equal(p3->m_tiles, 3);
	assert_int_equal(p3->n_tiles, 3);
	assert_int_equal(p3->k, 96);
	assert_true(p3->banded);
	unload(&x);
}

static void test_phases__epilogues(void **state)
{
	(void)state;
	Fix x;
	load(&x, kernel, 0);
	assert_int_equal(x.pl.v[0].epi_first, 16);
	assert_int_equal(x.pl.v[0].epi_last, 22);
	assert_int_equal(x.pl.v[1].epi_first, 25);
	assert_int_equal(x.pl.v[1].epi_last, 26);
	/* the last epilogue ends before ret */
	assert_int_equal(x.pl.v[2].epi_first, 30);
	assert_int_equal(x.pl.v[2].epi_last, 31);
	const char *e1 = x.pl.v[0].epilogue_ops.p;
	assert_non_null(strstr(e1, "e4m3_requantise 16 17 19 20"));
	assert_non_null(strstr(e1, "f16_pack 18 21"));
	assert_non_null(strstr(e1, "next_c_load 22"));
	assert_non_null(strstr(x.pl.v[1].epilogue_ops.p, "plane_scatter 26"));
	assert_non_null(strstr(x.pl.v[2].epilogue_ops.p, "shared_stage 31"));
	unload(&x);
}

static void test_phases__operand_sources(void **state)
{
	(void)state;
	Fix x;
	load(&x, kernel, 0);
	const Phase *p1 = &x.pl.v[0], *p2 = &x.pl.v[1], *p3 = &x.pl.v[2];
	/* A from the shared arena at the offsets of the loads */
	assert_int_equal(p1->a_kind, AK_SHARED);
	assert_int_equal(p1->a_offsets.n, 2);
	assert_int_equal(p1->a_offsets.v[0], 0);
	assert_int_equal(p1->a_offsets.v[1], 2560);
	/* B from the pointer at param+40, a v4 load at +320: elements 320..332 */
	assert_true(p1->b_loaded);
	assert_int_equal(p1->b_lo, 320);
	assert_int_equal(p1->b_hi, 332);
	assert_int_equal(p1->b_param_off, 40);
	assert_true(str_eqc(p1->b_base, "k_param_0"));
	assert_int_equal(p1->c_kind, CK_ZERO);
	/* phase 2: A requantised from phase 1's D; C a loaded bias word */
	assert_int_equal(p2->a_kind, AK_CONVERTED);
	assert_int_equal(p2->a_from_phase, 1);
	assert_int_equal(p2->c_kind, CK_LOADED);
	assert_int_equal(p2->c_space, SP_GLOBAL);
	assert_int_equal(p2->c_bytes.n, 1);
	assert_int_equal(p2->c_bytes.v[0], 1024);
	/* phase 3: the chain head's C is phase 1's D; A mixes shared and converted */
	assert_int_equal(p3->c_kind, CK_PHASE_ACC);
	assert_int_equal(p3->c_from_phase, 1);
	assert_int_equal(p3->a_kind, AK_MIXED);
	unload(&x);
}

static void test_phases__gap(void **state)
{
	(void)state;
	/* two mma with one other statement between them */
	static const char src[] =
		".version 8.7\n.target sm_89\n.address_size 64\n"
		".visible .entry g()\n{\n  .reg .b32 %r<20>;\n"
		"  mov.b32 %r1, 0;\n"
		"  " MMA "{%r2, %r3}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1};\n"
		"  add.s32 %r9, %r9, 1;\n"
		"  " MMA "{%r4, %r5}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r2, %r3};\n"
		"  ret;\n}\n";
	Fix x;
	load(&x, src, 0);
	assert_int_equal(x.pl.n, 2);
	assert_int_equal(x.pl.v[1].c_kind, CK_PHASE_ACC);
	assert_int_equal(x.pl.v[1].c_from_phase, 1);
	unload(&x);
	load(&x, src, 1);
	assert_int_equal(x.pl.n, 1);
	assert_int_equal(x.pl.v[0].mma, 2);
	assert_int_equal(x.pl.v[0].first, 1);
	assert_int_equal(x.pl.v[0].last, 3);
	/* the chain still counts across the statement in between */
	assert_int_equal(x.pl.v[0].k_chain_len, 2);
	unload(&x);
}

static void test_phases__no_mma(void **state)
{
	(void)state;
	static const char src[] = ".version 8.7\n.target sm_89\n.address_size 64\n"
	                          ".visible .entry n()\n{\n  ret;\n}\n";
	Fix x;
	load(&x, src, 0);
	assert_int_equal(x.pl.n, 0);
	unload(&x);
}

/* ---- the definition alone: ana_phase_find and ana_phase_range ------------- */

#define MMA_R MMA "{%r2, %r3}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r1, %r1};\n"

/* mma at s2, s3, s6, s8, s12, s13; a label before s8, a branch inside the
 * third epilogue, and the last epilogue ended by a branch (s16) */
static const char ranges_src[] =
	".version 8.7\n.target sm_89\n.address_size 64\n"
	".visible .entry r(.param .u32 r_param_0)\n{\n"
	"  .reg .pred %p<4>;\n  .reg .b32 %r<40>;\n"
	"  ld.param.u32 %r1, [r_param_0];\n" /* s0 */
	"  setp.eq.u32 %p1, %r1, 0;\n"       /* s1 */
	"  " MMA_R                            /* s2 */
	"  " MMA_R                            /* s3 */
	"  add.s32 %r9, %r9, 1;\n"           /* s4 */
	"  add.s32 %r9, %r9, 2;\n"           /* s5 */
	"  " MMA_R                            /* s6 */
	"  add.s32 %r10, %r10, 1;\n"         /* s7 */
	"$L1:\n"
	"  " MMA_R                            /* s8 */
	"  mov.b32 %r11, 0;\n"               /* s9 */
	"  @%p1 bra $L2;\n"                  /* s10 */
	"  mov.b32 %r12, 1;\n"               /* s11 */
	"  " MMA_R                            /* s12 */
	"  " MMA_R                            /* s13 */
	"  add.s32 %r13, %r13, 1;\n"         /* s14 */
	"  add.s32 %r13, %r13, 2;\n"         /* s15 */
	"  @%p1 bra $L1;\n"                  /* s16 */
	"$L2:\n"
	"  ret;\n"                           /* s17 */
	"}\n";

typedef struct {
	uint32_t first, last, mma, epi_first, epi_last;
} Want;

/* ana_phase_find, ana_phase_range (both cuts) and ana_phases of `src`
 * with `gap` give the phases in want[0..n). */
static void check_ranges(const char *src, unsigned gap, const Want *want, size_t n)
{
	Fix x;
	load(&x, src, gap);
	const Func *f = &x.m->funcs.v[0];
	PhaseList found;
	ana_phase_find(x.m, f, gap, &found);
	assert_int_equal(found.n, n);
	assert_int_equal(x.pl.n, n);
	for (size_t i = 0; i < n; i++) {
		const Phase *lists[2] = {&found.v[i], &x.pl.v[i]};
		for (int k = 0; k < 2; k++) {
			assert_int_equal(lists[k]->number, i + 1);
			assert_int_equal(lists[k]->first, want[i].first);
			assert_int_equal(lists[k]->last, want[i].last);
			assert_int_equal(lists[k]->mma, want[i].mma);
			assert_int_equal(lists[k]->epi_first, want[i].epi_first);
			assert_int_equal(lists[k]->epi_last, want[i].epi_last);
		}
		uint32_t a = 99, b = 99;
		size_t np = 0;
		assert_int_equal(ana_phase_range(x.m, f, gap, (uint32_t)i + 1, false, &a, &b, &np), 0);
		assert_int_equal(a, want[i].first);
		assert_int_equal(b, want[i].last);
		assert_int_equal(np, i + 1);
		uint32_t epi_end = want[i].epi_last >= want[i].epi_first ? want[i].epi_last : want[i].last;
		assert_int_equal(ana_phase_range(x.m, f, gap, (uint32_t)i + 1, true, &a, &b, NULL), 0);
		assert_int_equal(a, want[i].first);
		assert_int_equal(b, epi_end);
		assert_int_equal(phase_cut_last(&found.v[i], true), epi_end);
		assert_int_equal(phase_cut_last(&found.v[i], false), want[i].last);
		assert_int_equal(ana_mma_count(x.m, f, want[i].first, epi_end), want[i].mma);
		assert_int_equal(ana_mma_first(x.m, f, want[i].first, epi_end), want[i].first);
	}
	/* past the last phase, and phase 0: -1 and how many there are */
	uint32_t a = 99, b = 99;
	size_t np = 99;
	assert_int_equal(ana_phase_range(x.m, f, gap, (uint32_t)n + 1, true, &a, &b, &np), -1);
	assert_int_equal(np, n);
	assert_int_equal(a, 99);
	np = 99;
	assert_int_equal(ana_phase_range(x.m, f, gap, 0, false, &a, &b, &np), -1);
	assert_int_equal(np, n);
	phases_release(&found);
	unload(&x);
}

static void test_phases__ranges(void **state)
{
	(void)state;
	/* gap 0: four phases; the third epilogue runs through the branch at
	 * s10 to the next phase, the last one stops before the branch at s16 */
	static const Want g0[] = {
		{2, 3, 2, 4, 5}, {6, 6, 1, 7, 7}, {8, 8, 1, 9, 11}, {12, 13, 2, 14, 15}};
	check_ranges(ranges_src, 0, g0, 4);
	/* gap 1: s6 and s8 (one statement apart) are one phase */
	static const Want g1[] = {{2, 3, 2, 4, 5}, {6, 8, 2, 9, 11}, {12, 13, 2, 14, 15}};
	check_ranges(ranges_src, 1, g1, 3);
	/* gap 2: s3 and s6 too */
	static const Want g2[] = {{2, 8, 4, 9, 11}, {12, 13, 2, 14, 15}};
	check_ranges(ranges_src, 2, g2, 2);
	/* gap 3: one phase */
	static const Want g3[] = {{2, 13, 6, 14, 15}};
	check_ranges(ranges_src, 3, g3, 1);
	/* the kernel above: the last epilogue stops before ret */
	static const Want k0[] = {{12, 15, 4, 16, 22}, {23, 24, 2, 25, 26}, {27, 29, 3, 30, 31}};
	check_ranges(kernel, 0, k0, 3);
}

static void test_phases__last_epilogue_ends(void **state)
{
	(void)state;
	/* at a label */
	static const char at_label[] =
		".version 8.7\n.target sm_89\n.address_size 64\n"
		".visible .entry l()\n{\n  .reg .pred %p<4>;\n  .reg .b32 %r<40>;\n"
		"  mov.b32 %r1, 0;\n"         /* s0 */
		"  " MMA_R                     /* s1 */
		"  add.s32 %r9, %r9, 1;\n"    /* s2 */
		"  add.s32 %r9, %r9, 2;\n"    /* s3 */
		"$L9:\n"
		"  add.s32 %r9, %r9, 3;\n"    /* s4 */
		"  exit;\n"                   /* s5 */
		"}\n";
	static const Want l[] = {{1, 1, 1, 2, 3}};
	check_ranges(at_label, 0, l, 1);
	/* at exit */
	static const char at_exit[] =
		".version 8.7\n.target sm_89\n.address_size 64\n"
		".visible .entry x()\n{\n  .reg .b32 %r<40>;\n"
		"  mov.b32 %r1, 0;\n"         /* s0 */
		"  " MMA_R                     /* s1 */
		"  add.s32 %r9, %r9, 1;\n"    /* s2 */
		"  exit;\n"                   /* s3 */
		"  add.s32 %r9, %r9, 3;\n"    /* s4 */
		"  ret;\n"                    /* s5 */
		"}\n";
	static const Want x[] = {{1, 1, 1, 2, 2}};
	check_ranges(at_exit, 0, x, 1);
	/* empty: ret right after the phase; the cut with its epilogue is the
	 * phase alone */
	static const char empty[] =
		".version 8.7\n.target sm_89\n.address_size 64\n"
		".visible .entry e()\n{\n  .reg .b32 %r<40>;\n"
		"  mov.b32 %r1, 0;\n"         /* s0 */
		"  " MMA_R                     /* s1 */
		"  " MMA_R                     /* s2 */
		"  ret;\n"                    /* s3 */
		"}\n";
	static const Want e[] = {{1, 2, 2, 3, 2}};
	check_ranges(empty, 0, e, 1);
	/* no statement after the phase at all */
	static const char at_end[] =
		".version 8.7\n.target sm_89\n.address_size 64\n"
		".visible .entry z()\n{\n  .reg .b32 %r<40>;\n"
		"  mov.b32 %r1, 0;\n"         /* s0 */
		"  " MMA_R                     /* s1 */
		"}\n";
	static const Want z[] = {{1, 1, 1, 2, 1}};
	check_ranges(at_end, 0, z, 1);
}

static void test_phases__mma_queries(void **state)
{
	(void)state;
	Fix x;
	load(&x, ranges_src, 0);
	const Func *f = &x.m->funcs.v[0];
	assert_true(ana_func_has_mma(x.m, f));
	assert_int_equal(ana_mma_count(x.m, f, 0, 17), 6);
	assert_int_equal(ana_mma_count(x.m, f, 4, 5), 0);
	assert_int_equal(ana_mma_count(x.m, f, 3, 8), 3);
	assert_int_equal(ana_mma_first(x.m, f, 0, 17), 2);
	assert_int_equal(ana_mma_first(x.m, f, 9, 17), 12);
	assert_int_equal(ana_mma_first(x.m, f, 14, 17), -1);
	unload(&x);
	static const char none[] = ".version 8.7\n.target sm_89\n.address_size 64\n"
	                           ".visible .entry n()\n{\n  ret;\n}\n";
	load(&x, none, 0);
	assert_false(ana_func_has_mma(x.m, &x.m->funcs.v[0]));
	unload(&x);
}

/* On the enc4 stand-in, phase N's range from the flags (with and without
 * its epilogue, several gaps) is the range ana_phases reports. */
static void test_phases__range_agrees_enc4(void **state)
{
	(void)state;
	const char *top = getenv("D4R_TOP");
	char path[4096];
	snprintf(path, sizeof path, "%s/corpus/enc4/enc4.ptx", top ? top : ".");
	FILE *fp = fopen(path, "rb");
	if (!fp)
		skip();
	StrBuf src = STRBUF_INIT;
	char buf[1 << 16];
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, fp)) > 0)
		sb_addn(&src, buf, k);
	fclose(fp);
	Err e = ERR_INIT;
	Module *m = ptx_parse("enc4.ptx", src.p, src.n, &e);
	assert_non_null(m);
	size_t total = 0;
	for (unsigned gap = 0; gap <= 4; gap += 2) {
		for (size_t fi = 0; fi < m->funcs.n; fi++) {
			const Func *f = &m->funcs.v[fi];
			if (f->flags & FNF_DECL)
				continue;
			Dataflow *df = df_build(m, f, &e);
			assert_non_null(df);
			PhaseList pl;
			assert_int_equal(ana_phases(df, gap, &pl, &e), 0);
			for (size_t i = 0; i < pl.n; i++) {
				uint32_t a, b;
				assert_int_equal(ana_phase_range(m, f, gap, (uint32_t)i + 1, false, &a, &b, NULL), 0);
				assert_int_equal(a, pl.v[i].first);
				assert_int_equal(b, pl.v[i].last);
				assert_int_equal(ana_phase_range(m, f, gap, (uint32_t)i + 1, true, &a, &b, NULL), 0);
				assert_int_equal(a, pl.v[i].first);
				assert_int_equal(b, pl.v[i].epi_last >= pl.v[i].epi_first ? pl.v[i].epi_last
				                                                          : pl.v[i].last);
				assert_int_equal(ana_mma_count(m, f, pl.v[i].first, pl.v[i].last), pl.v[i].mma);
			}
			if (gap == 0)
				total += pl.n;
			phases_release(&pl);
			df_free(df);
		}
	}
	assert_int_equal(total, 62); /* the stand-in's phases (design: seed 002) */
	mod_free(m);
	sb_release(&src);
	err_release(&e);
}

/* Several functions on several threads: each gets exactly what a
 * one-by-one run gives it, in the order asked, whatever thread ran it. */
static void test_phases__many_functions_threads(void **state)
{
	(void)state;
	/* the kernel above, renamed k0..k5 and cut after 1 to 6 phases' worth
	 * of statements, so that the functions differ in size and phases */
	StrBuf src = STRBUF_INIT;
	sb_adds(&src, ".version 8.7\n.target sm_89\n.address_size 64\n");
	const char *body = strchr(kernel, '{');
	static const char *const ends[] = {
		"  " MMA "{%r46, %r47}, {%r14, %r15, %r16, %r17}, {%r22, %r23}, {%r30, %r30};\n",
		"  add.f16x2 %r80, %r72, %r73;\n",
		"  st.shared.u32 [%r4], %r95;\n",
	};
	for (int k = 0; k < 6; k++) {
		const char *end = strstr(body, ends[k % 3]) + strlen(ends[k % 3]);
		sb_addf(&src, ".visible .entry k%d(.param .align 8 .b8 k_param_0[144])\n", k);
		sb_addn(&src, body, (size_t)(end - body));
		sb_adds(&src, "  ret;\n}\n");
	}
	Err e = ERR_INIT;
	Module *m = ptx_parse("many.ptx", src.p, src.n, &e);
	assert_non_null(m);
	assert_int_equal(m->funcs.n, 6);
	const Func *fns[6];
	for (int k = 0; k < 6; k++)
		fns[k] = &m->funcs.v[5 - k]; /* not in module order */
	FuncPhases one[6], many[6];
	ana_phases_funcs(m, fns, 6, 0, 1, one);
	ana_phases_funcs(m, fns, 6, 0, 4, many);
	static const size_t nphases[3] = {1, 2, 3};
	for (int k = 0; k < 6; k++) {
		assert_ptr_equal(one[k].f, fns[k]);
		assert_ptr_equal(many[k].f, fns[k]);
		assert_int_equal(one[k].rc, 0);
		assert_int_equal(many[k].rc, 0);
		assert_int_equal(many[k].pl.n, nphases[(5 - k) % 3]);
		assert_int_equal(many[k].pl.n, one[k].pl.n);
		for (size_t i = 0; i < one[k].pl.n; i++) {
			const Phase *a = &one[k].pl.v[i], *b = &many[k].pl.v[i];
			assert_int_equal(a->first, b->first);
			assert_int_equal(a->last, b->last);
			assert_int_equal(a->mma, b->mma);
			assert_int_equal(a->a_kind, b->a_kind);
			assert_int_equal(a->c_kind, b->c_kind);
			assert_int_equal(a->c_from_phase, b->c_from_phase);
			assert_int_equal(a->epi_first, b->epi_first);
			assert_int_equal(a->epi_last, b->epi_last);
		}
	}
	/* phase 3 of a three-phase function takes C from phase 1 either way */
	assert_int_equal(many[0].pl.v[2].c_kind, CK_PHASE_ACC);
	assert_int_equal(many[0].pl.v[2].c_from_phase, 1);
	func_phases_release(one, 6);
	func_phases_release(many, 6);
	mod_free(m);
	sb_release(&src);
	err_release(&e);
}

/* ---- issue 11: chains, C and A kinds, B strides, on hand-written functions */

#define MMA16 "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#define HEAD90 ".version 8.7\n.target sm_90a\n.address_size 64\n"
#define A0 "{%r1, %r2, %r3, %r4}"
#define A1 "{%r5, %r6, %r7, %r8}"
#define B0 "{%r9, %r10}"
#define B1 "{%r11, %r12}"
/* the loads of the tiles above, s0..s4 */
#define TILES                                                                            \
	"  ld.param.u64 %rd1, [p0];\n"                                                   \
	"  ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"                             \
	"  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd1+16];\n"                          \
	"  ld.global.v2.u32 {%r9, %r10}, [%rd1+32];\n"                                   \
	"  ld.global.v2.u32 {%r11, %r12}, [%rd1+40];\n"
#define REGS                                                                             \
	"  .reg .pred %p<4>;\n  .reg .b32 %r<80>;\n  .reg .f32 %f<60>;\n  .reg .b64 "    \
	"%rd<10>;\n"

/* Loads function `name` of src and finds its phases. */
static void loadf(Fix *x, const char *src, unsigned gap, const char *name)
{
	Err e = ERR_INIT;
	x->m = ptx_parse("k.ptx", src, strlen(src), &e);
	if (!x->m)
		fail_msg("parse: %s", err_msg(&e));
	const Func *f = mod_func_find(x->m, str_c(name));
	assert_non_null(f);
	x->df = df_build(x->m, f, &e);
	assert_non_null(x->df);
	assert_int_equal(ana_phases(x->df, gap, &x->pl, &e), 0);
	err_release(&e);
}

/* Two in-place tiles, X (4 k-steps) and Y (3), their k-steps interleaved:
 * X1 Y1 X2 Y2 X3 Y3 X4.  Chains by reaching definition: X of 4 and Y of
 * 3, so k_chain_len 4 and 2 chains; the heads' C are zero through copies
 * (and a mov of the integer 0 into a .f32). */
static const char interleaved[] = HEAD90
    ".visible .entry k(.param .u64 p0)\n{\n" REGS TILES
    "  mov.f32 %f1, 0f00000000;\n" /* 5 */
    "  mov.f32 %f2, %f1;\n"        /* 6 */
    "  mov.f32 %f3, %f2;\n"        /* 7: a copy of a copy */
    "  mov.b32 %f4, 0;\n"          /* 8 */
    "  mov.f32 %f5, %f3;\n"        /* 9 */
    "  mov.f32 %f6, %f1;\n"        /* 10 */
    "  mov.f32 %f7, %f1;\n"        /* 11 */
    "  mov.f32 %f8, %f1;\n"        /* 12 */
    "  " MMA16 "{%f1, %f2, %f3, %f4}, " A0 ", " B0 ", {%f1, %f2, %f3, %f4};\n" /* 13 X1 */
    "  " MMA16 "{%f5, %f6, %f7, %f8}, " A1 ", " B0 ", {%f5, %f6, %f7, %f8};\n" /* 14 Y1 */
    "  " MMA16 "{%f1, %f2, %f3, %f4}, " A0 ", " B1 ", {%f1, %f2, %f3, %f4};\n" /* 15 X2 */
    "  " MMA16 "{%f5, %f6, %f7, %f8}, " A1 ", " B1 ", {%f5, %f6, %f7, %f8};\n" /* 16 Y2 */
    "  " MMA16 "{%f1, %f2, %f3, %f4}, " A0 ", " B0 ", {%f1, %f2, %f3, %f4};\n" /* 17 X3 */
    "  " MMA16 "{%f5, %f6, %f7, %f8}, " A1 ", " B0 ", {%f5, %f6, %f7, %f8};\n" /* 18 Y3 */
    "  " MMA16 "{%f1, %f2, %f3, %f4}, " A0 ", " B1 ", {%f1, %f2, %f3, %f4};\n" /* 19 X4 */
    "  st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};\n"
    "  st.global.v4.f32 [%rd1+16], {%f5, %f6, %f7, %f8};\n"
    "  ret;\n}\n";

static void test_phases__chains_by_reaching_definition(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, interleaved, 0, "k");
	assert_int_equal(x.pl.n, 1);
	const Phase *p = &x.pl.v[0];
	assert_int_equal(p->mma, 7);
	assert_int_equal(p->k_chain_len, 4);
	assert_int_equal(p->chains, 2);
	assert_int_equal(p->k, 64);
	assert_int_equal(p->m_tiles, 2);
	assert_int_equal(p->n_tiles, 2);
	assert_true(p->banded);
	assert_int_equal(p->c_kind, CK_ZERO);
	unload(&x);
}

/* Chains break where the value is not the D: a C register redefined
 * between two mma, a C tuple in another order than the D.  A statement
 * between them that touches neither does not break one.  (--gap 1) */
static const char broken[] = HEAD90
    ".visible .entry k(.param .u64 p0)\n{\n" REGS TILES
    "  mov.f32 %f1, 0f00000000;\n"                                             /* 5 */
    "  mov.f32 %f2, %f1;\n"                                                    /* 6 */
    "  mov.f32 %f3, %f1;\n"                                                    /* 7 */
    "  mov.f32 %f4, %f1;\n"                                                    /* 8 */
    "  ld.global.f32 %f9, [%rd1+48];\n"                                        /* 9 */
    "  " MMA16 "{%f1, %f2, %f3, %f4}, " A0 ", " B0 ", {%f1, %f2, %f3, %f4};\n" /* 10 a */
    "  add.s32 %r20, %r1, 1;\n"                                                /* 11 */
    "  " MMA16 "{%f1, %f2, %f3, %f4}, " A1 ", " B1
    ", {%f1, %f2, %f3, %f4};\n" /* 12 b: a's */
    "  mov.f32 %f2, %f9;\n"     /* 13 */
    "  " MMA16 "{%f1, %f2, %f3, %f4}, " A0 ", " B1
    ", {%f1, %f2, %f3, %f4};\n" /* 14 c: no */
    "  " MMA16 "{%f11, %f12, %f13, %f14}, " A1 ", " B0
    ", {%f2, %f1, %f3, %f4};\n" /* 15 d: no */
    "  st.global.v4.f32 [%rd1], {%f11, %f12, %f13, %f14};\n"
    "  ret;\n}\n";

static void test_phases__chains_break(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, broken, 1, "k");
	assert_int_equal(x.pl.n, 1);
	const Phase *p = &x.pl.v[0];
	assert_int_equal(p->mma, 4);
	assert_int_equal(p->k_chain_len, 2); /* a -> b */
	assert_int_equal(p->chains, 3);      /* a-b, c, d */
	/* heads: a zero; c reads b's D and a load, d c's D: not one kind */
	assert_int_equal(p->c_kind, CK_MIXED);
	unload(&x);
}

/* C of one head per phase; f16 accumulators (two .b32 registers). */
static const char cmovs[] = HEAD90
    ".visible .entry k(.param .u64 p0)\n{\n" REGS "  ld.param.u64 %rd1, [p0];\n" /* 0 */
    "  ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"                         /* 1 */
    "  ld.global.v2.u32 {%r5, %r6}, [%rd1+16];\n"                                /* 2 */
    "  ld.global.u32 %r7, [%rd1+24];\n"                                          /* 3 */
    "  setp.ne.s32 %p1, %r7, 0;\n"                                               /* 4 */
    "  mov.b32 %r10, 1;\n"                                                       /* 5 */
    "  " MMA "{%r40, %r41}, " A0 ", {%r5, %r6}, {%r10, %r10};\n" /* 6: p1 */
    "  mov.u32 %r11, 0;\n"                                       /* 7 */
    "  mov.u32 %r12, %r11;\n"                                    /* 8 */
    "  " MMA "{%r42, %r43}, " A0 ", {%r5, %r6}, {%r12, %r11};\n" /* 9: p2 */
    "  mov.u32 %r13, %r7;\n"                                     /* 10 */
    "  " MMA "{%r44, %r45}, " A0 ", {%r5, %r6}, {%r13, %r13};\n" /* 11: p3 */
    "  mov.u32 %r14, %tid.x;\n"                                  /* 12 */
    "  " MMA "{%r46, %r47}, " A0 ", {%r5, %r6}, {%r14, %r14};\n" /* 13: p4 */
    "  mov.b32 %r15, 0;\n"                                       /* 14 */
    "  @%p1 mov.b32 %r15, 1;\n"                                  /* 15 */
    "  " MMA "{%r48, %r49}, " A0 ", {%r5, %r6}, {%r15, %r15};\n" /* 16: p5 */
    "  @%p1 mov.b32 %r16, 0;\n"                                  /* 17 */
    "  " MMA "{%r50, %r51}, " A0 ", {%r5, %r6}, {%r16, %r16};\n" /* 18: p6 */
    "  mov.b32 %r17, 0;\n"                                       /* 19 */
    "  @%p1 mov.b32 %r17, 0;\n"                                  /* 20 */
    "  " MMA "{%r52, %r53}, " A0 ", {%r5, %r6}, {%r17, %r17};\n" /* 21: p7 */
    "  ret;\n}\n";

static void test_phases__c_zero_only_from_immediate_zero(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, cmovs, 0, "k");
	assert_int_equal(x.pl.n, 7);
	/* an integer mov of 1 */
	assert_int_equal(x.pl.v[0].c_kind, CK_COMPUTED);
	/* a copy of a mov of the immediate 0 */
	assert_int_equal(x.pl.v[1].c_kind, CK_ZERO);
	/* a copy of a loaded register: the load, its element offset */
	assert_int_equal(x.pl.v[2].c_kind, CK_LOADED);
	assert_int_equal(x.pl.v[2].c_space, SP_GLOBAL);
	assert_true(x.pl.v[2].c_bytes_known);
	assert_int_equal(x.pl.v[2].c_bytes.n, 1);
	assert_int_equal(x.pl.v[2].c_bytes.v[0], 24);
	/* a copy of %tid.x */
	assert_int_equal(x.pl.v[3].c_kind, CK_COMPUTED);
	/* zero, or 1 under a guard */
	assert_int_equal(x.pl.v[4].c_kind, CK_MIXED);
	/* 0 under a guard, undefined otherwise */
	assert_int_equal(x.pl.v[5].c_kind, CK_MIXED);
	/* zero on both paths */
	assert_int_equal(x.pl.v[6].c_kind, CK_ZERO);
	unload(&x);
}

/*
 * The C-kind rule by hand: C is zero only when every C register holds the
 * bits 0, from a mov of an immediate whose every bit is zero (0f00000000,
 * 0) or a copy of one; any other mov of an immediate is computed.  One
 * phase per accumulator (a statement that is not an mma between phases):
 *   p1 (s9):  f32 C {%f1, %f2, %f3, %f4}: s5 mov.f32 %f1, 0f00000000 (zero);
 *             s6 %f2 = copy of %f1 (zero); s7 mov.b32 %f3, 0 (the integer
 *             0: bits zero); s8 %f4 = copy of %f3 (zero)            -> zero
 *   p2 (s11): C {%f5 x4}, s10 mov.b32 %f5, 1 (bits 0x00000001)     -> computed
 *   p3 (s13): C {%f6 x4}, s12 mov.b32 %f6, 0x3F800000 (1.0f)       -> computed
 *   p4 (s15): C {%f7 x4}, s14 mov.f32 %f7, 0f80000000 (-0.0: the
 *             sign bit set)                                        -> computed
 *   p5 (s18): f16x2 C {%r20, %r21}: s16 mov.b32 %r20, 0 (zero), s17
 *             %r21 = copy of %r20 (zero)                           -> zero
 *   p6 (s20): f16x2 C {%r22, %r22}, s19 mov.u32 %r22, 7            -> computed
 */
static const char ckinds_hand[] = HEAD90
    ".visible .entry k(.param .u64 p0)\n{\n" REGS TILES
    "  mov.f32 %f1, 0f00000000;\n"                                             /* 5 */
    "  mov.f32 %f2, %f1;\n"                                                    /* 6 */
    "  mov.b32 %f3, 0;\n"                                                      /* 7 */
    "  mov.f32 %f4, %f3;\n"                                                    /* 8 */
    "  " MMA16 "{%f11, %f12, %f13, %f14}, " A0 ", " B0 ", {%f1, %f2, %f3, %f4};\n" /* 9 */
    "  mov.b32 %f5, 1;\n"                                                      /* 10 */
    "  " MMA16 "{%f15, %f16, %f17, %f18}, " A0 ", " B0 ", {%f5, %f5, %f5, %f5};\n" /* 11 */
    "  mov.b32 %f6, 0x3F800000;\n"                                             /* 12 */
    "  " MMA16 "{%f19, %f20, %f21, %f22}, " A0 ", " B0 ", {%f6, %f6, %f6, %f6};\n" /* 13 */
    "  mov.f32 %f7, 0f80000000;\n"                                             /* 14 */
    "  " MMA16 "{%f23, %f24, %f25, %f26}, " A0 ", " B0 ", {%f7, %f7, %f7, %f7};\n" /* 15 */
    "  mov.b32 %r20, 0;\n"                                                     /* 16 */
    "  mov.b32 %r21, %r20;\n"                                                  /* 17 */
    "  " MMA "{%r30, %r31}, " A0 ", " B0 ", {%r20, %r21};\n"                   /* 18 */
    "  mov.u32 %r22, 7;\n"                                                     /* 19 */
    "  " MMA "{%r32, %r33}, " A0 ", " B0 ", {%r22, %r22};\n"                   /* 20 */
    "  ret;\n}\n";

static void test_phases__c_kind_by_hand(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, ckinds_hand, 0, "k");
	static const struct {
		uint32_t first;
		CKind kind;
	} want[] = {{9, CK_ZERO},      {11, CK_COMPUTED}, {13, CK_COMPUTED},
	            {15, CK_COMPUTED}, {18, CK_ZERO},     {20, CK_COMPUTED}};
	assert_int_equal(x.pl.n, 6);
	for (size_t i = 0; i < 6; i++) {
		const Phase *p = &x.pl.v[i];
		if (p->first != want[i].first || p->c_kind != want[i].kind)
			fail_msg("phase %zu: s%u c_kind %s, expected s%u %s", i + 1, p->first,
			         ckind_name(p->c_kind), want[i].first, ckind_name(want[i].kind));
	}
	unload(&x);
}

/* An in-place chain of two in a loop: zero, or loaded, on entry. */
#define LOOP_BODY                                                                        \
	"$L_loop:\n"                                                                     \
	"  ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd1];\n"                         \
	"  ld.global.v2.u32 {%r14, %r15}, [%rd1+16];\n"                                  \
	"  " MMA "{%r1, %r2}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%r1, %r2};\n"     \
	"  " MMA "{%r1, %r2}, {%r10, %r11, %r12, %r13}, {%r15, %r14}, {%r1, %r2};\n"     \
	"  add.s32 %r31, %r31, 1;\n"                                                     \
	"  setp.lt.s32 %p1, %r31, %r30;\n"                                               \
	"  @%p1 bra $L_loop;\n"                                                          \
	"  st.global.v2.u32 [%rd1], {%r1, %r2};\n"                                       \
	"  ret;\n}\n"
static const char loops[] =
    HEAD90 ".visible .entry zero(.param .u64 p0, .param .u32 p1)\n{\n" REGS
           "  ld.param.u64 %rd1, [p0];\n"
           "  ld.param.u32 %r30, [p1];\n"
           "  mov.b32 %r1, 0;\n"
           "  mov.b32 %r2, %r1;\n"
           "  mov.u32 %r31, 0;\n" LOOP_BODY
           ".visible .entry loaded(.param .u64 p0, .param .u32 p1)\n{\n" REGS
           "  ld.param.u64 %rd1, [p0];\n"
           "  ld.param.u32 %r30, [p1];\n"
           "  ld.global.v2.u32 {%r1, %r2}, [%rd1+64];\n"
           "  mov.u32 %r31, 0;\n" LOOP_BODY;

static void test_phases__loop_carried(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, loops, 0, "zero");
	assert_int_equal(x.pl.n, 1);
	assert_int_equal(x.pl.v[0].k_chain_len, 2);
	assert_int_equal(x.pl.v[0].chains, 1);
	assert_int_equal(x.pl.v[0].c_kind, CK_LOOP_CARRIED);
	assert_int_equal(x.pl.v[0].c_from_phase, 1);
	assert_int_equal(x.pl.v[0].c_entry_kind, CK_ZERO);
	unload(&x);
	loadf(&x, loops, 0, "loaded");
	assert_int_equal(x.pl.v[0].c_kind, CK_LOOP_CARRIED);
	assert_int_equal(x.pl.v[0].c_entry_kind, CK_LOADED);
	assert_int_equal(x.pl.v[0].c_entry_space, SP_GLOBAL);
	unload(&x);
}

/* Both mma under @%p1, the second reading the first's D: a chain (when
 * the first executes the second reads its D).  D of the first differs
 * from its C: the old D is live into a cut of the first alone. */
static const char guarded[] =
    HEAD90 ".visible .entry k(.param .u64 p0)\n{\n" REGS TILES
           "  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd1+64];\n" /* 5 */
           "  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+80];\n" /* 6 */
           "  ld.global.u32 %r20, [%rd1+96];\n"                    /* 7 */
           "  setp.ne.s32 %p1, %r20, 0;\n"                         /* 8 */
           "  @%p1 " MMA16 "{%f1, %f2, %f3, %f4}, " A0 ", " B0
           ", {%f5, %f6, %f7, %f8};\n" /* 9 */
           "  @%p1 " MMA16 "{%f1, %f2, %f3, %f4}, " A1 ", " B1
           ", {%f1, %f2, %f3, %f4};\n" /* 10 */
           "  st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};\n"
           "  ret;\n}\n";

static void test_phases__guarded_mma(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, guarded, 0, "k");
	const Phase *p = &x.pl.v[0];
	assert_int_equal(p->k_chain_len, 2);
	assert_int_equal(p->chains, 1);
	assert_int_equal(p->c_kind, CK_LOADED);
	assert_int_equal(p->c_bytes.n, 4);
	assert_int_equal(p->c_bytes.v[0], 64);
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 9, 9, &c, &e), 0);
	/* %p1, A 4, B 2, C 4, and D 4 through the guarded write */
	assert_int_equal(c.live_in.n, 15);
	unsigned through = 0;
	for (size_t i = 0; i < c.live_in.n; i++)
		through += c.live_in.v[i].through;
	assert_int_equal(through, 4);
	assert_int_equal(c.live_out.n, 4);
	cut_release(&c);
	err_release(&e);
	unload(&x);
}

/* wgmma: the first with scale-d 0 reads no accumulator (a chain head, C
 * zero), the next two read it in place; A through descriptors. */
#define WGMMA "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, "
static const char wgmma[] = HEAD90 ".visible .entry k(.param .u64 p0)\n{\n" REGS
                                   "  ld.param.u64 %rd1, [p0];\n"            /* 0 */
                                   "  add.s64 %rd2, %rd1, 2;\n"              /* 1 */
                                   "  add.s64 %rd3, %rd1, 4;\n"              /* 2 */
                                   "  add.s64 %rd4, %rd1, 6;\n"              /* 3 */
                                   "  wgmma.fence.sync.aligned;\n"           /* 4 */
                                   "  " WGMMA "%rd2, %rd3, 0, 1, 1, 0, 0;\n" /* 5 */
                                   "  " WGMMA "%rd4, %rd3, 1, 1, 1, 0, 0;\n" /* 6 */
                                   "  " WGMMA "%rd2, %rd4, 1, 1, 1, 0, 0;\n" /* 7 */
                                   "  wgmma.commit_group.sync.aligned;\n"
                                   "  wgmma.wait_group.sync.aligned 0;\n"
                                   "  st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};\n"
                                   "  ret;\n}\n";

static void test_phases__wgmma_scale_d_and_descriptors(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, wgmma, 0, "k");
	const Phase *p = &x.pl.v[0];
	assert_int_equal(p->mma, 3);
	assert_int_equal(p->k_chain_len, 3);
	assert_int_equal(p->chains, 1);
	assert_int_equal(p->c_kind, CK_ZERO);
	assert_int_equal(p->a_kind, AK_SHARED);
	assert_true(p->a_descriptor);
	assert_false(p->b_loaded);
	unload(&x);
}

/* A kinds by the space each load reads, and through permutations. */
static const char akinds[] = HEAD90
    ".visible .entry k(.param .u64 p0)\n{\n" REGS "  .shared .align 16 .b8 arena[4096];\n"
    "  .local .align 16 .b8 stk[64];\n"
    "  ld.param.u64 %rd1, [p0];\n"                         /* 0 */
    "  ld.global.v2.u32 {%r5, %r6}, [%rd1+16];\n"          /* 1 */
    "  mov.b32 %r9, 0;\n"                                  /* 2 */
    "  ld.local.v4.u32 {%r10, %r11, %r12, %r13}, [stk];\n" /* 3 */
    "  " MMA
    "{%r40, %r41}, {%r10, %r11, %r12, %r13}, {%r5, %r6}, {%r9, %r9};\n" /* 4: p1 */
    "  mov.u64 %rd2, arena;\n"                                          /* 5 */
    "  cvta.shared.u64 %rd3, %rd2;\n"                                   /* 6 */
    "  ld.v4.u32 {%r14, %r15, %r16, %r17}, [%rd3+32];\n"                /* 7 */
    "  " MMA
    "{%r40, %r41}, {%r14, %r15, %r16, %r17}, {%r5, %r6}, {%r9, %r9};\n" /* 8: p2 */
    "  ld.v4.u32 {%r18, %r19, %r20, %r21}, [%rd1];\n"                   /* 9 */
    "  " MMA
    "{%r40, %r41}, {%r18, %r19, %r20, %r21}, {%r5, %r6}, {%r9, %r9};\n" /* 10: p3 */
    "  ld.shared.u32 %r22, [arena];\n"                                  /* 11 */
    "  ld.shared.u32 %r23, [arena+4];\n"                                /* 12 */
    "  prmt.b32 %r24, %r22, %r23, 0x5410;\n"                            /* 13 */
    "  " MMA
    "{%r40, %r41}, {%r24, %r24, %r24, %r24}, {%r5, %r6}, {%r9, %r9};\n" /* 14: p4 */
    "  ld.global.u32 %r25, [%rd1+64];\n"                                /* 15 */
    "  prmt.b32 %r26, %r22, %r25, 0x5410;\n"                            /* 16 */
    "  " MMA
    "{%r40, %r41}, {%r26, %r26, %r26, %r26}, {%r5, %r6}, {%r9, %r9};\n" /* 17: p5 */
    "  ret;\n}\n";

static void test_phases__a_kinds_by_space(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, akinds, 0, "k");
	assert_int_equal(x.pl.n, 5);
	assert_int_equal(x.pl.v[0].a_kind, AK_LOADED);
	assert_int_equal(x.pl.v[0].a_space, SP_LOCAL);
	/* a generic load whose address is a shared symbol's (cvta) */
	assert_int_equal(x.pl.v[1].a_kind, AK_SHARED);
	assert_int_equal(x.pl.v[1].a_offsets.n, 1);
	assert_int_equal(x.pl.v[1].a_offsets.v[0], 32);
	/* a generic load through a pointer parameter: the space is not known */
	assert_int_equal(x.pl.v[2].a_kind, AK_GENERIC);
	/* prmt of two shared words: shared, the permutation noted */
	assert_int_equal(x.pl.v[3].a_kind, AK_SHARED);
	assert_int_equal(x.pl.v[3].a_nthrough, 1);
	assert_true(str_eqc(x.pl.v[3].a_through[0], "prmt.b32"));
	assert_int_equal(x.pl.v[3].a_through_evidence, 13);
	assert_int_equal(x.pl.v[3].a_offsets.n, 2);
	/* prmt of a shared and a global word: no one space */
	assert_int_equal(x.pl.v[4].a_kind, AK_COMPUTED);
	assert_int_equal(x.pl.v[4].a_nthrough, 0);
	unload(&x);
}

/* wmma.load is a load with its space; a fragment's element bytes are not
 * the address plus 4 per register. */
static const char wmma[] = HEAD90
    ".visible .entry k(.param .u64 p0)\n{\n" REGS "  .shared .align 16 .b8 sa[4096];\n"
    "  ld.param.u64 %rd1, [p0];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, 16;\n"
    "  mov.u64 %rd3, sa;\n"
    "  wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r2, %r3, %r4, %r5, %r6, %r7, "
    "%r8, "
    "%r9}, [%rd3], %r1;\n"
    "  wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%r10, %r11, %r12, %r13, %r14, "
    "%r15, "
    "%r16, %r17}, [%rd2], %r1;\n"
    "  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f1, %f2, %f3, %f4, %f5, %f6, "
    "%f7, "
    "%f8}, [%rd2+512], %r1;\n"
    "  wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f9, %f10, %f11, %f12, %f13, "
    "%f14, "
    "%f15, %f16}, {%r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9}, {%r10, %r11, %r12, %r13, "
    "%r14, "
    "%r15, %r16, %r17}, {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};\n"
    "  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd2], {%f9, %f10, %f11, "
    "%f12, "
    "%f13, %f14, %f15, %f16}, %r1;\n"
    "  ret;\n}\n";

static void test_phases__wmma_loads(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, wmma, 0, "k");
	const Phase *p = &x.pl.v[0];
	assert_int_equal(p->a_kind, AK_SHARED);
	assert_int_equal(p->c_kind, CK_LOADED);
	assert_int_equal(p->c_space, SP_GLOBAL);
	assert_false(p->c_bytes_known);
	assert_int_equal(p->c_bytes.n, 0);
	assert_false(p->b_loaded);
	unload(&x);
}

/* C loaded from two spaces: one kind of value, "loaded", but not one place
 * a template could load it again from, so mixed.  Three phases (a mov
 * between them): C half global and half shared, in both orders, then all
 * global from two loads at p0+64 and p0+72 (elements at 64, 68, 72, 76). */
static const char cspaces[] = HEAD90
    ".visible .entry k(.param .u64 p0)\n{\n" REGS
    "  .shared .align 16 .b8 cbuf[64];\n" TILES
    "  ld.global.v2.f32 {%f1, %f2}, [%rd1+64];\n"                              /* 5 */
    "  mov.u32 %r20, cbuf;\n"                                                  /* 6 */
    "  ld.shared.v2.f32 {%f3, %f4}, [%r20];\n"                                 /* 7 */
    "  ld.global.v2.f32 {%f5, %f6}, [%rd1+72];\n"                              /* 8 */
    "  " MMA16 "{%f11, %f12, %f13, %f14}, " A0 ", " B0 ", {%f1, %f2, %f3, %f4};\n" /* 9 */
    "  mov.u32 %r21, 1;\n"                                                     /* 10 */
    "  " MMA16 "{%f15, %f16, %f17, %f18}, " A0 ", " B0 ", {%f3, %f4, %f1, %f2};\n" /* 11 */
    "  mov.u32 %r22, 2;\n"                                                     /* 12 */
    "  " MMA16 "{%f19, %f20, %f21, %f22}, " A0 ", " B0 ", {%f1, %f2, %f5, %f6};\n" /* 13 */
    "  st.global.v4.f32 [%rd1], {%f11, %f12, %f13, %f14};\n"
    "  st.global.v4.f32 [%rd1+16], {%f15, %f16, %f17, %f18};\n"
    "  st.global.v4.f32 [%rd1+32], {%f19, %f20, %f21, %f22};\n"
    "  ret;\n}\n";

static void test_phases__c_loaded_from_two_spaces_is_mixed(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, cspaces, 0, "k");
	assert_int_equal(x.pl.n, 3);
	/* global then shared, shared then global */
	assert_int_equal(x.pl.v[0].c_kind, CK_MIXED);
	assert_false(x.pl.v[0].c_bytes_known);
	assert_int_equal(x.pl.v[1].c_kind, CK_MIXED);
	/* global only, from two loads: loaded, every element's offset */
	assert_int_equal(x.pl.v[2].c_kind, CK_LOADED);
	assert_int_equal(x.pl.v[2].c_space, SP_GLOBAL);
	assert_true(x.pl.v[2].c_bytes_known);
	assert_int_equal(x.pl.v[2].c_bytes.n, 4);
	assert_int_equal(x.pl.v[2].c_bytes.v[0], 64);
	assert_int_equal(x.pl.v[2].c_bytes.v[1], 68);
	assert_int_equal(x.pl.v[2].c_bytes.v[2], 72);
	assert_int_equal(x.pl.v[2].c_bytes.v[3], 76);
	unload(&x);
}

/* B at param_1 + 8 tid.x + 256 and + 260: said with its stride; B from
 * the thread's stack: not followed. */
static const char bstride[] = HEAD90
    ".visible .entry k(.param .u64 p0, .param .u64 k_param_1)\n{\n" REGS
    "  .local .align 16 .b8 stk[64];\n" TILES "  ld.param.u64 %rd2, [k_param_1];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mov.u32 %r20, %tid.x;\n"
    "  shl.b32 %r21, %r20, 1;\n"
    "  mul.wide.s32 %rd4, %r21, 4;\n"
    "  add.s64 %rd5, %rd3, %rd4;\n"
    "  ld.global.u32 %r22, [%rd5+256];\n"
    "  ld.global.u32 %r23, [%rd5+260];\n"
    "  mov.f32 %f1, 0f00000000;\n"
    "  " MMA16 "{%f5, %f6, %f7, %f8}, " A0 ", {%r22, %r23}, {%f1, %f1, %f1, %f1};\n"
    "  ld.local.v2.u32 {%r24, %r25}, [stk];\n"
    "  " MMA16 "{%f5, %f6, %f7, %f8}, " A0 ", {%r24, %r25}, {%f1, %f1, %f1, %f1};\n"
    "  ret;\n}\n";

static void test_phases__b_stride(void **state)
{
	(void)state;
	Fix x;
	loadf(&x, bstride, 0, "k");
	assert_int_equal(x.pl.n, 2);
	const Phase *p = &x.pl.v[0];
	assert_true(p->b_loaded);
	assert_true(str_eqc(p->b_base, "k_param_1"));
	assert_int_equal(p->b_lo, 256);
	assert_int_equal(p->b_hi, 260);
	assert_true(p->b_stride_known);
	assert_int_equal(p->b_nstride, 1);
	assert_true(str_eqc(p->b_stride[0].reg, "%tid.x"));
	assert_int_equal(p->b_stride[0].bytes, 8);
	assert_false(x.pl.v[1].b_loaded);
	unload(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phases__gemm_fields),
		cmocka_unit_test(test_phases__epilogues),
		cmocka_unit_test(test_phases__operand_sources),
		cmocka_unit_test(test_phases__gap),
		cmocka_unit_test(test_phases__no_mma),
		cmocka_unit_test(test_phases__ranges),
		cmocka_unit_test(test_phases__last_epilogue_ends),
		cmocka_unit_test(test_phases__mma_queries),
		cmocka_unit_test(test_phases__range_agrees_enc4),
		cmocka_unit_test(test_phases__many_functions_threads),
		cmocka_unit_test(test_phases__chains_by_reaching_definition),
		cmocka_unit_test(test_phases__chains_break),
		cmocka_unit_test(test_phases__c_zero_only_from_immediate_zero),
		cmocka_unit_test(test_phases__c_kind_by_hand),
		cmocka_unit_test(test_phases__loop_carried),
		cmocka_unit_test(test_phases__guarded_mma),
		cmocka_unit_test(test_phases__wgmma_scale_d_and_descriptors),
		cmocka_unit_test(test_phases__a_kinds_by_space),
		cmocka_unit_test(test_phases__wmma_loads),
		cmocka_unit_test(test_phases__c_loaded_from_two_spaces_is_mixed),
		cmocka_unit_test(test_phases__b_stride),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
