/*
 * check_replay.h - what check.c asks of check_replay.c (`check --replay`).
 */
#ifndef D4R_CMD_CHECK_REPLAY_H
#define D4R_CMD_CHECK_REPLAY_H

#include "base/err.h"
#include "gpu/manifest.h"
#include "ptx/module.h"
#include "replay/replay.h"

#include <stdbool.h>

typedef struct {
	double timeout;
	bool no_cache;
	const char *cache_dir; /* the state and image cache's folder, or NULL */
	bool quiet;            /* no lines on standard output (--json) */
} CheckReplayOpts;

/* How replay decided one recipe. */
typedef enum {
	CR_IDENTICAL, /* proved, the end states equal: the recipe's verdict */
	CR_DIFFERS,   /* proved, the end states differ: the frame is the
	                 whole-module check's to decide */
	CR_REFUSED,   /* the plan refuses the cut */
	CR_INVALID,   /* the original's entry does not reproduce the dump */
	CR_FAILED,    /* could not plan it, or the replay did not run */
} CheckReplayKind;

/* "identical", "differs", "refused", "invalid", "failed" */
const char *check_replay_kind_name(CheckReplayKind k);

typedef struct {
	CheckReplayKind kind;
	char *message;   /* refused, failed: why; differs, invalid: the first
	                    difference as text */
	ReplayDiff diff; /* differs, invalid */
	double ms[2];    /* identical, differs: the original's and the spliced
	                    entry's launch */
} CheckReplayOutcome;

typedef struct {
	unsigned identical, differ, not_proved;
	double prepare_s, dump_s, replay_s;
} CheckReplaySummary;

/*
 * Replays each recipe of paths[0..n) (a line each on standard output
 * unless o->quiet, then the summary line); out[i] says how recipe i was
 * decided.  Only CR_IDENTICAL is a verdict: every other recipe is the
 * whole-module check's (a DIFFERS of the phase's contract may still be an
 * IDENTICAL frame).  Returns 0, or -1 when the replays could not run at
 * all.  Release each out[i] with check_replay_outcome_release.
 */
int check_replay(const Manifest *mf, const Module *mo, char **paths, size_t n,
                 const CheckReplayOpts *o, CheckReplayOutcome *out,
                 CheckReplaySummary *sum, Err *e);
void check_replay_outcome_release(CheckReplayOutcome *o);

#endif
