/*
 * err.h - error context passed down through library calls.
 *
 * Library code never exits or prints: it records what went wrong in the Err
 * it was given and returns -1 (SQLite's pParse->rc, git's `return error()`).
 * Commands decide whether to print and how to exit.  A located message reads
 *
 *     file:line:col: what is wrong
 *         the source line
 *         ^
 *
 * (chibicc), lower case, no full stop, the subject in 'quotes' (git).
 */
#ifndef D4R_ERR_H
#define D4R_ERR_H

#include "base.h"
#include "strbuf.h"

typedef struct {
	StrBuf msg;
	int set;
} Err;

#define ERR_INIT {STRBUF_INIT, 0}

/* Records a message (replacing any earlier one); returns -1. */
int err_set(Err *e, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Records "file:line:col: message" with the source line and a caret under
 * the byte at `off` of buf[0..len).  Returns -1. */
int err_at(Err *e, const char *file, const char *buf, size_t len, size_t off,
           const char *fmt, ...) PRINTF_LIKE(6, 7);
/* Adds a further line to the recorded message. */
void err_note(Err *e, const char *fmt, ...) PRINTF_LIKE(2, 3);
const char *err_msg(const Err *e);
void err_clear(Err *e);
void err_release(Err *e);

/* Line (1-based) and column (1-based, in bytes) of buf[off]. */
void err_line_col(const char *buf, size_t len, size_t off, unsigned *line,
                  unsigned *col);

#endif
