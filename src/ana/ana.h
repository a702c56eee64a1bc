/*
 * ana.h - analyses over one function of a parsed module.
 *
 *   dataflow.c  the Dataflow of a function: what each statement defines
 *               and uses, per statement and per register
 *   names.c     which names are registers (ranges, special registers, { }
 *               scopes), labels, module variables
 *   cfg.c       basic blocks, successors, predecessors, dominators
 *   live.c      liveness and reaching definitions
 *   mem.c       the state spaces a statement names and what it does to
 *               memory (from the opcode alone)
 *   addr.c      address tracking: (base, variable part, constant offset) of
 *               every memory access
 *   cut.c       the cut interface of a statement range: live-in, live-out,
 *               memory effects and the read/write-dependency verdict; the
 *               loops a range holds or cuts in two
 *   groups.c    wgmma groups in flight at every statement (commit/wait)
 *   phases.c    what a phase is (from the statement flags), and the mma
 *               phases' gemm fields and epilogues
 *   sources.c   the sources of a phase's A, B and C (phases.c and
 *               sources.c share phase_internal.h)
 *   operands.c  the operands of the mma of a range: each register's
 *               source, tiles and k-steps, loads and their reload safety
 *   wgmma.c     the facts of each wgmma.mma_async (its own header,
 *               wgmma.h): shape, operands, decoded matrix descriptors
 *
 * Each file uses only those above it in this list (dataflow.c, names.c,
 * cfg.c and live.c build one Dataflow together and share its inside,
 * df_internal.h).  The sections below follow the same order.
 *
 * Statement numbers are function-local (sN as printed), 0-based.
 * Nothing here prints or exits: errors go to the Err given.  The queries
 * that fill the Dataflow's caches take a `Dataflow *`; the ones that only
 * read it a `const Dataflow *`.
 */
#ifndef D4R_ANA_H
#define D4R_ANA_H

#include "base/err.h"
#include "base/strbuf.h"
#include "ptx/module.h"

typedef struct Dataflow Dataflow;

/* State spaces (names in mem.c: space_name). */
typedef enum {
	SP_GENERIC, SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_CONST, SP_PARAM, SP_TEX, SP_SURF,
	SP__COUNT
} Space;

/* ---- the dataflow of a function (dataflow.c) ----------------------------- */

typedef struct {
	Str name;        /* "%r12", "%tid.x", "low" (inline-asm names without %) */
	Str type;        /* ".b32", ".pred", ... from the declaration; empty for
	                    special registers and undeclared names */
	uint32_t bits;   /* width of one element: 1 for .pred, 16, 32, 64 ... */
	uint8_t vec;     /* .v2/.v4 register, else 0 */
	uint8_t special; /* %tid.x, %laneid, %ctaid.y, %clock ...: read-only */
} RegInfo;

/*
 * Builds the dataflow of function f: interns every register the function
 * declares or names (ranges `%r<N>` expand lazily: a name is a register if a
 * declaration covers it), records each statement's defined and used
 * registers and builds basic blocks (split at labels and after bra/brx/ret/
 * exit/trap and guarded branches); liveness and reaching definitions are
 * solved as queries ask for them.
 * Which operands are defined and which used is decided by the opcode:
 * stores, branches and barriers define nothing; mma/wmma/wgmma define D and
 * use A, B, C (a wgmma reads D as C unless scale-d is the immediate 0);
 * atom/red/ld define their destination; a guard is a use.
 */
Dataflow *df_build(const Module *m, const Func *f, Err *e);
void df_free(Dataflow *df);

const Module *df_module(const Dataflow *df);
const Func *df_func(const Dataflow *df);
uint32_t df_nstmt(const Dataflow *df);
/* Registers defined / used by statement i (ids, in operand order). */
const uint32_t *df_defs(const Dataflow *df, uint32_t stmt, uint32_t *n);
const uint32_t *df_uses(Dataflow *df, uint32_t stmt, uint32_t *n);
/* Does statement `stmt` define / use `reg`?  *kills (if given) says whether
 * the definition replaces the whole value (false for a guarded definition
 * or a vector-element write). */
bool df_stmt_defines(const Dataflow *df, uint32_t stmt, uint32_t reg, bool *kills);
bool df_stmt_uses(Dataflow *df, uint32_t stmt, uint32_t reg);
/* Is operand o a literal whose bits are all zero: the integer 0 (0, 00,
 * 0x0, 0b0, 0U, -0) or the float +0.0 (0f00000000, 0d0000000000000000,
 * 0.0)?  -0.0 (0f80000000) is not. */
bool df_opd_is_zero(const Module *m, const Operand *o);
/* Is s a mov of such a zero, or of a vector of them into a vector variable
 * (`mov.v4.f32 c, {0f0, 0f0, 0f0, 0f0}`: each element of c is zero)?  The
 * one definition of a zero C (phases, operand facts, native phases). */
bool df_stmt_is_zero_mov(const Module *m, const Stmt *s);
/* Is s a cvt to or from a packed or half type (e4m3x2, e5m2x2, f16x2,
 * bf16x2, f16, bf16), or a pack (`mov.b32 %r, {%rs1, %rs2}`): what turns
 * one phase's D into another's A? */
bool df_stmt_is_conversion(const Module *m, const Stmt *s);
/* Does wgmma.mma_async statement s read its accumulator D?  Not when its
 * scale-d operand (the fourth) is the immediate 0: then D = A * B. */
bool df_wgmma_reads_d(const Module *m, const Stmt *s);
/* Register id of a leaf operand (REG / IDENT naming a register), or -1. */
int64_t df_opd_reg(Dataflow *df, uint32_t opd_index);
/* Operand names one element of a vector register ("%v.x"). */
bool df_opd_partial(Dataflow *df, uint32_t opd_index);

/*
 * A cache that an analysis built on the dataflow keeps per function (addr.c
 * keeps the addresses it resolved and the values it met on the way):
 * df_cache gives the cache of `type`, made by type->make on the first call,
 * and df_free frees it with type->free.  The type is a static object of the
 * analysis that owns the cache; the Dataflow stores the pointer and knows
 * nothing of what it points to.
 */
typedef struct DfCacheType {
	void *(*make)(Dataflow *df);
	void (*free)(void *cache);
} DfCacheType;
void *df_cache(Dataflow *df, const DfCacheType *type);

/* ---- registers and names (names.c) --------------------------------------- */

uint32_t df_nregs(const Dataflow *df);
const RegInfo *df_reg(const Dataflow *df, uint32_t reg);
/* Register id of a name, or -1 if the function has no such register. */
int64_t df_reg_find(Dataflow *df, Str name);
/* A .func parameter declared in .reg space (defined by the caller). */
bool df_reg_is_param(const Dataflow *df, uint32_t reg);
/* What a name is in this function: a register, a label, a module variable
 * (*space, if given, gets its state space), or something else (a
 * parameter, a function, an undeclared name). */
enum { DF_NAME_OTHER, DF_NAME_REG, DF_NAME_LABEL, DF_NAME_VAR };
int df_name_kind(Dataflow *df, Str name, Space *space);
/* An unsized `.extern .shared` array (dynamic shared memory). */
bool df_var_unsized(const Dataflow *df, Str name);

/* ---- control flow (cfg.c) ------------------------------------------------ */

/* Basic blocks: split at labels and after bra/brx/ret/exit/trap. */
uint32_t df_nblocks(const Dataflow *df);
uint32_t df_block_of(const Dataflow *df, uint32_t stmt);
void df_block_range(const Dataflow *df, uint32_t block, uint32_t *first, uint32_t *end);
const uint32_t *df_block_succs(const Dataflow *df, uint32_t block, uint32_t *n);
const uint32_t *df_block_preds(const Dataflow *df, uint32_t block, uint32_t *n);

/*
 * A natural loop: its header block and every block from which a back edge
 * (a branch to the header from a block the header dominates) is reached
 * without passing the header.  Statements, not blocks, name it: header is
 * the header block's first statement (its label stands before it), back
 * the last statement of the latest block that goes back to the header (the
 * `@%p bra $L__BB0_1` of compiler output), lo and hi the loop's first and
 * last statement; nstmt counts its statements (hi - lo + 1 when the loop
 * is one run of statements, as in compiler output).
 */
typedef struct {
	uint32_t header, back;
	uint32_t lo, hi;
	uint32_t nstmt;
} DfLoop;
/* The function's loops, in header order (built on the first call). */
uint32_t df_loops(Dataflow *df, const DfLoop **loops);
/* Is statement `stmt` in loop k (an index into df_loops)? */
bool df_loop_holds(Dataflow *df, uint32_t k, uint32_t stmt);

/* ---- liveness and reaching definitions (live.c) -------------------------- */

enum { DF_DEF_NONE = -1, DF_DEF_MANY = -2 };
/*
 * The statement whose definition of `reg` reaches the use at statement
 * `stmt`: its index, DF_DEF_NONE if no definition in the function reaches it
 * (the register is live into the function or undefined), DF_DEF_MANY if more
 * than one does (a merge of paths).  A guarded definition does not kill the
 * one before it (both reach: DF_DEF_MANY), and the function entry counts as
 * a definition (defined on one path only: DF_DEF_MANY).
 */
int64_t df_reaching_def(Dataflow *df, uint32_t stmt, uint32_t reg);
/*
 * Every definition of `reg` that reaches the use at statement `stmt`, each
 * once, ascending: returns how many there are and writes the first `max`
 * of them to out; *entry (if given) says whether the function entry reaches
 * too (the register is undefined, or live into the function, on some
 * path).  Not memoised: a walk over the blocks back from stmt, for the
 * uses where df_reaching_def says DF_DEF_MANY and the whole set matters.
 */
uint32_t df_reaching_defs(Dataflow *df, uint32_t stmt, uint32_t reg, uint32_t *out,
                          uint32_t max, bool *entry);
/* The last statement before `stmt` in stmt's basic block that defines
 * `reg` (killing it or not), or DF_DEF_NONE: what a use at stmt reads
 * whenever that definition takes effect. */
int64_t df_def_before_in_block(Dataflow *df, uint32_t stmt, uint32_t reg);
/* Is `reg` live just after statement `stmt` (read later on some path before
 * being redefined)? */
bool df_live_after(Dataflow *df, uint32_t stmt, uint32_t reg);
/* Statements that use the value `reg` defined at `stmt` (def-use chain);
 * returns the count and fills at most `max` indices (ascending, distinct). */
uint32_t df_uses_of(Dataflow *df, uint32_t stmt, uint32_t reg, uint32_t *out,
                    uint32_t max);
/* Is `reg` live on entry to block `block`? */
bool df_live_in_block(Dataflow *df, uint32_t block, uint32_t reg);

/* ---- state spaces and memory effects (mem.c) ----------------------------- */

const char *space_name(Space s);
/* State space a memory statement accesses (from its modifiers). */
Space stmt_space(const Module *m, const Stmt *s);
/* The spaces named by the opcode's modifiers, in order (at most 2:
 * cp.async.bulk.shared::cluster.global gives shared, global); returns how
 * many. */
int stmt_spaces(const Module *m, const Stmt *s, Space out[2]);
/* What one statement does to memory. */
enum { ME_LOAD = 1, ME_STORE = 2, ME_ATOMIC = 4, ME_BARRIER = 8, ME_CALL = 16 };
typedef struct {
	uint32_t flags;  /* ME_* */
	Space load;      /* space read (ME_LOAD) */
	Space store;     /* space written (ME_STORE) */
} MemEffect;
/* ld/ldu/ldmatrix/tex/tld4/suld/wmma.load/multimem.ld_reduce load, and
 * wgmma.mma_async loads shared memory (through its descriptors); st/
 * stmatrix/sust/wmma.store/tensormap.replace store; atom/red/sured/
 * multimem.red/cp.reduce are atomics (load and store); cp.async* store the
 * first space and load the second; bar/barrier/membar/fence/mbarrier/
 * cp.async.mbarrier are barriers; call loads and stores generic memory. */
MemEffect df_mem_effect(const Dataflow *df, uint32_t stmt);

/* ---- address tracking (addr.c) ------------------------------------------- */

typedef enum {
	AB_NONE,      /* unresolved */
	AB_PARAM,     /* a kernel parameter (param_off: offset inside it) */
	AB_SYMBOL,    /* a .shared/.global/.const/.local symbol */
	AB_SPECIAL,   /* only special registers and constants (%tid.x*16+64) */
	AB_ABSOLUTE,  /* a constant address */
} AddrBase;

typedef struct {
	AddrBase base;
	Space space;         /* the access's state space */
	Str base_name;       /* parameter or symbol name */
	int64_t param_off;   /* AB_PARAM: which bytes of the parameter hold the
	                        pointer (a struct field read with ld.param at +N) */
	int64_t offset;      /* constant byte offset from the base */
	bool variable;       /* the address also has thread-dependent terms */
	bool param_ptr;      /* AB_PARAM: true when the base is the pointer value
	                        read from the parameter's bytes at param_off
	                        (ld.param.u64 %rd, [p+40]); false when the address
	                        is inside the parameter itself (mov %rd, p) */
	uint64_t var_key;    /* identity of the variable part: equal keys (non-0)
	                        mean the same value in the same thread; 0 when
	                        there is none or it could not be summarised */
	bool dynamic_shared; /* AB_SYMBOL: an unsized .extern .shared array: all
	                        such symbols name the same bytes */
	uint32_t elem_bytes; /* bytes per element accessed (4 for .u32 / .v4.u32) */
	uint32_t nelem;      /* elements accessed (4 for .v4) */
	bool stride_known;   /* the variable part is exactly the sum of
	                        stride[i].bytes x special register stride[i].reg
	                        (%tid.x, %laneid ...; nstride 0: there is none),
	                        every step of it proven not to wrap */
	uint8_t nstride;
	struct {
		uint32_t reg;
		int64_t bytes;
	} stride[4];         /* in register id order */
	const char *why;     /* AB_NONE: why it did not resolve (static string) */
} Addr;

/*
 * Resolves the address operand of memory statement `stmt` (ld, ldu, st,
 * ldmatrix, stmatrix, atom, red, cp.async, tex, tld4, suld, sust, prefetch)
 * through mov/add/sub/mad/mul/shl/cvta/cvt chains with constants back to a
 * base.  Returns 1 when it resolved, 0 when not (out->why says why; never a
 * guess), -1 when the statement has no address operand.
 */
int addr_resolve(Dataflow *df, uint32_t stmt, Addr *out);
/* The resolved address of memory statement `stmt` (addr_resolve gave 1),
 * or NULL; the pointer stays valid while df lives. */
const Addr *addr_cached(Dataflow *df, uint32_t stmt);
/* The value register `reg` holds where statement `stmt` reads it, by the
 * same rules, as an address (a shared-memory address in a register, the
 * start of a wgmma matrix descriptor): 1 when it resolved, 0 when not
 * (out->why), -1 for a statement or register outside the function.
 * elem_bytes and nelem are 0: no access is made.  Not cached. */
int addr_value(Dataflow *df, uint32_t stmt, uint32_t reg, Addr *out);
/* The value of an integer literal's text ([-]digits, 0x.., 0b.., 0 octal,
 * a U suffix; a 64-bit pattern above INT64_MAX comes back wrapped, as its
 * bits): false when it is not one. */
bool ana_int_value(Str s, int64_t *out);

/* ---- the cut interface (cut.c) ------------------------------------------- */

/* Are two resolved accesses provably disjoint?  Different
 * symbols are; the same base with no variable part and non-overlapping
 * [offset, offset + elem_bytes * nelem) are; a variable part proves nothing
 * across threads, so only .local accesses with the same var_key compare
 * offsets.  Anything else may alias (false). */
bool addr_disjoint(const Addr *a, const Addr *b);
/* May an access to space a and one to space b touch the same memory (the
 * same space; generic with any; a surface with a texture)? */
bool space_may_alias(Space a, Space b);

typedef struct {
	uint32_t reg;
	uint32_t stmt;   /* live-in: first use inside the range (or, with
	                    through, the definition); live-out: last definition
	                    inside the range */
	uint32_t use;    /* live-out: first use after the range (any path) */
	bool through;    /* live-in: not read in the range, but written there by
	                    a definition that does not kill (guarded, or one
	                    vector element) while live after it: the value from
	                    before the range leaves it when the write does not
	                    take effect */
} CutReg;

typedef struct {
	uint32_t first, last;            /* inclusive statement range */
	VEC(CutReg) live_in;             /* read in range, reaching def before first */
	VEC(CutReg) live_out;            /* defined in range, read after last */
	uint32_t loads[SP__COUNT], stores[SP__COUNT];
	uint32_t atomics, barriers;
	/* read/write dependency: the range stores to memory a statement after it
	 * may read, or reads memory that it also writes out of order.  Each
	 * entry is a pair (statement in range, statement it conflicts with). */
	bool rw_dependency;
	VEC(uint32_t) rw_pairs;          /* flattened pairs */
	StrBuf rw_reason;                /* one line per pair, for the report */
	VEC(uint32_t) loops;             /* the loops it holds whole (df_loops) */
} CutInterface;

/* Computes the cut interface of [first, last].  Returns 0 or -1.
 * live_in is in first-use order and includes special registers (%tid.x ...)
 * read in the range, and the registers the range writes only by guarded or
 * partial definitions whose old value may leave it (through); live_out is
 * in first-definition order.  rw_pairs holds
 * at most one pair per statement of the range: (store, the first later
 * load that may read it) or (load, the nearest earlier store of the range
 * it may read). */
int df_cut(Dataflow *df, uint32_t first, uint32_t last, CutInterface *out, Err *e);
/* Bytes per warp the registers carry across a cut: register bits (a
 * predicate counts as 8) x vector width x 32 lanes, summed. */
uint32_t cut_warp_bytes(const Dataflow *df, const CutReg *regs, size_t n);
void cut_release(CutInterface *c);
/*
 * Does [first, last] cut a loop in two: hold some of its statements and
 * some outside it, without holding the whole loop?  (A range inside one
 * loop body, or apart from a loop, or around all of it, does not.)
 * Returns the first such loop's index (df_loops), with *in a statement of
 * the loop in the range and *out one of the loop outside it (the header or
 * the back edge when the range leaves either out), or -1.
 */
int64_t df_cut_loop_split(Dataflow *df, uint32_t first, uint32_t last, uint32_t *in,
                          uint32_t *out);
/* Widens [*first, *last] until it cuts no loop in two: each loop it cuts
 * is taken whole, from its first to its last statement. */
void df_cut_hold_loops(Dataflow *df, uint32_t *first, uint32_t *last);

/* ---- wgmma groups in flight (groups.c) ----------------------------------- */

/*
 * The commit/wait state just before or after a statement: which numbers of
 * committed wgmma groups may be in flight (bit c: c of them, c = 0..31, 31
 * meaning 31 or more), whether a wgmma.mma_async may be issued and not yet
 * committed (WG_OPEN) or none may (WG_CLOSED) or both on different paths,
 * and for the writers the state was built for, the numbers k of commits
 * since the latest writer while its group is not complete (bit k), or
 * WG_DONE (no writer's group pending).  A zero state is a statement no
 * path from the entry reaches.
 */
enum { WG_CLOSED = 1, WG_OPEN = 2 };
#define WG_DONE (1ull << 63)
typedef struct {
	uint32_t pending;
	uint8_t open;
	uint64_t writer;
} WgState;
typedef struct WgGroups WgGroups;
/* Solves the state at every statement of df's function, following the
 * groups of the wgmma.mma_async at writers[0..nw) (any order; nw may be 0). */
WgGroups *groups_build(Dataflow *df, const uint32_t *writers, size_t nw);
void groups_free(WgGroups *g);
WgState groups_before(const WgGroups *g, uint32_t stmt);
WgState groups_after(const WgGroups *g, uint32_t stmt);
/* The first wgmma.wait_group in [from, to] (statement order) where the
 * writers' groups become complete on every path: some writer's group is
 * pending just before it and none just after.  Its statement, or -1. */
int64_t groups_completing_wait(const WgGroups *g, uint32_t from, uint32_t to);
/* Is stmt a wgmma statement; *what (if given): "mma_async", "commit_group",
 * "wait_group" or "fence". */
bool groups_is_wgmma(const WgGroups *g, uint32_t stmt, const char **what);
/*
 * The cut of the wgmma.mma_async in [first, last] (a phase) through the
 * wait_group that completes their groups on every path (the first after
 * `last`), widened to hold whole each loop it would cut in two (the
 * matmul loop whose groups complete after its back edge: from the loop's
 * first statement): [*cut_first, *cut_last].  Returns the wait's
 * statement, or -1 when the range holds no wgmma.mma_async or no wait
 * completes their groups.
 */
int64_t groups_through_wait(Dataflow *df, uint32_t first, uint32_t last,
                            uint32_t *cut_first, uint32_t *cut_last);
/* The smallest and largest count in a `pending` mask (0, 0 for none). */
void groups_range(uint32_t mask, unsigned *lo, unsigned *hi);

/* ---- phases (phases.c, sources.c) ---------------------------------------- */

typedef VEC(int64_t) I64Vec;

typedef enum {
	AK_SHARED,
	AK_GLOBAL,
	AK_CONVERTED,
	AK_PASSTHROUGH,
	AK_COMPUTED,
	AK_MIXED,
	AK_GENERIC, /* loaded through a generic address of unknown space */
	AK_LOADED, /* loaded from another space (a_space: local, const, param, tex ...) */
} ASrcKind;
typedef enum {
	CK_ZERO,
	CK_PHASE_ACC,
	CK_LOADED,
	CK_COMPUTED,
	CK_MIXED,
	CK_LOOP_CARRIED, /* an mma's D around a loop, c_entry_* on entry */
} CKind;
const char *asrc_kind_name(ASrcKind k);
const char *ckind_name(CKind k);

typedef struct {
	uint32_t number;            /* 1-based, in statement order */
	uint32_t first, last;       /* statement range holding the phase's mma */
	uint32_t epi_first, epi_last; /* epilogue; epi_last < epi_first when empty */
	uint32_t mma, k_chain_len, chains, m_tiles, n_tiles, k;
	bool banded;
	Str shape;                  /* "m16n8k32" */
	Str types;                  /* the opcode after the shape, ".row.col.f16.e4m3.e4m3.f16" */
	uint32_t inst_k;            /* K of one instruction (32 for m16n8k32) */
	/* operand sources */
	ASrcKind a_kind;
	int32_t a_from_phase;       /* AK_CONVERTED / AK_PASSTHROUGH: phase q, else -1 */
	Space a_space;              /* AK_LOADED: the space */
	bool a_descriptor;          /* A (of some tuples) is a wgmma matrix descriptor */
	Str a_through[4];           /* the opcodes (prmt.b32, cvt...) between the loads
	                               and A, in the order met */
	uint8_t a_nthrough;
	uint32_t a_through_evidence; /* the first such statement */
	CKind c_kind;
	int32_t c_from_phase;       /* CK_PHASE_ACC: phase q; CK_LOOP_CARRIED: the
	                               phase whose D comes round the loop (this one,
	                               or a later one of the loop body); else -1 */
	Space c_space;              /* CK_LOADED */
	CKind c_entry_kind;         /* CK_LOOP_CARRIED: the kind on entry to the loop */
	int32_t c_entry_from_phase; /* ... CK_PHASE_ACC: phase q, else -1 */
	Space c_entry_space;        /* ... CK_LOADED */
	I64Vec a_offsets;     /* AK_SHARED: distinct constant offsets, first-use order */
	I64Vec c_bytes;       /* CK_LOADED: sorted distinct element offsets */
	bool c_bytes_known;   /* CK_LOADED: c_bytes holds every element's offset
	                         (plain loads whose addresses resolve) */
	bool b_loaded;              /* B registers come from loads that resolved */
	int64_t b_lo, b_hi;         /* weight_bytes: [lo, hi] element offsets */
	Str b_base;                 /* the base the B loads resolve to (param name) */
	int64_t b_param_off;
	bool b_stride_known; /* every B address has the same variable part,
	                        exactly sum b_stride[i].bytes x register */
	uint8_t b_nstride;
	struct {
		Str reg; /* "%tid.x" */
		int64_t bytes;
	} b_stride[4];
	/* evidence: statement numbers behind the derived values */
	uint32_t a_evidence, c_evidence, b_evidence;
	StrBuf epilogue_ops;        /* one operation per line: "name N M ...", the
	                               statement numbers that show it */
} Phase;

typedef struct {
	Phase *v;
	size_t n;
} PhaseList;

/*
 * The phases of f by their definition alone, from the statement flags and
 * labels (no dataflow): maximal runs of mma statements in which two
 * consecutive mma are at most `gap` other statements apart (0: the man page's
 * definition, runs of consecutive mma), and their epilogues: up to the next
 * phase, and after the last one up to the next label, bra, brx, ret or exit
 * (not included).  Fills number, first, last, mma, epi_first and epi_last
 * of each phase; every other field is zero.  Release with phases_release.
 */
void ana_phase_find(const Module *m, const Func *f, unsigned gap, PhaseList *out);
/*
 * The statement range of phase n (1-based) of f, as ana_phase_find defines
 * it: [*first, *last] holds its mma statements, and with_epilogue extends
 * *last to the end of its epilogue (an empty epilogue leaves the phase's
 * own range).  Scans the statement flags only as far as phase n and its
 * epilogue reach.  Returns 0, or -1 when f has fewer than n phases (or n is
 * 0); *nphases (if given) gets how many phases were scanned, which on -1 is
 * every phase of f.
 */
int ana_phase_range(const Module *m, const Func *f, unsigned gap, uint32_t n,
                    bool with_epilogue, uint32_t *first, uint32_t *last, size_t *nphases);
/*
 * The one wording of a phase that does not exist, for every verb: sets e to
 * "CTX: phase N does not exist: WHO has K phases" (CTX: a file or an option,
 * or NULL for none; WHO: a layer's name, "enc4", or a function's) and
 * returns -1.  `nphases` is what ana_phase_range counted.
 */
int ana_phase_missing(const char *ctx, uint32_t n, const char *who, size_t nphases, Err *e);
/* The last statement of a cut of phase p: p->last, or with its epilogue
 * the epilogue's last statement (p->last when the epilogue is empty). */
uint32_t phase_cut_last(const Phase *p, bool with_epilogue);
/* mma statements (the parser's class: mma.sync, mma.sp, wmma.mma,
 * wgmma.mma_async) in statements [first, last] of f. */
uint32_t ana_mma_count(const Module *m, const Func *f, uint32_t first, uint32_t last);
/* Is statement s an mma (the same class)? */
bool ana_stmt_is_mma(const Stmt *s);
/* The first mma statement in [first, last] of f, or -1. */
int64_t ana_mma_first(const Module *m, const Func *f, uint32_t first, uint32_t last);
/* Does f hold an mma statement? */
bool ana_func_has_mma(const Module *m, const Func *f);

/* Finds the phases of the dataflow's function (ana_phase_find) and fills
 * their gemm fields, operand sources and epilogue operations.  Returns 0
 * or -1. */
int ana_phases(Dataflow *df, unsigned gap, PhaseList *out, Err *e);
void phases_release(PhaseList *pl);

/* The phases of one function, as ana_phases_funcs gives them. */
typedef struct {
	const Func *f;
	PhaseList pl;
	int rc;                     /* 0, or -1 with err set */
	Err err;
} FuncPhases;

/*
 * Builds the dataflow and finds the phases of each of fns[0..n), on up to
 * `jobs` threads (0: one per online CPU), largest function first; out[i]
 * is fns[i]'s, in the order given, whatever the threads did.  The module is
 * only read.  Release with func_phases_release.
 */
void ana_phases_funcs(const Module *m, const Func *const *fns, size_t n, unsigned gap,
                      unsigned jobs, FuncPhases *out);
void func_phases_release(FuncPhases *fp, size_t n);

/* ---- mma operands (operands.c) ------------------------------------------- */

typedef enum { ROLE_D, ROLE_A, ROLE_B, ROLE_C, ROLE__N } OpdRole;
const char *opd_role_name(OpdRole r);      /* "d", "a", "b", "c" */

/* Where an operand register's value comes from (its reaching definition). */
typedef enum {
	OV_LOAD,       /* a load: ld, ldu, ldmatrix (src: index in loads) */
	OV_ZERO,       /* a mov of literal zero */
	OV_MMA,        /* the D of an mma of the range (src: its index, elem: the
	                  word of its D); also every D word itself */
	OV_PHASE,      /* the D of an mma of another phase (src: its number, 0
	                  when the mma is in no phase of the list) */
	OV_CONVERTED,  /* a conversion: cvt to or from a packed or half type, or
	                  a pack mov.b32 %r, {..} */
	OV_COMPUTED,   /* any other statement */
	OV_UNDEF,      /* no definition reaches it (live into the function) */
	OV_MERGE,      /* several definitions reach it */
} OpdValue;
const char *opd_value_name(OpdValue v);    /* "load", "zero", "mma", ... */
const char *addr_base_name(AddrBase b);    /* "param", "symbol", ... */

typedef struct {
	uint32_t reg;          /* register id */
	uint32_t opd;          /* its operand (index in the module's operands) */
	int64_t def;           /* reaching definition at the mma, or DF_DEF_* */
	uint8_t value;         /* OV_* */
	int32_t src;           /* see OpdValue; -1 when none */
	uint32_t elem;         /* OV_LOAD: place in the load's destination;
	                          OV_MMA: word of that mma's D */
} OpdWord;

/* A load whose destination feeds an operand, and whether loading it again
 * at the start of the range reads the same bytes (operands.c says how that
 * is proven). */
typedef struct {
	uint32_t stmt;
	uint32_t roles;        /* bit (1 << OpdRole) per role it feeds */
	Space space;
	uint32_t ndest;        /* elements of its destination */
	int64_t base_reg;      /* the register of [reg] / [reg+disp], or -1 */
	int64_t disp;          /* the displacement (0 for [reg]) */
	int64_t base_def;      /* reaching definition of base_reg at the load */
	bool resolved;         /* addr_resolve resolved it: addr */
	Addr addr;
	bool reload_safe;
	const char *why;       /* when not safe: what stands in the way */
	int64_t blocker;       /* ... at this statement, or -1 */
	VEC(uint32_t) checked; /* stores between load and range, proved disjoint */
} OpdLoad;

typedef struct {
	uint32_t stmt;
	uint32_t m_tile, n_tile, k_step, chain;
	int32_t prev;          /* the mma whose D is this one's C, or -1 */
	uint32_t word[ROLE__N];/* first word of each role in PhaseOperands.words */
	uint8_t nword[ROLE__N];
	bool c_dup;            /* C names one register twice ({%r4474, %r4474}) */
} OpdMma;

typedef struct {
	uint32_t first, last;  /* the range */
	VEC(OpdMma) mma;       /* its mma statements, in order */
	VEC(OpdWord) words;
	VEC(OpdLoad) loads;    /* in the order the words first name them */
	uint32_t m_tiles, n_tiles, k_steps, chains;
	const char *unsupported; /* when set, why there are no facts ... */
	uint32_t unsupported_stmt; /* ... and at which statement */
} PhaseOperands;

/*
 * The operand facts of the mma statements in [first, last] of the
 * dataflow's function.  `pl` (may be NULL) gives the phase numbers that
 * OV_PHASE names.  Chains are found by reaching definition (an mma whose C
 * words are, word for word, the D of one earlier mma of the range continues
 * its chain); m-tiles are the distinct sequences of A tuples along a chain,
 * n-tiles those of B tuples.  A range holding wmma or wgmma statements (or
 * an operand that is not a whole register) gets out->unsupported and no
 * facts.  Returns 0, or -1 for a range outside the function.  Release with
 * phase_operands_release.
 */
int ana_operands(Dataflow *df, const PhaseList *pl, uint32_t first, uint32_t last,
                 PhaseOperands *out, Err *e);
void phase_operands_release(PhaseOperands *po);

/*
 * Would loading again, at statement `at`, what the load at statement `load`
 * loaded give the same values?  Fills *out (its address operand, what it
 * resolves to, the verdict: reload_safe, or why with the blocking
 * statement; the stores in between proved not to touch its bytes).  Safe
 * when: `load` is before `at`, unguarded and not volatile/relaxed/acquire;
 * its address is [reg] or [reg+disp]; no label in (load, at]; the base
 * register has the same reaching definition at both; no barrier, fence,
 * call or asynchronous copy in between, and every store or atomic in
 * between that may alias its space is proven disjoint by addr_disjoint.
 * Returns 0, or -1 when `load` is not a load (out->checked needs VEC_FREE
 * either way).
 */
int ana_reload_check(Dataflow *df, uint32_t load, uint32_t at, OpdLoad *out);

#endif
