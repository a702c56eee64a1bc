/*
 * test_gpu_driver.c - what of the driver layer runs without a GPU: the
 * missing-driver message, the cache key and folder, picking PTX lines out
 * of a JIT log, module reduction over the parser's entry spans, timing
 * statistics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/driver.h"
#include "gpu/reduce.h"
#include "gpu/timing.h"
#include "ptx/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_gpu_driver__missing_driver(void **state)
{
	(void)state;
	setenv("D4R_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	Err e = ERR_INIT;
	assert_int_equal(gpu_driver_load(&e), -1);
	assert_non_null(strstr(err_msg(&e), "no CUDA driver: /nonexistent/libcuda.so.1"));
	err_release(&e);
}

static void test_gpu_driver__cache_key(void **state)
{
	(void)state;
	char k[65], k2[65];
	gpu_cache_key("abc", 3, 13000, 9, 0, "o", k);
	assert_int_equal(strlen(k), 64);
	gpu_cache_key("abc", 3, 13000, 9, 0, "o", k2);
	assert_string_equal(k, k2);
	gpu_cache_key("abd", 3, 13000, 9, 0, "o", k2);
	assert_string_not_equal(k, k2);
	gpu_cache_key("abc", 3, 13010, 9, 0, "o", k2);
	assert_string_not_equal(k, k2);
	gpu_cache_key("abc", 3, 13000, 10, 0, "o", k2);
	assert_string_not_equal(k, k2);
	gpu_cache_key("abc", 3, 13000, 9, 0, "p", k2);
	assert_string_not_equal(k, k2);
}

static void note(void *ctx, unsigned line, StrBuf *out)
{
	(void)ctx;
	if (line == 3)
		sb_addf(out, "template ptx/t.ptx:%u", line + 10);
}

static void test_gpu_driver__log_lines(void **state)
{
	(void)state;
	const char ptx[] = ".version 8.0\n.target sm_90\n  mov.u32 %r1, %bogus;\n  ret;\n";
	const char log[] = "ptxas application ptx input, line 3; error   : Unknown symbol '%bogus'\n"
	                   "ptxas application ptx input, line 3; error   : again\n"
	                   "ptxas application ptx input, line 99; error   : far away\n"
	                   "ptxas fatal   : Ptx assembly aborted due to errors\n";
	StrBuf sb = STRBUF_INIT;
	gpu_log_lines(log, ptx, strlen(ptx), 8, note, NULL, &sb);
	assert_string_equal(sb.p, "\n    3 |   mov.u32 %r1, %bogus;"
	                          "\n      (template ptx/t.ptx:13)"
	                          "\n    99 | (beyond the end of the PTX)");
	sb_release(&sb);
}

static const char module[] =
	".version 8.0\n"                              /* 1 */
	".target sm_90\n"                             /* 2 */
	".address_size 64\n"                          /* 3 */
	"// .entry commented_out { }\n"               /* 4 */
	".func (.reg .b32 r) helper(.reg .b32 a)\n"   /* 5 */
	"{\n  mov.b32 r, a;\n  ret;\n}\n"             /* 6-9 */
	".visible .entry first(\n"                    /* 10 */
	"  .param .u64 p\n"                           /* 11 */
	")\n"                                         /* 12 */
	"{\n"                                         /* 13 */
	"  /* } a brace in a comment */\n"            /* 14 */
	"  { .reg .b32 x; }\n"                        /* 15 */
	"  ret;\n"                                    /* 16 */
	"}\n"                                         /* 17 */
	".entry proto(.param .u32 a);\n"              /* 18 */
	".weak .entry second()\n"                     /* 19 */
	"{\n  ret;\n}\n"                              /* 20-22 */
	".global .u32 g;\n";                          /* 23 */

/* The module's entry spans from the parser's model, built as the verbs
 * build them for gpu_reduce_ptx (definitions only: prototypes have none). */
static size_t entry_spans(const Module *m, GpuFuncSpan *spans, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < m->funcs.n && n < max; i++) {
		const Func *f = &m->funcs.v[i];
		if (f->kind != FN_ENTRY || (f->flags & FNF_DECL))
			continue;
		spans[n].off = f->text.off;
		spans[n].len = f->text.len;
		spans[n].name = xstrndup(m->src + f->name.off, f->name.len);
		spans[n].is_entry = 1;
		n++;
	}
	return n;
}

static void test_gpu_driver__reduce(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	Module *m = ptx_parse("t.ptx", module, strlen(module), &e);
	assert_non_null(m);
	GpuFuncSpan spans[8];
	size_t n = entry_spans(m, spans, 8);
	assert_int_equal(n, 2);
	assert_string_equal(spans[0].name, "first");
	assert_int_equal(strncmp(module + spans[0].off, ".visible .entry first(", 22), 0);
	assert_int_equal(module[spans[0].off + spans[0].len - 1], '}');
	assert_string_equal(spans[1].name, "second");
	assert_int_equal(strncmp(module + spans[1].off, ".weak .entry second()", 21), 0);

	const char *keep[] = {"second"};
	StrBuf out = STRBUF_INIT;
	assert_int_equal(gpu_reduce_ptx(module, strlen(module), spans, n, keep, 1, &out, &e), 0);
	assert_null(strstr(out.p, "first"));
	assert_non_null(strstr(out.p, ".weak .entry second()\n{\n  ret;\n}\n"));
	assert_non_null(strstr(out.p, "helper"));        /* .func kept */
	assert_non_null(strstr(out.p, ".entry proto"));  /* declarations kept */
	assert_non_null(strstr(out.p, "// .entry commented_out { }"));
	/* Line numbers kept: ".global" is still on line 23. */
	unsigned line = 1;
	for (const char *p = out.p; p < strstr(out.p, ".global"); p++)
		line += *p == '\n';
	assert_int_equal(line, 23);
	sb_release(&out);

	const char *missing[] = {"third"};
	assert_int_equal(gpu_reduce_ptx(module, strlen(module), spans, n, missing, 1, &out, &e), -1);
	assert_string_equal(err_msg(&e), "no entry 'third' in the module");
	for (size_t i = 0; i < n; i++)
		free((char *)spans[i].name);
	mod_free(m);
	err_release(&e);
	sb_release(&out);
}

static void test_gpu_driver__times(void **state)
{
	(void)state;
	double v[] = {5, 1, 3, 2, 4};
	GpuTimes t;
	gpu_times_from(v, 5, &t);
	assert_int_equal(t.n, 5);
	assert_true(t.median_ms == 3 && t.min_ms == 1 && t.max_ms == 5);
	double w[] = {4, 1, 3, 2};
	gpu_times_from(w, 4, &t);
	assert_true(t.median_ms == 2.5);
	gpu_times_from(w, 0, &t);
	assert_int_equal(t.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_driver__missing_driver),
		cmocka_unit_test(test_gpu_driver__cache_key),
		cmocka_unit_test(test_gpu_driver__log_lines),
		cmocka_unit_test(test_gpu_driver__reduce),
		cmocka_unit_test(test_gpu_driver__times),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
