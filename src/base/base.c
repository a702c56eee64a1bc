/*
 * base.c - the aborting allocator and small string helpers.
 */
#define _POSIX_C_SOURCE 200809L
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

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
