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
 *
 * A wgmma phase (native_wgmma.c) has two forms of its own:
 *   NATIVE_MMA       the vendor's wgmma.mma_async, written again from its
 *                    facts (ana/wgmma.h), the same descriptors;
 *   NATIVE_MMA_SYNC  "mma_sync": the exact mma.sync form of an f16 wgmma
 *                    with f32 accumulation, one m16n8k16 per warp and 8
 *                    columns, A and B by ldmatrix through the descriptors'
 *                    layout and swizzle, in the wgmma's k order.
 */
#ifndef D4R_SPLICE_NATIVE_H
#define D4R_SPLICE_NATIVE_H

#include "base/err.h"
#include "base/strbuf.h"
#include "ptx/module.h"

typedef enum { NATIVE_MMA, NATIVE_F16, NATIVE_MMA_SYNC } NativeForm;

/* "mma" / "f16" / "mma_sync", and back (-1 for an unknown name). */
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

/* Does phase `phase` of `entry` hold a wgmma.mma_async?  splice_native
 * hands such a phase to splice_native_wgmma. */
bool native_is_wgmma(const Module *m, const char *entry, uint32_t phase);
/*
 * splice_native for a wgmma phase: the mma form writes each
 * wgmma.mma_async again from its facts; the mma_sync form its exact
 * mma.sync form (native_wgmma.c says how, and what it refuses: a type
 * other than f16 with f32 accumulation, a descriptor not decoded, an
 * MN-major A, N not a multiple of 16, scales other than 1); the f16 form
 * is refused.  Same outputs and contract as splice_native.
 */
int splice_native_wgmma(const NativeRequest *req, StrBuf *recipe_json, StrBuf *template_text,
                        StrBuf *summary, Err *e);

#endif
