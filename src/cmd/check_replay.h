/*
 * check_replay.h - what check.c asks of check_replay.c (`check --replay`).
 */
#ifndef D4R_CMD_CHECK_REPLAY_H
#define D4R_CMD_CHECK_REPLAY_H

#include "base/err.h"
#include "gpu/manifest.h"
#include "ptx/module.h"

#include <stdbool.h>

typedef struct {
	double timeout;
	bool no_cache;
	const char *cache_dir; /* the state and image cache's folder, or NULL */
} CheckReplayOpts;

/*
 * Replays each recipe of paths[0..n) (a line each on standard output);
 * proven[i] says whether replay gave recipe i its verdict (else the
 * whole-module check must), *worst is 1 when a proven recipe differs.
 * Returns 0, or -1 when the replays could not run at all.
 */
int check_replay(const Manifest *mf, const Module *mo, char **paths, size_t n,
                 const CheckReplayOpts *o, bool *proven, int *worst, Err *e);

#endif
