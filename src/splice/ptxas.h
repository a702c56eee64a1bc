/*
 * ptxas.h - the offline check of a spliced module by the toolkit's ptxas,
 * and the cache of its answers.
 *
 * ptxas takes 10-40 s on a kernel of 20,000 statements, and the same module
 * is checked again and again: a recipe author re-runs the check after an
 * edit elsewhere, CI checks every recipe of a layer on every submission,
 * the test suite checks the same splices run after run.  ptxas's answer
 * (its exit status and what it printed) depends on nothing but the module's
 * bytes, its arguments and the ptxas binary, so it is kept, keyed by those,
 * and a second check of the same bytes costs a file read.
 *
 * Decisions:
 *   - The key is the sha256 of a version line, the ptxas binary's identity
 *     (its path, size and modification time, from stat: no run of ptxas
 *     --version per check), the arguments ("-arch=sm_89 -e ENTRY", exactly
 *     what ptxas is given but the file names) and the module's bytes.  A
 *     reinstalled or upgraded ptxas, another target, another entry, one
 *     byte changed: another key.
 *   - The cache folder is user_cache_dir()/ptxas (base/file.h), one file
 *     per key, written by write_file_atomic (a temporary file renamed onto
 *     it), so a reader sees a whole entry or none, and two processes that
 *     check the same module at once both write the same bytes.  An entry
 *     that cannot be read or does not parse is a miss; a cache that cannot
 *     be written costs time, not correctness.
 *   - An entry holds ptxas's raw output and the temporary file's name it
 *     was run on, so the "line N" of its messages are mapped back to the
 *     template and the module (splice_where) at every read, for whichever
 *     splice asks: what is cached is ptxas's answer, not our rendering.
 *   - Both verdicts are kept: an accepted module and a rejected one.  Only
 *     a run that did not finish (a signal, ptxas not runnable) is not.
 *   - PtxasCache.no_cache (the verbs' --no-cache) neither reads nor writes:
 *     the check is a real ptxas run, as a test of ptxas itself needs.
 */
#ifndef D4R_SPLICE_PTXAS_H
#define D4R_SPLICE_PTXAS_H

#include "splice.h"

typedef struct {
	bool no_cache; /* in: neither read nor write the cache */
	bool cached;   /* out: the answer came from the cache */
	char key[65];  /* out: the cache key ("" when none was made) */
} PtxasCache;

/*
 * Runs ptxas (CUDA_HOME/bin/ptxas, CUDA_HOME from the environment or the
 * build) on `text` with -arch=`arch` and -e `entry` (NULL: no -e, every
 * entry; "a,b": those entries), output discarded, or takes its answer from
 * the cache (`pc` NULL: the cache is used, nothing is reported).  Returns 0
 * when ptxas accepts the module, 1 when it reports an error (its messages
 * in `log`, each "line N" mapped through `res` when given and else named
 * `module_name`:N), -1 when ptxas could not be run.
 */
int splice_ptxas(const char *text, size_t len, const char *arch, const char *entry,
                 const SpliceResult *res, const char *module_name, PtxasCache *pc,
                 StrBuf *log, Err *e);

/* splice_ptxas with more ptxas flags (`flags`, e.g. "-O3 -lineinfo"; NULL
 * for none), the cubin appended to *cubin when ptxas accepts the module;
 * never cached (the cubin is the point). */
int splice_ptxas_cubin(const char *text, size_t len, const char *arch, const char *entry,
                       const char *flags, StrBuf *cubin, StrBuf *log, Err *e);

/*
 * The cache key (pure): lower-case hex sha256 of the cache's version line,
 * `identity` (ptxas_identity), `args` and text[0..len).
 */
void ptxas_cache_key(const char *text, size_t len, const char *args, const char *identity,
                     char out[65]);

/* The identity of the ptxas binary at `exe` for the key: "PATH size N
 * mtime S.NS".  -1 when it cannot be looked at. */
int ptxas_identity(const char *exe, StrBuf *out, Err *e);

/* user_cache_dir()/ptxas, malloc'd, or NULL when there is no cache
 * folder. */
char *ptxas_cache_dir(void);

#endif
