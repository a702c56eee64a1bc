/*
 * native.h - `recipe new --native`: a native phase, recipe and template,
 * written from the phase's operand facts (ana.h: ana_operands).
 *
 * Two forms:
 *   NATIVE_MMA  the vendor's own mma instruction, operand for operand;
 *   NATIVE_F16  each mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 as
 *               sm_90 executes it: the low e4m3 pair of every A and B word
 *               converted to f16x2 and one m16n8k16 f16 mma with C = 0, the
 *               high pairs and a second m16n8k16 accumulating onto the
 *               first, then one f16x2 add of C.  Each A and B word is
 *               converted once and its halves reused by every mma that
 *               reads it.
 * Both are bit-exact by construction; native.c says why and what it
 * refuses.
 */
#ifndef D4R_SPLICE_NATIVE_H
#define D4R_SPLICE_NATIVE_H

#include "base/err.h"
#include "base/strbuf.h"
#include "ptx/module.h"

typedef enum { NATIVE_MMA, NATIVE_F16 } NativeForm;

/* "mma" / "f16", and back (-1 for an unknown name). */
const char *native_form_name(NativeForm f);
int native_form_parse(const char *s);

typedef struct {
	const Module *module;
	const char *entry;
	const char *layer;         /* may be NULL */
	const char *module_rel;    /* may be NULL (then "module" is left out) */
	const char *template_name; /* under ptx/, e.g. "enc4/phase-08-f16.ptx" */
	uint32_t phase;            /* 1-based */
	NativeForm form;
} NativeRequest;

/*
 * Writes the recipe (JSON) into `recipe_json` and the template into
 * `template_text` for phase req->phase of req->entry, and a few lines for
 * the author into `summary` (may be NULL).  The output depends only on the
 * module's text and the request, so writing it again gives the same bytes.
 * Returns 0, or -1 with a message naming the statement and the fact that
 * is missing or unsupported: no such phase; a cut with a read/write
 * dependency; wmma/wgmma/mma.sp statements; a guarded mma; for the f16 form
 * any mma other than m16n8k32.row.col.f16.e4m3.e4m3.f16; operand tuples of
 * another size or width.
 */
int splice_native(const NativeRequest *req, StrBuf *recipe_json, StrBuf *template_text,
                  StrBuf *summary, Err *e);

#endif
