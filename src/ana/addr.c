/*
 * addr.c - address tracking: what a memory statement's address is made of.
 *
 * The address operand [base+imm] of a load or store is followed back through
 * the reaching definitions of its registers until it is a sum of
 *
 *     one base   a kernel parameter (the parameter itself, or the pointer
 *                read from its bytes with ld.param: struct fields), or a
 *                .shared/.global/... variable,
 *     variable terms   values derived from special registers (%tid.x,
 *                %laneid, ...) or from integer parameters, each an opaque
 *                "atom" named by the statement that produced it,
 *     a constant offset.
 *
 * Rules (the analysis never guesses: anything else stops with a reason):
 *  - mov copies (a register, a symbol, a parameter name, an immediate);
 *    add/sub add terms; cvta keeps the term and records the space;
 *    cvt between integer types passes the term through.
 *  - mul.lo/mul.wide/shl/mad (the product part) fold when every operand is
 *    constant.  A linear term of special registers (%tid.x, %laneid ...
 *    with the ranges the PTX ISA gives them) times a constant stays such
 *    a term, coefficients scaled, when the product provably fits its
 *    type; otherwise the product is a variable atom, provided no operand
 *    holds a base (a scaled pointer is not an address we can describe).
 *  - An add, sub or widening cvt narrower than 64 bits whose linear term
 *    may not fit the type marks it as possibly wrapped: its strides are
 *    then not stated (Addr.stride_known), though the term still names the
 *    same value for the address's identity.
 *    Other integer ALU ops (and, or, xor, shr, min, max, bfe, selp, ...) are
 *    atoms the same way; and/or/xor/shr/not/neg fold constants.
 *  - ld.param.u64 (or .b64/.s64; 32-bit on 32-bit targets) from a parameter
 *    + N gives the pointer base (param, param_off = N); a narrower ld.param
 *    gives a kernel-uniform integer atom.  Any other load stops.
 *  - A register with several reaching definitions, none, or a chain deeper
 *    than 64 / wider than 512 steps stops.
 *  - Two bases in one sum, or a base subtracted, stops.
 *
 * Decisions:
 *  - What a resolution finds is cached for the whole function: each
 *    statement's Addr, and the terms of the definitions met on the way
 *    (shared by later resolutions).  The cache is addr.c's own (AddrMemo),
 *    kept in the Dataflow through df_cache, which stores it without knowing
 *    its type: the dataflow files do not depend on this one, and the cache
 *    lives as long as the function's dataflow and serves every query on
 *    it (the phase locator's operand sources, then each cut of a report
 *    resolve the same loads once).  A structure of addr.c's own wrapping
 *    the Dataflow would have made every caller hold two handles, or each
 *    df_cut start from an empty cache.
 */
#include "ana.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ATOMS 8
#define MAX_DEPTH 64
#define MAX_STEPS 512

/* atom keys: kind in bits 56..63 */
#define ATOM_STMT (1ull << 56)
#define ATOM_SPECIAL (2ull << 56)
#define ATOM_KIND (0xffull << 56)

typedef struct {
	AddrBase base;     /* AB_NONE: no base (constant or index value) */
	Str base_name;
	int64_t param_off;
	bool param_ptr;
	Space space;       /* from cvta or the variable's declaration; GENERIC if unknown */
	int64_t off;
	uint32_t natom;
	bool atom_over;    /* more atoms than fit */
	bool nonspecial;   /* an atom derived from something else than special regs */
	bool wrap;         /* a step narrower than 64 bits may have wrapped around:
	                      the sum is not known to be the value */
	uint64_t atom[MAX_ATOMS];
	int64_t coef[MAX_ATOMS]; /* the value is off + sum of coef[i] * atom[i] */
} Term;

/* Terms already computed in this resolution, by defining statement and
 * element: an address computed along a diamond of adds is visited once per
 * definition, not once per path. */
#define MEMO_CAP 256
typedef struct {
	uint64_t key;      /* (stmt << 8 | elem) + 1 */
	bool ok;
	const char *why;
	Term t;
} Memo;

typedef struct {
	Dataflow *df;
	const Module *m;
	unsigned steps;
	const char *why;
	bool wide_ptr32;  /* 32-bit address size: 32-bit values may be pointers */
	VEC(Memo) memo;
	uint16_t slot[512]; /* open addressing over memo: index + 1, 0 = empty */
} Ctx;

/*
 * What addr.c keeps for one function, in its Dataflow (df_cache): the
 * result of each statement's resolution, and the terms of the definitions
 * the resolutions met, shared by all of them.
 */
typedef struct {
	Addr *addr;
	int8_t *state;   /* per statement: 0 not resolved yet, else addr_resolve's result + 2 */
	uint64_t *tkey;  /* (stmt << 8 | elem) + 1; 0 = empty */
	Term *tval;      /* parallel to tkey */
	uint32_t tcap, tn;
} AddrMemo;

static void *memo_make(Dataflow *df)
{
	AddrMemo *mm = xcalloc(1, sizeof *mm);
	mm->addr = xmalloc((df_nstmt(df) + 1) * sizeof(Addr));
	mm->state = xcalloc(df_nstmt(df) + 1, 1);
	return mm;
}

static void memo_free(void *p)
{
	AddrMemo *mm = p;
	free(mm->addr);
	free(mm->state);
	free(mm->tkey);
	free(mm->tval);
	free(mm);
}

static const DfCacheType memo_type = {memo_make, memo_free};

static AddrMemo *memo_of(Dataflow *df)
{
	return df_cache(df, &memo_type);
}

static int fail(Ctx *c, const char *why)
{
	if (!c->why)
		c->why = why;
	return -1;
}

static bool is_const(const Term *t)
{
	return t->base == AB_NONE && !t->natom && !t->atom_over;
}

/* t += coef * a; terms of one atom add up, and vanish at 0 */
static void add_atom(Term *t, uint64_t a, int64_t coef)
{
	for (uint32_t i = 0; i < t->natom; i++)
		if (t->atom[i] == a) {
			t->coef[i] += coef;
			if (!t->coef[i]) {
				t->natom--;
				t->atom[i] = t->atom[t->natom];
				t->coef[i] = t->coef[t->natom];
			}
			return;
		}
	if (!coef)
		return;
	if (t->natom < MAX_ATOMS) {
		t->atom[t->natom] = a;
		t->coef[t->natom++] = coef;
	} else
		t->atom_over = true;
}

/* Parses an INT operand's text: [-]digits | 0x.. | 0b.. | 0 octal, [U]. */
bool ana_int_value(Str s, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	if (i < s.n && (s.p[i] == '-' || s.p[i] == '+'))
		neg = s.p[i++] == '-';
	unsigned base = 10;
	if (i + 1 < s.n && s.p[i] == '0' && (s.p[i + 1] == 'x' || s.p[i + 1] == 'X'))
		base = 16, i += 2;
	else if (i + 1 < s.n && s.p[i] == '0' && (s.p[i + 1] == 'b' || s.p[i + 1] == 'B'))
		base = 2, i += 2;
	else if (i + 1 < s.n && s.p[i] == '0' && s.p[i + 1] >= '0' && s.p[i + 1] <= '7')
		base = 8, i += 1;
	uint64_t v = 0;
	size_t start = i;
	for (; i < s.n; i++) {
		char ch = s.p[i];
		unsigned d;
		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			d = (unsigned)(ch - 'A' + 10);
		else if ((ch == 'U' || ch == 'u') && i + 1 == s.n)
			break;
		else
			return false;
		if (d >= base)
			return false;
		v = v * base + d;
	}
	if (i == start)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

/* ---- opcode types -------------------------------------------------------- */

/* Bits of the opcode's last integer/bit type component (.u32 -> 32), 0 if
 * none; *is_signed set for .sN. *is_float set if any float type appears. */
static uint32_t opcode_type(Str op, bool *is_signed, bool *is_float)
{
	uint32_t bits = 0;
	if (is_signed)
		*is_signed = false;
	if (is_float)
		*is_float = false;
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p + 1;
		while (q < end && *q != '.')
			q++;
		if (*p == '.' && q - p >= 3) {
			char k = p[1];
			bool digits = true;
			for (const char *r = p + 2; r < q; r++)
				if (*r < '0' || *r > '9')
					digits = false;
			if (digits && (k == 'u' || k == 's' || k == 'b')) {
				bits = (uint32_t)atoi(p + 2);
				if (is_signed)
					*is_signed = k == 's';
			} else if (is_float && ((k == 'f' && (p[2] >= '0' && p[2] <= '9')) ||
			                        (k == 'b' && p[2] == 'f') || (k == 'e' && q - p >= 4 &&
			                                                      (p[2] == '4' || p[2] == '5')) ||
			                        (k == 't' && p[2] == 'f')))
				*is_float = true;
		}
		p = q;
	}
	return bits;
}

static int64_t wrap(int64_t v, uint32_t bits, bool is_signed)
{
	if (bits == 32)
		return is_signed ? (int64_t)(int32_t)v : (int64_t)(uint32_t)v;
	if (bits == 16)
		return is_signed ? (int64_t)(int16_t)v : (int64_t)(uint16_t)v;
	return v;
}

/* cvt.DST.SRC: the two integer types (the last two type components). */
static void cvt_types(Str op, uint32_t *dbits, bool *dsgn, uint32_t *sbits, bool *ssgn)
{
	uint32_t bits[2] = {0, 0};
	bool sg[2] = {false, false};
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p + 1;
		while (q < end && *q != '.')
			q++;
		if (*p == '.' && q - p >= 3 && (p[1] == 'u' || p[1] == 's' || p[1] == 'b')) {
			bool digits = true;
			for (const char *r = p + 2; r < q; r++)
				if (*r < '0' || *r > '9')
					digits = false;
			if (digits) {
				bits[0] = bits[1];
				sg[0] = sg[1];
				bits[1] = (uint32_t)atoi(p + 2);
				sg[1] = p[1] == 's';
			}
		}
		p = q;
	}
	*dbits = bits[0];
	*dsgn = sg[0];
	*sbits = bits[1];
	*ssgn = sg[1];
}

/* 'u', 's' or 'b': the kind of the opcode's last integer type (.u32, .s64,
 * .b32), 0 if it has none. */
static char int_kind(Str op)
{
	char k = 0;
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p + 1;
		while (q < end && *q != '.')
			q++;
		if (*p == '.' && q - p >= 3 &&
		    (p[1] == 'u' || p[1] == 's' || p[1] == 'b') && p[2] >= '0' &&
		    p[2] <= '9')
			k = p[1];
		p = q;
	}
	return k;
}

/* ---- linear terms -------------------------------------------------------- */

/*
 * A term whose atoms are all special registers with known ranges is a
 * linear function of them (off + coef * %tid.x + ...), and its range is
 * known; an operation narrower than 64 bits on it is exact only when the
 * result fits its type, which is what lets a stride be stated as a fact.
 * The ranges are the PTX ISA's limits: %ntid.x/y at most 1024, %ntid.z at
 * most 64, 32 lanes, %nctaid.x at most 2^31 - 1 and y/z at most 65535.
 */
static bool special_range(Ctx *c, uint64_t atom, int64_t *lo, int64_t *hi)
{
	static const struct {
		const char *name;
		int64_t lo, hi;
	} tab[] = {
		{"%tid.x", 0, 1023},          {"%tid.y", 0, 1023},
		{"%tid.z", 0, 63},            {"%ntid.x", 1, 1024},
		{"%ntid.y", 1, 1024},         {"%ntid.z", 1, 64},
		{"%laneid", 0, 31},           {"%ctaid.x", 0, 2147483646},
		{"%ctaid.y", 0, 65534},       {"%ctaid.z", 0, 65534},
		{"%nctaid.x", 1, 2147483647}, {"%nctaid.y", 1, 65535},
		{"%nctaid.z", 1, 65535},
	};
	if ((atom & ATOM_KIND) != ATOM_SPECIAL)
		return false;
	Str name = df_reg(c->df, (uint32_t)(atom & 0xffffffffu))->name;
	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (str_eqc(name, tab[i].name)) {
			*lo = tab[i].lo;
			*hi = tab[i].hi;
			return true;
		}
	return false;
}

/* The range of a term with no base whose atoms all have known ranges;
 * false for any other term. */
static bool term_range(Ctx *c, const Term *t, int64_t *lo, int64_t *hi)
{
	if (t->base != AB_NONE || t->atom_over || t->wrap)
		return false;
	int64_t l = t->off, h = t->off;
	for (uint32_t i = 0; i < t->natom; i++) {
		int64_t al, ah, x, y;
		if (!special_range(c, t->atom[i], &al, &ah) ||
		    __builtin_mul_overflow(t->coef[i], al, &x) ||
		    __builtin_mul_overflow(t->coef[i], ah, &y))
			return false;
		if (x > y) {
			int64_t z = x;
			x = y;
			y = z;
		}
		if (__builtin_add_overflow(l, x, &l) || __builtin_add_overflow(h, y, &h))
			return false;
	}
	*lo = l;
	*hi = h;
	return true;
}

/* Does [lo, hi] fit a `bits`-wide integer of kind k ('s', 'u', 'b')?  A
 * .b value must fit both readings, signed and unsigned. */
static bool range_fits(int64_t lo, int64_t hi, uint32_t bits, char k)
{
	if (bits >= 64)
		return lo > -(1ll << 62) && hi < (1ll << 62);
	if (bits != 32)
		return false;
	if (k == 's')
		return lo >= INT32_MIN && hi <= INT32_MAX;
	if (k == 'u')
		return lo >= 0 && hi <= (int64_t)UINT32_MAX;
	return lo >= 0 && hi <= INT32_MAX;
}

/* After a `bits`-wide operation made t: a linear term that may not fit its
 * type is no longer known to be the value (wrap).  Terms with other atoms
 * have no range and are taken as they are. */
static void check_width(Ctx *c, Term *t, uint32_t bits, char k)
{
	int64_t lo, hi;
	if (t->natom && term_range(c, t, &lo, &hi) && !range_fits(lo, hi, bits, k))
		t->wrap = true;
}

/* t = u * k for a linear term u (see term_range) when the product fits a
 * `bits`-wide result of kind kk (wide: the product of two `bits`-wide
 * values in twice the width, which always fits); false when u is not
 * such a term or the product may not fit. */
static bool scale_linear(Ctx *c, const Term *u, int64_t k, uint32_t bits, char kk,
                         bool wide, Term *t)
{
	int64_t lo, hi;
	if (!u->natom || !term_range(c, u, &lo, &hi) || !range_fits(lo, hi, bits, kk))
		return false; /* the operand itself must be its type's value */
	Term r = *u;
	if (__builtin_mul_overflow(u->off, k, &r.off))
		return false;
	for (uint32_t i = 0; i < r.natom; i++)
		if (__builtin_mul_overflow(u->coef[i], k, &r.coef[i]) || !r.coef[i])
			return false;
	if (!term_range(c, &r, &lo, &hi) || !range_fits(lo, hi, wide ? 64 : bits, kk))
		return false;
	*t = r;
	return true;
}

/* ---- resolution ---------------------------------------------------------- */

static int resolve_opd(Ctx *c, uint32_t at, uint32_t opd, unsigned depth, Term *t);

/*
 * Terms shared by the resolutions of one function (AddrMemo): the loads of a kernel mostly index the same few bases
 * through the same chains, which are then walked once.  Only values that
 * resolved are shared; the depth and step limits apply to the chains a
 * resolution actually walks.
 */
static bool shared_get(Ctx *c, uint64_t key, Term *t)
{
	AddrMemo *mm = memo_of(c->df);
	if (!mm->tcap)
		return false;
	const Term *tv = mm->tval;
	for (uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (mm->tcap - 1);
	     mm->tkey[h]; h = (h + 1) & (mm->tcap - 1))
		if (mm->tkey[h] == key) {
			*t = tv[h];
			return true;
		}
	return false;
}

static void shared_put(Ctx *c, uint64_t key, const Term *t)
{
	AddrMemo *mm = memo_of(c->df);
	if ((mm->tn + 1) * 2 > mm->tcap) {
		uint32_t oldcap = mm->tcap;
		uint64_t *ok = mm->tkey;
		Term *ov = mm->tval;
		mm->tcap = oldcap ? oldcap * 2 : 256;
		mm->tkey = xcalloc(mm->tcap, sizeof(uint64_t));
		mm->tval = xmalloc(mm->tcap * sizeof(Term));
		Term *nv = mm->tval;
		for (uint32_t i = 0; i < oldcap; i++)
			if (ok[i]) {
				uint32_t h = (uint32_t)((ok[i] * 0x9E3779B97F4A7C15ull) >> 32) & (mm->tcap - 1);
				while (mm->tkey[h])
					h = (h + 1) & (mm->tcap - 1);
				mm->tkey[h] = ok[i];
				nv[h] = ov[i];
			}
		free(ok);
		free(ov);
	}
	Term *tv = mm->tval;
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (mm->tcap - 1);
	while (mm->tkey[h] && mm->tkey[h] != key)
		h = (h + 1) & (mm->tcap - 1);
	if (!mm->tkey[h])
		mm->tn++;
	mm->tkey[h] = key;
	tv[h] = *t;
}

static int resolve_reg(Ctx *c, uint32_t at, uint32_t reg, unsigned depth, Term *t);

/* Term of operand i of statement d (a top-level operand). */
static int def_opd(Ctx *c, uint32_t d, unsigned i, unsigned depth, Term *t)
{
	const Stmt *s = func_stmt(c->m, df_func(c->df), d);
	if (i >= s->nopd)
		return fail(c, "malformed instruction in the address chain");
	return resolve_opd(c, d, stmt_opd_index(c->m, s, i), depth, t);
}

/* t += sign * u */
static int sum(Ctx *c, Term *t, const Term *u, int sign)
{
	if (u->base != AB_NONE) {
		if (sign < 0)
			return fail(c, "a pointer is subtracted");
		if (t->base != AB_NONE)
			return fail(c, "two bases in one sum");
		t->base = u->base;
		t->base_name = u->base_name;
		t->param_off = u->param_off;
		t->param_ptr = u->param_ptr;
		t->space = u->space;
	} else if (t->base == AB_NONE && t->space == SP_GENERIC)
		t->space = u->space;
	t->off += sign * u->off;
	for (uint32_t i = 0; i < u->natom; i++)
		add_atom(t, u->atom[i], sign * u->coef[i]);
	t->atom_over |= u->atom_over;
	t->nonspecial |= u->nonspecial;
	t->wrap |= u->wrap;
	return 0;
}

/* The result of a non-linear operation on terms ops[0..n): a fresh atom
 * named by statement d, or a constant folded by `fold`. */
static int opaque(Ctx *c, uint32_t d, const Term *ops, unsigned n, bool foldable, int64_t folded,
                  Term *t)
{
	memset(t, 0, sizeof *t);
	bool all_const = true, nonspecial = false;
	for (unsigned i = 0; i < n; i++) {
		if (ops[i].base != AB_NONE) {
			/* A value read from a parameter and used as it was read (a
			 * 64-bit stride: ld.param.u64 then mul.lo.s64) is an integer
			 * here, not a pointer; anything else is a scaled address. */
			if (!(ops[i].base == AB_PARAM && ops[i].param_ptr && !ops[i].off &&
			      !ops[i].natom && !ops[i].atom_over))
				return fail(c, "arithmetic other than a sum on a pointer");
			nonspecial = true;
			all_const = false;
			continue;
		}
		all_const &= is_const(&ops[i]);
		nonspecial |= ops[i].nonspecial;
	}
	if (all_const && foldable) {
		t->off = folded;
		return 0;
	}
	t->atom[0] = ATOM_STMT | d;
	t->coef[0] = 1;
	t->natom = 1;
	t->nonspecial = nonspecial;
	return 0;
}

/* The term of the value statement d gives its destination; `elem` is the
 * register's position when the destination is a vector or pair. */
static int resolve_def(Ctx *c, uint32_t d, unsigned elem, unsigned depth, Term *t)
{
	const Module *m = c->m;
	const Stmt *s = func_stmt(m, df_func(c->df), d);
	Str opc = stmt_opcode(m, s);
	bool sgn = false, flt = false;
	uint32_t bits = opcode_type(opc, &sgn, &flt);
	Term a, b, e;
	memset(t, 0, sizeof *t);
	uint8_t dkind = s->nopd >= 1 ? stmt_opd(m, s, 0)->kind : OPD_SINK;
	if (dkind == OPD_VEC && s->op == OP_LD && stmt_has_mod(m, s, ".param"))
		; /* ld.param.v2.u64 {%rd1, %rd2}, [p+16]: element by element */
	else if (dkind == OPD_PAIR && s->op == OP_SHFL && elem == 0)
		; /* shfl.sync.idx.b32 %r|%p, ...: the value */
	else if (dkind == OPD_VEC)
		return fail(c, "the register is unpacked from a vector");
	else if (dkind != OPD_REG && dkind != OPD_IDENT)
		return fail(c, "the register is defined as part of a pair");
	switch ((Op)s->op) {
	case OP_MOV:
		if (s->nopd != 2)
			return fail(c, "malformed mov");
		return def_opd(c, d, 1, depth, t);
	case OP_ADD:
	case OP_SUB:
		if (flt)
			return fail(c, "floating-point arithmetic in the address chain");
		if (stmt_has_mod(m, s, ".cc"))
			return fail(c, "add/sub with carry in the address chain");
		if (s->nopd != 3 || def_opd(c, d, 1, depth, t) < 0 || def_opd(c, d, 2, depth, &b) < 0)
			return -1;
		if (sum(c, t, &b, s->op == OP_SUB ? -1 : 1) < 0)
			return -1;
		if (is_const(t))
			t->off = wrap(t->off, bits, sgn);
		else
			check_width(c, t, bits, int_kind(opc));
		return 0;
	case OP_CVTA:
		if (s->nopd != 2 || def_opd(c, d, 1, depth, t) < 0)
			return -1;
		{
			Space sp[2];
			if (stmt_spaces(m, s, sp) >= 1)
				t->space = sp[0];
		}
		return 0;
	case OP_CVT: {
		if (flt)
			return fail(c, "floating-point conversion in the address chain");
		if (s->nopd != 2 || def_opd(c, d, 1, depth, t) < 0)
			return -1;
		uint32_t dbits, sbits;
		bool dsgn, ssgn;
		cvt_types(opc, &dbits, &dsgn, &sbits, &ssgn);
		if (is_const(t)) {
			t->off = wrap(wrap(t->off, sbits, ssgn), dbits, dsgn);
			return 0;
		}
		if (t->base != AB_NONE)
			return 0; /* pointers pass */
		if (dbits > sbits && sbits) {
			/* a widening keeps the value (a linear term: if it fits the
			 * source type) */
			check_width(c, t, sbits, ssgn ? 's' : 'u');
			return 0;
		}
		/* narrowing or re-signing a variable value: a new value */
		Term ops[1] = {*t};
		return opaque(c, d, ops, 1, false, 0, t);
	}
	case OP_SHFL: {
		Term ops[1];
		if (s->nopd < 2 || def_opd(c, d, 1, depth, &ops[0]) < 0)
			return -1;
		/* another lane's value of the same expression */
		return opaque(c, d, ops, 1, false, 0, t);
	}
	case OP_MUL:
	case OP_SHL:
	case OP_MAD:
		if (flt)
			return fail(c, "floating-point arithmetic in the address chain");
		if (s->nopd < 3 || def_opd(c, d, 1, depth, &a) < 0 || def_opd(c, d, 2, depth, &b) < 0)
			return -1;
		{
			bool wide = stmt_has_mod(m, s, ".wide");
			bool lo_or_wide =
			    s->op == OP_SHL || stmt_has_mod(m, s, ".lo") || wide;
			int64_t v;
			if (s->op == OP_SHL)
				v = (b.off >= 0 && b.off < 64) ? (int64_t)((uint64_t)a.off << b.off) : 0;
			else
				v = a.off * b.off;
			if (!wide)
				v = wrap(v, bits, sgn);
			/* a linear term times a constant stays linear when the
			 * product provably fits */
			bool scaled = false;
			if (lo_or_wide && s->op == OP_SHL)
				scaled = is_const(&b) && b.off >= 0 && b.off < 32 &&
				         scale_linear(c, &a, (int64_t)1 << b.off, bits,
				                      int_kind(opc), false, t);
			else if (lo_or_wide)
				scaled = (is_const(&b) &&
				          scale_linear(c, &a, b.off, bits, int_kind(opc),
				                       wide, t)) ||
				         (is_const(&a) &&
				          scale_linear(c, &b, a.off, bits, int_kind(opc),
				                       wide, t));
			Term ops[2] = {a, b};
			if (!scaled && opaque(c, d, ops, 2, lo_or_wide, v, t) < 0)
				return -1;
		}
		if (s->op == OP_MAD) {
			if (s->nopd != 4 || def_opd(c, d, 3, depth, &e) < 0)
				return -1;
			if (sum(c, t, &e, 1) < 0)
				return -1;
			if (is_const(t) && !stmt_has_mod(m, s, ".wide"))
				t->off = wrap(t->off, bits, sgn);
			else if (!is_const(t))
				check_width(c, t, stmt_has_mod(m, s, ".wide") ? 64 : bits,
				            int_kind(opc));
		}
		return 0;
	case OP_AND:
	case OP_OR:
	case OP_XOR:
	case OP_SHR:
	case OP_NOT:
	case OP_NEG:
	case OP_MIN:
	case OP_MAX:
	case OP_DIV:
	case OP_REM:
	case OP_BFE:
	case OP_BFI:
	case OP_SELP:
	case OP_MUL24:
	case OP_MAD24:
	case OP_PRMT:
	case OP_POPC:
	case OP_CLZ:
	case OP_BREV:
	case OP_SHF:
	case OP_ABS:
	case OP_LOP3: {
		if (flt)
			return fail(c, "floating-point arithmetic in the address chain");
		Term ops[4];
		unsigned n = s->nopd - 1;
		if (n > 4 || n == 0)
			return fail(c, "unexpected operands in the address chain");
		for (unsigned i = 0; i < n; i++) {
			if (s->op == OP_SELP && i == 2)
				break; /* the predicate */
			if (def_opd(c, d, i + 1, depth, &ops[i]) < 0)
				return -1;
		}
		if (s->op == OP_SELP)
			n = 2;
		int64_t v = 0;
		bool foldable = true;
		switch ((Op)s->op) {
		case OP_AND: v = ops[0].off & ops[1].off; break;
		case OP_OR: v = ops[0].off | ops[1].off; break;
		case OP_XOR: v = ops[0].off ^ ops[1].off; break;
		case OP_NOT: v = ~ops[0].off; break;
		case OP_NEG: v = -ops[0].off; break;
		case OP_SHR:
			if (ops[1].off < 0 || ops[1].off >= 64)
				foldable = false;
			else if (sgn)
				v = wrap(ops[0].off, bits, true) >> ops[1].off;
			else
				v = (int64_t)((uint64_t)wrap(ops[0].off, bits, false) >> ops[1].off);
			break;
		default:
			foldable = false;
			break;
		}
		if (foldable)
			v = wrap(v, bits, sgn);
		return opaque(c, d, ops, n, foldable, v, t);
	}
	case OP_LD: {
		if (!stmt_has_mod(m, s, ".param"))
			return fail(c, "the value is loaded from memory");
		Term at;
		uint32_t k = s->opd + ((s->flags & STMT_GUARD) ? 1 : 0);
		k = opd_next(m, k); /* the address: second operand */
		if (s->nopd != 2 || m->opds.v[k].kind != OPD_ADDR || m->opds.v[k].sub == 0)
			return fail(c, "malformed ld.param");
		if (resolve_opd(c, d, k + 1, depth, &at) < 0)
			return -1;
		if (at.base != AB_PARAM || at.param_ptr || at.natom || at.atom_over)
			return fail(c, "ld.param from an address that is not a parameter");
		if (bits == 64 || (c->wide_ptr32 && bits == 32)) {
			t->base = AB_PARAM;
			t->base_name = at.base_name;
			t->param_off = at.off + (int64_t)elem * (bits / 8);
			t->param_ptr = true;
			t->space = SP_GENERIC;
			return 0;
		}
		/* an integer parameter: uniform, but not a constant we know */
		t->atom[0] = ATOM_STMT | d | ((uint64_t)elem << 32);
		t->coef[0] = 1;
		t->natom = 1;
		t->nonspecial = true;
		return 0;
	}
	default:
		return fail(c, "an instruction the address tracking does not follow");
	}
}

static int resolve_reg(Ctx *c, uint32_t at, uint32_t reg, unsigned depth, Term *t)
{
	memset(t, 0, sizeof *t);
	const RegInfo *ri = df_reg(c->df, reg);
	if (ri->special) {
		t->atom[0] = ATOM_SPECIAL | reg;
		t->coef[0] = 1;
		t->natom = 1;
		return 0;
	}
	if (depth > MAX_DEPTH)
		return fail(c, "the address chain is deeper than 64");
	int64_t d = df_reaching_def(c->df, at, reg);
	if (d == DF_DEF_MANY)
		return fail(c, "several definitions reach a register of the address");
	if (d == DF_DEF_NONE)
		return fail(c, df_reg_is_param(c->df, reg)
		                   ? "the address comes from a function parameter register"
		                   : "no definition reaches a register of the address");
	bool kills = false;
	if (!df_stmt_defines(c->df, (uint32_t)d, reg, &kills) || !kills)
		return fail(c, "the register is written only in part");
	/* which element of the destination is it? */
	const Module *m = c->m;
	const Stmt *s = func_stmt(m, df_func(c->df), (uint32_t)d);
	unsigned elem = 0;
	uint32_t o0 = stmt_opd_index(m, s, 0);
	if (m->opds.v[o0].kind == OPD_VEC || m->opds.v[o0].kind == OPD_PAIR) {
		uint32_t end = o0 + 1 + m->opds.v[o0].sub, k;
		for (k = o0 + 1; k < end; k = opd_next(m, k), elem++)
			if (df_opd_reg(c->df, k) == (int64_t)reg)
				break;
		if (k >= end)
			return fail(c, "the register is defined as part of a vector");
	}
	uint64_t key = (((uint64_t)d << 8) | (elem & 0xff)) + 1;
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 55); /* 9 bits */
	for (; c->slot[h]; h = (h + 1) & 511) {
		const Memo *me = &c->memo.v[c->slot[h] - 1];
		if (me->key == key) {
			if (!me->ok)
				return fail(c, me->why);
			*t = me->t;
			return 0;
		}
	}
	if (shared_get(c, key, t))
		return 0;
	if (++c->steps > MAX_STEPS)
		return fail(c, "the address chain is too large");
	int rc = resolve_def(c, (uint32_t)d, elem, depth + 1, t);
	if (rc == 0)
		shared_put(c, key, t);
	if (c->memo.n < MEMO_CAP) {
		Memo me = {key, rc == 0, rc == 0 ? NULL : (c->why ? c->why : "unresolved"), *t};
		VEC_PUSH(c->memo, me);
		/* the slot found free above may have been taken by the recursion */
		while (c->slot[h])
			h = (h + 1) & 511;
		c->slot[h] = (uint16_t)c->memo.n;
	}
	return rc;
}

static int resolve_opd(Ctx *c, uint32_t at, uint32_t opd, unsigned depth, Term *t)
{
	const Module *m = c->m;
	const Operand *o = &m->opds.v[opd];
	memset(t, 0, sizeof *t);
	if (o->flags & OPDF_NOT)
		return fail(c, "a negated operand in the address chain");
	switch (o->kind) {
	case OPD_INT:
		if (!ana_int_value(opd_str(m, o), &t->off))
			return fail(c, "an integer that does not parse");
		return 0;
	case OPD_REG:
	case OPD_IDENT: {
		int64_t r = df_opd_reg(c->df, opd);
		if (r < 0)
			r = df_reg_find(c->df, opd_str(m, o));
		if (r >= 0) {
			if (df_opd_partial(c->df, opd))
				return fail(c, "an element of a vector register in the address chain");
			return resolve_reg(c, at, (uint32_t)r, depth, t);
		}
		Str name = opd_str(m, o);
		Space sp = SP_GENERIC;
		int kind = df_name_kind(c->df, name, &sp);
		if (kind == DF_NAME_VAR) {
			t->base = AB_SYMBOL;
			t->base_name = name;
			t->space = sp;
			return 0;
		}
		if (kind == DF_NAME_LABEL)
			return fail(c, "a label in the address chain");
		const Func *f = df_func(c->df);
		for (uint32_t i = 0; i < f->nparam; i++) {
			const Param *p = &m->params.v[f->param0 + i];
			if (p->space != 'r' && str_eq(mod_str(m, p->name), name)) {
				t->base = AB_PARAM;
				t->base_name = name;
				t->space = SP_PARAM;
				return 0;
			}
		}
		if (o->kind == OPD_REG)
			return fail(c, "an undeclared register in the address chain");
		if (mod_func_find(m, name))
			return fail(c, "a function name in the address chain");
		/* a variable declared inside the function body (not in the model:
		 * the parser skips those directives), e.g. __local_depot0 */
		t->base = AB_SYMBOL;
		t->base_name = name;
		t->space = SP_GENERIC;
		return 0;
	}
	case OPD_EXPR: {
		uint32_t end = opd + 1 + o->sub;
		bool firstterm = true;
		for (uint32_t k = opd + 1; k < end; k = opd_next(m, k)) {
			Term u;
			if (resolve_opd(c, at, k, depth, firstterm ? t : &u) < 0)
				return -1;
			if (!firstterm && sum(c, t, &u, 1) < 0)
				return -1;
			firstterm = false;
		}
		return 0;
	}
	case OPD_FLOAT:
		return fail(c, "a floating-point value in the address chain");
	case OPD_VEC:
		return fail(c, "a vector in the address chain");
	default:
		return fail(c, "an operand the address tracking does not follow");
	}
}

/* ---- element size -------------------------------------------------------- */

static void access_size(const Module *m, const Stmt *s, uint32_t *elem, uint32_t *nelem)
{
	Str op = stmt_opcode(m, s);
	uint32_t bytes = 0, n = 1;
	bool ldm = s->op == OP_LDMATRIX || s->op == OP_STMATRIX;
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p + 1;
		while (q < end && *q != '.')
			q++;
		Str comp = str_of(p, (size_t)(q - p));
		if (*p == '.' && comp.n >= 3) {
			if (comp.p[1] == 'v' && comp.p[2] >= '0' && comp.p[2] <= '9')
				n = (uint32_t)atoi(comp.p + 2);
			else if (ldm && comp.p[1] == 'x' && comp.p[2] >= '0' && comp.p[2] <= '9')
				n = (uint32_t)atoi(comp.p + 2);
			else if (str_eqc(comp, ".pred"))
				;
			else {
				char k = comp.p[1];
				size_t i = 2;
				if (k == 'b' && comp.n > 3 && comp.p[2] == 'f')
					i = 3;
				else if (!(k == 'u' || k == 's' || k == 'b' || k == 'f'))
					i = 0;
				if (i && i < comp.n && comp.p[i] >= '0' && comp.p[i] <= '9') {
					uint32_t bits = 0, mult = 1;
					while (i < comp.n && comp.p[i] >= '0' && comp.p[i] <= '9')
						bits = bits * 10 + (uint32_t)(comp.p[i++] - '0');
					if (i + 1 < comp.n && comp.p[i] == 'x')
						mult = (uint32_t)atoi(comp.p + i + 1);
					if (i == comp.n || comp.p[i] == 'x')
						bytes = bits * (mult ? mult : 1) / 8;
				}
			}
		}
		p = q;
	}
	if (ldm)
		bytes = 4; /* one .b32 register (two b16) per matrix per lane */
	if (s->op == OP_CP) {
		/* cp.async.ca.shared.global [dst], [src], cp-size */
		int64_t v;
		if (s->nopd >= 3 && stmt_opd(m, s, 2)->kind == OPD_INT &&
		    ana_int_value(opd_str(m, stmt_opd(m, s, 2)), &v) && v > 0) {
			bytes = (uint32_t)v;
			n = 1;
		} else
			bytes = 0;
	}
	*elem = bytes;
	*nelem = bytes ? n : 0;
}

/* ---- the entry point ----------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h;
}

typedef struct {
	uint64_t atom;
	int64_t coef;
} AtomCoef;

static int cmp_atom(const void *a, const void *b)
{
	uint64_t x = ((const AtomCoef *)a)->atom, y = ((const AtomCoef *)b)->atom;
	return x < y ? -1 : x > y;
}

static int resolve_stmt(Dataflow *df, uint32_t stmt, Addr *out);
static int term_addr(Dataflow *df, const Term *t, bool coords, Addr *out);

int addr_resolve(Dataflow *df, uint32_t stmt, Addr *out)
{
	memset(out, 0, sizeof *out);
	if (stmt >= df_func(df)->nstmt)
		return -1;
	AddrMemo *memo = memo_of(df);
	if (!memo->state[stmt]) {
		int rc = resolve_stmt(df, stmt, &memo->addr[stmt]);
		memo->state[stmt] = (int8_t)(rc + 2);
	}
	*out = memo->addr[stmt];
	return memo->state[stmt] - 2;
}

const Addr *addr_cached(Dataflow *df, uint32_t stmt)
{
	Addr a;
	if (addr_resolve(df, stmt, &a) != 1)
		return NULL;
	return &memo_of(df)->addr[stmt];
}

static int resolve_stmt(Dataflow *df, uint32_t stmt, Addr *out)
{
	memset(out, 0, sizeof *out);
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	const Stmt *s = func_stmt(m, f, stmt);
	uint32_t k = s->opd + ((s->flags & STMT_GUARD) ? 1 : 0);
	uint32_t a = UINT32_MAX;
	for (unsigned i = 0; i < s->nopd; i++, k = opd_next(m, k))
		if (m->opds.v[k].kind == OPD_ADDR) {
			a = k;
			break;
		}
	if (a == UINT32_MAX)
		return -1;
	out->space = stmt_space(m, s);
	access_size(m, s, &out->elem_bytes, &out->nelem);
	if (m->opds.v[a].sub == 0) {
		out->why = "empty address";
		return 0;
	}
	Ctx c;
	memset(&c, 0, sizeof c);
	c.df = df;
	c.m = m;
	c.wide_ptr32 = m->address_size.len == 2 && memcmp(m->src + m->address_size.off, "32", 2) == 0;
	Term t;
	uint32_t first = a + 1;
	bool coords = opd_next(m, first) < a + 1 + m->opds.v[a].sub; /* [tex, {x, y}] */
	int rc = resolve_opd(&c, stmt, first, 0, &t);
	VEC_FREE(c.memo);
	if (rc < 0) {
		out->base = AB_NONE;
		out->why = c.why ? c.why : "unresolved";
		return 0;
	}
	return term_addr(df, &t, coords, out);
}

int addr_value(Dataflow *df, uint32_t stmt, uint32_t reg, Addr *out)
{
	memset(out, 0, sizeof *out);
	if (stmt >= df_func(df)->nstmt || reg >= df_nregs(df))
		return -1;
	const Module *m = df_module(df);
	Ctx c;
	memset(&c, 0, sizeof c);
	c.df = df;
	c.m = m;
	c.wide_ptr32 = m->address_size.len == 2 && memcmp(m->src + m->address_size.off, "32", 2) == 0;
	Term t;
	int rc = resolve_reg(&c, stmt, reg, 0, &t);
	VEC_FREE(c.memo);
	if (rc < 0) {
		out->base = AB_NONE;
		out->why = c.why ? c.why : "unresolved";
		return 0;
	}
	return term_addr(df, &t, false, out);
}

/* The Addr of a resolved term: 1, or 0 with out->why. */
static int term_addr(Dataflow *df, const Term *tp, bool coords, Addr *out)
{
	Term t = *tp;
	bool variable = t.natom || t.atom_over || coords;
	if (t.base == AB_NONE) {
		if (t.nonspecial) {
			out->why = "the address has no base (an index from a parameter value)";
			return 0;
		}
		out->base = variable ? AB_SPECIAL : AB_ABSOLUTE;
	} else {
		out->base = t.base;
		out->base_name = t.base_name;
		out->param_off = t.param_off;
		out->param_ptr = t.param_ptr;
		out->dynamic_shared = t.base == AB_SYMBOL && df_var_unsized(df, t.base_name);
	}
	if (out->space == SP_GENERIC && t.space != SP_GENERIC && t.space != SP_PARAM)
		out->space = t.space;
	out->offset = t.off;
	out->variable = variable;
	AtomCoef at[MAX_ATOMS];
	for (uint32_t i = 0; i < t.natom && !t.atom_over; i++)
		at[i] = (AtomCoef){t.atom[i], t.coef[i]};
	if (t.natom && !t.atom_over)
		qsort(at, t.natom, sizeof(AtomCoef), cmp_atom);
	if (t.natom && !t.atom_over && !coords) {
		uint64_t h = 0x5bd1e995;
		for (uint32_t i = 0; i < t.natom; i++)
			h = mix(mix(h, at[i].atom), (uint64_t)at[i].coef);
		out->var_key = h ? h : 1;
	}
	/* the variable part as strides of special registers, when that is
	 * exactly what it is */
	out->stride_known =
	    !coords && !t.atom_over && !t.wrap && t.natom <= ARRAY_SIZE(out->stride);
	for (uint32_t i = 0; i < t.natom && out->stride_known; i++) {
		if ((at[i].atom & ATOM_KIND) != ATOM_SPECIAL) {
			out->stride_known = false;
			break;
		}
		out->stride[i].reg = (uint32_t)(at[i].atom & 0xffffffffu);
		out->stride[i].bytes = at[i].coef;
	}
	out->nstride = out->stride_known ? (uint8_t)t.natom : 0;
	return 1;
}
