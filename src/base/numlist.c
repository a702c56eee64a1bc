/*
 * numlist.c - "1-10,13,21-60" into a sorted list of numbers (numlist.h).
 */
#include "numlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANGE_MAX 1000000u

/* A decimal number at *p (at most 10 digits, at most UINT32_MAX); moves *p
 * past it.  -1 when there is none or it is too large. */
static int number(const char **p, uint32_t *out)
{
	const char *q = *p;
	uint64_t v = 0;
	int digits = 0;
	while (*q >= '0' && *q <= '9' && digits < 11) {
		v = v * 10 + (uint64_t)(*q++ - '0');
		digits++;
	}
	if (!digits || digits > 10 || v > UINT32_MAX)
		return -1;
	*p = q;
	*out = (uint32_t)v;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The k-th item (0-based) of list s that holds x, into buf; the list has
 * parsed already. */
static void item_of(const char *s, uint32_t x, int k, char *buf, size_t n)
{
	const char *p = s;
	buf[0] = 0;
	while (*p) {
		const char *item = p;
		uint32_t a, b;
		if (number(&p, &a) < 0)
			return;
		b = a;
		if (*p == '-') {
			p++;
			if (number(&p, &b) < 0)
				return;
		}
		if (a <= x && x <= b && k-- == 0) {
			snprintf(buf, n, "%.*s", (int)(p - item), item);
			return;
		}
		if (*p == ',')
			p++;
	}
}

int numlist_parse(const char *s, uint32_t lo, uint32_t hi, NumList *out, Err *e)
{
	memset(out, 0, sizeof *out);
	const char *p = s;
	if (!*p)
		return err_set(
		    e, "'': an empty list (write N, A-B or several, comma-separated)");
	for (;;) {
		const char *item = p;
		uint32_t a, b;
		if (number(&p, &a) < 0)
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			if (number(&p, &b) < 0)
				goto bad;
			if (b < a) {
				numlist_release(out);
				return err_set(e, "'%s': the range '%.*s' runs backwards",
				               s, (int)(p - item), item);
			}
		}
		if (*p && *p != ',')
			goto bad;
		if (a < lo || b > hi) {
			numlist_release(out);
			if (hi == UINT32_MAX)
				return err_set(e, "'%s': '%.*s': the numbers count from %u", s,
				               (int)(p - item), item, lo);
			return err_set(e, "'%s': '%.*s' is outside %u-%u", s,
			               (int)(p - item), item, lo, hi);
		}
		if (b - a >= RANGE_MAX) {
			numlist_release(out);
			return err_set(
			    e, "'%s': the range '%.*s' holds more than %u numbers", s,
			    (int)(p - item), item, RANGE_MAX);
		}
		for (uint64_t x = a; x <= b; x++)
			VEC_PUSH(*out, (uint32_t)x);
		if (!*p)
			break;
		p++; /* ',' */
		continue;
	bad:
		numlist_release(out);
		{
			const char *end = item;
			while (*end && *end != ',')
				end++;
			return err_set(e, "'%s': '%.*s' is not a number or a range A-B",
			               s, (int)(end - item), item);
		}
	}
	qsort(out->v, out->n, sizeof(uint32_t), cmp_u32);
	for (size_t i = 1; i < out->n; i++)
		if (out->v[i - 1] == out->v[i]) {
			uint32_t x = out->v[i];
			char a[64], b[64];
			item_of(s, x, 0, a, sizeof a);
			item_of(s, x, 1, b, sizeof b);
			numlist_release(out);
			return err_set(e, "'%s': %u is listed twice (in '%s' and '%s')", s, x, a, b);
		}
	return 0;
}

void numlist_release(NumList *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}

bool numlist_has(const NumList *l, uint32_t x)
{
	return l->n && bsearch(&x, l->v, l->n, sizeof(uint32_t), cmp_u32);
}

void numlist_format(const NumList *l, StrBuf *sb)
{
	for (size_t i = 0; i < l->n;) {
		size_t j = i;
		while (j + 1 < l->n && l->v[j + 1] == l->v[j] + 1)
			j++;
		if (i)
			sb_addc(sb, ',');
		if (j == i)
			sb_addf(sb, "%u", l->v[i]);
		else
			sb_addf(sb, "%u-%u", l->v[i], l->v[j]);
		i = j + 1;
	}
}
