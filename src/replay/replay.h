/*
 * replay.h - one cut of a kernel run alone, from the state the original
 * kernel had at the cut's start: what that state is (the state plan), and
 * the small module that loads it, runs the original's cut or the spliced
 * one, and stores the state at the cut's end (the replay module).
 *
 *   plan.c     (plan_mem.c its memory, plan_text.c its text and JSON) the state plan of a
 * cut: the registers every thread carries into it and out of it, how each survives a
 * replay in another process, the block's shared memory, the global bytes it reads and
 * writes, and what the cut holds that replay cannot do (refusals, each with its
 * statement) prep.c a cut made ready: the recipe spliced into the original alone, both
 * modules' dataflow, the cut's range in each, the launch that runs the entry run.c the
 * GPU side, in a child process: the dump (the instrumented original run once, the state
 * read back) unless the state is cached, then the replay module's two entries each from
 * that state, their end states back verdict.c  the proof (the original's entry reproduces
 * the dumped end state bit for bit) and the verdict (the spliced entry's end state
 * against the original's), in bisect's terms module.c   the replay module: two entries
 * (the original's cut and the spliced one) over the state, and the probe records that
 * take that state from the original module (the dump)
 *
 * The replay room builds on the probe layer (splice/probe.h): the dump's
 * registers are a probe plan (a record before the cut's first statement,
 * one after its last), laid out as the probe layer lays out every dump,
 * so the replay module reads the very slots the instrumented original
 * wrote.  It knows the launch through the manifest (gpu/manifest.h), the
 * artifact the GPU stage reads; it runs nothing itself.
 *
 * Pointer-valued registers.  A replay runs in another process, with other
 * allocations: a register that holds an address of a launch buffer, a
 * texture handle or a module symbol has, in the replay, another value.
 * The plan follows each live-in register's value back through its
 * definitions (mov, add, sub, mad, cvt, cvta, selp ...) to what it is made
 * of: data (the same bits in any process: constants, special registers,
 * loaded values), or one 64-bit field of the parameter block (a buffer's
 * address, a texture or surface object) plus data, or one symbol's address
 * plus data.  The replay entry rebases such a register by the difference
 * between the field (symbol) now and at the dump: the field's bytes at the
 * dump are kept with the state, the symbol's address is stored by the dump
 * itself.  That is exact for every value that is the base plus terms that
 * do not depend on it, which is what the address arithmetic of a kernel
 * is; recomputing the register in the replay entry would mean replaying
 * its whole definition chain, most of the kernel.  A value the walk cannot
 * write that way (two pointers added, a pointer masked, multiplied, turned
 * into a float, the address of the parameter block itself) is refused,
 * naming the register and the statement.
 *
 * Nothing here prints or exits; errors go to the Err given.
 */
#ifndef D4R_REPLAY_REPLAY_H
#define D4R_REPLAY_REPLAY_H

#include "ana/ana.h"
#include "base/err.h"
#include "base/strbuf.h"
#include "gpu/manifest.h"
#include "ptx/module.h"
#include "splice/probe.h"
#include "splice/recipe.h"

/* ---- the state plan (plan.c) ---------------------------------------------------- */

/* What a register's value is made of, for a replay in another process. */
typedef enum {
	RV_DATA,   /* the same bits in any process */
	RV_PARAM,  /* a 64-bit field of the parameter block (param_off) plus data */
	RV_SYMBOL, /* the address of a module symbol (symbol) plus data */
} ReplayValueKind;
const char *replay_value_kind_name(ReplayValueKind k); /* "data", "param", "symbol" */

typedef struct {
	char *name;        /* "%rd2831" */
	uint8_t fmt;       /* ProbeFmt, as the dump stores it */
	uint8_t kind;      /* ReplayValueKind */
	bool original;     /* read by the original's cut (live-in) / defined (live-out) */
	bool spliced;      /* ... by the spliced cut */
	int64_t param_off; /* RV_PARAM: the field's offset in the parameter block */
	char *param;       /* RV_PARAM: the kernel parameter holding it ... */
	int64_t param_in;  /* ... and the field's offset inside that parameter */
	char *symbol;      /* RV_SYMBOL: its name */
	uint32_t evidence; /* RV_PARAM / RV_SYMBOL: the statement (original's
	                      numbering) that reads the field or the symbol */
	uint32_t stmt;     /* live-in: first use in the original's cut (or the
	                      spliced cut's, in its numbering); live-out: last
	                      definition in the original's cut */
} ReplayReg;

/* A shared-memory variable the block holds, copied whole. */
typedef struct {
	char *name;
	uint64_t bytes; /* its size (dynamic: the launch's dynamic_shared_bytes) */
	uint32_t align;
	bool dynamic; /* an unsized .extern .shared array */
	uint64_t off; /* where it sits in a block's shared state */
	bool is64;    /* its address is taken as 64 bits (mov.u64) */
} ReplayShared;

/* A global access of a cut, and the launch buffer it is of. */
typedef struct {
	uint32_t stmt; /* in the numbering of its cut's module */
	bool spliced;  /* of the spliced cut */
	bool store;
	int buffer; /* the manifest's buffer index, or -1 (a module symbol) */
	char *what; /* "buffer 'weights' (parameter +40)", "symbol 'g'" */
} ReplayAccess;

/* Bytes [lo, hi) of launch buffer `buf` that a cut writes: taken at the
 * launch's start (put back before each entry) and at the end of the
 * entry's launch (the end state the proof compares), `at` bytes into the
 * state's concatenation of every span. */
typedef struct {
	int buf;
	uint64_t lo, hi;
	uint32_t stmt; /* the first store of the cut that writes them */
	bool spliced;  /* ... of the spliced cut */
	bool bounded;  /* the address facts bound them (else: the whole buffer) */
	uint64_t at;
} ReplaySpan;

typedef struct {
	/* the cut: in the original, and in the spliced module */
	uint32_t first, last;
	uint32_t s_first, s_last;
	uint32_t first_line, last_line;
	VEC(ReplayReg) live_in;  /* union of both cuts' live-ins (no special registers) */
	VEC(ReplayReg) live_out; /* the original's live-outs */
	VEC(ReplayShared) shared;
	uint64_t shared_bytes;    /* one block's shared state, all variables */
	VEC(ReplayAccess) access; /* global reads and writes of both cuts */
	VEC(int) buffers_in;      /* buffers taken whole at the launch's start */
	VEC(int)
	buffers_out; /* buffers the cuts write (compared whole
	                between the entries) */
	VEC(ReplaySpan)
	spans;               /* the bytes of them the cuts write, by
	                        buffer and offset, none overlapping */
	uint64_t span_bytes; /* all spans' bytes */
	VEC(int)
	arrays_in; /* arrays taken whole at the launch's start and
	              put back: those the cuts write, and those they
	              read that an earlier launch may write */
	VEC(int)
	arrays_out; /* arrays the cuts write through a surface:
	               compared whole at the end */
	VEC(int)
	textures;          /* arrays the cuts fetch through a texture, which
	                      no surface writes (the layer's contents) */
	uint32_t barriers; /* bar.sync / barrier statements in the cuts */
	/* what replay cannot do: one line each ("s7771 (line 13185): ..."); the
	 * plan is replayable when it is empty */
	StrBuf refused;
	uint32_t nrefused;
	/* the launch */
	unsigned grid[3], block[3];
	uint32_t param_size;
	uint64_t warps; /* warps of the grid */
	uint64_t blocks;
} ReplayPlan;

typedef struct {
	const Manifest *mf;
	const MfLaunch *launch; /* the launch of the entry */
	const Module *mo;       /* the original */
	const Func *fo;
	Dataflow *dfo;
	uint32_t first, last; /* the cut, in the original */
	const Module *ms;     /* the spliced module (may equal mo: no splice) */
	const Func *fs;
	Dataflow *dfs;
	uint32_t s_first, s_last; /* the cut, in the spliced module */
	/* the spliced cut's text in ms->src: the region the splice wrote (its
	 * `{ }` scope and declarations included); 0, 0: the statements' */
	size_t s_off, s_len;
} ReplayRequest;

/*
 * The state plan of req's cut.  Returns 0 with the plan (refusals in
 * plan->refused, the plan otherwise complete), or -1 when the analysis
 * itself fails (a range outside the function).  Release with
 * replay_plan_release either way.
 */
int replay_plan(const ReplayRequest *req, ReplayPlan *plan, Err *e);
void replay_plan_release(ReplayPlan *plan);

/* The plan as text (what `replay --plan` prints) and as JSON (cJSON). */
void replay_plan_text(const ReplayPlan *plan, const Manifest *mf, StrBuf *out);
struct cJSON;
struct cJSON *replay_plan_json(const ReplayPlan *plan, const Manifest *mf);

/* ---- a cut made ready (prep.c) ------------------------------------------------- */

typedef struct {
	ReplayRequest req;
	StrBuf spliced; /* the spliced module's text */
	Module *ms;     /* its parse (req.ms) */
	Dataflow *dfo, *dfs;
	uint32_t phase; /* the recipe's phase, 0 for a statement range */
	char *template_name;
	char sha256[65]; /* of the original module's bytes */
} ReplayCut;

/*
 * Splices recipe r into the original module mo (splice_many with the one
 * recipe, as the main job does) and fills c: the spliced module parsed, the
 * dataflow of both entries, the cut's range in each (the spliced one: the
 * statements inside the region the splice wrote), the launch of the
 * manifest that runs the entry (one shape only).  Returns 0, or -1 naming
 * what failed.  Release with replay_cut_release either way.
 */
int replay_prepare(const Manifest *mf, const Module *mo, const Recipe *r,
                   const char *ptx_root, ReplayCut *c, Err *e);
void replay_cut_release(ReplayCut *c);

/* ---- the replay module and the dump (module.c) ---------------------------------- */

/* The symbols of the state (each a .u64 holding an address the host sets). */
#define REPLAY_SYM_REGS "__d4r_replay_regs"     /* the registers: the probe dump */
#define REPLAY_SYM_SHARED "__d4r_replay_shared" /* [block][start|end][shared bytes] */
#define REPLAY_SYM_PARAMS "__d4r_replay_params" /* the dump launch's parameter block */
#define REPLAY_ENTRY_ORIGINAL "__d4r_replay_original"
#define REPLAY_ENTRY_SPLICED "__d4r_replay_spliced"

/* Records of the state's probe plan. */
enum { REPLAY_REC_START, REPLAY_REC_SYMBOLS, REPLAY_REC_END, REPLAY_NREC };

/*
 * The probe plan of the dump (positions in the original): before the
 * cut's first statement every live-in register, and (lane 0 of each warp)
 * the address of every shared variable the cut's state holds and of each
 * symbol a live-in is rebased on; after the last statement every
 * live-out.  The start and end records copy the block's shared memory out
 * (between two bar.sync, in the record's code).  Laid out.
 */
int replay_dump_plan(const ReplayPlan *plan, const Module *mo, const Func *fo,
                     ProbePlan *out, Err *e);

/*
 * Appends the dump's three records of plan p to out (not laid out), their
 * shared copies at `area` bytes into the shared state and their labels
 * tagged with `cut`: one dump module takes the state of several cuts (the
 * shared state then [cut][block][start, end][bytes], each cut's area
 * blocks x 2 x its shared_bytes).  replay_dump_plan is this for one cut
 * at 0, laid out and checked.
 */
void replay_dump_records(const ReplayPlan *p, const Module *mo, unsigned cut,
                         uint64_t area, ProbePlan *out);

/*
 * The replay module: the original's header, module-level declarations and
 * .func definitions, the three state symbols, and two entries with the
 * kernel's parameters, REPLAY_ENTRY_ORIGINAL (the original's cut) and
 * REPLAY_ENTRY_SPLICED (the spliced cut), each: the shared state in, a
 * barrier, the live-ins loaded and rebased, the cut's text as it stands
 * in its module, the live-outs stored, a barrier, the shared state out.
 * `dp` is replay_dump_plan's.  -1 when the plan refuses.
 */
int replay_module(const ReplayPlan *plan, const ProbePlan *dp, const ReplayRequest *req,
                  StrBuf *out, Err *e);

/*
 * The dump module: the original instrumented with `dp` (probe_instrument,
 * the registers' symbol REPLAY_SYM_REGS, REPLAY_SYM_SHARED declared after
 * it), every line of the original a line of it.  Returns 0 or -1.
 */
int replay_dump_module(const ProbePlan *dp, const Module *mo, const Func *fo, StrBuf *out,
                       Err *e);

/* ---- the GPU side (run.c) ------------------------------------------------------- */

#include "gpu/child.h"

/* The state at the cut: what the dump took (and what the cache holds). */
typedef struct {
	unsigned char *regs; /* the registers' dump (probe layout) */
	uint64_t regs_len;
	unsigned char *shared; /* [block][start, end][shared_bytes] */
	uint64_t shared_len;
	unsigned char *params; /* the dump launch's parameter block */
	uint32_t params_len;
	unsigned char **bufs; /* each plan->buffers_in, at the launch's start */
	uint64_t *buf_len;
	size_t nbufs;
	/* the bytes the cuts write (plan->spans, concatenated): at the
	 * launch's start and at the end of the entry's launch */
	unsigned char *span_start, *span_end;
	uint64_t span_len;
	/* each plan->arrays_in at the launch's start, each plan->arrays_out
	 * at the end of the entry's launch (rows packed) */
	unsigned char **arr_start, **arr_end;
	size_t narr_in, narr_out;
	uint64_t *arr_len; /* [narr_in + narr_out]: the starts', then the ends' */
} ReplayState;
void replay_state_release(ReplayState *st);
/* The state as one file's bytes, and back (-1 when the bytes are not a
 * state of this plan's sizes: a stale or foreign cache file). */
void replay_state_write(const ReplayState *st, StrBuf *out);
int replay_state_read(const unsigned char *p, size_t n, const ReplayPlan *plan,
                      const Manifest *mf, const ProbePlan *dp, ReplayState *st, Err *e);
/* The cache key of a state: sha256 of the dump module, the manifest's
 * bytes, and the contents of every input file it names. */
int replay_state_key(const char *dump_ptx, size_t n, const Manifest *mf, char key[65],
                     Err *e);

/* What one entry of the replay module left. */
typedef struct {
	unsigned char *regs; /* the registers' buffer after the launch */
	unsigned char *shared;
	unsigned char **bufs; /* each plan->buffers_out */
	unsigned char **arrs; /* each plan->arrays_out (rows packed) */
	double ms;            /* the launch, CUDA events */
} ReplayEnd;

typedef struct {
	const Manifest *mf;
	size_t launch; /* the index of the launch that runs the entry */
	const ReplayPlan *plan;
	const ProbePlan *dp;
	const char *dump_ptx; /* the dump module, reduced (NULL: state given) */
	size_t dump_len;
	const ReplayState *state; /* the cached state, or NULL: dump first */
	const char *replay_ptx;
	size_t replay_len;
	double timeout_s;
	bool no_cache; /* no compiled-image cache */
	const char *cache_dir;
	int device;
} ReplayJob;

typedef struct {
	GpuStatus status;
	char *message;
	ReplayState state; /* when the child dumped it */
	bool dumped;
	ReplayEnd end[2]; /* original, spliced */
	double dump_jit_s, replay_jit_s, dump_run_ms;
	bool dump_jit_cached, replay_jit_cached;
	double child_s;
	char device[128];
} ReplayRun;

/* Runs job in a child process (see run.c).  0 when the child ran (res->status
 * says how it ended), -1 when it could not start. */
int replay_run(const ReplayJob *job, ReplayRun *res, Err *e);
void replay_run_release(ReplayRun *res, const ReplayPlan *plan);

/*
 * Several cuts' states from one dump (replay_dump_records of each into
 * `all`): `all_state` is the state of `all` and of `all_plan` (regs of
 * all's layout, the shared areas one after the other, the union of the
 * buffers read and of the arrays taken, every cut's spans one after the
 * other); cut c's records start at record rec0, its shared area at `area`
 * and its spans at `span_at`.  *out gets cut c's state as its own dump
 * plan `dp` lays it out.
 */
void replay_state_split(const ReplayState *all_state, const ProbePlan *all,
                        const ReplayPlan *all_plan, size_t rec0, uint64_t area,
                        uint64_t span_at, const ReplayPlan *p, const ProbePlan *dp,
                        ReplayState *out);

/* One difference between two end states. */
typedef struct {
	bool any;
	uint64_t
	    count; /* values (registers x lanes, shared or buffer bytes) that differ */
	const char *where; /* "register", "shared", "buffer", "array" */
	unsigned block[3];
	unsigned warp, lane;
	char what[160];    /* the register, or "arena+1234", "buffer 'plane'+16" */
	char a[96], b[96]; /* the values as text */
	uint64_t ulps;     /* registers: probe_distance; PROBE_DIST_NAN */
	bool has_ulps;
} ReplayDiff;

/* Several replays in one child: one context, the layer opened once, each
 * item's module, both entries, the proof and the verdict. */
typedef struct {
	const ReplayPlan *plan;
	const ProbePlan *dp;
	const ReplayState *state;
	const char *ptx;
	size_t len;
} ReplayItem;

typedef struct {
	bool ran; /* the entries ran (else message says why) */
	char message[512];
	ReplayDiff proof, verdict;
	double ms[2];
} ReplayVerdict;

typedef struct {
	const Manifest *mf;
	size_t launch;
	const ReplayItem *items;
	size_t n;
	double timeout_s;
	bool no_cache;
	const char *cache_dir;
	int device;
} ReplayMany;

/* out[0..job->n) (zeroed by the caller).  0 when the child ran (*status,
 * *message (malloc'd or NULL): how it ended), -1 when it could not start. */
int replay_run_many(const ReplayMany *job, ReplayVerdict *out, GpuStatus *status,
                    char **message, Err *e);

/* ---- the proof and the verdict (verdict.c) -------------------------------------- */

/* The end state of entry `end` against the dump's: the proof.  Registers,
 * shared memory, then the bytes of every span (the buffer and byte that
 * differ first), then each array the cuts write. */
void replay_prove(const ReplayPlan *plan, const ProbePlan *dp, const Manifest *mf,
                  const ReplayState *st, const ReplayEnd *end, ReplayDiff *out);
/* The spliced entry's end state against the original's. */
void replay_compare(const ReplayPlan *plan, const ProbePlan *dp, const Manifest *mf,
                    const ReplayEnd *orig, const ReplayEnd *spl, ReplayDiff *out);
/* "block (3,1,0) warp 2 lane 17 register %r2849: 0x3c00... vs ..., 1 ulp" */
void replay_diff_text(const ReplayDiff *d, StrBuf *out);
/* The same as a JSON object: in, block, [warp, lane, ulps: registers], what,
 * original, other, count (the man page's first_difference). */
struct cJSON *replay_diff_json(const ReplayDiff *d);

#endif
