/*
 * test_profile.c - profiles (splice/profile.h): the statistics of a sample
 * and of a dump, with every expected figure worked out by hand from the
 * values put in; the points of a plan on a small three-phase kernel (which
 * statements bound which phase, which reads are one); the spill lines of a
 * JIT log (gpu/driver.h); the chart's font and its PNG (gpu/chart.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpu/chart.h"
#include "gpu/driver.h"
#include "ptx/parse.h"
#include "splice/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- statistics of a sample -------------------------------------------------------- */

static void test_profile__stat_by_hand(void **state)
{
	(void)state;
	double v[10] = {5, 1, 9, 3, 7, 2, 8, 4, 6, 10};
	ProfStat s;
	prof_stat(v, 10, &s);
	/* sorted 1..10: the median the mean of 5 and 6; p10 at rank
	 * ceil(1.0) = 1, p90 at rank ceil(9.0) = 9 */
	assert_int_equal(s.n, 10);
	assert_true(s.median == 5.5);
	assert_true(s.p10 == 1);
	assert_true(s.p90 == 9);
	assert_true(s.min == 1 && s.max == 10 && s.mean == 5.5);
	double w[5] = {40, 10, 30, 20, 50};
	prof_stat(w, 5, &s);
	/* ranks ceil(0.5) = 1 and ceil(4.5) = 5 */
	assert_true(s.median == 30 && s.p10 == 10 && s.p90 == 50 && s.mean == 30);
	prof_stat(w, 0, &s);
	assert_int_equal(s.n, 0);
	assert_true(s.median == 0 && s.max == 0);
}

/* ---- a plan ------------------------------------------------------------------------ */

/* three phases: s14-s15, s19, s23; epilogues s16-s18, s20-s22, s24-s29; ret s30 */
static const char kernel[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry pattern(\n"
    "\t.param .u64 out,\n"
    "\t.param .u32 k\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<4>;\n"
    "\t.reg .b16 \t%rs<4>;\n"
    "\t.reg .b32 \t%r<40>;\n"
    "\t.reg .f32 \t%f<8>;\n"
    "\t.reg .b64 \t%rd<8>;\n"
    "\n"
    "\tld.param.u64 \t%rd1, [out];\n"
    "\tcvta.to.global.u64 \t%rd2, %rd1;\n"
    "\tld.param.u32 \t%r1, [k];\n"
    "\tmov.u32 \t%r2, %tid.x;\n"
    "\tmul.wide.u32 \t%rd3, %r2, 4;\n"
    "\tadd.s64 \t%rd4, %rd2, %rd3;\n"
    "\tld.global.u32 \t%r3, [%rd4];\n"
    "\txor.b32 \t%r4, %r3, %r1;\n"
    "\tadd.s32 \t%r5, %r3, %r2;\n"
    "\tmul.lo.s32 \t%r6, %r4, 3;\n"
    "\tmov.b32 \t%r7, 0x3c003c00;\n"
    "\tmov.b32 \t%r8, 0x38003800;\n"
    "\tmov.b32 \t%r9, 0;\n"
    "\tmov.b32 \t%r10, 0;\n"
    "\tmma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r11, %r12}, {%r3, %r4, %r5, "
    "%r6}, {%r7, %r8}, {%r9, %r10};\n"
    "\tmma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r13, %r14}, {%r3, %r4, %r5, "
    "%r6}, {%r7, %r8}, {%r11, %r12};\n"
    "\tadd.rn.f16x2 \t%r15, %r13, %r14;\n"
    "\tmov.b32 \t{%rs1, %rs2}, %r15;\n"
    "\tsetp.ne.u32 \t%p1, %r15, 0;\n"
    "\tmma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r16, %r17}, {%r3, %r4, %r5, "
    "%r6}, {%r7, %r15}, {%r13, %r14};\n"
    "\tselp.b32 \t%r18, %r16, %r17, %p1;\n"
    "\tcvt.f32.f16 \t%f1, %rs1;\n"
    "\tmov.f32 \t%f2, 0f00000000;\n"
    "\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f3, %f4, %f5, %f6}, {%r3, "
    "%r4, "
    "%r5, %r18}, {%r7, %r8}, {%f1, %f2, %f1, %f2};\n"
    "\tadd.f32 \t%f7, %f3, %f4;\n"
    "\tadd.f32 \t%f7, %f7, %f5;\n"
    "\tadd.f32 \t%f7, %f7, %f6;\n"
    "\tmov.b32 \t%r19, %f7;\n"
    "\txor.b32 \t%r20, %r19, %r18;\n"
    "\tst.global.u32 \t[%rd4], %r20;\n"
    "\tret;\n"
    "}\n";

static void read_at(const ProfilePlan *pp, int32_t k, uint32_t at, const char *name)
{
	assert_true(k >= 0 && (size_t)k < pp->plan.recs.v[0].vals.n);
	const ProbeValue *v = &pp->plan.recs.v[0].vals.v[k];
	assert_int_equal(v->kind, PV_READ);
	assert_int_equal(v->read_at, at);
	assert_false(v->read_before);
	assert_string_equal(v->name, name);
}

static void test_profile__plan_points(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	Module *m = ptx_parse("k.ptx", kernel, sizeof kernel - 1, &e);
	assert_non_null(m);
	const Func *f = mod_func_find(m, str_c("pattern"));
	ProfilePlan pp;
	assert_int_equal(prof_plan(m, f, NULL, &pp, &e), 0);
	/* one record, lane 0's, before the ret (s30) */
	assert_int_equal(pp.plan.recs.n, 1);
	const ProbeRecord *r = &pp.plan.recs.v[0];
	assert_int_equal(r->at, 30);
	assert_true(r->before && r->per_warp);
	assert_int_equal(pp.exit, 30);
	/* kernel start after s0; "before sN" is "after sN-1"; an epilogue's
	 * end is the next phase's start; the last epilogue ends at the exit:
	 * 10 reads in all */
	assert_int_equal(r->vals.n, 10);
	read_at(&pp, pp.v_gt, 0, "%globaltimer");
	read_at(&pp, pp.v_k0, 0, "%clock64");
	read_at(&pp, pp.v_k1, 0, "%clock64");
	read_at(&pp, pp.v_end, 29, "%clock64");
	assert_int_equal(pp.phases.n, 3);
	const ProfilePhase *q = pp.phases.v;
	read_at(&pp, q[0].v_start, 13, "%clock64");
	read_at(&pp, q[0].v_end, 15, "%clock64");
	read_at(&pp, q[0].v_epi_end, 18, "%clock64");
	assert_int_equal(q[1].v_start, q[0].v_epi_end);
	read_at(&pp, q[1].v_end, 19, "%clock64");
	read_at(&pp, q[1].v_epi_end, 22, "%clock64");
	assert_int_equal(q[2].v_start, q[1].v_epi_end);
	read_at(&pp, q[2].v_end, 23, "%clock64");
	assert_int_equal(q[2].v_epi_end, pp.v_end);
	/* the globaltimer's 8 bytes, then nine 4-byte clocks: 44, and a record
	 * takes a multiple of 8 */
	assert_int_equal(r->vals.v[pp.v_gt].fmt, PF_U64);
	assert_int_equal(r->vals.v[pp.v_k0].fmt, PF_U32);
	assert_int_equal(pp.plan.warp_bytes, 48);
	assert_int_equal(pp.unread, 0);

	/* a window of phase 2: kernel reads and phase 2's three */
	ProfilePlan pw;
	NumList two = {0};
	VEC_PUSH(two, 2);
	assert_int_equal(prof_plan(m, f, &two, &pw, &e), 0);
	assert_int_equal(pw.phases.n, 1);
	assert_int_equal(pw.plan.recs.v[0].vals.n, 4 + 3);
	ProfilePlan bad;
	VEC_PUSH(two, 4);
	assert_int_equal(prof_plan(m, f, &two, &bad, &e), -1);
	assert_non_null(strstr(err_msg(&e), "--window: phase 4 does not exist: pattern has 3 phases"));
	prof_plan_release(&bad);
	numlist_release(&two);
	prof_plan_release(&pw);
	prof_plan_release(&pp);
	mod_free(m);
	err_release(&e);
}

/* A kernel with two exits is refused. */
static void test_profile__one_exit(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	const char *st = strstr(kernel, "\tst.global.u32");
	const char *nl = strchr(st, '\n');
	char *two = malloc(sizeof kernel + 8);
	sprintf(two, "%.*s\tret;%s", (int)(st - kernel), kernel, nl);
	Module *m = ptx_parse("k.ptx", two, strlen(two), &e);
	assert_non_null(m);
	ProfilePlan pp;
	assert_int_equal(prof_plan(m, mod_func_find(m, str_c("pattern")), NULL, &pp, &e),
	                 -1);
	assert_non_null(strstr(err_msg(&e), "has 2 exits"));
	prof_plan_release(&pp);
	mod_free(m);
	free(two);
	err_release(&e);
}

/* ---- statistics of a dump ------------------------------------------------------------
 */

static void put(const ProfilePlan *pp, unsigned char *dump, uint64_t w, int32_t k,
                uint64_t v)
{
	const ProbeValue *pv = &pp->plan.recs.v[0].vals.v[k];
	memcpy(dump + probe_dump_offset(&pp->plan, 0, (size_t)k, w, 0), &v,
	       probe_fmt_bits((ProbeFmt)pv->fmt) / 8);
}

static void test_profile__analyse_by_hand(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	Module *m = ptx_parse("k.ptx", kernel, sizeof kernel - 1, &e);
	const Func *f = mod_func_find(m, str_c("pattern"));
	ProfilePlan pp;
	assert_int_equal(prof_plan(m, f, NULL, &pp, &e), 0);
	/* 3 blocks of 64 threads: 6 warps, 2 a block; warps 4 and 5 (block 2)
	 * store nothing */
	unsigned grid[3] = {3, 1, 1}, block[3] = {64, 1, 1};
	uint64_t len = probe_dump_bytes(&pp.plan, grid, block);
	assert_int_equal(len, 6 * 48);
	unsigned char *dump = calloc(1, len);
	/* warp w: clocks from base[w] (warp 3 wraps past 2^32), phase 1 takes
	 * a[w], every other span is the same in all warps */
	const uint32_t base[4] = {1000, 2000, 3000, 0xFFFFFF00u};
	const uint32_t a[4] = {10, 20, 30, 40}, r[4] = {4, 2, 0, 6};
	const ProfilePhase *q = pp.phases.v;
	for (uint64_t w = 0; w < 4; w++) {
		uint32_t b = base[w], t = b + 100;
		put(&pp, dump, w, pp.v_gt, 100 * w + 7);
		put(&pp, dump, w, pp.v_k0, b);
		put(&pp, dump, w, pp.v_k1, (uint32_t)(b + r[w]));
		put(&pp, dump, w, q[0].v_start, t);
		put(&pp, dump, w, q[0].v_end, t += a[w]);
		put(&pp, dump, w, q[0].v_epi_end, t += 5); /* = phase 2 start */
		put(&pp, dump, w, q[1].v_end, t += 50);
		put(&pp, dump, w, q[1].v_epi_end, t += 60); /* = phase 3 start */
		put(&pp, dump, w, q[2].v_end, t += 70);
		put(&pp, dump, w, pp.v_end, t += 80); /* = epilogue 3 end */
	}
	ProfResult res;
	assert_int_equal(prof_analyse(&pp, grid, block, dump, len, &res, &e), 0);
	assert_int_equal(res.warps, 4);
	assert_int_equal(res.missing, 2);
	/* the least nonzero of 4, 2, 0, 6 */
	assert_int_equal(res.resolution, 2);
	/* block starts 7 (warps 0, 1) and 207 (warps 2, 3); block 2 unseen */
	assert_int_equal(res.blocks, 2);
	assert_true(res.block_spread_ns == 200);
	/* phase 1: 10, 20, 30, 40 */
	const ProfStat *p1 = &res.phases[0].phase;
	assert_int_equal(p1->n, 4);
	assert_true(p1->median == 25 && p1->p10 == 10 && p1->p90 == 40 && p1->mean == 25);
	assert_true(res.phases[0].epilogue.median == 5);
	assert_true(res.phases[1].phase.median == 50 &&
	            res.phases[1].epilogue.median == 60);
	assert_true(res.phases[2].phase.median == 70 &&
	            res.phases[2].epilogue.median == 80);
	/* the kernel: 100 + a + 5 + 50 + 60 + 70 + 80 = 375, 385, 395, 405 */
	assert_true(res.kernel.median == 390 && res.kernel.min == 375 &&
	            res.kernel.max == 405);
	assert_true(res.kernel.mean == 390);
	/* a dump of the wrong size */
	prof_result_release(&res);
	assert_int_equal(prof_analyse(&pp, grid, block, dump, len - 4, &res, &e), -1);
	assert_non_null(
	    strstr(err_msg(&e), "the dump has 284 bytes, the plan's takes 288"));
	prof_result_release(&res);
	free(dump);
	prof_plan_release(&pp);
	mod_free(m);
	err_release(&e);
}

/* ---- the JIT log's spill lines
 * ---------------------------------------------------------- */

static void test_profile__spill_lines(void **state)
{
	(void)state;
	const char *log =
	    "info    : 0 bytes gmem\n"
	    "info    : Function properties for small\n"
	    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
	    "info    : Function properties for big\n"
	    "    1096 bytes stack frame, 3192 bytes spill stores, 3404 bytes "
	    "spill loads\n"
	    "info    : Used 255 registers, 16384 bytes smem";
	StrBuf sb = STRBUF_INIT;
	uint64_t st = 1, ld = 1;
	assert_int_equal(gpu_log_spills(log, &sb, &st, &ld), 1);
	assert_int_equal(st, 3192);
	assert_int_equal(ld, 3404);
	assert_string_equal(sb.p,
	                    "1096 bytes stack frame, 3192 bytes spill stores, 3404 bytes "
	                    "spill loads\n");
	assert_int_equal(
	    gpu_log_spills("ptxas info    : stand-in compile", NULL, &st, &ld), 0);
	assert_int_equal(st, 0);
	assert_int_equal(gpu_log_spills("", NULL, NULL, NULL), 0);
	sb_release(&sb);
}

/* The figures of one entry in a verbose log of three functions. */
static void test_profile__log_attrs(void **state)
{
	(void)state;
	const char *log =
	    "ptxas info    : 0 bytes gmem\n"
	    "ptxas info    : Compiling entry function 'pre' for 'sm_90'\n"
	    "ptxas info    : Function properties for pre\n"
	    "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
	    "ptxas info    : Used 40 registers, used 0 barriers, 0 bytes smem\n"
	    "ptxas info    : Compiling entry function 'main' for 'sm_90'\n"
	    "ptxas info    : Function properties for main\n"
	    "    1096 bytes stack frame, 3192 bytes spill stores, 3404 bytes spill "
	    "loads\n"
	    "ptxas info    : Used 255 registers, used 1 barriers, 1096 bytes cumulative "
	    "stack "
	    "size, 16384 bytes smem\n"
	    "ptxas info    : Compiling entry function 'post' for 'sm_90'\n"
	    "ptxas info    : Function properties for post\n"
	    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
	    "ptxas info    : Used 12 registers, used 0 barriers, 512 bytes smem\n";
	GpuLogAttrs a, b;
	assert_int_equal(gpu_log_func_attrs(log, "main", &a), 0);
	assert_true(a.known);
	assert_int_equal(a.regs, 255);
	assert_int_equal(a.stack_bytes, 1096);
	assert_int_equal(a.shared_bytes, 16384);
	assert_int_equal(a.spill_stores, 3192);
	assert_int_equal(a.spill_loads, 3404);
	assert_string_equal(
	    a.spill_line,
	    "1096 bytes stack frame, 3192 bytes spill stores, 3404 bytes spill loads");
	assert_int_equal(gpu_log_func_attrs(log, "post", &b), 0);
	assert_int_equal(b.regs, 12);
	assert_int_equal(b.shared_bytes, 512);
	assert_int_equal(b.spill_stores, 0);
	/* post does not spill, main does */
	assert_true(gpu_log_attrs_spill_more(&b, &a));
	assert_false(gpu_log_attrs_spill_more(&a, &b));
	assert_int_equal(gpu_log_func_attrs(log, "mai", &b), -1);
	assert_false(b.known);
	assert_int_equal(
	    gpu_log_func_attrs("ptxas info    : stand-in compile", "main", &b), -1);
	StrBuf sb = STRBUF_INIT;
	gpu_log_attrs_text(&a, &sb);
	assert_string_equal(sb.p,
	                    "255 registers, 1096 B stack, 16384 B shared, spills 3192 B "
	                    "stored / 3404 B loaded");
	sb_release(&sb);
}

/* ---- the chart
 * -------------------------------------------------------------------------- */

static void test_profile__chart(void **state)
{
	(void)state;
	/* the 8 of a 5x7 font, and lower case drawn as capitals */
	const unsigned char eight[7] = {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E};
	assert_memory_equal(chart_glyph('8'), eight, 7);
	assert_ptr_equal(chart_glyph('p'), chart_glyph('P'));
	assert_ptr_not_equal(chart_glyph('P'), chart_glyph('~'));
	char path[] = "/tmp/test_profile_chart_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	ChartBar bars[3] = {{"1", 100, 80}, {"2", 50, -1}, {"3", 0, 10}};
	ChartSpec cs = {"T", "original", "spliced", "phase", "cycles", bars, 3};
	Err e = ERR_INIT;
	assert_int_equal(chart_bars_png(path, &cs, &e), 0);
	unsigned char head[24];
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(head, 1, 24, f), 24);
	fclose(f);
	unlink(path);
	assert_memory_equal(head, "\x89PNG\r\n\x1a\n", 8);
	/* IHDR: 110 + 400 (the least plot width) + 30 by 90 + 360 + 70 */
	unsigned w = (unsigned)head[16] << 24 | head[17] << 16 | head[18] << 8 | head[19];
	unsigned h = (unsigned)head[20] << 24 | head[21] << 16 | head[22] << 8 | head[23];
	assert_int_equal(w, 540);
	assert_int_equal(h, 520);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_profile__stat_by_hand),
	    cmocka_unit_test(test_profile__plan_points),
	    cmocka_unit_test(test_profile__one_exit),
	    cmocka_unit_test(test_profile__analyse_by_hand),
	    cmocka_unit_test(test_profile__spill_lines),
	    cmocka_unit_test(test_profile__log_attrs),
	    cmocka_unit_test(test_profile__chart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
