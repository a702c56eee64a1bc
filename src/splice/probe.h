/*
 * probe.h - probes: stores, at chosen statements of a kernel, of chosen
 * registers into a dump buffer, and the reading of that dump.
 *
 * A probe plan is a list of records.  A record is stored at one position
 * (after, or before, one statement of the function) and holds a list of
 * values; a value is a register of the function (PV_REG) or a special
 * register such as %clock64 read at a position of its own into a fresh
 * register and stored with the record (PV_READ: a clock read at the start
 * of a phase, stored after the phase's end, so the stores are not timed).
 * A PV_READ of 32 bits from a 64-bit special register (%clock64,
 * %globaltimer) keeps its low half: one register held instead of two.
 * A record is stored by every lane, or by lane 0 of each warp alone
 * (`per_warp`: one record per warp, what clock reads want).
 *
 * The kernel's parameters do not change: the probe adds one module-level
 * `.visible .global .align 8 .u64 SYMBOL;` holding the dump's address,
 * which the host sets (cuModuleGetGlobal + cuMemcpyHtoD) before the
 * launch.  The dump is laid out warp by warp, so the instrumented module
 * does not depend on the grid it is launched with:
 *
 *     dump = [warp of the grid][record][value][lane]
 *     warp of the grid = block index * warps per block + warp in the block
 *     block index      = ctaid.x + nctaid.x * (ctaid.y + nctaid.y * ctaid.z)
 *     thread in block  = tid.x + ntid.x * (tid.y + ntid.y * tid.z)
 *     warp in the block = thread / 32, lane = thread % 32
 *
 * A value takes a slot of 4 bytes per lane (8 for 64-bit values); a
 * per-lane value's slot is 32 such, lane after lane, so a warp's store of
 * one register is 128 (256) contiguous bytes.  A predicate is stored as a
 * word (0 or 1), 8- and 16-bit registers in the low bytes of their slot
 * (the rest stays as the dump was cleared).  Values in a record and
 * records in a warp's area follow each other in plan order, 8-byte slots
 * aligned to 8.
 *
 * Instrumenting inserts whole lines and nothing else: after the line
 * holding the position's statement (its ';' and any comment after it on
 * that line) come the record's stores, inside a `{ }` scope of their own
 * with their own registers (a fresh prefix, "%prb0_"); a module-level line
 * after `.address_size` declares the symbol; PV_READ values get one `.reg`
 * line after the function's last top-level declaration and one line at
 * their read position.  So every line of the input is a line of the
 * output, unchanged and in order.  Positions that cannot be instrumented
 * that way are refused, naming the statement: a statement that shares its
 * line with code after it, a branch, ret or exit (a probe after it would
 * run on one path only, or never), a register that is not visible at the
 * position (declared in a `{ }` scope that has closed, or hidden by a
 * nearer declaration of the same name).
 *
 * Mapping a plan onto a spliced module (probe_align, probe_plan_map): the
 * statements of the two functions are aligned (equal normalised text, in
 * order: common prefix and suffix, then statements that occur once on
 * each side as anchors, longest increasing run of them, recursively); a
 * record after original statement i lands after the spliced statement
 * before the counterpart of i+1 (so code a splice put after i counts as
 * i's), and records strictly inside a cut have no counterpart.
 *
 * Nothing here prints; errors go to the Err given.
 */
#ifndef D4R_SPLICE_PROBE_H
#define D4R_SPLICE_PROBE_H

#include "ana/ana.h"
#include "base/err.h"
#include "base/numlist.h"
#include "base/strbuf.h"
#include "ptx/module.h"

/* How a stored value is read (and which store writes it). */
// clang-format off
typedef enum {
	PF_HEX8, PF_U8, PF_S8,
	PF_HEX16, PF_U16, PF_S16, PF_F16, PF_BF16,
	PF_HEX32, PF_U32, PF_S32, PF_F32, PF_F16X2, PF_BF16X2,
	PF_HEX64, PF_U64, PF_S64, PF_F64,
	PF_PRED,
	PF__COUNT
} ProbeFmt;
// clang-format on

/* "f16x2", "b32" (a 32-bit value of no known type), "pred", ... */
const char *probe_fmt_name(ProbeFmt f);
/* Bits the value has in its register (1 for a predicate). */
unsigned probe_fmt_bits(ProbeFmt f);

typedef enum { PV_REG, PV_READ } ProbeValueKind;

typedef struct {
	uint8_t kind; /* ProbeValueKind */
	uint8_t fmt;  /* ProbeFmt */
	char *name;   /* "%r2849"; PV_READ: the special register, "%clock64" */
	/* PV_REG: the statement whose definition the value is (for the check
	 * that the name means the same register at the probe), or UINT32_MAX */
	uint32_t def;
	/* PV_READ: where it is read */
	uint32_t read_at;
	bool read_before;
	/* probe_plan_layout: byte offset of its slot inside the record */
	uint32_t off;
} ProbeValue;

/* What a record is, for reports (the caller's words). */
enum { PR_OTHER, PR_PHASE_END, PR_EPILOGUE_END, PR_CUT_END };

typedef struct {
	uint32_t at;    /* statement index (function-local) */
	bool before;    /* before statement `at`, else after it */
	bool per_warp;  /* lane 0 stores for its warp */
	uint8_t what;   /* PR_* */
	uint32_t phase; /* the phase it belongs to, 0: none */
	uint32_t first; /* the range whose values it holds ([first, at]) */
	VEC(ProbeValue) vals;
	/* NULL, or whole PTX lines (malloc'd) stored inside the record's scope
	 * after its values: what a caller stores beyond registers (replay's
	 * copy of the block's shared memory), with registers of its own */
	char *code;
	/* probe_plan_layout */
	uint64_t off;   /* offset inside a warp's area */
	uint64_t bytes; /* its bytes per warp */
	uint64_t nvals; /* values per warp: vals.n x 32 lanes (x 1 per warp) */
} ProbeRecord;

typedef struct {
	VEC(ProbeRecord) recs;
	uint64_t warp_bytes; /* probe_plan_layout: one warp's area */
	/* registers left out: vector registers (.v2/.v4), and with
	 * PROBE_REGS_ALL the ones of a { } scope that has closed at the record */
	uint32_t skipped;
} ProbePlan;

void probe_plan_release(ProbePlan *p);
/* A deep copy of src into *dst. */
void probe_plan_copy(const ProbePlan *src, ProbePlan *dst);
/* A deep copy of record src into *dst (its values' names duplicated). */
void probe_record_copy(const ProbeRecord *src, ProbeRecord *dst);

typedef enum { PROBE_AT_PHASE_END, PROBE_AT_EPILOGUE_END } ProbeAt;
typedef enum { PROBE_REGS_LIVE_OUT, PROBE_REGS_ALL } ProbeRegs;

/*
 * The values of the range [first, last] of df's function, in a record
 * after `last`: its live-out registers (df_cut), or with PROBE_REGS_ALL
 * every register the range defines; each with the format its declaration
 * or its last definition in the range gives (an f16 mma's D is f16x2).
 * Vector registers are left out, and so are registers of a `{ }` scope
 * that has closed after `last` (an inline-asm block's `p`), which are not
 * there to be stored (counted in plan->skipped).  Appends the record to
 * plan (not laid out).  Returns 0 or -1.
 */
int probe_plan_range(Dataflow *df, uint32_t first, uint32_t last, ProbeRegs regs,
                     uint8_t what, uint32_t phase, ProbePlan *plan, Err *e);

/*
 * One record per phase of `pl` (ana_phase_find's phases of df's function)
 * whose number is in `phases` (NULL: every phase): after the phase's last
 * mma (PROBE_AT_PHASE_END) with the values of its mma range, or after its
 * epilogue's last statement (PROBE_AT_EPILOGUE_END; the phase's own end when
 * the epilogue is empty) with the values of phase and epilogue.
 */
int probe_plan_phases(Dataflow *df, const PhaseList *pl, const NumList *phases,
                      ProbeAt at, ProbeRegs regs, ProbePlan *plan, Err *e);

/* The format a probe stores register ri in, whose last definition before
 * the record is `def` (may be NULL): its declared type, else the type its
 * definition's opcode names (an f16 mma's D: f16x2), else untyped bits of
 * its width; -1 for a width no probe stores (.b128). */
int probe_value_fmt(const Module *m, const Stmt *def, const RegInfo *ri);

/* Sorts the records by position (statement order; before-records ahead
 * of after-records of the same statement), merging records that are
 * stored at the same position into the first (values of the later that
 * the first has not). */
void probe_plan_sort(ProbePlan *p);

/* Offsets of every value and record; warp_bytes.  -1 when one warp's area
 * would exceed 2 GB (the stores' offsets are 32-bit immediates). */
int probe_plan_layout(ProbePlan *p, Err *e);

/* ---- instrumenting ------------------------------------------------------- */

typedef struct {
	const Module *module;  /* parsed; its source outlives the result */
	const Func *func;      /* the function the plan's statements are of */
	const ProbePlan *plan; /* laid out */
	/* the symbol's name; NULL: "__d4r_probe_dump", or with a number when
	 * the module holds that name already */
	const char *symbol;
	/* NULL, or whole module-level lines put after the symbol's (a symbol
	 * of the caller's that records' code names) */
	const char *module_text;
} ProbeRequest;

typedef struct {
	uint32_t out_line; /* first output line of an inserted block */
	uint32_t lines;    /* its lines */
	int32_t rec;       /* the record it stores, -1: declarations, -2: a read */
} ProbeInsert;

typedef struct {
	StrBuf text; /* the instrumented module */
	char symbol[96];
	char prefix[32];          /* "%prb0_" */
	VEC(ProbeInsert) inserts; /* in output order */
	uint32_t nvalues;         /* values stored per warp, all records */
} ProbeResult;

/*
 * Writes the instrumented module into res->text (see the top of this
 * file).  res must be zeroed; release it with probe_result_release whether
 * or not the call succeeded.  Returns 0, or -1 naming the record, its
 * statement and line and what is wrong: a position that cannot take
 * inserted lines, a value whose register is not visible there or has
 * another width than its format, a read after its store, a module without
 * `.address_size 64`.
 */
int probe_instrument(const ProbeRequest *req, ProbeResult *res, Err *e);
void probe_result_release(ProbeResult *res);

/* Can record r of function f be stored where it says?  The checks
 * probe_instrument makes of each record; 0, or -1 with the reason.  A
 * caller that would rather leave a record out than fail asks first. */
int probe_record_check(const Module *m, const Func *f, const ProbeRecord *r, Err *e);

/* Where output line `line` of the instrumented module came from: "probe
 * record 3 (phase 8 end)", "module line 12000". */
void probe_where(const ProbeResult *res, const ProbePlan *plan, const char *module_name,
                 uint32_t line, StrBuf *out);

/* "phase 8 end", "phase 8 epilogue end", "cut s7771-s7794 end", "s12 after". */
void probe_record_name(const ProbeRecord *r, StrBuf *out);

/* ---- mapping onto a spliced module ---------------------------------------- */

enum { PROBE_NONE = UINT32_MAX };

/*
 * Aligns the statements of fo (module mo) with those of fs (module ms):
 * (*match)[i] is the statement of fs that is original statement i, or
 * PROBE_NONE (malloc'd, fo->nstmt entries; *nmatched gets how many match).
 */
void probe_align(const Module *mo, const Func *fo, const Module *ms, const Func *fs,
                 uint32_t **match, uint32_t *nmatched);

/* A statement range of the original a splice replaced. */
typedef struct {
	uint32_t first, last;
} ProbeCut;

/*
 * The plan `orig` (positions in the original, sorted) on the spliced
 * function: *kept gets the records that have a counterpart (positions in
 * the original), *mapped the same records at their spliced positions, in
 * the same order, with the same values, so the two dumps have one layout.
 * A record strictly inside a cut, or whose neighbourhood the alignment did
 * not match, has no counterpart: its index goes into *dropped.  `nstmt_s`
 * is the spliced function's statement count.
 */
typedef VEC(uint32_t) ProbeIndexVec;
void probe_plan_map(const ProbePlan *orig, const uint32_t *match, uint32_t nstmt_o,
                    uint32_t nstmt_s, const ProbeCut *cuts, size_t ncuts, ProbePlan *kept,
                    ProbePlan *mapped, ProbeIndexVec *dropped);

/* ---- the dump --------------------------------------------------------------- */

/* Warps of one block of `block` threads, and of the grid. */
uint64_t probe_block_warps(const unsigned block[3]);
uint64_t probe_grid_warps(const unsigned grid[3], const unsigned block[3]);
/* Bytes of the dump of a launch: grid warps x plan->warp_bytes. */
uint64_t probe_dump_bytes(const ProbePlan *p, const unsigned grid[3],
                          const unsigned block[3]);
/* The byte offset of value `val` of record `rec`, for warp `warp` of the
 * grid and lane `lane` (ignored for a per-warp record). */
uint64_t probe_dump_offset(const ProbePlan *p, size_t rec, size_t val, uint64_t warp,
                           unsigned lane);
/* Block coordinates and warp in the block of warp `warp` of the grid. */
void probe_warp_where(uint64_t warp, const unsigned grid[3], const unsigned block[3],
                      unsigned bxyz[3], unsigned *warp_in_block);

/* The value's bits as stored (8, 16, 32 or 64 of them, a predicate 0/1). */
uint64_t probe_value_bits(ProbeFmt f, const unsigned char *slot);
/*
 * How far apart two values of format f are.  Floats: the number of steps
 * between them in the ordered set of the format's values (1 ulp between
 * neighbours; -0 and +0 are neighbours, so bits that differ are never 0
 * apart); f16x2 and bf16x2: the larger of the two halves' distances (*half,
 * if given, gets the half that gives it: 0 low, 1 high).  A NaN on either
 * side gives PROBE_DIST_NAN unless the bits are equal.  Integers: |a - b|;
 * untyped bits (b32 ...) as unsigned; predicates 0 or 1.
 */
#define PROBE_DIST_NAN UINT64_MAX
uint64_t probe_distance(ProbeFmt f, uint64_t a, uint64_t b, int *half);
/* The value as text: "0x3c003a00 (1, 0.75)" for f16x2 (low half first),
 * "1.5 (0x3fc00000)" for f32, "42" for u32, "true" for a predicate. */
void probe_value_text(ProbeFmt f, uint64_t bits, StrBuf *out);

/* Differences between two dumps of one plan, per record. */
typedef struct {
	uint64_t values;   /* values compared (warps x lanes x values) */
	uint64_t differ;   /* how many differ */
	uint64_t max_dist; /* the largest distance that is not PROBE_DIST_NAN */
	bool any_nan;      /* some difference involves a NaN */
	/* the first difference in (warp, lane, value) order */
	uint64_t warp;
	unsigned lane;
	uint32_t val;
	uint64_t a, b; /* its bits in dump a and dump b */
	uint64_t dist;
} ProbeRecordDiff;

/*
 * Compares dumps a and b (probe_dump_bytes each) of plan p, record by
 * record, into diffs[0 .. p->recs.n).  Returns the index of the first
 * record that differs, or -1.
 */
int64_t probe_compare(const ProbePlan *p, const unsigned grid[3], const unsigned block[3],
                      const unsigned char *a, const unsigned char *b,
                      ProbeRecordDiff *diffs);

#endif
