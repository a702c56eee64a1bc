/*
 * test_gpu_job.c - gpu_job_run's side of a job, with stand-in children
 * that speak the job's records (no GPU): results per module, a fault or a
 * hang costing only the module that caused it (and those after it), the
 * original timed again without the failed module, damaged and missing
 * results; and the steps around a job: a layer's module reduced to its
 * launched entries, its oracle frame read and checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/file.h"
#include "gpu/gpu.h"
#include "gpu/layer.h"
#include "ptx/parse.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The stand-in: every module makes the frame "frame-NN" (NN its name's
 * length) unless its name says otherwise: "bad" faults, "spin" hangs,
 * "crash" dies of SIGSEGV, "short" sends a frame of the wrong size,
 * "jitfail" fails to JIT.  "setup" as the first module fails the setup.
 */
static int stand_in(void *arg, GpuChan *ch)
{
	const GpuJob *job = arg;
	size_t fs = job->manifest->frame_size;
	if (!strcmp(job->modules[0].name, "setup")) {
		gpu_job_send_failure(ch, 'E', -1, GPU_ERROR, "cuMemAlloc: out of memory");
		return 1;
	}
	gpu_job_send_device(ch, "Stand-in GPU", 9, 0, 13000, 0.25);
	int ok[8] = {0};
	for (size_t k = 0; k < job->nmodules; k++) {
		const char *name = job->modules[k].name;
		char stage[64];
		snprintf(stage, sizeof stage, "jit %s", name);
		gpu_chan_stage(ch, stage);
		if (!strcmp(name, "jitfail")) {
			gpu_job_send_failure(ch, 'M', (int)k, GPU_ERROR, "JIT of 'jitfail' failed");
			continue;
		}
		snprintf(stage, sizeof stage, "launch %s", name);
		gpu_chan_stage(ch, stage);
		if (!strcmp(name, "bad")) {
			gpu_job_send_failure(ch, 'M', (int)k, GPU_FAULT,
			                     "running the launch sequence: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
			return 1;
		}
		if (!strcmp(name, "spin"))
			for (;;)
				pause();
		if (!strcmp(name, "crash"))
			raise(SIGSEGV);
		char frame[64];
		snprintf(frame, sizeof frame, "frame-%02zu", strlen(name));
		gpu_job_send_module(ch, k, 0.5, 400.0, k == 0, "info log", 1.5, frame,
		                    !strcmp(name, "short") ? fs - 1 : fs);
		ok[k] = 1;
	}
	if (job->runs) {
		gpu_chan_stage(ch, "launch timing");
		GpuTimes t[8] = {{0}};
		int same[8];
		for (size_t k = 0; k < job->nmodules; k++) {
			same[k] = ok[k] ? 1 : -1;
			if (ok[k])
				t[k] = (GpuTimes){job->runs, 2.0 * (double)(k + 1), 1.0, 3.0 * (double)(k + 1)};
		}
		gpu_job_send_timing(ch, job->nmodules, t, same);
	}
	gpu_job_send_end(ch, 2.0, 0.5, 0.25);
	return 0;
}

static GpuResult run(const char *const *names, size_t n, unsigned runs, double timeout)
{
	static Manifest m;
	m.frame_size = 8;
	static GpuModuleSrc srcs[8];
	for (size_t i = 0; i < n; i++)
		srcs[i] = (GpuModuleSrc){.name = names[i], .ptx = "", .ptx_len = 0};
	GpuJob job = {.manifest = &m, .modules = srcs, .nmodules = n, .runs = runs,
	              .warmup = 1, .timeout_s = timeout, .jit_limit_s = 10};
	GpuResult res;
	Err e = ERR_INIT;
	gpu_job_body = stand_in;
	assert_int_equal(gpu_job_run(&job, &res, &e), 0);
	err_release(&e);
	return res;
}

static void test_gpu_job__two_modules(void **state)
{
	(void)state;
	const char *names[] = {"orig", "splice"};
	GpuResult r = run(names, 2, 20, 5);
	assert_int_equal(r.status, GPU_OK);
	assert_null(r.message);
	assert_string_equal(r.device, "Stand-in GPU");
	assert_int_equal(r.cc_major, 9);
	assert_int_equal(r.driver_version, 13000);
	assert_true(r.setup_seconds == 0.25);
	assert_true(r.host_seconds == 2.0 - 0.5 - 0.25);
	assert_int_equal(r.nmods, 2);
	assert_int_equal(r.mods[0].status, GPU_OK);
	assert_memory_equal(r.mods[0].frame, "frame-04", 8);
	assert_memory_equal(r.mods[1].frame, "frame-06", 8);
	assert_int_equal(strlen(r.mods[0].sha256), 64);
	assert_true(r.mods[0].jit_cached);
	assert_false(r.mods[1].jit_cached);
	assert_string_equal(r.mods[0].jit_log, "info log");
	assert_true(r.mods[1].times.median_ms == 4.0);
	assert_int_equal(r.mods[1].times.n, 20);
	assert_true(r.mods[1].repeat_checked && r.mods[1].repeatable);
	assert_int_equal(r.timing_status, GPU_OK);
	gpu_result_release(&r);
}

static void test_gpu_job__fault_keeps_the_original(void **state)
{
	(void)state;
	const char *names[] = {"orig", "bad", "after"};
	GpuResult r = run(names, 3, 10, 5);
	assert_int_equal(r.status, GPU_FAULT);
	assert_non_null(strstr(r.message, "bad: running the launch sequence: CUDA_ERROR_ILLEGAL_ADDRESS"));
	assert_int_equal(r.mods[0].status, GPU_OK);
	assert_memory_equal(r.mods[0].frame, "frame-04", 8);
	assert_int_equal(r.mods[1].status, GPU_FAULT);
	assert_null(r.mods[1].frame);
	/* The job ran again without the faulting module: the one after it got
	 * its frame, and both their timings, measured together. */
	assert_int_equal(r.mods[2].status, GPU_OK);
	assert_false(r.mods[2].not_run);
	assert_memory_equal(r.mods[2].frame, "frame-05", 8);
	assert_int_equal(r.timing_status, GPU_OK);
	assert_int_equal(r.mods[0].times.n, 10);
	assert_true(r.mods[0].repeatable);
	assert_true(r.mods[2].times.median_ms == 4.0);   /* second in the rerun */
	gpu_result_release(&r);

	/* Two faults: two reruns; the last module still gets its result. */
	const char *two[] = {"orig", "bad", "bad", "last"};
	r = run(two, 4, 3, 5);
	assert_int_equal(r.status, GPU_FAULT);
	assert_int_equal(r.mods[1].status, GPU_FAULT);
	assert_int_equal(r.mods[2].status, GPU_FAULT);
	assert_int_equal(r.mods[3].status, GPU_OK);
	assert_int_equal(r.mods[3].times.n, 3);
	assert_int_equal(r.mods[0].times.n, 3);
	gpu_result_release(&r);

	/* Only failures after the original, no timing asked: nothing to rerun. */
	const char *one[] = {"orig", "bad"};
	r = run(one, 2, 0, 5);
	assert_int_equal(r.mods[0].status, GPU_OK);
	assert_int_equal(r.mods[0].times.n, 0);
	assert_int_equal(r.timing_status, GPU_OK);
	gpu_result_release(&r);
}

static void test_gpu_job__hang_is_blamed_on_its_module(void **state)
{
	(void)state;
	const char *names[] = {"orig", "spin"};
	double t0 = now_seconds();
	GpuResult r = run(names, 2, 5, 0.3);
	assert_true(now_seconds() - t0 < 5);
	assert_int_equal(r.status, GPU_HANG);
	assert_int_equal(r.mods[0].status, GPU_OK);
	assert_int_equal(r.mods[1].status, GPU_HANG);
	assert_non_null(strstr(r.mods[1].message, "stage 'launch spin'"));
	assert_int_equal(r.mods[0].times.n, 5);
	gpu_result_release(&r);
}

static void test_gpu_job__crash_is_a_fault(void **state)
{
	(void)state;
	const char *names[] = {"orig", "crash"};
	GpuResult r = run(names, 2, 0, 5);
	assert_int_equal(r.status, GPU_FAULT);
	assert_int_equal(r.mods[0].status, GPU_OK);
	assert_int_equal(r.mods[1].status, GPU_FAULT);
	assert_non_null(strstr(r.mods[1].message, "signal 11"));
	gpu_result_release(&r);
}

static void test_gpu_job__errors(void **state)
{
	(void)state;
	const char *setup[] = {"setup", "x"};
	GpuResult r = run(setup, 2, 0, 5);
	assert_int_equal(r.status, GPU_ERROR);
	assert_string_equal(r.mods[0].message, "cuMemAlloc: out of memory");
	assert_string_equal(r.mods[1].message, "cuMemAlloc: out of memory");
	assert_string_equal(r.device, "");
	gpu_result_release(&r);

	const char *jit[] = {"orig", "jitfail", "third"};
	r = run(jit, 3, 4, 5);
	assert_int_equal(r.status, GPU_ERROR);
	assert_int_equal(r.mods[1].status, GPU_ERROR);
	assert_string_equal(r.mods[1].message, "JIT of 'jitfail' failed");
	/* A JIT failure does not end the child: the third module still runs. */
	assert_int_equal(r.mods[2].status, GPU_OK);
	assert_int_equal(r.mods[2].times.n, 4);
	assert_int_equal(r.timing_status, GPU_OK);
	gpu_result_release(&r);

	const char *shrt[] = {"short"};
	r = run(shrt, 1, 0, 5);
	assert_int_equal(r.mods[0].status, GPU_ERROR);
	assert_string_equal(r.mods[0].message, "the child sent a damaged result");
	gpu_result_release(&r);
}

static void test_gpu_job__no_module(void **state)
{
	(void)state;
	Manifest m = {0};
	GpuJob job = {.manifest = &m, .nmodules = 0};
	GpuResult r;
	Err e = ERR_INIT;
	assert_int_equal(gpu_job_run(&job, &r, &e), -1);
	assert_string_equal(err_msg(&e), "no module to run");
	gpu_result_release(&r);
	err_release(&e);
}

/* ---- the steps around a job ---------------------------------------------------- */

static const char two_entries[] =
	".version 8.0\n.target sm_89\n.address_size 64\n"
	".func helper()\n{\n\tret;\n}\n"
	".visible .entry keep()\n{\n\tcall helper;\n\tret;\n}\n"
	".visible .entry drop(\n\t.param .u64 p\n)\n{\n\tret;\n}\n";

static void test_gpu_job__reduce_to_the_launched_entries(void **state)
{
	(void)state;
	static MfLaunch launches[2] = {{.entry = "keep"}, {.entry = "keep"}};
	Manifest m = {.launches = launches, .nlaunches = 2};
	Err e = ERR_INIT;
	Module *mod = ptx_parse("two.ptx", two_entries, strlen(two_entries), &e);
	assert_non_null(mod);
	StrBuf out = STRBUF_INIT;
	size_t entries = 0, removed = 0;
	assert_int_equal(gpu_reduce_module(&m, mod, &out, &entries, &removed, &e), 0);
	assert_int_equal(entries, 2);
	assert_int_equal(removed, 1);
	/* the dropped entry leaves its newlines, so every line keeps its number */
	const char want[] = ".version 8.0\n.target sm_89\n.address_size 64\n"
	                    ".func helper()\n{\n\tret;\n}\n"
	                    ".visible .entry keep()\n{\n\tcall helper;\n\tret;\n}\n"
	                    "\n\n\n\n\n\n";
	assert_int_equal(out.n, strlen(want));
	assert_memory_equal(out.p, want, out.n);
	/* the same from text, parsed there */
	StrBuf out2 = STRBUF_INIT;
	assert_int_equal(gpu_reduce_text(&m, "two.ptx", two_entries, strlen(two_entries), &out2,
	                                 NULL, NULL, &e),
	                 0);
	assert_int_equal(out2.n, out.n);
	assert_memory_equal(out2.p, out.p, out.n);
	/* a launched entry the module lacks */
	launches[1].entry = "gone";
	sb_reset(&out);
	assert_int_equal(gpu_reduce_module(&m, mod, &out, NULL, NULL, &e), -1);
	assert_string_equal(err_msg(&e), "the manifest: launches[1].entry: no entry 'gone' in the "
	                                 "module 'two.ptx'");
	launches[1].entry = "keep";
	/* text that does not parse says where */
	assert_int_equal(gpu_reduce_text(&m, "spliced", ".entry x(\n", 10, &out2, NULL, NULL, &e),
	                 -1);
	assert_non_null(strstr(err_msg(&e), "spliced:"));
	mod_free(mod);
	sb_release(&out);
	sb_release(&out2);
	err_release(&e);
}

static void test_gpu_job__read_the_oracle(void **state)
{
	(void)state;
	char dir[] = "/tmp/d4r-oracle-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[256];
	Err e = ERR_INIT;
	snprintf(p, sizeof p, "%s/frame.bin", dir);
	assert_int_equal(write_file_atomic(p, "abc", 3, &e), 0);
	Manifest m = {.path = "recipes/t/layer.json", .corpus = dir, .oracle_path = "frame.bin"};
	/* sha256("abc") */
	strcpy(m.oracle_sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	unsigned char *buf = NULL;
	size_t n = 0;
	char *path = NULL;
	assert_int_equal(gpu_read_oracle(&m, NULL, &buf, &n, &path, &e), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(buf, "abc", 3);
	assert_string_equal(path, p);
	free(buf);
	free(path);
	/* the manifest and the file disagree */
	m.oracle_sha256[0] = '0';
	assert_int_equal(gpu_read_oracle(&m, NULL, &buf, &n, &path, &e), -1);
	assert_non_null(strstr(err_msg(&e), "has sha256 ba7816bf"));
	assert_non_null(strstr(err_msg(&e), "the oracle file and the manifest disagree"));
	/* --oracle FILE is taken as it is, unchecked */
	assert_int_equal(gpu_read_oracle(&m, p, &buf, &n, &path, &e), 0);
	assert_int_equal(n, 3);
	free(buf);
	free(path);
	/* no oracle in the manifest */
	m.oracle_path = NULL;
	assert_int_equal(gpu_read_oracle(&m, NULL, &buf, &n, &path, &e), -1);
	assert_string_equal(err_msg(&e), "recipes/t/layer.json: the manifest names no oracle frame "
	                                 "(give --oracle FILE)");
	unlink(p);
	rmdir(dir);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_job__two_modules),
		cmocka_unit_test(test_gpu_job__fault_keeps_the_original),
		cmocka_unit_test(test_gpu_job__hang_is_blamed_on_its_module),
		cmocka_unit_test(test_gpu_job__crash_is_a_fault),
		cmocka_unit_test(test_gpu_job__errors),
		cmocka_unit_test(test_gpu_job__no_module),
		cmocka_unit_test(test_gpu_job__reduce_to_the_launched_entries),
		cmocka_unit_test(test_gpu_job__read_the_oracle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
