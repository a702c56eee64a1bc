/*
 * probe.c - probe plans, the instrumented module, and plans carried over
 * to a spliced module (probe.h has the model and the dump's layout).
 *
 *   1. plans: the values of a range (its live-out registers from the cut
 *      interface, or everything it defines) with the format each is read
 *      in; one record per phase; sorting, merging, layout;
 *   2. instrumenting: where lines can go (the end of a statement's line,
 *      found with the lexer, so a comment never swallows them), which
 *      registers are visible there (the model's scopes and declarations),
 *      the text of each record's stores, one ptx_emit with insertions only;
 *   3. alignment and mapping onto a spliced module: probemap.c.
 *
 * Decisions:
 *  - Each record's stores sit in a `{ }` scope with registers of their own
 *    (named with the record's number under one fresh prefix, so no name is
 *    declared twice), and compute the warp's slot from %tid, %ntid, %ctaid
 *    and %nctaid at the record: a dozen integer instructions per record and
 *    no register held across the kernel, which would change register
 *    pressure everywhere rather than at the probes.
 *  - The dump pointer is read from the symbol at every record (one load,
 *    cached) rather than passed in: the parameter block stays the vendor's.
 *  - A record's position is the end of its statement's line, never inside
 *    a line: so the instrumented text holds every line of the input, which
 *    is what makes a probe an insertion that a reader (and a test) can
 *    check without trusting the inserter.
 *  - The format of a value comes from its declaration when that is typed
 *    (.f32, .u64 ...) and else from the instruction that last defined it in
 *    the range: an f16 mma's D is f16x2, cvt.rn.f16x2.f32 gives f16x2, a
 *    .b32 whose definition says nothing more stays b32 (shown in hex).
 */
#include "probe.h"

#include "ptx/emit.h"
#include "ptx/lex.h"
#include "template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- formats ----------------------------------------------------------------- */

static const struct {
	const char *name;
	unsigned bits;
} fmts[PF__COUNT] = {
    [PF_HEX8] = {"b8", 8},      [PF_U8] = {"u8", 8},          [PF_S8] = {"s8", 8},
    [PF_HEX16] = {"b16", 16},   [PF_U16] = {"u16", 16},       [PF_S16] = {"s16", 16},
    [PF_F16] = {"f16", 16},     [PF_BF16] = {"bf16", 16},     [PF_HEX32] = {"b32", 32},
    [PF_U32] = {"u32", 32},     [PF_S32] = {"s32", 32},       [PF_F32] = {"f32", 32},
    [PF_F16X2] = {"f16x2", 32}, [PF_BF16X2] = {"bf16x2", 32}, [PF_HEX64] = {"b64", 64},
    [PF_U64] = {"u64", 64},     [PF_S64] = {"s64", 64},       [PF_F64] = {"f64", 64},
    [PF_PRED] = {"pred", 1},
};

const char *probe_fmt_name(ProbeFmt f)
{
	return f < PF__COUNT ? fmts[f].name : "?";
}

unsigned probe_fmt_bits(ProbeFmt f)
{
	return f < PF__COUNT ? fmts[f].bits : 0;
}

/* The format a type name means (".f32", "f16x2"), or -1; with `typed_only`,
 * the untyped .bN give -1 too (a declaration .b32 says nothing). */
static int fmt_of_type(const char *p, size_t n, bool typed_only)
{
	if (n && *p == '.')
		p++, n--;
	for (int f = 0; f < PF__COUNT; f++)
		if (strlen(fmts[f].name) == n && !memcmp(fmts[f].name, p, n)) {
			if (typed_only &&
			    (f == PF_HEX8 || f == PF_HEX16 || f == PF_HEX32 ||
			     f == PF_HEX64 || f == PF_PRED))
				return -1;
			return f;
		}
	return -1;
}

static ProbeFmt hex_of_bits(unsigned bits)
{
	return bits == 8    ? PF_HEX8
	       : bits == 16 ? PF_HEX16
	       : bits == 64 ? PF_HEX64
	                    : PF_HEX32;
}

/* The format of register ri whose last definition in the range is `def`
 * (may be NULL), or -1 when it is no width a probe stores (.b128). */
int probe_value_fmt(const Module *m, const Stmt *def, const RegInfo *ri)
{
	if (ri->bits == 1)
		return PF_PRED;
	if (ri->bits != 8 && ri->bits != 16 && ri->bits != 32 && ri->bits != 64)
		return -1;
	int f = fmt_of_type(ri->type.p, ri->type.n, true);
	if (f >= 0 && probe_fmt_bits((ProbeFmt)f) == ri->bits)
		return f;
	if (def) {
		/* the first component of the opcode that names a type */
		Str op = stmt_opcode(m, def);
		const char *p = op.p, *end = op.p + op.n;
		while (p < end) {
			const char *q = memchr(p, '.', (size_t)(end - p));
			if (!q)
				q = end;
			int t = fmt_of_type(p, (size_t)(q - p), false);
			if (t >= 0 && p != op.p) {
				if (ana_stmt_is_mma(def) && ri->bits == 32 &&
				    t == PF_F16)
					return PF_F16X2;
				if (ana_stmt_is_mma(def) && ri->bits == 32 &&
				    t == PF_BF16)
					return PF_BF16X2;
				if (t != PF_PRED &&
				    probe_fmt_bits((ProbeFmt)t) == ri->bits)
					return t;
				break;
			}
			p = q + 1;
		}
	}
	return hex_of_bits(ri->bits);
}

/* Bytes of a value's slot per lane. */
static unsigned slot_bytes(ProbeFmt f)
{
	return probe_fmt_bits(f) == 64 ? 8 : 4;
}

/* ---- 1. plans ---------------------------------------------------------------- */

static void value_release(ProbeValue *v)
{
	free(v->name);
}

void probe_plan_release(ProbePlan *p)
{
	for (size_t i = 0; i < p->recs.n; i++) {
		for (size_t k = 0; k < p->recs.v[i].vals.n; k++)
			value_release(&p->recs.v[i].vals.v[k]);
		VEC_FREE(p->recs.v[i].vals);
		free(p->recs.v[i].code);
	}
	VEC_FREE(p->recs);
	memset(p, 0, sizeof *p);
}

void probe_record_copy(const ProbeRecord *src, ProbeRecord *dst)
{
	*dst = *src;
	dst->code = src->code ? xstrdup(src->code) : NULL;
	memset(&dst->vals, 0, sizeof dst->vals);
	for (size_t k = 0; k < src->vals.n; k++) {
		ProbeValue v = src->vals.v[k];
		v.name = xstrdup(v.name);
		VEC_PUSH(dst->vals, v);
	}
}

void probe_plan_copy(const ProbePlan *src, ProbePlan *dst)
{
	memset(dst, 0, sizeof *dst);
	for (size_t i = 0; i < src->recs.n; i++) {
		ProbeRecord r;
		probe_record_copy(&src->recs.v[i], &r);
		VEC_PUSH(dst->recs, r);
	}
	dst->warp_bytes = src->warp_bytes;
	dst->skipped = src->skipped;
}

static int64_t line_end(const Module *m, size_t off);
static uint32_t scope_at(const Module *m, const Func *f, size_t off);
static int64_t decl_visible(const Module *m, const Func *f, Str name, uint32_t sc);

/* Appends register `reg` (last defined in the range at `def`) to r; with
 * `at_scope` (not UINT32_MAX), only when its name means that register in
 * the record's scope. */
static void add_reg(Dataflow *df, ProbeRecord *r, uint32_t reg, uint32_t def,
                    ProbePlan *plan, uint32_t at_scope)
{
	const RegInfo *ri = df_reg(df, reg);
	if (ri->special)
		return;
	const Module *m = df_module(df);
	if (at_scope != UINT32_MAX) {
		const Func *f = df_func(df);
		int64_t here = decl_visible(m, f, ri->name, at_scope);
		int64_t there = decl_visible(m, f, ri->name,
		                             scope_at(m, f, func_stmt(m, f, def)->off));
		if (here != there) {
			plan->skipped++;
			return;
		}
	}
	int f = ri->vec ? -1 : probe_value_fmt(m, func_stmt(m, df_func(df), def), ri);
	if (f < 0) {
		plan->skipped++;
		return;
	}
	ProbeValue v = {.kind = PV_REG, .fmt = (uint8_t)f, .def = def};
	v.name = xstrndup(ri->name.p, ri->name.n);
	VEC_PUSH(r->vals, v);
}

int probe_plan_range(Dataflow *df, uint32_t first, uint32_t last, ProbeRegs regs,
                     uint8_t what, uint32_t phase, ProbePlan *plan, Err *e)
{
	if (first > last || last >= df_nstmt(df))
		return err_set(
		    e, "probe: range s%u..s%u is not inside the function (s0..s%u)",
		    first, last, df_nstmt(df) ? df_nstmt(df) - 1 : 0);
	ProbeRecord r = {.at = last, .what = what, .phase = phase, .first = first};
	if (regs == PROBE_REGS_LIVE_OUT) {
		CutInterface cut = {0};
		if (df_cut(df, first, last, &cut, e) < 0) {
			cut_release(&cut);
			return -1;
		}
		for (size_t i = 0; i < cut.live_out.n; i++)
			add_reg(df, &r, cut.live_out.v[i].reg, cut.live_out.v[i].stmt,
			        plan, UINT32_MAX);
		cut_release(&cut);
	} else {
		/* every register the range defines, in first-definition order, each
		 * with its last definition */
		uint32_t nregs = df_nregs(df);
		uint32_t *lastdef = xcalloc(nregs + 1, sizeof(uint32_t));
		VEC(uint32_t) order = {0};
		for (uint32_t s = first; s <= last; s++) {
			uint32_t n;
			const uint32_t *d = df_defs(df, s, &n);
			for (uint32_t k = 0; k < n; k++) {
				if (d[k] >= nregs)
					continue;
				if (!lastdef[d[k]])
					VEC_PUSH(order, d[k]);
				lastdef[d[k]] = s + 1;
			}
		}
		/* a temporary of a { } scope that has closed is not there to store */
		const Module *m = df_module(df);
		const Func *f = df_func(df);
		const Stmt *ls = func_stmt(m, f, last);
		int64_t off = line_end(m, (size_t)ls->off + ls->len);
		uint32_t sc = off < 0 ? UINT32_MAX : scope_at(m, f, (size_t)off);
		for (size_t i = 0; i < order.n; i++)
			add_reg(df, &r, order.v[i], lastdef[order.v[i]] - 1, plan, sc);
		VEC_FREE(order);
		free(lastdef);
	}
	VEC_PUSH(plan->recs, r);
	return 0;
}

int probe_plan_phases(Dataflow *df, const PhaseList *pl, const NumList *phases,
                      ProbeAt at, ProbeRegs regs, ProbePlan *plan, Err *e)
{
	for (size_t i = 0; i < pl->n; i++) {
		const Phase *ph = &pl->v[i];
		if (phases && !numlist_has(phases, ph->number))
			continue;
		bool epi = at == PROBE_AT_EPILOGUE_END;
		uint32_t last = phase_cut_last(ph, epi);
		if (probe_plan_range(df, ph->first, last, regs,
		                     epi ? PR_EPILOGUE_END : PR_PHASE_END, ph->number,
		                     plan, e) < 0)
			return -1;
	}
	return 0;
}

static bool rec_before(const ProbeRecord *a, const ProbeRecord *b)
{
	if (a->at != b->at)
		return a->at < b->at;
	return a->before && !b->before;
}

void probe_plan_sort(ProbePlan *p)
{
	/* insertion sort: stable, and plans are short */
	for (size_t i = 1; i < p->recs.n; i++) {
		ProbeRecord r = p->recs.v[i];
		size_t j = i;
		while (j && rec_before(&r, &p->recs.v[j - 1])) {
			p->recs.v[j] = p->recs.v[j - 1];
			j--;
		}
		p->recs.v[j] = r;
	}
	size_t u = 0;
	for (size_t i = 0; i < p->recs.n; i++) {
		ProbeRecord *r = &p->recs.v[i];
		ProbeRecord *prev = u ? &p->recs.v[u - 1] : NULL;
		if (prev && prev->at == r->at && prev->before == r->before &&
		    prev->per_warp == r->per_warp) {
			for (size_t k = 0; k < r->vals.n; k++) {
				bool have = false;
				for (size_t q = 0; q < prev->vals.n && !have; q++)
					have =
					    prev->vals.v[q].kind == r->vals.v[k].kind &&
					    !strcmp(prev->vals.v[q].name,
					            r->vals.v[k].name) &&
					    (r->vals.v[k].kind == PV_REG ||
					     (prev->vals.v[q].read_at ==
					          r->vals.v[k].read_at &&
					      prev->vals.v[q].read_before ==
					          r->vals.v[k].read_before));
				if (have)
					value_release(&r->vals.v[k]);
				else
					VEC_PUSH(prev->vals, r->vals.v[k]);
			}
			if (r->first < prev->first)
				prev->first = r->first;
			VEC_FREE(r->vals);
			continue;
		}
		p->recs.v[u++] = *r;
	}
	p->recs.n = u;
}

int probe_plan_layout(ProbePlan *p, Err *e)
{
	uint64_t off = 0;
	for (size_t i = 0; i < p->recs.n; i++) {
		ProbeRecord *r = &p->recs.v[i];
		off = (off + 7) & ~(uint64_t)7;
		r->off = off;
		uint64_t ro = 0;
		for (size_t k = 0; k < r->vals.n; k++) {
			unsigned b = slot_bytes((ProbeFmt)r->vals.v[k].fmt);
			ro = (ro + b - 1) / b * b;
			if (ro > UINT32_MAX)
				return err_set(
				    e, "probe: record %zu holds more than 4 GB per warp",
				    i);
			r->vals.v[k].off = (uint32_t)ro;
			ro += r->per_warp ? b : 32u * b;
		}
		r->bytes = (ro + 7) & ~(uint64_t)7;
		r->nvals = r->vals.n * (r->per_warp ? 1 : 32);
		off += r->bytes;
	}
	p->warp_bytes = off;
	if (off > 0x7fffffff)
		return err_set(
		    e,
		    "probe: one warp's records take %llu bytes, more than the 2 GB a "
		    "store's offset reaches: probe fewer phases or registers",
		    (unsigned long long)off);
	return 0;
}

void probe_record_name(const ProbeRecord *r, StrBuf *out)
{
	switch (r->what) {
	case PR_PHASE_END:
		sb_addf(out, "phase %u end", r->phase);
		return;
	case PR_EPILOGUE_END:
		sb_addf(out, "phase %u epilogue end", r->phase);
		return;
	case PR_CUT_END:
		if (r->phase)
			sb_addf(out, "phase %u end (cut s%u-s%u)", r->phase, r->first,
			        r->at);
		else
			sb_addf(out, "cut s%u-s%u end", r->first, r->at);
		return;
	default:
		sb_addf(out, "%s s%u", r->before ? "before" : "after", r->at);
	}
}

/* ---- 2. instrumenting ----------------------------------------------------------- */

/* The offset just past the newline that ends the line holding byte `off`
 * (the byte after a statement's ';'), or -1 when code follows on that
 * line.  Comments after the statement belong to its line; where a comment
 * ends is the lexer's to say, so a block comment that spans lines is
 * stepped over whole (its last line is then the line).  Braces may follow:
 * they run no code, and which registers are visible past them is the
 * scope check's business. */
static int64_t line_end(const Module *m, size_t off)
{
	Lexer lx = ptx_lex_init(m->src + off, m->len - off);
	for (;;) {
		Token t = ptx_lex_next(&lx);
		if (t.kind == TK_END)
			return -1;
		if (t.kind == TK_SPACE) {
			const char *nl = memchr(t.p, '\n', t.n);
			if (nl)
				return nl + 1 - m->src;
			continue;
		}
		if (t.kind == TK_COMMENT ||
		    (t.kind == TK_PUNCT && (*t.p == '}' || *t.p == '{')))
			continue;
		return -1;
	}
}

/* The innermost scope of f holding offset `off` (0: the body). */
static uint32_t scope_at(const Module *m, const Func *f, size_t off)
{
	uint32_t best = 0;
	uint16_t depth = 0;
	for (uint32_t k = 0; k < f->nscope; k++) {
		const Scope *sc = func_scope(m, f, k);
		if (sc->open < off && off <= sc->close && sc->depth > depth) {
			best = k;
			depth = sc->depth;
		}
	}
	return best;
}

/* Is scope `anc` scope `k` or one around it? */
static bool scope_within(const Module *m, const Func *f, uint32_t k, uint32_t anc)
{
	for (;;) {
		if (k == anc)
			return true;
		if (k == 0)
			return false;
		k = func_scope(m, f, k)->parent;
	}
}

/* Does declaration d declare `name`? */
static bool decl_names(const Module *m, const RegDecl *d, Str name)
{
	Str dn = mod_str(m, d->name);
	if (!d->range)
		return str_eq(dn, name);
	if (name.n <= dn.n || memcmp(name.p, dn.p, dn.n))
		return false;
	uint64_t v = 0;
	for (size_t i = dn.n; i < name.n; i++) {
		if (name.p[i] < '0' || name.p[i] > '9' || i - dn.n > 9)
			return false;
		v = v * 10 + (uint64_t)(name.p[i] - '0');
	}
	if (name.n - dn.n > 1 && name.p[dn.n] == '0')
		return false;
	return v < d->count;
}

/* The declaration of `name` that scope `sc` sees (the nearest one around
 * it), as an index into f's declarations; -2 for a .reg parameter of a
 * .func; -1 when none is visible. */
static int64_t decl_visible(const Module *m, const Func *f, Str name, uint32_t sc)
{
	int64_t best = -1;
	uint16_t bd = 0;
	for (uint32_t i = 0; i < f->nreg; i++) {
		const RegDecl *d = &m->regs.v[f->reg0 + i];
		if (!decl_names(m, d, name) || !scope_within(m, f, sc, d->scope))
			continue;
		uint16_t depth = func_scope(m, f, d->scope)->depth;
		if (best < 0 || depth > bd) {
			best = i;
			bd = depth;
		}
	}
	if (best >= 0)
		return best;
	for (uint32_t i = 0; i < f->nparam; i++) {
		const Param *pa = &m->params.v[f->param0 + i];
		if (pa->space == 'r' && str_eq(mod_str(m, pa->name), name))
			return -2;
	}
	return -1;
}

/* Bits of the type a visible declaration gives (decl_visible's answer). */
static uint32_t decl_bits(const Module *m, const Func *f, Str name, int64_t d)
{
	Span t;
	if (d >= 0)
		t = m->regs.v[f->reg0 + (uint32_t)d].type;
	else {
		t.off = t.len = 0;
		for (uint32_t i = 0; i < f->nparam; i++) {
			const Param *pa = &m->params.v[f->param0 + i];
			if (pa->space == 'r' && str_eq(mod_str(m, pa->name), name))
				t = pa->type;
		}
	}
	Str ts = mod_str(m, t);
	return ptx_type_bits(ts.p, ts.n);
}

/* A module-level name no item of m has. */
static void fresh_symbol(const Module *m, const char *want, char out[96])
{
	for (unsigned n = 0;; n++) {
		if (n)
			snprintf(out, 96, "%s_%u", want, n);
		else
			snprintf(out, 96, "%s", want);
		bool taken = false;
		for (size_t i = 0; i < m->items.n && !taken; i++)
			taken = str_eqc(mod_str(m, m->items.v[i].name), out);
		for (size_t i = 0; i < m->funcs.n && !taken; i++)
			taken = str_eqc(mod_str(m, m->funcs.v[i].name), out);
		if (!taken)
			return;
	}
}

typedef struct {
	const ProbeRequest *req;
	const Module *m;
	const Func *f;
	ProbeResult *res;
	Err *e;
} Ins;

static const char *fname(const Ins *in)
{
	return mod_str(in->m, in->f->name).p;
}

/* The insertion offset of a position: after statement `at`, or before it. */
static int64_t position(const Ins *in, uint32_t at, bool before, const char *what)
{
	const Module *m = in->m;
	const Func *f = in->f;
	int fl = (int)f->name.len;
	if (at >= f->nstmt)
		return err_set(in->e,
		               "probe: %s: s%u is not a statement of '%.*s' (s0..s%u)",
		               what, at, fl, fname(in), f->nstmt ? f->nstmt - 1 : 0);
	const Stmt *s = func_stmt(m, f, at);
	if (before) {
		for (uint32_t i = 0; i < f->nlabel; i++)
			if (m->labels.v[f->label0 + i].stmt == at)
				return err_set(
				    in->e,
				    "probe: %s: s%u (line %u) follows a label: a probe "
				    "before "
				    "it would not run for a branch to the label",
				    what, at, s->line);
		if (at == 0)
			return err_set(
			    in->e,
			    "probe: %s: a probe before the first statement (s0, line %u) "
			    "is not supported: put it after one",
			    what, s->line);
		const Stmt *p = func_stmt(m, f, at - 1);
		Op op = (Op)p->op;
		if (op == OP_BRA || op == OP_BRX || op == OP_RET || op == OP_EXIT ||
		    op == OP_TRAP)
			return err_set(
			    in->e,
			    "probe: %s: s%u (line %u) follows a branch, ret or exit",
			    what, at, s->line);
		int64_t off = line_end(m, (size_t)p->off + p->len);
		if (off < 0 || off > s->off)
			return err_set(
			    in->e,
			    "probe: %s: s%u (line %u) shares its line with s%u: a probe "
			    "would have to split the line",
			    what, at, s->line, at - 1);
		return off;
	}
	Op op = (Op)s->op;
	if (op == OP_BRA || op == OP_BRX || op == OP_RET || op == OP_EXIT ||
	    op == OP_TRAP)
		return err_set(
		    in->e,
		    "probe: %s: s%u (line %u) is a branch, ret or exit: a probe after "
		    "it would run on one path only, or never",
		    what, at, s->line);
	int64_t off = line_end(m, (size_t)s->off + s->len);
	if (off < 0)
		return err_set(
		    in->e,
		    "probe: %s: code follows s%u on its line (line %u): a probe "
		    "would have to split the line",
		    what, at, s->line);
	if ((uint64_t)off > f->body_close)
		return err_set(
		    in->e,
		    "probe: %s: the function ends on the line of s%u (line %u): a "
		    "probe would land outside it",
		    what, at, s->line);
	return off;
}

/* Can record r be stored where it says?  Its position, each read's, and
 * each register (visible there, the register its definition means, of its
 * format's width).  Returns the record's insertion offset, or -1 with the
 * reason (`what` names the record). */
static int64_t check_record(const Ins *in, const ProbeRecord *r, const char *what)
{
	const Module *m = in->m;
	const Func *f = in->f;
	Err *e = in->e;
	int64_t off = position(in, r->at, r->before, what);
	if (off < 0)
		return -1;
	uint32_t sc = scope_at(m, f, (size_t)off);
	for (size_t k = 0; k < r->vals.n; k++) {
		const ProbeValue *v = &r->vals.v[k];
		if (v->kind == PV_READ) {
			if (v->read_at > r->at ||
			    (v->read_at == r->at && !v->read_before && r->before))
				return err_set(e,
				               "probe: %s: '%s' is read at %s s%u, after "
				               "the record is stored",
				               what, v->name,
				               v->read_before ? "before" : "after",
				               v->read_at);
			if (position(in, v->read_at, v->read_before, what) < 0)
				return -1;
			continue;
		}
		Str name = str_c(v->name);
		int64_t d = decl_visible(m, f, name, sc);
		if (d == -1)
			return err_set(
			    e,
			    "probe: %s: register '%s' is not visible %s s%u (line %u): "
			    "declared in a '{ }' scope that is not open there, or not at "
			    "all",
			    what, v->name, r->before ? "before" : "after", r->at,
			    func_stmt(m, f, r->at)->line);
		if (v->def != UINT32_MAX && v->def < f->nstmt) {
			const Stmt *ds = func_stmt(m, f, v->def);
			if (decl_visible(m, f, name, scope_at(m, f, ds->off)) != d)
				return err_set(
				    e,
				    "probe: %s: register '%s' defined at s%u (line %u) "
				    "is hidden "
				    "at the probe by another declaration of that name",
				    what, v->name, v->def, ds->line);
		}
		uint32_t bits = decl_bits(m, f, name, d);
		if (bits != probe_fmt_bits((ProbeFmt)v->fmt))
			return err_set(
			    e,
			    "probe: %s: register '%s' has %u bits, its format %s has %u",
			    what, v->name, bits, probe_fmt_name((ProbeFmt)v->fmt),
			    probe_fmt_bits((ProbeFmt)v->fmt));
	}
	return off;
}

int probe_record_check(const Module *m, const Func *f, const ProbeRecord *r, Err *e)
{
	ProbeRequest req = {m, f, NULL, NULL};
	Ins in = {&req, m, f, NULL, e};
	StrBuf what = STRBUF_INIT;
	probe_record_name(r, &what);
	int64_t off = check_record(&in, r, what.p);
	sb_release(&what);
	return off < 0 ? -1 : 0;
}

typedef struct {
	size_t off;
	int order; /* at one offset: declarations 0, reads 1, stores 2 */
	size_t seq;
	int32_t rec; /* ProbeInsert.rec */
	StrBuf text;
} Piece;

static int cmp_piece(const void *a, const void *b)
{
	const Piece *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The register name a value is stored from: the module's, or the fresh
 * register of a read (reads[k] numbers them). */
static void value_reg(const Ins *in, const ProbeValue *v, uint32_t read_no, StrBuf *out)
{
	if (v->kind == PV_REG)
		sb_adds(out, v->name);
	else
		sb_addf(out, "%s%c%u", in->res->prefix,
		        probe_fmt_bits((ProbeFmt)v->fmt) == 64 ? 'c' : 'w', read_no);
}

/* Appends `tpl` with "@T" and "@A" replaced by the record's register
 * names (T: .b32 temporaries, A: .b64 addresses). */
static void put(StrBuf *t, const char *tpl, const char *T, const char *A)
{
	for (const char *p = tpl; *p; p++) {
		if (p[0] == '@' && (p[1] == 'T' || p[1] == 'A')) {
			sb_adds(t, p[1] == 'T' ? T : A);
			p++;
		} else
			sb_addc(t, *p);
	}
}

/* The record's stores, in their own scope. */
static void record_text(const Ins *in, const ProbeRecord *r, size_t ri,
                        const uint32_t *read_no, StrBuf *t)
{
	const char *px = in->res->prefix;
	StrBuf nm = STRBUF_INIT;
	probe_record_name(r, &nm);
	const Stmt *s = func_stmt(in->m, in->f, r->at);
	bool wide = false;
	for (size_t k = 0; k < r->vals.n; k++)
		wide |= slot_bytes((ProbeFmt)r->vals.v[k].fmt) == 8;
	char T[64], A[64]; /* a prefix (31 bytes at most), a number, "_t" */
	snprintf(T, sizeof T, "%s%zu_t", px, ri);
	snprintf(A, sizeof A, "%s%zu_a", px, ri);
	sb_addf(t,
	        "{\t// d4r-splice probe %zu: %s, %s s%u (line %u): %zu values%s, %llu "
	        "bytes per "
	        "warp at +%llu\n",
	        ri, nm.p, r->before ? "before" : "after", r->at, s->line, r->vals.n,
	        r->per_warp ? " (lane 0)" : " x 32 lanes", (unsigned long long)r->bytes,
	        (unsigned long long)r->off);
	sb_release(&nm);
	put(t, "\t.reg .b32 \t@T<8>;\n\t.reg .b64 \t@A<4>;\n", T, A);
	if (r->per_warp)
		sb_addf(t, "\t.reg .pred \t%s%zu_p;\n", px, ri);
	/* the lane (T0) and the warp of the grid (T1) */
	put(t,
	    "\tmov.u32 \t@T0, %tid.x;\n"
	    "\tmov.u32 \t@T1, %tid.y;\n"
	    "\tmov.u32 \t@T2, %tid.z;\n"
	    "\tmov.u32 \t@T3, %ntid.x;\n"
	    "\tmov.u32 \t@T4, %ntid.y;\n"
	    "\tmov.u32 \t@T5, %ntid.z;\n"
	    "\tmad.lo.u32 \t@T2, @T2, @T4, @T1;\n"
	    "\tmad.lo.u32 \t@T0, @T2, @T3, @T0;\t// thread in the block\n"
	    "\tmul.lo.u32 \t@T3, @T3, @T4;\n"
	    "\tmul.lo.u32 \t@T3, @T3, @T5;\n"
	    "\tadd.u32 \t@T3, @T3, 31;\n"
	    "\tshr.u32 \t@T3, @T3, 5;\t// warps per block\n"
	    "\tmov.u32 \t@T1, %ctaid.z;\n"
	    "\tmov.u32 \t@T2, %nctaid.y;\n"
	    "\tmov.u32 \t@T4, %ctaid.y;\n"
	    "\tmad.lo.u32 \t@T1, @T1, @T2, @T4;\n"
	    "\tmov.u32 \t@T2, %nctaid.x;\n"
	    "\tmov.u32 \t@T4, %ctaid.x;\n"
	    "\tmad.lo.u32 \t@T1, @T1, @T2, @T4;\t// block in the grid\n"
	    "\tshr.u32 \t@T2, @T0, 5;\n"
	    "\tmad.lo.u32 \t@T1, @T1, @T3, @T2;\t// warp in the grid\n"
	    "\tand.b32 \t@T0, @T0, 31;\t// lane\n",
	    T, A);
	sb_addf(t, "\tld.global.u64 \t%s0, [%s];\n", A, in->res->symbol);
	put(t, "\tcvta.to.global.u64 \t@A0, @A0;\n", T, A);
	sb_addf(t, "\tmul.wide.u32 \t%s1, %s1, %llu;\n", A, T,
	        (unsigned long long)in->req->plan->warp_bytes);
	put(t, "\tadd.s64 \t@A0, @A0, @A1;\t// the warp's area\n", T, A);
	if (r->per_warp)
		sb_addf(t, "\tsetp.eq.u32 \t%s%zu_p, %s0, 0;\n", px, ri, T);
	else {
		put(t, "\tmul.wide.u32 \t@A1, @T0, 4;\n\tadd.s64 \t@A1, @A0, @A1;\n", T,
		    A);
		if (wide)
			put(t,
			    "\tmul.wide.u32 \t@A2, @T0, 8;\n\tadd.s64 \t@A2, @A0, @A2;\n",
			    T, A);
	}
	StrBuf reg = STRBUF_INIT;
	uint32_t nread = 0;
	for (size_t k = 0; k < r->vals.n; k++) {
		const ProbeValue *v = &r->vals.v[k];
		ProbeFmt f = (ProbeFmt)v->fmt;
		unsigned bits = probe_fmt_bits(f);
		sb_reset(&reg);
		value_reg(in, v, v->kind == PV_READ ? read_no[nread++] : 0, &reg);
		const char *base_i = r->per_warp ? "0" : bits == 64 ? "2" : "1";
		char guard[64] = "";
		if (r->per_warp)
			snprintf(guard, sizeof guard, "@%s%zu_p ", px, ri);
		unsigned long long off = (unsigned long long)(r->off + v->off);
		if (f == PF_PRED) {
			sb_addf(t, "\tselp.u32 \t%s6, 1, 0, %s;\n", T, reg.p);
			sb_addf(t, "\t%sst.global.b32 \t[%s%s+%llu], %s6;\n", guard, A,
			        base_i, off, T);
		} else
			sb_addf(t, "\t%sst.global.b%u \t[%s%s+%llu], %s;\n", guard, bits,
			        A, base_i, off, reg.p);
	}
	sb_release(&reg);
	if (r->code)
		sb_adds(t, r->code);
	sb_adds(t, "}\t// d4r-splice probe end\n");
}

/* A special register of 64 bits (a 32-bit read of one keeps its low half). */
static bool special_is_64(const char *name)
{
	return !strcmp(name, "%clock64") || !strcmp(name, "%globaltimer");
}

static void count_lines(const char *p, size_t n, uint32_t *lines)
{
	for (size_t i = 0; i < n; i++)
		*lines += p[i] == '\n';
}

int probe_instrument(const ProbeRequest *req, ProbeResult *res, Err *e)
{
	const Module *m = req->module;
	const Func *f = req->func;
	const ProbePlan *plan = req->plan;
	Ins in = {req, m, f, res, e};
	int fl = (int)f->name.len;
	if (f->flags & FNF_DECL)
		return err_set(e, "probe: '%.*s' has no body", fl, fname(&in));
	Str as = mod_str(m, m->address_size);
	if (!str_eqc(as, "64"))
		return err_set(e, "%s: probes need '.address_size 64' (the module %s)",
		               m->name ? m->name : "module",
		               as.n ? "declares another" : "declares none");
	func_fresh_prefix(m, f, "prb", 0, res->prefix);
	fresh_symbol(m, req->symbol ? req->symbol : "__d4r_probe_dump", res->symbol);
	if (req->symbol && strcmp(req->symbol, res->symbol))
		return err_set(e, "probe: the module already has a symbol named '%s'",
		               req->symbol);

	VEC(Piece) pcs = {0};
	int rc = -1;
	size_t seq = 0;
	uint32_t nreads_b = 0, nreads_w = 0;
	uint32_t *read_no = NULL;
	size_t nread_total = 0;
	for (size_t i = 0; i < plan->recs.n; i++)
		for (size_t k = 0; k < plan->recs.v[i].vals.n; k++)
			nread_total += plan->recs.v[i].vals.v[k].kind == PV_READ;
	read_no = xcalloc(nread_total + 1, sizeof(uint32_t));

	/* the symbol, after .address_size */
	{
		int64_t off =
		    line_end(m, (size_t)m->address_size.off + m->address_size.len);
		if (off < 0) {
			err_set(e,
			        "%s: code follows '.address_size' on its line: the "
			        "probe's symbol "
			        "needs a line of its own there",
			        m->name ? m->name : "module");
			goto out;
		}
		Piece p = {(size_t)off, 0, seq++, -1, STRBUF_INIT};
		sb_addf(
		    &p.text,
		    "// d4r-splice probe: dump %s, %zu records, %llu bytes per warp, "
		    "[warp][record][value][lane]\n.visible .global .align 8 .u64 %s;\n",
		    res->symbol, plan->recs.n, (unsigned long long)plan->warp_bytes,
		    res->symbol);
		if (req->module_text)
			sb_adds(&p.text, req->module_text);
		VEC_PUSH(pcs, p);
	}

	/* records, and the reads their values need */
	size_t nr = 0;
	StrBuf what = STRBUF_INIT;
	for (size_t i = 0; i < plan->recs.n; i++) {
		const ProbeRecord *r = &plan->recs.v[i];
		sb_reset(&what);
		sb_addf(&what, "record %zu (", i);
		probe_record_name(r, &what);
		sb_adds(&what, ")");
		int64_t off = check_record(&in, r, what.p);
		if (off < 0)
			goto out_what;
		size_t r0 = nr;
		for (size_t k = 0; k < r->vals.n; k++) {
			const ProbeValue *v = &r->vals.v[k];
			if (v->kind != PV_READ)
				continue;
			bool wide = probe_fmt_bits((ProbeFmt)v->fmt) == 64;
			read_no[nr] = wide ? nreads_b++ : nreads_w++;
			Piece p = {
			    (size_t)position(&in, v->read_at, v->read_before, what.p), 1,
			    seq++, -2, STRBUF_INIT};
			if (!wide && special_is_64(v->name))
				/* the low half of a 64-bit special register, through a
				 * temporary of its own scope: one line, one register kept
				 */
				sb_addf(
				    &p.text,
				    "\t{ .reg .b64 \t%sx%u; mov.u64 \t%sx%u, %s; "
				    "cvt.u32.u64 \t%sw%u, %sx%u; }\t// d4r-splice probe "
				    "%zu value %zu: read (low 32 bits)\n",
				    res->prefix, read_no[nr], res->prefix, read_no[nr],
				    v->name, res->prefix, read_no[nr], res->prefix,
				    read_no[nr], i, k);
			else
				sb_addf(
				    &p.text,
				    "\tmov.u%u \t%s%c%u, %s;\t// d4r-splice probe %zu "
				    "value %zu: read\n",
				    wide ? 64 : 32, res->prefix, wide ? 'c' : 'w',
				    read_no[nr], v->name, i, k);
			VEC_PUSH(pcs, p);
			nr++;
		}
		Piece p = {(size_t)off, 2, seq++, (int32_t)i, STRBUF_INIT};
		record_text(&in, r, i, read_no + r0, &p.text);
		VEC_PUSH(pcs, p);
		res->nvalues += (uint32_t)r->vals.n;
	}
	/* the reads' registers, after the last declaration of the body */
	if (nreads_b || nreads_w) {
		size_t after = (size_t)f->body_open + 1;
		for (uint32_t i = 0; i < f->nreg; i++) {
			const RegDecl *d = &m->regs.v[f->reg0 + i];
			if (d->scope == 0 && (size_t)d->decl.off + d->decl.len > after)
				after = (size_t)d->decl.off + d->decl.len;
		}
		int64_t off = line_end(m, after);
		if (off < 0 || (f->nstmt && off > func_stmt(m, f, 0)->off)) {
			err_set(e,
			        "probe: '%.*s': no line of its own after the function's "
			        "declarations for "
			        "the registers of its reads",
			        fl, fname(&in));
			goto out_what;
		}
		Piece p = {(size_t)off, 0, seq++, -1, STRBUF_INIT};
		if (nreads_b)
			sb_addf(&p.text,
			        "\t.reg .b64 \t%sc<%u>;\t// d4r-splice probe: reads\n",
			        res->prefix, nreads_b);
		if (nreads_w)
			sb_addf(&p.text,
			        "\t.reg .b32 \t%sw<%u>;\t// d4r-splice probe: reads\n",
			        res->prefix, nreads_w);
		VEC_PUSH(pcs, p);
	}

	/* one emit with the insertions, and where each landed */
	if (pcs.n)
		qsort(pcs.v, pcs.n, sizeof(Piece), cmp_piece);
	Edit *ed = xcalloc(pcs.n + 1, sizeof(Edit));
	for (size_t i = 0; i < pcs.n; i++) {
		ed[i].off = (uint32_t)pcs.v[i].off;
		ed[i].len = 0;
		ed[i].text = pcs.v[i].text.p;
		ed[i].tlen = pcs.v[i].text.n;
	}
	sb_grow(&res->text, m->len + 64 * plan->recs.n + 4096);
	rc = ptx_emit(m, ed, pcs.n, &res->text, e);
	free(ed);
	if (rc == 0) {
		uint32_t line = 1, added = 0;
		size_t at = 0;
		for (size_t i = 0; i < pcs.n; i++) {
			count_lines(m->src + at, pcs.v[i].off - at, &line);
			at = pcs.v[i].off;
			uint32_t n = 0;
			count_lines(pcs.v[i].text.p, pcs.v[i].text.n, &n);
			ProbeInsert pi = {line + added, n, pcs.v[i].rec};
			VEC_PUSH(res->inserts, pi);
			added += n;
		}
	}
out_what:
	sb_release(&what);
out:
	for (size_t i = 0; i < pcs.n; i++)
		sb_release(&pcs.v[i].text);
	VEC_FREE(pcs);
	free(read_no);
	return rc;
}

void probe_result_release(ProbeResult *res)
{
	sb_release(&res->text);
	VEC_FREE(res->inserts);
	memset(res, 0, sizeof *res);
}

void probe_where(const ProbeResult *res, const ProbePlan *plan, const char *module_name,
                 uint32_t line, StrBuf *out)
{
	uint32_t added = 0;
	for (size_t i = 0; i < res->inserts.n; i++) {
		const ProbeInsert *pi = &res->inserts.v[i];
		if (line < pi->out_line)
			break;
		if (line < pi->out_line + pi->lines) {
			if (pi->rec >= 0 && (size_t)pi->rec < plan->recs.n) {
				sb_addf(out, "probe record %d (", pi->rec);
				probe_record_name(&plan->recs.v[pi->rec], out);
				sb_adds(out, ")");
			} else
				sb_adds(out, pi->rec == -2 ? "a probe's read"
				                           : "the probe's declarations");
			return;
		}
		added += pi->lines;
	}
	sb_addf(out, "%s line %u", module_name, line - added);
}
