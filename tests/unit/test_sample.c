/*
 * test_sample.c - PC sampling's map (sample/sample.h) on the stand-in's
 * three-phase kernel (tests/fixtures/bisect/mma3.ptx), offline: the module
 * with a .loc line per statement, compiled by ptxas -lineinfo; CUPTI's SASS
 * to source correlation reads the cubin without a device.
 *
 * Expected values come from the fixture's text: `d4r-splice phases` of it
 * lists phase 1 at s14-s15 (lines 36-37), phase 2 at s19 (line 41), phase 3
 * at s23 (line 45), 31 statements (s0 on line 22, s30 the ret on line 52).
 * The cases that compile skip when there is no ptxas or no libcupti.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/file.h"
#include "ptx/parse.h"
#include "sample/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef D4R_CUDA_HOME
#define D4R_CUDA_HOME "/usr/local/cuda"
#endif

static char *src;
static size_t srclen;
static Module *mod;
static const Func *fn;
static char dir[64];

static int setup(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	if (read_file("tests/fixtures/bisect/mma3.ptx", &src, &srclen, &e) < 0)
		return -1;
	mod = ptx_parse("mma3.ptx", src, srclen, &e);
	fn = mod ? mod_func_find(mod, str_c("pattern")) : NULL;
	snprintf(dir, sizeof dir, "/tmp/d4r-sample-XXXXXX");
	return fn && mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return -1;
	mod_free(mod);
	free(src);
	return 0;
}

/* the .loc module: the same statements, one .loc before each, naming it */
static void test_sample__loc_text_keeps_the_statements(void **state)
{
	(void)state;
	StrBuf sb = STRBUF_INIT;
	sample_loc_text(mod, fn, &sb);
	Err e = ERR_INIT;
	Module *m2 = ptx_parse("loc", sb.p, sb.n, &e);
	assert_non_null(m2);
	const Func *f2 = mod_func_find(m2, str_c("pattern"));
	assert_non_null(f2);
	assert_int_equal(fn->nstmt, 31);
	assert_int_equal(f2->nstmt, fn->nstmt);
	for (uint32_t k = 0; k < fn->nstmt; k++) {
		Str a = mod_str(mod, (Span){func_stmt(mod, fn, k)->off, func_stmt(mod, fn, k)->len});
		Str b = mod_str(m2, (Span){func_stmt(m2, f2, k)->off, func_stmt(m2, f2, k)->len});
		assert_int_equal(a.n, b.n);
		assert_memory_equal(a.p, b.p, a.n);
		/* the line before the statement is its .loc */
		const char *at = m2->src + func_stmt(m2, f2, k)->off;
		char want[48];
		int wn = snprintf(want, sizeof want, "\t.loc 1 %u 0\n", k + 1);
		assert_true(at - m2->src >= wn);
		assert_memory_equal(at - wn, want, (size_t)wn);
	}
	assert_non_null(strstr(sb.p, ".address_size 64\n.file 1 \"d4r-sample\"\n"));
	mod_free(m2);
	sb_release(&sb);
	err_release(&e);
}

/* a module with line information of its own keeps its .file line, and
 * gets no second one of index 1 */
static void test_sample__own_file_kept(void **state)
{
	(void)state;
	static const char text[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
	                           ".file 1 \"k.cu\"\n.visible .entry k()\n{\n"
	                           "\t.loc 1 7 0\n\tret;\n}\n";
	Err e = ERR_INIT;
	Module *m = ptx_parse("k", text, sizeof text - 1, &e);
	assert_non_null(m);
	StrBuf sb = STRBUF_INIT;
	sample_loc_text(m, mod_func_find(m, str_c("k")), &sb);
	assert_null(strstr(sb.p, "d4r-sample"));
	assert_non_null(strstr(sb.p, "\t.loc 1 7 0\n\t\n\t.loc 1 1 0\nret;"));
	sb_release(&sb);
	mod_free(m);
	err_release(&e);
}

static void test_sample__regions(void **state)
{
	(void)state;
	SampleRegion r[31];
	assert_int_equal(sample_regions(mod, fn, r), 3);
	for (uint32_t s = 0; s < 31; s++) {
		int kind = s < 14 ? SR_PROLOGUE : s <= 15 ? SR_PHASE : s <= 18 ? SR_EPILOGUE
		         : s == 19 ? SR_PHASE : s <= 22 ? SR_EPILOGUE : s == 23 ? SR_PHASE
		                                                       : SR_EPILOGUE;
		unsigned phase = s < 14 ? 0 : s <= 18 ? 1 : s <= 22 ? 2 : 3;
		assert_int_equal(r[s].kind, kind);
		assert_int_equal(r[s].phase, phase);
	}
}

/* a spliced function's regions: matched statements keep theirs, a cut's
 * new statements are its phase, others follow the statement before them */
static void test_sample__regions_carried(void **state)
{
	(void)state;
	/* the original: s0-s1 prologue, s2-s3 phase 1, s4 epilogue 1, s5 phase 2,
	 * s6 epilogue 2; the cut replaced s2-s3 by four statements */
	const SampleRegion o[7] = {{SR_PROLOGUE, 0}, {SR_PROLOGUE, 0}, {SR_PHASE, 1}, {SR_PHASE, 1},
	                           {SR_EPILOGUE, 1}, {SR_PHASE, 2},    {SR_EPILOGUE, 2}};
	const uint32_t none = UINT32_MAX;
	/* spliced: s0 s1 (the original's), s2-s5 the cut's, s6 a statement the
	 * splicer added after the cut, s7 = orig s4, s8 = s5, s9 = s6 */
	const uint32_t match[7] = {0, 1, none, none, 7, 8, 9};
	const SampleCut cut = {2, 3};
	SampleRegion r[10];
	sample_regions_carried(o, 7, match, &cut, 1, 10, r);
	const int kind[10] = {SR_PROLOGUE, SR_PROLOGUE, SR_PHASE, SR_PHASE, SR_PHASE,
	                      SR_PHASE,    SR_PHASE,    SR_EPILOGUE, SR_PHASE, SR_EPILOGUE};
	const unsigned phase[10] = {0, 0, 1, 1, 1, 1, 1, 1, 2, 2};
	for (int s = 0; s < 10; s++) {
		assert_int_equal(r[s].kind, kind[s]);
		assert_int_equal(r[s].phase, phase[s]);
	}
	/* with no cut, the new statements follow the one before them */
	sample_regions_carried(o, 7, match, NULL, 0, 10, r);
	assert_int_equal(r[3].kind, SR_PROLOGUE);
	assert_int_equal(r[3].phase, 0);
}

/* ptxas -O3 -arch=sm_90 [-lineinfo] IN -o OUT into dir; 0 on success */
static int ptxas(const char *text, size_t n, const char *name, const char *flags, char **cubin,
                 size_t *cn)
{
	char in[128], out[128], cmd[512];
	snprintf(in, sizeof in, "%s/%s.ptx", dir, name);
	snprintf(out, sizeof out, "%s/%s.cubin", dir, name);
	FILE *f = fopen(in, "w");
	if (!f || fwrite(text, 1, n, f) != n || fclose(f))
		return -1;
	snprintf(cmd, sizeof cmd, "'%s/bin/ptxas' -arch=sm_90 %s '%s' -o '%s'", D4R_CUDA_HOME, flags,
	         in, out);
	if (system(cmd) != 0)
		return -1;
	Err e = ERR_INIT;
	int rc = read_file(out, cubin, cn, &e);
	err_release(&e);
	return rc;
}

static void test_sample__cubin_map(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/bin/ptxas", D4R_CUDA_HOME);
	if (access(path, X_OK) != 0)
		skip();
	Err e = ERR_INIT;
	if (sample_cupti_load(&e) < 0) {
		print_message("no CUPTI: %s\n", err_msg(&e));
		err_release(&e);
		skip();
	}
	StrBuf sb = STRBUF_INIT;
	sample_loc_text(mod, fn, &sb);
	char *loc, *plain, *o0;
	size_t nl, np, n0;
	assert_int_equal(ptxas(sb.p, sb.n, "loc", "-O3 -lineinfo", &loc, &nl), 0);
	assert_int_equal(ptxas(src, srclen, "plain", "-O3", &plain, &np), 0);
	assert_int_equal(ptxas(src, srclen, "o0", "-O0", &o0, &n0), 0);

	/* the .loc lines change no instruction; another build is told apart */
	bool same = false;
	size_t first = 99;
	assert_int_equal(sample_same_stream(loc, nl, plain, np, "pattern", &same, &first, &e), 0);
	assert_true(same);
	assert_int_equal(sample_same_stream(plain, np, o0, n0, "pattern", &same, &first, &e), 0);
	assert_false(same);
	/* one immediate changed (x 3 -> x 5): as many instructions, one other */
	char *five = xmalloc(srclen + 1), *c5;
	memcpy(five, src, srclen);
	five[srclen] = 0;
	char *at = strstr(five, "%r4, 3;");
	assert_non_null(at);
	at[5] = '5';
	size_t n5;
	assert_int_equal(ptxas(five, srclen, "five", "-O3", &c5, &n5), 0);
	assert_int_equal(sample_same_stream(plain, np, c5, n5, "pattern", &same, &first, &e), 0);
	assert_false(same);
	const unsigned char *t1, *t2;
	size_t l1, l2;
	assert_int_equal(sample_cubin_text(plain, np, "pattern", &t1, &l1, &e), 0);
	assert_int_equal(sample_cubin_text(c5, n5, "pattern", &t2, &l2, &e), 0);
	assert_int_equal(l1, l2);
	assert_true(first < l1 / 16);
	free(five);
	free(c5);

	SampleMap map;
	assert_int_equal(sample_map(loc, nl, "pattern", fn->nstmt, &map, &e), 0);
	const unsigned char *text;
	size_t tlen;
	assert_int_equal(sample_cubin_text(loc, nl, "pattern", &text, &tlen, &e), 0);
	assert_int_equal(map.n, tlen / 16);
	assert_true(map.n > 8);
	SampleRegion r[31];
	sample_regions(mod, fn, r);
	unsigned per_stmt[31] = {0}, in_phase[4] = {0};
	size_t counted = 0;
	for (size_t i = 0; i < map.n; i++) {
		if (map.stmt[i] == UINT32_MAX)
			continue;
		assert_true(map.stmt[i] < 31);
		per_stmt[map.stmt[i]]++;
		if (r[map.stmt[i]].kind == SR_PHASE)
			in_phase[r[map.stmt[i]].phase]++;
		counted++;
	}
	assert_int_equal(counted + map.unattributed, map.n);
	/* each mma statement (s14, s15, s19, s23) is at least one HMMA */
	assert_true(per_stmt[14] >= 1 && per_stmt[15] >= 1 && per_stmt[19] >= 1 &&
	            per_stmt[23] >= 1);
	assert_true(in_phase[1] >= 2 && in_phase[2] >= 1 && in_phase[3] >= 1);
	/* the store and the ret are there */
	assert_true(per_stmt[29] >= 1 && per_stmt[30] >= 1);
	/* most instructions carry our line */
	assert_true(map.unattributed * 4 < map.n);
	sample_map_release(&map);

	/* the plain build has no line of ours: nothing attributed */
	assert_int_equal(sample_map(plain, np, "pattern", fn->nstmt, &map, &e), 0);
	assert_int_equal(map.unattributed, map.n);
	sample_map_release(&map);

	/* a function the cubin does not hold, and what is no cubin */
	assert_int_equal(sample_map(loc, nl, "nope", fn->nstmt, &map, &e), -1);
	assert_string_equal(err_msg(&e), "cubin: no section '.text.nope'");
	err_release(&e);
	assert_int_equal(sample_cubin_text(src, srclen, "pattern", &text, &tlen, &e), -1);
	assert_string_equal(err_msg(&e), "cubin: not a 64-bit little-endian ELF file");
	err_release(&e);
	free(loc);
	free(plain);
	free(o0);
	sb_release(&sb);
}

/* The region of statement s of the fixture, as its text says (the header):
 * the row of a sampled profile. */
static size_t fixture_row(uint32_t s)
{
	if (s < 14)
		return 0;
	if (s <= 15)
		return SAMPLE_ROW_PHASE(1);
	if (s <= 18)
		return SAMPLE_ROW_EPILOGUE(1);
	if (s == 19)
		return SAMPLE_ROW_PHASE(2);
	if (s <= 22)
		return SAMPLE_ROW_EPILOGUE(2);
	if (s == 23)
		return SAMPLE_ROW_PHASE(3);
	return SAMPLE_ROW_EPILOGUE(3);
}

/* samples -> statements -> phases: a synthetic sample buffer on the real
 * cubin's instructions; every sample in one row, the rows add up */
static void test_sample__profile_shares(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/bin/ptxas", D4R_CUDA_HOME);
	if (access(path, X_OK) != 0)
		skip();
	Err e = ERR_INIT;
	if (sample_cupti_load(&e) < 0) {
		err_release(&e);
		skip();
	}
	StrBuf sb = STRBUF_INIT;
	sample_loc_text(mod, fn, &sb);
	char *loc;
	size_t nl;
	assert_int_equal(ptxas(sb.p, sb.n, "shares", "-O3 -lineinfo", &loc, &nl), 0);
	SampleMap map;
	assert_int_equal(sample_map(loc, nl, "pattern", fn->nstmt, &map, &e), 0);
	SampleRegion r[31];
	assert_int_equal(sample_regions(mod, fn, r), 3);

	/* an instruction of the prologue with no line: "other", not the prologue */
	assert_true(map.stmt[1] != UINT32_MAX && fixture_row(map.stmt[1]) == 0);
	map.stmt[1] = UINT32_MAX;
	/* instruction i, reason k: (i + 1) x (k + 1) samples; 7 beyond the code */
	static char n0[] = "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	            n1[] = "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
	            n2[] = "smsp__pcsamp_warps_issue_stalled_wait";
	char *names[3] = {n0, n1, n2};
	SamplePcs pcs;
	memset(&pcs, 0, sizeof pcs);
	pcs.nreasons = 3;
	pcs.reason = names;
	pcs.ninsn = map.n;
	pcs.count = xcalloc(map.n * 3, sizeof *pcs.count);
	pcs.outside = 7;
	uint64_t want[SAMPLE_ROWS(3)] = {0}, all = 7;
	size_t insns[SAMPLE_ROWS(3)] = {0};
	for (size_t i = 0; i < map.n; i++) {
		size_t row = map.stmt[i] == UINT32_MAX ? SAMPLE_ROW_OTHER(3) : fixture_row(map.stmt[i]);
		insns[row]++;
		for (size_t k = 0; k < 3; k++) {
			pcs.count[i * 3 + k] = (i + 1) * (k + 1);
			want[row] += (i + 1) * (k + 1);
			all += (i + 1) * (k + 1);
		}
	}
	want[SAMPLE_ROW_OTHER(3)] += 7;

	SampleProfile sp;
	assert_int_equal(sample_profile(&pcs, &map, r, 3, &sp, &e), 0);
	assert_int_equal(sp.kernel, all);
	assert_int_equal(sp.insns, map.n);
	uint64_t sum = 0;
	for (size_t row = 0; row < SAMPLE_ROWS(3); row++) {
		assert_int_equal(sp.row[row].samples, want[row]);
		assert_int_equal(sp.row[row].insns, insns[row]);
		/* a row's reasons are its samples; reason k is k + 1 times reason 0 */
		if (row != SAMPLE_ROW_OTHER(3)) {
			assert_int_equal(sp.row[row].reason[0] + sp.row[row].reason[1] +
			                     sp.row[row].reason[2],
			                 sp.row[row].samples);
			assert_int_equal(sp.row[row].reason[2], 3 * sp.row[row].reason[0]);
		}
		sum += sp.row[row].samples;
	}
	assert_int_equal(sum, sp.kernel);
	/* every phase ran: its mma are instructions of the phase's row */
	for (unsigned ph = 1; ph <= 3; ph++)
		assert_true(sp.row[SAMPLE_ROW_PHASE(ph)].samples > 0);

	/* the top reasons: wait (3x), math_pipe_throttle (2x), long_scoreboard */
	size_t top[3];
	assert_int_equal(sample_top_reasons(&sp, SAMPLE_ROW_PHASE(1), top, 3), 3);
	assert_int_equal(top[0], 2);
	assert_int_equal(top[1], 1);
	assert_int_equal(top[2], 0);
	assert_int_equal(sample_top_reasons(&sp, SAMPLE_ROW_PHASE(1), top, 2), 2);
	assert_int_equal(top[0], 2);
	assert_int_equal(top[1], 1);
	assert_string_equal(sample_reason_short(n1), "math_pipe_throttle");
	assert_string_equal(sample_reason_short("other_counter"), "other_counter");
	sample_profile_release(&sp);

	/* ties keep the lower index first; a reason with no sample is left out */
	pcs.count[0] = pcs.count[1] = 5, pcs.count[2] = 0;
	SampleMap one = {1, map.stmt, 0};
	pcs.ninsn = 1;
	pcs.outside = 0;
	assert_int_equal(sample_profile(&pcs, &one, r, 3, &sp, &e), 0);
	size_t row0 = map.stmt[0] == UINT32_MAX ? SAMPLE_ROW_OTHER(3) : fixture_row(map.stmt[0]);
	assert_int_equal(sample_top_reasons(&sp, row0, top, 3), 2);
	assert_int_equal(top[0], 0);
	assert_int_equal(top[1], 1);
	assert_int_equal(sp.kernel, 10);
	sample_profile_release(&sp);

	/* samples of other code are refused */
	pcs.ninsn = map.n + 1;
	assert_int_equal(sample_profile(&pcs, &map, r, 3, &sp, &e), -1);
	assert_non_null(strstr(err_msg(&e), "not the same code"));
	err_release(&e);

	free(pcs.count);
	sample_map_release(&map);
	free(loc);
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sample__loc_text_keeps_the_statements),
	    cmocka_unit_test(test_sample__own_file_kept),
	    cmocka_unit_test(test_sample__regions),
	    cmocka_unit_test(test_sample__regions_carried),
	    cmocka_unit_test(test_sample__cubin_map),
	    cmocka_unit_test(test_sample__profile_shares),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
