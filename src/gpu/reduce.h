/*
 * reduce.h - cutting a PTX module down to the entries a launch needs.
 *
 * JIT time grows with the module: a 137-entry vendor module JITs in 5.1 s,
 * one of its entries alone in 0.03-0.08 s (/work/shared/device.md).  The
 * launch needs only the entries it launches, so the others are removed
 * before the JIT.  Everything else is kept: .func definitions (an entry may
 * call them), globals, constants, directives.  A removed entry is replaced
 * by as many newlines as it spanned, so every remaining line keeps its
 * number and a JIT error's "line N" still points into the original file.
 *
 * The function spans come from the caller (the PTX parser knows them:
 * each function's byte span, from its linkage directive to its closing
 * brace), so this module does not depend on the parser.
 */
#ifndef D4R_GPU_REDUCE_H
#define D4R_GPU_REDUCE_H

#include "base/base.h"
#include "base/err.h"
#include "base/strbuf.h"

typedef struct {
	size_t off, len;      /* the whole definition, bytes of the PTX */
	const char *name;     /* NUL-terminated */
	int is_entry;         /* .entry (else .func) */
} GpuFuncSpan;

/*
 * Appends to `out` the PTX ptx[0..n) with every .entry not named in
 * keep[0..nkeep) replaced by its newlines.  Spans must be sorted by
 * offset, inside the text and not overlap.  -1 with a message when a kept
 * name is not an entry of the module, or the spans are bad.
 */
int gpu_reduce_ptx(const char *ptx, size_t n, const GpuFuncSpan *spans, size_t nspans,
                   const char *const *keep, size_t nkeep, StrBuf *out, Err *e);

/*
 * For callers without the PTX parser (the verbs use its spans, through
 * cmd/job.h job_reduce): finds
 * every .entry definition of ptx[0..n) by a light scan (comments and
 * strings skipped, braces matched).  Each span runs from the start of the
 * line holding `.entry` (so `.visible` / `.weak` before it are included)
 * to the closing brace.  Sets *out to a malloc'd array (names malloc'd;
 * free with gpu_spans_free).  -1 when a body's braces do not match.
 */
int gpu_scan_entries(const char *ptx, size_t n, GpuFuncSpan **out, size_t *nout, Err *e);
void gpu_spans_free(GpuFuncSpan *spans, size_t n);

#endif
