/*
 * test_recipe.c - what the recipe reader refuses on its own: anchors that
 * do not compile (an invalid recipe, with PCRE2's message and offset, not a
 * stale one), files outside the corpus and ptx/ folders, NUL bytes; and the
 * anchors it compiled match as PCRE2 says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ptx/parse.h"
#include "splice/recipe.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"

/* A recipe with `extra` members after the cut and the template. */
static int parse(const char *tmpl, const char *extra, Recipe *r, Err *e)
{
	char buf[2048];
	snprintf(buf, sizeof buf,
	         "{\"cut\": {\"phase\": 1}, \"template\": \"%s\", \"guards\": "
	         "{\"sha256\": \"" Z64 "\"%s}}",
	         tmpl, extra);
	return rcp_parse("r.json", buf, strlen(buf), r, e);
}

static void expect_refused(const char *tmpl, const char *extra, const char *want)
{
	Recipe r;
	Err e = ERR_INIT;
	assert_int_equal(parse(tmpl, extra, &r, &e), -1);
	if (strcmp(err_msg(&e), want))
		fail_msg("expected '%s'\n     got '%s'", want, err_msg(&e));
	err_release(&e);
}

static void test_recipe__anchor_that_does_not_compile(void **state)
{
	(void)state;
	/* PCRE2's own words and offsets (pcre2_compile: "missing closing
	 * parenthesis" at the end of the pattern, "quantifier does not follow
	 * a repeatable item" at the '*') */
	expect_refused(
	    "identity", ", \"first\": \"^mma(\"",
	    "r.json: guards.first: invalid recipe: the regular expression '^mma(' does "
	    "not compile: missing closing parenthesis (at offset 5)");
	expect_refused(
	    "identity", ", \"first\": \"^mma\", \"last\": \"*st\"",
	    "r.json: guards.last: invalid recipe: the regular expression '*st' does not "
	    "compile: quantifier does not follow a repeatable item (at offset 0)");
}

static void test_recipe__anchors_match(void **state)
{
	(void)state;
	Recipe r;
	Err e = ERR_INIT;
	if (parse("identity",
	          ", \"first\": \"^mma\\\\.sync\", \"last\": \"\\\\{%r14, %r15\\\\}$\"",
	          &r, &e) < 0)
		fail_msg("%s", err_msg(&e));
	assert_non_null(r.first_code);
	assert_non_null(r.last_code);
	const char *a = "mma.sync.aligned.m16n8k32 {%r14, %r15}";
	assert_int_equal(rcp_guard_match(&r, false, a, strlen(a), &e), 1);
	assert_int_equal(rcp_guard_match(&r, true, a, strlen(a), &e), 1);
	const char *b = "add.s32 {%r14, %r15}, 1";
	assert_int_equal(rcp_guard_match(&r, false, b, strlen(b), &e), 0);
	assert_int_equal(rcp_guard_match(&r, true, b, strlen(b), &e), 0);
	/* the subject's length counts, not a NUL in it */
	assert_int_equal(rcp_guard_match(&r, false, "mma.sync", 3, &e), 0);
	rcp_release(&r);

	/* no anchors: nothing to match against, never an error */
	assert_int_equal(parse("identity", "", &r, &e), 0);
	assert_int_equal(rcp_guard_match(&r, false, "x", 1, &e), 0);
	assert_int_equal(rcp_guard_match(&r, true, "x", 1, &e), 0);
	rcp_release(&r);

	/* a Recipe made in code, not read: its anchor is compiled on use, and
	 * one that does not compile is the same invalid recipe */
	Recipe h;
	memset(&h, 0, sizeof h);
	h.path = "made.json";
	h.first_re = "[a";
	assert_int_equal(rcp_guard_match(&h, false, "a", 1, &e), -1);
	assert_string_equal(
	    err_msg(&e),
	    "made.json: guards.first: invalid recipe: the regular expression '[a' "
	    "does not compile: missing terminating ] for character class (at "
	    "offset 2)");
	h.first_re = "^a";
	assert_int_equal(rcp_guard_match(&h, false, "ab", 2, &e), 1);
	err_release(&e);
}

/* The splicer says what the reader would have said: an anchor that cannot
 * be evaluated makes the recipe invalid, it is never taken for one that
 * does not match (a Recipe made in code can hold such an anchor). */
static void test_recipe__splice_reports_an_invalid_anchor(void **state)
{
	(void)state;
	static const char M[] = ".version 8.7\n.target sm_89\n.address_size 64\n"
	                        ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n"
	                        "\tmov.b32 %r1, 1;\n\tadd.s32 %r2, %r1, 1;\n\tret;\n}\n";
	Err e = ERR_INIT;
	Module *m = ptx_parse("m.ptx", M, strlen(M), &e);
	assert_non_null(m);
	Recipe r;
	const char *j = "{\"entry\": \"k\", \"cut\": {\"stmts\": [1, 1]}, \"template\": "
	                "\"identity\", \"guards\": {\"sha256\": \"" Z64 "\"}}";
	for (int last = 0; last < 2; last++) {
		assert_int_equal(rcp_parse("r.json", j, strlen(j), &r, &e), 0);
		*(last ? &r.last_re : &r.first_re) = xstrdup("add(");
		SpliceRequest req = {m, NULL, &r, NULL, false};
		SpliceResult res;
		memset(&res, 0, sizeof res);
		assert_int_equal(splice_run(&req, &res, &e), -1);
		char want[200];
		snprintf(want, sizeof want,
		         "r.json: guards.%s: invalid recipe: the regular expression "
		         "'add(' does not "
		         "compile: missing closing parenthesis (at offset 4)",
		         last ? "last" : "first");
		assert_string_equal(err_msg(&e), want);
		splice_result_release(&res);
		rcp_release(&r);
	}
	mod_free(m);
	err_release(&e);
}

static void test_recipe__files_stay_inside_their_folders(void **state)
{
	(void)state;
	expect_refused(
	    "../../etc/t.ptx", "",
	    "r.json: template: '../../etc/t.ptx' is not inside the ptx/ folder or the "
	    "recipe's folder (a relative path with no '..')");
	expect_refused(
	    "/abs/t.ptx", "",
	    "r.json: template: '/abs/t.ptx' is not inside the ptx/ folder or the "
	    "recipe's folder (a relative path with no '..')");
	expect_refused(
	    "./../t.ptx", "",
	    "r.json: template: './../t.ptx' is not inside the ptx/ folder or the "
	    "recipe's folder (a relative path with no '..')");
	expect_refused(
	    "enc4/../../t.ptx", "",
	    "r.json: template: 'enc4/../../t.ptx' is not inside the ptx/ folder or the "
	    "recipe's folder (a relative path with no '..')");
	Recipe r;
	Err e = ERR_INIT;
	const char *mod[] = {"/abs/enc4.ptx", "../enc4.ptx", "enc4/../../x.ptx"};
	for (size_t i = 0; i < 3; i++) {
		char j[512], want[512];
		snprintf(j, sizeof j,
		         "{\"module\": \"%s\", \"cut\": {\"phase\": 1}, \"template\": "
		         "\"identity\", "
		         "\"guards\": {\"sha256\": \"" Z64 "\"}}",
		         mod[i]);
		snprintf(want, sizeof want,
		         "r.json: module: '%s' is not inside the corpus folder (a "
		         "relative path with "
		         "no '..'; give --module FILE for a module elsewhere)",
		         mod[i]);
		assert_int_equal(rcp_parse("r.json", j, strlen(j), &r, &e), -1);
		assert_string_equal(err_msg(&e), want);
	}
	/* inside: a name under ptx/, the recipe's own folder, ".." in a name */
	const char *ok[] = {"enc4/phase-08.ptx", "./local.ptx", "enc4/a..b.ptx"};
	for (size_t i = 0; i < 3; i++) {
		if (parse(ok[i], "", &r, &e) < 0)
			fail_msg("%s: %s", ok[i], err_msg(&e));
		assert_string_equal(r.template_name, ok[i]);
		rcp_release(&r);
	}
	err_release(&e);
}

static void test_recipe__nul_bytes(void **state)
{
	(void)state;
	/* a NUL inside the anchor would cut it short: "^mma" would guard a
	 * recipe that says "^mma\0|.*" */
	static const char j[] =
	    "{\"cut\": {\"phase\": 1}, \"template\": \"identity\", \"guards\": "
	    "{\"sha256\": \"" Z64 "\", \"first\": \"^mma\0|.*\"}}";
	Recipe r;
	Err e = ERR_INIT;
	assert_int_equal(rcp_parse("r.json", j, sizeof j - 1, &r, &e), -1);
	assert_non_null(strstr(err_msg(&e), "r.json:1:"));
	assert_non_null(strstr(err_msg(&e), ": NUL byte at offset 149"));
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_recipe__anchor_that_does_not_compile),
	    cmocka_unit_test(test_recipe__anchors_match),
	    cmocka_unit_test(test_recipe__splice_reports_an_invalid_anchor),
	    cmocka_unit_test(test_recipe__files_stay_inside_their_folders),
	    cmocka_unit_test(test_recipe__nul_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
