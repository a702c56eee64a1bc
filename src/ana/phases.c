/*
 * phases.c - mma phases, their gemm shape, operand sources and epilogues.
 *
 * A phase is a maximal run of consecutive mma statements in one function
 * (with --gap N, up to N other statements may sit between two of its mma).
 * That definition, and the one of an epilogue, is applied in one place
 * ("what a phase is" below), from the statement flags and labels alone:
 * every caller that wants phase N's statements asks ana_phase_range, which
 * costs a scan of the flags, and ana_phases starts from the same list.
 * Everything else here is derived from the statements by the definitions in
 * d4r-splice(1), and each derived value keeps the statement that shows it:
 *
 *  - chain: a sequence of mma of the phase where each one's C operand is
 *    the D operand of the one before, register for register, and the value
 *    it reads there is that D by reaching definition, whatever lies between
 *    (other tiles' k-steps, in-place accumulation, moves); past a guarded
 *    mma of the same block, that mma's D (chain_pred).  k_chain_len is the
 *    longest chain, chains the number of chains (the mma that no later one
 *    continues); m_tiles / n_tiles count distinct A / B operands;
 *    k = instruction K x k_chain_len; banded = m_tiles * n_tiles != mma.
 *  - the sources of A, B and C: sources.c.
 *
 * Values that do not resolve are reported as such, never guessed.
 */
#include "ana/ana.h"
#include "ana/phase_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *asrc_kind_name(ASrcKind k)
{
	static const char *const n[] = {"shared",   "global", "converted", "passthrough",
	                                "computed", "mixed",  "generic",   "loaded"};
	return (unsigned)k < ARRAY_SIZE(n) ? n[k] : "?";
}

const char *ckind_name(CKind k)
{
	static const char *const n[] = {"zero",     "phase_acc", "loaded",
	                                "computed", "mixed",     "loop_carried"};
	return (unsigned)k < ARRAY_SIZE(n) ? n[k] : "?";
}

/* The operand's text without whitespace (tuples compare textually). */
void ph_compact(const Module *m, const Operand *o, StrBuf *out)
{
	sb_reset(out);
	opd_render_compact(m, (uint32_t)(o - m->opds.v), out);
}

/* Registers of a leaf or vector operand (sinks and immediates skipped). */
unsigned ph_tuple_regs(Dataflow *df, uint32_t oi, uint32_t *regs, unsigned max)
{
	const Module *m = df_module(df);
	const Operand *o = &m->opds.v[oi];
	unsigned n = 0;
	if (o->kind == OPD_VEC) {
		for (uint32_t k = oi + 1; k < oi + 1 + o->sub; k = opd_next(m, k)) {
			int64_t r = df_opd_reg(df, k);
			if (r >= 0 && n < max)
				regs[n++] = (uint32_t)r;
		}
	} else {
		int64_t r = df_opd_reg(df, oi);
		if (r >= 0 && n < max)
			regs[n++] = (uint32_t)r;
	}
	return n;
}

/* The operands of the mma forms; false if the form is unknown.  A wgmma
 * accumulates in place: its C is its D, read unless scale-d is 0. */
bool ph_mma_ops(const Module *m, const Stmt *s, MmaOps *o)
{
	if (s->nopd < 3)
		return false;
	for (unsigned i = 0; i < 4; i++)
		o->idx[i] =
		    i < s->nopd ? stmt_opd_index(m, s, i) : stmt_opd_index(m, s, 0);
	o->has_c = true;
	o->a_desc = false;
	if (s->op == OP_WGMMA) {
		o->idx[3] = o->idx[0];
		o->has_c = df_wgmma_reads_d(m, s);
		o->a_desc = m->opds.v[o->idx[1]].kind != OPD_VEC;
	}
	return s->nopd >= 4 || s->op == OP_WGMMA;
}

/* "m16n8k32" in the opcode, and the text after it. */
static void shape_of(const Module *m, const Stmt *s, Phase *ph)
{
	Str op = stmt_opcode(m, s);
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = p;
		while (q < end && *q != '.')
			q++;
		if (q - p >= 6 && p[0] == 'm' && (p[1] >= '0' && p[1] <= '9')) {
			const char *k = memchr(p, 'k', (size_t)(q - p));
			const char *n = memchr(p, 'n', (size_t)(q - p));
			if (k && n) {
				ph->shape = str_of(p, (size_t)(q - p));
				ph->inst_k = (uint32_t)strtoul(k + 1, NULL, 10);
				ph->types = str_of(q, (size_t)(end - q));
				return;
			}
		}
		p = q + 1;
	}
}

/* ---- epilogues ----------------------------------------------------------- */

typedef struct {
	const char *name;
	VEC(uint32_t) at;
} OpHit;

enum {
	E_E4M3, E_E5M2, E_F16PACK, E_SOFTMAX, E_RMSNORM, E_ACT, E_RESIDUAL, E_SHSTAGE,
	E_SHLOAD_A, E_NEXT_B, E_NEXT_C, E_NEXT_A_LOAD, E_OTHER_LOAD, E_TEX, E_SULD, E_SUST,
	E_SCATTER, E_BARRIER, E__N
};
static const char *const epi_names[E__N] = {
	"e4m3_requantise", "e5m2_requantise", "f16_pack", "softmax", "rms_norm",
	"activation", "residual_add", "shared_stage", "shared_load_next_a", "next_b_load",
	"next_c_load", "next_a_load", "other_load", "texture_read", "surface_read",
	"surface_write", "plane_scatter", "barrier"};

static void hit(OpHit *h, int e, uint32_t st)
{
	VEC_PUSH(h[e].at, st);
}

/* The statements whose values the next phase's mma read as operand
 * `which` (1 A, 2 B, 3 C): the reaching definitions of those registers,
 * sorted, found once per epilogue rather than once per load in it. */
typedef struct {
	VEC(uint32_t) defs;
	bool done;
} Feeds;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void feeds_build(Dataflow *df, const Phase *next, int which, Feeds *fd)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	fd->done = true;
	uint32_t *regs = xmalloc(MAX_TUPLE * sizeof(uint32_t));
	for (uint32_t st = next->first; st <= next->last; st++) {
		const Stmt *s = func_stmt(m, f, st);
		if (!(s->flags & STMT_MMA))
			continue;
		MmaOps mo;
		if (!ph_mma_ops(m, s, &mo) || (which == 3 && !mo.has_c))
			continue;
		unsigned nr = ph_tuple_regs(df, mo.idx[which], regs, MAX_TUPLE);
		for (unsigned r = 0; r < nr; r++) {
			int64_t d = df_reaching_def(df, st, regs[r]);
			if (d >= 0)
				VEC_PUSH(fd->defs, (uint32_t)d);
		}
	}
	free(regs);
	if (fd->defs.n)
		qsort(fd->defs.v, fd->defs.n, sizeof(uint32_t), cmp_u32);
}

/* Does the value defined at def_stmt reach operand `which` of an mma of the
 * next phase? */
static int feeds(Dataflow *df, const Phase *next, uint32_t def_stmt, int which, Feeds *fd)
{
	if (!next)
		return 0;
	if (!fd[which].done)
		feeds_build(df, next, which, &fd[which]);
	return fd[which].defs.n &&
	       bsearch(&def_stmt, fd[which].defs.v, fd[which].defs.n, sizeof(uint32_t), cmp_u32);
}

/* " N": a statement number, without the cost of a printf per number */
static void add_num(StrBuf *sb, uint32_t v)
{
	char buf[12];
	int n = 0;
	do
		buf[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	sb_addc(sb, ' ');
	while (n)
		sb_addc(sb, buf[--n]);
}

static void classify_epilogue(Dataflow *df, Phase *ph, const Phase *next)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	OpHit h[E__N];
	memset(h, 0, sizeof h);
	int has_max = 0, has_ex2 = 0, has_rcp = 0, has_rsqrt = 0, has_min = 0;
	Feeds fd[4];
	memset(fd, 0, sizeof fd);
	for (uint32_t st = ph->epi_first; st <= ph->epi_last && ph->epi_last >= ph->epi_first; st++) {
		const Stmt *s = func_stmt(m, f, st);
		switch (s->op) {
		case OP_CVT:
			if (stmt_has_mod(m, s, ".e4m3x2"))
				hit(h, E_E4M3, st);
			else if (stmt_has_mod(m, s, ".e5m2x2"))
				hit(h, E_E5M2, st);
			else if (stmt_has_mod(m, s, ".f16x2") || stmt_has_mod(m, s, ".bf16x2"))
				hit(h, E_F16PACK, st);
			break;
		case OP_MOV:
			if (s->nopd == 2 && stmt_opd(m, s, 1)->kind == OPD_VEC)
				hit(h, E_F16PACK, st);
			break;
		case OP_MAX:
			has_max = 1;
			break;
		case OP_MIN:
			has_min = 1;
			break;
		case OP_EX2:
			has_ex2 = 1;
			break;
		case OP_RCP:
		case OP_DIV:
			has_rcp = 1;
			break;
		case OP_RSQRT:
			has_rsqrt = 1;
			hit(h, E_RMSNORM, st);
			break;
		case OP_TANH:
			hit(h, E_ACT, st);
			break;
		case OP_BAR:
		case OP_BARRIER:
			hit(h, E_BARRIER, st);
			break;
		case OP_TEX:
		case OP_TLD4:
			hit(h, E_TEX, st);
			break;
		case OP_SULD:
			hit(h, E_SULD, st);
			break;
		case OP_SUST:
			hit(h, E_SUST, st);
			break;
		case OP_ST:
			if (stmt_space(m, s) == SP_SHARED)
				hit(h, E_SHSTAGE, st);
			else if (stmt_space(m, s) == SP_GLOBAL || stmt_space(m, s) == SP_GENERIC)
				hit(h, E_SCATTER, st);
			break;
		case OP_LD:
		case OP_LDU:
		case OP_LDMATRIX: {
			Space sp = stmt_space(m, s);
			if (sp == SP_PARAM)
				break;
			if (feeds(df, next, st, 2, fd))
				hit(h, E_NEXT_B, st);
			else if (feeds(df, next, st, 3, fd))
				hit(h, E_NEXT_C, st);
			else if (feeds(df, next, st, 1, fd))
				hit(h, sp == SP_SHARED || s->op == OP_LDMATRIX ? E_SHLOAD_A : E_NEXT_A_LOAD, st);
			else
				hit(h, E_OTHER_LOAD, st);
			break;
		}
		case OP_ADD:
			if (stmt_has_mod(m, s, ".f16x2") || stmt_has_mod(m, s, ".f16") ||
			    stmt_has_mod(m, s, ".f32")) {
				/* residual add: one addend is this phase's D, the other a
				 * value defined before the phase began */
				uint32_t nu;
				const uint32_t *u = df_uses(df, st, &nu);
				int from_d = 0, from_before = 0;
				for (uint32_t k = 0; k < nu; k++) {
					int64_t d = df_reaching_def(df, st, u[k]);
					if (d >= (int64_t)ph->first && d <= (int64_t)ph->last)
						from_d = 1;
					else if (d >= 0 && d < (int64_t)ph->first)
						from_before = 1;
				}
				if (from_d && from_before)
					hit(h, E_RESIDUAL, st);
			}
			break;
		default:
			break;
		}
	}
	if (has_max && has_ex2 && has_rcp) {
		for (uint32_t st = ph->epi_first; st <= ph->epi_last; st++)
			if (func_stmt(m, f, st)->op == OP_EX2)
				hit(h, E_SOFTMAX, st);
	} else if (has_max && has_min && !has_rsqrt) {
		for (uint32_t st = ph->epi_first; st <= ph->epi_last; st++)
			if (func_stmt(m, f, st)->op == OP_MIN)
				hit(h, E_ACT, st);
	}
	for (int w = 0; w < 4; w++)
		VEC_FREE(fd[w].defs);
	sb_reset(&ph->epilogue_ops);
	for (int e = 0; e < E__N; e++) {
		if (!h[e].at.n)
			continue;
		sb_adds(&ph->epilogue_ops, epi_names[e]);
		for (size_t i = 0; i < h[e].at.n; i++)
			add_num(&ph->epilogue_ops, h[e].at.v[i]);
		sb_addc(&ph->epilogue_ops, '\n');
		VEC_FREE(h[e].at);
	}
}

/* ---- what a phase is ----------------------------------------------------- */

/*
 * The definition (d4r-splice(1), Definitions), in the one place that
 * applies it: a phase is a maximal run of mma statements in which two
 * consecutive mma are at most `gap` other statements apart (gap 0: a run
 * of consecutive mma).  Its epilogue is the statements after it up to the
 * next phase; after the last phase, up to the end of the straight-line
 * region that follows (the next label, or the next bra/brx/ret/exit, not
 * included).  Both need the statement flags and the labels only, so the
 * ranges cost one pass over the flags, and a caller that wants phase N
 * stops scanning once phase N and its epilogue are known.
 */

bool ana_stmt_is_mma(const Stmt *s)
{
	return (s->flags & STMT_MMA) != 0;
}

static bool stmt_is_mma(const Module *m, const Func *f, uint32_t i)
{
	return ana_stmt_is_mma(func_stmt(m, f, i));
}

/* The first phase whose first mma is at or after statement `from`: first,
 * last and mma of *p; false when there is none. */
static bool scan_phase(const Module *m, const Func *f, unsigned gap, uint32_t from,
                       Phase *p)
{
	uint32_t i = from;
	while (i < f->nstmt && !stmt_is_mma(m, f, i))
		i++;
	if (i >= f->nstmt)
		return false;
	p->first = p->last = i;
	p->mma = 1;
	for (uint32_t j = i + 1; j < f->nstmt && j - p->last <= gap + 1; j++)
		if (stmt_is_mma(m, f, j)) {
			p->last = j;
			p->mma++;
		}
	return true;
}

/* The epilogue of the last phase p: up to the next label after it, or the
 * next bra/brx/ret/exit before that, whichever comes first. */
static void last_epilogue(const Module *m, const Func *f, Phase *p)
{
	uint32_t end = f->nstmt;
	for (uint32_t l = 0; l < f->nlabel; l++) {
		uint32_t ls = m->labels.v[f->label0 + l].stmt;
		if (ls > p->last && ls < end)
			end = ls;
	}
	for (uint32_t st = p->last + 1; st < end; st++) {
		const Stmt *s = func_stmt(m, f, st);
		if (s->op == OP_BRA || s->op == OP_BRX || s->op == OP_RET ||
		    s->op == OP_EXIT) {
			end = st;
			break;
		}
	}
	p->epi_first = p->last + 1;
	p->epi_last = end - 1;
}

void ana_phase_find(const Module *m, const Func *f, unsigned gap, PhaseList *out)
{
	memset(out, 0, sizeof(*out));
	VEC(Phase) ph = {0};
	Phase p = {0};
	uint32_t from = 0;
	while (scan_phase(m, f, gap, from, &p)) {
		if (ph.n) /* the one before ends where this one starts */
			ph.v[ph.n - 1].epi_last = p.first - 1;
		p.number = (uint32_t)ph.n + 1;
		p.epi_first = p.last + 1;
		VEC_PUSH(ph, p);
		from = p.last + 1;
		memset(&p, 0, sizeof p);
	}
	if (ph.n)
		last_epilogue(m, f, &ph.v[ph.n - 1]);
	out->v = ph.v;
	out->n = ph.n;
}

int ana_phase_missing(const char *ctx, uint32_t n, const char *who, size_t nphases, Err *e)
{
	return err_set(e, "%s%sphase %u does not exist: %s has %zu phase%s", ctx ? ctx : "",
	               ctx ? ": " : "", n, who, nphases, nphases == 1 ? "" : "s");
}

int ana_phase_range(const Module *m, const Func *f, unsigned gap, uint32_t n,
                    bool with_epilogue, uint32_t *first, uint32_t *last, size_t *nphases)
{
	Phase p = {0}, next;
	uint32_t k = 0, from = 0;
	while ((k < n || !n) && scan_phase(m, f, gap, from, &p)) {
		k++;
		from = p.last + 1;
	}
	if (!n || k < n) {
		if (nphases)
			*nphases = k;
		return -1;
	}
	*first = p.first;
	if (with_epilogue) {
		p.epi_first = p.last + 1;
		if (scan_phase(m, f, gap, p.last + 1, &next))
			p.epi_last = next.first - 1;
		else
			last_epilogue(m, f, &p);
	}
	*last = phase_cut_last(&p, with_epilogue);
	if (nphases)
		*nphases = k;
	return 0;
}

uint32_t phase_cut_last(const Phase *p, bool with_epilogue)
{
	return with_epilogue && p->epi_last >= p->epi_first ? p->epi_last : p->last;
}

uint32_t ana_mma_count(const Module *m, const Func *f, uint32_t first, uint32_t last)
{
	uint32_t n = 0;
	for (uint32_t i = first; i <= last && i < f->nstmt; i++)
		n += stmt_is_mma(m, f, i);
	return n;
}

int64_t ana_mma_first(const Module *m, const Func *f, uint32_t first, uint32_t last)
{
	for (uint32_t i = first; i <= last && i < f->nstmt; i++)
		if (stmt_is_mma(m, f, i))
			return i;
	return -1;
}

bool ana_func_has_mma(const Module *m, const Func *f)
{
	return f->nstmt && ana_mma_first(m, f, 0, f->nstmt - 1) >= 0;
}

/* ---- the locator --------------------------------------------------------- */

/*
 * The mma of phase `phase` that mma j continues, or -1: j reads a C
 * operand, each of its registers (in order) is the register at the same
 * position of that mma's D, and the value j reads in it is that D: the
 * reaching definition, or, past a guarded mma earlier in the same block
 * (whose definition does not kill), that mma, which j reads whenever it
 * executes.  cregs/dregs are scratch of MAX_TUPLE registers.
 */
static int64_t chain_pred(Dataflow *df, const int32_t *phase_of, uint32_t phase,
                          uint32_t j, uint32_t *cregs, uint32_t *dregs)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	MmaOps oj, oi;
	if (!ph_mma_ops(m, func_stmt(m, f, j), &oj) || !oj.has_c)
		return -1;
	unsigned nc = ph_tuple_regs(df, oj.idx[3], cregs, MAX_TUPLE);
	int64_t i = -1;
	for (unsigned k = 0; k < nc; k++) {
		int64_t d = df_reaching_def(df, j, cregs[k]);
		bool kills = true;
		if (d == DF_DEF_MANY) {
			d = df_def_before_in_block(df, j, cregs[k]);
			if (d >= 0 &&
			    (!df_stmt_defines(df, (uint32_t)d, cregs[k], &kills) ||
			     kills))
				return -1;
		}
		if (d < 0 || (uint64_t)d >= j || (uint32_t)phase_of[d] != phase ||
		    (i >= 0 && d != i))
			return -1;
		i = d;
	}
	if (i < 0 || !ph_mma_ops(m, func_stmt(m, f, (uint32_t)i), &oi))
		return -1;
	if (ph_tuple_regs(df, oi.idx[0], dregs, MAX_TUPLE) != nc)
		return -1;
	for (unsigned k = 0; k < nc; k++)
		if (dregs[k] != cregs[k])
			return -1;
	return i;
}

static int cmp_u32_key(const void *key, const void *elem)
{
	uint32_t x = *(const uint32_t *)key, y = *(const uint32_t *)elem;
	return x < y ? -1 : x > y;
}

/*
 * The chains of a phase (mm[0..nm), ascending): chained[i] when mma i
 * continues an earlier one (chain_pred); k_chain_len is the longest chain,
 * chains the number of chains (the mma no later one continues: each ends
 * one chain).
 */
static void phase_chains(Dataflow *df, Phase *P, const uint32_t *mm, uint32_t nm,
                         const int32_t *phase_of, uint8_t *chained)
{
	uint32_t *depth = xcalloc(nm + 1, sizeof(uint32_t));
	uint8_t *continued = xcalloc(nm + 1, 1);
	uint32_t *cregs = xmalloc(2 * MAX_TUPLE * sizeof(uint32_t)),
	         *dregs = cregs + MAX_TUPLE;
	uint32_t best = nm ? 1 : 0, ends = 0;
	for (uint32_t j = 0; j < nm; j++) {
		int64_t pi = chain_pred(df, phase_of, P->number, mm[j], cregs, dregs);
		const uint32_t *at = pi >= 0 ? bsearch(&(uint32_t){(uint32_t)pi}, mm, j,
		                                       sizeof(uint32_t), cmp_u32_key)
		                             : NULL;
		depth[j] = 1;
		if (at) {
			uint32_t i = (uint32_t)(at - mm);
			depth[j] = depth[i] + 1;
			continued[i] = 1;
			chained[j] = 1;
		}
		if (depth[j] > best)
			best = depth[j];
	}
	for (uint32_t j = 0; j < nm; j++)
		ends += !continued[j];
	P->k_chain_len = best;
	P->chains = ends;
	free(depth);
	free(continued);
	free(cregs);
}

int ana_phases(Dataflow *df, unsigned gap, PhaseList *out, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	PhaseList found;
	ana_phase_find(m, f, gap, &found);
	Phase *ph = found.v;
	size_t nph = found.n;
	/* the mma statements, phase by phase: all[start[p] .. start[p + 1]) */
	VEC(uint32_t) all = {0};
	uint32_t *start = xmalloc((nph + 1) * sizeof(uint32_t));
	int32_t *phase_of = xcalloc(f->nstmt + 1, sizeof(int32_t));
	for (size_t p = 0; p < nph; p++) {
		start[p] = (uint32_t)all.n;
		for (uint32_t i = ph[p].first; i <= ph[p].last; i++)
			if (stmt_is_mma(m, f, i)) {
				VEC_PUSH(all, i);
				phase_of[i] = (int32_t)ph[p].number;
			}
	}
	start[nph] = (uint32_t)all.n;
	PhSlice *sl = ph_slice_new(df, phase_of);
	StrBuf a = STRBUF_INIT;
	for (size_t p = 0; p < nph; p++) {
		Phase *P = &ph[p];
		const uint32_t *mm = all.v + start[p];
		uint32_t nm = start[p + 1] - start[p];
		/* tiles, chains */
		uint8_t *chained = xcalloc(nm + 1, 1);
		StrBuf tiles_a = STRBUF_INIT, tiles_b = STRBUF_INIT;
		for (uint32_t i = 0; i < nm; i++) {
			const Stmt *s = func_stmt(m, f, mm[i]);
			MmaOps mo;
			if (!ph_mma_ops(m, s, &mo))
				continue;
			if (i == 0)
				shape_of(m, s, P);
			ph_compact(m, &m->opds.v[mo.idx[1]], &a);
			sb_addc(&a, '\n');
			if (!tiles_a.n || !strstr(tiles_a.p, a.p)) {
				sb_adds(&tiles_a, a.p);
				P->m_tiles++;
			}
			ph_compact(m, &m->opds.v[mo.idx[2]], &a);
			sb_addc(&a, '\n');
			if (!tiles_b.n || !strstr(tiles_b.p, a.p)) {
				sb_adds(&tiles_b, a.p);
				P->n_tiles++;
			}
		}
		sb_release(&tiles_a);
		sb_release(&tiles_b);
		phase_chains(df, P, mm, nm, phase_of, chained);
		P->k = P->inst_k * P->k_chain_len;
		P->banded = P->m_tiles * P->n_tiles != P->mma;
		ph_classify_a(df, P, mm, nm, phase_of, sl, ph);
		ph_classify_c(df, P, mm, nm, chained, phase_of);
		ph_classify_b(df, P, mm, nm);
		free(chained);
	}
	for (size_t p = 0; p < nph; p++)
		classify_epilogue(df, &ph[p], p + 1 < nph ? &ph[p + 1] : NULL);
	sb_release(&a);
	ph_slice_free(sl);
	free(phase_of);
	free(start);
	VEC_FREE(all);
	*out = found;
	(void)e;
	return 0;
}

void phases_release(PhaseList *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		VEC_FREE(pl->v[i].a_offsets);
		VEC_FREE(pl->v[i].c_bytes);
		sb_release(&pl->v[i].epilogue_ops);
	}
	free(pl->v);
	pl->v = NULL;
	pl->n = 0;
}

/* ---- several functions at once ------------------------------------------- */

typedef struct {
	const Module *m;
	const Func *const *fns;
	FuncPhases *out;
	const uint32_t *order;      /* indices into fns, largest first */
	size_t n;
	unsigned gap;
	atomic_size_t next;
} PhaseJobs;

static void phases_one(PhaseJobs *q, size_t i)
{
	FuncPhases *o = &q->out[i];
	Dataflow *df = df_build(q->m, q->fns[i], &o->err);
	o->rc = df && ana_phases(df, q->gap, &o->pl, &o->err) == 0 ? 0 : -1;
	df_free(df);
}

static void *phases_worker(void *arg)
{
	PhaseJobs *q = arg;
	for (;;) {
		size_t k = atomic_fetch_add(&q->next, 1);
		if (k >= q->n)
			return NULL;
		phases_one(q, q->order[k]);
	}
}

static int by_size_desc(const void *a, const void *b, void *ctx)
{
	const PhaseJobs *q = ctx;
	uint32_t x = q->fns[*(const uint32_t *)a]->nstmt, y = q->fns[*(const uint32_t *)b]->nstmt;
	return x > y ? -1 : x < y;
}

void ana_phases_funcs(const Module *m, const Func *const *fns, size_t n, unsigned gap,
                      unsigned jobs, FuncPhases *out)
{
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].f = fns[i];
		out[i].err = (Err)ERR_INIT;
	}
	if (!jobs) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = c > 0 ? (unsigned)c : 1;
	}
	if (jobs > n)
		jobs = (unsigned)n;
	uint32_t *order = xmalloc((n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	PhaseJobs q = {m, fns, out, order, n, gap, 0};
	if (jobs <= 1) {
		for (size_t i = 0; i < n; i++)
			phases_one(&q, i);
		free(order);
		return;
	}
	qsort_r(order, n, sizeof(uint32_t), by_size_desc, &q);
	pthread_t *th = xmalloc(jobs * sizeof(pthread_t));
	unsigned started = 0;
	for (unsigned j = 1; j < jobs; j++)
		if (pthread_create(&th[started], NULL, phases_worker, &q) == 0)
			started++;
	phases_worker(&q); /* this thread works too; with no thread started, it does all */
	for (unsigned j = 0; j < started; j++)
		pthread_join(th[j], NULL);
	free(th);
	free(order);
}

void func_phases_release(FuncPhases *fp, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		phases_release(&fp[i].pl);
		err_release(&fp[i].err);
	}
}
