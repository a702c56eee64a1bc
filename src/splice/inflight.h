/*
 * inflight.h - the wgmma groups in flight of a phase or range as authors
 * see them (ana.h: groups_build): JSON under "groups_in_flight" for
 * `phases --json` and `show --live --json`, text for `show`.  Both forms
 * carry the same fields (d4r-splice(1), "Groups in flight").
 *
 * For the wgmma.mma_async of a range (a phase's mma): the wait_group that
 * completes their groups on every path, the cut `recipe new --through-wait`
 * takes through it with the loops it holds, and at each wgmma statement of
 * the span (the through-wait cut for a phase, the range itself for show
 * --stmts) the committed groups that may be in flight after it, whether an
 * mma may be issued and not committed, and where the range's own groups
 * stand: uncommitted, pending, or complete.
 */
#ifndef D4R_SPLICE_INFLIGHT_H
#define D4R_SPLICE_INFLIGHT_H

#include "ana/ana.h"

#include <cjson/cJSON.h>

/* The groups of the wgmma.mma_async in [first, last] as JSON, the span the
 * whole through-wait cut (phase = true) or [first, last] itself; NULL when
 * the range holds no wgmma.mma_async. */
cJSON *inflight_json(Dataflow *df, uint32_t first, uint32_t last, bool phase);
/* The same as text lines, appended to out (nothing without wgmma.mma_async). */
void inflight_text(Dataflow *df, uint32_t first, uint32_t last, bool phase, StrBuf *out);

#endif
