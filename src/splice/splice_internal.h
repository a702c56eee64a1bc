/*
 * splice_internal.h - what splice.c and fit.c share (splice.h is the
 * interface; nothing outside them includes this).
 *
 *   splice.c  the cut, its guards and shape, fresh names, rendering, emit
 *   fit.c     stage 5: the template against the cut interface
 */
#ifndef D4R_SPLICE_SPLICE_INTERNAL_H
#define D4R_SPLICE_SPLICE_INTERNAL_H

#include "splice.h"

#include "ana/ana.h"
#include "template.h"

/* "s12 (line 40) 'add.f32 %f1, %f2, %f3;'": statement i of f, for messages. */
void splice_stmt_desc(const Module *m, const Func *f, uint32_t i, StrBuf *out);

/* Whether register `reg` is one of the n registers of v (a live-in or
 * live-out list of a CutInterface). */
bool splice_cut_has(const CutReg *v, size_t n, uint32_t reg);

/* The template t against the cut's interface and the recipe r's params and
 * bindings (fit.c says what is checked).  0, or -1 with the first problem,
 * naming the recipe key. */
int splice_check_bindings(Dataflow *df, const Template *t, const Recipe *r,
                          const CutInterface *cut, const char *entry, Err *e);

/* What the splice would change in memory, one line each into `why` (empty:
 * nothing): the cut's read/write dependency, and unless t is NULL every
 * difference between the cut's effects and what t's body does. */
void splice_effect_problems(Dataflow *df, const CutInterface *cut, const Template *t,
                            StrBuf *why);

#endif
