/*
 * test_dataflow.c - registers, defs and uses per opcode class, blocks,
 * liveness, reaching definitions and the cut interface, on small PTX
 * functions written here.
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

/* Parses src and builds the dataflow of its first function with a body. */
static Fx fx(const char *src)
{
	Err e = ERR_INIT;
	Fx x = {0};
	x.m = ptx_parse("t.ptx", src, strlen(src), &e);
	if (!x.m)
		fail_msg("parse: %s", err_msg(&e));
	const Func *f = NULL;
	for (size_t i = 0; i < x.m->funcs.n; i++)
		if (!(x.m->funcs.v[i].flags & FNF_DECL)) {
			f = &x.m->funcs.v[i];
			break;
		}
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

static uint32_t R(const Fx *x, const char *name)
{
	int64_t r = df_reg_find(x->df, str_c(name));
	if (r < 0)
		fail_msg("no register '%s'", name);
	return (uint32_t)r;
}

/* "a,b,c": the names of the registers a statement defines (or uses). */
static char *names(const Fx *x, uint32_t stmt, bool defs)
{
	static char buf[512];
	uint32_t n;
	const uint32_t *v = defs ? df_defs(x->df, stmt, &n) : df_uses(x->df, stmt, &n);
	buf[0] = 0;
	for (uint32_t i = 0; i < n; i++) {
		const RegInfo *ri = df_reg(x->df, v[i]);
		if (i)
			strcat(buf, ",");
		strncat(buf, ri->name.p, ri->name.n);
	}
	return buf;
}

#define DEFS(x, s, want) assert_string_equal(names(&(x), (s), true), (want))
#define USES(x, s, want) assert_string_equal(names(&(x), (s), false), (want))

/* ---- registers ------------------------------------------------------------ */

static void test_dataflow__registers_ranges_plain_special(void **state)
{
	Fx x = fx(HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	               "\t.reg .pred %p<3>;\n\t.reg .b32 %r<10>;\n\t.reg .f32 lone;\n"
	               "\tmov.u32 %r1, %tid.x;\n"
	               "\tmov.f32 lone, 0f3F800000;\n"
	               "\tmov.u32 %r12, 1;\n" /* not covered by %r<10> */
	               "\tret;\n}\n");
	/* declared, never used: found after the build, defined and used nowhere */
	int64_t r9 = df_reg_find(x.df, str_c("%r9"));
	assert_true(r9 >= 0);
	assert_false(df_live_after(x.df, 0, (uint32_t)r9));
	assert_int_equal(df_reaching_def(x.df, 2, (uint32_t)r9), DF_DEF_NONE);
	uint32_t none[2];
	assert_int_equal(df_uses_of(x.df, 0, (uint32_t)r9, none, 2), 0);
	assert_true(df_reg_find(x.df, str_c("%laneid")) >= 0);
	assert_true(df_reg_find(x.df, str_c("%r10")) < 0);
	assert_true(df_reg_find(x.df, str_c("%r01")) < 0);
	assert_true(df_reg_find(x.df, str_c("k_p0")) < 0);
	const RegInfo *ri = df_reg(x.df, R(&x, "%p2"));
	assert_int_equal(ri->bits, 1);
	ri = df_reg(x.df, R(&x, "%tid.x"));
	assert_true(ri->special);
	ri = df_reg(x.df, R(&x, "lone"));
	assert_int_equal(ri->bits, 32);
	DEFS(x, 0, "%r1");
	USES(x, 0, "%tid.x");
	DEFS(x, 1, "lone");
	DEFS(x, 2, ""); /* %r12 is not a register of this function */
	(void)state;
	fx_free(&x);
}

static void test_dataflow__scoped_declarations_are_distinct(void **state)
{
	Fx x = fx(HEAD ".visible .entry k()\n{\n"
	               "\t.reg .b32 %r<10>;\n\t.reg .pred p;\n"
	               "\tsetp.eq.s32 p, %r1, 0;\n"            /* 0: the body's p */
	               "\t{\n\t.reg .pred p;\n\t.reg .b32 r0; // { in a comment\n"
	               "\tsetp.ne.s32 p, %r2, 0;\n"            /* 1 */
	               "\t@p mov.b32 r0, 1;\n"                 /* 2 */
	               "\tselp.b32 %r3, r0, 0, p;\n"           /* 3 */
	               "\t}\n\t{\n\t.reg .pred p;\n\t.reg .b32 r0;\n"
	               "\tsetp.ne.s32 p, %r4, 0;\n"            /* 4 */
	               "\tselp.b32 %r5, 1, 0, p;\n"            /* 5 */
	               "\t}\n"
	               "\tselp.b32 %r6, 1, 0, p;\n"            /* 6 */
	               "\tret;\n}\n");
	uint32_t outer = R(&x, "p"); /* by name: the outermost declaration */
	uint32_t n;
	uint32_t p1 = df_defs(x.df, 1, &n)[0], p4 = df_defs(x.df, 4, &n)[0];
	assert_int_not_equal(p1, outer);
	assert_int_not_equal(p4, outer);
	assert_int_not_equal(p1, p4);
	assert_true(str_eqc(df_reg(x.df, p1)->name, "p"));
	assert_int_equal(df_reaching_def(x.df, 6, outer), 0);
	assert_int_equal(df_reaching_def(x.df, 3, p1), 1);
	assert_int_equal(df_reaching_def(x.df, 5, p4), 4);
	assert_false(df_live_after(x.df, 0, p1));
	assert_true(df_live_after(x.df, 3, outer));
	(void)state;
	fx_free(&x);
}

/* ---- defs and uses -------------------------------------------------------- */

static void test_dataflow__defs_uses_by_opcode_class(void **state)
{
	Fx x = fx(HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	               "\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<10>;\n"
	               "\tld.param.u64 %rd1, [k_p0+8];\n"                 /* 0 */
	               "\tst.global.u32 [%rd1+4], %r2;\n"                 /* 1 */
	               "\tsetp.lt.s32 %p1|%p2, %r3, %r4;\n"               /* 2 */
	               "\t@%p1 add.s32 %r5, %r5, 1;\n"                    /* 3 */
	               "\tatom.global.add.u32 %r6, [%rd1], %r7;\n"        /* 4 */
	               "\tred.global.add.u32 [%rd2], %r8;\n"              /* 5 */
	               "\tbar.sync 0;\n"                                  /* 6 */
	               "\tld.global.v4.u32 {%r10, _, %r12, %r13}, [%rd3];\n" /* 7 */
	               "\tmov.b64 %rd4, {%r14, %r15};\n"                  /* 8 */
	               "\tshfl.sync.idx.b32 %r16|%p3, %r17, 1, 31, -1;\n" /* 9 */
	               "\tcp.async.ca.shared.global [%rd5], [%rd6], 16;\n" /* 10 */
	               "\tbar.red.popc.u32 %r18, 0, %p1;\n"               /* 11 */
	               "\tnewfangled.op.b32 %r19, %r20;\n"                /* 12 */
	               "\tadd.s32 %r21, %r22, %r22;\n"                    /* 13 */
	               "\tret;\n}\n");
	DEFS(x, 0, "%rd1");
	USES(x, 0, "");
	DEFS(x, 1, "");
	USES(x, 1, "%rd1,%r2");
	DEFS(x, 2, "%p1,%p2");
	USES(x, 2, "%r3,%r4");
	DEFS(x, 3, "%r5");
	USES(x, 3, "%p1,%r5");
	DEFS(x, 4, "%r6");
	USES(x, 4, "%rd1,%r7");
	DEFS(x, 5, "");
	USES(x, 5, "%rd2,%r8");
	DEFS(x, 6, "");
	DEFS(x, 7, "%r10,%r12,%r13");
	USES(x, 7, "%rd3");
	DEFS(x, 8, "%rd4");
	USES(x, 8, "%r14,%r15");
	DEFS(x, 9, "%r16,%p3");
	DEFS(x, 10, "");
	USES(x, 10, "%rd5,%rd6");
	DEFS(x, 11, "%r18");
	USES(x, 11, "%p1");
	DEFS(x, 12, "%r19"); /* unknown opcode: def and use */
	USES(x, 12, "%r19,%r20");
	USES(x, 13, "%r22");
	bool kills = true;
	assert_true(df_stmt_defines(x.df, 3, R(&x, "%r5"), &kills));
	assert_false(kills); /* guarded */
	(void)state;
	fx_free(&x);
}

static void test_dataflow__mma_and_wgmma_accumulators(void **state)
{
	Fx x = fx(HEAD ".visible .entry k()\n{\n"
	               "\t.reg .b32 %r<40>;\n\t.reg .f32 %f<10>;\n\t.reg .b64 %rd<4>;\n"
	               "\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r1, %r2}, "
	               "{%r3, %r4, %r5, %r6}, {%r7, %r8}, {%r1, %r2};\n"
	               "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, "
	               "%rd1, %rd2, 1, 1, 1, 0, 0;\n"
	               "\twgmma.fence.sync.aligned;\n"
	               "\tret;\n}\n");
	DEFS(x, 0, "%r1,%r2");
	USES(x, 0, "%r3,%r4,%r5,%r6,%r7,%r8,%r1,%r2");
	DEFS(x, 1, "%f1,%f2,%f3,%f4");
	USES(x, 1, "%f1,%f2,%f3,%f4,%rd1,%rd2");
	DEFS(x, 2, "");
	(void)state;
	fx_free(&x);
}

static void test_dataflow__call_defines_return_list(void **state)
{
	Fx x = fx(HEAD ".func (.reg .b32 rv) f(.reg .b32 a)\n{\n\tmov.b32 rv, a;\n\tret;\n}\n"
	               ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n"
	               "\tcall.uni (%r1), f, (%r2);\n\tret;\n}\n");
	/* fx takes the first function with a body: f */
	DEFS(x, 0, "rv");
	USES(x, 0, "a");
	assert_true(df_reg_is_param(x.df, R(&x, "a")));
	assert_int_equal(df_reaching_def(x.df, 0, R(&x, "a")), DF_DEF_NONE);
	fx_free(&x);
	Err e = ERR_INIT;
	const char *src = HEAD ".func (.reg .b32 rv) f(.reg .b32 a)\n{\n\tmov.b32 rv, a;\n\tret;\n}\n"
	                       ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n"
	                       "\tcall.uni (%r1), f, (%r2);\n\tret;\n}\n";
	Module *m = ptx_parse("t.ptx", src, strlen(src), &e);
	assert_non_null(m);
	Dataflow *df = df_build(m, mod_func_find(m, str_c("k")), &e);
	assert_non_null(df);
	uint32_t n;
	const uint32_t *d = df_defs(df, 0, &n);
	assert_int_equal(n, 1);
	assert_true(str_eqc(df_reg(df, d[0])->name, "%r1"));
	df_uses(df, 0, &n);
	assert_int_equal(n, 1);
	df_free(df);
	mod_free(m);
	(void)state;
}

/* ---- control flow, liveness, reaching definitions ------------------------- */

static const char BRANCHY[] =
	HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	"\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n"
	"\tmov.u32 %r1, 1;\n"              /* 0 */
	"\tmov.u32 %r2, 2;\n"              /* 1 */
	"\tsetp.eq.s32 %p1, %r1, 0;\n"     /* 2 */
	"\t@%p1 bra $L_else;\n"            /* 3 */
	"\tmov.u32 %r3, %r2;\n"            /* 4: %r2 used on one branch only */
	"\tbra.uni $L_join;\n"             /* 5 */
	"$L_else:\n"
	"\tmov.u32 %r3, 7;\n"              /* 6 */
	"$L_join:\n"
	"\tadd.s32 %r4, %r3, 1;\n"         /* 7: %r3 from 4 or 6 */
	"\t@%p1 mov.u32 %r4, 9;\n"         /* 8: guarded: does not kill */
	"\tadd.s32 %r5, %r4, %r1;\n"       /* 9 */
	"\tret;\n}\n";

/* Registers defined once: the answer through the dominator tree must be
 * the walk's answer, also where the one definition does not dominate. */
static const char LOOPY[] = HEAD
	".visible .entry k(.param .u32 n)\n{\n"
	"\t.reg .pred %p<3>;\n\t.reg .b32 %r<12>;\n"
	"\tld.param.u32 %r1, [n];\n"          /* 0: one def, dominates all */
	"\tsetp.eq.s32 %p1, %r1, 0;\n"        /* 1 */
	"\t@%p1 bra $L_skip;\n"               /* 2 */
	"\tadd.s32 %r2, %r1, 1;\n"            /* 3: one def, on one path only */
	"$L_skip:\n"
	"\tadd.s32 %r3, %r2, 1;\n"            /* 4: %r2 from 3 or undefined */
	"$L_loop:\n"
	"\tadd.s32 %r4, %r5, %r1;\n"          /* 5: %r5 from 7 (back edge) or undefined */
	"\tsetp.lt.s32 %p2, %r4, 9;\n"        /* 6 */
	"\tadd.s32 %r5, %r4, 2;\n"            /* 7: one def, inside the loop */
	"\t@%p2 bra $L_loop;\n"               /* 8 */
	"\tadd.s32 %r6, %r5, %r3;\n"          /* 9: %r5 from 7 (dominates), %r3 from 4 */
	"\tret;\n"                            /* 10 */
	"$L_dead:\n"
	"\tadd.s32 %r7, %r1, 1;\n"            /* 11: unreachable */
	"\tret;\n}\n";

static void test_dataflow__reaching_defs_single_definition(void **state)
{
	Fx x = fx(LOOPY);
	assert_int_equal(df_reaching_def(x.df, 9, R(&x, "%r1")), 0);
	assert_int_equal(df_reaching_def(x.df, 5, R(&x, "%r1")), 0);
	assert_int_equal(df_reaching_def(x.df, 4, R(&x, "%r2")), DF_DEF_MANY);
	assert_int_equal(df_reaching_def(x.df, 5, R(&x, "%r5")), DF_DEF_MANY);
	assert_int_equal(df_reaching_def(x.df, 9, R(&x, "%r5")), 7);
	assert_int_equal(df_reaching_def(x.df, 9, R(&x, "%r3")), 4);
	assert_int_equal(df_reaching_def(x.df, 6, R(&x, "%r4")), 5);
	/* no path from the entry reaches statement 11: nothing reaches it */
	assert_int_equal(df_reaching_def(x.df, 11, R(&x, "%r1")), DF_DEF_NONE);
	(void)state;
	fx_free(&x);
}

/* Uses are collected when first asked for; registers first named by a use
 * (never defined) must come out the same whichever query comes first. */
static const char USED_ONLY[] = HEAD
	".visible .entry u()\n{\n"
	"\t.reg .b32 %r<12>;\n"
	"\tadd.s32 %r1, %r9, 1;\n"            /* 0: %r9 is never defined */
	"\tadd.s32 %r2, %r1, %r10;\n"         /* 1: nor %r10 */
	"\tadd.s32 %r3, %r2, %r9;\n"          /* 2 */
	"\tret;\n}\n";

static void test_dataflow__uses_on_demand(void **state)
{
	/* liveness first: every use is collected for it */
	Fx x = fx(USED_ONLY);
	uint32_t r9 = R(&x, "%r9"), r10 = R(&x, "%r10");
	assert_true(df_live_after(x.df, 0, r9));
	assert_false(df_live_after(x.df, 2, r9));
	assert_true(df_live_after(x.df, 0, r10));
	assert_int_equal(df_reaching_def(x.df, 2, r9), DF_DEF_NONE);
	fx_free(&x);
	/* operand and statement queries first, liveness after */
	x = fx(USED_ONLY);
	const Stmt *s2 = func_stmt(x.m, &x.m->funcs.v[0], 2);
	int64_t id = df_opd_reg(x.df, s2->opd + 2); /* %r9 in statement 2 */
	assert_true(id >= 0);
	assert_int_equal(id, df_reg_find(x.df, str_c("%r9")));
	uint32_t n;
	const uint32_t *u = df_uses(x.df, 1, &n);
	assert_int_equal(n, 2);
	assert_int_equal(u[0], R(&x, "%r1"));
	assert_int_equal(u[1], R(&x, "%r10"));
	assert_true(df_stmt_uses(x.df, 0, (uint32_t)id));
	assert_false(df_stmt_uses(x.df, 1, (uint32_t)id));
	assert_true(df_live_after(x.df, 1, (uint32_t)id));
	assert_int_equal(df_reaching_def(x.df, 2, R(&x, "%r2")), 1);
	(void)state;
	fx_free(&x);
}

/* A cut's live-out set is found from the uses of the registers it defines
 * only (matched by name); it must agree with full liveness, vector
 * elements and loops included, and later questions about other registers
 * must still see all uses. */
static const char VLOOP[] = HEAD
	".visible .entry v(.param .u64 out)\n{\n"
	"\t.reg .pred %p<3>;\n\t.reg .b32 %r<12>;\n\t.reg .v2 .b32 %v;\n"
	"\t.reg .b64 %rd<3>;\n"
	"\tld.param.u64 %rd1, [out];\n"        /* 0 */
	"\tmov.u32 %r1, 0;\n"                  /* 1 */
	"$L_top:\n"
	"\tadd.s32 %r2, %r1, 3;\n"             /* 2: cut from here */
	"\tmov.b32 %v.x, %r2;\n"               /* 3: defines an element of %v */
	"\tadd.s32 %r3, %r2, 1;\n"             /* 4: dead after the cut */
	"\tadd.s32 %r1, %r1, 1;\n"             /* 5: cut to here; used at 2 (loop) */
	"\tsetp.lt.s32 %p1, %r1, 9;\n"         /* 6 */
	"\t@%p1 bra $L_top;\n"                 /* 7 */
	"\tst.global.u32 [%rd1], %v.x;\n"      /* 8: reads %v after the cut */
	"\tadd.s32 %r4, %r9, %r1;\n"           /* 9: %r9 never defined */
	"\tret;\n}\n";

static void test_dataflow__cut_live_out_by_name(void **state)
{
	Fx x = fx(VLOOP);
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 2, 5, &c, &e), 0);
	uint32_t v = R(&x, "%v"), r1 = R(&x, "%r1"), r2 = R(&x, "%r2"), r3 = R(&x, "%r3");
	bool out_v = false, out_r1 = false, out_r2 = false, out_r3 = false;
	for (size_t i = 0; i < c.live_out.n; i++) {
		out_v |= c.live_out.v[i].reg == v;
		out_r1 |= c.live_out.v[i].reg == r1;
		out_r2 |= c.live_out.v[i].reg == r2;
		out_r3 |= c.live_out.v[i].reg == r3;
		if (c.live_out.v[i].reg == v)
			assert_int_equal(c.live_out.v[i].use, 8);
		if (c.live_out.v[i].reg == r1)
			assert_int_equal(c.live_out.v[i].use, 6);
	}
	assert_true(out_v);   /* read as %v.x at 8 */
	assert_true(out_r1);  /* read at 6, 9 and around the loop at 2 */
	assert_false(out_r2); /* redefined at 2 before any read: dead */
	assert_false(out_r3);
	cut_release(&c);
	/* the same answers from full liveness, asked afterwards */
	assert_true(df_live_after(x.df, 5, v));
	assert_true(df_live_after(x.df, 5, r1));
	assert_false(df_live_after(x.df, 5, r2));
	/* and about registers outside the set */
	assert_true(df_live_after(x.df, 0, R(&x, "%rd1")));
	assert_true(df_live_after(x.df, 7, R(&x, "%r9")));
	assert_false(df_live_after(x.df, 9, R(&x, "%r9")));
	uint32_t uses[4];
	assert_int_equal(df_uses_of(x.df, 6, R(&x, "%p1"), uses, 4), 1);
	assert_int_equal(uses[0], 7);
	(void)state;
	fx_free(&x);
}

/* A plain declaration that spells a member of a range ("%r5" beside
 * %r<10>) and a .reg parameter that does: one register per name, whichever
 * declaration the name is met through. */
static const char OVERLAP[] = HEAD
	".func (.reg .b32 %q1) f(.reg .b64 %q2)\n{\n"
	"\t.reg .b32 %r<10>;\n\t.reg .b64 %r5;\n\t.reg .b32 %q<4>;\n"
	"\tmov.u32 %r5, 1;\n"                 /* 0 */
	"\tadd.s64 %r6, %r5, %q2;\n"          /* 1 */
	"\tmov.u32 %q1, %r6;\n"               /* 2 */
	"\tret;\n}\n";

static void test_dataflow__plain_name_in_a_range(void **state)
{
	Fx x = fx(OVERLAP);
	uint32_t r5 = R(&x, "%r5"), q2 = R(&x, "%q2");
	/* the plain declarations' registers (64-bit), not range members */
	assert_int_equal(df_reg(x.df, r5)->bits, 64);
	assert_int_equal(df_reg(x.df, q2)->bits, 64);
	assert_int_equal(df_reaching_def(x.df, 1, r5), 0);
	uint32_t n;
	const uint32_t *u = df_uses(x.df, 1, &n);
	assert_int_equal(n, 2);
	assert_int_equal(u[0], r5);
	assert_int_equal(u[1], q2);
	assert_true(df_reg_is_param(x.df, q2));
	assert_true(df_reg_is_param(x.df, R(&x, "%q1")));
	assert_int_equal(df_reaching_def(x.df, 1, q2), DF_DEF_NONE);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__blocks_and_successors(void **state)
{
	Fx x = fx(BRANCHY);
	assert_int_equal(df_nblocks(x.df), 4);
	uint32_t n, first, end;
	const uint32_t *s = df_block_succs(x.df, 0, &n);
	assert_int_equal(n, 2); /* $L_else and fall-through */
	df_block_range(x.df, df_block_of(x.df, 4), &first, &end);
	assert_int_equal(first, 4);
	assert_int_equal(end, 6);
	s = df_block_succs(x.df, df_block_of(x.df, 5), &n);
	assert_int_equal(n, 1);
	assert_int_equal(s[0], df_block_of(x.df, 7));
	s = df_block_succs(x.df, df_block_of(x.df, 9), &n);
	assert_int_equal(n, 0);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__liveness_across_branches(void **state)
{
	Fx x = fx(BRANCHY);
	uint32_t r2 = R(&x, "%r2"), r1 = R(&x, "%r1"), r3 = R(&x, "%r3");
	assert_true(df_live_after(x.df, 1, r2));  /* used on the fall-through path only */
	assert_true(df_live_after(x.df, 3, r2));
	assert_false(df_live_after(x.df, 4, r2));
	assert_true(df_live_after(x.df, 5, r1));  /* used at 9 */
	assert_false(df_live_after(x.df, 9, r1));
	assert_true(df_live_after(x.df, 4, r3));
	assert_false(df_live_after(x.df, 7, r3));
	(void)state;
	fx_free(&x);
}

static void test_dataflow__reaching_defs_merge_and_guard(void **state)
{
	Fx x = fx(BRANCHY);
	assert_int_equal(df_reaching_def(x.df, 4, R(&x, "%r2")), 1);
	assert_int_equal(df_reaching_def(x.df, 9, R(&x, "%r1")), 0);
	assert_int_equal(df_reaching_def(x.df, 7, R(&x, "%r3")), DF_DEF_MANY);
	assert_int_equal(df_reaching_def(x.df, 9, R(&x, "%r4")), DF_DEF_MANY);
	assert_int_equal(df_reaching_def(x.df, 8, R(&x, "%r4")), 7);
	assert_int_equal(df_reaching_def(x.df, 2, R(&x, "%r5")), DF_DEF_NONE);
	uint32_t uses[8];
	assert_int_equal(df_uses_of(x.df, 0, R(&x, "%r1"), uses, 8), 2);
	assert_int_equal(uses[0], 2);
	assert_int_equal(uses[1], 9);
	assert_int_equal(df_uses_of(x.df, 4, R(&x, "%r3"), uses, 8), 1);
	assert_int_equal(uses[0], 7);
	assert_int_equal(df_uses_of(x.df, 7, R(&x, "%r4"), uses, 8), 1);
	assert_int_equal(uses[0], 9);
	(void)state;
	fx_free(&x);
}

static const char LOOP[] =
	HEAD ".visible .entry k()\n{\n"
	"\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n"
	"\tmov.u32 %r1, 0;\n"              /* 0 */
	"\tmov.u32 %r2, 5;\n"              /* 1 */
	"$L_top:\n"
	"\tadd.s32 %r1, %r1, %r2;\n"       /* 2 */
	"\tsetp.lt.s32 %p1, %r1, 100;\n"   /* 3 */
	"\t@%p1 bra $L_top;\n"             /* 4 */
	"\tmov.u32 %r3, %r1;\n"            /* 5 */
	"\tret;\n}\n";

static void test_dataflow__loops(void **state)
{
	Fx x = fx(LOOP);
	uint32_t r1 = R(&x, "%r1"), r2 = R(&x, "%r2");
	assert_int_equal(df_reaching_def(x.df, 2, r1), DF_DEF_MANY); /* 0 and 2 */
	assert_int_equal(df_reaching_def(x.df, 2, r2), 1);
	assert_int_equal(df_reaching_def(x.df, 5, r1), 2);
	assert_true(df_live_after(x.df, 4, r2)); /* read again around the loop */
	assert_true(df_live_after(x.df, 3, r1));
	assert_false(df_live_after(x.df, 5, r1));
	uint32_t uses[8];
	/* the value defined at 2 flows to 3, to 5 and around to 2 */
	assert_int_equal(df_uses_of(x.df, 2, r1, uses, 8), 3);
	assert_int_equal(uses[0], 2);
	assert_int_equal(uses[1], 3);
	assert_int_equal(uses[2], 5);
	(void)state;
	fx_free(&x);
}

/* A loop whose body branches: the head (block 1) reads %r2, which only the
 * last block of the body (block 3, s6) defines, so the value of s6 reaches
 * s2 through the back edge 8 -> 1 alone; nothing after the loop reads it. */
static const char LOOP_BRANCH[] =
	HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	"\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<4>;\n"
	"\tmov.u32 %r1, 0;\n"              /* 0  block 0 */
	"\tmov.u32 %r2, 0;\n"              /* 1 */
	"$L_head:\n"
	"\tadd.s32 %r3, %r2, 1;\n"         /* 2  block 1: reads %r2 */
	"\tsetp.gt.s32 %p1, %r3, 7;\n"     /* 3 */
	"\t@%p1 bra $L_skip;\n"            /* 4 */
	"\tadd.s32 %r1, %r1, %r3;\n"       /* 5  block 2 */
	"$L_skip:\n"
	"\tmov.u32 %r2, %r3;\n"            /* 6  block 3: defines %r2 */
	"\tsetp.lt.s32 %p2, %r3, 10;\n"    /* 7 */
	"\t@%p2 bra $L_head;\n"            /* 8 */
	"\tld.param.u64 %rd1, [k_p0];\n"   /* 9  block 4 */
	"\tst.global.u32 [%rd1], %r1;\n"   /* 10 */
	"\tret;\n}\n";

static void test_dataflow__live_out_around_a_loop_with_a_branch(void **state)
{
	Fx x = fx(LOOP_BRANCH);
	uint32_t r1 = R(&x, "%r1"), r2 = R(&x, "%r2"), r3 = R(&x, "%r3");
	assert_int_equal(df_nblocks(x.df), 5);
	assert_int_equal(df_block_of(x.df, 6), 3);
	/* %r2 of s6 is read at s2, around the loop, and nowhere else */
	assert_true(df_live_after(x.df, 6, r2));
	assert_true(df_live_after(x.df, 8, r2));
	assert_true(df_live_in_block(x.df, 1, r2));
	assert_false(df_live_in_block(x.df, 4, r2));
	assert_false(df_live_after(x.df, 2, r2)); /* s6 writes it before any read */
	/* %r3 is dead once s7 has read it; %r1 is read after the loop at s10 */
	assert_false(df_live_after(x.df, 7, r3));
	assert_true(df_live_after(x.df, 6, r1));
	/* the cut s6..s6 defines %r2, read after it only at s2: live-out */
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 6, 6, &c, &e), 0);
	assert_int_equal(c.live_out.n, 1);
	assert_int_equal(c.live_out.v[0].reg, r2);
	assert_int_equal(c.live_out.v[0].stmt, 6);
	assert_int_equal(c.live_out.v[0].use, 2);
	assert_int_equal(c.live_in.n, 1); /* %r3, from s2 */
	assert_int_equal(c.live_in.v[0].reg, r3);
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

/* The loop of LOOP_BRANCH (blocks 1-3, header s2, back edge s8), and a cut
 * that holds it: %r1 and %r2 come in from s0 and s1; %r1 leaves for s10;
 * %r2 of s6 is read only at s2, through the back edge inside the cut, so it
 * does not leave it.  Ranges that hold part of the loop and code outside it
 * cut it in two; one inside the body does not. */
static void test_dataflow__loop_cut(void **state)
{
	Fx x = fx(LOOP_BRANCH);
	uint32_t r1 = R(&x, "%r1"), r2 = R(&x, "%r2");
	const DfLoop *lp;
	assert_int_equal(df_loops(x.df, &lp), 1);
	assert_int_equal(lp[0].header, 2);
	assert_int_equal(lp[0].back, 8);
	assert_int_equal(lp[0].lo, 2);
	assert_int_equal(lp[0].hi, 8);
	assert_int_equal(lp[0].nstmt, 7);
	assert_true(df_loop_holds(x.df, 0, 5));
	assert_false(df_loop_holds(x.df, 0, 9));
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 2, 8, &c, &e), 0);
	assert_int_equal(c.live_in.n, 2);
	assert_int_equal(c.live_in.v[0].reg, r2); /* first read s2 */
	assert_int_equal(c.live_in.v[1].reg, r1); /* first read s5 */
	assert_int_equal(c.live_out.n, 1);
	assert_int_equal(c.live_out.v[0].reg, r1);
	assert_int_equal(c.live_out.v[0].use, 10);
	assert_int_equal(c.loops.n, 1);
	cut_release(&c);
	uint32_t in = 0, out = 0;
	assert_int_equal(df_cut_loop_split(x.df, 0, 5, &in, &out), 0);
	assert_int_equal(in, 2);
	assert_int_equal(out, 8);
	assert_int_equal(df_cut_loop_split(x.df, 6, 10, &in, &out), 0);
	assert_int_equal(in, 6);
	assert_int_equal(out, 2);
	assert_int_equal(df_cut_loop_split(x.df, 3, 6, &in, &out), -1); /* inside */
	assert_int_equal(df_cut_loop_split(x.df, 0, 10, &in, &out), -1); /* around */
	assert_int_equal(df_cut_loop_split(x.df, 9, 10, &in, &out), -1); /* apart */
	uint32_t a = 5, b = 9;
	df_cut_hold_loops(x.df, &a, &b);
	assert_int_equal(a, 2);
	assert_int_equal(b, 9);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

/* Two loops, one inside the other: the outer s1-s7 (header s1, back edge
 * s7), the inner s2-s4 (a block that branches to itself). */
static const char NESTED[] =
	HEAD ".visible .entry k()\n{\n"
	"\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n"
	"\tmov.u32 %r1, 0;\n"              /* 0 */
	"$L_outer:\n"
	"\tmov.u32 %r2, 0;\n"              /* 1  outer header */
	"$L_inner:\n"
	"\tadd.s32 %r2, %r2, 1;\n"         /* 2  inner header */
	"\tsetp.lt.s32 %p1, %r2, 4;\n"     /* 3 */
	"\t@%p1 bra $L_inner;\n"           /* 4  inner back edge */
	"\tadd.s32 %r1, %r1, 1;\n"         /* 5 */
	"\tsetp.lt.s32 %p2, %r1, 3;\n"     /* 6 */
	"\t@%p2 bra $L_outer;\n"           /* 7  outer back edge */
	"\tret;\n}\n";

static void test_dataflow__nested_loops(void **state)
{
	Fx x = fx(NESTED);
	const DfLoop *lp;
	assert_int_equal(df_loops(x.df, &lp), 2);
	assert_int_equal(lp[0].header, 1);
	assert_int_equal(lp[0].back, 7);
	assert_int_equal(lp[0].nstmt, 7);
	assert_int_equal(lp[1].header, 2);
	assert_int_equal(lp[1].back, 4);
	assert_int_equal(lp[1].nstmt, 3);
	uint32_t in = 0, out = 0;
	/* the inner loop whole, inside the outer body: no split */
	assert_int_equal(df_cut_loop_split(x.df, 2, 5, &in, &out), -1);
	/* s3..s5: the inner loop without its header */
	assert_int_equal(df_cut_loop_split(x.df, 3, 5, &in, &out), 1);
	assert_int_equal(in, 3);
	assert_int_equal(out, 2);
	/* s0..s4: the outer loop without its back edge */
	assert_int_equal(df_cut_loop_split(x.df, 0, 4, &in, &out), 0);
	assert_int_equal(out, 7);
	uint32_t a = 3, b = 5;
	df_cut_hold_loops(x.df, &a, &b);
	assert_int_equal(a, 2);
	assert_int_equal(b, 5);
	a = 0, b = 3;
	df_cut_hold_loops(x.df, &a, &b);
	assert_int_equal(a, 0);
	assert_int_equal(b, 7);
	(void)state;
	fx_free(&x);
}

/* ---- the cut interface ---------------------------------------------------- */

static const char PHASE[] =
	HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	"\t.reg .b32 %r<60>;\n\t.reg .b64 %rd<10>;\n"
	"\tld.param.u64 %rd1, [k_p0];\n"                        /* 0 */
	"\tld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"    /* 1 */
	"\tld.global.v2.u32 {%r5, %r6}, [%rd1+16];\n"           /* 2 */
	"\tmov.b32 %r7, 0;\n"                                   /* 3 */
	"\tmov.b32 %r8, 0;\n"                                   /* 4 */
	"\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r7, %r8}, "
	"{%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r7, %r8};\n"       /* 5 */
	"\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r7, %r8}, "
	"{%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r7, %r8};\n"       /* 6 */
	"\tmov.b32 %r9, %r1;\n"                                 /* 7 */
	"\tadd.s32 %r10, %r9, 1;\n"                             /* 8 */
	"\tst.global.v2.u32 [%rd1+32], {%r7, %r8};\n"           /* 9 */
	"\tst.global.u32 [%rd1+40], %r10;\n"                    /* 10 */
	"\tret;\n}\n";

static void test_dataflow__cut_live_in_out_accumulators(void **state)
{
	Fx x = fx(PHASE);
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 5, 8, &c, &e), 0);
	/* live-in: A, B and the accumulators (defined by the movs before 5) */
	assert_int_equal(c.live_in.n, 8);
	assert_int_equal(c.live_in.v[0].reg, R(&x, "%r1"));
	assert_int_equal(c.live_in.v[0].stmt, 5);
	bool acc = false;
	for (size_t i = 0; i < c.live_in.n; i++)
		if (c.live_in.v[i].reg == R(&x, "%r7"))
			acc = c.live_in.v[i].stmt == 5;
	assert_true(acc);
	/* live-out: %r7, %r8 (last def 6, used at 9) and %r10 (used at 10);
	 * %r9 is defined and dead after 8 */
	assert_int_equal(c.live_out.n, 3);
	assert_int_equal(c.live_out.v[0].reg, R(&x, "%r7"));
	assert_int_equal(c.live_out.v[0].stmt, 6);
	assert_int_equal(c.live_out.v[0].use, 9);
	assert_int_equal(c.live_out.v[2].reg, R(&x, "%r10"));
	assert_int_equal(c.live_out.v[2].use, 10);
	assert_false(c.rw_dependency);
	cut_release(&c);
	/* 6..6: %r7/%r8 come from 5, inside no more */
	assert_int_equal(df_cut(x.df, 6, 6, &c, &e), 0);
	assert_int_equal(c.live_in.n, 8);
	cut_release(&c);
	/* 3..6: the accumulators are defined in the range: not live-in */
	assert_int_equal(df_cut(x.df, 3, 6, &c, &e), 0);
	assert_int_equal(c.live_in.n, 6);
	cut_release(&c);
	assert_int_equal(df_cut(x.df, 7, 99, &c, &e), -1);
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__cut_memory_effects(void **state)
{
	Fx x = fx(HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	               "\t.reg .b32 %r<60>;\n\t.reg .b64 %rd<10>;\n\t.reg .pred %p<2>;\n"
	               "\tld.param.u64 %rd1, [k_p0];\n"           /* 0 */
	               "\tld.global.u32 %r1, [%rd1];\n"           /* 1 */
	               "\tld.shared.u32 %r2, [%r1];\n"            /* 2 */
	               "\tst.shared.u32 [%r1+4], %r2;\n"          /* 3 */
	               "\tatom.global.add.u32 %r3, [%rd1+8], 1;\n" /* 4 */
	               "\tbar.sync 0;\n"                          /* 5 */
	               "\tmembar.gl;\n"                           /* 6 */
	               "\ttex.2d.v4.f32.s32 {%r4, %r5, %r6, %r7}, [tx, {%r1, %r2}];\n" /* 7 */
	               "\tret;\n}\n");
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 1, 7, &c, &e), 0);
	assert_int_equal(c.loads[SP_GLOBAL], 2);
	assert_int_equal(c.loads[SP_SHARED], 1);
	assert_int_equal(c.loads[SP_TEX], 1);
	assert_int_equal(c.stores[SP_SHARED], 1);
	assert_int_equal(c.stores[SP_GLOBAL], 1);
	assert_int_equal(c.atomics, 1);
	assert_int_equal(c.barriers, 2);
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

/* Opcode components of a space's length that name no space (".ctacta",
 * seven bytes; ".mmio", ".relaxed") are not a space, and reading them
 * stays inside the names compared with (found by fuzz_template: ASan
 * reported a read past ".const"). */
static void test_dataflow__space_components_not_spaces(void **state)
{
	Fx x = fx(HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	               "\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<4>;\n"
	               "\tld.param.u64 %rd1, [k_p0];\n"            /* 0 */
	               "\tred.ctacta.add.u32 [%rd1], %r1;\n"       /* 1 */
	               "\tld.relaxed.gpu.global.u32 %r2, [%rd1];\n" /* 2 */
	               "\tld.constx.u32 %r3, [%rd1];\n"            /* 3 */
	               "\tret;\n}\n");
	const Module *m = df_module(x.df);
	const Func *f = df_func(x.df);
	Space sp[2];
	assert_int_equal(stmt_spaces(m, func_stmt(m, f, 1), sp), 0);
	assert_int_equal(stmt_spaces(m, func_stmt(m, f, 2), sp), 1);
	assert_int_equal(sp[0], SP_GLOBAL);
	assert_int_equal(stmt_spaces(m, func_stmt(m, f, 3), sp), 0);
	(void)state;
	fx_free(&x);
}

static const char RW[] =
	HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	"\t.reg .b32 %r<60>;\n\t.reg .b64 %rd<10>;\n"
	"\t.shared .align 16 .b8 smem[1024];\n"
	"\tmov.u32 %r1, smem;\n"                   /* 0 */
	"\tmov.u32 %r9, 3;\n"                      /* 1 */
	"\tst.shared.u32 [%r1+16], %r9;\n"         /* 2 */
	"\tld.shared.u32 %r2, [%r1+32];\n"         /* 3: disjoint from 2 */
	"\tld.shared.u32 %r3, [%r1+64];\n"         /* 4 */
	"\tld.shared.u32 %r4, [%r1+16];\n"         /* 5: reads what 2 wrote */
	"\tmov.u32 %r5, %tid.x;\n"                 /* 6 */
	"\tmul.lo.s32 %r6, %r5, 4;\n"              /* 7 */
	"\tadd.s32 %r7, %r1, %r6;\n"               /* 8 */
	"\tld.shared.u32 %r8, [%r7];\n"            /* 9: variable */
	"\tret;\n}\n";

static void test_dataflow__rw_dependency(void **state)
{
	Fx x = fx(RW);
	CutInterface c;
	Err e = ERR_INIT;
	/* loads only: fine */
	assert_int_equal(df_cut(x.df, 3, 4, &c, &e), 0);
	assert_false(c.rw_dependency);
	cut_release(&c);
	/* store at +16 read at 5 after the cut */
	assert_int_equal(df_cut(x.df, 2, 4, &c, &e), 0);
	assert_true(c.rw_dependency);
	assert_int_equal(c.rw_pairs.n, 2);
	assert_int_equal(c.rw_pairs.v[0], 2);
	assert_int_equal(c.rw_pairs.v[1], 5);
	assert_non_null(strstr(c.rw_reason.p, "s2 st.shared may be read by s5 ld.shared"));
	cut_release(&c);
	/* read after write inside the range, disjoint: fine; same bytes: not */
	assert_int_equal(df_cut(x.df, 2, 3, &c, &e), 0);
	assert_true(c.rw_dependency); /* 5 and 9 read after the cut */
	cut_release(&c);
	assert_int_equal(df_cut(x.df, 2, 9, &c, &e), 0);
	assert_true(c.rw_dependency);
	assert_int_equal(c.rw_pairs.v[0], 5); /* (load, earlier store) */
	assert_int_equal(c.rw_pairs.v[1], 2);
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__rw_disjoint_store_is_fine(void **state)
{
	Fx x = fx(HEAD ".visible .entry k(.param .u64 k_p0)\n{\n"
	               "\t.reg .b32 %r<60>;\n\t.reg .b64 %rd<10>;\n"
	               "\tld.param.u64 %rd1, [k_p0+40];\n"        /* 0 */
	               "\tst.global.v4.u32 [%rd1+0], {%r1, %r2, %r3, %r4};\n" /* 1 */
	               "\tld.global.u32 %r5, [%rd1+16];\n"        /* 2 */
	               "\tld.global.u32 %r6, [%rd1+-4];\n"        /* 3 */
	               "\tld.global.nc.u32 %r7, [%rd1+12];\n"     /* 4 */
	               "\tret;\n}\n");
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 1, 1, &c, &e), 0);
	assert_true(c.rw_dependency); /* 4 reads bytes 12..15 */
	assert_int_equal(c.rw_pairs.v[1], 4);
	cut_release(&c);
	assert_int_equal(df_cut(x.df, 0, 3, &c, &e), 0);
	assert_true(c.rw_dependency);
	cut_release(&c);
	assert_int_equal(df_cut(x.df, 1, 3, &c, &e), 0);
	assert_true(c.rw_dependency);
	assert_int_equal(c.rw_pairs.n, 2); /* only (1, 4) */
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__rw_textures_surfaces_dynamic_shared(void **state)
{
	Fx x = fx(HEAD ".global .surfref sf;\n.global .texref tx;\n"
	               ".extern .shared .align 16 .b8 dyn_a[];\n.extern .shared .align 16 .b8 dyn_b[];\n"
	               ".shared .align 4 .b8 st_a[64];\n"
	               ".visible .entry k(.param .u64 k_p0)\n{\n"
	               "\t.reg .b32 %r<60>;\n\t.reg .b64 %rd<10>;\n\t.reg .f32 %f<8>;\n"
	               "\tsust.b.2d.trap.b32 [sf, {%r1, %r2}], {%r3};\n"              /* 0 */
	               "\ttex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tx, {%r1, %r2}];\n" /* 1 */
	               "\tst.shared.u32 [dyn_a+0], %r4;\n"                            /* 2 */
	               "\tld.shared.u32 %r5, [dyn_b+4];\n"                            /* 3 */
	               "\tld.shared.u32 %r6, [st_a];\n"                               /* 4 */
	               "\tld.shared.u32 %r7, [dyn_b];\n"                              /* 5 */
	               "\tcp.async.bulk.prefetch.L2.global [%rd1], 64;\n"             /* 6 */
	               "\tret;\n}\n");
	CutInterface c;
	Err e = ERR_INIT;
	/* a surface write, a texture read of another reference: may be one array */
	assert_int_equal(df_cut(x.df, 0, 0, &c, &e), 0);
	assert_true(c.rw_dependency);
	assert_int_equal(c.stores[SP_SURF], 1);
	assert_int_equal(c.rw_pairs.v[1], 1);
	cut_release(&c);
	/* dyn_a and dyn_b are the same bytes: +0 is read at 5, not at 3 or 4 */
	assert_int_equal(df_cut(x.df, 2, 2, &c, &e), 0);
	assert_true(c.rw_dependency);
	assert_int_equal(c.rw_pairs.n, 2);
	assert_int_equal(c.rw_pairs.v[1], 5);
	cut_release(&c);
	assert_int_equal(df_cut(x.df, 2, 4, &c, &e), 0);
	assert_true(c.rw_dependency);
	cut_release(&c);
	assert_int_equal(df_cut(x.df, 6, 6, &c, &e), 0);
	assert_int_equal(c.loads[SP_GLOBAL] + c.stores[SP_GLOBAL], 0);
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__cut_with_branch_and_guarded_def(void **state)
{
	Fx x = fx(HEAD ".visible .entry k()\n{\n"
	               "\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n"
	               "\tmov.u32 %r1, 1;\n"              /* 0 */
	               "\tmov.u32 %r2, 2;\n"              /* 1 */
	               "\tsetp.eq.s32 %p1, %r1, 0;\n"     /* 2 */
	               "\t@%p1 mov.u32 %r1, 5;\n"         /* 3: guarded, inside the cut */
	               "\tadd.s32 %r3, %r1, 1;\n"         /* 4: %r1 from 0 or 3: live-in */
	               "\t@%p1 bra $L_a;\n"               /* 5 */
	               "\tmov.u32 %r4, %r3;\n"            /* 6 */
	               "$L_a:\n"
	               "\tadd.s32 %r5, %r2, 1;\n"         /* 7 */
	               "\t@%p1 bra $L_b;\n"               /* 8 */
	               "\tadd.s32 %r6, %r3, %r5;\n"       /* 9: %r3 read on one path only */
	               "$L_b:\n"
	               "\tret;\n}\n");
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 3, 7, &c, &e), 0);
	/* live-in: %p1 (3), %r1 (4: the guarded def at 3 keeps 0 reaching), %r2 (7) */
	assert_int_equal(c.live_in.n, 3);
	assert_int_equal(c.live_in.v[0].reg, R(&x, "%p1"));
	assert_int_equal(c.live_in.v[1].reg, R(&x, "%r1"));
	assert_int_equal(c.live_in.v[1].stmt, 4);
	assert_int_equal(c.live_in.v[2].reg, R(&x, "%r2"));
	/* live-out: %r3 (last def 4, read at 9 on one path), %r5 (read at 9);
	 * %r1 is dead after 7, %r4 is never read */
	assert_int_equal(c.live_out.n, 2);
	assert_int_equal(c.live_out.v[0].reg, R(&x, "%r3"));
	assert_int_equal(c.live_out.v[0].stmt, 4);
	assert_int_equal(c.live_out.v[0].use, 9);
	assert_int_equal(c.live_out.v[1].reg, R(&x, "%r5"));
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

/* Vector variables declared without '%' (`.reg .v4 .f32 c;`), used one
 * element at a time: an element is a use (or a partial, non-killing write)
 * of its variable; one operand that writes every element is a kill. */
static const char VECVARS[] = HEAD
	".visible .entry k(.param .u64 p)\n{\n"
	"\t.reg .b32 %r<4>;\n\t.reg .v4 .f32 c, d;\n\t.reg .v2 .b32 b;\n"
	"\tmov.v4.f32 c, {0f00000000, 0f00000000, 0f00000000, 0f00000000};\n" /* s0 */
	"\tmov.b32 b.x, %r1;\n"                                             /* s1 */
	"\tmov.b32 b.y, %r2;\n"                                             /* s2 */
	"\tmov.f32 d.x, c.r;\n"                                             /* s3 */
	"\tmov.f32 {d.x, d.y, d.z, d.w}, {c.r, c.g, c.b, c.a};\n"           /* s4: not valid PTX,
	                                                                      * shape only */
	"\tadd.u32 %r3, b.x, b.y;\n"                                         /* s5 */
	"\tret;\n}\n";

static void test_dataflow__vector_variables(void **state)
{
	Fx x = fx(VECVARS);
	uint32_t c = R(&x, "c"), d = R(&x, "d"), b = R(&x, "b");
	/* the names with selectors are their variables */
	DEFS(x, 1, "b");
	USES(x, 3, "c");
	USES(x, 5, "b");
	bool kills = true;
	assert_true(df_stmt_defines(x.df, 1, b, &kills));
	assert_false(kills); /* b.x alone keeps b.y */
	assert_true(df_stmt_defines(x.df, 3, d, &kills));
	assert_false(kills);
	assert_true(df_stmt_defines(x.df, 4, d, &kills));
	assert_true(kills); /* every element of the .v4 written at once */
	assert_true(df_stmt_defines(x.df, 0, c, &kills));
	assert_true(kills);
	/* b at s5: written in two halves, so both writes reach (neither kills) */
	assert_int_equal(df_reaching_def(x.df, 5, b), DF_DEF_MANY);
	/* d after s4 is s4's: the whole write killed s3's */
	CutInterface cut;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 4, 4, &cut, &e), 0);
	assert_int_equal(cut.live_in.n, 1); /* c; d is written whole, not read */
	assert_int_equal(cut.live_in.v[0].reg, c);
	cut_release(&cut);
	assert_int_equal(df_cut(x.df, 3, 3, &cut, &e), 0);
	/* d.x alone: d's other elements flow through, so d is live-in too only
	 * if they are read later; they are not (s4 kills d): c only */
	assert_int_equal(cut.live_in.n, 1);
	cut_release(&cut);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__brx_reaches_every_label(void **state)
{
	Fx x = fx(HEAD ".visible .entry k()\n{\n"
	               "\t.reg .b32 %r<40>;\n"
	               "\tmov.u32 %r1, 0;\n"              /* 0 */
	               "\tbrx.idx %r1, $L_tbl;\n"         /* 1 */
	               "$L_x:\n"
	               "\tmov.u32 %r2, 1;\n"              /* 2 */
	               "\tret;\n"                         /* 3 */
	               "$L_y:\n"
	               "\tmov.u32 %r2, 2;\n"              /* 4 */
	               "\t@%r1 ret;\n"                    /* 5: not a predicate, still parsed */
	               "\tret;\n}\n");
	uint32_t n;
	df_block_succs(x.df, 0, &n);
	assert_int_equal(n, 2);
	USES(x, 1, "%r1");
	DEFS(x, 1, "");
	fx_free(&x);
	/* a label declared in two scopes: a branch to it may reach either */
	x = fx(HEAD ".visible .entry k()\n{\n\t.reg .pred %p<2>;\n"
	       "\t{\n\t@%p1 bra L;\n\tmov.pred %p0, 0;\n\tL:\n\tmov.pred %p1, 1;\n\t}\n" /* 0..2 */
	       "\t{\n\tmov.pred %p1, 0;\n\tL:\n\tret;\n\t}\n}\n");              /* 3..4 */
	df_block_succs(x.df, 0, &n);
	assert_int_equal(n, 3); /* both L and the fall-through */
	(void)state;
	fx_free(&x);
}

/* df_cache: one cache per type, made on first use, the same pointer after,
 * freed by df_free. */
static int cache_made, cache_freed;

static void *cache_make(Dataflow *df)
{
	cache_made++;
	uint32_t *p = malloc(sizeof *p);
	*p = df_nstmt(df);
	return p;
}

static void cache_free(void *p)
{
	cache_freed++;
	free(p);
}

static void test_dataflow__cache_slots(void **state)
{
	(void)state;
	static const DfCacheType one = {cache_make, cache_free}, two = {cache_make, cache_free};
	cache_made = cache_freed = 0;
	Fx x = fx(HEAD ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n"
	          "\tmov.u32 %r1, 1;\n\tmov.u32 %r2, %r1;\n\tret;\n}\n");
	uint32_t *a = df_cache(x.df, &one);
	assert_int_equal(*a, 3);
	assert_ptr_equal(df_cache(x.df, &one), a);
	assert_int_equal(cache_made, 1);
	uint32_t *b = df_cache(x.df, &two);
	assert_ptr_not_equal(a, b);
	assert_int_equal(cache_made, 2);
	assert_int_equal(cache_freed, 0);
	fx_free(&x);
	assert_int_equal(cache_freed, 2);
}

/* ---- issue 11: scale-d, zeros, reads and writes, guards, every definition */

static void test_dataflow__wgmma_scale_d_zero_reads_no_d(void **state)
{
	Fx x = fx(
	    HEAD
	    ".visible .entry k()\n{\n"
	    "\t.reg .pred %p<4>;\n\t.reg .f32 %f<10>;\n\t.reg .b64 %rd<4>;\n"
	    "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, "
	    "%rd1, %rd2, 0, 1, 1, 0, 0;\n" /* 0: D = A * B */
	    "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, "
	    "%rd1, %rd2, %p1, 1, 1, 0, 0;\n" /* 1: D read when %p1 */
	    "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, "
	    "%rd1, %rd2, 1, 1, 1, 0, 0;\n" /* 2: D read */
	    "\tret;\n}\n");
	DEFS(x, 0, "%f1,%f2,%f3,%f4");
	USES(x, 0, "%rd1,%rd2");
	USES(x, 1, "%f1,%f2,%f3,%f4,%rd1,%rd2,%p1");
	USES(x, 2, "%f1,%f2,%f3,%f4,%rd1,%rd2");
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 0, 0, &c, &e), 0);
	assert_int_equal(c.live_in.n, 2); /* the two descriptors only */
	cut_release(&c);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__zero_literals(void **state)
{
	/* every bit zero, or not: written out by hand */
	Fx x = fx(HEAD ".visible .entry k()\n{\n"
	               "\t.reg .b32 %r<40>;\n\t.reg .f32 %f<40>;\n\t.reg .f64 %fd<4>;\n"
	               "\tmov.b32 %r1, 0;\n"                   /* 0 yes */
	               "\tmov.b32 %r1, 0x0;\n"                 /* 1 yes */
	               "\tmov.b32 %r1, 00;\n"                  /* 2 yes */
	               "\tmov.b32 %r1, 0U;\n"                  /* 3 yes */
	               "\tmov.b32 %r1, -0;\n"                  /* 4 yes: the integer 0 */
	               "\tmov.f32 %f1, 0f00000000;\n"          /* 5 yes */
	               "\tmov.f64 %fd1, 0d0000000000000000;\n" /* 6 yes */
	               "\tmov.f32 %f1, 0.0;\n"                 /* 7 yes */
	               "\tmov.b32 %r1, 1;\n"                   /* 8 no */
	               "\tmov.b32 %r1, 0x10;\n"                /* 9 no */
	               "\tmov.f32 %f1, 0f80000000;\n"          /* 10 no: -0.0 */
	               "\tmov.f32 %f1, 1.0;\n"                 /* 11 no */
	               "\tmov.f32 %f1, 0f3F800000;\n"          /* 12 no */
	               "\tmov.b32 %r1, %r2;\n"                 /* 13 no: a register */
	               "\tmov.f32 %f1, 0f00000001;\n"          /* 14 no: a denormal */
	               "\tret;\n}\n");
	static const bool want[] = {true,  true,  true,  true,  true,  true,  true, true,
	                            false, false, false, false, false, false, false};
	for (uint32_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const Stmt *s = func_stmt(x.m, df_func(x.df), i);
		if (df_opd_is_zero(x.m, stmt_opd(x.m, s, 1)) != want[i])
			fail_msg("s%u: df_opd_is_zero says %d", i, !want[i]);
	}
	(void)state;
	fx_free(&x);
}

static const char GUARDED[] =
    HEAD ".visible .entry k(.param .u64 k_p0, .param .u32 k_p1)\n{\n"
         "\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<4>;\n"
         "\tld.param.u64 %rd1, [k_p0];\n" /* 0 */
         "\tld.param.u32 %r1, [k_p1];\n"  /* 1 */
         "\tsetp.ne.s32 %p1, %r1, 0;\n"   /* 2 */
         "\tmov.u32 %r2, 7;\n"            /* 3 */
         "\tmov.u32 %r3, 2;\n"            /* 4 */
         "\tadd.s32 %r2, %r2, %r3;\n"     /* 5: reads and writes %r2 */
         "\t@%p1 mov.u32 %r4, 9;\n"       /* 6: %r4 only written, guarded */
         "\tmov.u32 %r5, 5;\n"            /* 7 */
         "\t@%p1 mov.u32 %r5, 6;\n"       /* 8: the old %r5 is the cut's own */
         "\t@%p1 mov.u32 %r6, 1;\n"       /* 9 */
         "\tmov.u32 %r6, 2;\n"            /* 10: kills: the old %r6 is dead */
         "\tadd.s32 %r7, %r2, %r4;\n"     /* 11 */
         "\tadd.s32 %r7, %r7, %r5;\n"     /* 12 */
         "\tadd.s32 %r7, %r7, %r6;\n"     /* 13 */
         "\tst.global.u32 [%rd1], %r7;\n" /* 14 */
         "\tret;\n}\n";

static void test_dataflow__read_and_write_same_register(void **state)
{
	Fx x = fx(GUARDED);
	uint32_t r2 = R(&x, "%r2"), r3 = R(&x, "%r3");
	bool kills = false;
	assert_true(df_stmt_defines(x.df, 5, r2, &kills));
	assert_true(kills);
	assert_true(df_stmt_uses(x.df, 5, r2));
	/* the use at 5 reads 3's value, the one at 11 reads 5's */
	assert_int_equal(df_reaching_def(x.df, 5, r2), 3);
	assert_int_equal(df_reaching_def(x.df, 11, r2), 5);
	CutInterface c;
	Err e = ERR_INIT;
	/* a killing write that also reads: the old value is an input */
	assert_int_equal(df_cut(x.df, 5, 5, &c, &e), 0);
	assert_int_equal(c.live_in.n, 2);
	assert_int_equal(c.live_in.v[0].reg, r2);
	assert_false(c.live_in.v[0].through);
	assert_int_equal(c.live_in.v[1].reg, r3);
	assert_int_equal(c.live_out.n, 1);
	assert_int_equal(c.live_out.v[0].reg, r2);
	cut_release(&c);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__guarded_write_live_in(void **state)
{
	Fx x = fx(GUARDED);
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 6, 10, &c, &e), 0);
	/* %p1 (read at 6), %r4 (the guarded write at 6 keeps the old value);
	 * not %r5 (its old value is 7's, inside), not %r6 (10 kills it) */
	assert_int_equal(c.live_in.n, 2);
	assert_int_equal(c.live_in.v[0].reg, R(&x, "%p1"));
	assert_false(c.live_in.v[0].through);
	assert_int_equal(c.live_in.v[1].reg, R(&x, "%r4"));
	assert_true(c.live_in.v[1].through);
	assert_int_equal(c.live_in.v[1].stmt, 6);
	assert_int_equal(c.live_out.n, 3);
	cut_release(&c);
	/* an unguarded write of the same register is no input */
	assert_int_equal(df_cut(x.df, 7, 7, &c, &e), 0);
	assert_int_equal(c.live_in.n, 0);
	cut_release(&c);
	/* nor a guarded one whose register is dead after it */
	assert_int_equal(df_cut(x.df, 9, 9, &c, &e), 0);
	assert_int_equal(c.live_in.n, 1); /* %p1 */
	cut_release(&c);
	err_release(&e);
	(void)state;
	fx_free(&x);
}

static void test_dataflow__every_reaching_definition(void **state)
{
	Fx x = fx(LOOP);
	uint32_t r1 = R(&x, "%r1"), defs[4];
	bool entry = true;
	/* around the loop: 0 on entry, 2 from the back edge */
	assert_int_equal(df_reaching_defs(x.df, 2, r1, defs, 4, &entry), 2);
	assert_int_equal(defs[0], 0);
	assert_int_equal(defs[1], 2);
	assert_false(entry);
	assert_int_equal(df_reaching_defs(x.df, 5, r1, defs, 4, &entry), 1);
	assert_int_equal(defs[0], 2);
	/* in the block: the nearest definition before */
	assert_int_equal(df_def_before_in_block(x.df, 3, r1), 2);
	assert_int_equal(df_def_before_in_block(x.df, 2, r1), DF_DEF_NONE);
	fx_free(&x);
	/* a killing and a guarded definition: both reach */
	x = fx(BRANCHY);
	assert_int_equal(df_reaching_defs(x.df, 9, R(&x, "%r4"), defs, 4, &entry), 2);
	assert_int_equal(defs[0], 7);
	assert_int_equal(defs[1], 8);
	assert_false(entry);
	/* never defined before the use: none, and the entry */
	assert_int_equal(df_reaching_defs(x.df, 2, R(&x, "%r5"), defs, 4, &entry), 0);
	assert_true(entry);
	fx_free(&x);
	/* defined on one path only: that definition, and the entry */
	x = fx(HEAD ".visible .entry k()\n{\n"
	            "\t.reg .pred %p<4>;\n\t.reg .b32 %r<40>;\n"
	            "\tmov.u32 %r1, 1;\n"          /* 0 */
	            "\tsetp.eq.s32 %p1, %r1, 0;\n" /* 1 */
	            "\t@%p1 bra $L_j;\n"           /* 2 */
	            "\tmov.u32 %r2, 5;\n"          /* 3 */
	            "$L_j:\n"
	            "\tadd.s32 %r3, %r2, 1;\n" /* 4 */
	            "\tret;\n}\n");
	assert_int_equal(df_reaching_defs(x.df, 4, R(&x, "%r2"), defs, 4, &entry), 1);
	assert_int_equal(defs[0], 3);
	assert_true(entry);
	(void)state;
	fx_free(&x);
}

/* ---- hand-derived cases --------------------------------------------------- */
/*
 * Each case below is small enough to solve on paper; the expected values
 * come from the derivation in its comment (the rules of ana.h applied by
 * hand), not from running the analysis.
 */

/* A statement that reads and writes one register, inside one block:
 *   s0 ld.param.u64 %rd1, [p0]
 *   s1 mov.u32 %r1, 5          defines %r1 (kill)
 *   s2 mov.u32 %r2, 7          defines %r2 (kill)
 *   s3 add.s32 %r1, %r1, %r2   reads %r1 (s1's value), then writes %r1
 *   s4 st.global.u32 [%rd1], %r1   reads s3's %r1
 * Liveness backwards: after s4 nothing is live.  Before s4: %r1 (read),
 * %rd1.  s3 writes %r1 (remove it) and reads %r1, %r2 (add them): live
 * before s3 = {%r1, %r2, %rd1}.  So %r1 is live after s1 and after s2: the
 * write at s3 happens after its read and does not end the life of s1's
 * value.  s2 defines %r2, so %r2 is live after s2, not after s1. */
static const char RW_BLOCK[] = HEAD ".visible .entry k(.param .u64 p0)\n{\n"
                                    "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n"
                                    "\tld.param.u64 %rd1, [p0];\n"
                                    "\tmov.u32 %r1, 5;\n"
                                    "\tmov.u32 %r2, 7;\n"
                                    "\tadd.s32 %r1, %r1, %r2;\n"
                                    "\tst.global.u32 [%rd1], %r1;\n"
                                    "\tret;\n}\n";

static void test_dataflow__hand_read_write_is_no_kill_of_the_read(void **state)
{
	(void)state;
	Fx x = fx(RW_BLOCK);
	uint32_t r1 = R(&x, "%r1"), r2 = R(&x, "%r2"), u[4];
	assert_true(df_live_after(x.df, 1, r1));
	assert_true(df_live_after(x.df, 2, r1));
	assert_true(df_live_after(x.df, 3, r1));  /* s4 reads s3's value */
	assert_false(df_live_after(x.df, 4, r1)); /* nothing reads it after s4 */
	assert_false(df_live_after(x.df, 1, r2));
	assert_true(df_live_after(x.df, 2, r2));
	assert_false(df_live_after(x.df, 3, r2));
	/* the read at s3 is s1's value; the read at s4 is s3's */
	assert_int_equal(df_reaching_def(x.df, 3, r1), 1);
	assert_int_equal(df_reaching_def(x.df, 4, r1), 3);
	assert_int_equal(df_uses_of(x.df, 1, r1, u, 4), 1);
	assert_int_equal(u[0], 3);
	assert_int_equal(df_uses_of(x.df, 3, r1, u, 4), 1);
	assert_int_equal(u[0], 4);
	/* the cut s3..s3 reads %r1 and %r2 from before it (first-use order:
	 * the operands left to right, %r1 first) and hands %r1 on */
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 3, 3, &c, &e), 0);
	assert_int_equal(c.live_in.n, 2);
	assert_int_equal(c.live_in.v[0].reg, r1);
	assert_int_equal(c.live_in.v[1].reg, r2);
	assert_int_equal(c.live_out.n, 1);
	assert_int_equal(c.live_out.v[0].reg, r1);
	cut_release(&c);
	err_release(&e);
	fx_free(&x);
}

/* The same across a block boundary: the read-write statement is the first
 * statement of its block that touches %r1.
 *   B0: s0 ld.param  s1 mov %r1, 5  s2 mov %r2, 7  s3 setp %p1  s4 @%p1 bra $L_a
 *   B1: s5 mov.u32 %r3, 1
 *   B2 ($L_a): s6 add.s32 %r1, %r1, %r2   s7 st [%rd1], %r1   s8 ret
 * B2 reads %r1 at s6 before s6's write: %r1 is live into B2, hence live out
 * of its predecessors B0 (the branch) and B1 (the fall-through), and live
 * into B1 (B1 does not define it).  %r3 is never read: live nowhere. */
static const char RW_BLOCKS[] = HEAD ".visible .entry k(.param .u64 p0)\n{\n"
                                     "\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n"
                                     "\tld.param.u64 %rd1, [p0];\n"
                                     "\tmov.u32 %r1, 5;\n"
                                     "\tmov.u32 %r2, 7;\n"
                                     "\tsetp.eq.s32 %p1, %r2, 0;\n"
                                     "\t@%p1 bra $L_a;\n"
                                     "\tmov.u32 %r3, 1;\n"
                                     "$L_a:\n"
                                     "\tadd.s32 %r1, %r1, %r2;\n"
                                     "\tst.global.u32 [%rd1], %r1;\n"
                                     "\tret;\n}\n";

static void test_dataflow__hand_read_write_first_in_its_block(void **state)
{
	(void)state;
	Fx x = fx(RW_BLOCKS);
	uint32_t r1 = R(&x, "%r1"), r3 = R(&x, "%r3");
	assert_int_equal(df_nblocks(x.df), 3);
	uint32_t b0 = df_block_of(x.df, 4), b1 = df_block_of(x.df, 5), b2 = df_block_of(x.df, 6);
	assert_true(b0 != b1 && b1 != b2 && b0 != b2);
	assert_true(df_live_in_block(x.df, b2, r1));
	assert_true(df_live_in_block(x.df, b1, r1));
	assert_true(df_live_after(x.df, 4, r1)); /* end of B0 */
	assert_true(df_live_after(x.df, 5, r1)); /* end of B1 */
	assert_false(df_live_in_block(x.df, b2, r3));
	assert_false(df_live_after(x.df, 5, r3));
	/* one definition reaches s6 on both paths: s1 */
	assert_int_equal(df_reaching_def(x.df, 6, r1), 1);
	fx_free(&x);
}

/* A guarded definition does not kill:
 *   s0 ld.param.u64 %rd1, [p0]
 *   s1 ld.global.u32 %r1, [%rd1]
 *   s2 setp.ne.s32 %p1, %r1, 0
 *   s3 mov.u32 %r2, 1
 *   s4 @%p1 mov.u32 %r2, 2     writes %r2 only when %p1 holds
 *   s5 st.global.u32 [%rd1], %r2
 * When %p1 is false s5 reads s3's %r2, so %r2 is live after s3 (a kill at
 * s4 would make it dead there), both s3 and s4 reach s5 (DF_DEF_MANY; the
 * set is {3, 4}, the entry not among them: s3 kills), and s3's value has
 * one use, s5.  The cut s4..s4 reads %p1, and %r2 "through": its old value
 * leaves the cut when the write does not happen. */
static const char GUARD_HAND[] = HEAD ".visible .entry k(.param .u64 p0)\n{\n"
                                      "\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n"
                                      "\tld.param.u64 %rd1, [p0];\n"
                                      "\tld.global.u32 %r1, [%rd1];\n"
                                      "\tsetp.ne.s32 %p1, %r1, 0;\n"
                                      "\tmov.u32 %r2, 1;\n"
                                      "\t@%p1 mov.u32 %r2, 2;\n"
                                      "\tst.global.u32 [%rd1], %r2;\n"
                                      "\tret;\n}\n";

static void test_dataflow__hand_guarded_definition_does_not_kill(void **state)
{
	(void)state;
	Fx x = fx(GUARD_HAND);
	uint32_t r2 = R(&x, "%r2"), defs[4], u[4];
	bool kills = true, entry = true;
	assert_true(df_stmt_defines(x.df, 4, r2, &kills));
	assert_false(kills);
	assert_true(df_stmt_defines(x.df, 3, r2, &kills));
	assert_true(kills);
	assert_true(df_live_after(x.df, 3, r2));
	assert_int_equal(df_reaching_def(x.df, 5, r2), DF_DEF_MANY);
	assert_int_equal(df_reaching_defs(x.df, 5, r2, defs, 4, &entry), 2);
	assert_int_equal(defs[0], 3);
	assert_int_equal(defs[1], 4);
	assert_false(entry);
	assert_int_equal(df_uses_of(x.df, 3, r2, u, 4), 1);
	assert_int_equal(u[0], 5);
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 4, 4, &c, &e), 0);
	assert_int_equal(c.live_in.n, 2);
	assert_int_equal(c.live_in.v[0].reg, R(&x, "%p1"));
	assert_false(c.live_in.v[0].through);
	assert_int_equal(c.live_in.v[1].reg, r2);
	assert_true(c.live_in.v[1].through);
	assert_int_equal(c.live_out.n, 1);
	assert_int_equal(c.live_out.v[0].reg, r2);
	cut_release(&c);
	err_release(&e);
	fx_free(&x);
}

/* Vector operands:
 *   s0 ld.param.u64 %rd1, [p0]
 *   s1 ld.global.v2.u32 {%r1, %r2}, [%rd1]   a vector of registers: defines
 *                                            and kills %r1 and %r2
 *   s2 mov.b32 v.x, %r1     one element of the .v2 variable v: a definition
 *   s3 mov.b32 v.y, %r2     of v that does not kill (the other element stays)
 *   s4 add.u32 %r3, v.x, v.y    reads v
 *   s5 mov.b32 v.x, %r3     one element again: v.y (s3's) stays
 *   s6 st.global.v2.u32 [%rd1], {v.x, v.y}   reads v: s3's y and s5's x
 * So: s4 is reached by s2 and s3 and by the entry (no kill of v before
 * it); v is live after s5 and after s4 (s6 reads v.y, which s5 keeps);
 * %r1 is dead after s2, %r2 after s3; the cut s5..s5 reads %r3 and lets
 * v's old value through, and hands v on. */
static const char VEC_HAND[] = HEAD ".visible .entry k(.param .u64 p0)\n{\n"
                                    "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\t.reg .v2 .b32 v;\n"
                                    "\tld.param.u64 %rd1, [p0];\n"
                                    "\tld.global.v2.u32 {%r1, %r2}, [%rd1];\n"
                                    "\tmov.b32 v.x, %r1;\n"
                                    "\tmov.b32 v.y, %r2;\n"
                                    "\tadd.u32 %r3, v.x, v.y;\n"
                                    "\tmov.b32 v.x, %r3;\n"
                                    "\tst.global.v2.u32 [%rd1], {v.x, v.y};\n"
                                    "\tret;\n}\n";

static void test_dataflow__hand_vector_operands(void **state)
{
	(void)state;
	Fx x = fx(VEC_HAND);
	uint32_t v = R(&x, "v"), r1 = R(&x, "%r1"), r2 = R(&x, "%r2"), r3 = R(&x, "%r3");
	uint32_t defs[4];
	bool kills = false, entry = false;
	DEFS(x, 1, "%r1,%r2");
	assert_true(df_stmt_defines(x.df, 1, r1, &kills));
	assert_true(kills);
	assert_true(df_stmt_defines(x.df, 1, r2, &kills));
	assert_true(kills);
	assert_true(df_stmt_defines(x.df, 2, v, &kills));
	assert_false(kills);
	assert_true(df_stmt_defines(x.df, 5, v, &kills));
	assert_false(kills);
	USES(x, 6, "%rd1,v");
	assert_int_equal(df_reaching_defs(x.df, 4, v, defs, 4, &entry), 2);
	assert_int_equal(defs[0], 2);
	assert_int_equal(defs[1], 3);
	assert_true(entry);
	assert_true(df_live_after(x.df, 4, v));
	assert_true(df_live_after(x.df, 5, v));
	assert_false(df_live_after(x.df, 2, r1));
	assert_true(df_live_after(x.df, 2, r2));
	assert_false(df_live_after(x.df, 3, r2));
	CutInterface c;
	Err e = ERR_INIT;
	assert_int_equal(df_cut(x.df, 5, 5, &c, &e), 0);
	assert_int_equal(c.live_in.n, 2);
	bool saw_r3 = false, saw_v = false;
	for (size_t i = 0; i < c.live_in.n; i++) {
		if (c.live_in.v[i].reg == r3)
			saw_r3 = !c.live_in.v[i].through;
		if (c.live_in.v[i].reg == v)
			saw_v = c.live_in.v[i].through;
	}
	assert_true(saw_r3);
	assert_true(saw_v);
	assert_int_equal(c.live_out.n, 1);
	assert_int_equal(c.live_out.v[0].reg, v);
	cut_release(&c);
	err_release(&e);
	fx_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataflow__registers_ranges_plain_special),
		cmocka_unit_test(test_dataflow__scoped_declarations_are_distinct),
		cmocka_unit_test(test_dataflow__defs_uses_by_opcode_class),
		cmocka_unit_test(test_dataflow__mma_and_wgmma_accumulators),
		cmocka_unit_test(test_dataflow__call_defines_return_list),
		cmocka_unit_test(test_dataflow__blocks_and_successors),
		cmocka_unit_test(test_dataflow__liveness_across_branches),
		cmocka_unit_test(test_dataflow__reaching_defs_merge_and_guard),
		cmocka_unit_test(test_dataflow__loops),
		cmocka_unit_test(test_dataflow__live_out_around_a_loop_with_a_branch),
		cmocka_unit_test(test_dataflow__loop_cut),
		cmocka_unit_test(test_dataflow__nested_loops),
		cmocka_unit_test(test_dataflow__cut_live_in_out_accumulators),
		cmocka_unit_test(test_dataflow__cut_with_branch_and_guarded_def),
		cmocka_unit_test(test_dataflow__brx_reaches_every_label),
		cmocka_unit_test(test_dataflow__vector_variables),
		cmocka_unit_test(test_dataflow__cut_memory_effects),
		cmocka_unit_test(test_dataflow__reaching_defs_single_definition),
		cmocka_unit_test(test_dataflow__uses_on_demand),
		cmocka_unit_test(test_dataflow__cut_live_out_by_name),
		cmocka_unit_test(test_dataflow__plain_name_in_a_range),
		cmocka_unit_test(test_dataflow__rw_dependency),
		cmocka_unit_test(test_dataflow__rw_disjoint_store_is_fine),
		cmocka_unit_test(test_dataflow__rw_textures_surfaces_dynamic_shared),
		cmocka_unit_test(test_dataflow__cache_slots),
		cmocka_unit_test(test_dataflow__wgmma_scale_d_zero_reads_no_d),
		cmocka_unit_test(test_dataflow__zero_literals),
		cmocka_unit_test(test_dataflow__read_and_write_same_register),
		cmocka_unit_test(test_dataflow__guarded_write_live_in),
		cmocka_unit_test(test_dataflow__every_reaching_definition),
		cmocka_unit_test(test_dataflow__space_components_not_spaces),
		cmocka_unit_test(test_dataflow__hand_read_write_is_no_kill_of_the_read),
		cmocka_unit_test(test_dataflow__hand_read_write_first_in_its_block),
		cmocka_unit_test(test_dataflow__hand_guarded_definition_does_not_kill),
		cmocka_unit_test(test_dataflow__hand_vector_operands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
