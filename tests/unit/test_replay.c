/*
 * test_replay.c - the state plan of a cut (replay/replay.h) on a small
 * hand-written kernel whose facts are read off its text: which live-ins
 * are addresses and of what (a parameter field, the shared variable),
 * which buffers are taken and compared, and each refusal the plan makes
 * (a loop back edge leaving the cut, a read of a buffer the kernel writes,
 * an address the walk cannot rebase, a wgmma group in flight, a vector
 * live-in); then the replay module of the replayable cut, its rebasing
 * lines and ptxas's verdict on it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ptx/parse.h"
#include "replay/replay.h"
#include "splice/ptxas.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kernel[] =
    ".version 8.0\n"
    ".target sm_90a\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry k(\n"
    ".param .align 8 .b8 k_param_0[16]\n"
    ")\n"
    "{\n"
    ".reg .pred %p<4>;\n"
    ".reg .b32 %r<40>;\n"
    ".reg .b64 %rd<20>;\n"
    ".shared .align 16 .b8 smem[1024];\n"
    "\n"
    "ld.param.u64 %rd1, [k_param_0];\n"   /* s0: buffer a */
    "ld.param.u64 %rd2, [k_param_0+8];\n" /* s1: buffer b */
    "cvta.to.global.u64 %rd3, %rd1;\n"    /* s2 */
    "cvta.to.global.u64 %rd4, %rd2;\n"    /* s3 */
    "mov.u32 %r1, %tid.x;\n"              /* s4 */
    "mul.wide.u32 %rd5, %r1, 4;\n"        /* s5 */
    "add.s64 %rd6, %rd3, %rd5;\n"         /* s6: into a */
    "add.s64 %rd7, %rd4, %rd5;\n"         /* s7: into b */
    "mov.u32 %r2, smem;\n"                /* s8 */
    "shl.b32 %r3, %r1, 2;\n"              /* s9 */
    "add.s32 %r4, %r2, %r3;\n"            /* s10: into smem */
    "and.b64 %rd8, %rd6, -16;\n"          /* s11: a masked address */
    "mov.u32 %r5, 0;\n"                   /* s12 */
    "$L_loop:\n"
    "add.s32 %r5, %r5, 1;\n"             /* s13 */
    "setp.lt.u32 %p1, %r5, 4;\n"         /* s14 */
    "@%p1 bra $L_loop;\n"                /* s15 */
    "add.s32 %r13, %r5, 0;\n"            /* s16 */
    "ld.global.u32 %r6, [%rd6];\n"       /* s17: reads a */
    "ld.shared.u32 %r7, [%r4];\n"        /* s18 */
    "add.s32 %r8, %r6, %r7;\n"           /* s19 */
    "st.global.u32 [%rd7], %r8;\n"       /* s20: writes b */
    "ld.global.u32 %r9, [%rd7+4];\n"     /* s21: reads b */
    "ld.global.u32 %r10, [%rd8];\n"      /* s22 */
    "add.s32 %r11, %r9, %r10;\n"         /* s23 */
    "st.global.u32 [%rd7+1024], %r11;\n" /* s24 */
    "add.s32 %r12, %r11, %r5;\n"         /* s25 */
    "st.global.u32 [%rd7+1032], %r12;\n" /* s26 */
    "ret;\n"
    "}\n"
    "\n"
    ".visible .entry w(\n"
    ".param .align 8 .b8 w_param_0[16]\n"
    ")\n"
    "{\n"
    ".reg .b32 %r<8>;\n"
    ".reg .f32 %f<8>;\n"
    ".reg .b64 %rd<8>;\n"
    ".reg .v4 .b32 %v;\n"
    "mov.u64 %rd1, 0;\n"          /* s0 */
    "wgmma.fence.sync.aligned;\n" /* s1 */
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, "
    "%rd1, 1, 1, 1, 0, 0;\n"              /* s2 */
    "wgmma.commit_group.sync.aligned;\n"  /* s3 */
    "add.f32 %f5, %f6, %f7;\n"            /* s4 */
    "wgmma.wait_group.sync.aligned 0;\n"  /* s5 */
    "mov.b32 %r1, %v.x;\n"                /* s6 */
    "add.f32 %f6, %f1, %f5;\n"            /* s7 */
    "ld.param.u64 %rd2, [w_param_0+8];\n" /* s8 */
    "add.s64 %rd3, %rd2, 64;\n"           /* s9 */
    "sub.s64 %rd4, %rd3, %rd2;\n"         /* s10: 64, data */
    "add.s64 %rd5, %rd3, 0;\n"            /* s11 */
    "add.s64 %rd6, %rd4, %rd5;\n"         /* s12 */
    "bar.sync 0;\n"                       /* s13 */
    "add.s32 %r2, %r1, 1;\n"              /* s14 */
    "ret;\n"
    "}\n";

static const char layer[] =
    "{\"layer\": \"t\", \"module\": \"t.ptx\", \"entry\": \"k\","
    " \"buffers\": {\"a\": {\"size\": 4096, \"init\": {\"kind\": \"zero\"}},"
    "              \"b\": {\"size\": 4096, \"init\": {\"kind\": \"zero\"}}},"
    " \"launches\": [{\"entry\": \"k\", \"grid\": [2,1,1], \"block\": [64,1,1],"
    "  \"params\": {\"size\": 16, \"fields\": ["
    "   {\"offset\": 0, \"kind\": \"buffer\", \"buffer\": \"a\"},"
    "   {\"offset\": 8, \"kind\": \"buffer\", \"buffer\": \"b\"}]}}],"
    " \"frame\": [{\"name\": \"b\", \"buffer\": \"b\"}]}";

typedef struct {
	Module *m;
	Manifest mf;
	const Func *f;
	Dataflow *df;
	ReplayPlan plan;
	ReplayRequest q;
} Fix;

static void plan_of(Fix *x, const char *fn, uint32_t first, uint32_t last)
{
	Err e = ERR_INIT;
	memset(x, 0, sizeof *x);
	x->m = ptx_parse("t.ptx", kernel, sizeof kernel - 1, &e);
	if (!x->m)
		fail_msg("%s", err_msg(&e));
	if (mf_parse("t/layer.json", layer, strlen(layer), &x->mf, &e))
		fail_msg("%s", err_msg(&e));
	x->f = mod_func_find(x->m, str_c(fn));
	assert_non_null(x->f);
	x->df = df_build(x->m, x->f, &e);
	assert_non_null(x->df);
	ReplayRequest q = {&x->mf, &x->mf.launches[0],
	                   x->m,   x->f,
	                   x->df,  first,
	                   last,   x->m,
	                   x->f,   x->df,
	                   first,  last,
	                   0,      0};
	x->q = q;
	if (replay_plan(&x->q, &x->plan, &e) < 0)
		fail_msg("%s", err_msg(&e));
	err_release(&e);
}

static void fix_release(Fix *x)
{
	replay_plan_release(&x->plan);
	df_free(x->df);
	mod_free(x->m);
	mf_release(&x->mf);
}

static const ReplayReg *live_in(const Fix *x, const char *name)
{
	for (size_t i = 0; i < x->plan.live_in.n; i++)
		if (!strcmp(x->plan.live_in.v[i].name, name))
			return &x->plan.live_in.v[i];
	return NULL;
}

static bool refused(const Fix *x, const char *what)
{
	bool hit = x->plan.refused.p && strstr(x->plan.refused.p, what);
	if (!hit)
		print_message("refusals:\n%s",
		              x->plan.refused.p ? x->plan.refused.p : "(none)\n");
	return hit;
}

/* s17-s20: a read of a, a shared read, a write of b. */
static void test_replay__addresses_rebased(void **state)
{
	(void)state;
	Fix x;
	plan_of(&x, "k", 17, 20);
	if (x.plan.nrefused)
		fail_msg("refused: %s", x.plan.refused.p);
	/* s20's bytes: %tid.x (0-63) x 4, 4 bytes each: 0-255 of b */
	assert_int_equal(x.plan.spans.n, 1);
	assert_int_equal(x.plan.spans.v[0].buf, 1);
	assert_int_equal(x.plan.spans.v[0].lo, 0);
	assert_int_equal(x.plan.spans.v[0].hi, 63 * 4 + 4);
	assert_true(x.plan.spans.v[0].bounded);
	assert_int_equal(x.plan.spans.v[0].stmt, 20);
	assert_int_equal(x.plan.span_bytes, 256);
	assert_int_equal(x.plan.live_in.n, 3);
	const ReplayReg *a = live_in(&x, "%rd6"), *b = live_in(&x, "%rd7"),
	                *s = live_in(&x, "%r4");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(s);
	/* %rd6 = a's pointer (param +0, read at s0) + tid.x * 4 */
	assert_int_equal(a->kind, RV_PARAM);
	assert_int_equal(a->param_off, 0);
	assert_int_equal(a->evidence, 0);
	assert_int_equal(b->kind, RV_PARAM);
	assert_int_equal(b->param_off, 8);
	assert_int_equal(b->evidence, 1);
	/* %r4 = smem's address (s8) + tid.x * 4 */
	assert_int_equal(s->kind, RV_SYMBOL);
	assert_string_equal(s->symbol, "smem");
	assert_int_equal(s->evidence, 8);
	assert_int_equal(x.plan.shared.n, 1);
	assert_int_equal(x.plan.shared.v[0].bytes, 1024);
	assert_int_equal(x.plan.shared_bytes, 1024);
	assert_int_equal(x.plan.buffers_in.n, 1);
	assert_string_equal(x.mf.buffers[x.plan.buffers_in.v[0]].name, "a");
	assert_int_equal(x.plan.buffers_out.n, 1);
	assert_string_equal(x.mf.buffers[x.plan.buffers_out.v[0]].name, "b");
	assert_int_equal(x.plan.warps, 4); /* 2 blocks of 64 threads */

	/* the replay module: both entries, the rebasing of the three */
	Err e = ERR_INIT;
	ProbePlan dp = {0};
	StrBuf mod = STRBUF_INIT, dm = STRBUF_INIT;
	if (replay_dump_plan(&x.plan, x.m, x.f, &dp, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_int_equal(dp.recs.n, REPLAY_NREC);
	assert_int_equal(dp.recs.v[REPLAY_REC_START].vals.n, 3);
	assert_int_equal(dp.recs.v[REPLAY_REC_SYMBOLS].vals.n, 1);
	if (replay_module(&x.plan, &dp, &x.q, &mod, &e) < 0)
		fail_msg("%s", err_msg(&e));
	const char *t = mod.p;
	assert_non_null(
	    strstr(t, ".visible .entry __d4r_replay_original(\n.param .align 8 .b8 "
	              "k_param_0[16]\n)"));
	assert_non_null(strstr(t, ".visible .entry __d4r_replay_spliced("));
	assert_non_null(strstr(t, "ld.param.u64 \t%d4rpl0_a5, [k_param_0+0];"));
	assert_non_null(strstr(t, "ld.param.u64 \t%d4rpl0_a5, [k_param_0+8];"));
	assert_non_null(strstr(t, "add.s64 \t%rd6, %rd6, %d4rpl0_a5;\t// rebased"));
	assert_non_null(strstr(t, "mov.u32 \t%d4rpl0_t5, smem;"));
	assert_non_null(strstr(t, "add.s32 \t%r4, %r4, %d4rpl0_t7;\t// rebased"));
	/* the cut's text, byte for byte */
	assert_non_null(strstr(t,
	                       "ld.global.u32 %r6, [%rd6];\nld.shared.u32 %r7, [%r4];\n"
	                       "add.s32 %r8, %r6, %r7;\nst.global.u32 [%rd7], %r8;\n"));
	StrBuf log = STRBUF_INIT;
	int pr =
	    splice_ptxas(mod.p, mod.n, "sm_90a", NULL, NULL, "replay", NULL, &log, &e);
	if (pr > 0)
		fail_msg("ptxas rejects the replay module:\n%s\n%s", log.p, mod.p);
	sb_reset(&log);
	if (replay_dump_module(&dp, x.m, x.f, &dm, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_non_null(
	    strstr(dm.p, ".visible .global .align 8 .u64 __d4r_replay_shared;"));
	pr = splice_ptxas(dm.p, dm.n, "sm_90a", "k", NULL, "dump", NULL, &log, &e);
	if (pr > 0)
		fail_msg("ptxas rejects the dump module:\n%s\n%s", log.p, dm.p);
	sb_release(&log);
	sb_release(&mod);
	sb_release(&dm);
	probe_plan_release(&dp);
	err_release(&e);
	fix_release(&x);
}

/* A loop wholly inside replays (s12-s16); one whose back edge leaves the cut
 * does not, nor one whose back edge returns to the cut's first statement,
 * and neither does a cut that ends in a branch (the dump cannot store
 * after it). */
static void test_replay__loops(void **state)
{
	(void)state;
	Fix x;
	plan_of(&x, "k", 12, 16);
	assert_int_equal(x.plan.nrefused, 0);
	fix_release(&x);
	plan_of(&x, "k", 14, 16);
	assert_int_equal(x.plan.nrefused, 1);
	assert_true(refused(&x,
	                    "s15 (line 30): a loop back edge leaving the cut: a branch "
	                    "to '$L_loop' (s13) before the cut"));
	fix_release(&x);
	plan_of(&x, "k", 12, 15);
	assert_true(
	    refused(&x, "s15 (line 30): the dump cannot store the state after it"));
	fix_release(&x);
	/* a cut that starts at the loop's header: its back edge returns to the
	 * cut's first statement, where the dump would record every iteration */
	plan_of(&x, "k", 13, 16);
	assert_true(refused(&x, "s15 (line 30): a loop back edge to the cut's first "
	                        "statement ('$L_loop'): the state at the cut's start "
	                        "would be taken on every iteration"));
	fix_release(&x);
}

/* s21 reads b, which s19 writes: refused, naming both. */
static void test_replay__buffer_the_kernel_writes(void **state)
{
	(void)state;
	Fix x;
	plan_of(&x, "k", 21, 21);
	assert_true(refused(&x, "s21 (line 36): reads buffer 'b', which the kernel may "
	                        "write (s20, line 35)"));
	fix_release(&x);
	/* s25-s26 write b (bytes 1032-1287) and read nothing of it: compared,
	 * and refused only for s24, outside the cut, whose bytes 1024-1279
	 * overlap them (s20's 0-255 do not) */
	plan_of(&x, "k", 25, 26);
	assert_int_equal(x.plan.nrefused, 1);
	assert_true(refused(&x,
	                    "s24 (line 39): writes bytes of buffer 'b' the cut writes "
	                    "too, outside the cut: their end state"));
	assert_int_equal(x.plan.buffers_in.n, 0);
	assert_int_equal(x.plan.buffers_out.n, 1);
	assert_int_equal(x.plan.spans.n, 1);
	assert_int_equal(x.plan.spans.v[0].lo, 1032);
	assert_int_equal(x.plan.spans.v[0].hi, 1032 + 63 * 4 + 4);
	fix_release(&x);
	/* s23-s26: both stores inside, their bytes joined into one span */
	plan_of(&x, "k", 23, 26);
	if (x.plan.nrefused)
		fail_msg("refused: %s", x.plan.refused.p);
	assert_int_equal(x.plan.spans.n, 1);
	assert_int_equal(x.plan.spans.v[0].lo, 1024);
	assert_int_equal(x.plan.spans.v[0].hi, 1032 + 63 * 4 + 4);
	assert_int_equal(x.plan.spans.v[0].stmt, 24);
	assert_int_equal(x.plan.span_bytes, 1032 + 256 - 1024);
	fix_release(&x);
}

/* %rd8 is a masked address: no base plus data. */
static void test_replay__address_not_rebased(void **state)
{
	(void)state;
	Fix x;
	plan_of(&x, "k", 22, 22);
	assert_true(refused(&x, "s11 (line 25): live-in '%rd8' cannot be rebased: this "
	                        "statement computes with an address"));
	fix_release(&x);
}

static void test_replay__wgmma_in_flight_and_vectors(void **state)
{
	(void)state;
	Fix x;
	plan_of(&x, "w", 4, 4);
	assert_true(
	    refused(&x, "s2 (line 55): a wgmma group in flight at the cut's start"));
	fix_release(&x);
	/* after the wait_group 0, nothing is in flight; %v is a vector */
	plan_of(&x, "w", 6, 7);
	assert_false(refused(&x, "in flight"));
	assert_true(refused(&x, "live-in '%v' is a vector register (.v4)"));
	fix_release(&x);
	/* a cut that holds the wgmma, its commit and its wait: the mma loads
	 * shared memory through its descriptors (mem.c), which the dump takes
	 * whole: the plan refuses nothing for it */
	plan_of(&x, "w", 1, 5);
	if (x.plan.nrefused)
		fail_msg("refused: %s", x.plan.refused.p);
	fix_release(&x);
}

/* The difference of two addresses of one base is data; data plus an
 * address is that address. */
static void test_replay__difference_is_data(void **state)
{
	(void)state;
	Fix x;
	plan_of(&x, "w", 12, 12);
	if (x.plan.nrefused)
		fail_msg("refused: %s", x.plan.refused.p);
	const ReplayReg *d = live_in(&x, "%rd4"), *p = live_in(&x, "%rd5");
	assert_non_null(d);
	assert_non_null(p);
	assert_int_equal(d->kind, RV_DATA);
	assert_int_equal(p->kind, RV_PARAM);
	assert_int_equal(p->param_off, 8);
	assert_int_equal(p->evidence, 8);
	fix_release(&x);
}

/* A bar.sync inside the cut replays: whole blocks run the replay entry. */
static void test_replay__barrier_inside(void **state)
{
	(void)state;
	Fix x;
	plan_of(&x, "w", 13, 14);
	if (x.plan.nrefused)
		fail_msg("refused: %s", x.plan.refused.p);
	assert_int_equal(x.plan.barriers, 1);
	Err e = ERR_INIT;
	ProbePlan dp = {0};
	StrBuf mod = STRBUF_INIT;
	if (replay_dump_plan(&x.plan, x.m, x.f, &dp, &e) < 0 ||
	    replay_module(&x.plan, &dp, &x.q, &mod, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_non_null(strstr(mod.p, "bar.sync 0;\nadd.s32 %r2, %r1, 1;"));
	sb_release(&mod);
	probe_plan_release(&dp);
	err_release(&e);
	fix_release(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_replay__addresses_rebased),
	    cmocka_unit_test(test_replay__loops),
	    cmocka_unit_test(test_replay__buffer_the_kernel_writes),
	    cmocka_unit_test(test_replay__address_not_rebased),
	    cmocka_unit_test(test_replay__wgmma_in_flight_and_vectors),
	    cmocka_unit_test(test_replay__difference_is_data),
	    cmocka_unit_test(test_replay__barrier_inside),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
