/*
 * numlist.h - lists of numbers as a user writes them: "1-10,13,21-60".
 *
 * Phase selections (`--phases LIST` of the main job, `probe`, `bisect`)
 * are written this way.  The syntax is the one thing this file owns; what
 * the numbers mean, and how many phases a module has, is the caller's.
 *
 *     list  := item { ',' item }
 *     item  := N | N '-' N          (decimal, the first N <= the second)
 *
 * Decisions:
 *  - The result is sorted: "5,1-3" is 1 2 3 5.  A number listed twice
 *    ("1-62,8", "3,1-4") is an error that names it and the two items that
 *    hold it: a phase given twice is a typo or a list that says something
 *    other than what its author thinks, and is never silently merged.
 *  - No spaces, no empty items, no open ranges ("5-"): a list is one shell
 *    word, and a typo is refused rather than read as something else.
 *  - Every number must lie in [lo, hi]; the message names the item.
 */
#ifndef D4R_NUMLIST_H
#define D4R_NUMLIST_H

#include "base.h"
#include "err.h"

typedef struct {
	uint32_t *v;
	size_t n, cap;
} NumList;

/*
 * Parses `s` into *out (ascending, distinct; released with numlist_release).
 * Returns 0, or -1 with "'LIST': what is wrong" in e and *out empty
 * ("'1-62,8': 8 is listed twice (in '1-62' and '8')").
 * A range may hold at most 1,000,000 numbers.
 */
int numlist_parse(const char *s, uint32_t lo, uint32_t hi, NumList *out, Err *e);
void numlist_release(NumList *l);
/* Is x in the list?  (Binary search.) */
bool numlist_has(const NumList *l, uint32_t x);
/* Appends the list in its shortest form ("1-10,13,21-60") to sb. */
#include "strbuf.h"
void numlist_format(const NumList *l, StrBuf *sb);

#endif
