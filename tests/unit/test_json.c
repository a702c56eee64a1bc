/*
 * test_json.c - the reader of formatted JSON: every getter's message names
 * the file and the JSON path of the value, and the document-wide checks
 * (text after the document, a key given twice) hold everywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/json.h"

#include <stdlib.h>
#include <string.h>

static const char doc[] =
    "{\"layer\": \"enc4\", \"empty\": \"\", \"on\": true,\n"
    " \"launches\": [{\"entry\": \"a\"},\n"
    "              {\"entry\": \"b\", \"params\": {\"size\": \"big\", \"n\": 1.5,\n"
    "                                          \"f\": false, \"k\": \"wide\", \"big\": "
    "9007199254740994,\n"
    "                                          \"neg\": -3, \"x\": 2.5, \"list\": "
    "[1]}}]}\n";

/* d walked into launches[1].params; returns that object. */
static const cJSON *open_params(JsonDoc *d, Err *e)
{
	if (json_parse(d, "l.json", doc, strlen(doc), e) < 0)
		fail_msg("%s", err_msg(e));
	const cJSON *ls = json_member(d, d->root, "launches", JSON_REQUIRED);
	json_push(d, "launches");
	json_push_index(d, 1);
	const cJSON *p =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ls, 1), "params");
	json_push(d, "params");
	return p;
}

#define EXPECT_MSG(call, want)                                                           \
	do {                                                                             \
		assert_int_equal((call), -1);                                            \
		if (strcmp(err_msg(&e), (want)))                                         \
			fail_msg("expected '%s'\n     got '%s'", (want), err_msg(&e));   \
	} while (0)

static void test_json__getters_name_the_path(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	JsonDoc d;
	const cJSON *p = open_params(&d, &e);
	int64_t i = 0;
	double x = 0;
	bool b = false;
	char *s = NULL;
	int k = -1;
	static const char *const names[] = {"narrow", "tall", NULL};
	EXPECT_MSG(
	    json_get_int(&d, p, "size", JSON_REQUIRED, 0, 100, &i),
	    "l.json: launches[1].params.size: expected an integer, found a string");
	EXPECT_MSG(json_get_int(&d, p, "n", JSON_REQUIRED, 0, 100, &i),
	           "l.json: launches[1].params.n: expected an integer, found 1.5");
	EXPECT_MSG(json_get_number(&d, p, "f", JSON_REQUIRED, &x),
	           "l.json: launches[1].params.f: expected a number, found a boolean");
	EXPECT_MSG(
	    json_get_bool(&d, p, "k", JSON_REQUIRED, &b),
	    "l.json: launches[1].params.k: expected true or false, found a string");
	EXPECT_MSG(json_get_string(&d, p, "list", JSON_REQUIRED, &s),
	           "l.json: launches[1].params.list: expected a string, found an array");
	EXPECT_MSG(json_get_enum(&d, p, "k", JSON_REQUIRED, names, &k),
	           "l.json: launches[1].params.k: 'wide' is not one of 'narrow', 'tall'");
	EXPECT_MSG(json_object(&d, cJSON_GetObjectItemCaseSensitive(p, "list")),
	           "l.json: launches[1].params: expected an object, found an array");
	EXPECT_MSG(json_get_int(&d, p, "width", JSON_REQUIRED, 0, 100, &i),
	           "l.json: launches[1].params: missing key 'width'");
	/* every failed getter left the path where it was */
	assert_string_equal(d.path, "launches[1].params");
	assert_null(s);
	assert_int_equal(k, -1);
	/* and the good values read */
	assert_int_equal(json_get_int(&d, p, "neg", JSON_REQUIRED, -10, 10, &i), 0);
	assert_int_equal(i, -3);
	assert_int_equal(json_get_number(&d, p, "x", JSON_REQUIRED, &x), 0);
	assert_true(x == 2.5);
	assert_int_equal(json_get_bool(&d, p, "f", JSON_REQUIRED, &b), 0);
	assert_false(b);
	json_pop(&d, 0);
	assert_int_equal(json_get_string(&d, d.root, "layer", JSON_REQUIRED, &s), 0);
	assert_string_equal(s, "enc4");
	free(s);
	EXPECT_MSG(json_bad_at(&d, "layer", "'%s' differs", "enc4"),
	           "l.json: layer: 'enc4' differs");
	EXPECT_MSG(json_bad(&d, "at the top"), "l.json: at the top");
	json_release(&d);
	err_release(&e);
}

static void test_json__optional_and_empty(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	JsonDoc d;
	assert_int_equal(json_parse(&d, "l.json", doc, strlen(doc), &e), 0);
	int64_t i = 42;
	bool b = true;
	char *s = NULL;
	int k = 7;
	static const char *const names[] = {"a", NULL};
	/* absent optional members leave the caller's defaults */
	assert_int_equal(json_get_int(&d, d.root, "repeat", JSON_OPTIONAL, 1, 9, &i), 0);
	assert_int_equal(i, 42);
	assert_int_equal(json_get_bool(&d, d.root, "off", JSON_OPTIONAL, &b), 0);
	assert_true(b);
	assert_int_equal(json_get_enum(&d, d.root, "mode", JSON_OPTIONAL, names, &k), 0);
	assert_int_equal(k, 7);
	assert_null(json_member(&d, d.root, "oracle", JSON_OPTIONAL));
	assert_int_equal(json_get_bool(&d, d.root, "on", JSON_OPTIONAL, &b), 0);
	assert_true(b);
	/* "" is a string unless the format says otherwise */
	assert_int_equal(json_get_string(&d, d.root, "empty", JSON_REQUIRED, &s), 0);
	assert_string_equal(s, "");
	free(s);
	s = NULL;
	EXPECT_MSG(
	    json_get_string(&d, d.root, "empty", JSON_REQUIRED | JSON_NONEMPTY, &s),
	    "l.json: empty: empty string");
	assert_null(s);
	json_release(&d);
	err_release(&e);
}

static void test_json__unknown_key(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	JsonDoc d;
	assert_int_equal(json_parse(&d, "l.json", doc, strlen(doc), &e), 0);
	static const char *const top[] = {"layer", "empty", "on", "launches", NULL};
	assert_int_equal(json_keys(&d, d.root, top), 0);
	static const char *const fewer[] = {"layer", "launches", NULL};
	EXPECT_MSG(json_keys(&d, d.root, fewer),
	           "l.json: unknown key 'empty' (expected one of 'layer', 'launches')");
	const cJSON *l0 =
	    cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d.root, "launches"), 0);
	json_push(&d, "launches");
	json_push_index(&d, 0);
	static const char *const none[] = {"grid", NULL};
	EXPECT_MSG(json_keys(&d, l0, none),
	           "l.json: launches[0]: unknown key 'entry' (expected one of 'grid')");
	json_release(&d);
	err_release(&e);
}

static void parse_fails(const char *text, const char *want)
{
	Err e = ERR_INIT;
	JsonDoc d;
	assert_int_equal(json_parse(&d, "r.json", text, strlen(text), &e), -1);
	if (strncmp(err_msg(&e), want, strlen(want)))
		fail_msg("expected '%s'\n     got '%s'", want, err_msg(&e));
	json_release(&d);
	err_release(&e);
}

static void parse_ok(const char *text)
{
	Err e = ERR_INIT;
	JsonDoc d;
	if (json_parse(&d, "r.json", text, strlen(text), &e) < 0)
		fail_msg("'%s': %s", text, err_msg(&e));
	json_release(&d);
	err_release(&e);
}

static void test_json__duplicate_key(void **state)
{
	(void)state;
	parse_fails("{\"a\": 1, \"b\": 2, \"a\": 3}", "r.json: key 'a' given twice");
	parse_fails("{\"guards\": {\"mma\": 1, \"mma\": 2}}",
	            "r.json: guards: key 'mma' given twice");
	parse_fails("{\"l\": [{}, {\"x\": {\"k\": 1, \"k\": 1}}]}",
	            "r.json: l[1].x: key 'k' given twice");
	/* also where a format reads nothing, and the same key in two objects is fine */
	parse_fails("{\"interface\": {\"live_in\": [], \"live_in\": []}}",
	            "r.json: interface: key 'live_in' given twice");
	parse_ok(
	    "{\"a\": {\"k\": 1}, \"b\": {\"k\": 1}, \"k\": [{\"k\": 2}, {\"k\": 3}]}");
}

static void test_json__trailing_text(void **state)
{
	(void)state;
	parse_ok("{\"a\": 1}");
	parse_ok(" \n{\"a\": 1} \t\r\n\n");
	parse_fails("{\"a\": 1}\n{\"b\": 2}\n",
	            "r.json:2:1: text after the JSON document");
	parse_fails("{\"a\": 1}}", "r.json:1:9: text after the JSON document");
	parse_fails("[1, 2] x", "r.json:1:8: text after the JSON document");
	/* the message shows the line and a caret under the column */
	Err e = ERR_INIT;
	JsonDoc d;
	assert_int_equal(json_parse(&d, "r.json", "{}  ,", 5, &e), -1);
	assert_string_equal(
	    err_msg(&e),
	    "r.json:1:5: text after the JSON document\n    {}  ,\n        ^");
	json_release(&d);
	err_release(&e);
}

/* parse_fails for text holding NUL bytes (n bytes of it) */
static void parse_fails_n(const char *text, size_t n, const char *want)
{
	Err e = ERR_INIT;
	JsonDoc d;
	assert_int_equal(json_parse(&d, "r.json", text, n, &e), -1);
	if (strncmp(err_msg(&e), want, strlen(want)))
		fail_msg("expected '%s'\n     got '%s'", want, err_msg(&e));
	json_release(&d);
	err_release(&e);
}

static void test_json__nul_refused(void **state)
{
	(void)state;
	/* after the document: cJSON stops at the NUL, and the text after it
	 * would go unread */
	static const char after[] = "{\"a\": 1}\0{\"b\": 2}";
	parse_fails_n(after, sizeof after - 1, "r.json:1:9: NUL byte at offset 8");
	/* inside a string: the C string would end there */
	static const char inside[] = "{\"a\": \"x\0y\"}";
	parse_fails_n(inside, sizeof inside - 1, "r.json:1:9: NUL byte at offset 8");
	/* inside a key, on a later line */
	static const char key[] = "{\n\"k\0\": 1}";
	parse_fails_n(key, sizeof key - 1, "r.json:2:3: NUL byte at offset 4");
	/* a trailing NUL, as a C string's terminator counted in the length */
	static const char term[] = "{}";
	parse_fails_n(term, sizeof term, "r.json:1:3: NUL byte at offset 2");
	/* the escape, which cJSON would turn into a NUL inside the value */
	parse_fails(
	    "{\"first\": \"^mma\\u0000junk\"}",
	    "r.json:1:16: '\\u0000' at offset 15: a NUL cannot be held in a value");
	/* an escaped backslash before "u0000" is text; other escapes pass */
	parse_ok("{\"a\": \"\\\\u0000\", \"b\": \"\\u0001\\n\"}");
}

static void test_json__invalid_json_located(void **state)
{
	(void)state;
	parse_fails("{\n  \"layer\": \"x\",\n  \"module\" \"m\"\n}\n",
	            "r.json:3:12: invalid JSON");
	parse_fails("", "r.json:1:1: no JSON document (the file is empty)");
	parse_fails(" \n", "r.json:1:1: no JSON document (the file is only white space)");
	/* a real fault before the end is not an early end */
	parse_fails("{\"a\": x, \"b\": [1", "r.json:1:7: invalid JSON");
	parse_fails("{\"a\": [1}", "r.json:1:9: invalid JSON");
}

/* A document cut short says so, and where the value still open began:
 * the innermost one (object, array or string) and the object around it. */
static void test_json__ended_early(void **state)
{
	(void)state;
	parse_fails("{\n  \"cut\": {\"phase\": 1},\n  \"bind\": {\"a\": 1,\n",
	            "r.json:4:1: the document ends early: the object opened at r.json:3:11 "
	            "('{') is not closed");
	parse_fails("{\"a\": [1, 2",
	            "r.json:1:12: the document ends early: the array opened at r.json:1:7 "
	            "('[') is not closed, in the object opened at r.json:1:1 ('{')");
	parse_fails("{\"a\": {\"b\": \"x\\\"y",
	            "r.json:1:18: the document ends early: the string opened at r.json:1:13 "
	            "('\"') is not closed, in the object opened at r.json:1:7 ('{')");
	parse_fails("[{}, {\"k\": [], ",
	            "r.json:1:16: the document ends early: the object opened at r.json:1:6 "
	            "('{') is not closed");
}

static void test_json__integer_range(void **state)
{
	(void)state;
	Err e = ERR_INIT;
	JsonDoc d;
	const cJSON *p = open_params(&d, &e);
	int64_t i = 5;
	EXPECT_MSG(json_get_int(&d, p, "neg", JSON_REQUIRED, 0, 4, &i),
	           "l.json: launches[1].params.neg: -3 is out of range [0, 4]");
	EXPECT_MSG(
	    json_get_int(&d, p, "big", JSON_REQUIRED, 0, JSON_MAX_INT, &i),
	    "l.json: launches[1].params.big: 9007199254740994 is too large to be exact "
	    "in JSON (at most 2^53)");
	assert_int_equal(i, 5);
	json_release(&d);
	const char edge[] =
	    "{\"lo\": -9007199254740992, \"hi\": 9007199254740992, \"e\": 1e3}";
	assert_int_equal(json_parse(&d, "x.json", edge, strlen(edge), &e), 0);
	assert_int_equal(
	    json_get_int(&d, d.root, "lo", JSON_REQUIRED, -JSON_MAX_INT, 0, &i), 0);
	assert_true(i == -9007199254740992LL);
	assert_int_equal(
	    json_get_int(&d, d.root, "hi", JSON_REQUIRED, 0, JSON_MAX_INT, &i), 0);
	assert_true(i == 9007199254740992LL);
	assert_int_equal(json_get_int(&d, d.root, "e", JSON_REQUIRED, 0, 1000, &i), 0);
	assert_int_equal(i, 1000);
	EXPECT_MSG(json_get_int(&d, d.root, "e", JSON_REQUIRED, 0, 999, &i),
	           "x.json: e: 1000 is out of range [0, 999]");
	json_release(&d);
	err_release(&e);
}

/* ---- the writer ------------------------------------------------------------ */

/* sb_add_json, the writer of the hand-made JSON outputs (run, diff, frame
 * diffs): RFC 8259 escapes, by hand for a few bytes, then every byte 1..127
 * and some UTF-8 read back by cJSON, which is not the code under test. */
static void test_json__writer_escapes(void **state)
{
	(void)state;
	StrBuf sb = STRBUF_INIT;
	sb_add_json(&sb, "a\"b\\c\td\001/e");
	assert_string_equal(sb.p, "\"a\\\"b\\\\c\\u0009d\\u0001/e\"");
	sb_reset(&sb);
	sb_add_json(&sb, NULL);
	assert_string_equal(sb.p, "\"\"");

	char all[160];
	size_t n = 0;
	for (int c = 1; c < 128; c++)
		all[n++] = (char)c;
	memcpy(all + n, "\xc2\xb5\xe2\x80\x94", 5); /* U+00B5, U+2014 */
	n += 5;
	all[n] = 0;
	sb_reset(&sb);
	sb_adds(&sb, "{\"s\": ");
	sb_add_json(&sb, all);
	sb_adds(&sb, "}");
	for (size_t i = 0; i < sb.n; i++)
		assert_true((unsigned char)sb.p[i] >= 0x20); /* no raw control byte */
	cJSON *back = cJSON_Parse(sb.p);
	if (!back)
		fail_msg("cJSON cannot read back: %s", sb.p);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(back, "s");
	assert_true(cJSON_IsString(v));
	assert_int_equal(strlen(v->valuestring), n);
	assert_memory_equal(v->valuestring, all, n);
	cJSON_Delete(back);
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json__getters_name_the_path),
	    cmocka_unit_test(test_json__optional_and_empty),
	    cmocka_unit_test(test_json__unknown_key),
	    cmocka_unit_test(test_json__duplicate_key),
	    cmocka_unit_test(test_json__trailing_text),
	    cmocka_unit_test(test_json__nul_refused),
	    cmocka_unit_test(test_json__invalid_json_located),
	    cmocka_unit_test(test_json__ended_early),
	    cmocka_unit_test(test_json__integer_range),
	    cmocka_unit_test(test_json__writer_escapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
