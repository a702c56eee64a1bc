/*
 * profile.h - cycles per phase: where a kernel's clock is read, and what
 * the dump of those reads says.
 *
 * A profile plan is one probe record (probe.h), stored by lane 0 of every
 * warp just before the kernel's exit, holding reads made earlier at the
 * points that bound each phase and each epilogue:
 *
 *     kernel start   %globaltimer (64 bits), then %clock64 twice back to
 *                    back (the second pair's difference measures the
 *                    clock's resolution), after the function's first
 *                    statement
 *     phase p        %clock64 before its first mma and after its last
 *     epilogue p     %clock64 after its last statement (the read of the
 *                    next phase's start when the epilogue ends there)
 *     kernel end     %clock64 before the exit, where the record is stored
 *
 * Clock reads keep the low 32 bits of %clock64 (probe.h): a phase takes far
 * fewer than 2^32 cycles, and differences are taken modulo 2^32, so one
 * register is held per point instead of two.  The stores come after the
 * last read: no store is timed.  Every read is a register held from its
 * point to the exit, so a plan of many points raises register pressure;
 * `window` limits the phases read.
 *
 * A plan carried over to a spliced module (prof_plan_map) keeps the points
 * of the original: a phase that was cut is timed from before the spliced
 * code to after it.  A point strictly inside a cut has no counterpart and
 * is not read there (its phase shows no figure on that side).
 *
 * Nothing here prints; errors go to the Err given.
 */
#ifndef D4R_SPLICE_PROFILE_H
#define D4R_SPLICE_PROFILE_H

#include "splice/probe.h"

typedef struct {
	uint32_t phase; /* 1-based, the original's numbering */
	/* value indices in the plan's record; -1 when the point is not read */
	int32_t v_start, v_end, v_epi_end;
	bool epilogue; /* the phase has a non-empty epilogue */
} ProfilePhase;

typedef struct {
	ProbePlan plan; /* one per-warp record, before the exit (laid out) */
	VEC(ProfilePhase) phases;
	int32_t v_gt, v_k0, v_k1, v_end; /* kernel start and end reads */
	uint32_t exit;                   /* the exit statement */
	uint32_t unread;                 /* points a read cannot go to */
	StrBuf why;                      /* the first one's reason */
} ProfilePlan;

void prof_plan_release(ProfilePlan *pp);

/*
 * The plan for function f of m (see the top of this file), for the phases
 * in `window` (NULL: all of them).  The function must have one exit (ret
 * or exit without a guard) and at least one phase.  Points a read cannot
 * go to (a statement sharing its line, a position after a label) are left
 * out and counted in pp->unread; the kernel's start and end must be
 * readable.  Returns 0 or -1.
 */
int prof_plan(const Module *m, const Func *f, const NumList *window, ProfilePlan *pp,
              Err *e);

/*
 * The plan `po` of original function fo carried over to spliced function
 * fs of ms: `match` is probe_align's, `cuts` the ranges the splice
 * replaced.  Each read lands where probe_plan_map puts it; reads without a
 * counterpart are left out (their indices -1 in ps->phases, counted in
 * ps->unread).  Returns 0 or -1.
 */
int prof_plan_map(const ProfilePlan *po, const Module *mo, const Func *fo,
                  const Module *ms, const Func *fs, const uint32_t *match,
                  const ProbeCut *cuts, size_t ncuts, ProfilePlan *ps, Err *e);

/* ---- the dump -------------------------------------------------------------- */

/* Order statistics of a sample. */
typedef struct {
	uint64_t n;
	double mean, median, p10, p90, min, max;
} ProfStat;

/*
 * The statistics of v[0..n) (sorted in place): the median (the mean of the
 * middle two for an even n), p10 and p90 by nearest rank (the value at
 * rank ceil(p/100 x n), 1-based), min, max and mean.  All zero for n = 0.
 */
void prof_stat(double *v, size_t n, ProfStat *s);

typedef struct {
	ProfStat phase, epilogue; /* cycles per warp; n = 0 when not read */
} ProfPhaseStat;

typedef struct {
	uint64_t warps;      /* warps whose record is in the dump */
	uint64_t missing;    /* warps that stored nothing (never reached the exit) */
	ProfStat kernel;     /* cycles per warp, kernel start to exit */
	uint32_t resolution; /* least nonzero difference of the back-to-back reads
	                        over the warps; 0 when every one was 0 */
	uint64_t blocks;
	double block_spread_ns; /* last block's start - first block's (%globaltimer) */
	ProfPhaseStat *phases;  /* pp->phases.n entries */
	size_t nphases;
} ProfResult;

/*
 * Reads the dump of plan pp for a launch of `grid` x `block` (len bytes:
 * probe_dump_bytes) into r.  A warp whose record is all zero never stored
 * it and is counted in r->missing.  Differences are of the 32-bit reads,
 * modulo 2^32.  Returns 0, or -1 when len is not the dump's size.
 */
int prof_analyse(const ProfilePlan *pp, const unsigned grid[3], const unsigned block[3],
                 const unsigned char *dump, uint64_t len, ProfResult *r, Err *e);
void prof_result_release(ProfResult *r);

#endif
