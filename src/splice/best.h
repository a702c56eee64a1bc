/*
 * best.h - the best-of layer: per phase, the fastest variant whose splice
 * is proven.
 *
 * A layer may hold several forms of each phase (recipes/LAYER/phase-NN.json,
 * the native mma form; phase-NN-f16.json, ...).  Measured on the H200
 * (2026-12-01) the f16 form of phase 1 took 2.21x the vendor's cycles and
 * of phase 9 0.65x: neither layer is the fastest; one that takes the faster
 * form of each phase should beat both.  Two documents say which:
 *
 *   the ranking   `profile LAYER --phases LIST --variant A,B --json`: per
 *                 phase, each variant's cycles (the phase and its epilogue)
 *                 over the original's of the same run
 *   the proof     `check LAYER --json`: the verdict of every recipe of the
 *                 layer against the oracle, each spliced alone
 *
 * best_choose takes, per phase, the first variant in the rule's order
 * whose recipe the proof calls IDENTICAL; a phase with none keeps the
 * vendor's code.  Writing the recipes and proving the layer they make is
 * the caller's (`recipe best`, then the main job).
 *
 * The rule's order (best_rule):
 *   per phase     each phase's variants by their ratio of cycles, fastest
 *                 first: when the probes left every profiled kernel's
 *                 compiled code as it was, so the cycles are of the code
 *                 that runs
 *   whole layer   every phase's variants in the order of their whole
 *                 layers' measured kernel times (the plain kernels'): when
 *                 the probes changed a compiled kernel (registers, stack,
 *                 spills), its per-phase cycles are of another program and
 *                 rank nothing.  Measured on the H200 (2026-12-02): the
 *                 probes took spill stores from 3,120 to 1,724 B; the layer
 *                 mixed per phase from those cycles ran 1.049x the f16
 *                 layer, while the f16 layer was the fastest whole one.
 *
 * Decisions:
 *  - The ranking is read, not trusted for its order: candidates are sorted
 *    here by ratio (unmeasured last), so a hand-edited file cannot pass an
 *    order the figures do not support.
 *  - A recipe is matched to the proof by its file name (check prints the
 *    path it was given, which may be relative to another folder).
 *  - A variant that is not proven (absent from the proof, DIFFERS, an
 *    error) is passed over, and the pick says which ones were and why.
 */
#ifndef D4R_BEST_H
#define D4R_BEST_H

#include "base/base.h"
#include "base/err.h"
#include "base/strbuf.h"

typedef struct {
	char *variant;
	double ratio; /* < 0: not measured */
	double cycles;
} BestCand;

typedef struct {
	uint32_t phase;
	BestCand *c; /* fastest first */
	size_t n;
} BestPhase;

/* A variant's whole layer as the ranking measured it. */
typedef struct {
	char *variant;
	double kernel_ms; /* the plain spliced kernel's median; < 0: not given */
	bool changed;     /* the probes changed the compiled original or spliced kernel */
} BestWhole;

typedef struct {
	char *layer;
	BestPhase *v;
	size_t n;
	BestWhole *whole; /* the ranking's "variants", in its order */
	size_t nwhole;
} BestRanking;

/* Reads a ranking (profile's --json with a list of variants) from
 * text[0..len) of `file`.  Returns 0, or -1 with "file: PATH: what". */
int best_read_ranking(const char *file, const char *text, size_t len, BestRanking *r, Err *e);
void best_ranking_release(BestRanking *r);

typedef struct {
	char **name;    /* recipe file names (no folder) */
	char **verdict; /* "identical", "differs", "error", ... */
	size_t n;
} BestProof;

/* Reads a proof (check's --json: items[].path and .verdict). */
int best_read_proof(const char *file, const char *text, size_t len, BestProof *p, Err *e);
void best_proof_release(BestProof *p);

typedef struct {
	uint32_t phase;
	const char *variant; /* into the ranking; NULL: no variant proven */
	double ratio;
	char *recipe;        /* its recipe's path under layer_dir; NULL with variant */
	StrBuf passed;       /* "f16 0.81x differs, mma not checked" */
} BestPick;

/*
 * Per phase of r, the first variant in the rule's order whose recipe
 * (layout_recipe_variant of layer_dir) the proof calls identical.  *out gets r->n picks (release
 * with best_picks_free).  Pure but for the file-system look-up of the
 * variant "mma" (base/layout.h).
 */
typedef enum { BEST_PER_PHASE, BEST_WHOLE_LAYER } BestRule;

/* The rule the ranking supports: BEST_WHOLE_LAYER when a variant's
 * profile says the probes changed its code and every variant's whole
 * layer has a kernel time, else BEST_PER_PHASE; *why (may be NULL) gets
 * the reason in words. */
BestRule best_rule(const BestRanking *r, StrBuf *why);

void best_choose(const BestRanking *r, const BestProof *pf, const char *layer_dir,
                 BestRule rule, BestPick **out);
void best_picks_free(BestPick *p, size_t n);

#endif
