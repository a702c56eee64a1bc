/*
 * names.c - the names of one function: which are registers (and which
 * register a name means at a statement), labels, module variables, or
 * something else.
 *
 * Every leaf operand is looked up in one table (Str -> register id): plain
 * `.reg` declarations are entered up front, range declarations `%r<500>`
 * are kept as (prefix, count) and a name like `%r123` becomes a register
 * the first time it is seen, special registers (%tid.x, %laneid, %clock64,
 * ...) too; anything else (labels, parameters, variables, functions) is
 * remembered as "not a register".
 *
 * Decisions (documented for the users of ana.h):
 *  - A name declared in several { } scopes (inline asm blocks each
 *    declaring `p`, `r0`, ...) gives one register per declaring scope; a
 *    use resolves to the innermost enclosing scope that declares it.  The
 *    scopes are the model's (the parser records where each `{ }` opens
 *    and closes and the scope of every declaration); they are read only
 *    in functions that repeat a name.  df_reg_find(name), having no
 *    position, answers the first declaration.  Range declarations
 *    (`%r<N>`) are not split by scope.
 *  - A .func parameter declared in .reg space is a register, defined by
 *    the caller (df_reg_is_param).
 */
#include "df_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the name table ------------------------------------------------------ */

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

NameEnt *df_name_entry(const Dataflow *df, const char *p, size_t n)
{
	return ht_find(df, p, n);
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

/* Register id of a name as seen from statement `stmt` (UINT32_MAX: from the
 * function body), -1 if it is not a register.  Enters range members,
 * special registers and non-registers into the table on first sight. */
int32_t df_lookup(Dataflow *df, const char *p, size_t n, uint32_t stmt, uint8_t *partial)
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
		int32_t id = df_lookup(df, p, (size_t)(last - 1 - p), stmt, NULL);
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
	return df_lookup(df, p, n, UINT32_MAX, partial);
}

/* ---- scopes: a register per declaring scope ------------------------------ */

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

static void read_scopes(Dataflow *df, uint32_t *decl_scope);

/* Gives each declaration of a name declared in several scopes its own
 * register (the first declaration keeps the id it already has). */
static void split_scoped(Dataflow *df)
{
	const Module *m = df->m;
	const Func *f = df->f;
	uint32_t *decl_scope = xcalloc(f->nreg + 1, sizeof(uint32_t));
	read_scopes(df, decl_scope);
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

/* ---- the { } scopes, from the model -------------------------------------- */

/*
 * Takes the function's { } scopes from the model (Func.scope0/nscope: the
 * parser records where each opens and closes): fills stmt_scope, the scope
 * parents and decl_scope (per RegDecl of the function).
 */
static void read_scopes(Dataflow *df, uint32_t *decl_scope)
{
	const Module *m = df->m;
	const Func *f = df->f;
	df->stmt_scope = xmalloc((df->nstmt + 1) * sizeof(uint32_t));
	func_stmt_scopes(m, f, df->stmt_scope);
	uint32_t ns = f->nscope ? f->nscope : 1;
	df->scope_parent = xmalloc(ns * sizeof(uint32_t));
	df->scope_parent[0] = 0;
	for (uint32_t k = 0; k < f->nscope; k++)
		df->scope_parent[k] = func_scope(m, f, k)->parent;
	df->nscope = ns;
	for (uint32_t i = 0; i < f->nreg; i++)
		decl_scope[i] = m->regs.v[f->reg0 + i].scope;
}

/* ---- entering the names of a function ------------------------------------ */

/* The state space of a module variable, from the space the parser read. */
static Space var_space(const Item *it)
{
	switch (it->space) {
	case 's': return SP_SHARED;
	case 'g': return SP_GLOBAL;
	case 'c': return SP_CONST;
	case 'l': return SP_LOCAL;
	case 'p': return SP_PARAM;
	default: return SP_GENERIC;
	}
}

void df_names_build(Dataflow *df)
{
	const Module *m = df->m;
	const Func *f = df->f;
	uint32_t n = df->nstmt;
	ht_grow(df);

	/* labels first: a name used as a branch target is never a register */
	for (uint32_t i = 0; i < f->nlabel; i++) {
		const Label *l = &m->labels.v[f->label0 + i];
		NameEnt *ne = ht_find(df, m->src + l->name.off, l->name.len);
		if (ne->p && ne->kind == NK_LABEL) {
			ne->scoped = 1; /* the same label in two scopes: see df_blocks_build */
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
		ne->var = (uint8_t)(1 + var_space(it));
		/* `.extern .shared .b8 smem[]`: dynamic shared memory, which every
		 * such declaration names from its start */
		if ((it->flags & (ITEMF_EXTERN | ITEMF_UNSIZED)) == (ITEMF_EXTERN | ITEMF_UNSIZED))
			ne->var |= 16;
	}
}

/* ---- queries ------------------------------------------------------------- */

uint32_t df_nregs(const Dataflow *df) { return (uint32_t)df->regs.n; }

const RegInfo *df_reg(const Dataflow *df, uint32_t reg)
{
	return reg < df->regs.n ? &df->regs.v[reg] : NULL;
}

int64_t df_reg_find(Dataflow *df, Str name)
{
	return lookup(df, name.p, name.n, NULL);
}

bool df_reg_is_param(const Dataflow *df, uint32_t reg)
{
	return reg < df->regparam.n && df->regparam.v[reg];
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
