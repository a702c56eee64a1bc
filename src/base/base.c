/*
 * base.c - the aborting allocator and small string helpers.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include "base.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

void die_oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

/*
 * Large blocks (the statement and operand arrays of a big module, tens of
 * megabytes) are filled once, front to back, right after they are allocated.
 * With 4 KiB pages that first touch is one page fault per page, and on a
 * virtual machine those faults cost more than the parse itself; asking for
 * transparent huge pages cuts them 512-fold.  Only a hint: where the kernel
 * has THP off, or the block is not the malloc's own mapping, nothing changes.
 */
enum { HUGE_HINT_MIN = 4u << 20 };

static void huge_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	if (n < HUGE_HINT_MIN)
		return;
	/* the whole pages the block touches: for a block malloc mapped on its
	 * own that is the whole mapping, so it stays one mapping (one VMA) and
	 * a later realloc can still move it with mremap instead of copying */
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t b = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;
	(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
	(void)p, (void)n;
#endif
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	huge_hint(p, n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		die_oom(count * size);
	huge_hint(p, count * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	huge_hint(q, n);
	return q;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

Str str_c(const char *s)
{
	return str_of(s, strlen(s));
}

bool str_eq(Str a, Str b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

bool str_eqc(Str a, const char *c)
{
	return str_eq(a, str_c(c));
}

bool str_starts(Str s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

/* The distance of a[0..na) and b[0..nb), or cap + 1 when it is more than
 * cap (names are short: at most 63 bytes are looked at). */
static size_t edits(const char *a, size_t na, const char *b, size_t nb, size_t cap)
{
	enum { M = 64 };
	if (na >= M || nb >= M || (na > nb ? na - nb : nb - na) > cap)
		return cap + 1;
	size_t d[M][M];
	for (size_t i = 0; i <= na; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t v = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[na][nb];
}

const char *str_nearest(const char *s, size_t n, const char *const *names, size_t count)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	bool tie = false;
	for (size_t i = 0; i < count; i++) {
		if (!names[i])
			continue;
		size_t len = strlen(names[i]), cap = len <= 4 ? 1 : 2;
		size_t d = edits(s, n, names[i], len, cap);
		if (d > cap || d == 0)
			continue;
		if (d < best_d) {
			best = names[i];
			best_d = d;
			tie = false;
		} else if (d == best_d && strcmp(best, names[i]))
			tie = true;
	}
	return tie ? NULL : best;
}

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
