/*
 * test_numlist.c - phase lists as users write them ("1-10,13,21-60"):
 * what they hold, what is refused and what the message says, and the
 * shortest form written back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/numlist.h"

#include <stdlib.h>
#include <string.h>

static void expect_list(const char *s, const uint32_t *want, size_t n)
{
	NumList l;
	Err e = ERR_INIT;
	if (numlist_parse(s, 1, 62, &l, &e) < 0)
		fail_msg("'%s': %s", s, err_msg(&e));
	assert_int_equal(l.n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(l.v[i], want[i]);
	numlist_release(&l);
	err_release(&e);
}

static void expect_error(const char *s, const char *msg)
{
	NumList l;
	Err e = ERR_INIT;
	assert_int_equal(numlist_parse(s, 1, 62, &l, &e), -1);
	assert_int_equal(l.n, 0);
	assert_null(l.v);
	if (!strstr(err_msg(&e), msg))
		fail_msg("'%s': got '%s', expected '%s'", s, err_msg(&e), msg);
	err_release(&e);
}

static void test_numlist__items_and_ranges(void **state)
{
	(void)state;
	const uint32_t one[] = {8};
	expect_list("8", one, 1);
	const uint32_t mixed[] = {1, 2, 3, 13, 21, 22};
	expect_list("1-3,13,21-22", mixed, 6);
	/* sorted */
	const uint32_t sorted[] = {1, 2, 3, 4, 7};
	expect_list("7,1-4", sorted, 5);
	const uint32_t single[] = {5};
	expect_list("5-5", single, 1);
	const uint32_t ends[] = {1, 62};
	expect_list("62,1", ends, 2);
	/* the whole range: 1..62 once each */
	uint32_t all[62];
	for (uint32_t i = 0; i < 62; i++)
		all[i] = i + 1;
	expect_list("1-62", all, 62);
	NumList l;
	Err e = ERR_INIT;
	assert_int_equal(numlist_parse("1-10,13,21-60", 1, 62, &l, &e), 0);
	assert_int_equal(l.n, 10 + 1 + 40);
	assert_true(numlist_has(&l, 13) && numlist_has(&l, 21) && numlist_has(&l, 60));
	assert_false(numlist_has(&l, 11) || numlist_has(&l, 61) || numlist_has(&l, 0));
	numlist_release(&l);
	err_release(&e);
}

static void test_numlist__refused(void **state)
{
	(void)state;
	expect_error("", "an empty list");
	expect_error("1,,2", "'' is not a number or a range A-B");
	expect_error("1,", "'' is not a number or a range A-B");
	expect_error("5-", "'5-' is not a number or a range A-B");
	expect_error("-5", "'-5' is not a number or a range A-B");
	expect_error("1 ,2", "'1 ' is not a number or a range A-B");
	expect_error("x", "'x' is not a number or a range A-B");
	expect_error("3-1", "the range '3-1' runs backwards");
	expect_error("0-4", "'0-4' is outside 1-62");
	expect_error("1,63", "'63' is outside 1-62");
	/* a range that starts inside and ends outside */
	expect_error("60-63", "'60-63' is outside 1-62");
	expect_error("1-62,8,61-64", "'61-64' is outside 1-62");
	expect_error("99999999999", "is not a number");
	/* a number listed twice, by two items or by one and a range */
	expect_error("1-62,8", "'1-62,8': 8 is listed twice (in '1-62' and '8')");
	expect_error("3,7,1-4", "3 is listed twice (in '3' and '1-4')");
	expect_error("5,5", "5 is listed twice (in '5' and '5')");
	expect_error("1-3,2-4", "2 is listed twice (in '1-3' and '2-4')");
	NumList l;
	Err e = ERR_INIT;
	assert_int_equal(numlist_parse("1-2000000", 1, UINT32_MAX, &l, &e), -1);
	assert_non_null(strstr(err_msg(&e), "holds more than 1000000 numbers"));
	err_release(&e);
}

static void test_numlist__format(void **state)
{
	(void)state;
	const char *cases[][2] = {
	    {"1-10,13,21-60", "1-10,13,21-60"},
	    {"4,3,2,1", "1-4"},
	    {"1,3,5", "1,3,5"},
	    {"7", "7"},
	    {"1-2,3-4,6", "1-4,6"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		NumList l;
		Err e = ERR_INIT;
		assert_int_equal(numlist_parse(cases[i][0], 1, 62, &l, &e), 0);
		StrBuf sb = STRBUF_INIT;
		numlist_format(&l, &sb);
		assert_string_equal(sb.p, cases[i][1]);
		sb_release(&sb);
		numlist_release(&l);
		err_release(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numlist__items_and_ranges),
	    cmocka_unit_test(test_numlist__refused),
	    cmocka_unit_test(test_numlist__format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
