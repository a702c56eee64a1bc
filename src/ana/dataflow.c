/*
 * dataflow.c - the Dataflow of one function: df_build, and what each
 * statement defines and uses, per statement and per register.
 *
 * df_build makes one pass over the function's statements and records what
 * each defines; what each uses (most of the operands) is collected when a
 * query first needs it: per statement for the phase locator's slices, by
 * name for just the registers a cut defines (its live-out set: see
 * df_need_uses_of), all at once for any other liveness question (so ids of
 * registers that are only ever read depend on the order of the queries;
 * nothing prints ids).  Names become registers through the name table
 * (names.c).  The opcode decides which top-level operand is defined (see
 * first_role); registers inside [ ] are always uses, and so is a guard.
 *
 * Per statement the defined and used registers are stored in two flat
 * arrays; per register, the statements that define it, kill it (an
 * unguarded whole-register definition) and use it are kept sorted (CSR;
 * kills and uses built by the first query that needs them), so "the next
 * use / the last definition before statement s inside block b" is a binary
 * search, not a walk over 20,000 statements.  Blocks are cfg.c's, liveness
 * and reaching definitions live.c's, the cut interface cut.c's.
 *
 * Decisions (documented for the users of ana.h):
 *  - A guarded definition (@p mov %r1, ...) does not kill: the definition
 *    before it reaches past it too, so a use after both sees DF_DEF_MANY.
 *  - Writing one element of a vector register (%v.x) is a definition that
 *    does not kill.
 *  - wgmma.mma_async reads its accumulator unless scale-d is the immediate
 *    0 (the PTX ISA: D = A * B then), so such a wgmma's D is defined, not
 *    used, and is not live into it.  A predicate scale-d may be true: D is
 *    read.
 *  - An opcode this file does not know (OP_UNKNOWN) defines and uses its
 *    first operand (conservative: the old value stays live).
 *  - Queries memoise into the Dataflow, so the ones that do take a
 *    `Dataflow *` (df_uses, df_reaching_def, df_live_after, df_cut, ...)
 *    and the read-only accessors a `const Dataflow *`.  It is not safe to
 *    query one Dataflow from two threads at once.
 *  - An analysis built on this one keeps its per-function cache here
 *    through df_cache: a slot holding the analysis's pointer and the type
 *    that makes and frees it, so the cache lives and dies with the
 *    Dataflow while this file knows nothing of the analysis (addr.c's
 *    resolved addresses are the one such cache).
 */
#include "df_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- defs and uses ------------------------------------------------------- */

/* [p, end) is a run of one or more '0' digits, optionally followed by a U
 * suffix. */
static bool zero_digits(const char *p, const char *end)
{
	if (p < end && (end[-1] == 'U' || end[-1] == 'u'))
		end--;
	if (p == end)
		return false;
	for (; p < end; p++)
		if (*p != '0')
			return false;
	return true;
}

bool df_opd_is_zero(const Module *m, const Operand *o)
{
	Str t = opd_str(m, o);
	const char *p = t.p, *end = t.p + t.n;
	if (o->kind == OPD_INT) {
		/* 0, 00 (octal), 0x0, 0b0, 0U; -0 is the same integer */
		if (p < end && (*p == '-' || *p == '+'))
			p++;
		if (end - p > 2 && p[0] == '0' && strchr("xXbB", p[1]))
			p += 2;
		return zero_digits(p, end);
	}
	if (o->kind != OPD_FLOAT || p == end)
		return false;
	/* 0f00000000 / 0d0000000000000000: the bits; 0f80000000 is -0.0 */
	if (end - p > 2 && p[0] == '0' && strchr("fFdD", p[1]))
		return zero_digits(p + 2, end);
	/* a decimal literal (0.0, 0e5): every digit of the mantissa 0, no sign */
	bool digit = false;
	for (; p < end && *p != 'e' && *p != 'E'; p++) {
		if (*p == '.')
			continue;
		if (*p != '0')
			return false;
		digit = true;
	}
	return digit;
}

bool df_stmt_is_zero_mov(const Module *m, const Stmt *s)
{
	if (s->op != OP_MOV || s->nopd != 2)
		return false;
	uint32_t si = stmt_opd_index(m, s, 1);
	const Operand *o = &m->opds.v[si];
	if (o->kind != OPD_VEC)
		return df_opd_is_zero(m, o);
	if (!o->sub)
		return false;
	for (uint32_t k = si + 1; k < si + 1 + o->sub; k = opd_next(m, k))
		if (!df_opd_is_zero(m, &m->opds.v[k]))
			return false;
	return true;
}

bool df_stmt_is_conversion(const Module *m, const Stmt *s)
{
	if (s->op == OP_CVT) {
		static const char *const mods[] = {".e4m3x2", ".e5m2x2", ".f16x2",
		                                   ".bf16x2", ".f16",    ".bf16"};
		return stmt_mod_any(m, s, mods, ARRAY_SIZE(mods)) >= 0;
	}
	if (s->op == OP_MOV && s->nopd == 2) /* mov.b32 %r, {%rs1, %rs2}: a pack */
		return stmt_opd(m, s, 1)->kind == OPD_VEC;
	return false;
}

bool df_wgmma_reads_d(const Module *m, const Stmt *s)
{
	/* d, a, b, scale-d, ...: scale-d is the fourth operand in every form */
	return !(s->nopd >= 4 && df_opd_is_zero(m, stmt_opd(m, s, 3)));
}

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
		/* the accumulator is written, and read unless scale-d is the
		 * immediate 0 (D = A * B) */
		if (!stmt_opcode_is(m, s, "wgmma.mma_async"))
			return R_USE;
		return df_wgmma_reads_d(m, s) ? R_DEFUSE : R_DEF;
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
	bool cands;            /* match uses against the candidates (df_need_uses_of) */
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
		int32_t id = df_lookup(df, m->src + o->off, o->len, c->stmt, &part);
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

/* A vector operand i that writes every element of a vector variable
 * ({d.x, d.y, d.z, d.w} for a .v4 d) replaces its whole value: those
 * element writes together are a kill (unless the statement is guarded). */
static void whole_vector_kills(Dataflow *df, StmtCtx *c, uint32_t i)
{
	const Module *m = df->m;
	const Operand *o = &m->opds.v[i];
	if (c->guarded || c->cands || o->kind != OPD_VEC)
		return;
	for (size_t d = c->ndef0; d < df->defs.n; d++) {
		uint32_t id = df->defs.v[d];
		unsigned vec = df->regs.v[id].vec, seen = 0;
		if (df->defkill.v[d] || vec < 2)
			continue;
		for (uint32_t k = i + 1; k < i + 1 + o->sub; k = opd_next(m, k)) {
			const Operand *e = &m->opds.v[k];
			if (df->opdreg[k - df->opd0] != (int32_t)id || !df->opdpart[k - df->opd0] ||
			    e->len < 2)
				continue;
			const char *sel = memchr("xyzwrgba", m->src[e->off + e->len - 1], 8);
			if (sel)
				seen |= 1u << ((sel - "xyzwrgba") & 3);
		}
		if (seen == (1u << vec) - 1)
			df->defkill.v[d] = true;
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
		if (s->nopd && (role & R_DEF)) {
			collect(df, &c, k, role, want);
			whole_vector_kills(df, &c, k);
		}
		return;
	}
	for (unsigned i = 0; i < s->nopd; i++) {
		collect(df, &c, k, i == 0 ? role : R_USE, want);
		k = opd_next(m, k);
	}
}


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

/* ---- per register: definitions, kills, uses ------------------------------ */

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

void df_need_reg(Dataflow *df, uint32_t reg)
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
void df_need_uses_of(Dataflow *df, const uint32_t *regs, size_t n)
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

/* ---- building and freeing ------------------------------------------------ */

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
	df_names_build(df);

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

	if (df_blocks_build(df, e) < 0) {
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
	free(df->loops);
	free(df->loop_blocks);
	VEC_FREE(df->lwork);
	free(df->mark);
	free(df->memo);
	VEC_FREE(df->work);
	for (size_t i = 0; i < df->caches.n; i++)
		df->caches.v[i].type->free(df->caches.v[i].p);
	VEC_FREE(df->caches);
	free(df);
}

/* ---- queries ------------------------------------------------------------- */

const Module *df_module(const Dataflow *df) { return df->m; }
const Func *df_func(const Dataflow *df) { return df->f; }
uint32_t df_nstmt(const Dataflow *df) { return df->nstmt; }

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

void *df_cache(Dataflow *df, const DfCacheType *type)
{
	for (size_t i = 0; i < df->caches.n; i++)
		if (df->caches.v[i].type == type)
			return df->caches.v[i].p;
	CacheSlot c = {type, type->make(df)};
	VEC_PUSH(df->caches, c);
	return c.p;
}
