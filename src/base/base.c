/*
 * base.c - the aborting allocator and small string helpers.
 */
#define _POSIX_C_SOURCE 200809L
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void die_oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		die_oom(count * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
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
