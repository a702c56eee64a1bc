/*
 * tpl_internal.h - what template.c and tplbody.c share (template.h is the
 * interface; nothing outside them includes this).
 *
 *   template.c  reading a template, ${EXPR}, the expander, rendering
 *   tplbody.c   the body checked against the header, through the expander
 */
#ifndef D4R_SPLICE_TPL_INTERNAL_H
#define D4R_SPLICE_TPL_INTERNAL_H

#include "template.h"

/* A hole whose replacement has another length: [chk0, chk1) of the
 * expanded text stands for [tpl0, tpl1) of the template. */
typedef struct {
	size_t chk0, chk1, tpl0, tpl1;
} Hole;

typedef struct {
	const Template *t;
	const Recipe *r;    /* NULL: the body check's expansion (the essay) */
	const char *prefix; /* the locals' fresh prefix (rendering) */
	StrBuf *out;
	VEC(Hole) holes; /* the body check's */
	Err *e;
} Expand;

/* "path:line:col: what", the template's line and a caret under byte `off`
 * of its text; -1. */
int tpl_error(Err *e, const Template *t, size_t off, const char *fmt, ...)
    PRINTF_LIKE(4, 5);

/* The body check's stand-in for element idx (-1: a scalar) of formal f. */
void tpl_dummy_name(StrBuf *out, const Formal *f, long idx);

/* The template's text with its holes filled, into x->out.  One walk for
 * rendering and for the body check, so the check parses what is spliced. */
int tpl_expand(Expand *x);

/* Checks t's body against its header (tplbody.c) and records what the body
 * does (t->body); -1 with the message at the template's line otherwise. */
int tpl_check_body(Template *t, Err *e);

#endif
