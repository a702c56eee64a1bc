/*
 * strbuf.h - growable byte buffer (git's strbuf, reduced).
 * The buffer is always NUL-terminated; `n` excludes the NUL.
 */
#ifndef D4R_STRBUF_H
#define D4R_STRBUF_H

#include "base.h"
#include <stdio.h>

typedef struct {
	char *p;
	size_t n, cap;
} StrBuf;

#define STRBUF_INIT {NULL, 0, 0}

void sb_grow(StrBuf *sb, size_t extra);
void sb_addn(StrBuf *sb, const void *p, size_t n);
void sb_adds(StrBuf *sb, const char *s);
void sb_addc(StrBuf *sb, char c);
void sb_addf(StrBuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* s as a JSON string, quotes and escapes included (NULL: ""). */
void sb_add_json(StrBuf *sb, const char *s);
void sb_reset(StrBuf *sb);
void sb_release(StrBuf *sb);
/* Reads a whole stream; returns 0 or -1 (errno set). */
int sb_read_stream(StrBuf *sb, FILE *f);

#endif
