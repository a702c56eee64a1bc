/*
 * emit.h - Module + edits -> PTX text.
 *
 * The emitter copies every byte the edits do not touch verbatim, from the
 * spans the model holds, and renders the edits in their place.  With no
 * edits the output is the input, byte for byte.
 */
#ifndef D4R_PTX_EMIT_H
#define D4R_PTX_EMIT_H

#include "base/err.h"
#include "base/strbuf.h"
#include "module.h"

/* Replace src[off, off+len) with text[0..tlen); len 0 inserts at off. */
typedef struct {
	uint32_t off, len;
	const char *text;
	size_t tlen;
} Edit;

/*
 * Appends the module with the edits applied to `out`.  Edits are sorted by
 * offset here; overlapping edits, or edits outside the file, are an error.
 * Insertions at the same offset keep their given order.
 */
int ptx_emit(const Module *m, Edit *edits, size_t nedits, StrBuf *out, Err *e);

/* The same, handing the output to `sink` piece by piece instead of keeping
 * it (roundtrip compares as it goes, so a 40 MB module is never held twice).
 * A sink returns 0, or -1 to stop. */
typedef int (*EmitSink)(void *ctx, const char *p, size_t n);
int ptx_emit_to(const Module *m, Edit *edits, size_t nedits, EmitSink sink, void *ctx, Err *e);

/*
 * Checks that the model accounts for every byte of the source: the items
 * tile the file with only whitespace and comments between them, every
 * statement lies inside its function's body, statements are in order and do
 * not overlap, each '{ }' scope lies inside its parent and holds exactly the
 * statements between its braces, and each statement re-rendered from its
 * parsed parts (guard, opcode, operand tree) equals its source text with
 * whitespace and comments removed.  Returns 0, or -1 naming the first place
 * that differs.
 */
int ptx_verify(const Module *m, Err *e);

#endif
