/*
 * strbuf.c - growable byte buffer.
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void sb_grow(StrBuf *sb, size_t extra)
{
	size_t want = sb->n + extra + 1;
	if (want <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap + sb->cap / 2 : 64;
	if (cap < want)
		cap = want;
	sb->p = xrealloc(sb->p, cap);
	sb->cap = cap;
}

void sb_addn(StrBuf *sb, const void *p, size_t n)
{
	sb_grow(sb, n);
	if (n)
		memcpy(sb->p + sb->n, p, n);
	sb->n += n;
	sb->p[sb->n] = 0;
}

void sb_adds(StrBuf *sb, const char *s)
{
	sb_addn(sb, s, strlen(s));
}

void sb_addc(StrBuf *sb, char c)
{
	sb_grow(sb, 1);
	sb->p[sb->n++] = c;
	sb->p[sb->n] = 0;
}

void sb_addf(StrBuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->p + sb->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->n += (size_t)n;
}

void sb_reset(StrBuf *sb)
{
	sb->n = 0;
	if (sb->p)
		sb->p[0] = 0;
}

void sb_release(StrBuf *sb)
{
	free(sb->p);
	sb->p = NULL;
	sb->n = sb->cap = 0;
}

int sb_read_stream(StrBuf *sb, FILE *f)
{
	for (;;) {
		sb_grow(sb, 65536);
		size_t got = fread(sb->p + sb->n, 1, sb->cap - sb->n - 1, f);
		sb->n += got;
		sb->p[sb->n] = 0;
		if (got == 0)
			return ferror(f) ? -1 : 0;
	}
}

void sb_add_json(StrBuf *sb, const char *s)
{
	sb_addc(sb, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sb_addf(sb, "\\%c", c);
		else if (c < 0x20)
			sb_addf(sb, "\\u%04x", c);
		else
			sb_addc(sb, (char)c);
	}
	sb_addc(sb, '"');
}
