/*
 * native.c - a native phase written from the phase's facts (native.h).
 *
 * The generator knows no family: it reads the operand facts of the phase
 * (ana_operands: per mma its D, A, B, C registers and where each value
 * comes from; per load its address operand and the reload verdict) and the
 * cut interface (df_cut: live-in, live-out), and gives every operand value
 * a name in the template:
 *
 *   - a D word is written to the output formal d[k] when its register is
 *     live-out and this mma is the register's last definition in the cut,
 *     else to a local (a chain link that stays inside the phase);
 *   - an A, B or C word that is the D of an earlier mma of the phase is
 *     that mma's name for it (chains, and anything else an mma reads from
 *     another);
 *   - a word loaded by a load that ana_reload_check proves safe to issue
 *     again at the cut is loaded by the template itself: the vendor's load
 *     instruction, same opcode and displacement, into locals, through the
 *     load's base register bound as an input (a_base0, b_base0, ...);
 *   - a word that is a mov of zero is the template's own zero;
 *   - every other word is an input: the role's list formal (a, b, c; each
 *     register once, in mma order) bound to the live-in registers.
 *
 * The mma form writes each vendor mma as it is with those names.  The f16
 * form writes each e4m3 mma (m16n8k32, f16 accumulate) as sm_90 executes
 * it, which reproduces the instruction bit for bit (measured on an H200 on
 * random data, and end to end on the enc4 kernel):
 *
 *     lo(w) = cvt.rn.f16x2.e4m3x2 of the low 16 bits of w, hi(w) the high
 *     t  = mma.m16n8k16.row.col.f16.f16.f16.f16 {lo a0..a3}, {lo b0, b1}, {0, 0}
 *     t  = mma.m16n8k16 ...                     {hi a0..a3}, {hi b0, b1}, t
 *     d  = add.rn.f16x2 t, c        (also when c is zero: -0 + +0 = +0)
 *
 * Each A and B value is converted once, just before the first mma that
 * reads it, and its halves are reused by every mma that shares it; the
 * vendor's lowering converts again for every mma.
 *
 * Decisions:
 *  - Statement numbers, registers and displacements are written into the
 *    template as literals: the template is the phase's, named after it, and
 *    is written again from the module rather than edited.  The recipe pins
 *    what the template relies on: the cut's text (sha256, anchors, mma
 *    count) and, for the loads it issues again, their text and the reload
 *    proof (guards.reloads, checked again by the splicer).
 *  - Formal lists have the untyped type of their width (.b32): a register
 *    of any 32-bit type binds, and the module's registers keep their own
 *    types; locals take the type of the register they stand for.
 *  - What the generator cannot prove it does not write: an operand it
 *    cannot place becomes an input; what it cannot express (another
 *    instruction, a guarded mma, operand shapes of another size) is refused
 *    with the statement and the reason.  Every other grouping of the f16
 *    arithmetic is wrong in the last bit, so the f16 form takes exactly one
 *    opcode.
 */
#include "native_internal.h"

#include "ana/ana.h"
#include "base/sha256.h"
#include "splice.h"
#include "template.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const E4M3 = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16";
static const char *const F16K16 = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16";

const char *native_form_name(NativeForm f)
{
	return f == NATIVE_F16 ? "f16" : f == NATIVE_MMA_SYNC ? "mma_sync" : "mma";
}

int native_form_parse(const char *s)
{
	if (!strcmp(s, "mma"))
		return NATIVE_MMA;
	if (!strcmp(s, "f16"))
		return NATIVE_F16;
	if (!strcmp(s, "mma_sync"))
		return NATIVE_MMA_SYNC;
	return -1;
}

/* ---- names ---------------------------------------------------------------- */

typedef struct {
	char prefix[8]; /* "%a" */
	char type[24];  /* ".b32" */
} Local;

typedef NativeFormal GFormal;

typedef struct {
	Dataflow *df;
	const PhaseOperands *po;
	VEC(Local) locals; /* in order of creation; names are prefix + index */
	NativeFormals formals;
	char **wname; /* per word: its name in the template */
	/* per load: reloaded, the names of its destination elements */
	bool *reload;
	char ***lname;
	uint32_t nzero;
	char zero_type[4][24];
	char zero_name[4][16];
	const char *z32; /* f16 form: the .b32 zero */
	size_t *order;   /* the loads in statement order */
	StrBuf err;      /* first refusal */
} Gen;

static char *fmt(const char *f, ...) PRINTF_LIKE(1, 2);
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char buf[256];
	vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	return xstrdup(buf);
}

/* A new local of `type` with `prefix`: its name (malloc'd). */
static char *local(Gen *g, const char *prefix, Str type)
{
	unsigned n = 0;
	for (size_t i = 0; i < g->locals.n; i++)
		n += !strcmp(g->locals.v[i].prefix, prefix);
	Local l;
	memset(&l, 0, sizeof l);
	snprintf(l.prefix, sizeof l.prefix, "%s", prefix);
	snprintf(l.type, sizeof l.type, "%.*s", (int)type.n, type.p);
	VEC_PUSH(g->locals, l);
	return fmt("%s%u", prefix, n);
}

static GFormal *formal(Gen *g, const char *name, uint32_t bits, uint8_t dir, bool list)
{
	char type[8];
	snprintf(type, sizeof type, ".b%u", bits);
	return native_formal(&g->formals, name, type, dir, list);
}

static const RegInfo *reg_info(Gen *g, uint32_t reg)
{
	return df_reg(g->df, reg);
}

/* The base formal of register `reg` for a load feeding `role`. */
static char *base_formal(Gen *g, uint32_t reg, OpdRole role)
{
	for (size_t i = 0; i < g->formals.n; i++)
		if (!g->formals.v[i].list && g->formals.v[i].regs.n &&
		    g->formals.v[i].regs.v[0] == reg)
			return fmt("%%{%s}", g->formals.v[i].name);
	unsigned k = 0;
	const char *r = opd_role_name(role);
	for (size_t i = 0; i < g->formals.n; i++)
		k += !g->formals.v[i].list && g->formals.v[i].name[0] == r[0];
	char name[16];
	snprintf(name, sizeof name, "%s_base%u", r, k);
	GFormal *f = formal(g, name, reg_info(g, reg)->bits, FM_IN, false);
	VEC_PUSH(f->regs, reg);
	return fmt("%%{%s}", name);
}

/* The list formal of role r holding input register reg: "%{a[3]}". */
static char *input(Gen *g, OpdRole r, uint32_t reg)
{
	for (size_t i = 0; i < g->formals.n; i++) {
		const GFormal *f = &g->formals.v[i];
		if (!f->list || f->dir != FM_IN)
			continue;
		for (size_t k = 0; k < f->regs.n; k++)
			if (f->regs.v[k] == reg)
				return fmt("%%{%s[%zu]}", f->name, k);
	}
	GFormal *f = formal(g, opd_role_name(r), reg_info(g, reg)->bits, FM_IN, true);
	VEC_PUSH(f->regs, reg);
	return fmt("%%{%s[%zu]}", f->name, f->regs.n - 1);
}

#define refuse(g, ...) native_refuse(&(g)->err, __VA_ARGS__)

/* The template's zero of a register type: its name, or NULL when the type
 * has no literal zero the generator writes (then the word is an input). */
static const char *zero_of(Gen *g, Str type)
{
	char t[24];
	snprintf(t, sizeof t, "%.*s", (int)type.n, type.p);
	uint32_t bits = ptx_type_bits(type.p, type.n);
	if (bits != 32 && bits != 64)
		return NULL;
	for (uint32_t i = 0; i < g->nzero; i++)
		if (!strcmp(g->zero_type[i], t))
			return g->zero_name[i];
	if (g->nzero == 4)
		return NULL;
	snprintf(g->zero_type[g->nzero], sizeof g->zero_type[0], "%s", t);
	snprintf(g->zero_name[g->nzero], sizeof g->zero_name[0],
	         g->nzero ? "%%z%u" : "%%z", g->nzero);
	return g->zero_name[g->nzero++];
}

/* ---- the plan ---------------------------------------------------------------- */

/* Can load l be issued again with its destination in locals?  Its
 * destination must be whole scalar registers (or sinks). */
static bool reloadable(Gen *g, const OpdLoad *l)
{
	if (!l->reload_safe)
		return false;
	const Module *m = df_module(g->df);
	const Stmt *s = func_stmt(m, df_func(g->df), l->stmt);
	uint32_t d = stmt_opd_index(m, s, 0);
	const Operand *o = &m->opds.v[d];
	uint32_t k = o->kind == OPD_VEC ? d + 1 : d,
	         end = o->kind == OPD_VEC ? d + 1 + o->sub : d + 1;
	for (; k < end; k = opd_next(m, k)) {
		const Operand *x = &m->opds.v[k];
		if (x->kind == OPD_SINK)
			continue;
		int64_t r = df_opd_reg(g->df, k);
		if (r < 0 || df_opd_partial(g->df, k) || reg_info(g, (uint32_t)r)->vec)
			return false;
	}
	return true;
}

/* Is register reg defined by an mma of the phase after mma i? */
static bool redefined_after(const PhaseOperands *po, size_t i, uint32_t reg)
{
	for (size_t j = i + 1; j < po->mma.n; j++) {
		const OpdMma *x = &po->mma.v[j];
		for (uint32_t k = 0; k < x->nword[ROLE_D]; k++)
			if (po->words.v[x->word[ROLE_D] + k].reg == reg)
				return true;
	}
	return false;
}

static bool in_live_out(const CutInterface *cut, uint32_t reg)
{
	for (size_t i = 0; i < cut->live_out.n; i++)
		if (cut->live_out.v[i].reg == reg)
			return true;
	return false;
}

static int plan(Gen *g, const CutInterface *cut)
{
	const PhaseOperands *po = g->po;
	const Module *m = df_module(g->df);
	const Func *f = df_func(g->df);
	g->wname = xcalloc(po->words.n + 1, sizeof(char *));
	g->reload = xcalloc(po->loads.n + 1, sizeof(bool));
	g->lname = xcalloc(po->loads.n + 1, sizeof(char **));
	/* the loads issued again, in statement order: their base formals and
	 * destination locals */
	size_t *order = g->order = xcalloc(po->loads.n + 1, sizeof(size_t));
	for (size_t i = 0; i < po->loads.n; i++)
		order[i] = i;
	for (size_t i = 1; i < po->loads.n; i++)
		for (size_t j = i;
		     j > 0 && po->loads.v[order[j - 1]].stmt > po->loads.v[order[j]].stmt;
		     j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t oi = 0; oi < po->loads.n; oi++) {
		size_t i = order[oi];
		const OpdLoad *l = &po->loads.v[i];
		if (!reloadable(g, l))
			continue;
		g->reload[i] = true;
		OpdRole role = ROLE_A;
		while (role < ROLE_C && !(l->roles & (1u << role)))
			role++;
		free(base_formal(g, (uint32_t)l->base_reg, role));
		const Stmt *s = func_stmt(m, f, l->stmt);
		uint32_t d = stmt_opd_index(m, s, 0);
		const Operand *o = &m->opds.v[d];
		uint32_t k = o->kind == OPD_VEC ? d + 1 : d,
		         end = o->kind == OPD_VEC ? d + 1 + o->sub : d + 1;
		g->lname[i] = xcalloc(l->ndest + 1, sizeof(char *));
		char prefix[8];
		snprintf(prefix, sizeof prefix, "%%%s", opd_role_name(role));
		for (uint32_t e = 0; k < end && e < l->ndest; k = opd_next(m, k), e++) {
			if (m->opds.v[k].kind == OPD_SINK) {
				g->lname[i][e] = xstrdup("_");
				continue;
			}
			g->lname[i][e] = local(
			    g, prefix, reg_info(g, (uint32_t)df_opd_reg(g->df, k))->type);
		}
	}
	/* D words: the output list or a local */
	GFormal *dout = NULL;
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *x = &po->mma.v[i];
		for (uint32_t k = 0; k < x->nword[ROLE_D]; k++) {
			uint32_t reg = po->words.v[x->word[ROLE_D] + k].reg;
			if (in_live_out(cut, reg) && !redefined_after(po, i, reg)) {
				if (!dout)
					dout = formal(g, "d", reg_info(g, reg)->bits,
					              FM_OUT, true);
				VEC_PUSH(dout->regs, reg);
				g->wname[x->word[ROLE_D] + k] =
				    fmt("%%{d[%zu]}", dout->regs.n - 1);
			} else
				g->wname[x->word[ROLE_D] + k] =
				    local(g, "%t", reg_info(g, reg)->type);
		}
	}
	/* A, B, C words */
	for (int r = ROLE_A; r < ROLE__N; r++)
		for (size_t i = 0; i < po->mma.n; i++) {
			const OpdMma *x = &po->mma.v[i];
			for (uint32_t k = 0; k < x->nword[r]; k++) {
				size_t wi = x->word[r] + k;
				const OpdWord *w = &po->words.v[wi];
				const char *z;
				if (w->value == OV_MMA)
					g->wname[wi] = xstrdup(
					    g->wname[po->mma.v[w->src].word[ROLE_D] +
					             w->elem]);
				else if (w->value == OV_LOAD && g->reload[w->src])
					g->wname[wi] = xstrdup(g->lname[w->src][w->elem]);
				else if (w->value == OV_ZERO &&
				         (z = zero_of(g, reg_info(g, w->reg)->type)))
					g->wname[wi] = xstrdup(z);
				else
					g->wname[wi] = input(g, (OpdRole)r, w->reg);
			}
		}
	/* every list holds registers of one width */
	for (size_t i = 0; i < g->formals.n; i++) {
		const GFormal *fm = &g->formals.v[i];
		for (size_t k = 1; k < fm->regs.n; k++)
			if (reg_info(g, fm->regs.v[k])->bits !=
			    reg_info(g, fm->regs.v[0])->bits) {
				char a[64], b[64];
				Str na = reg_info(g, fm->regs.v[0])->name,
				    nb = reg_info(g, fm->regs.v[k])->name;
				snprintf(a, sizeof a, "%.*s", (int)na.n, na.p);
				snprintf(b, sizeof b, "%.*s", (int)nb.n, nb.p);
				return refuse(g,
				              "the %s registers mix widths ('%s' %u "
				              "bits, '%s' %u bits)",
				              fm->name, a,
				              reg_info(g, fm->regs.v[0])->bits, b,
				              reg_info(g, fm->regs.v[k])->bits);
			}
	}
	return 0;
}

/* ---- checks on the phase ------------------------------------------------------ */

static int check_phase(Gen *g, NativeForm form)
{
	const PhaseOperands *po = g->po;
	const Module *m = df_module(g->df);
	const Func *f = df_func(g->df);
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *x = &po->mma.v[i];
		const Stmt *s = func_stmt(m, f, x->stmt);
		Str op = stmt_opcode(m, s);
		if (s->flags & STMT_GUARD)
			return refuse(g,
			              "s%u (line %u) is a guarded mma: the facts do not "
			              "say when it runs",
			              x->stmt, s->line);
		if (!stmt_opcode_is(m, s, "mma.sync") || s->nopd != 4)
			return refuse(g,
			              "s%u (line %u) is '%.*s': the generator writes "
			              "mma.sync with D, A, "
			              "B, C operands only",
			              x->stmt, s->line, (int)op.n, op.p);
		if (form == NATIVE_F16) {
			if (!str_eqc(op, E4M3))
				return refuse(g,
				              "s%u (line %u) is '%.*s': the f16 form is "
				              "exact for %s only "
				              "(f16 accumulate); another type or "
				              "accumulation has no proven "
				              "f16 equivalent",
				              x->stmt, s->line, (int)op.n, op.p, E4M3);
			static const uint8_t want[ROLE__N] = {2, 4, 2, 2};
			for (int r = 0; r < ROLE__N; r++)
				if (x->nword[r] != want[r])
					return refuse(g,
					              "s%u (line %u): operand %s has %u "
					              "registers, %s has %u",
					              x->stmt, s->line,
					              opd_role_name((OpdRole)r),
					              x->nword[r], E4M3, want[r]);
			for (int r = 0; r < ROLE__N; r++)
				for (uint32_t k = 0; k < x->nword[r]; k++) {
					const RegInfo *ri =
					    reg_info(g, po->words.v[x->word[r] + k].reg);
					if (ri->bits != 32 || ri->vec)
						return refuse(
						    g,
						    "s%u (line %u): '%.*s' of operand %s "
						    "is not a 32-bit "
						    "register",
						    x->stmt, s->line, (int)ri->name.n,
						    ri->name.p,
						    opd_role_name((OpdRole)r));
				}
		}
	}
	return 0;
}

/* ---- the template -------------------------------------------------------------- */

static void tuple(Gen *g, const OpdMma *x, int r, bool braces, StrBuf *out)
{
	if (braces)
		sb_addc(out, '{');
	for (uint32_t k = 0; k < x->nword[r]; k++)
		sb_addf(out, "%s%s", k ? ", " : "", g->wname[x->word[r] + k]);
	if (braces)
		sb_addc(out, '}');
}

static void declare_locals(Gen *g, StrBuf *t)
{
	bool *done = xcalloc(g->locals.n + 1, 1);
	for (;;) {
		/* the prefixes in name order */
		size_t i = g->locals.n;
		for (size_t j = 0; j < g->locals.n; j++)
			if (!done[j] &&
			    (i == g->locals.n ||
			     strcmp(g->locals.v[j].prefix, g->locals.v[i].prefix) < 0))
				i = j;
		if (i == g->locals.n)
			break;
		const char *p = g->locals.v[i].prefix;
		bool same = true;
		unsigned n = 0;
		for (size_t j = i; j < g->locals.n; j++)
			if (!strcmp(g->locals.v[j].prefix, p)) {
				n++;
				same &= !strcmp(g->locals.v[j].type, g->locals.v[i].type);
			}
		unsigned k = 0;
		for (size_t j = i; j < g->locals.n; j++) {
			if (strcmp(g->locals.v[j].prefix, p))
				continue;
			done[j] = true;
			if (!same)
				sb_addf(t, "\t.reg %s %s%u;\n", g->locals.v[j].type, p,
				        k);
			k++;
		}
		if (same)
			sb_addf(t, "\t.reg %s %s<%u>;\n", g->locals.v[i].type, p, n);
	}
	free(done);
}

/* The decoded halves of value `name` (f16 form), converted on first use. */
typedef struct {
	VEC(char *) names;
	VEC(unsigned) idx;
	unsigned n;
} Decoded;

static unsigned decode(Decoded *dc, const char *name, StrBuf *body)
{
	for (size_t i = 0; i < dc->names.n; i++)
		if (!strcmp(dc->names.v[i], name))
			return dc->idx.v[i];
	unsigned k = dc->n++;
	VEC_PUSH(dc->names, xstrdup(name));
	VEC_PUSH(dc->idx, k);
	sb_addf(body, "\tmov.b32 \t{%%e%u, %%e%u}, %s;\n", 2 * k, 2 * k + 1, name);
	sb_addf(body, "\tcvt.rn.f16x2.e4m3x2 \t%%lo%u, %%e%u;\n", k, 2 * k);
	sb_addf(body, "\tcvt.rn.f16x2.e4m3x2 \t%%hi%u, %%e%u;\n", k, 2 * k + 1);
	return k;
}

static void body_f16(Gen *g, StrBuf *body, unsigned *ndecoded)
{
	const PhaseOperands *po = g->po;
	Decoded dc = {0};
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *x = &po->mma.v[i];
		sb_addf(body, "\t// s%u: m-tile %u, n-tile %u, k-step %u\n", x->stmt,
		        x->m_tile, x->n_tile, x->k_step);
		unsigned a[4], b[2];
		for (uint32_t k = 0; k < 4; k++)
			a[k] = decode(&dc, g->wname[x->word[ROLE_A] + k], body);
		for (uint32_t k = 0; k < 2; k++)
			b[k] = decode(&dc, g->wname[x->word[ROLE_B] + k], body);
		sb_addf(body,
		        "\t%s \t{%%s%zu, %%s%zu}, {%%lo%u, %%lo%u, %%lo%u, %%lo%u}, "
		        "{%%lo%u, %%lo%u}, "
		        "{%s, %s};\n",
		        F16K16, 2 * i, 2 * i + 1, a[0], a[1], a[2], a[3], b[0], b[1],
		        g->z32, g->z32);
		sb_addf(body,
		        "\t%s \t{%%s%zu, %%s%zu}, {%%hi%u, %%hi%u, %%hi%u, %%hi%u}, "
		        "{%%hi%u, %%hi%u}, "
		        "{%%s%zu, %%s%zu};\n",
		        F16K16, 2 * i, 2 * i + 1, a[0], a[1], a[2], a[3], b[0], b[1],
		        2 * i, 2 * i + 1);
		/* d = t + c; a D register that is also a later C word of this mma
		 * is written after both adds */
		const OpdWord *d = &po->words.v[x->word[ROLE_D]],
		              *c = &po->words.v[x->word[ROLE_C]];
		bool clash = d[0].reg == c[1].reg;
		static const char *const tmp[2] = {"%tmp0", "%tmp1"};
		for (uint32_t k = 0; k < 2; k++)
			sb_addf(body, "\tadd.rn.f16x2 \t%s, %%s%zu, %s;\n",
			        clash ? tmp[k] : g->wname[x->word[ROLE_D] + k], 2 * i + k,
			        g->wname[x->word[ROLE_C] + k]);
		if (clash)
			for (uint32_t k = 0; k < 2; k++)
				sb_addf(body, "\tmov.b32 \t%s, %%tmp%u;\n",
				        g->wname[x->word[ROLE_D] + k], k);
	}
	*ndecoded = dc.n;
	for (size_t i = 0; i < dc.names.n; i++)
		free(dc.names.v[i]);
	VEC_FREE(dc.names);
	VEC_FREE(dc.idx);
}

static bool any_clash(const PhaseOperands *po)
{
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *x = &po->mma.v[i];
		if (x->nword[ROLE_D] == 2 && x->nword[ROLE_C] == 2 &&
		    po->words.v[x->word[ROLE_D]].reg ==
		        po->words.v[x->word[ROLE_C] + 1].reg)
			return true;
	}
	return false;
}

/* "a_base12" before "b_base0", "a_base2" before "a_base12" */
static int base_cmp(const char *a, const char *b)
{
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	unsigned long x = strtoul(a + 6, NULL, 10), y = strtoul(b + 6, NULL, 10);
	return x < y ? -1 : x > y;
}

/* The base formals in role and number order (a_base0, a_base1, ...,
 * b_base0, ...), before the lists, for the header and the binding. */
static void sort_bases(Gen *g)
{
	for (size_t i = 1; i < g->formals.n; i++)
		for (size_t j = i; j > 0; j--) {
			GFormal *a = &g->formals.v[j - 1], *b = &g->formals.v[j];
			bool swap = a->list
			                ? !b->list
			                : (!b->list && base_cmp(a->name, b->name) > 0);
			if (!swap)
				break;
			GFormal t = *a;
			*a = *b;
			*b = t;
		}
}

/* "A reloaded (6 loads from shared), " and the like, for the header and
 * the note. */
static void role_summary(Gen *g, int r, StrBuf *out)
{
	const PhaseOperands *po = g->po;
	unsigned reloaded = 0, inputs = 0, zero = 0, chained = 0, loads = 0;
	unsigned spaces = 0;
	for (size_t i = 0; i < po->loads.n; i++)
		if ((po->loads.v[i].roles & (1u << r)) && g->reload[i]) {
			loads++;
			spaces |= 1u << po->loads.v[i].space;
		}
	for (size_t i = 0; i < po->mma.n; i++) {
		const OpdMma *x = &po->mma.v[i];
		for (uint32_t k = 0; k < x->nword[r]; k++) {
			const OpdWord *w = &po->words.v[x->word[r] + k];
			const char *n = g->wname[x->word[r] + k];
			if (w->value == OV_MMA)
				chained++;
			else if (!strncmp(n, "%{", 2))
				inputs++;
			else if (w->value == OV_ZERO)
				zero++;
			else
				reloaded++;
		}
	}
	char R = (char)('A' + r - ROLE_A);
	bool first = true;
	sb_addf(out, "%c ", R);
	if (reloaded) {
		sb_addf(out, "loaded here (%u load%s from", loads, loads == 1 ? "" : "s");
		for (int s = 0; s < SP__COUNT; s++)
			if (spaces & (1u << s))
				sb_addf(out, " %s", space_name((Space)s));
		sb_adds(out, ")");
		first = false;
	}
	if (chained) {
		sb_addf(out, "%sthe D of an earlier mma of the phase", first ? "" : ", ");
		first = false;
	}
	if (zero) {
		sb_addf(out, "%szero", first ? "" : ", ");
		first = false;
	}
	if (inputs) {
		sb_addf(out, "%sinput registers", first ? "" : ", ");
		first = false;
	}
	if (first)
		sb_adds(out, "none");
}

int splice_native(const NativeRequest *req, StrBuf *recipe_json, StrBuf *template_text,
                  StrBuf *summary, Err *e)
{
	const Module *m = req->module;
	const Func *f = mod_func_find(m, str_c(req->entry));
	if (!f || (f->flags & FNF_DECL))
		return err_set(e, "no function '%s' with a body in module '%s'",
		               req->entry, m->name ? m->name : "?");
	if (native_is_wgmma(m, req->entry, req->phase))
		return splice_native_wgmma(req, recipe_json, template_text, summary, e);
	if (req->form == NATIVE_MMA_SYNC)
		return err_set(e,
		               "phase %u holds no wgmma.mma_async: the mma_sync form is the "
		               "mma.sync form of a wgmma phase (--native mma writes this "
		               "phase's own instruction)",
		               req->phase);
	Dataflow *df = df_build(m, f, e);
	if (!df)
		return -1;
	int rc = -1;
	PhaseList pl;
	ana_phase_find(m, f, 0, &pl);
	PhaseOperands po;
	memset(&po, 0, sizeof po);
	CutInterface cut;
	memset(&cut, 0, sizeof cut);
	bool have_cut = false;
	Gen g;
	memset(&g, 0, sizeof g);
	cJSON *root = NULL;
	const char *form_name = native_form_name(req->form);
	if (!req->phase || req->phase > pl.n) {
		ana_phase_missing(NULL, req->phase, req->layer ? req->layer : req->entry, pl.n, e);
		goto out;
	}
	const Phase *ph = &pl.v[req->phase - 1];
	uint32_t first = ph->first, last = ph->last;
	if (df_cut(df, first, last, &cut, e) < 0)
		goto out;
	have_cut = true;
	if (cut.rw_dependency) {
		err_set(e,
		        "phase %u (s%u..s%u): READ/WRITE DEPENDENCIES: cut invalid:\n%s",
		        req->phase, first, last, cut.rw_reason.p ? cut.rw_reason.p : "");
		goto out;
	}
	if (ana_operands(df, &pl, first, last, &po, e) < 0)
		goto out;
	if (po.unsupported) {
		err_set(
		    e,
		    "phase %u: s%u is %s: no operand facts to write a native phase from",
		    req->phase, po.unsupported_stmt, po.unsupported);
		goto out;
	}
	g.df = df;
	g.po = &po;
	if (req->form == NATIVE_F16)
		g.z32 = zero_of(&g, str_c(".b32"));
	if (check_phase(&g, req->form) < 0 || plan(&g, &cut) < 0) {
		err_set(e, "phase %u (s%u..s%u), %s form: %s", req->phase, first, last,
		        form_name, g.err.p);
		goto out;
	}
	const Stmt *s0 = func_stmt(m, f, first), *s1 = func_stmt(m, f, last);
	const Stmt *mma0 = func_stmt(m, f, po.mma.v[0].stmt);
	Str op0 = stmt_opcode(m, mma0);

	/* ---- the body first: the f16 form's decoded values are counted in it */
	StrBuf body = STRBUF_INIT;
	VEC(uint32_t) reloads = {0};
	for (size_t oi = 0; oi < po.loads.n; oi++) /* statement order */
		if (g.reload[g.order[oi]]) {
			size_t i = g.order[oi];
			const OpdLoad *l = &po.loads.v[i];
			const Stmt *ls = func_stmt(m, f, l->stmt);
			Str op = stmt_opcode(m, ls);
			const Operand *d = stmt_opd(m, ls, 0);
			sb_addf(&body, "\t%.*s \t%s", (int)op.n, op.p,
			        d->kind == OPD_VEC ? "{" : "");
			for (uint32_t k = 0; k < l->ndest; k++)
				sb_addf(&body, "%s%s", k ? ", " : "", g.lname[i][k]);
			char *base = NULL;
			for (size_t q = 0; q < g.formals.n && !base; q++)
				if (!g.formals.v[q].list &&
				    g.formals.v[q].regs.v[0] == (uint32_t)l->base_reg)
					base = g.formals.v[q].name;
			sb_addf(&body, "%s, [%%{%s}", d->kind == OPD_VEC ? "}" : "",
			        base);
			if (l->disp)
				sb_addf(&body, "+%lld", (long long)l->disp);
			sb_addf(&body, "];\t// s%u\n", l->stmt);
			VEC_PUSH(reloads, l->stmt);
		}
	/* a bit-size mov fits a register of any type of its width */
	for (uint32_t i = 0; i < g.nzero; i++)
		sb_addf(&body, "\tmov.b%u \t%s, 0;\n",
		        ptx_type_bits(g.zero_type[i], strlen(g.zero_type[i])),
		        g.zero_name[i]);
	unsigned ndecoded = 0;
	if (req->form == NATIVE_MMA)
		for (size_t i = 0; i < po.mma.n; i++) {
			const OpdMma *x = &po.mma.v[i];
			const Stmt *s = func_stmt(m, f, x->stmt);
			Str op = stmt_opcode(m, s);
			sb_addf(&body, "\t// s%u: m-tile %u, n-tile %u, k-step %u\n",
			        x->stmt, x->m_tile, x->n_tile, x->k_step);
			sb_addf(&body, "\t%.*s \t", (int)op.n, op.p);
			for (int r = 0; r < ROLE__N; r++) {
				if (r)
					sb_adds(&body, ", ");
				tuple(&g, x, r,
				      stmt_opd(m, s, (unsigned)r)->kind == OPD_VEC,
				      &body);
			}
			sb_adds(&body, ";\n");
		}
	else
		body_f16(&g, &body, &ndecoded);

	/* ---- the template */
	StrBuf *t = template_text;
	StrBuf who = STRBUF_INIT;
	if (req->layer)
		sb_addf(&who, "d4r-splice recipe new %s --phase %u --native %s",
		        req->layer, req->phase, form_name);
	else {
		const char *b = m->name ? strrchr(m->name, '/') : NULL;
		sb_addf(&who, "d4r-splice recipe new --module %s --phase %u --native %s",
		        b         ? b + 1
		        : m->name ? m->name
		                  : "MODULE",
		        req->phase, form_name);
	}
	sb_addf(t, "// ptx/%s - phase %u of %s (s%u..s%u), %s\n", req->template_name,
	        req->phase, req->entry, first, last,
	        req->form == NATIVE_MMA ? "the vendor's instruction"
	                                : "in exact f16 tensor-core form");
	sb_addf(t,
	        "//\n// Written by `%s` from the phase's facts;\n"
	        "// write it again rather than edit it.\n",
	        who.p);
	sb_addf(t,
	        "// %zu x %.*s: %u m-tile%s x %u n-tile%s x %u k-step%s, %u chain%s.\n",
	        po.mma.n, (int)op0.n, op0.p, po.m_tiles, po.m_tiles == 1 ? "" : "s",
	        po.n_tiles, po.n_tiles == 1 ? "" : "s", po.k_steps,
	        po.k_steps == 1 ? "" : "s", po.chains, po.chains == 1 ? "" : "s");
	StrBuf roles = STRBUF_INIT;
	for (int r = ROLE_A; r < ROLE__N; r++) {
		role_summary(&g, r, &roles);
		sb_adds(&roles, r + 1 < ROLE__N ? "; " : ".");
	}
	sb_addf(t, "// %s\n", roles.p);
	if (req->form == NATIVE_F16)
		sb_addf(t,
		        "// Each e4m3 mma as sm_90 executes it: lo/hi = "
		        "cvt.rn.f16x2.e4m3x2 of the low/high\n"
		        "// 16 bits of every A and B word (%u words, each converted "
		        "once), two m16n8k16\n"
		        "// f16 mma (lo with C = 0, hi onto it), then add.rn.f16x2 of C: "
		        "bit-exact.\n",
		        ndecoded);
	else
		sb_adds(t, "// The vendor's instruction, operand for operand: bit-exact "
		           "by construction.\n");
	/* formals: bases, then the lists in role order */
	static const char *const list_order[] = {"a", "b", "c", "d"};
	sort_bases(&g);
	native_formals_header(g.formals.v, g.formals.n, list_order, ARRAY_SIZE(list_order), t);
	unsigned rspaces = 0;
	for (size_t i = 0; i < po.loads.n; i++)
		if (g.reload[i])
			rspaces |= 1u << po.loads.v[i].space;
	sb_adds(t, "//! reads");
	if (!rspaces)
		sb_adds(t, " none");
	for (int s = 0; s < SP__COUNT; s++)
		if (rspaces & (1u << s))
			sb_addf(t, " %s", space_name((Space)s));
	sb_adds(t, "\n//! writes none\n//! barriers 0\n");
	declare_locals(&g, t);
	for (uint32_t i = 0; i < g.nzero; i++)
		sb_addf(t, "\t.reg %s %s;\n", g.zero_type[i], g.zero_name[i]);
	if (req->form == NATIVE_F16) {
		if (ndecoded) {
			sb_addf(t, "\t.reg .b16 %%e<%u>;\n", 2 * ndecoded);
			sb_addf(t, "\t.reg .b32 %%lo<%u>;\n\t.reg .b32 %%hi<%u>;\n",
			        ndecoded, ndecoded);
		}
		sb_addf(t, "\t.reg .b32 %%s<%zu>;\n", 2 * po.mma.n);
		if (any_clash(&po))
			sb_adds(t, "\t.reg .b32 %tmp<2>;\n");
	}
	sb_addn(t, body.p ? body.p : "", body.n);
	sb_release(&body);

	/* ---- the recipe */
	root = native_recipe_begin(req, df, g.formals.v, g.formals.n, list_order,
	                           ARRAY_SIZE(list_order));
	StrBuf txt = STRBUF_INIT, re = STRBUF_INIT;
	cJSON *gd = cJSON_AddObjectToObject(root, "guards");
	splice_guards_json(m, f, first, last, gd);
	char hex[65];
	if (reloads.n) {
		cJSON *rl = cJSON_AddObjectToObject(gd, "reloads");
		cJSON *sts = cJSON_AddArrayToObject(rl, "stmts");
		sb_reset(&txt);
		for (size_t i = 0; i < reloads.n; i++) {
			cJSON_AddItemToArray(sts, cJSON_CreateNumber(reloads.v[i]));
			if (i)
				sb_addc(&txt, '\n');
			stmt_normalized(m, func_stmt(m, f, reloads.v[i]), &txt);
		}
		sha256_hex(txt.p, txt.n, hex);
		cJSON_AddStringToObject(rl, "sha256", hex);
	}
	sb_reset(&txt);
	sb_addf(&txt,
	        "written by `%s` from %s: %u m-tile%s x %u n-tile%s x %u k-step%s; %s",
	        who.p, req->module_rel ? req->module_rel : "the module", po.m_tiles,
	        po.m_tiles == 1 ? "" : "s", po.n_tiles, po.n_tiles == 1 ? "" : "s",
	        po.k_steps, po.k_steps == 1 ? "" : "s", roles.p);
	cJSON_AddStringToObject(root, "note", txt.p);
	char *js = cJSON_Print(root);
	sb_adds(recipe_json, js);
	sb_addc(recipe_json, '\n');
	free(js);
	if (summary)
		sb_addf(summary,
		        "cut:       phase %u, s%u..s%u (lines %u..%u) of %s, %zu mma: %u "
		        "m-tile%s x %u "
		        "n-tile%s x %u k-step%s\n"
		        "operands:  %s\n"
		        "form:      %s (%s)\n",
		        req->phase, first, last, s0->line, s1->line, req->entry, po.mma.n,
		        po.m_tiles, po.m_tiles == 1 ? "" : "s", po.n_tiles,
		        po.n_tiles == 1 ? "" : "s", po.k_steps,
		        po.k_steps == 1 ? "" : "s", roles.p, form_name,
		        req->form == NATIVE_MMA
		            ? "the vendor's instruction"
		            : "two m16n8k16 f16 mma and an f16x2 add per e4m3 mma");
	sb_release(&txt);
	sb_release(&re);
	sb_release(&who);
	sb_release(&roles);
	VEC_FREE(reloads);
	rc = 0;
out:
	if (root)
		cJSON_Delete(root);
	if (g.wname)
		for (size_t i = 0; i < po.words.n; i++)
			free(g.wname[i]);
	free(g.wname);
	for (size_t i = 0; g.lname && i < po.loads.n; i++) {
		for (uint32_t k = 0; g.lname[i] && k < po.loads.v[i].ndest; k++)
			free(g.lname[i][k]);
		free(g.lname[i]);
	}
	free(g.lname);
	free(g.reload);
	free(g.order);
	for (size_t i = 0; i < g.formals.n; i++)
		VEC_FREE(g.formals.v[i].regs);
	VEC_FREE(g.formals);
	VEC_FREE(g.locals);
	sb_release(&g.err);
	phase_operands_release(&po);
	if (have_cut)
		cut_release(&cut);
	phases_release(&pl);
	df_free(df);
	return rc;
}

/* ---- what the wgmma generator shares (native_internal.h) ------------------- */

NativeFormal *native_formal(NativeFormals *v, const char *name, const char *type, uint8_t dir,
                            bool list)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i].name, name))
			return &v->v[i];
	NativeFormal f;
	memset(&f, 0, sizeof f);
	snprintf(f.name, sizeof f.name, "%s", name);
	snprintf(f.type, sizeof f.type, "%s", type);
	f.dir = dir;
	f.list = list;
	VEC_PUSH(*v, f);
	return &v->v[v->n - 1];
}

int native_refuse(StrBuf *err, const char *f, ...)
{
	if (err->n)
		return -1;
	va_list ap;
	va_start(ap, f);
	char buf[1024];
	vsnprintf(buf, sizeof buf, f, ap);
	va_end(ap);
	sb_adds(err, buf);
	return -1;
}

void native_formals_header(const NativeFormal *v, size_t n, const char *const *order,
                           size_t norder, StrBuf *t)
{
	for (size_t i = 0; i < n; i++)
		if (!v[i].list)
			sb_addf(t, "//! in    %s %s\n", v[i].type, v[i].name);
	for (size_t k = 0; k < norder; k++)
		for (size_t i = 0; i < n; i++)
			if (v[i].list && !strcmp(v[i].name, order[k]))
				sb_addf(t, "//! %-5s %s %s[%zu]\n",
				        v[i].dir == FM_INOUT ? "inout"
				        : v[i].dir == FM_OUT ? "out"
				                             : "in",
				        v[i].type, v[i].name, v[i].regs.n);
}

cJSON *native_recipe_begin(const NativeRequest *req, Dataflow *df, const NativeFormal *v,
                           size_t n, const char *const *order, size_t norder)
{
	cJSON *root = cJSON_CreateObject();
	if (req->layer)
		cJSON_AddStringToObject(root, "layer", req->layer);
	if (req->module_rel)
		cJSON_AddStringToObject(root, "module", req->module_rel);
	cJSON_AddStringToObject(root, "entry", req->entry);
	cJSON *cj = cJSON_AddObjectToObject(root, "cut");
	cJSON_AddNumberToObject(cj, "phase", req->phase);
	cJSON_AddStringToObject(root, "template", req->template_name);
	cJSON *bind = cJSON_AddObjectToObject(root, "bind");
	char buf[160];
	for (size_t i = 0; i < n; i++)
		if (!v[i].list) {
			Str nm = df_reg(df, v[i].regs.v[0])->name;
			snprintf(buf, sizeof buf, "%.*s", (int)nm.n, nm.p);
			cJSON_AddStringToObject(bind, v[i].name, buf);
		}
	for (size_t k = 0; k < norder; k++)
		for (size_t i = 0; i < n; i++) {
			if (!v[i].list || strcmp(v[i].name, order[k]))
				continue;
			cJSON *a = cJSON_AddArrayToObject(bind, v[i].name);
			for (size_t j = 0; j < v[i].regs.n; j++) {
				Str nm = df_reg(df, v[i].regs.v[j])->name;
				snprintf(buf, sizeof buf, "%.*s", (int)nm.n, nm.p);
				cJSON_AddItemToArray(a, cJSON_CreateString(buf));
			}
		}
	return root;
}
