/*
 * base.h - allocation, small helpers and growable arrays used everywhere.
 *
 * Allocation failure is not recoverable for a command-line tool that works
 * on files it has mapped: xmalloc and friends print a message and abort
 * (cmark's default allocator does the same), so no caller checks for NULL.
 */
#ifndef D4R_BASE_H
#define D4R_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define PRINTF_LIKE(f, a)
#define NORETURN
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#endif

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
NORETURN void die_oom(size_t n);

/*
 * Growable array of T: a struct with fields `T *v; size_t n, cap;`.
 * VEC_PUSH grows by 1.5x.  VEC_FREE releases it.
 */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_GROW(vec, want)                                                   \
	do {                                                                      \
		if ((want) > (vec).cap) {                                             \
			size_t c_ = (vec).cap ? (vec).cap + (vec).cap / 2 + 1 : 16;       \
			if (c_ < (want))                                                  \
				c_ = (want);                                                  \
			(vec).v = xrealloc((vec).v, c_ * sizeof(*(vec).v));               \
			(vec).cap = c_;                                                   \
		}                                                                     \
	} while (0)
#define VEC_PUSH(vec, x)                                                      \
	do {                                                                      \
		VEC_GROW(vec, (vec).n + 1);                                           \
		(vec).v[(vec).n++] = (x);                                             \
	} while (0)
#define VEC_FREE(vec)                                                         \
	do {                                                                      \
		free((vec).v);                                                        \
		(vec).v = NULL;                                                       \
		(vec).n = (vec).cap = 0;                                              \
	} while (0)

/* A byte range of some buffer the caller knows. */
typedef struct {
	const char *p;
	size_t n;
} Str;

static inline Str str_of(const char *p, size_t n)
{
	Str s = {p, n};
	return s;
}
Str str_c(const char *s);
bool str_eq(Str a, Str b);
bool str_eqc(Str a, const char *c);
bool str_starts(Str s, const char *prefix);

/* The one of names[0..count) (NULL entries skipped) nearest to s[0..n) by
 * optimal-string-alignment distance (an insertion, a deletion, a
 * substitution or a swap of neighbours counts one; case folded), within
 * one edit of a name of up to four bytes and two of a longer one: for
 * "did you mean".  NULL when none is that near, when s is one of them, or
 * when two are equally near. */
const char *str_nearest(const char *s, size_t n, const char *const *names, size_t count);

/* Monotonic clock in seconds. */
double now_seconds(void);

#endif
