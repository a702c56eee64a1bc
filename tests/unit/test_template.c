/*
 * test_template.c - a template's header is a contract its body is held to
 * (memory, barriers, formals, register types), the body is PTX the
 * project's parser reads (errors at the template's own line and column,
 * holes and all), ${...} arithmetic is checked, and the splicer's memory
 * verdict follows what the body does, not what the header claims.
 *
 * Expected lines and columns are counted by hand from the texts below (a
 * tab is one column).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/file.h"
#include "base/sha256.h"
#include "ptx/parse.h"
#include "splice/recipe.h"
#include "splice/splice.h"
#include "splice/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* tpl_parse must refuse text with a message starting with `want` (the
 * first line: "t.ptx:L:C: what"). */
static void refused(const char *text, const char *want)
{
	Template t;
	Err e = ERR_INIT;
	assert_int_equal(tpl_parse("t.ptx", text, strlen(text), &t, &e), -1);
	if (strncmp(err_msg(&e), want, strlen(want)))
		fail_msg("expected '%s'\n     got '%s'", want, err_msg(&e));
	err_release(&e);
}

static void accepted(const char *text, Template *t)
{
	Err e = ERR_INIT;
	if (tpl_parse("t.ptx", text, strlen(text), t, &e) < 0)
		fail_msg("'%s': %s", text, err_msg(&e));
	err_release(&e);
}

static void test_template__header_types(void **state)
{
	(void)state;
	static const char *const ok[] = {".pred", ".b8",  ".b16",   ".b32",  ".b64",
	                                 ".b128", ".u8",  ".u16",   ".u32",  ".u64",
	                                 ".s8",   ".s16", ".s32",   ".s64",  ".f16",
	                                 ".f32",  ".f64", ".f16x2", ".bf16", ".bf16x2"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char buf[128];
		snprintf(buf, sizeof buf, "//! in %s a\n", ok[i]);
		Template t;
		accepted(buf, &t);
		tpl_release(&t);
	}
	/* the column is the type's: "//! in " is 7 bytes */
	refused("//! in .q32 a\n", "t.ptx:1:8: '.q32' is not a PTX register type");
	refused("//! in .u128 a\n", "t.ptx:1:8: '.u128' is not a PTX register type");
	refused("//! out .e4m3 a\n", "t.ptx:1:9: '.e4m3' is not a PTX register type");
	refused("//! in .tf32 a\n", "t.ptx:1:8: '.tf32' is not a PTX register type");
	refused("//! in .b4294967328 a\n",
	        "t.ptx:1:8: '.b4294967328' is not a PTX register type");
	refused("//! in .v4.s33 a\n", "t.ptx:1:11: '.s33' is not a PTX register type");
	refused("//! in .v2 .pred p\n",
	        "t.ptx:1:8: a predicate cannot be a vector register");
	refused("//! in  .b32 a\n//! inout .x64 b\n",
	        "t.ptx:2:11: '.x64' is not a PTX register type");
	/* the formals stand for at most 65536 registers, lists counted in full */
	Template t;
	accepted("//! in .b32 a[65535] b\n", &t);
	assert_int_equal(t.formal_regs, 65536);
	tpl_release(&t);
	refused("//! in .b32 a[65536]\n//! out .b32 b\n",
	        "t.ptx:2:14: 'b': the formals stand for more than 65536 registers");
}

static void test_template__memory_contract(void **state)
{
	(void)state;
	/* a store under 'writes none': at the statement */
	refused("//! in .b64 p\n//! writes none\n\tst.global.u32 [%{p}], 1;\n",
	        "t.ptx:3:2: 'st.global.u32' writes global memory, and the header's '//! "
	        "writes' "
	        "does not list global");
	/* reductions and atomics write */
	refused("//! in .b64 p\n//! reads shared\n//! writes shared\n"
	        "\t  red.global.add.u32 [%{p}], 1;\n",
	        "t.ptx:4:4: 'red.global.add.u32' writes global memory");
	refused("//! in .b64 p\n//! out .b32 d\n//! reads global\n"
	        "\tatom.global.add.u32 %{d}, [%{p}], 1;\n",
	        "t.ptx:4:2: 'atom.global.add.u32' writes global memory");
	/* no writes line at all: the header declares none */
	refused("//! in .b64 p\n\tst.shared.u32 [%{p}], 1;\n",
	        "t.ptx:2:2: 'st.shared.u32' writes shared memory");
	/* a load from a space the reads line does not list; generic is a space */
	refused("//! in .b64 p\n//! out .b32 d\n//! reads global\n\tld.global.u32 %{d}, "
	        "[%{p}];\n"
	        "\tld.shared.u32 %{d}, [%{p}+4];\n",
	        "t.ptx:5:2: 'ld.shared.u32' reads shared memory, and the header's '//! "
	        "reads' "
	        "does not list shared");
	refused(
	    "//! in .b64 p\n//! out .b32 d\n//! reads global\n\tld.u32 %{d}, [%{p}];\n",
	    "t.ptx:4:2: 'ld.u32' reads generic memory");
	/* what the body does is kept; a header may declare more */
	Template t;
	accepted("//! in .b64 p\n//! out .b32 d\n//! reads global shared const\n"
	         "//! writes shared local\n"
	         "\tld.global.u32 %{d}, [%{p}];\n"
	         "\tld.global.u32 %{d}, [%{p}+4];\n"
	         "\tst.shared.u32 [%{p}], %{d};\n",
	         &t);
	assert_int_equal(t.body.loads[SP_GLOBAL], 2);
	assert_int_equal(t.body.load_line[SP_GLOBAL], 5);
	assert_int_equal(t.body.loads[SP_SHARED], 0);
	assert_int_equal(t.body.loads[SP_CONST], 0);
	assert_int_equal(t.body.stores[SP_SHARED], 1);
	assert_int_equal(t.body.store_line[SP_SHARED], 7);
	assert_int_equal(t.body.stores[SP_LOCAL], 0);
	assert_int_equal(t.body.atomics, 0);
	tpl_release(&t);
	/* in comments and strings nothing is a statement */
	accepted("//! out .b32 d\n//! writes none\n\tmov.b32 %{d}, 0; // st.global.u32 "
	         "[x], 1;\n"
	         "\t/* st.shared.u32 [y], 2; */\n",
	         &t);
	assert_int_equal(t.body.stores[SP_GLOBAL] + t.body.stores[SP_SHARED], 0);
	tpl_release(&t);
}

static void test_template__barrier_contract(void **state)
{
	(void)state;
	refused(
	    "//! barriers 0\n\tbar.sync 0;\n",
	    "t.ptx:2:2: 'bar.sync' is a barrier, and the header says '//! barriers 0'");
	refused("//! note no barriers line\n\t\tbarrier.sync 0;\n",
	        "t.ptx:2:3: 'barrier.sync' is a barrier, and the header declares none");
	/* straight-line: the count is exact */
	refused(
	    "//! barriers 2\n\tbar.sync 0;\n",
	    "t.ptx:2:2: the header says '//! barriers 2', and the body (with no branch) "
	    "executes 1");
	refused(
	    "//! barriers 1\n\t.reg .b32 %t;\n\tmov.b32 %t, 1;\n",
	    "t.ptx:1:1: the header says '//! barriers 1', and the body executes none");
	Template t;
	accepted("//! barriers 2\n\tbar.sync 0;\n\tmembar.cta;\n", &t);
	assert_int_equal(t.body.barriers, 2);
	assert_int_equal(t.body.barrier_line, 2);
	tpl_release(&t);
	/* with a branch a static count proves nothing: only 0 is held to */
	accepted(
	    "//! in .pred p\n//! barriers 1\n\t@%{p} bra $L1;\n\tbar.sync 0;\n$L1:\n",
	    &t);
	tpl_release(&t);
	accepted(
	    "//! in .pred p\n//! barriers 3\n\t@%{p} bra $L1;\n\tbar.sync 0;\n$L1:\n",
	    &t);
	tpl_release(&t);
	refused("//! in .pred p\n//! barriers 0\n\t@%{p} bra $L1;\n\tbar.sync 0;\n$L1:\n",
	        "t.ptx:4:2: 'bar.sync' is a barrier");
}

static void test_template__formal_contract(void **state)
{
	(void)state;
	/* an out formal never written: at its name in the header */
	refused("//! in  .b32 a\n//! out .b32 d e\n\tmov.b32 %{d}, %{a};\n",
	        "t.ptx:2:16: out formal 'e' is never written by the template (no "
	        "statement has "
	        "'%{e}' as its destination)");
	/* one element of a list */
	refused("//! out .b32 d[3]\n\tmov.b32 %{d[0]}, 0;\n\tmov.b32 %{d[2]}, 0;\n",
	        "t.ptx:1:14: out formal 'd[1]' is never written");
	/* a written in formal is kept for the splicer to judge (below) */
	Template w;
	accepted("//! in .b32 a b[3]\n//! out .b32 d\n\tmov.b32 %{d}, %{a};\n"
	         "\tadd.s32 %{b[1]}, %{a}, 1;\n",
	         &w);
	assert_int_equal(w.formals.v[0].written[0], 0);
	assert_int_equal(w.formals.v[1].written[0], 0);
	assert_int_equal(w.formals.v[1].written[1], 1);
	assert_int_equal(w.formals.v[1].written[2], 0);
	assert_int_equal(w.formals.v[1].write_line, 4);
	assert_int_equal(w.formals.v[2].written[0], 1);
	tpl_release(&w);
	/* the mma D of a list, a guarded write, an inout that is only read */
	Template t;
	accepted(
	    "//! in .b32 a[4] b[2] c\n//! out .b32 d[2]\n//! in .pred p\n//! out .b32 e\n"
	    "//! inout .b32 x\n"
	    "\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%{d[0]}, %{d[1]}}, "
	    "{%{a[0]}, %{a[1]}, %{a[2]}, %{a[3]}}, {%{b[0]}, %{b[1]}}, {%{c}, %{c}};\n"
	    "\t@%{p} mov.b32 %{e}, %{x};\n",
	    &t);
	tpl_release(&t);
}

static void test_template__syntax_errors_at_the_template(void **state)
{
	(void)state;
	/* holes before the error change lengths ("%{dd}" is 5 bytes, its
	 * stand-in 4; "${K*2}" 6, its stand-in 1): the column is still the
	 * template's ("\tadd.s32 " ends at column 9, the stray operand starts
	 * at 30) */
	refused("//! in .b32 a\n//! out .b32 dd\n//! param K\n"
	        "\tadd.s32 %{dd}, ${K*2}, %{a} %{a};\n",
	        "t.ptx:4:30: expected ',' or ';' after an operand");
	refused("//! out .b32 d\n\tmov.b32 %{d}, , 1;\n",
	        "t.ptx:2:16: unexpected character in an operand");
	refused("//! out .b32 d\n\tmov.b32 %{d}, 1;\n\t{\n\tmov.b32 %{d}, 2;\n",
	        "t.ptx:3:2: this '{' is not closed in the template");
	refused("//! out .b32 d\n\tmov.b32 %{d}, 1;\n\t}\n\t{\n",
	        "t.ptx:3:2: this '}' closes no '{' of the template");
	refused("//! out .b32 d\n\tmov.b32 %{d}, 1; /* open\n",
	        "t.ptx:2:19: unterminated comment");
	refused("//! out .b32 d\n\tmov.b32 %{d}, 1\n", "t.ptx:3:1: expected ',' or ';'");
	/* an unterminated string, where the parser reads the line as text (a
	 * .loc directive): the holes after it would go unfilled (fuzz_template
	 * found it) */
	refused("//! out .b32 d\n\tmov.b32 %{d}, 1;\n\t.loc 1 2 3 \"x %{d}\n",
	        "t.ptx:3:13: unterminated string");
	refused("//! out .b32 d\n\tmov.b32 %{d}, 1;\n\t/* %{d}\n",
	        "t.ptx:3:2: unterminated comment");
	/* a hole glued to a name or a number would stay in the text ('$' is a
	 * name byte): refused, at its '$' */
	refused("//! out .b32 d\n//! param A\n\tmov.b32 %{d}, 0x${A};\n",
	        "t.ptx:3:18: '0x${': a ${...} cannot continue a name or a number");
	refused("//! out .b32 d\n//! param A\n\t.reg .b32 %t<4>;\n\tmov.b32 %t${A}, 1;\n",
	        "t.ptx:4:12: '%t${': a ${...} cannot continue a name or a number");
	refused("//! out .b32 d\n//! param A\n\t.loc 1 x${A}\n\tmov.b32 %{d}, 1;\n",
	        "t.ptx:3:10: 'x${': a ${...} cannot continue a name or a number");
	/* the source line shown is the template's, holes as written */
	Template t;
	Err e = ERR_INIT;
	const char *bad = "//! out .b32 d\n\tmov.b32 %{d} 1;\n";
	assert_int_equal(tpl_parse("t.ptx", bad, strlen(bad), &t, &e), -1);
	assert_string_equal(err_msg(&e),
	                    "t.ptx:2:15: expected ',' or ';' after an operand\n"
	                    "    \tmov.b32 %{d} 1;\n"
	                    "    \t             ^");
	err_release(&e);
	/* a NUL byte, and an unknown formal, before any parse */
	static const char nul[] = "//! out .b32 d\n\tmov.b32 %{d}, 0;\0\n";
	assert_int_equal(tpl_parse("t.ptx", nul, sizeof nul - 1, &t, &e), -1);
	assert_non_null(strstr(err_msg(&e), "t.ptx:2:18: NUL byte in the template"));
	err_release(&e);
	refused("//! out .b32 d\n\tmov.b32 %{dx}, 0;\n",
	        "t.ptx:2:10: '%{dx}': no such formal in the header");
}

/* Reads and renders `expr` (one ${...}) with parameters A = 2^53 and Z = 0;
 * returns 0 with the rendered number in *out, or -1 with the message. */
static int render_expr(const char *expr, char *out, size_t n, Err *e)
{
	char text[512];
	snprintf(text, sizeof text,
	         "//! in .b32 a\n//! out .b32 d\n//! param A Z\n\tadd.s64 %%{d}, %%{a}, "
	         "${%s};\n",
	         expr);
	Template t;
	if (tpl_parse("t.ptx", text, strlen(text), &t, e) < 0)
		return -1; /* what needs no value: a number too large, the nesting */
	static const char rj[] =
	    "{\"cut\": {\"stmts\": [0, 0]}, \"template\": \"t.ptx\", \"params\": {\"A\": "
	    "9007199254740992, \"Z\": 0}, \"bind\": {\"a\": \"%r1\", \"d\": \"%r2\"}, "
	    "\"guards\": "
	    "{\"sha256\": "
	    "\"0000000000000000000000000000000000000000000000000000000000000000\"}}";
	Recipe r;
	if (rcp_parse("r.json", rj, strlen(rj), &r, e) < 0)
		fail_msg("%s", err_msg(e));
	StrBuf sb = STRBUF_INIT;
	int rc = tpl_render(&t, &r, "%spl0_", &sb, e);
	if (rc == 0) {
		const char *p = strstr(sb.p, "%r1, ");
		assert_non_null(p);
		snprintf(out, n, "%.*s", (int)strcspn(p + 5, ";"), p + 5);
	}
	sb_release(&sb);
	rcp_release(&r);
	tpl_release(&t);
	return rc;
}

static void expect_rendered(const char *expr, const char *want)
{
	char got[64];
	Err e = ERR_INIT;
	if (render_expr(expr, got, sizeof got, &e) < 0)
		fail_msg("'%s': %s", expr, err_msg(&e));
	assert_string_equal(got, want);
	err_release(&e);
}

/* `col` is where the operator (or the number) stands: "\tadd.s64 %{d},
 * %{a}, ${" puts the expression's first byte at column 24. */
static void expect_overflow(const char *expr, const char *want)
{
	char got[64];
	Err e = ERR_INIT;
	assert_int_equal(render_expr(expr, got, sizeof got, &e), -1);
	if (strncmp(err_msg(&e), want, strlen(want)))
		fail_msg("'%s': expected '%s'\n     got '%s'", expr, want, err_msg(&e));
	err_release(&e);
}

static void test_template__arithmetic_checked(void **state)
{
	(void)state;
	/* the edges that fit: 2^63 - 1 and -2^63 */
	expect_rendered("A*1023+(A-1)+A*0", "9223372036854775807");
	expect_rendered("(0-A*512)*2", "-9223372036854775808");
	expect_rendered("(0-A*512)*2/1", "-9223372036854775808");
	expect_rendered("(0-A*512)*2%7", "-1");
	expect_rendered("-A", "-9007199254740992");
	expect_rendered("9223372036854775807", "9223372036854775807");
	/* every operator that can leave 64 bits, at the operator */
	expect_overflow("A*1024",
	                "t.ptx:4:25: ${...} overflows 64 bits: 9007199254740992 * 1024");
	expect_overflow("A*512+A*512",
	                "t.ptx:4:29: ${...} overflows 64 bits: 4611686018427387904 + "
	                "4611686018427387904");
	expect_overflow("0-A*512-A*512-1",
	                "t.ptx:4:37: ${...} overflows 64 bits: -9223372036854775808 - 1");
	expect_overflow(
	    "(0-A*512)*2/-1",
	    "t.ptx:4:35: ${...} overflows 64 bits: -9223372036854775808 / -1");
	expect_overflow(
	    "(0-A*512)*2%-1",
	    "t.ptx:4:35: ${...} overflows 64 bits: -9223372036854775808 % -1");
	expect_overflow("-((0-A*512)*2)",
	                "t.ptx:4:24: ${...} overflows 64 bits: -(-9223372036854775808)");
	expect_overflow("9223372036854775808",
	                "t.ptx:4:24: '9223372036854775808' does not fit in 64 bits");
	expect_overflow("A/Z",
	                "t.ptx:4:25: division by zero in ${...}: 9007199254740992 / 0");
	expect_overflow("A%(Z*3)",
	                "t.ptx:4:25: division by zero in ${...}: 9007199254740992 % 0");
	/* nesting is bounded, so no expression exhausts the stack */
	char deep[300];
	memset(deep, '(', 100);
	deep[100] = '1';
	memset(deep + 101, ')', 100);
	deep[201] = 0;
	expect_overflow(deep, "t.ptx:4:88: ${...} nested more than 64 deep");
	memset(deep, '-', 100);
	strcpy(deep + 100, "1");
	expect_overflow(deep, "t.ptx:4:88: ${...} nested more than 64 deep");
}

static void test_template__arithmetic_in_comments(void **state)
{
	(void)state;
	/* ${...} in a '//' comment is rendered too, so it is checked too */
	const char *text = "//! out .b32 d\n//! param A\n\tmov.b32 %{d}, 1;\t// ${A*A}\n";
	Template t;
	Err e = ERR_INIT;
	accepted(text, &t);
	static const char rj[] =
	    "{\"cut\": {\"stmts\": [0, 0]}, \"template\": \"t.ptx\", \"params\": {\"A\": "
	    "9007199254740992}, \"bind\": {\"d\": \"%r2\"}, \"guards\": {\"sha256\": "
	    "\"0000000000000000000000000000000000000000000000000000000000000000\"}}";
	Recipe r;
	assert_int_equal(rcp_parse("r.json", rj, strlen(rj), &r, &e), 0);
	StrBuf sb = STRBUF_INIT;
	assert_int_equal(tpl_render(&t, &r, "%spl0_", &sb, &e), -1);
	assert_non_null(strstr(err_msg(&e), "t.ptx:3:25: ${...} overflows 64 bits"));
	/* and a bad expression there is the template's error, recipe or not */
	refused("//! out .b32 d\n\tmov.b32 %{d}, 1;\t// ${B}\n",
	        "t.ptx:2:24: parameter 'B' is not declared");
	sb_release(&sb);
	rcp_release(&r);
	tpl_release(&t);
	err_release(&e);
}

/* ---- the splicer's memory verdict follows the body ----------------------- */

#define HEAD ".version 8.7\n.target sm_89\n.address_size 64\n"

/* s0 ld.param, s1 ld.global, s2 add, s3 st.shared [sm], s4 add,
 * s5 ld.shared [sm+4], s6 add, s7 st.global, s8 ret */
static const char M[] = HEAD ".visible .entry k(.param .u64 k_p0)\n"
                             "{\n"
                             "\t.reg .b32 %r<8>;\n"
                             "\t.reg .b64 %rd<4>;\n"
                             "\t.shared .align 4 .b8 sm[64];\n"
                             "\tld.param.u64 %rd1, [k_p0];\n"
                             "\tld.global.u32 %r1, [%rd1];\n"
                             "\tadd.s32 %r2, %r1, 1;\n"
                             "\tst.shared.u32 [sm], %r2;\n"
                             "\tadd.s32 %r3, %r1, 2;\n"
                             "\tld.shared.u32 %r4, [sm+4];\n"
                             "\tadd.s32 %r5, %r4, %r3;\n"
                             "\tst.global.u32 [%rd1], %r5;\n"
                             "\tret;\n"
                             "}\n";

typedef struct {
	char dir[64];
	Module *m;
	Recipe r;
	SpliceResult res;
	Err e;
} Sx;

/* Splices template `tpl` over [first, last] with `bind`; returns splice_run's
 * result (the message in x->e). */
static int splice_with(Sx *x, const char *tpl, uint32_t first, uint32_t last,
                       const char *bind, bool force)
{
	memset(x, 0, sizeof *x);
	strcpy(x->dir, "/tmp/d4r-test-template-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	char path[128];
	snprintf(path, sizeof path, "%s/t.ptx", x->dir);
	assert_int_equal(write_file_atomic(path, tpl, strlen(tpl), &x->e), 0);
	x->m = ptx_parse("m.ptx", M, strlen(M), &x->e);
	assert_non_null(x->m);
	StrBuf cut = STRBUF_INIT;
	splice_cut_text(x->m, mod_func_find(x->m, str_c("k")), first, last, &cut);
	char hex[65];
	sha256_hex(cut.p, cut.n, hex);
	sb_release(&cut);
	char rj[1024];
	snprintf(
	    rj, sizeof rj,
	    "{\"entry\": \"k\", \"cut\": {\"stmts\": [%u, %u]}, \"template\": \"t.ptx\", "
	    "\"bind\": %s, \"guards\": {\"sha256\": \"%s\"}}",
	    first, last, bind, hex);
	if (rcp_parse("r.json", rj, strlen(rj), &x->r, &x->e) < 0)
		fail_msg("%s", err_msg(&x->e));
	SpliceRequest req = {x->m, NULL, &x->r, x->dir, force};
	int rc = splice_run(&req, &x->res, &x->e);
	unlink(path);
	rmdir(x->dir);
	return rc;
}

static void sx_free(Sx *x)
{
	splice_result_release(&x->res);
	rcp_release(&x->r);
	mod_free(x->m);
	err_release(&x->e);
}

static void expect_in(const Sx *x, const char *want)
{
	if (!strstr(err_msg(&x->e), want))
		fail_msg("expected '%s' in '%s'", want, err_msg(&x->e));
}

static void test_template__verdict_follows_the_body(void **state)
{
	(void)state;
	Sx x;
	/* s4 (add %r3 = %r1 + 2) is pure; a body that also stores to shared,
	 * which s5 reads after the cut, is refused, whatever its header says */
	const char *storing = "//! in .b32 a\n//! out .b32 d\n//! writes shared\n"
	                      "\tadd.s32 %{d}, %{a}, 2;\n\tst.shared.u32 [%{a}], %{d};\n";
	assert_int_equal(
	    splice_with(&x, storing, 4, 4, "{\"a\": \"%r1\", \"d\": \"%r3\"}", false),
	    -1);
	expect_in(&x, "READ/WRITE DEPENDENCIES: cut invalid: s4..s4");
	expect_in(
	    &x, "ptx/t.ptx:5 stores to shared memory, which may be read after the cut by "
	        "s5 (line 14) 'ld.shared.u32 %r4, [sm+4];'");
	sx_free(&x);
	/* --force splices it, saying so */
	assert_int_equal(
	    splice_with(&x, storing, 4, 4, "{\"a\": \"%r1\", \"d\": \"%r3\"}", true), 0);
	assert_true(x.res.forced);
	sx_free(&x);
	/* the same body without the store splices */
	const char *pure = "//! in .b32 a\n//! out .b32 d\n//! writes shared\n"
	                   "\tadd.s32 %{d}, %{a}, 2;\n";
	assert_int_equal(
	    splice_with(&x, pure, 4, 4, "{\"a\": \"%r1\", \"d\": \"%r3\"}", false), 0);
	assert_false(x.res.forced);
	sx_free(&x);
	/* s2..s3 store to shared (not read after: sm+4 is other bytes); a
	 * header that claims 'writes shared' over a body that stores nothing
	 * drops the store, and is refused */
	assert_int_equal(splice_with(&x,
	                             "//! in .b32 a\n//! out .b32 d\n//! writes shared\n"
	                             "\tadd.s32 %{d}, %{a}, 1;\n",
	                             2, 3, "{\"a\": \"%r1\", \"d\": \"%r2\"}", false),
	                 -1);
	expect_in(&x,
	          "the cut stores to shared (1 store) and the body of ptx/t.ptx stores "
	          "nothing there");
	sx_free(&x);
	/* s7 stores to global and nothing reads it after: a body that stores
	 * there too is fine (a body that stores elsewhere is not) */
	assert_int_equal(splice_with(&x,
	                             "//! in .b64 p\n//! in .b32 v\n//! writes global\n"
	                             "\tst.global.u32 [%{p}], %{v};\n",
	                             7, 7, "{\"p\": \"%rd1\", \"v\": \"%r5\"}", false),
	                 0);
	sx_free(&x);
	assert_int_equal(
	    splice_with(&x,
	                "//! in .b64 p\n//! in .b32 v\n//! writes global shared\n"
	                "\tst.global.u32 [%{p}], %{v};\n\tst.shared.u32 [%{p}], %{v};\n",
	                7, 7, "{\"p\": \"%rd1\", \"v\": \"%r5\"}", false),
	    0);
	sx_free(&x);
	/* a written in formal: an error when its register is read after the
	 * cut (%r1 by s4), not when it is dead there (%r4 after s6, the way a
	 * scaffold's accumulator is overwritten in place) */
	assert_int_equal(
	    splice_with(&x,
	                "//! in .b32 a\n//! out .b32 d\n"
	                "\tadd.s32 %{a}, %{a}, 1;\n\tadd.s32 %{d}, %{a}, 1;\n",
	                2, 2, "{\"a\": \"%r1\", \"d\": \"%r2\"}", false),
	    -1);
	expect_in(
	    &x, "r.json: 'bind.a': the template ptx/t.ptx writes in formal 'a' (line 3), "
	        "and '%r1' is read after the cut: declare the formal inout");
	sx_free(&x);
	assert_int_equal(
	    splice_with(&x,
	                "//! in .b32 a b\n//! out .b32 d\n"
	                "\tadd.s32 %{a}, %{a}, %{b};\n\tmov.b32 %{d}, %{a};\n",
	                6, 6, "{\"a\": \"%r4\", \"b\": \"%r3\", \"d\": \"%r5\"}", false),
	    0);
	sx_free(&x);
	/* barriers: the body's count, not the header's */
	assert_int_equal(splice_with(&x,
	                             "//! in .b32 a\n//! out .b32 d\n//! barriers 1\n"
	                             "\tbra $Lx;\n\tbar.sync 0;\n$Lx:\n"
	                             "\tadd.s32 %{d}, %{a}, 2;\n",
	                             4, 4, "{\"a\": \"%r1\", \"d\": \"%r3\"}", false),
	                 -1);
	expect_in(&x,
	          "the cut executes 0 barriers and the body of ptx/t.ptx 1 (the first at "
	          "line 5)");
	sx_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_template__header_types),
	    cmocka_unit_test(test_template__memory_contract),
	    cmocka_unit_test(test_template__barrier_contract),
	    cmocka_unit_test(test_template__formal_contract),
	    cmocka_unit_test(test_template__syntax_errors_at_the_template),
	    cmocka_unit_test(test_template__arithmetic_checked),
	    cmocka_unit_test(test_template__arithmetic_in_comments),
	    cmocka_unit_test(test_template__verdict_follows_the_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
