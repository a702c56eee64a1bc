/*
 * test_addr.c - address tracking through each instruction kind it follows,
 * and the cases where it must stop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana/ana.h"
#include "ptx/parse.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	Module *m;
	Dataflow *df;
} Fx;

#define HEAD ".version 8.7\n.target sm_90a\n.address_size 64\n"
#define ENTRY ".visible .entry k(.param .align 8 .b8 k_p0[144], .param .u64 k_p1)\n{\n" \
	"\t.reg .pred %p<4>;\n\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<60>;\n\t.reg .b64 %rd<60>;\n"

static Fx fx(const char *src)
{
	Err e = ERR_INIT;
	Fx x = {0};
	x.m = ptx_parse("t.ptx", src, strlen(src), &e);
	if (!x.m)
		fail_msg("parse: %s", err_msg(&e));
	const Func *f = mod_func_find(x.m, str_c("k"));
	assert_non_null(f);
	x.df = df_build(x.m, f, &e);
	if (!x.df)
		fail_msg("df_build: %s", err_msg(&e));
	err_release(&e);
	return x;
}

static void fx_free(Fx *x)
{
	df_free(x->df);
	mod_free(x->m);
}

static Addr resolve(const Fx *x, uint32_t stmt, int want_rc)
{
	Addr a;
	int rc = addr_resolve(x->df, stmt, &a);
	if (rc != want_rc)
		fail_msg("s%u: addr_resolve returned %d, expected %d (%s)", stmt, rc, want_rc,
		         a.why ? a.why : "-");
	return a;
}

static void test_addr__param_struct_field_pointer(void **state)
{
	Fx x = fx(HEAD ENTRY
	          "\tld.param.u64 %rd1, [k_p0+40];\n"            /* 0 */
	          "\tcvta.to.global.u64 %rd2, %rd1;\n"           /* 1 */
	          "\tmov.u32 %r1, %tid.x;\n"                     /* 2 */
	          "\tmul.wide.u32 %rd3, %r1, 16;\n"              /* 3 */
	          "\tadd.s64 %rd4, %rd2, %rd3;\n"                /* 4 */
	          "\tld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4+320];\n" /* 5 */
	          "\tld.global.u8 %r6, [%rd2+7];\n"              /* 6 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 5, 1);
	assert_int_equal(a.base, AB_PARAM);
	assert_true(str_eqc(a.base_name, "k_p0"));
	assert_true(a.param_ptr);
	assert_int_equal(a.param_off, 40);
	assert_int_equal(a.offset, 320);
	assert_true(a.variable);
	assert_int_equal(a.space, SP_GLOBAL);
	assert_int_equal(a.elem_bytes, 4);
	assert_int_equal(a.nelem, 4);
	a = resolve(&x, 6, 1);
	assert_false(a.variable);
	assert_int_equal(a.offset, 7);
	assert_int_equal(a.elem_bytes, 1);
	/* the ld.param itself: inside the parameter */
	a = resolve(&x, 0, 1);
	assert_int_equal(a.base, AB_PARAM);
	assert_false(a.param_ptr);
	assert_int_equal(a.offset, 40);
	assert_int_equal(a.space, SP_PARAM);
	assert_int_equal(a.elem_bytes, 8);
	/* not a memory statement */
	resolve(&x, 2, -1);
	(void)state;
	fx_free(&x);
}

static void test_addr__param_address_via_mov(void **state)
{
	Fx x = fx(HEAD ENTRY
	          "\tmov.b64 %rd1, k_p0;\n"                      /* 0 */
	          "\tld.param.u32 %r1, [%rd1+12];\n"             /* 1 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 1, 1);
	assert_int_equal(a.base, AB_PARAM);
	assert_false(a.param_ptr);
	assert_int_equal(a.offset, 12);
	assert_false(a.variable);
	(void)state;
	fx_free(&x);
}

static void test_addr__shl_mad_add_immediates(void **state)
{
	Fx x = fx(HEAD ENTRY
	          "\tld.param.u64 %rd1, [k_p1];\n"                /* 0 */
	          "\tmov.u32 %r1, %laneid;\n"                    /* 1 */
	          "\tshl.b32 %r2, %r1, 3;\n"                     /* 2 */
	          "\tcvt.u64.u32 %rd2, %r2;\n"                   /* 3 */
	          "\tadd.s64 %rd3, %rd1, %rd2;\n"                /* 4 */
	          "\tadd.s64 %rd4, %rd3, 64;\n"                  /* 5 */
	          "\tsub.s64 %rd5, %rd4, 16;\n"                  /* 6 */
	          "\tst.global.u64 [%rd5+8], %rd1;\n"            /* 7 */
	          "\tmov.u32 %r3, %ctaid.x;\n"                   /* 8 */
	          "\tmad.wide.u32 %rd6, %r3, 256, %rd1;\n"       /* 9 */
	          "\tld.global.f32 %r4, [%rd6+4];\n"             /* 10 */
	          "\tmov.u32 %r5, 3;\n"                          /* 11 */
	          "\tshl.b32 %r6, %r5, 4;\n"                     /* 12 */
	          "\tmad.lo.s32 %r7, %r6, 2, 1;\n"               /* 13 */
	          "\tcvt.u64.u32 %rd7, %r7;\n"                   /* 14 */
	          "\tadd.s64 %rd8, %rd1, %rd7;\n"                /* 15 */
	          "\tld.global.u32 %r8, [%rd8];\n"               /* 16 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 7, 1);
	assert_int_equal(a.base, AB_PARAM);
	assert_true(str_eqc(a.base_name, "k_p1"));
	assert_int_equal(a.param_off, 0);
	assert_int_equal(a.offset, 56);
	assert_true(a.variable);
	assert_int_equal(a.space, SP_GLOBAL);
	a = resolve(&x, 10, 1);
	assert_int_equal(a.base, AB_PARAM);
	assert_int_equal(a.offset, 4);
	assert_true(a.variable);
	/* constants fold: 3 << 4 = 48, 48 * 2 + 1 = 97 */
	a = resolve(&x, 16, 1);
	assert_int_equal(a.offset, 97);
	assert_false(a.variable);
	(void)state;
	fx_free(&x);
}

static void test_addr__shared_symbols_and_cvta(void **state)
{
	Fx x = fx(HEAD ".shared .align 16 .b8 smem_a[4096];\n.shared .align 16 .b8 smem_b[4096];\n"
	          ENTRY
	          "\tmov.u64 %rd1, smem_a;\n"                    /* 0 */
	          "\tcvta.shared.u64 %rd2, %rd1;\n"              /* 1 */
	          "\tld.u32 %r1, [%rd2+128];\n"                  /* 2: generic, from shared */
	          "\tmov.u32 %r2, smem_b;\n"                     /* 3 */
	          "\tmov.u32 %r3, %tid.x;\n"                     /* 4 */
	          "\tshl.b32 %r4, %r3, 4;\n"                     /* 5 */
	          "\tadd.s32 %r5, %r2, %r4;\n"                   /* 6 */
	          "\tldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r6, %r7, %r8, %r9}, [%r5+512];\n" /* 7 */
	          "\tst.shared.u32 [smem_a+64], %r1;\n"          /* 8 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 2, 1);
	assert_int_equal(a.base, AB_SYMBOL);
	assert_true(str_eqc(a.base_name, "smem_a"));
	assert_int_equal(a.space, SP_SHARED);
	assert_int_equal(a.offset, 128);
	Addr b = resolve(&x, 7, 1);
	assert_int_equal(b.base, AB_SYMBOL);
	assert_true(str_eqc(b.base_name, "smem_b"));
	assert_int_equal(b.offset, 512);
	assert_true(b.variable);
	assert_int_equal(b.elem_bytes, 4);
	assert_int_equal(b.nelem, 4);
	Addr c = resolve(&x, 8, 1);
	assert_int_equal(c.offset, 64);
	assert_false(c.variable);
	/* different variables never overlap; same variable, other bytes */
	assert_true(addr_disjoint(&a, &b));
	assert_true(addr_disjoint(&a, &c));
	(void)state;
	fx_free(&x);
}

static void test_addr__special_registers_only(void **state)
{
	Fx x = fx(HEAD ENTRY
	          "\tmov.u32 %r1, %tid.x;\n"                     /* 0 */
	          "\tshl.b32 %r2, %r1, 2;\n"                     /* 1 */
	          "\tld.shared.u32 %r3, [%r2+16];\n"             /* 2 */
	          "\tld.shared.u32 %r4, [1024];\n"               /* 3 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 2, 1);
	assert_int_equal(a.base, AB_SPECIAL);
	assert_true(a.variable);
	assert_int_equal(a.offset, 16);
	assert_true(a.var_key != 0);
	a = resolve(&x, 3, 1);
	assert_int_equal(a.base, AB_ABSOLUTE);
	assert_int_equal(a.offset, 1024);
	(void)state;
	fx_free(&x);
}

static void test_addr__stops_without_guessing(void **state)
{
	Fx x = fx(HEAD ENTRY
	          "\tld.param.u64 %rd1, [k_p1];\n"                /* 0 */
	          "\tld.global.u64 %rd2, [%rd1];\n"              /* 1 */
	          "\tld.global.u32 %r1, [%rd2+8];\n"             /* 2: pointer loaded from memory */
	          "\tsetp.eq.s32 %p1, %r1, 0;\n"                 /* 3 */
	          "\tmov.u64 %rd3, %rd1;\n"                      /* 4 */
	          "\t@%p1 add.s64 %rd3, %rd1, 64;\n"             /* 5 */
	          "\tld.global.u32 %r2, [%rd3];\n"               /* 6: two definitions reach */
	          "\tld.global.u32 %r3, [%rd9];\n"               /* 7: never defined */
	          "\tadd.s64 %rd4, %rd1, %rd1;\n"                /* 8 */
	          "\tld.global.u32 %r4, [%rd4];\n"               /* 9: two bases */
	          "\tmul.lo.s64 %rd5, %rd1, 4;\n"                /* 10 */
	          "\tld.global.u32 %r5, [%rd5];\n"               /* 11: no base left */
	          "\tadd.s64 %rd6, %rd1, 8;\n"                   /* 12 */
	          "\tshl.b64 %rd7, %rd6, 2;\n"                   /* 13 */
	          "\tld.global.u32 %r6, [%rd7];\n"               /* 14: scaled pointer */
	          "\tmov.b64 {%r7, %r8}, %rd1;\n"                /* 15 */
	          "\tld.shared.u32 %r9, [%r7];\n"                /* 16: unpacked */
	          "\tld.global.f32 %r10, [%rd1+0f3F800000];\n"   /* 17 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 2, 0);
	assert_int_equal(a.base, AB_NONE);
	assert_non_null(strstr(a.why, "loaded from memory"));
	a = resolve(&x, 6, 0);
	assert_non_null(strstr(a.why, "several definitions"));
	a = resolve(&x, 7, 0);
	assert_non_null(strstr(a.why, "no definition"));
	a = resolve(&x, 9, 0);
	assert_non_null(strstr(a.why, "two bases"));
	a = resolve(&x, 11, 0);
	assert_non_null(strstr(a.why, "no base"));
	a = resolve(&x, 14, 0);
	assert_non_null(strstr(a.why, "pointer"));
	a = resolve(&x, 16, 0);
	assert_non_null(strstr(a.why, "unpacked"));
	a = resolve(&x, 17, 0);
	assert_non_null(strstr(a.why, "floating"));
	(void)state;
	fx_free(&x);
}

static void test_addr__integer_params_vectors_shfl_cvt(void **state)
{
	Fx x = fx(HEAD ENTRY
	          "\tmov.b64 %rd1, k_p0;\n"                      /* 0 */
	          "\tld.param.v2.u64 {%rd2, %rd3}, [%rd1+16];\n" /* 1: two pointers */
	          "\tld.param.u64 %rd4, [%rd1+120];\n"           /* 2: a 64-bit stride */
	          "\tmov.u32 %r1, %ctaid.y;\n"                  /* 3 */
	          "\tcvt.u64.u32 %rd5, %r1;\n"                  /* 4 */
	          "\tmul.lo.s64 %rd6, %rd4, %rd5;\n"            /* 5 */
	          "\tadd.s64 %rd7, %rd3, %rd6;\n"               /* 6 */
	          "\tld.global.u32 %r2, [%rd7+12];\n"           /* 7 */
	          "\tshfl.sync.idx.b32 %r3|%p1, %r1, 0, 31, -1;\n" /* 8 */
	          "\tmul.wide.u32 %rd8, %r3, 4;\n"              /* 9 */
	          "\tadd.s64 %rd9, %rd2, %rd8;\n"               /* 10 */
	          "\tst.global.u32 [%rd9], %r2;\n"              /* 11 */
	          "\tcvt.u16.u32 %rs1, %r1;\n"                  /* 12 */
	          "\tld.param.v2.u32 {%r4, %r5}, [%rd1];\n"      /* 13 */
	          "\tadd.s32 %r6, %r4, 8;\n"                    /* 14 */
	          "\tld.shared.u32 %r7, [%r6];\n"               /* 15 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 7, 1);
	assert_int_equal(a.base, AB_PARAM);
	assert_true(a.param_ptr);
	assert_int_equal(a.param_off, 24); /* the second element of +16 */
	assert_int_equal(a.offset, 12);
	assert_true(a.variable);
	a = resolve(&x, 11, 1);
	assert_int_equal(a.param_off, 16);
	assert_int_equal(a.offset, 0);
	assert_true(a.variable);
	/* an integer parameter is no base */
	a = resolve(&x, 15, 0);
	assert_non_null(strstr(a.why, "no base"));
	(void)state;
	fx_free(&x);
}

static void test_addr__deep_chain_stops(void **state)
{
	StrBuf src = STRBUF_INIT;
	sb_adds(&src, HEAD ENTRY "\tld.param.u64 %rd1, [k_p1];\n");
	/* 70 adds: %rd(i+1) = %rd(i) + 4; 60 registers are declared, so use
	 * the ones of a larger range */
	sb_adds(&src, "\t.reg .b64 %q<100>;\n\tmov.b64 %q0, %rd1;\n");
	for (int i = 0; i < 70; i++)
		sb_addf(&src, "\tadd.s64 %%q%d, %%q%d, 4;\n", i + 1, i);
	sb_adds(&src, "\tld.global.u32 %r1, [%q70];\n\tld.global.u32 %r2, [%q40];\n\tret;\n}\n");
	Fx x = fx(src.p);
	Addr a = resolve(&x, 72, 0);
	assert_non_null(strstr(a.why, "deeper than 64"));
	a = resolve(&x, 73, 1);
	assert_int_equal(a.offset, 160);
	assert_true(a.param_ptr);
	(void)state;
	fx_free(&x);
	sb_release(&src);
}

/* addr_cached: the resolved Addr, kept for the life of the Dataflow (the
 * same pointer each time), NULL for what did not resolve or is no memory
 * access. */
static void test_addr__cached(void **state)
{
	Fx x = fx(HEAD ENTRY
	          "\tld.param.u64 %rd1, [k_p0+40];\n"            /* 0 */
	          "\tld.global.u32 %r1, [%rd1+8];\n"             /* 1 */
	          "\tld.global.u32 %r2, [%rd9];\n"               /* 2: %rd9 never defined */
	          "\tmov.u32 %r3, %r1;\n"                        /* 3 */
	          "\tret;\n}\n");
	const Addr *a = addr_cached(x.df, 1);
	assert_non_null(a);
	assert_int_equal(a->base, AB_PARAM);
	assert_int_equal(a->param_off, 40);
	assert_int_equal(a->offset, 8);
	assert_ptr_equal(addr_cached(x.df, 1), a);
	Addr b = resolve(&x, 1, 1);
	assert_int_equal(b.offset, a->offset);
	assert_null(addr_cached(x.df, 2));
	resolve(&x, 2, 0);
	assert_null(addr_cached(x.df, 3));
	assert_null(addr_cached(x.df, 99));
	(void)state;
	fx_free(&x);
}

/* ---- strides of special registers -------------------------------------- */

/* The stride of `name` in a, or 0 when it has none. */
static int64_t stride_of(const Fx *x, const Addr *a, const char *name)
{
	for (unsigned i = 0; i < a->nstride; i++)
		if (str_eqc(df_reg(x->df, a->stride[i].reg)->name, name))
			return a->stride[i].bytes;
	return 0;
}

static void test_addr__strides_exact(void **state)
{
	/* each address worked out by hand from the instructions */
	Fx x = fx(HEAD ENTRY
	          "\tld.param.u64 %rd1, [k_p1];\n"      /* 0 */
	          "\tcvta.to.global.u64 %rd2, %rd1;\n"  /* 1 */
	          "\tmov.u32 %r1, %tid.x;\n"            /* 2 */
	          "\tshl.b32 %r2, %r1, 1;\n"            /* 3: 2 tid */
	          "\tmul.wide.s32 %rd3, %r2, 4;\n"      /* 4: 8 tid */
	          "\tadd.s64 %rd4, %rd2, %rd3;\n"       /* 5 */
	          "\tld.global.u32 %r3, [%rd4+256];\n"  /* 6: p1 + 8 tid + 256 */
	          "\tadd.s32 %r4, %r1, 16;\n"           /* 7: tid + 16 */
	          "\tmul.lo.s32 %r5, %r4, 4;\n"         /* 8: 4 tid + 64 */
	          "\tcvt.s64.s32 %rd5, %r5;\n"          /* 9 */
	          "\tadd.s64 %rd6, %rd2, %rd5;\n"       /* 10 */
	          "\tld.global.u32 %r6, [%rd6+4];\n"    /* 11: p1 + 4 tid + 68 */
	          "\tmov.u32 %r7, %tid.y;\n"            /* 12 */
	          "\tmad.lo.s32 %r8, %r7, 128, %r2;\n"  /* 13: 128 tid.y + 2 tid.x */
	          "\tmul.wide.u32 %rd7, %r8, 2;\n"      /* 14: 256 tid.y + 4 tid.x */
	          "\tadd.s64 %rd8, %rd2, %rd7;\n"       /* 15 */
	          "\tld.global.u16 %rs1, [%rd8];\n"     /* 16 */
	          "\tsub.s32 %r9, %r2, %r1;\n"          /* 17: tid */
	          "\tsub.s32 %r10, %r9, %r1;\n"         /* 18: 0: tid cancels */
	          "\tmul.wide.s32 %rd9, %r10, 4;\n"     /* 19 */
	          "\tadd.s64 %rd10, %rd2, %rd9;\n"      /* 20 */
	          "\tld.global.u32 %r11, [%rd10+12];\n" /* 21: p1 + 12 */
	          "\tret;\n}\n");
	Addr a = resolve(&x, 6, 1);
	assert_int_equal(a.offset, 256);
	assert_true(a.stride_known);
	assert_int_equal(a.nstride, 1);
	assert_int_equal(stride_of(&x, &a, "%tid.x"), 8);
	a = resolve(&x, 11, 1);
	assert_int_equal(a.offset, 68);
	assert_true(a.stride_known);
	assert_int_equal(stride_of(&x, &a, "%tid.x"), 4);
	a = resolve(&x, 16, 1);
	assert_int_equal(a.offset, 0);
	assert_true(a.stride_known);
	assert_int_equal(a.nstride, 2);
	assert_int_equal(stride_of(&x, &a, "%tid.x"), 4);
	assert_int_equal(stride_of(&x, &a, "%tid.y"), 256);
	a = resolve(&x, 21, 1);
	assert_int_equal(a.offset, 12);
	assert_false(a.variable);
	assert_true(a.stride_known);
	assert_int_equal(a.nstride, 0);
	(void)state;
	fx_free(&x);
}

static void test_addr__strides_unknown_not_guessed(void **state)
{
	Fx x = fx(HEAD ENTRY "\tld.param.u64 %rd1, [k_p1];\n" /* 0 */
	                     "\tmov.u32 %r1, %tid.x;\n"       /* 1 */
	                     /* 1023 << 22 does not fit an s32: the product may wrap */
	                     "\tmul.lo.s32 %r2, %r1, 4194304;\n" /* 2 */
	                     "\tcvt.s64.s32 %rd2, %r2;\n"        /* 3 */
	                     "\tadd.s64 %rd3, %rd1, %rd2;\n"     /* 4 */
	                     "\tld.global.u32 %r3, [%rd3];\n"    /* 5 */
	                     /* tid + 2^31 - 16 may pass INT32_MAX: the add may wrap */
	                     "\tadd.s32 %r4, %r1, 2147483632;\n" /* 6 */
	                     "\tcvt.s64.s32 %rd4, %r4;\n"        /* 7 */
	                     "\tadd.s64 %rd5, %rd1, %rd4;\n"     /* 8 */
	                     "\tld.global.u32 %r5, [%rd5];\n"    /* 9 */
	                     /* and with a mask: not linear */
	                     "\tand.b32 %r6, %r1, 31;\n"      /* 10 */
	                     "\tmul.wide.u32 %rd6, %r6, 4;\n" /* 11 */
	                     "\tadd.s64 %rd7, %rd1, %rd6;\n"  /* 12 */
	                     "\tld.global.u32 %r7, [%rd7];\n" /* 13 */
	                     /* %warpid has no range in the PTX ISA: no stride through a
	                      * 32-bit multiply */
	                     "\tmov.u32 %r8, %warpid;\n"       /* 14 */
	                     "\tshl.b32 %r9, %r8, 2;\n"        /* 15 */
	                     "\tcvt.u64.u32 %rd8, %r9;\n"      /* 16 */
	                     "\tadd.s64 %rd9, %rd1, %rd8;\n"   /* 17 */
	                     "\tld.global.u32 %r10, [%rd9];\n" /* 18 */
	                     "\tret;\n}\n");
	static const uint32_t loads[] = {5, 9, 13, 18};
	for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
		Addr a = resolve(&x, loads[i], 1);
		if (a.stride_known)
			fail_msg("s%u: a stride is stated where it is not known",
			         loads[i]);
		assert_true(a.variable);
	}
	(void)state;
	fx_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr__param_struct_field_pointer),
		cmocka_unit_test(test_addr__param_address_via_mov),
		cmocka_unit_test(test_addr__shl_mad_add_immediates),
		cmocka_unit_test(test_addr__shared_symbols_and_cvta),
		cmocka_unit_test(test_addr__special_registers_only),
		cmocka_unit_test(test_addr__stops_without_guessing),
		cmocka_unit_test(test_addr__integer_params_vectors_shfl_cvt),
		cmocka_unit_test(test_addr__deep_chain_stops),
		cmocka_unit_test(test_addr__cached),
		cmocka_unit_test(test_addr__strides_exact),
		cmocka_unit_test(test_addr__strides_unknown_not_guessed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
