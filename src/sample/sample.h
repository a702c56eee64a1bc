/*
 * sample.h - PC sampling's map: SASS PC -> PTX statement -> phase or
 * epilogue, on the kernel as it is.
 *
 * Clock probes change the program they time (on the H200 enc4's probed
 * build spilled 1,724 bytes where the plain one spilled 3,120, and ran 22%
 * faster).  PC sampling (CUPTI, cupti_pcsampling.h) reads the warps' PCs
 * of the unmodified kernel instead; what it needs from us is where each
 * SASS PC comes from, in phases.  This stage owns that map:
 *
 *   1. sample_loc_text: the module with a `.loc` line before every
 *      statement of the entry, naming the statement itself (line K of
 *      file 1 is statement K-1 of the entry);
 *   2. the JIT (or ptxas -lineinfo) compiles it; .loc lines are debug
 *      information and change no instruction, which sample_same_stream
 *      checks on the two cubins' code of the entry, byte for byte;
 *   3. sample_map: CUPTI's cuptiGetSassToSourceCorrelation (it reads a
 *      cubin, no device needed) gives each PC's line, hence its statement;
 *   4. sample_regions: statements -> the prologue, phase N or epilogue N,
 *      as profile's reads bound them (ana_phase_find's phases; an epilogue
 *      runs to the next phase's start, the last one to the end);
 *   5. on the GPU (run.h): the .loc build run under CUPTI PC sampling in
 *      the child that owns the context (SampleSession, cupti.c), its
 *      samples counted per instruction (SamplePcs), then sample_profile
 *      (shares.c): samples -> statements -> regions, every sample in one
 *      row, with the stall reasons.
 *
 * Decisions:
 *  - The .loc line is the statement's index, not its source line: several
 *    statements may share a source line, and a line of the vendor's file
 *    would need a second table to find the statement again.
 *  - The file index is 1: CUPTI's correlation (CUDA 13.0) names the file of
 *    index 1 and answers "default" for 2 and above (tried: 2, 100, 4242).
 *    A module with .file lines of its own keeps them and we add none: our
 *    .loc lines name file 1 all the same, and since one stands right before
 *    each statement it is the one that statement's instructions get; the
 *    line, not the file's name, says the statement.
 *  - libcupti is loaded at run time (dlopen, as libcuda is): without it
 *    every verb still works, and sample_cupti_load says why not.
 *  - SASS instructions are 16 bytes (sm_70 and later): the entry's code is
 *    walked in steps of 16, and a text section of another size is refused.
 */
#ifndef D4R_SAMPLE_H
#define D4R_SAMPLE_H

#include "base/base.h"
#include "base/err.h"
#include "base/strbuf.h"
#include "ptx/module.h"

#define SAMPLE_FILE 1
#define SAMPLE_FILE_NAME "d4r-sample"
#define SAMPLE_INSN_BYTES 16

/*
 * The text of m with `.loc SAMPLE_FILE K 0` on a line of its own before
 * statement K-1 of f (every statement of its body, at its first byte) and,
 * when m has no .file line of its own, `.file 1 "d4r-sample"` after the
 * .address_size line (else the .target line, else at the top).  Everything
 * else is m's bytes.
 */
void sample_loc_text(const Module *m, const Func *f, StrBuf *out);

typedef enum {
	SR_PROLOGUE, /* before the first phase */
	SR_PHASE,    /* phase->first .. phase->last */
	SR_EPILOGUE, /* after phase N up to phase N+1, the last one to the end */
} SampleRegionKind;

typedef struct {
	uint8_t kind;   /* SampleRegionKind */
	uint32_t phase; /* 1-based; 0 for the prologue */
} SampleRegion;

/* The region of each statement of f: out[0..f->nstmt).  Returns the number
 * of phases. */
size_t sample_regions(const Module *m, const Func *f, SampleRegion *out);

/*
 * The code of function `func` in an ELF cubin: its section ".text.FUNC".
 * Returns 0, or -1 with "cubin: ..." when the cubin is not a 64-bit ELF,
 * has no such section, or it is not a whole number of instructions.
 */
int sample_cubin_text(const void *cubin, size_t n, const char *func,
                      const unsigned char **text, size_t *len, Err *e);

/* Are the entry's instructions of cubins a and b the same bytes?  *first_diff
 * (may be NULL) gets the first instruction that differs (or the shorter
 * one's count).  Returns 0, or -1 when either has no code for func. */
int sample_same_stream(const void *a, size_t an, const void *b, size_t bn, const char *func,
                       bool *same, size_t *first_diff, Err *e);

/* Loads libcupti ($D4R_LIBCUPTI, else libcupti.so.13, libcupti.so) once.
 * Returns 0, or -1 with why not. */
int sample_cupti_load(Err *e);

typedef struct {
	size_t n;              /* SASS instructions of the function */
	uint32_t *stmt;        /* per instruction: the statement, or UINT32_MAX */
	size_t unattributed;   /* instructions with no line, or one beyond the
	                          statements (line 0: code ptxas made) */
} SampleMap;

/*
 * The statement of every instruction of func in the cubin (compiled from
 * sample_loc_text's module with line information), through CUPTI's SASS
 * to source correlation; nstmt bounds the lines.  Returns 0, or -1.
 */
int sample_map(const void *cubin, size_t n, const char *func, uint32_t nstmt, SampleMap *out,
               Err *e);
void sample_map_release(SampleMap *m);

/*
 * The regions of a spliced function fs (ns statements), carried over from
 * the original's (orig, no statements) as profile carries its reads: a
 * statement that is an original one (match, from probe_align) has its
 * region; one inside a cut (between the spliced counterparts of the
 * statements before and after cut [first, last] of the original) is that
 * cut's phase; any other takes the region of the statement before it.
 */
typedef struct {
	uint32_t first, last; /* the original's statements the cut replaced */
} SampleCut;
void sample_regions_carried(const SampleRegion *orig, uint32_t no, const uint32_t *match,
                            const SampleCut *cuts, size_t ncuts, uint32_t ns,
                            SampleRegion *out);

/* SASS instructions per region of one module's entry (sample_sass). */
typedef struct {
	size_t n_loc, n_plain; /* the entry's instructions with and without the .loc lines */
	bool same;             /* the same instruction stream, byte for byte */
	size_t first_diff;     /* else the first instruction that differs */
	size_t unattributed;
	size_t prologue;
	size_t nphases;
	size_t *phase, *epilogue; /* [0..nphases): phase k+1 and its epilogue */
} SampleSass;

/*
 * Compiles m twice with ptxas -O3 for `arch`, entry f only (splice_ptxas_cubin):
 * as it is, and sample_loc_text's module with -lineinfo; checks that both
 * hold the same instructions; maps every instruction to its statement
 * (sample_map) and counts them per region (regions: f->nstmt entries, of
 * nphases phases).  Returns 0, or -1 (ptxas refused or could not run, no
 * CUPTI, ...).
 */
int sample_sass(const Module *m, const Func *f, const SampleRegion *regions, size_t nphases,
                const char *arch, SampleSass *out, Err *e);
void sample_sass_release(SampleSass *s);

/* ---- PC sampling on the GPU (cupti.c: CUPTI; run.c: the child) ---------- */

/*
 * The samples of one module's runs, as the child that owned the context
 * counted them: per instruction of the entry (pcOffset / 16) and per stall
 * reason collected.  Samples CUPTI gave for the entry at a PC beyond its
 * code are `outside`; those of other functions (other kernels of the
 * launch sequence) `other`; both are kept, never dropped.  total, dropped
 * and non_user are CUPTI's own sums (CUpti_PCSamplingData) over the
 * GetData calls, so what the records hold can be checked against them.
 */
typedef struct {
	uint32_t period;     /* log2 of the sampling period in cycles */
	unsigned runs;       /* launch sequences sampled */
	size_t nreasons;     /* stall reasons collected */
	char **reason;       /* their CUPTI names */
	size_t noffered;     /* stall reasons the device offers */
	size_t ninsn;        /* the entry's instructions */
	uint64_t *count;     /* [insn * nreasons + reason] */
	uint64_t outside, other;
	uint64_t total, dropped, non_user;
	bool buffer_full;    /* CUPTI said its hardware buffer filled */
} SamplePcs;
void sample_pcs_release(SamplePcs *p);

/* A PC-sampling session on a context (cupti.c). */
typedef struct SampleSession SampleSession;
/*
 * cuptiPCSamplingEnable on ctx, the stall reasons (cuptiPCSamplingGetNum-
 * StallReasons / GetStallReasons: every one but the "_not_issued" counts,
 * which are a subset of the others), the configuration: kernel-serialized
 * collection, start/stop control, period 2^period cycles (5..31), a
 * scratch buffer for every PC of a large kernel.  Before the module is
 * loaded.  Returns 0, or -1 naming the CUPTI call and its result.
 */
int sample_session_open(void *ctx, uint32_t period, SampleSession **out, Err *e);
int sample_session_start(SampleSession *s, Err *e);
/*
 * cuptiPCSamplingStop, then GetData until CUPTI has no PC left: the
 * records of `entry` in the cubin whose CRC is `crc` into pcs->count (of
 * pcs->ninsn instructions), the rest into outside / other.
 */
int sample_session_stop(SampleSession *s, const char *entry, uint64_t crc, SamplePcs *pcs,
                        Err *e);
/* The stall reasons into pcs (names copied); cuptiPCSamplingDisable; what
 * it left in the configured buffer counted as stop does; freed. */
void sample_session_close(SampleSession *s, const char *entry, uint64_t crc, SamplePcs *pcs);
/* cuptiGetCubinCrc of an image (the cubinCrc of its samples).  0, or -1. */
int sample_cubin_crc(const void *cubin, size_t n, uint64_t *crc, Err *e);

/* ---- samples -> statements -> phases (profile.c) -------------------------- */

/* One row of a sampled profile: the prologue, phase N, epilogue N, or what
 * no statement claims ("other": instructions with no line of ours, PCs
 * beyond the entry's code). */
typedef struct {
	uint64_t samples;
	uint64_t *reason; /* [nreasons] */
	size_t insns;     /* SASS instructions of the region */
} SampleRow;

typedef struct {
	size_t nphases, nreasons;
	SampleRow *row; /* SAMPLE_ROWS(nphases): prologue, phase 1, epilogue 1, ..., other */
	uint64_t kernel; /* the entry's samples: the sum of the rows */
	size_t insns;    /* the entry's instructions */
} SampleProfile;
#define SAMPLE_ROWS(nphases) (2 * (nphases) + 2)
#define SAMPLE_ROW_PHASE(k) (2 * (size_t)(k) - 1)    /* phase k (1-based) */
#define SAMPLE_ROW_EPILOGUE(k) (2 * (size_t)(k))     /* epilogue k */
#define SAMPLE_ROW_OTHER(nphases) (2 * (size_t)(nphases) + 1)

/*
 * The entry's samples (pcs, of map.n == pcs->ninsn instructions) by the
 * region of each instruction's statement (regions: one per statement, of
 * nphases phases; map from sample_map).  Every sample lands in exactly one
 * row: an instruction with no statement, and pcs->outside, in "other".
 * Returns 0, or -1 when the map and the samples are of different code.
 */
int sample_profile(const SamplePcs *pcs, const SampleMap *map, const SampleRegion *regions,
                   size_t nphases, SampleProfile *out, Err *e);
void sample_profile_release(SampleProfile *p);

/* The indices of row r's `k` largest stall reasons with samples, largest
 * first (ties: the lower index); returns how many (<= k). */
size_t sample_top_reasons(const SampleProfile *p, size_t r, size_t *out, size_t k);
/* "long_scoreboard" for "smsp__pcsamp_warps_issue_stalled_long_scoreboard" */
const char *sample_reason_short(const char *name);

#endif
