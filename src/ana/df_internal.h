/*
 * df_internal.h - the inside of a Dataflow, shared by the files that build
 * and query it (ana.h is the interface; nothing outside src/ana includes
 * this).
 *
 *   names.c     the name table: registers (declared, ranges, special),
 *               labels, module variables; { } scopes
 *   dataflow.c  df_build and df_free; what each statement defines and
 *               uses; per register, the statements that define, kill and
 *               use it
 *   cfg.c       basic blocks, successors and predecessors, dominators
 *   live.c      liveness and reaching definitions
 *   cut.c       the cut interface, which reads the per-register lists and
 *               the blocks directly
 *
 * The functions declared at the end are the ones these files call across
 * each other; the static inline helpers are used by several of them.
 */
#ifndef D4R_ANA_DF_INTERNAL_H
#define D4R_ANA_DF_INTERNAL_H

#include "ana.h"

#include <string.h>

/* ---- the name table (names.c) -------------------------------------------- */

enum { NK_REG = 0, NK_NONREG = 1, NK_LABEL = 2 };

typedef struct {
	const char *p;
	uint32_t n;
	uint8_t kind;
	uint8_t partial; /* NK_REG via a vector element name ("%v.x") */
	uint8_t var;     /* NK_NONREG: 1 + Space of a module variable, or 0 */
	uint8_t scoped;  /* NK_REG declared in several scopes: see ScopedEnt */
	uint8_t seen;    /* build-time mark */
	int32_t id;      /* register id, or label statement */
} NameEnt;

typedef struct {
	Str prefix;
	uint32_t count;
	Str type;
	uint8_t vec;
	uint32_t *slot;  /* per member: register id + 1, 0 = not seen yet */
	uint64_t key;    /* the prefix's bytes as a word (prefixes of at most 8) */
	uint32_t bits;   /* type_bits(type) */
} RangeDecl;

typedef struct {
	const char *p;
	uint32_t n;
	uint32_t scope;
	int32_t id;
} ScopedEnt;

/* ---- reaching definitions (live.c) --------------------------------------- */

/* The definitions of a register that reach one point. */
typedef struct {
	uint32_t n;          /* distinct definitions, capped at 2 */
	uint32_t min, max;
	bool entry;          /* the function entry reaches it too */
} Reach;

/* What reaches a block entry, memoised per (block, register). */
typedef struct {
	uint64_t key;   /* (block << 32 | reg) + 1; 0 = empty */
	uint32_t n;     /* distinct definitions reaching the block entry, capped at 2 */
	uint32_t min, max;
	uint8_t entry;  /* the function entry reaches it (undefined / live-in) */
} MemoEnt;

/* ---- the Dataflow -------------------------------------------------------- */

/* One cache of df_cache: the type that made it, and what make returned. */
typedef struct {
	const DfCacheType *type;
	void *p;
} CacheSlot;

struct Dataflow {
	const Module *m;
	const Func *f;
	uint32_t nstmt;
	uint32_t opd0, nopd;
	int32_t *opdreg;           /* per operand of the function: reg id or -1 */
	uint8_t *opdpart;          /* per operand: names a vector element */
	uint8_t *opd_seen;         /* per operand: looked up (see df_opd_reg) */

	/* registers and the name table (names.c) */
	VEC(RegInfo) regs;
	uint32_t nbuilt;           /* registers known when the analysis ran (the
	                              definitions, then all uses: need_uses); a
	                              later df_reg_find of a declared but unused
	                              name adds one that nothing defines or uses */
	VEC(uint8_t) regparam;     /* .func .reg parameter */
	NameEnt *ht;
	uint32_t htcap, htn;
	VEC(RangeDecl) ranges;
	uint32_t *rtab;            /* range index + 1 by prefix word: see find_range */
	uint32_t rtab_mask;
	bool plain_digit;          /* a plain .reg name (or .reg parameter) is
	                              also a range member's name */

	/* scopes (names.c): only built when a name is declared in more than
	 * one scope */
	uint32_t *scope_parent;    /* per scope; scope 0 is the function body */
	uint32_t nscope;
	uint32_t *stmt_scope;      /* innermost scope of each statement, or NULL */
	ScopedEnt *sht;            /* (name, scope) -> register */
	uint32_t shtcap;

	/* per statement (dataflow.c): definitions at build time, uses when
	 * first asked for (stmt_uses): use_at[s] is where statement s's uses
	 * start in `uses` (UNSEEN until collected), use_n[s] how many */
	uint32_t *def_off;
	uint32_t *use_at, *use_n;
	uint32_t uses_todo;        /* statements whose uses are not collected yet */
	uint32_t uses_last;        /* the statement collected last, or UNSEEN */
	bool uses_shuffled;        /* collected out of statement order */
	VEC(uint32_t) defs;
	VEC(uint32_t) uses;        /* sized up front: never moves (see df_build) */
	VEC(uint8_t) defkill;
	uint32_t ndef_regs;        /* registers when the definitions were listed */

	/* per register, CSR over statements (sorted; dataflow.c) */
	uint32_t *rdef_off, *rdef;
	uint8_t *rdef_kill;
	uint32_t *rkill_off, *rkill;
	uint32_t *ruse_off, *ruse;
	bool uses_full;            /* ruse covers every register; else only those
	                              in ruse_for (df_need_uses_of), if any */
	uint64_t *ruse_for;
	/* df_need_uses_of's candidates while it scans: name -> register */
	struct { Str name; uint32_t reg, last; } *cand;
	uint32_t ncand_cap;
	VEC(uint32_t) cand_hits;   /* (candidate, statement) pairs */

	/* blocks (cfg.c) and liveness per register over them (live.c) */
	uint32_t nblk;
	uint32_t *blk_start;       /* nblk + 1 entries */
	uint32_t *blk_of;          /* per statement */
	uint32_t *succ_off, *succ;
	uint32_t *pred_off, *pred;
	uint32_t words;
	uint64_t *live_in, *live_out; /* per register, over blocks: see solve_reg */
	uint64_t *solved;          /* per register: its liveness is known */
	uint32_t *dom_pre, *dom_post; /* dominator tree numbers: see build_dom */
	bool loops_built;          /* loops, loop_blocks: see build_loops */
	DfLoop *loops;
	uint32_t nloops;
	uint64_t *loop_blocks;     /* per loop, a bitset over blocks */
	VEC(uint32_t) lwork;       /* solve_reg's work list */

	/* query state (live.c, cfg.c, cut.c): the queries that fill it take a
	 * Dataflow, not a const one */
	uint32_t *mark;
	uint32_t epoch;
	MemoEnt *memo;
	uint32_t memocap, memon;
	VEC(uint32_t) work;

	/* the caches of the analyses built on this one (df_cache) */
	VEC(CacheSlot) caches;
};

/* ---- helpers ------------------------------------------------------------- */

/* use_at[s] of a statement whose uses are not collected yet */
enum { UNSEEN = UINT32_MAX };

/* The first n <= 8 bytes of p as a little-endian word, zero-filled; one
 * 8-byte load where [p, p+8) lies inside the module text m (names handed in
 * by a caller, from a recipe say, are read byte by byte). */
static inline uint64_t word_key(const Module *m, const char *p, size_t n)
{
	uint64_t k = 0;
	uintptr_t a = (uintptr_t)p, t = (uintptr_t)m->src;
	if (LIKELY(a >= t && a + 8 <= t + m->len)) {
		memcpy(&k, p, 8);
		return n < 8 ? k & ((1ull << (8 * n)) - 1) : k;
	}
	for (size_t i = 0; i < n; i++)
		k |= (uint64_t)(unsigned char)p[i] << (8 * i);
	return k;
}

static inline uint32_t hash_str(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

/* Index of the first element of a[lo..hi) that is >= x (hi if none). */
static inline uint32_t lower_bound(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t x)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline bool bit_get(const uint64_t *s, uint32_t i)
{
	return (s[i >> 6] >> (i & 63)) & 1;
}
static inline void bit_set(uint64_t *s, uint32_t i)
{
	s[i >> 6] |= 1ull << (i & 63);
}
static inline void bit_clr(uint64_t *s, uint32_t i)
{
	s[i >> 6] &= ~(1ull << (i & 63));
}

/* A fresh number for a walk over the blocks: a block b is visited in this
 * walk when df->mark[b] is the number. */
static inline uint32_t df_next_epoch(Dataflow *df)
{
	if (++df->epoch == 0) {
		memset(df->mark, 0, (df->nblk + 1) * sizeof(uint32_t));
		df->epoch = 1;
	}
	return df->epoch;
}

/* ---- across the files ---------------------------------------------------- */

/* names.c: enters the function's labels, declared registers (a range as
 * its prefix and count), .reg parameters and the module's variables into
 * the name table, and gives a name declared in several scopes one register
 * per scope. */
void df_names_build(Dataflow *df);
/* names.c: the table entry of a name; its p is NULL when the name is not
 * in the table. */
NameEnt *df_name_entry(const Dataflow *df, const char *p, size_t n);
/* names.c: register id of a name as seen from statement `stmt`
 * (UINT32_MAX: from the function body), -1 if it is not a register.  Enters
 * range members, special registers and non-registers into the table on
 * first sight.  *partial (if given) says the name is one element of a
 * vector register ("%v.x"). */
int32_t df_lookup(Dataflow *df, const char *p, size_t n, uint32_t stmt, uint8_t *partial);

/* dataflow.c: makes the kill and use lists of reg known (rkill, ruse). */
void df_need_reg(Dataflow *df, uint32_t reg);
/* dataflow.c: makes the use lists of regs[0..n) known, by a pass over the
 * names when they are not known yet (a cut's definitions). */
void df_need_uses_of(Dataflow *df, const uint32_t *regs, size_t n);

/* cfg.c: the basic blocks, their successors and predecessors.  Returns 0
 * or -1. */
int df_blocks_build(Dataflow *df, Err *e);
/* cfg.c: does block a dominate block b (a != b)? */
bool df_dominates(Dataflow *df, uint32_t a, uint32_t b);

/* live.c: every definition of reg that reaches the use at stmt. */
Reach df_reach(Dataflow *df, uint32_t stmt, uint32_t reg);
/* live.c: the first use (in statement order after `last`, else the
 * smallest) of the value of reg live after `last`, or UINT32_MAX. */
uint32_t df_first_use_after(Dataflow *df, uint32_t last, uint32_t reg);

#endif
