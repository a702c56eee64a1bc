/*
 * job.h - steps the main job and `check` share.
 */
#ifndef D4R_CMD_JOB_H
#define D4R_CMD_JOB_H

#include "base/err.h"
#include "base/strbuf.h"
#include "gpu/manifest.h"

/* Parses `text` and appends it to `out` reduced to the entries the
 * manifest's launches need (gpu_reduce_for_layer over the parser's function
 * spans: other .entry bodies blanked, lines kept).  *entries / *removed (may
 * be NULL) get the module's entries and how many were removed. */
int job_reduce(const char *name, const char *text, size_t len, const Manifest *mf, StrBuf *out,
               size_t *entries, size_t *removed, Err *e);
/* Reads the oracle frame (`opt`, else the manifest's, checked against its
 * sha256). */
int job_read_oracle(const Manifest *mf, const char *opt, unsigned char **buf, size_t *len,
                    char **path_out, Err *e);

#endif
