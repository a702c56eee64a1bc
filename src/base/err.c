/*
 * err.c - error messages with source locations.
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vset(Err *e, const char *fmt, va_list ap)
{
	char tmp[2048];
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	sb_reset(&e->msg);
	sb_adds(&e->msg, tmp);
	e->set = 1;
}

int err_set(Err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(e, fmt, ap);
	va_end(ap);
	return -1;
}

void err_line_col(const char *buf, size_t len, size_t off, unsigned *line,
                  unsigned *col)
{
	unsigned l = 1;
	size_t bol = 0;
	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++)
		if (buf[i] == '\n') {
			l++;
			bol = i + 1;
		}
	*line = l;
	*col = (unsigned)(off - bol) + 1;
}

int err_at(Err *e, const char *file, const char *buf, size_t len, size_t off,
           const char *fmt, ...)
{
	unsigned line, col;
	if (off > len)
		off = len;
	err_line_col(buf, len, off, &line, &col);
	char tmp[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	sb_reset(&e->msg);
	sb_addf(&e->msg, "%s:%u:%u: %s", file, line, col, tmp);
	/* The source line, printable bytes only, and a caret under the column. */
	size_t bol = off - (col - 1), eol = off;
	while (eol < len && buf[eol] != '\n')
		eol++;
	if (eol - bol > 200) {
		/* Very long line: show a window around the column. */
		size_t from = off > 80 ? off - 80 : bol;
		if (from < bol)
			from = bol;
		size_t to = off + 80 < eol ? off + 80 : eol;
		bol = from;
		eol = to;
	}
	sb_adds(&e->msg, "\n    ");
	size_t caret = 0;
	for (size_t i = bol; i < eol; i++) {
		unsigned char c = (unsigned char)buf[i];
		sb_addc(&e->msg, c == '\t' ? '\t' : (c >= 32 && c < 127) ? (char)c : '?');
	}
	sb_adds(&e->msg, "\n    ");
	for (size_t i = bol; i < off; i++, caret++)
		sb_addc(&e->msg, buf[i] == '\t' ? '\t' : ' ');
	sb_addc(&e->msg, '^');
	e->set = 1;
	return -1;
}

void err_note(Err *e, const char *fmt, ...)
{
	char tmp[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (e->msg.n)
		sb_addc(&e->msg, '\n');
	sb_adds(&e->msg, tmp);
	e->set = 1;
}

const char *err_msg(const Err *e)
{
	return e->set && e->msg.p ? e->msg.p : "unknown error";
}

void err_clear(Err *e)
{
	sb_reset(&e->msg);
	e->set = 0;
}

void err_release(Err *e)
{
	sb_release(&e->msg);
	e->set = 0;
}
