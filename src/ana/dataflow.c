/*
 * dataflow.c - registers, def-use, control flow, liveness, reaching
 * definitions and the cut interface of one function.
 *
 * df_build makes one pass over the function's statements and records what
 * each defines; what each uses (most of the operands) is collected when a
 * query first needs it: per statement for the phase locator's slices, by
 * name for just the registers a cut defines (its live-out set: see
 * need_uses_of), all at once for any other liveness question (so ids of
 * registers that are only ever read depend on the order of the queries;
 * nothing prints ids).  Every leaf
 * operand is looked up in a name table (Str -> register id): plain `.reg`
 * declarations are entered up front, range declarations `%r<500>` are kept
 * as (prefix, count) and a name like `%r123` becomes a register the first
 * time it is seen, special registers (%tid.x, %laneid, %clock64, ...) too;
 * anything else (labels, parameters, variables, functions) is remembered as
 * "not a register".  The opcode decides which top-level operand is defined
 * (see first_role); registers inside [ ] are always uses, and so is a guard.
 *
 * Per statement the defined and used registers are stored in two flat
 * arrays; per register, the statements that define it, kill it (an
 * unguarded whole-register definition) and use it are kept sorted (CSR;
 * kills and uses built by the first query that needs them),
 * so "the next use / the last definition before statement s inside block b"
 * is a binary search, not a walk over 20,000 statements.
 *
 * Basic blocks start at statement 0, at every label and after every
 * bra/brx/ret/exit/trap.  Liveness is solved register by register, and
 * only for the registers a query asks about (the phase locator asks about
 * none, a cut about the registers it touches): from the blocks that read a
 * register before killing it, backwards through predecessors until a
 * killing block (see solve_reg); the result is a word bitset over blocks
 * per register.  Reaching definitions are
 * answered on demand: a walk back inside the block, then, if no killing
 * definition was found, a search back over predecessor blocks whose result
 * is memoised per (block, register).  That keeps df_build linear and makes
 * the common query (straight-line tensor-core code: the definition is in
 * the same block) a binary search.
 *
 * Decisions (documented for the users of ana.h):
 *  - A guarded definition (@p mov %r1, ...) does not kill: the definition
 *    before it reaches past it too, so a use after both sees DF_DEF_MANY.
 *  - Writing one element of a vector register (%v.x) is a definition that
 *    does not kill.
 *  - A name declared in several { } scopes (inline asm blocks each
 *    declaring `p`, `r0`, ...) gives one register per declaring scope; a
 *    use resolves to the innermost enclosing scope that declares it.  The
 *    model records a declaration's brace depth but not where scopes close,
 *    so the body text between statements is scanned for braces (only in
 *    functions that repeat a name).  df_reg_find(name), having no position,
 *    answers the first declaration.  If the scan disagrees with the parser's
 *    depths, names are merged (same name = same register).  Range
 *    declarations (`%r<N>`) are not split by scope.
 *  - An opcode this file does not know (OP_UNKNOWN) defines and uses its
 *    first operand (conservative: the old value stays live).
 *  - brx.idx may go to any label of the function (its .branchtargets list is
 *    not in the model).  A bra whose label is not in the function likewise;
 *    a bra to a label declared in several scopes may go to any of them.
 *  - The function entry counts as a definition for reaching definitions: a
 *    value defined on one path and undefined on another is DF_DEF_MANY.
 *  - Queries memoise into the Dataflow, so the ones that do take a
 *    `Dataflow *` (df_uses, df_reaching_def, df_live_after, df_cut, ...)
 *    and the read-only accessors a `const Dataflow *`.  It is not safe to
 *    query one Dataflow from two threads at once.
 */
#include "ana.h"

#include <stdlib.h>
#include <string.h>

/* ---- the name table ------------------------------------------------------ */

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

typedef struct {
	const char *p;
	uint32_t n;
	uint32_t scope;
	int32_t id;
} ScopedEnt;

typedef struct {
	uint64_t key;   /* (block << 32 | reg) + 1; 0 = empty */
	uint32_t n;     /* distinct definitions reaching the block entry, capped at 2 */
	uint32_t min, max;
	uint8_t entry;  /* the function entry reaches it (undefined / live-in) */
} MemoEnt;

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

	/* scopes: only built when a name is declared in more than one scope */
	uint32_t *scope_parent;    /* per scope; scope 0 is the function body */
	uint32_t nscope;
	uint32_t *stmt_scope;      /* innermost scope of each statement, or NULL */
	ScopedEnt *sht;            /* (name, scope) -> register */
	uint32_t shtcap;

	/* per statement: definitions at build time, uses when first asked for
	 * (see stmt_uses): use_at[s] is where statement s's uses start in
	 * `uses` (UNSEEN until collected), use_n[s] how many */
	uint32_t *def_off;
	uint32_t *use_at, *use_n;
	uint32_t uses_todo;        /* statements whose uses are not collected yet */
	uint32_t uses_last;        /* the statement collected last, or UNSEEN */
	bool uses_shuffled;        /* collected out of statement order */
	VEC(uint32_t) defs;
	VEC(uint32_t) uses;        /* sized up front: never moves (see df_build) */
	VEC(uint8_t) defkill;
	uint32_t ndef_regs;        /* registers when the definitions were listed */

	/* per register, CSR over statements (sorted) */
	uint32_t *rdef_off, *rdef;
	uint8_t *rdef_kill;
	uint32_t *rkill_off, *rkill;
	uint32_t *ruse_off, *ruse;
	bool uses_full;            /* ruse covers every register; else only those
	                              in ruse_for (need_uses_of), if any */
	uint64_t *ruse_for;
	/* need_uses_of's candidates while it scans: name -> register */
	struct { Str name; uint32_t reg, last; } *cand;
	uint32_t ncand_cap;
	VEC(uint32_t) cand_hits;   /* (candidate, statement) pairs */

	/* blocks */
	uint32_t nblk;
	uint32_t *blk_start;       /* nblk + 1 entries */
	uint32_t *blk_of;          /* per statement */
	uint32_t *succ_off, *succ;
	uint32_t *pred_off, *pred;
	uint32_t words;
	uint64_t *live_in, *live_out; /* per register, over blocks: see solve_reg */
	uint64_t *solved;          /* per register: its liveness is known */
	uint32_t *dom_pre, *dom_post; /* dominator tree numbers: see build_dom */
	VEC(uint32_t) lwork;       /* solve_reg's work list */

	/* query state: the queries that fill it take a Dataflow, not a const one */
	uint32_t *mark;
	uint32_t epoch;
	MemoEnt *memo;
	uint32_t memocap, memon;
	VEC(uint32_t) work;

	/* the caches of the analyses built on this one (df_cache) */
	VEC(CacheSlot) caches;
};

static uint32_t hash_str(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

static NameEnt *ht_find(const Dataflow *df, const char *p, size_t n)
{
	uint32_t mask = df->htcap - 1, h = hash_str(p, n) & mask;
	for (;;) {
		NameEnt *e = &df->ht[h];
		if (!e->p)
			return e;
		if (e->n == n && memcmp(e->p, p, n) == 0)
			return e;
		h = (h + 1) & mask;
	}
}

static void ht_grow(Dataflow *df)
{
	uint32_t oldcap = df->htcap;
	NameEnt *old = df->ht;
	df->htcap = oldcap ? oldcap * 2 : 1024;
	df->ht = xcalloc(df->htcap, sizeof(NameEnt));
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].p)
			*ht_find(df, old[i].p, old[i].n) = old[i];
	free(old);
}

static NameEnt *ht_put(Dataflow *df, const char *p, size_t n, uint8_t kind, int32_t id)
{
	if ((df->htn + 1) * 2 > df->htcap)
		ht_grow(df);
	NameEnt *e = ht_find(df, p, n);
	if (!e->p) {
		e->p = p;
		e->n = (uint32_t)n;
		df->htn++;
	}
	e->kind = kind;
	e->id = id;
	e->partial = 0;
	e->var = 0;
	e->scoped = 0;
	e->seen = 0;
	return e;
}

/* Bits of one element of a register type: ".pred" 1, ".f16x2" 32, ".b64" 64. */
static uint32_t type_bits(Str t)
{
	if (str_eqc(t, ".pred"))
		return 1;
	uint32_t bits = 0, mult = 1;
	size_t i = 0;
	while (i < t.n && !(t.p[i] >= '0' && t.p[i] <= '9'))
		i++;
	while (i < t.n && t.p[i] >= '0' && t.p[i] <= '9')
		bits = bits * 10 + (uint32_t)(t.p[i++] - '0');
	if (i + 1 < t.n && t.p[i] == 'x' && t.p[i + 1] >= '0' && t.p[i + 1] <= '9') {
		mult = 0;
		for (i++; i < t.n && t.p[i] >= '0' && t.p[i] <= '9'; i++)
			mult = mult * 10 + (uint32_t)(t.p[i] - '0');
	}
	return bits * (mult ? mult : 1);
}

static inline uint32_t new_reg(Dataflow *df, Str name, Str type, uint8_t vec, uint8_t special,
                               uint32_t bits)
{
	if (UNLIKELY(df->regs.n >= df->regs.cap || df->regs.n >= df->regparam.cap)) {
		VEC_GROW(df->regs, df->regs.n + 1);
		VEC_GROW(df->regparam, df->regs.n + 1);
	}
	RegInfo *r = &df->regs.v[df->regs.n];
	r->name = name;
	r->type = type;
	r->bits = bits;
	r->vec = vec;
	r->special = special;
	df->regparam.v[df->regs.n] = 0;
	df->regparam.n = df->regs.n + 1;
	return (uint32_t)df->regs.n++;
}

static const char *const special_names[] = {
	"%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid",
	"%nsmid", "%gridid", "%clock", "%clock_hi", "%clock64", "%globaltimer",
	"%globaltimer_lo", "%globaltimer_hi", "%total_smem_size", "%aggr_smem_size",
	"%dynamic_smem_size", "%is_explicit_cluster", "%clusterid", "%nclusterid",
	"%current_graph_exec",
};
static const char *const special_prefixes[] = {
	"%lanemask_", "%cluster_", "%envreg", "%pm", "%reserved_smem_offset_",
};

static bool is_special(Str name)
{
	size_t n = 0;
	while (n < name.n && name.p[n] != '.')
		n++;
	Str base = str_of(name.p, n);
	for (size_t i = 0; i < ARRAY_SIZE(special_names); i++)
		if (str_eqc(base, special_names[i]))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(special_prefixes); i++)
		if (str_starts(base, special_prefixes[i]) && base.n > strlen(special_prefixes[i]))
			return true;
	return false;
}

static uint32_t special_bits(Str name)
{
	if (str_starts(name, "%clock64") || str_eqc(name, "%globaltimer") ||
	    str_eqc(name, "%gridid") || (str_starts(name, "%pm") && name.n > 3 &&
	                                 name.p[name.n - 1] == '4' && name.p[name.n - 2] == '6'))
		return 64;
	return 32;
}

static int32_t scoped_find(const Dataflow *df, const char *p, size_t n, uint32_t scope);

/* Register id of a name as seen from statement `stmt` (UINT32_MAX: from the
 * function body), -1 if it is not a register.  Enters range members,
 * special registers and non-registers into the table on first sight. */
/*
 * A name p[0..n) that ends in a decimal number: *d gets the length of the
 * prefix before it and *k its value; false if the number has more than 9
 * digits, a leading zero, or is the whole name.  A name in the module text
 * is read eight bytes at a time (the eight ending at its end; the name
 * itself starts with a non-digit, so the run of digits found ends inside
 * it): a byte is a digit if, xor '0', both it and it plus 6 are below 16
 * (names are ASCII, so adding 6 never carries into the next byte); the
 * number is folded from those bytes by three multiplies.
 */
static inline bool split_number(const Dataflow *df, const char *p, size_t n, size_t *d,
                                uint32_t *k)
{
	uintptr_t at = (uintptr_t)p, t = (uintptr_t)df->m->src;
	if (LIKELY(at + n >= t + 8 && at + n <= t + df->m->len)) {
		uint64_t w;
		memcpy(&w, p + n - 8, 8);
		uint64_t x = w ^ 0x3030303030303030ull;
		uint64_t bad = (x | (x + 0x0606060606060606ull)) & 0xF0F0F0F0F0F0F0F0ull;
		if (bad) { /* fewer than 8 trailing digits */
			size_t nd = (size_t)__builtin_clzll(bad) / 8;
			if (nd >= n || (nd > 1 && p[n - nd] == '0'))
				return false;
			*d = n - nd;
			/* the digit bytes (the top nd) as eight digits with leading zeros */
			uint64_t v = x & (~0ull << (8 * (8 - nd)));
			v = v * 10 + (v >> 8);
			v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
			     (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
			*k = (uint32_t)v;
			return true;
		}
	}
	size_t a = n;
	while (a > 0 && p[a - 1] >= '0' && p[a - 1] <= '9')
		a--;
	if (a == 0 || n - a > 9 || (p[a] == '0' && n - a > 1))
		return false;
	uint32_t v = 0;
	for (size_t i = a; i < n; i++)
		v = v * 10 + (uint32_t)(p[i] - '0');
	*d = a;
	*k = v;
	return true;
}

/* The range declaration whose prefix is p[0..d), or NULL: prefixes of at
 * most 8 bytes through a small hash table of their words, others by a
 * search. */
static inline uint32_t range_slot(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

static void index_ranges(Dataflow *df)
{
	uint32_t cap = 64;
	while (cap < df->ranges.n * 4)
		cap *= 2;
	df->rtab = xcalloc(cap, sizeof(uint32_t));
	df->rtab_mask = cap - 1;
	for (size_t i = 0; i < df->ranges.n; i++) {
		uint64_t key = df->ranges.v[i].key;
		if (!key)
			continue;
		uint32_t h = range_slot(key, df->rtab_mask);
		while (df->rtab[h])
			h = (h + 1) & df->rtab_mask;
		df->rtab[h] = (uint32_t)i + 1;
	}
}

static inline RangeDecl *find_range(Dataflow *df, const char *p, size_t d)
{
	if (d <= 8) {
		uint64_t key = word_key(df->m, p, d);
		for (uint32_t h = range_slot(key, df->rtab_mask); df->rtab[h];
		     h = (h + 1) & df->rtab_mask) {
			RangeDecl *r = &df->ranges.v[df->rtab[h] - 1];
			if (r->key == key)
				return r;
		}
		return NULL;
	}
	for (size_t i = 0; i < df->ranges.n; i++) {
		RangeDecl *r = &df->ranges.v[i];
		if (r->prefix.n == d && memcmp(r->prefix.p, p, d) == 0)
			return r;
	}
	return NULL;
}

/* Is `name` also the name of a member of a range declaration? */
static bool names_member(Dataflow *df, Str name)
{
	size_t d;
	uint32_t k;
	if (!name.n || name.p[name.n - 1] < '0' || name.p[name.n - 1] > '9' ||
	    !split_number(df, name.p, name.n, &d, &k))
		return false;
	RangeDecl *r = find_range(df, name.p, d);
	return r && k < r->count;
}

static int32_t lookup_at(Dataflow *df, const char *p, size_t n, uint32_t stmt, uint8_t *partial)
{
	if (partial)
		*partial = 0;
	if (!n)
		return -1;
	/* Fast path: a member of a range declaration, prefix + decimal number
	 * without a leading zero, found through the range's own table.  A plain
	 * declaration of the same name (rare) is found in the name table when
	 * the member is first seen, so both give one register. */
	size_t d;
	uint32_t k;
	if (df->ranges.n && p[n - 1] >= '0' && p[n - 1] <= '9' && split_number(df, p, n, &d, &k)) {
		RangeDecl *r = find_range(df, p, d);
		if (r && k < r->count) {
			if (!r->slot)
				r->slot = xcalloc(r->count, sizeof(uint32_t));
			if (r->slot[k])
				return (int32_t)(r->slot[k] - 1);
			NameEnt *e = df->plain_digit ? ht_find(df, p, n) : NULL;
			int32_t id;
			if (e && e->p && e->kind == NK_REG)
				id = e->id;
			else
				id = (int32_t)new_reg(df, str_of(p, n), r->type, r->vec, 0, r->bits);
			r->slot[k] = (uint32_t)id + 1;
			return id;
		}
	}
	NameEnt *e = ht_find(df, p, n);
	if (e->p) {
		if (partial)
			*partial = e->partial;
		if (e->kind != NK_REG)
			return -1;
		if (e->scoped && df->stmt_scope && stmt < df->nstmt) {
			/* the innermost enclosing scope that declares it */
			for (uint32_t sc = df->stmt_scope[stmt];; sc = df->scope_parent[sc]) {
				int32_t id = scoped_find(df, p, n, sc);
				if (id >= 0)
					return id;
				if (sc == 0)
					break;
			}
		}
		return e->id;
	}
	Str name = str_of(p, n);
	if (p[0] == '%' && is_special(name)) {
		uint32_t id = new_reg(df, name, str_of(NULL, 0), 0, 1, special_bits(name));
		ht_put(df, p, n, NK_REG, (int32_t)id);
		return (int32_t)id;
	}
	/* an element of a vector register: "%v.x" */
	const char *dot = memchr(p + 1, '.', n - 1);
	if (dot) {
		const char *last = p + n;
		while (last > dot && last[-1] != '.')
			last--;
		int32_t id = lookup_at(df, p, (size_t)(last - 1 - p), stmt, NULL);
		if (id >= 0 && !df->regs.v[id].special) {
			NameEnt *x = ht_put(df, p, n, NK_REG, id);
			x->partial = 1;
			if (partial)
				*partial = 1;
			return id;
		}
	}
	ht_put(df, p, n, NK_NONREG, -1);
	return -1;
}

static int32_t lookup(Dataflow *df, const char *p, size_t n, uint8_t *partial)
{
	return lookup_at(df, p, n, UINT32_MAX, partial);
}

/* ---- scopes ----------------------------------------------------------------- */

static uint32_t scoped_hash(const char *p, size_t n, uint32_t scope)
{
	return hash_str(p, n) ^ (scope * 0x9E3779B1u);
}

static int32_t scoped_find(const Dataflow *df, const char *p, size_t n, uint32_t scope)
{
	uint32_t mask = df->shtcap - 1, h = scoped_hash(p, n, scope) & mask;
	for (;; h = (h + 1) & mask) {
		const ScopedEnt *e = &df->sht[h];
		if (!e->p)
			return -1;
		if (e->scope == scope && e->n == n && memcmp(e->p, p, n) == 0)
			return e->id;
	}
}

static void scoped_put(Dataflow *df, const char *p, size_t n, uint32_t scope, int32_t id)
{
	uint32_t mask = df->shtcap - 1, h = scoped_hash(p, n, scope) & mask;
	while (df->sht[h].p)
		h = (h + 1) & mask;
	ScopedEnt e = {p, (uint32_t)n, scope, id};
	df->sht[h] = e;
}

/*
 * Finds the { } scopes of the body: the model records each declaration's
 * brace depth but not where a scope closes, so the text between statements
 * is scanned (statements are skipped by their spans; comments, strings and
 * directives are skipped as the parser does).  Fills stmt_scope, the scope
 * parents and decl_scope (per RegDecl of the function).  Returns false if
 * what it finds disagrees with the parser (then names stay merged).
 */
static bool scan_scopes(Dataflow *df, uint32_t *decl_scope)
{
	const Module *m = df->m;
	const Func *f = df->f;
	const char *src = m->src;
	uint32_t p = f->body_open + 1, end = f->body_close, n = df->nstmt;
	uint32_t si = 0, ri = 0, cur = 0;
	VEC(uint32_t) parent = {0};
	VEC(uint16_t) depth = {0};
	VEC_PUSH(parent, 0);
	VEC_PUSH(depth, 1);
	df->stmt_scope = xmalloc((n + 1) * sizeof(uint32_t));
	bool ok = true;
	const Stmt *st = m->stmts.v + f->stmt0;
	uint32_t next = n ? st[0].off : UINT32_MAX; /* where statement si starts */
	while (p < end && ok) {
		if (p == next) {
			df->stmt_scope[si] = cur;
			p += st[si].len;
			si++;
			next = si < n ? st[si].off : UINT32_MAX;
			continue;
		}
		char c = src[p];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			p++;
			continue;
		}
		if (c == '/' && p + 1 < end && src[p + 1] == '/') {
			while (p < end && src[p] != '\n')
				p++;
		} else if (c == '/' && p + 1 < end && src[p + 1] == '*') {
			p += 2;
			while (p + 1 < end && !(src[p] == '*' && src[p + 1] == '/'))
				p++;
			p += 2;
		} else if (c == '"') {
			for (p++; p < end && src[p] != '"'; p++)
				if (src[p] == '\\')
					p++;
			p++;
		} else if (c == '{') {
			VEC_PUSH(parent, cur);
			VEC_PUSH(depth, (uint16_t)(depth.v[cur] + 1));
			cur = (uint32_t)parent.n - 1;
			p++;
		} else if (c == '}') {
			if (cur == 0)
				ok = false;
			cur = parent.v[cur];
			p++;
		} else if (c == '.') {
			while (ri < f->nreg && m->regs.v[f->reg0 + ri].decl.off == p) {
				if (m->regs.v[f->reg0 + ri].depth != depth.v[cur])
					ok = false;
				decl_scope[ri++] = cur;
			}
			uint32_t q = p + 1;
			while (q < end && ((src[q] >= 'a' && src[q] <= 'z') || (src[q] >= '0' && src[q] <= '9')))
				q++;
			bool line = (q - p == 4 && memcmp(src + p, ".loc", 4) == 0) ||
			            (q - p == 5 && memcmp(src + p, ".file", 5) == 0);
			p = q;
			while (p < end && (line ? src[p] != '\n' : src[p] != ';')) {
				if (src[p] == '"') {
					for (p++; p < end && src[p] != '"'; p++)
						if (src[p] == '\\')
							p++;
				} else if (src[p] == '/' && p + 1 < end && src[p + 1] == '/') {
					while (p < end && src[p] != '\n')
						p++;
					if (line)
						break;
					continue;
				}
				p++;
			}
			p++;
		} else
			p++;
	}
	if (si != n || ri != f->nreg || cur != 0)
		ok = false;
	df->scope_parent = parent.v;
	df->nscope = (uint32_t)parent.n;
	VEC_FREE(depth);
	if (!ok) {
		free(df->stmt_scope);
		df->stmt_scope = NULL;
	}
	return ok;
}

/* Gives each declaration of a name declared in several scopes its own
 * register (the first declaration keeps the id it already has). */
static void split_scoped(Dataflow *df)
{
	const Module *m = df->m;
	const Func *f = df->f;
	uint32_t *decl_scope = xcalloc(f->nreg + 1, sizeof(uint32_t));
	if (!scan_scopes(df, decl_scope)) {
		for (uint32_t i = 0; i < df->htcap; i++)
			df->ht[i].scoped = 0; /* same name = same register */
		free(decl_scope);
		return;
	}
	uint32_t cnt = 0;
	for (uint32_t i = 0; i < f->nreg; i++)
		cnt += !m->regs.v[f->reg0 + i].range;
	df->shtcap = 16;
	while (df->shtcap < 2 * cnt + 2)
		df->shtcap *= 2;
	df->sht = xcalloc(df->shtcap, sizeof(ScopedEnt));
	for (uint32_t i = 0; i < f->nreg; i++) {
		const RegDecl *d = &m->regs.v[f->reg0 + i];
		if (d->range)
			continue;
		Str name = mod_str(m, d->name), type = mod_str(m, d->type);
		NameEnt *ne = ht_find(df, name.p, name.n);
		if (!ne->p || ne->kind != NK_REG || !ne->scoped)
			continue;
		if (scoped_find(df, name.p, name.n, decl_scope[i]) >= 0)
			continue; /* declared twice in one scope */
		int32_t id = ne->id;
		if (ne->seen)
			id = (int32_t)new_reg(df, name, type, d->vec, 0, type_bits(type));
		ne->seen = 1;
		scoped_put(df, name.p, name.n, decl_scope[i], id);
	}
	free(decl_scope);
}

/* ---- defs and uses ------------------------------------------------------- */

enum { R_NONE = 0, R_USE = 1, R_DEF = 2, R_DEFUSE = 3 };

/* Role of the first top-level operand; the others are uses. */
static int first_role(const Module *m, const Stmt *s)
{
	if (!s->nopd)
		return R_NONE;
	const Operand *o0 = stmt_opd(m, s, 0);
	switch ((Op)s->op) {
	case OP_CALL:
		/* call (ret), func, (args): the return list is defined */
		return o0->kind == OPD_LIST && s->nopd >= 2 ? R_DEF : R_USE;
	case OP_BRA: case OP_BRX: case OP_RET: case OP_EXIT: case OP_TRAP: case OP_BRKPT:
	case OP_MEMBAR: case OP_FENCE: case OP_NANOSLEEP: case OP_PMEVENT:
	case OP_GRIDDEPCONTROL: case OP_SETMAXNREG: case OP_STACKRESTORE: case OP_ST:
	case OP_STMATRIX: case OP_SUST: case OP_SURED: case OP_RED: case OP_PREFETCH:
	case OP_PREFETCHU: case OP_CP: case OP_DISCARD: case OP_APPLYPRIORITY:
		return R_USE;
	case OP_BAR:
	case OP_BARRIER:
		/* bar.red.popc.u32 %r1, 0, %p defines %r1 */
		return stmt_has_mod(m, s, ".red") ? R_DEF : R_USE;
	case OP_WGMMA:
		/* the accumulator is read (scale-d) and written */
		return stmt_opcode_is(m, s, "wgmma.mma_async") ? R_DEFUSE : R_USE;
	case OP_TCGEN05:
		return stmt_opcode_is(m, s, "tcgen05.ld") ? R_DEF : R_USE;
	default:
		break;
	}
	if (o0->kind == OPD_ADDR) /* st-like: wmma.store, multimem.st, st.async, ... */
		return R_USE;
	if (s->op == OP_UNKNOWN)
		return R_DEFUSE;
	return R_DEF;
}

typedef struct {
	uint32_t ndef0, nuse0; /* where this statement's entries start */
	bool guarded;
	uint32_t stmt;
	bool cands;            /* match uses against the candidates (need_uses_of) */
} StmtCtx;

static void add_use(Dataflow *df, StmtCtx *c, uint32_t id)
{
	for (size_t i = c->nuse0; i < df->uses.n; i++)
		if (df->uses.v[i] == id)
			return;
	VEC_PUSH(df->uses, id);
}

static void add_def(Dataflow *df, StmtCtx *c, uint32_t id, bool kill)
{
	for (size_t i = c->ndef0; i < df->defs.n; i++)
		if (df->defs.v[i] == id) {
			df->defkill.v[i] &= kill;
			return;
		}
	VEC_PUSH(df->defs, id);
	VEC_PUSH(df->defkill, kill);
}

/* Records the registers of operand i playing `role`, those of the roles in
 * `want` only: R_DEF at build time, R_USE when the statement's uses are
 * asked for.  Names are looked up only for the roles wanted. */
static void cand_use(Dataflow *df, const char *p, size_t n, uint32_t stmt);

static void collect(Dataflow *df, StmtCtx *c, uint32_t i, int role, int want)
{
	const Module *m = df->m;
	const Operand *o = &m->opds.v[i];
	switch (o->kind) {
	case OPD_REG:
	case OPD_IDENT: {
		if (!(role & want))
			return;
		if (c->cands) {
			cand_use(df, m->src + o->off, o->len, c->stmt);
			return;
		}
		uint8_t part = 0;
		int32_t id = lookup_at(df, m->src + o->off, o->len, c->stmt, &part);
		df->opdreg[i - df->opd0] = id;
		df->opdpart[i - df->opd0] = part;
		df->opd_seen[i - df->opd0] = 1;
		if (id < 0)
			return;
		if (role & want & R_USE)
			add_use(df, c, (uint32_t)id);
		if (role & want & R_DEF)
			add_def(df, c, (uint32_t)id, !c->guarded && !part);
		return;
	}
	case OPD_VEC:
	case OPD_PAIR:
	case OPD_LIST:
	case OPD_ADDR:
	case OPD_EXPR: {
		int r = (o->kind == OPD_ADDR || o->kind == OPD_EXPR) ? R_USE : role;
		if (!(r & want))
			return;
		uint32_t end = i + 1 + o->sub;
		for (uint32_t k = i + 1; k < end; k = opd_next(m, k))
			collect(df, c, k, r, want);
		return;
	}
	default:
		return;
	}
}

static void stmt_collect(Dataflow *df, uint32_t si, int want, bool cands)
{
	const Module *m = df->m;
	const Stmt *s = func_stmt(m, df->f, si);
	StmtCtx c = {(uint32_t)df->defs.n, (uint32_t)df->uses.n, (s->flags & STMT_GUARD) != 0, si,
	             cands};
	uint32_t k = s->opd;
	if (s->flags & STMT_GUARD) {
		if (want & R_USE)
			collect(df, &c, k, R_USE, want);
		k = opd_next(m, k);
	}
	int role = first_role(m, s);
	if (want == R_DEF) { /* only the first operand is ever defined */
		if (s->nopd && (role & R_DEF))
			collect(df, &c, k, role, want);
		return;
	}
	for (unsigned i = 0; i < s->nopd; i++) {
		collect(df, &c, k, i == 0 ? role : R_USE, want);
		k = opd_next(m, k);
	}
}

enum { UNSEEN = UINT32_MAX };

/* The registers statement si uses, collected the first time they are asked
 * for: the phase locator asks about the statements its slices visit, not
 * the whole function (whose uses are most of its operands).  The array
 * `uses` was sized for every operand of the function, so pointers into it
 * stay valid while more statements are collected. */
static const uint32_t *stmt_uses(Dataflow *df, uint32_t si, uint32_t *n)
{
	if (df->use_at[si] == UNSEEN) {
		if (df->uses_last != UINT32_MAX && si < df->uses_last)
			df->uses_shuffled = true;
		df->uses_last = si;
		df->use_at[si] = (uint32_t)df->uses.n;
		stmt_collect(df, si, R_USE, false);
		df->use_n[si] = (uint32_t)df->uses.n - df->use_at[si];
		df->uses_todo--;
		/* every operand of the statement has had its look now (numbers,
		 * labels and the like stay -1) */
		const Stmt *st = func_stmt(df->m, df->f, si);
		uint32_t end = si + 1 < df->nstmt ? st[1].opd : df->opd0 + df->nopd;
		memset(df->opd_seen + (st->opd - df->opd0), 1, end - st->opd);
	}
	*n = df->use_n[si];
	return df->uses.v + df->use_at[si];
}

/* Collects the uses of every statement not collected yet. */
static void all_uses(Dataflow *df)
{
	uint32_t n;
	for (uint32_t i = 0; df->uses_todo && i < df->nstmt; i++)
		(void)stmt_uses(df, i, &n);
}

/* ---- CSR helpers ---------------------------------------------------------- */

/* Index of the first element of a[lo..hi) that is >= x (hi if none). */
static uint32_t lower_bound(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t x)
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

/* ---- control flow --------------------------------------------------------- */

static bool is_terminator(Op op)
{
	return op == OP_BRA || op == OP_BRX || op == OP_RET || op == OP_EXIT || op == OP_TRAP;
}

static int build_blocks(Dataflow *df, Err *e)
{
	const Module *m = df->m;
	const Func *f = df->f;
	uint32_t n = df->nstmt;
	uint8_t *leader = xcalloc(n + 1, 1);
	leader[0] = 1;
	for (uint32_t i = 0; i < f->nlabel; i++) {
		const Label *l = &m->labels.v[f->label0 + i];
		if (l->stmt <= n)
			leader[l->stmt] = 1;
	}
	for (uint32_t i = 0; i < n; i++)
		if (is_terminator((Op)func_stmt(m, f, i)->op))
			leader[i + 1] = 1;
	uint32_t nb = 0;
	for (uint32_t i = 0; i < n; i++)
		nb += leader[i];
	if (n == 0)
		nb = 0;
	df->nblk = nb;
	df->blk_start = xmalloc((nb + 1) * sizeof(uint32_t));
	df->blk_of = xmalloc((n + 1) * sizeof(uint32_t));
	uint32_t b = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (leader[i] && i > 0)
			b++;
		if (leader[i])
			df->blk_start[b] = i;
		df->blk_of[i] = b;
	}
	df->blk_start[nb] = n;
	df->blk_of[n] = nb; /* "past the end" */
	free(leader);

	/* successors */
	VEC(uint32_t) sv = {0};
	df->succ_off = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *all_labels = NULL;
	uint32_t nall = 0;
	for (b = 0; b < nb; b++) {
		df->succ_off[b] = (uint32_t)sv.n;
		uint32_t last = df->blk_start[b + 1] - 1;
		const Stmt *s = func_stmt(m, f, last);
		bool guarded = (s->flags & STMT_GUARD) != 0;
		bool fall = true;
		if (s->op == OP_BRA || s->op == OP_BRX) {
			int32_t target = -1;
			const Operand *o = s->nopd >= 1 ? stmt_opd(m, s, 0) : NULL;
			NameEnt *ne = NULL;
			if (s->op == OP_BRA && o && o->kind == OPD_IDENT) {
				ne = ht_find(df, m->src + o->off, o->len);
				if (ne->p && ne->kind == NK_LABEL)
					target = ne->id;
			}
			if (target >= 0 && ne->scoped) {
				/* a label declared in several scopes (never seen in compiler
				 * output): any of them */
				for (uint32_t i = 0; i < f->nlabel; i++) {
					const Label *l = &m->labels.v[f->label0 + i];
					if (l->stmt < n && l->name.len == o->len &&
					    memcmp(m->src + l->name.off, m->src + o->off, o->len) == 0)
						VEC_PUSH(sv, df->blk_of[l->stmt]);
				}
			} else if (target >= 0) {
				if ((uint32_t)target < n)
					VEC_PUSH(sv, df->blk_of[target]);
			} else {
				/* brx.idx, or a label we do not know: every label */
				if (!all_labels) {
					all_labels = xmalloc((f->nlabel + 1) * sizeof(uint32_t));
					for (uint32_t i = 0; i < f->nlabel; i++) {
						uint32_t st = m->labels.v[f->label0 + i].stmt;
						if (st < n)
							all_labels[nall++] = df->blk_of[st];
					}
				}
				for (uint32_t i = 0; i < nall; i++)
					VEC_PUSH(sv, all_labels[i]);
			}
			fall = guarded;
		} else if (s->op == OP_RET || s->op == OP_EXIT || s->op == OP_TRAP) {
			fall = guarded;
		}
		if (fall && b + 1 < nb)
			VEC_PUSH(sv, b + 1);
		/* dedupe this block's successors */
		uint32_t s0 = df->succ_off[b], w = s0;
		for (uint32_t i = s0; i < sv.n; i++) {
			uint32_t j;
			for (j = s0; j < w && sv.v[j] != sv.v[i]; j++)
				;
			if (j == w)
				sv.v[w++] = sv.v[i];
		}
		sv.n = w;
	}
	df->succ_off[nb] = (uint32_t)sv.n;
	df->succ = sv.v ? sv.v : xmalloc(sizeof(uint32_t));
	free(all_labels);

	/* predecessors */
	df->pred_off = xcalloc(nb + 2, sizeof(uint32_t));
	for (uint32_t i = 0; i < sv.n; i++)
		df->pred_off[sv.v[i] + 2]++;
	for (b = 0; b < nb; b++)
		df->pred_off[b + 2] += df->pred_off[b + 1];
	df->pred = xmalloc((sv.n + 1) * sizeof(uint32_t));
	for (b = 0; b < nb; b++)
		for (uint32_t i = df->succ_off[b]; i < df->succ_off[b + 1]; i++)
			df->pred[df->pred_off[df->succ[i] + 1]++] = b;
	(void)e;
	return 0;
}

/* ---- liveness ------------------------------------------------------------- */

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

static void need_uses(Dataflow *df);
static void need_reg(Dataflow *df, uint32_t reg);
static void need_kills(Dataflow *df);

/*
 * Liveness, one register at a time: every block where the register is read
 * before any killing definition is live-in; from there the register is
 * live-out of each predecessor, and live-in there too unless that block
 * kills it, and so on backwards.  The work is proportional to the size of
 * the live sets (most registers live in a few blocks), not to blocks x
 * registers x iterations as the bitset fixpoint would be on functions with
 * a thousand blocks and ten thousand registers.  The results are still
 * stored as one bitset over blocks per register.
 */
static bool block_kills(const Dataflow *df, uint32_t b, uint32_t reg)
{
	uint32_t lo = df->rkill_off[reg], hi = df->rkill_off[reg + 1];
	uint32_t p = lower_bound(df->rkill, lo, hi, df->blk_start[b]);
	return p < hi && df->rkill[p] < df->blk_start[b + 1];
}

/* Solves liveness of one register, the first time a query needs it: the
 * phase locator never asks, and a cut asks about the few hundred registers
 * it touches, so most registers of a large function are never solved. */
static void solve_reg(Dataflow *df, uint32_t r)
{
	need_reg(df, r);
	if (!df->live_in) {
		size_t sz = (size_t)df->nbuilt * df->words;
		df->live_in = xcalloc(sz ? sz : 1, sizeof(uint64_t));
		df->live_out = xcalloc(sz ? sz : 1, sizeof(uint64_t));
		df->solved = xcalloc((df->nbuilt + 63) / 64 + 1, sizeof(uint64_t));
	}
	if (bit_get(df->solved, r))
		return;
	bit_set(df->solved, r);
	uint32_t W = df->words;
	uint64_t *in = df->live_in + (size_t)r * W, *out = df->live_out + (size_t)r * W;
	/* upward-exposed uses: walk uses and kills of r in statement order */
	uint32_t u = df->ruse_off[r], ue = df->ruse_off[r + 1];
	uint32_t k = df->rkill_off[r], ke = df->rkill_off[r + 1];
	uint32_t lastb = UINT32_MAX;
	df->lwork.n = 0;
	for (; u < ue; u++) {
		uint32_t st = df->ruse[u], b = df->blk_of[st];
		if (b == lastb)
			continue;
		lastb = b;
		/* a kill in b strictly before this (first) use of b hides it */
		while (k < ke && df->rkill[k] < df->blk_start[b])
			k++;
		if (k < ke && df->rkill[k] < st)
			continue;
		if (!bit_get(in, b)) {
			bit_set(in, b);
			VEC_PUSH(df->lwork, b);
		}
	}
	while (df->lwork.n) {
		uint32_t b = df->lwork.v[--df->lwork.n];
		for (uint32_t i = df->pred_off[b]; i < df->pred_off[b + 1]; i++) {
			uint32_t pb = df->pred[i];
			if (bit_get(out, pb))
				continue;
			bit_set(out, pb);
			if (!bit_get(in, pb) && !block_kills(df, pb, r)) {
				bit_set(in, pb);
				VEC_PUSH(df->lwork, pb);
			}
		}
	}
}

/* The live-in / live-out bitset over blocks of reg, solved on demand. */
static const uint64_t *live_set(Dataflow *df, uint32_t reg, bool out)
{
	solve_reg(df, reg);
	return (out ? df->live_out : df->live_in) + (size_t)reg * df->words;
}

/* ---- build ---------------------------------------------------------------- */

/* Per register, the statements of its entries in ids (grouped per
 * statement by off), ascending: the CSR offsets *roff and list *rlist; only
 * the entries whose filter byte is set, if filter is given; with rflag, a
 * copy of each entry's byte in flags. */
static void csr_build(uint32_t nregs, uint32_t nstmt, const uint32_t *off, const uint32_t *ids,
                      const uint8_t *filter, const uint8_t *flags, uint32_t **roff,
                      uint32_t **rlist, uint8_t **rflag)
{
	uint32_t *o = xcalloc(nregs + 2, sizeof(uint32_t));
	uint32_t nent = off[nstmt];
	for (uint32_t j = 0; j < nent; j++)
		if (!filter || filter[j])
			o[ids[j] + 2]++;
	for (uint32_t r = 0; r < nregs; r++)
		o[r + 2] += o[r + 1];
	uint32_t total = o[nregs + 1];
	uint32_t *l = xmalloc((total + 1) * sizeof(uint32_t));
	uint8_t *fl = rflag ? xmalloc(total + 1) : NULL;
	for (uint32_t s = 0; s < nstmt; s++)
		for (uint32_t j = off[s]; j < off[s + 1]; j++)
			if (!filter || filter[j]) {
				uint32_t at = o[ids[j] + 1]++;
				l[at] = s;
				if (fl)
					fl[at] = flags[j];
			}
	*roff = o;
	*rlist = l;
	if (rflag)
		*rflag = fl;
}

/* The kill and use lists per register, built by the first query that needs
 * them (liveness, uses after a statement): the phase locator needs neither. */
static void need_kills(Dataflow *df)
{
	if (df->rkill_off)
		return;
	csr_build(df->nbuilt, df->nstmt, df->def_off, df->defs.v, df->defkill.v, NULL,
	          &df->rkill_off, &df->rkill, NULL);
}

static void drop_uses(Dataflow *df)
{
	free(df->rkill_off);
	free(df->rkill);
	free(df->ruse_off);
	free(df->ruse);
	free(df->ruse_for);
	df->rkill_off = df->rkill = df->ruse_off = df->ruse = NULL;
	df->ruse_for = NULL;
	/* liveness solved so far was sized for fewer registers */
	free(df->live_in);
	free(df->live_out);
	free(df->solved);
	df->live_in = df->live_out = df->solved = NULL;
}

static void need_uses(Dataflow *df)
{
	if (df->uses_full)
		return;
	all_uses(df);
	if (df->ruse_off || df->nbuilt != df->regs.n)
		drop_uses(df);
	/* registers first named by a use are known now */
	df->nbuilt = (uint32_t)df->regs.n;
	df->uses_full = true;
	need_kills(df);
	if (!df->uses_shuffled) {
		/* collected in statement order (all at once, say): use_at are the
		 * offsets already */
		df->use_at[df->nstmt] = (uint32_t)df->uses.n;
		csr_build(df->nbuilt, df->nstmt, df->use_at, df->uses.v, NULL, NULL, &df->ruse_off,
		          &df->ruse, NULL);
		return;
	}
	/* in the order the queries asked: lay them out per statement first */
	uint32_t *off = xmalloc((df->nstmt + 1) * sizeof(uint32_t));
	uint32_t *ids = xmalloc((df->uses.n + 1) * sizeof(uint32_t));
	uint32_t t = 0;
	for (uint32_t i = 0; i < df->nstmt; i++) {
		off[i] = t;
		memcpy(ids + t, df->uses.v + df->use_at[i], df->use_n[i] * sizeof(uint32_t));
		t += df->use_n[i];
	}
	off[df->nstmt] = t;
	csr_build(df->nbuilt, df->nstmt, off, ids, NULL, NULL, &df->ruse_off, &df->ruse, NULL);
	free(off);
	free(ids);
}

/* Are the uses of reg known (all of them, in ruse)? */
static bool uses_known(const Dataflow *df, uint32_t reg)
{
	return df->uses_full || (df->ruse_for && reg < df->nbuilt && bit_get(df->ruse_for, reg));
}

static void need_reg(Dataflow *df, uint32_t reg)
{
	if (!uses_known(df, reg))
		need_uses(df);
}

static inline uint32_t key_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32);
}

static inline uint32_t cand_hash(const Module *m, const char *p, size_t n)
{
	return n <= 8 ? key_hash(word_key(m, p, n)) : hash_str(p, n);
}

/* The candidate a use's name p[0..n) names ("%v.x": the register %v). */
static void cand_use(Dataflow *df, const char *p, size_t n, uint32_t stmt)
{
	uint32_t hash;
	if (n <= 8) {
		/* a '.' after the first byte, found in the word: the name is
		 * what comes before it */
		uint64_t key = word_key(df->m, p, n);
		uint64_t x = (key ^ 0x2e2e2e2e2e2e2e2eull) | 0xff; /* byte 0 never counts */
		uint64_t dot = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
		if (dot) {
			n = (size_t)__builtin_ctzll(dot) / 8;
			key &= (1ull << (8 * n)) - 1;
		}
		hash = key_hash(key);
	} else {
		for (size_t i = 1; i < n; i++)
			if (p[i] == '.') {
				n = i;
				break;
			}
		hash = cand_hash(df->m, p, n);
	}
	uint32_t mask = df->ncand_cap - 1;
	for (uint32_t h = hash & mask; df->cand[h].name.p; h = (h + 1) & mask)
		if (df->cand[h].name.n == n && memcmp(df->cand[h].name.p, p, n) == 0) {
			if (df->cand[h].last != stmt) { /* once per statement */
				df->cand[h].last = stmt;
				VEC_PUSH(df->cand_hits, df->cand[h].reg);
				VEC_PUSH(df->cand_hits, stmt);
			}
			return;
		}
}

/*
 * The uses of just the registers regs[0..n), for a cut's live-out set: one
 * pass over the function comparing each read operand's text with their
 * names, instead of looking every name up (which is what collecting all
 * uses costs).  A register's name is its only spelling but for vector
 * elements ("%v.x", matched to %v), so text and register agree; in a
 * function that declares a name in several scopes they do not, and all
 * uses are collected instead.  Registers whose uses are known already are
 * skipped.
 */
static void need_uses_of(Dataflow *df, const uint32_t *regs, size_t n)
{
	if (df->uses_full)
		return;
	size_t want = 0;
	for (size_t i = 0; i < n; i++)
		want += !uses_known(df, regs[i]);
	if (!want)
		return;
	if (df->stmt_scope || df->ruse_off) {
		/* scoped names; or a second set (kept simple: all of them) */
		need_uses(df);
		return;
	}
	uint32_t cap = 16;
	while (cap < want * 4)
		cap *= 2;
	df->ncand_cap = cap;
	df->cand = xcalloc(cap, sizeof(*df->cand));
	for (size_t i = 0; i < n; i++) {
		uint32_t r = regs[i];
		Str name = df->regs.v[r].name;
		uint32_t h = cand_hash(df->m, name.p, name.n) & (cap - 1);
		while (df->cand[h].name.p && !str_eq(df->cand[h].name, name))
			h = (h + 1) & (cap - 1);
		df->cand[h].name = name;
		df->cand[h].reg = r;
		df->cand[h].last = UINT32_MAX;
	}
	df->cand_hits.n = 0;
	for (uint32_t s = 0; s < df->nstmt; s++)
		stmt_collect(df, s, R_USE, true);
	free(df->cand);
	df->cand = NULL;
	/* ruse for the candidates (hits come in statement order); the others
	 * stay empty and unknown */
	uint32_t nr = df->nbuilt, nh = (uint32_t)df->cand_hits.n / 2;
	uint32_t *o = xcalloc(nr + 2, sizeof(uint32_t));
	uint32_t *l = xmalloc((nh + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < nh; k++)
		o[df->cand_hits.v[2 * k] + 2]++;
	for (uint32_t r = 0; r < nr; r++)
		o[r + 2] += o[r + 1];
	for (uint32_t k = 0; k < nh; k++)
		l[o[df->cand_hits.v[2 * k] + 1]++] = df->cand_hits.v[2 * k + 1];
	df->ruse_off = o;
	df->ruse = l;
	df->ruse_for = xcalloc((nr + 63) / 64 + 1, sizeof(uint64_t));
	for (size_t i = 0; i < n; i++)
		bit_set(df->ruse_for, regs[i]);
	VEC_FREE(df->cand_hits);
	need_kills(df);
}

/* State space of a variable declaration's text (".shared .align 16 ..."). */
static Space var_space(Str t)
{
	static const struct {
		const char *w;
		Space sp;
	} words[] = {
		{".shared", SP_SHARED}, {".global", SP_GLOBAL}, {".const", SP_CONST},
		{".local", SP_LOCAL},   {".param", SP_PARAM},
	};
	for (size_t i = 0; i + 1 < t.n; i++) {
		if (t.p[i] != '.')
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
			size_t n = strlen(words[k].w);
			if (i + n <= t.n && memcmp(t.p + i, words[k].w, n) == 0 &&
			    (i + n == t.n || !((t.p[i + n] >= 'a' && t.p[i + n] <= 'z') || t.p[i + n] == '_')))
				return words[k].sp;
		}
	}
	return SP_GENERIC;
}

Dataflow *df_build(const Module *m, const Func *f, Err *e)
{
	if (f->flags & FNF_DECL) {
		err_set(e, "'%.*s' is a declaration without a body", (int)f->name.len,
		        m->src + f->name.off);
		return NULL;
	}
	Dataflow *df = xcalloc(1, sizeof *df);
	df->m = m;
	df->f = f;
	df->nstmt = f->nstmt;
	uint32_t n = f->nstmt;
	if (n) {
		df->opd0 = m->stmts.v[f->stmt0].opd;
		uint32_t end = f->stmt0 + n < m->stmts.n ? m->stmts.v[f->stmt0 + n].opd
		                                         : (uint32_t)m->opds.n;
		df->nopd = end - df->opd0;
	}
	df->opdreg = xmalloc((df->nopd + 1) * sizeof(int32_t));
	df->opdpart = xcalloc(df->nopd + 1, 1);
	memset(df->opdreg, 0xff, (df->nopd + 1) * sizeof(int32_t)); /* -1: no register */
	df->opd_seen = xcalloc(df->nopd + 1, 1);
	ht_grow(df);

	/* labels first: a name used as a branch target is never a register */
	for (uint32_t i = 0; i < f->nlabel; i++) {
		const Label *l = &m->labels.v[f->label0 + i];
		NameEnt *ne = ht_find(df, m->src + l->name.off, l->name.len);
		if (ne->p && ne->kind == NK_LABEL) {
			ne->scoped = 1; /* the same label in two scopes: see build_blocks */
			continue;
		}
		ht_put(df, m->src + l->name.off, l->name.len, NK_LABEL, (int32_t)l->stmt);
	}
	/* declarations */
	bool scoped = false;
	for (uint32_t i = 0; i < f->nreg; i++) {
		const RegDecl *d = &m->regs.v[f->reg0 + i];
		Str name = mod_str(m, d->name), type = mod_str(m, d->type);
		if (d->range) {
			size_t j;
			for (j = 0; j < df->ranges.n; j++)
				if (str_eq(df->ranges.v[j].prefix, name))
					break;
			if (j == df->ranges.n) {
				RangeDecl r = {name, d->count, type, d->vec, NULL,
				               name.n <= 8 ? word_key(m, name.p, name.n) : 0,
				               type_bits(type)};
				VEC_PUSH(df->ranges, r);
			} else if (df->ranges.v[j].count < d->count)
				df->ranges.v[j].count = d->count;
			continue;
		}
		NameEnt *ne = ht_find(df, name.p, name.n);
		if (ne->p && ne->kind == NK_REG) {
			ne->scoped = 1; /* declared again, in another scope */
			scoped = true;
			continue;
		}
		uint32_t id = new_reg(df, name, type, d->vec, 0, type_bits(type));
		ht_put(df, name.p, name.n, NK_REG, (int32_t)id);
	}
	index_ranges(df);
	/* room for every register the ranges can name (no more than there are
	 * operands to name them) */
	size_t all = df->regs.n + f->nparam + 64;
	for (size_t i = 0; i < df->ranges.n; i++)
		all += df->ranges.v[i].count;
	if (all > df->regs.n + f->nparam + df->nopd + 64)
		all = df->regs.n + f->nparam + df->nopd + 64;
	VEC_GROW(df->regs, all);
	VEC_GROW(df->regparam, all);
	/* does a plain name spell a range member ("%r5" beside %r<10>)? */
	for (size_t i = 0; i < df->regs.n && !df->plain_digit; i++)
		df->plain_digit = names_member(df, df->regs.v[i].name);
	if (scoped && n)
		split_scoped(df);
	/* .func parameters declared in .reg space are registers */
	for (uint32_t i = 0; i < f->nparam; i++) {
		const Param *p = &m->params.v[f->param0 + i];
		if (p->space != 'r')
			continue;
		Str name = mod_str(m, p->name), type = mod_str(m, p->type);
		uint32_t id = new_reg(df, name, type, 0, 0, type_bits(type));
		df->regparam.v[id] = 1;
		ht_put(df, name.p, name.n, NK_REG, (int32_t)id);
		if (!df->plain_digit)
			df->plain_digit = names_member(df, name);
	}

	/* module variables: symbols, never registers */
	for (size_t i = 0; i < m->items.n; i++) {
		const Item *it = &m->items.v[i];
		if (it->kind != ITEM_VAR || !it->name.len)
			continue;
		NameEnt *ne = ht_find(df, m->src + it->name.off, it->name.len);
		if (ne->p)
			continue;
		ne = ht_put(df, m->src + it->name.off, it->name.len, NK_NONREG, -1);
		Str text = mod_str(m, it->text);
		ne->var = (uint8_t)(1 + var_space(text));
		/* `.extern .shared .b8 smem[]`: dynamic shared memory, which every
		 * such declaration names from its start ("[]" right after the name;
		 * the text can be megabytes of initialiser, so only look there) */
		const char *after = m->src + it->name.off + it->name.len;
		if (after + 2 <= m->src + m->len && after[0] == '[' && after[1] == ']' &&
		    memmem(text.p, (size_t)(after - text.p), ".extern", 7))
			ne->var |= 16;
	}

	/* defs and uses */
	df->def_off = xmalloc((n + 1) * sizeof(uint32_t));
	df->use_at = xmalloc((n + 1) * sizeof(uint32_t));
	df->use_n = xcalloc(n + 1, sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		df->use_at[i] = UNSEEN;
	df->uses_todo = n;
	df->uses_last = UINT32_MAX;
	VEC_GROW(df->defs, (size_t)n + 16);
	VEC_GROW(df->defkill, (size_t)n + 16);
	/* each operand (guards included) names at most one used register */
	VEC_GROW(df->uses, (size_t)df->nopd + 16);
	for (uint32_t i = 0; i < n; i++) {
		df->def_off[i] = (uint32_t)df->defs.n;
		stmt_collect(df, i, R_DEF, false);
	}
	df->def_off[n] = (uint32_t)df->defs.n;
	if (!df->defkill.v)
		VEC_GROW(df->defkill, 1);

	uint32_t nr = (uint32_t)df->regs.n;
	df->nbuilt = nr;
	df->ndef_regs = nr;
	/* definitions per register, each with its kill flag; kills and uses per
	 * register wait for a query that needs them (need_uses) */
	csr_build(nr, n, df->def_off, df->defs.v, NULL, df->defkill.v, &df->rdef_off, &df->rdef,
	          &df->rdef_kill);

	if (build_blocks(df, e) < 0) {
		df_free(df);
		return NULL;
	}
	df->words = (df->nblk + 63) / 64;
	df->mark = xcalloc(df->nblk + 1, sizeof(uint32_t));
	return df;
}

void df_free(Dataflow *df)
{
	if (!df)
		return;
	free(df->opdreg);
	free(df->opdpart);
	VEC_FREE(df->regs);
	VEC_FREE(df->regparam);
	free(df->ht);
	free(df->sht);
	free(df->scope_parent);
	free(df->stmt_scope);
	for (size_t i = 0; i < df->ranges.n; i++)
		free(df->ranges.v[i].slot);
	VEC_FREE(df->ranges);
	free(df->def_off);
	free(df->use_at);
	free(df->use_n);
	free(df->opd_seen);
	VEC_FREE(df->defs);
	VEC_FREE(df->uses);
	VEC_FREE(df->defkill);
	free(df->rdef_off);
	free(df->rdef);
	free(df->rdef_kill);
	free(df->rkill_off);
	free(df->rkill);
	free(df->ruse_off);
	free(df->ruse);
	free(df->ruse_for);
	free(df->cand);
	VEC_FREE(df->cand_hits);
	free(df->blk_start);
	free(df->blk_of);
	free(df->succ_off);
	free(df->succ);
	free(df->pred_off);
	free(df->pred);
	free(df->live_in);
	free(df->live_out);
	free(df->solved);
	free(df->rtab);
	free(df->dom_pre);
	free(df->dom_post);
	VEC_FREE(df->lwork);
	free(df->mark);
	free(df->memo);
	VEC_FREE(df->work);
	for (size_t i = 0; i < df->caches.n; i++)
		df->caches.v[i].type->free(df->caches.v[i].p);
	VEC_FREE(df->caches);
	free(df);
}

/* ---- accessors ------------------------------------------------------------ */

const Module *df_module(const Dataflow *df) { return df->m; }
const Func *df_func(const Dataflow *df) { return df->f; }
uint32_t df_nregs(const Dataflow *df) { return (uint32_t)df->regs.n; }
uint32_t df_nstmt(const Dataflow *df) { return df->nstmt; }

const RegInfo *df_reg(const Dataflow *df, uint32_t reg)
{
	return reg < df->regs.n ? &df->regs.v[reg] : NULL;
}

int64_t df_reg_find(Dataflow *df, Str name)
{
	return lookup(df, name.p, name.n, NULL);
}

/* Makes sure operand i (function-relative) has been looked up: operands
 * read by their statement are looked up with its uses. */
static void see_opd(Dataflow *df, uint32_t i)
{
	if (df->opd_seen[i] || !df->uses_todo)
		return;
	/* the statement holding it: the last one whose first operand is <= it */
	const Stmt *st = df->m->stmts.v + df->f->stmt0;
	uint32_t lo = 0, hi = df->nstmt, at = df->opd0 + i;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (st[mid].opd <= at)
			lo = mid;
		else
			hi = mid;
	}
	uint32_t n;
	if (lo < df->nstmt)
		(void)stmt_uses(df, lo, &n);
}

int64_t df_opd_reg(Dataflow *df, uint32_t opd_index)
{
	if (opd_index < df->opd0 || opd_index - df->opd0 >= df->nopd)
		return -1;
	see_opd(df, opd_index - df->opd0);
	return df->opdreg[opd_index - df->opd0];
}

bool df_opd_partial(Dataflow *df, uint32_t opd_index)
{
	if (opd_index < df->opd0 || opd_index - df->opd0 >= df->nopd)
		return false;
	see_opd(df, opd_index - df->opd0);
	return df->opdpart[opd_index - df->opd0] != 0;
}

bool df_reg_is_param(const Dataflow *df, uint32_t reg)
{
	return reg < df->regparam.n && df->regparam.v[reg];
}

void *df_cache(Dataflow *df, const DfCacheType *type)
{
	for (size_t i = 0; i < df->caches.n; i++)
		if (df->caches.v[i].type == type)
			return df->caches.v[i].p;
	CacheSlot c = {type, type->make(df)};
	VEC_PUSH(df->caches, c);
	return c.p;
}

int df_name_kind(Dataflow *df, Str name, Space *space)
{
	if (lookup(df, name.p, name.n, NULL) >= 0)
		return DF_NAME_REG;
	NameEnt *e = ht_find(df, name.p, name.n);
	if (e->p && e->kind == NK_LABEL)
		return DF_NAME_LABEL;
	if (e->p && e->var) {
		if (space)
			*space = (Space)((e->var & 15) - 1);
		return DF_NAME_VAR;
	}
	return DF_NAME_OTHER;
}

bool df_var_unsized(const Dataflow *df, Str name)
{
	NameEnt *e = ht_find(df, name.p, name.n);
	return e->p && e->kind == NK_NONREG && (e->var & 16);
}

const uint32_t *df_defs(const Dataflow *df, uint32_t stmt, uint32_t *n)
{
	if (stmt >= df->nstmt) {
		*n = 0;
		return NULL;
	}
	*n = df->def_off[stmt + 1] - df->def_off[stmt];
	return df->defs.v + df->def_off[stmt];
}

const uint32_t *df_uses(Dataflow *df, uint32_t stmt, uint32_t *n)
{
	if (stmt >= df->nstmt) {
		*n = 0;
		return NULL;
	}
	return stmt_uses(df, stmt, n);
}

bool df_stmt_defines(const Dataflow *df, uint32_t stmt, uint32_t reg, bool *kills)
{
	if (stmt >= df->nstmt)
		return false;
	for (uint32_t d = df->def_off[stmt]; d < df->def_off[stmt + 1]; d++)
		if (df->defs.v[d] == reg) {
			if (kills)
				*kills = df->defkill.v[d];
			return true;
		}
	return false;
}

bool df_stmt_uses(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	if (stmt >= df->nstmt)
		return false;
	uint32_t n;
	const uint32_t *u = stmt_uses(df, stmt, &n);
	for (uint32_t i = 0; i < n; i++)
		if (u[i] == reg)
			return true;
	return false;
}

uint32_t df_nblocks(const Dataflow *df) { return df->nblk; }
uint32_t df_block_of(const Dataflow *df, uint32_t stmt)
{
	return stmt < df->nstmt ? df->blk_of[stmt] : df->nblk;
}
void df_block_range(const Dataflow *df, uint32_t b, uint32_t *first, uint32_t *end)
{
	*first = df->blk_start[b];
	*end = df->blk_start[b + 1];
}
const uint32_t *df_block_succs(const Dataflow *df, uint32_t b, uint32_t *n)
{
	*n = df->succ_off[b + 1] - df->succ_off[b];
	return df->succ + df->succ_off[b];
}
const uint32_t *df_block_preds(const Dataflow *df, uint32_t b, uint32_t *n)
{
	*n = df->pred_off[b + 1] - df->pred_off[b];
	return df->pred + df->pred_off[b];
}

/* ---- reaching definitions ------------------------------------------------- */

typedef struct {
	uint32_t n;          /* distinct definitions, capped at 2 */
	uint32_t min, max;
	bool entry;
} Reach;

static void reach_add(Reach *r, uint32_t d)
{
	if (r->n == 0) {
		r->n = 1;
		r->min = r->max = d;
		return;
	}
	if (r->n == 1 && d == r->min)
		return;
	if (d == r->min || d == r->max) {
		return;
	}
	r->n = 2;
	if (d < r->min)
		r->min = d;
	if (d > r->max)
		r->max = d;
}

static void reach_merge(Reach *r, const Reach *o)
{
	if (o->n >= 1)
		reach_add(r, o->min);
	if (o->n >= 1 && o->max != o->min)
		reach_add(r, o->max);
	if (o->n >= 2)
		r->n = 2;
	r->entry |= o->entry;
}

/* Definitions of reg in [from, to) walking backwards from to: adds them to
 * r until a killing one; returns true if one killed. */
static bool scan_back(const Dataflow *df, uint32_t reg, uint32_t from, uint32_t to, Reach *r)
{
	uint32_t lo = df->rdef_off[reg], hi = df->rdef_off[reg + 1];
	uint32_t p = lower_bound(df->rdef, lo, hi, to);
	while (p > lo && df->rdef[p - 1] >= from) {
		p--;
		reach_add(r, df->rdef[p]);
		if (df->rdef_kill[p])
			return true;
	}
	return false;
}

static uint32_t next_epoch(Dataflow *df)
{
	if (++df->epoch == 0) {
		memset(df->mark, 0, (df->nblk + 1) * sizeof(uint32_t));
		df->epoch = 1;
	}
	return df->epoch;
}

static MemoEnt *memo_slot(Dataflow *df, uint64_t key)
{
	uint32_t mask = df->memocap - 1;
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
	while (df->memo[h].key && df->memo[h].key != key)
		h = (h + 1) & mask;
	return &df->memo[h];
}

static void memo_put(Dataflow *df, uint64_t key, const Reach *r)
{
	if ((df->memon + 1) * 2 > df->memocap) {
		uint32_t oldcap = df->memocap;
		MemoEnt *old = df->memo;
		df->memocap = oldcap ? oldcap * 2 : 256;
		df->memo = xcalloc(df->memocap, sizeof(MemoEnt));
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i].key)
				*memo_slot(df, old[i].key) = old[i];
		free(old);
	}
	MemoEnt *e = memo_slot(df, key);
	if (!e->key)
		df->memon++;
	e->key = key;
	e->n = r->n;
	e->min = r->min;
	e->max = r->max;
	e->entry = r->entry;
}

/* Definitions of reg reaching the entry of block b. */
static Reach block_entry_reach(Dataflow *df, uint32_t b, uint32_t reg)
{
	uint64_t key = (((uint64_t)b << 32) | reg) + 1;
	if (df->memocap) {
		MemoEnt *e = memo_slot(df, key);
		if (e->key) {
			Reach r = {e->n, e->min, e->max, e->entry != 0};
			return r;
		}
	}
	Reach r = {0};
	uint32_t ep = next_epoch(df);
	df->work.n = 0;
	if (b == 0)
		r.entry = true;
	for (uint32_t i = df->pred_off[b]; i < df->pred_off[b + 1]; i++) {
		uint32_t p = df->pred[i];
		if (df->mark[p] != ep) {
			df->mark[p] = ep;
			VEC_PUSH(df->work, p);
		}
	}
	while (df->work.n) {
		uint32_t p = df->work.v[--df->work.n];
		if (scan_back(df, reg, df->blk_start[p], df->blk_start[p + 1], &r))
			continue;
		if (p == 0)
			r.entry = true;
		for (uint32_t i = df->pred_off[p]; i < df->pred_off[p + 1]; i++) {
			uint32_t q = df->pred[i];
			if (df->mark[q] != ep) {
				df->mark[q] = ep;
				VEC_PUSH(df->work, q);
			}
		}
	}
	memo_put(df, key, &r);
	return r;
}

/*
 * Dominators, built on the first reaching-definition query that needs them
 * (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm"): the
 * immediate dominator of each block reachable from the entry, iterated to a
 * fixpoint in reverse postorder, then the dominator tree numbered in
 * preorder and postorder so that "a dominates b" is two compares.  Blocks
 * not reachable from the entry have no numbers and dominate nothing.
 */
static uint32_t dom_meet(const uint32_t *idom, const uint32_t *rpo_no, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (rpo_no[a] > rpo_no[b])
			a = idom[a];
		while (rpo_no[b] > rpo_no[a])
			b = idom[b];
	}
	return a;
}

static void build_dom(Dataflow *df)
{
	uint32_t nb = df->nblk;
	const uint32_t NONE = UINT32_MAX;
	uint32_t *rpo = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *rpo_no = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *idom = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *stack = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *next = xmalloc((nb + 1) * sizeof(uint32_t)); /* next successor to visit */
	for (uint32_t b = 0; b < nb; b++)
		rpo_no[b] = NONE, idom[b] = NONE, next[b] = df->succ_off[b];
	/* postorder by an explicit DFS from block 0, then reversed */
	uint32_t npo = 0, sp = 0;
	if (nb) {
		stack[sp++] = 0;
		rpo_no[0] = 0; /* visited mark for now */
	}
	while (sp) {
		uint32_t b = stack[sp - 1];
		if (next[b] < df->succ_off[b + 1]) {
			uint32_t t = df->succ[next[b]++];
			if (rpo_no[t] == NONE) {
				rpo_no[t] = 0;
				stack[sp++] = t;
			}
			continue;
		}
		rpo[npo++] = b;
		sp--;
	}
	for (uint32_t i = 0; i < npo / 2; i++) {
		uint32_t t = rpo[i];
		rpo[i] = rpo[npo - 1 - i];
		rpo[npo - 1 - i] = t;
	}
	for (uint32_t i = 0; i < npo; i++)
		rpo_no[rpo[i]] = i;
	if (npo)
		idom[rpo[0]] = rpo[0];
	for (bool changed = npo > 1; changed;) {
		changed = false;
		for (uint32_t i = 1; i < npo; i++) {
			uint32_t b = rpo[i], nd = NONE;
			for (uint32_t k = df->pred_off[b]; k < df->pred_off[b + 1]; k++) {
				uint32_t p = df->pred[k];
				if (idom[p] == NONE)
					continue; /* unreachable, or not processed yet */
				nd = nd == NONE ? p : dom_meet(idom, rpo_no, p, nd);
			}
			if (nd != idom[b]) {
				idom[b] = nd;
				changed = true;
			}
		}
	}
	/* the tree's preorder and postorder numbers, children through `next`
	 * reused as first-child / `stack` as next-sibling lists */
	df->dom_pre = xmalloc((nb + 1) * sizeof(uint32_t));
	df->dom_post = xmalloc((nb + 1) * sizeof(uint32_t));
	uint32_t *child = next, *sib = stack;
	for (uint32_t b = 0; b < nb; b++)
		child[b] = NONE, df->dom_pre[b] = NONE, df->dom_post[b] = 0;
	for (uint32_t i = npo; i-- > 1;) {
		uint32_t b = rpo[i];
		sib[b] = child[idom[b]];
		child[idom[b]] = b;
	}
	uint32_t pre = 0, post = 0;
	if (npo) {
		/* iterative preorder/postorder: rpo reused as the DFS stack */
		uint32_t *st = rpo, top = 0;
		st[top++] = 0;
		df->dom_pre[0] = pre++;
		while (top) {
			uint32_t b = st[top - 1];
			uint32_t c = child[b];
			if (c != NONE) {
				child[b] = sib[c];
				df->dom_pre[c] = pre++;
				st[top++] = c;
			} else {
				df->dom_post[b] = post++;
				top--;
			}
		}
	}
	free(rpo);
	free(rpo_no);
	free(idom);
	free(stack);
	free(next);
}

/* Does block a dominate block b (a != b)? */
static bool dominates(Dataflow *df, uint32_t a, uint32_t b)
{
	if (!df->dom_pre)
		build_dom(df);
	return df->dom_pre[a] != UINT32_MAX && df->dom_pre[b] != UINT32_MAX &&
	       df->dom_pre[a] < df->dom_pre[b] && df->dom_post[b] < df->dom_post[a];
}

/* All definitions of reg reaching the use at stmt. */
static Reach reach_at(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	Reach r = {0};
	if (reg >= df->ndef_regs)
		return r; /* first named by a use: nothing defines it */
	uint32_t b = df->blk_of[stmt];
	if (scan_back(df, reg, df->blk_start[b], stmt, &r))
		return r;
	/* a register with one definition, which kills, in a block that
	 * dominates this one: every path to the use passes it and nothing
	 * else defines the register (most of compiler output) */
	if (df->rdef_off[reg + 1] - df->rdef_off[reg] == 1 && df->rdef_kill[df->rdef_off[reg]]) {
		uint32_t d = df->rdef[df->rdef_off[reg]];
		if (df->blk_of[d] != b && dominates(df, df->blk_of[d], b)) {
			reach_add(&r, d);
			return r;
		}
	}
	Reach in = block_entry_reach(df, b, reg);
	reach_merge(&r, &in);
	return r;
}

int64_t df_reaching_def(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	if (stmt >= df->nstmt || reg >= df->nbuilt)
		return DF_DEF_NONE;
	Reach r = reach_at(df, stmt, reg);
	if (r.n == 0)
		return DF_DEF_NONE;
	if (r.n == 1 && !r.entry)
		return r.min;
	return DF_DEF_MANY;
}

/* ---- liveness queries ----------------------------------------------------- */

/* First element of list[off[reg]..off[reg+1]) that is > after, or UINT32_MAX. */
static uint32_t next_in(const uint32_t *off, const uint32_t *list, uint32_t reg, uint32_t after)
{
	uint32_t lo = off[reg], hi = off[reg + 1];
	uint32_t p = lower_bound(list, lo, hi, after + 1);
	return p < hi ? list[p] : UINT32_MAX;
}

/* Is reg live at the start of statement s (s < end of its block)? */
static bool live_before(Dataflow *df, uint32_t s, uint32_t reg)
{
	need_reg(df, reg);
	uint32_t b = df->blk_of[s], end = df->blk_start[b + 1];
	uint32_t u = s ? next_in(df->ruse_off, df->ruse, reg, s - 1)
	               : (df->ruse_off[reg] < df->ruse_off[reg + 1] ? df->ruse[df->ruse_off[reg]]
	                                                           : UINT32_MAX);
	uint32_t k = s ? next_in(df->rkill_off, df->rkill, reg, s - 1)
	               : (df->rkill_off[reg] < df->rkill_off[reg + 1] ? df->rkill[df->rkill_off[reg]]
	                                                             : UINT32_MAX);
	if (u < end && u <= k)
		return true;
	if (k < end)
		return false;
	return bit_get(live_set(df, reg, true), b);
}

bool df_live_after(Dataflow *df, uint32_t stmt, uint32_t reg)
{
	need_reg(df, reg);
	if (stmt >= df->nstmt || reg >= df->nbuilt)
		return false;
	uint32_t b = df->blk_of[stmt], end = df->blk_start[b + 1];
	if (stmt + 1 < end)
		return live_before(df, stmt + 1, reg);
	return bit_get(live_set(df, reg, true), b);
}

bool df_live_in_block(Dataflow *df, uint32_t b, uint32_t reg)
{
	need_reg(df, reg);
	return b < df->nblk && reg < df->nbuilt && bit_get(live_set(df, reg, false), b);
}

/* Uses of reg in [from, end of block) up to and including the first kill;
 * returns true if a kill ended the scan.  Calls add for each use. */
static bool scan_fwd(Dataflow *df, uint32_t reg, uint32_t from, uint32_t end,
                     void (*add)(void *, uint32_t), void *ctx)
{
	need_reg(df, reg);
	uint32_t k = from ? next_in(df->rkill_off, df->rkill, reg, from - 1)
	                  : (df->rkill_off[reg] < df->rkill_off[reg + 1]
	                         ? df->rkill[df->rkill_off[reg]]
	                         : UINT32_MAX);
	uint32_t lo = df->ruse_off[reg], hi = df->ruse_off[reg + 1];
	for (uint32_t p = lower_bound(df->ruse, lo, hi, from); p < hi; p++) {
		uint32_t u = df->ruse[p];
		if (u >= end || u > k)
			break;
		add(ctx, u);
	}
	return k < end;
}

/* Forward search from just after stmt over every path: calls add for every
 * use the value live there reaches. */
static void uses_after(Dataflow *df, uint32_t stmt, uint32_t reg,
                       void (*add)(void *, uint32_t), void *ctx)
{
	uint32_t b = df->blk_of[stmt];
	if (scan_fwd(df, reg, stmt + 1, df->blk_start[b + 1], add, ctx))
		return;
	uint32_t ep = next_epoch(df);
	VEC(uint32_t) wl = {0};
	for (uint32_t i = df->succ_off[b]; i < df->succ_off[b + 1]; i++) {
		uint32_t s = df->succ[i];
		if (df->mark[s] != ep) {
			df->mark[s] = ep;
			VEC_PUSH(wl, s);
		}
	}
	for (size_t h = 0; h < wl.n; h++) {
		uint32_t s = wl.v[h];
		if (scan_fwd(df, reg, df->blk_start[s], df->blk_start[s + 1], add, ctx))
			continue;
		for (uint32_t i = df->succ_off[s]; i < df->succ_off[s + 1]; i++) {
			uint32_t t = df->succ[i];
			if (df->mark[t] != ep) {
				df->mark[t] = ep;
				VEC_PUSH(wl, t);
			}
		}
	}
	VEC_FREE(wl);
}

typedef struct {
	VEC(uint32_t) v;
} UseList;

static void add_to_list(void *ctx, uint32_t u)
{
	UseList *l = ctx;
	VEC_PUSH(l->v, u);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

uint32_t df_uses_of(Dataflow *df, uint32_t stmt, uint32_t reg, uint32_t *out, uint32_t max)
{
	need_reg(df, reg);
	if (stmt >= df->nstmt || reg >= df->nbuilt)
		return 0;
	UseList l = {{0}};
	uses_after(df, stmt, reg, add_to_list, &l);
	if (l.v.n)
		qsort(l.v.v, l.v.n, sizeof(uint32_t), cmp_u32);
	uint32_t n = 0;
	for (size_t i = 0; i < l.v.n; i++) {
		if (i && l.v.v[i] == l.v.v[i - 1])
			continue;
		if (n < max)
			out[n] = l.v.v[i];
		n++;
	}
	VEC_FREE(l.v);
	return n;
}

typedef struct {
	uint32_t first;   /* smallest use found */
	uint32_t from;    /* prefer uses at index > from (program order after the cut) */
	uint32_t after;   /* smallest use > from */
} FirstUse;

static void add_first(void *ctx, uint32_t u)
{
	FirstUse *f = ctx;
	if (u < f->first)
		f->first = u;
	if (u > f->from && u < f->after)
		f->after = u;
}

/* First use (in statement order after `last`, else the smallest) of the value
 * of reg live after `last`, or UINT32_MAX. */
static uint32_t first_use_after(Dataflow *df, uint32_t last, uint32_t reg)
{
	FirstUse f = {UINT32_MAX, last, UINT32_MAX};
	uses_after(df, last, reg, add_first, &f);
	return f.after != UINT32_MAX ? f.after : f.first;
}

/* ---- spaces --------------------------------------------------------------- */

static const char *const space_names[SP__COUNT] = {
	"generic", "global", "shared", "local", "const", "param", "tex", "surf",
};

const char *space_name(Space s)
{
	return (unsigned)s < SP__COUNT ? space_names[s] : "?";
}

/* Space of one opcode component (".shared::cta" -> SP_SHARED), or -1. */
static int comp_space(const char *p, size_t n)
{
	size_t k = 0;
	while (k < n && !(p[k] == ':' && k + 1 < n && p[k + 1] == ':'))
		k++;
	Str c = str_of(p, k);
	if (str_eqc(c, ".global"))
		return SP_GLOBAL;
	if (str_eqc(c, ".shared"))
		return SP_SHARED;
	if (str_eqc(c, ".local"))
		return SP_LOCAL;
	if (str_eqc(c, ".const"))
		return SP_CONST;
	if (str_eqc(c, ".param"))
		return SP_PARAM;
	return -1;
}

int stmt_spaces(const Module *m, const Stmt *s, Space out[2])
{
	Str op = stmt_opcode(m, s);
	int n = 0;
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p + 1;
		while (q < end && *q != '.')
			q++;
		if (*p == '.') {
			int sp = comp_space(p, (size_t)(q - p));
			if (sp >= 0 && n < 2)
				out[n++] = (Space)sp;
		}
		p = q;
	}
	return n;
}

Space stmt_space(const Module *m, const Stmt *s)
{
	switch ((Op)s->op) {
	case OP_TEX:
	case OP_TLD4:
	case OP_TXQ:
		return SP_TEX;
	case OP_SULD:
	case OP_SUST:
	case OP_SURED:
	case OP_SUQ:
		return SP_SURF;
	default:
		break;
	}
	Space sp[2];
	return stmt_spaces(m, s, sp) ? sp[0] : SP_GENERIC;
}

/* ---- memory effects of one statement -------------------------------------- */

MemEffect df_mem_effect(const Dataflow *df, uint32_t stmt)
{
	const Module *m = df->m;
	const Stmt *s = func_stmt(m, df->f, stmt);
	MemEffect me = {0, SP_GENERIC, SP_GENERIC};
	Space sp[2];
	int ns;
	switch ((Op)s->op) {
	case OP_LD:
	case OP_LDU:
	case OP_LDMATRIX:
		me.flags = ME_LOAD;
		me.load = stmt_space(m, s);
		break;
	case OP_ST:
	case OP_STMATRIX:
		me.flags = ME_STORE;
		me.store = stmt_space(m, s);
		break;
	case OP_ATOM:
	case OP_RED:
		me.flags = ME_LOAD | ME_STORE | ME_ATOMIC;
		me.load = me.store = stmt_space(m, s);
		break;
	case OP_TEX:
	case OP_TLD4:
	case OP_SULD:
		me.flags = ME_LOAD;
		me.load = stmt_space(m, s);
		break;
	case OP_SUST:
		me.flags = ME_STORE;
		me.store = SP_SURF;
		break;
	case OP_SURED:
		me.flags = ME_LOAD | ME_STORE | ME_ATOMIC;
		me.load = me.store = SP_SURF;
		break;
	case OP_CP:
		/* cp.async[.bulk...].dst.src: writes dst, reads src */
		ns = stmt_spaces(m, s, sp);
		if (!stmt_opcode_is(m, s, "cp.async") && !stmt_opcode_is(m, s, "cp.reduce"))
			break; /* unknown cp.*: no memory effect recorded */
		if (ns == 0 && (stmt_opcode_is(m, s, "cp.async.wait_group") ||
		                stmt_opcode_is(m, s, "cp.async.wait_all") ||
		                stmt_opcode_is(m, s, "cp.async.commit_group") ||
		                stmt_opcode_is(m, s, "cp.async.bulk.commit_group") ||
		                stmt_opcode_is(m, s, "cp.async.bulk.wait_group")))
			break;
		if (stmt_opcode_is(m, s, "cp.async.mbarrier")) {
			me.flags = ME_BARRIER;
			break;
		}
		if (stmt_has_mod(m, s, ".prefetch"))
			break; /* cp.async.bulk.prefetch: a hint, no data moves */
		me.flags = ME_LOAD | ME_STORE;
		me.store = ns >= 1 ? sp[0] : SP_GENERIC;
		me.load = ns >= 2 ? sp[1] : (ns == 1 ? sp[0] : SP_GENERIC);
		if (ns == 1 && stmt_opcode_is(m, s, "cp.async") && !stmt_has_mod(m, s, ".bulk"))
			me.load = SP_GLOBAL;
		if (stmt_opcode_is(m, s, "cp.reduce"))
			me.flags |= ME_ATOMIC;
		break;
	case OP_WMMA:
		if (stmt_opcode_is(m, s, "wmma.load")) {
			me.flags = ME_LOAD;
			me.load = stmt_space(m, s);
		} else if (stmt_opcode_is(m, s, "wmma.store")) {
			me.flags = ME_STORE;
			me.store = stmt_space(m, s);
		}
		break;
	case OP_MULTIMEM:
		if (stmt_opcode_is(m, s, "multimem.ld_reduce")) {
			me.flags = ME_LOAD;
			me.load = SP_GLOBAL;
		} else if (stmt_opcode_is(m, s, "multimem.st")) {
			me.flags = ME_STORE;
			me.store = SP_GLOBAL;
		} else if (stmt_opcode_is(m, s, "multimem.red")) {
			me.flags = ME_LOAD | ME_STORE | ME_ATOMIC;
			me.load = me.store = SP_GLOBAL;
		}
		break;
	case OP_TENSORMAP:
		if (stmt_opcode_is(m, s, "tensormap.replace")) {
			me.flags = ME_STORE;
			me.store = stmt_space(m, s);
		}
		break;
	case OP_BAR:
	case OP_BARRIER:
	case OP_MEMBAR:
	case OP_FENCE:
	case OP_MBARRIER:
		me.flags = ME_BARRIER;
		break;
	case OP_CALL:
		/* a callee may read and write any memory */
		me.flags = ME_LOAD | ME_STORE | ME_CALL;
		me.load = me.store = SP_GENERIC;
		break;
	default:
		break;
	}
	return me;
}

/* May accesses to spaces a and b touch the same memory? */
static bool spaces_alias(Space a, Space b)
{
	if (a == b)
		return true;
	bool ta = a == SP_TEX || a == SP_SURF, tb = b == SP_TEX || b == SP_SURF;
	if (ta || tb)
		return ta && tb; /* a surface written, a texture over the same array read */
	return a == SP_GENERIC || b == SP_GENERIC;
}

/* ---- the cut interface ---------------------------------------------------- */

/* A memory statement of interest to the read/write check. */
typedef struct {
	uint32_t stmt;
	MemEffect me;
	const Addr *addr;  /* NULL: unresolved */
	bool opaque;       /* call or cp.*: never provably disjoint */
} MemAcc;

static MemAcc mem_acc(Dataflow *df, uint32_t stmt, MemEffect me)
{
	uint16_t op = func_stmt(df->m, df->f, stmt)->op;
	MemAcc a = {stmt, me, NULL, (me.flags & ME_CALL) || op == OP_CP};
	if (!a.opaque)
		a.addr = addr_cached(df, stmt);
	return a;
}

bool addr_disjoint(const Addr *a, const Addr *b)
{
	if (!a || !b || a->base == AB_NONE || b->base == AB_NONE)
		return false;
	if (a->base != b->base)
		return false;
	uint64_t na = (uint64_t)a->elem_bytes * a->nelem, nb = (uint64_t)b->elem_bytes * b->nelem;
	if (a->base == AB_SYMBOL && !str_eq(a->base_name, b->base_name)) {
		/* Two different variables never overlap (out-of-bounds access is
		 * undefined in PTX), except: texture and surface references may be
		 * bound to one array, and unsized `.extern .shared` arrays all start
		 * at the dynamic shared memory (compare offsets from there). */
		bool ta = a->space == SP_TEX || a->space == SP_SURF;
		bool tb = b->space == SP_TEX || b->space == SP_SURF;
		if (ta || tb)
			return false;
		if (!(a->dynamic_shared && b->dynamic_shared))
			return true;
	} else if (a->base == AB_PARAM) {
		/* two pointer parameters may point into one buffer */
		if (!str_eq(a->base_name, b->base_name) || a->param_off != b->param_off ||
		    a->param_ptr != b->param_ptr)
			return false;
	}
	if (!na || !nb)
		return false;
	if (a->variable || b->variable) {
		/* The same variable part is the same address only within one thread;
		 * other threads may reach it through another offset, so this proves
		 * nothing except for per-thread (.local) memory. */
		if (!(a->space == SP_LOCAL && b->space == SP_LOCAL && a->variable && b->variable &&
		      a->var_key && a->var_key == b->var_key))
			return false;
	}
	return a->offset + (int64_t)na <= b->offset || b->offset + (int64_t)nb <= a->offset;
}

/* May the store of s reach the load of t?  A call may touch anything; a
 * cp.* copy has two addresses (only the first is resolved): both never
 * provably disjoint. */
static bool conflicts(const MemAcc *s, const MemAcc *t)
{
	if (!(s->me.flags & ME_STORE) || !(t->me.flags & ME_LOAD))
		return false;
	if (!spaces_alias(s->me.store, t->me.load))
		return false;
	if (s->opaque || t->opaque)
		return true;
	return !addr_disjoint(s->addr, t->addr);
}

static void cut_reason(CutInterface *c, const Dataflow *df, uint32_t a, uint32_t b,
                       MemEffect ma, bool after)
{
	const Module *m = df->m;
	const Stmt *sa = func_stmt(m, df->f, a), *sb = func_stmt(m, df->f, b);
	Str oa = stmt_opcode(m, sa), ob = stmt_opcode(m, sb);
	/* first two components of the opcode are enough to read the line */
	size_t na = 0, nb = 0;
	int dots = 0;
	while (na < oa.n && !(oa.p[na] == '.' && ++dots == 2))
		na++;
	dots = 0;
	while (nb < ob.n && !(ob.p[nb] == '.' && ++dots == 2))
		nb++;
	VEC_PUSH(c->rw_pairs, a);
	VEC_PUSH(c->rw_pairs, b);
	if (after)
		sb_addf(&c->rw_reason, "s%u %.*s may be read by s%u %.*s after the cut (%s)\n", a,
		        (int)na, oa.p, b, (int)nb, ob.p, space_name(ma.store));
	else
		sb_addf(&c->rw_reason,
		        "s%u %.*s reads %s memory that s%u %.*s writes earlier in the cut\n", a,
		        (int)na, oa.p, space_name(ma.load), b, (int)nb, ob.p);
}

int df_cut(Dataflow *df, uint32_t first, uint32_t last, CutInterface *out, Err *e)
{
	memset(out, 0, sizeof *out);
	out->first = first;
	out->last = last;
	if (first > last || last >= df->nstmt)
		return err_set(e, "statement range [%u, %u] is outside the function (s0..s%u)", first,
		               last, df->nstmt ? df->nstmt - 1 : 0);
	uint32_t nr = (uint32_t)df->regs.n, W = (nr + 63) / 64;
	uint64_t *seen = xcalloc(W + 1, sizeof(uint64_t));

	/* live-in: a use whose reaching definitions include one outside the
	 * range (or the function entry) */
	for (uint32_t s = first; s <= last; s++) {
		uint32_t nu;
		const uint32_t *us = stmt_uses(df, s, &nu);
		for (uint32_t u = 0; u < nu; u++) {
			uint32_t r = us[u];
			if (bit_get(seen, r))
				continue;
			Reach rr = reach_at(df, s, r);
			bool outside = rr.n == 0 || rr.entry || rr.min < first || rr.max > last;
			if (outside) {
				bit_set(seen, r);
				CutReg cr = {r, s, 0};
				VEC_PUSH(out->live_in, cr);
			}
		}
	}

	/* live-out: defined in the range, live after it; only the uses of those
	 * registers are needed */
	memset(seen, 0, (W + 1) * sizeof(uint64_t));
	VEC(uint32_t) cands = {0};
	for (uint32_t s = first; s <= last; s++)
		for (uint32_t d = df->def_off[s]; d < df->def_off[s + 1]; d++)
			if (!bit_get(seen, df->defs.v[d])) {
				bit_set(seen, df->defs.v[d]);
				VEC_PUSH(cands, df->defs.v[d]);
			}
	need_uses_of(df, cands.v, cands.n);
	VEC_FREE(cands);
	memset(seen, 0, (W + 1) * sizeof(uint64_t));
	for (uint32_t s = first; s <= last; s++) {
		for (uint32_t d = df->def_off[s]; d < df->def_off[s + 1]; d++) {
			uint32_t r = df->defs.v[d];
			if (bit_get(seen, r))
				continue;
			bit_set(seen, r);
			if (!df_live_after(df, last, r))
				continue;
			uint32_t lo = df->rdef_off[r], hi = df->rdef_off[r + 1];
			uint32_t p = lower_bound(df->rdef, lo, hi, last + 1);
			CutReg cr = {r, df->rdef[p - 1], first_use_after(df, last, r)};
			VEC_PUSH(out->live_out, cr);
		}
	}
	free(seen);

	/* memory effects */
	VEC(MemAcc) stores = {0};
	for (uint32_t s = first; s <= last; s++) {
		MemEffect me = df_mem_effect(df, s);
		if (me.flags & ME_LOAD)
			out->loads[me.load]++;
		if (me.flags & ME_STORE)
			out->stores[me.store]++;
		if (me.flags & ME_ATOMIC)
			out->atomics++;
		if (me.flags & ME_BARRIER)
			out->barriers++;
		if (!(me.flags & (ME_LOAD | ME_STORE)))
			continue;
		MemAcc acc = mem_acc(df, s, me);
		/* (b) a load after a store of the range to the same memory: the
		 * pair is (load, the nearest such store) */
		if (me.flags & ME_LOAD) {
			for (size_t i = stores.n; i-- > 0;)
				if (conflicts(&stores.v[i], &acc)) {
					out->rw_dependency = true;
					cut_reason(out, df, s, stores.v[i].stmt, me, false);
					break;
				}
		}
		if (me.flags & ME_STORE)
			VEC_PUSH(stores, acc);
	}

	/* (a) a store of the range read after it: loads reachable from the end
	 * of the range (on any path, around loops too), outside the range; the
	 * pair is (store, the first such load found: the rest of the block,
	 * then blocks breadth-first) */
	if (stores.n) {
		VEC(MemAcc) after = {0};
		uint32_t b = df->blk_of[last];
		uint32_t ep = next_epoch(df);
		VEC(uint32_t) wl = {0};
		for (uint32_t s = last + 1; s < df->blk_start[b + 1]; s++) {
			MemEffect me = df_mem_effect(df, s);
			if (me.flags & ME_LOAD)
				VEC_PUSH(after, mem_acc(df, s, me));
		}
		for (uint32_t i = df->succ_off[b]; i < df->succ_off[b + 1]; i++)
			if (df->mark[df->succ[i]] != ep) {
				df->mark[df->succ[i]] = ep;
				VEC_PUSH(wl, df->succ[i]);
			}
		for (size_t h = 0; h < wl.n; h++) {
			uint32_t x = wl.v[h];
			for (uint32_t s = df->blk_start[x]; s < df->blk_start[x + 1]; s++) {
				if (s >= first && s <= last)
					continue;
				if (x == b && s > last)
					continue; /* already listed */
				MemEffect me = df_mem_effect(df, s);
				if (me.flags & ME_LOAD)
					VEC_PUSH(after, mem_acc(df, s, me));
			}
			for (uint32_t i = df->succ_off[x]; i < df->succ_off[x + 1]; i++)
				if (df->mark[df->succ[i]] != ep) {
					df->mark[df->succ[i]] = ep;
					VEC_PUSH(wl, df->succ[i]);
				}
		}
		VEC_FREE(wl);
		for (size_t i = 0; i < stores.n; i++)
			for (size_t j = 0; j < after.n; j++)
				if (conflicts(&stores.v[i], &after.v[j])) {
					out->rw_dependency = true;
					cut_reason(out, df, stores.v[i].stmt, after.v[j].stmt, stores.v[i].me,
					           true);
					break;
				}
		VEC_FREE(after);
	}
	VEC_FREE(stores);
	(void)e;
	return 0;
}

void cut_release(CutInterface *c)
{
	VEC_FREE(c->live_in);
	VEC_FREE(c->live_out);
	VEC_FREE(c->rw_pairs);
	sb_release(&c->rw_reason);
}

uint32_t cut_warp_bytes(const Dataflow *df, const CutReg *regs, size_t n)
{
	uint32_t bytes = 0;
	for (size_t i = 0; i < n; i++) {
		const RegInfo *ri = df_reg(df, regs[i].reg);
		uint32_t bits = ri->bits ? ri->bits : 32;
		if (bits < 8)
			bits = 8; /* a predicate still occupies a register per lane */
		bytes += bits / 8 * (ri->vec ? ri->vec : 1) * 32;
	}
	return bytes;
}
