/*
 * test_gpu_child.c - the child-process machinery with stand-in children
 * (no GPU): data comes back, errors and faults are told apart, a crash is a
 * fault, a child past its time limit is killed and reported as a hang, and
 * the parent survives all of it; children run side by side
 * (gpu_child_run_all).  Also the "no driver" path of a job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/child.h"
#include "gpu/gpu.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int body_data(void *arg, GpuChan *ch)
{
	size_t n = *(size_t *)arg;
	unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7);
	gpu_chan_stage(ch, "jit original");
	gpu_chan_stage(ch, "launch original");
	gpu_chan_result(ch, GPU_OK, NULL, p, n);
	gpu_chan_result(ch, GPU_OK, "second", "xy", 2);
	free(p);
	return 0;
}

static void test_gpu_child__data_comes_back(void **state)
{
	(void)state;
	size_t sizes[] = {0, 1, 65536, 8u << 20};   /* 8 MB: more than a pipe holds */
	for (size_t s = 0; s < 4; s++) {
		GpuChildResult r;
		Err e = ERR_INIT;
		assert_int_equal(gpu_child_run(body_data, &sizes[s], 10, 10, &r, &e), 0);
		assert_int_equal(r.status, GPU_OK);
		assert_null(r.message);
		assert_string_equal(r.stage, "launch original");
		assert_int_equal(r.nrecs, 2);
		assert_int_equal(r.recs[0].npayload, sizes[s]);
		for (size_t i = 0; i < sizes[s]; i++)
			if (r.recs[0].payload[i] != (unsigned char)(i * 7))
				fail_msg("payload byte %zu", i);
		assert_string_equal(r.recs[1].message, "second");
		assert_memory_equal(r.recs[1].payload, "xy", 2);
		assert_int_equal(r.exit_code, 0);
		gpu_child_result_release(&r);
		err_release(&e);
	}
}

static int body_error(void *arg, GpuChan *ch)
{
	(void)arg;
	gpu_chan_result(ch, GPU_OK, NULL, "a", 1);
	gpu_chan_result(ch, GPU_ERROR, "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX", NULL, 0);
	return 1;
}

static int body_fault(void *arg, GpuChan *ch)
{
	(void)arg;
	gpu_chan_stage(ch, "launch spliced");
	gpu_chan_result(ch, GPU_ERROR, "first error", NULL, 0);
	gpu_chan_result(ch, GPU_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS (700)", NULL, 0);
	return 1;
}

static void test_gpu_child__error_and_fault_records(void **state)
{
	(void)state;
	GpuChildResult r;
	Err e = ERR_INIT;
	assert_int_equal(gpu_child_run(body_error, NULL, 10, 10, &r, &e), 0);
	assert_int_equal(r.status, GPU_ERROR);
	assert_string_equal(r.message, "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX");
	assert_int_equal(r.exit_code, 1);
	gpu_child_result_release(&r);
	assert_int_equal(gpu_child_run(body_fault, NULL, 10, 10, &r, &e), 0);
	assert_int_equal(r.status, GPU_FAULT);
	assert_string_equal(r.message, "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
	gpu_child_result_release(&r);
	err_release(&e);
}

static int body_crash(void *arg, GpuChan *ch)
{
	(void)arg;
	gpu_chan_stage(ch, "launch spliced");
	gpu_chan_result(ch, GPU_OK, NULL, "partial", 7);
	raise(SIGSEGV);
	return 0;
}

static void test_gpu_child__crash_is_a_fault(void **state)
{
	(void)state;
	GpuChildResult r;
	Err e = ERR_INIT;
	assert_int_equal(gpu_child_run(body_crash, NULL, 10, 10, &r, &e), 0);
	assert_int_equal(r.status, GPU_FAULT);
	assert_int_equal(r.signal, SIGSEGV);
	assert_non_null(strstr(r.message, "signal 11"));
	assert_non_null(strstr(r.message, "'launch spliced'"));
	assert_int_equal(r.nrecs, 1);     /* what it sent before dying is kept */
	assert_memory_equal(r.recs[0].payload, "partial", 7);
	gpu_child_result_release(&r);
	err_release(&e);
}

static int body_hang(void *arg, GpuChan *ch)
{
	(void)arg;
	gpu_chan_stage(ch, "jit spliced");
	gpu_chan_stage(ch, "launch spliced");
	for (;;)
		pause();
	return 0;
}

static int body_slow_jit(void *arg, GpuChan *ch)
{
	(void)arg;
	gpu_chan_stage(ch, "jit spliced");
	sleep(1);   /* longer than the launch timeout, shorter than the JIT limit */
	gpu_chan_stage(ch, "launch spliced");
	gpu_chan_result(ch, GPU_OK, NULL, "ok", 2);
	return 0;
}

static void test_gpu_child__hang_is_killed(void **state)
{
	(void)state;
	GpuChildResult r;
	Err e = ERR_INIT;
	double t0 = now_seconds();
	assert_int_equal(gpu_child_run(body_hang, NULL, 0.3, 10, &r, &e), 0);
	double dt = now_seconds() - t0;
	assert_int_equal(r.status, GPU_HANG);
	assert_true(dt >= 0.3 && dt < 3);
	assert_non_null(strstr(r.message, "in stage 'launch spliced' (limit 0 s): killed"));
	assert_int_equal(r.signal, SIGKILL);
	gpu_child_result_release(&r);

	/* The JIT has its own limit: a JIT slower than --timeout is no hang. */
	assert_int_equal(gpu_child_run(body_slow_jit, NULL, 0.3, 10, &r, &e), 0);
	assert_int_equal(r.status, GPU_OK);
	gpu_child_result_release(&r);
	/* ... but one slower than the JIT limit is. */
	assert_int_equal(gpu_child_run(body_slow_jit, NULL, 10, 0.3, &r, &e), 0);
	assert_int_equal(r.status, GPU_HANG);
	assert_non_null(strstr(r.message, "'jit spliced'"));
	gpu_child_result_release(&r);
	err_release(&e);
}

static int body_silent(void *arg, GpuChan *ch)
{
	(void)arg;
	(void)ch;
	return 3;
}

static void test_gpu_child__exit_without_result(void **state)
{
	(void)state;
	GpuChildResult r;
	Err e = ERR_INIT;
	assert_int_equal(gpu_child_run(body_silent, NULL, 10, 10, &r, &e), 0);
	assert_int_equal(r.status, GPU_ERROR);
	assert_non_null(strstr(r.message, "exited with status 3 without a result"));
	gpu_child_result_release(&r);
	err_release(&e);
}

static void test_gpu_child__job_without_driver(void **state)
{
	(void)state;
	setenv("D4R_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	Manifest m = {0};
	GpuModuleSrc src = {.name = "m.ptx", .ptx = "", .ptx_len = 0};
	GpuJob job = {.manifest = &m, .modules = &src, .nmodules = 1, .timeout_s = 1};
	GpuResult res;
	Err e = ERR_INIT;
	assert_int_equal(gpu_job_run(&job, &res, &e), -1);
	assert_non_null(strstr(err_msg(&e), "no CUDA driver: "));
	assert_non_null(strstr(err_msg(&e), "/nonexistent/libcuda.so.1"));
	gpu_result_release(&res);
	/* Asking again gives the same answer without trying again. */
	assert_int_equal(gpu_driver_load(&e), -1);
	assert_non_null(strstr(err_msg(&e), "no CUDA driver: "));
	err_release(&e);
}

/*
 * Children that meet: each makes its file "DIR/NAME", then looks for the
 * other's file up to `patience` times, 10 ms apart, and sends "met" when
 * it saw it, "alone" when not.  Side by side both meet; one after the
 * other the first cannot.
 */
typedef struct {
	const char *dir, *name, *other;
	int patience;
} Meet;

static int body_meet(void *arg, GpuChan *ch)
{
	const Meet *m = arg;
	char mine[512], theirs[512];
	snprintf(mine, sizeof mine, "%s/%s", m->dir, m->name);
	snprintf(theirs, sizeof theirs, "%s/%s", m->dir, m->other);
	FILE *f = fopen(mine, "w");
	if (f)
		fclose(f);
	for (int i = 0; i < m->patience; i++) {
		if (access(theirs, F_OK) == 0) {
			gpu_chan_result(ch, GPU_OK, NULL, "met", 3);
			return 0;
		}
		usleep(10000);
	}
	gpu_chan_result(ch, GPU_OK, NULL, "alone", 5);
	return 0;
}

static void run_meet(bool serial, int patience, const char *want0, const char *want1)
{
	char dir[] = "/tmp/d4r-test-meet-XXXXXX";
	assert_non_null(mkdtemp(dir));
	Meet m[2] = {{dir, "a", "b", patience}, {dir, "b", "a", patience}};
	GpuChildTask t[2] = {{.arg = &m[0]}, {.arg = &m[1]}};
	double wall = -1;
	gpu_child_run_all(body_meet, t, 2, 10, 10, serial, &wall);
	assert_true(wall >= 0);
	const char *want[2] = {want0, want1};
	for (int k = 0; k < 2; k++) {
		assert_int_equal(t[k].rc, 0);
		assert_int_equal(t[k].cr.status, GPU_OK);
		assert_int_equal(t[k].cr.nrecs, 1);
		assert_int_equal(t[k].cr.recs[0].npayload, strlen(want[k]));
		assert_memory_equal(t[k].cr.recs[0].payload, want[k], strlen(want[k]));
		gpu_child_result_release(&t[k].cr);
		err_release(&t[k].e);
	}
	char p[600];
	snprintf(p, sizeof p, "%s/a", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/b", dir);
	unlink(p);
	rmdir(dir);
}

static void test_gpu_child__run_all_side_by_side(void **state)
{
	(void)state;
	run_meet(false, 1000, "met", "met");
	/* serial: the first ends before the second starts */
	run_meet(true, 20, "alone", "met");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_child__data_comes_back),
		cmocka_unit_test(test_gpu_child__error_and_fault_records),
		cmocka_unit_test(test_gpu_child__crash_is_a_fault),
		cmocka_unit_test(test_gpu_child__hang_is_killed),
		cmocka_unit_test(test_gpu_child__exit_without_result),
		cmocka_unit_test(test_gpu_child__job_without_driver),
		cmocka_unit_test(test_gpu_child__run_all_side_by_side),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
