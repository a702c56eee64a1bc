/*
 * module.c - access to the module model: opcodes, operands, rendering.
 */
#include "module.h"

#include "lex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {
	"?",
#define OP(e, s) s,
#include "ops.def"
#undef OP
};

const char *op_name(Op op)
{
	return (unsigned)op < OP__COUNT ? op_names[op] : "?";
}

/* A small open-addressing table from the first opcode component to Op,
 * built on first use.  Opcode lookup runs once per statement, so the hash
 * looks at the length and two bytes only. */
static uint16_t op_table[1024];
static uint8_t op_len[OP__COUNT];

static inline uint32_t hash(const char *s, size_t n)
{
	return ((unsigned char)s[0] * 31u + (unsigned char)s[n - 1] * 7u + (unsigned char)s[n > 1] * 3u + (uint32_t)n * 131u) & 1023u;
}

static void build_table(void)
{
	for (int op = 1; op < OP__COUNT; op++) {
		const char *s = op_names[op];
		op_len[op] = (uint8_t)strlen(s);
		uint32_t h = hash(s, op_len[op]);
		while (op_table[h])
			h = (h + 1) & 1023u;
		op_table[h] = (uint16_t)op;
	}
}

Op op_lookup(const char *s, size_t n)
{
	if (UNLIKELY(!op_len[OP_LD]))
		build_table();
	if (n == 0 || n > 32)
		return OP_UNKNOWN;
	uint32_t h = hash(s, n);
	while (op_table[h]) {
		int op = op_table[h];
		if (op_len[op] == n && memcmp(op_names[op], s, n) == 0)
			return (Op)op;
		h = (h + 1) & 1023u;
	}
	return OP_UNKNOWN;
}

uint32_t stmt_opd_index(const Module *m, const Stmt *s, unsigned i)
{
	uint32_t k = s->opd + ((s->flags & STMT_GUARD) ? 1 : 0);
	while (i--)
		k = opd_next(m, k);
	return k;
}

int stmt_mod_any(const Module *m, const Stmt *s, const char *const *mods, size_t nmods)
{
	Str op = stmt_opcode(m, s);
	size_t len[16];
	if (nmods > 16)
		nmods = 16;
	for (size_t i = 0; i < nmods; i++)
		len[i] = strlen(mods[i]);
	const char *p = op.p, *end = op.p + op.n;
	/* components are short: one walk, comparing each '.'-started one */
	while (p < end && *p != '.')
		p++;
	while (p < end) {
		const char *r = p + 1;
		while (r < end && *r != '.')
			r++;
		for (size_t i = 0; i < nmods; i++)
			if ((size_t)(r - p) == len[i] && memcmp(p, mods[i], len[i]) == 0)
				return (int)i;
		p = r;
	}
	return -1;
}

bool stmt_has_mod(const Module *m, const Stmt *s, const char *mod)
{
	return stmt_mod_any(m, s, &mod, 1) >= 0;
}

bool stmt_opcode_is(const Module *m, const Stmt *s, const char *prefix)
{
	Str op = stmt_opcode(m, s);
	size_t n = strlen(prefix);
	return op.n >= n && memcmp(op.p, prefix, n) == 0 && (op.n == n || op.p[n] == '.');
}

void func_stmt_scopes(const Module *m, const Func *f, uint32_t *out)
{
	/* scopes in opening order: an inner scope overwrites its parent's mark */
	for (uint32_t k = 0; k < f->nscope; k++) {
		const Scope *sc = func_scope(m, f, k);
		for (uint32_t i = sc->stmt0; i < sc->stmt0 + sc->nstmt; i++)
			out[i] = k;
	}
}

void func_fresh_prefix(const Module *m, const Func *f, const char *stem, unsigned from,
                       char out[32])
{
	for (unsigned n = from;; n++) {
		snprintf(out, 32, "%%%s%u_", stem, n);
		size_t k = strlen(out);
		bool taken = false;
		for (uint32_t i = 0; i < f->nreg && !taken; i++) {
			Span nm = m->regs.v[f->reg0 + i].name;
			taken = nm.len >= k && memcmp(m->src + nm.off, out, k) == 0;
		}
		for (uint32_t i = 0; i < f->nparam && !taken; i++) {
			Span nm = m->params.v[f->param0 + i].name;
			taken = nm.len >= k && memcmp(m->src + nm.off, out, k) == 0;
		}
		if (!taken)
			return;
	}
}

Func *mod_func_find(const Module *m, Str name)
{
	for (size_t i = 0; i < m->funcs.n; i++)
		if (str_eq(mod_str(m, m->funcs.v[i].name), name) && !(m->funcs.v[i].flags & FNF_DECL))
			return &m->funcs.v[i];
	return NULL;
}

void mod_free(Module *m)
{
	if (!m)
		return;
	VEC_FREE(m->items);
	VEC_FREE(m->funcs);
	VEC_FREE(m->stmts);
	VEC_FREE(m->opds);
	VEC_FREE(m->params);
	VEC_FREE(m->regs);
	VEC_FREE(m->labels);
	VEC_FREE(m->scopes);
	arena_release(&m->arena);
	free(m);
}

/* Renders operand i (and its descendants) without whitespace; returns the
 * index of the next sibling. */
static uint32_t render_opd(const Module *m, uint32_t i, StrBuf *out)
{
	const Operand *o = &m->opds.v[i];
	uint32_t end = i + 1 + o->sub;
	if (o->flags & OPDF_NOT)
		sb_addc(out, '!');
	const char *open = NULL, *close = NULL, *sep = ",";
	switch (o->kind) {
	case OPD_VEC:
		open = "{", close = "}";
		break;
	case OPD_ADDR:
		open = "[", close = "]";
		break;
	case OPD_LIST:
		open = "(", close = ")";
		break;
	case OPD_PAIR:
		open = "", close = "", sep = "|";
		break;
	case OPD_EXPR:
		open = "", close = "", sep = "";
		break;
	default:
		sb_addn(out, m->src + o->off, o->len);
		return end;
	}
	sb_adds(out, open);
	uint32_t k = i + 1;
	int first = 1;
	while (k < end) {
		if (!first)
			sb_adds(out, sep);
		if (o->kind == OPD_EXPR && (m->opds.v[k].flags & OPDF_PLUS))
			sb_addc(out, '+');
		first = 0;
		k = render_opd(m, k, out);
	}
	sb_adds(out, close);
	return end;
}

uint32_t opd_render_compact(const Module *m, uint32_t i, StrBuf *out)
{
	return render_opd(m, i, out);
}

void stmt_render_compact(const Module *m, const Stmt *s, StrBuf *out)
{
	uint32_t k = s->opd;
	if (s->flags & STMT_GUARD) {
		sb_addc(out, '@');
		if (s->flags & STMT_GUARD_NOT)
			sb_addc(out, '!');
		k = render_opd(m, k, out);
	}
	sb_addn(out, m->src + s->off + s->opdelta, s->oplen);
	for (unsigned i = 0; i < s->nopd; i++) {
		if (i)
			sb_addc(out, ',');
		k = render_opd(m, k, out);
	}
	sb_addc(out, ';');
}

void stmt_normalized(const Module *m, const Stmt *s, StrBuf *out)
{
	const char *p = m->src + s->off, *end = p + s->len;
	bool space = false;
	while (p < end) {
		const char *q = ptx_lex_solid(p, end);
		if (q > p) {
			if (space && out->n && out->p[out->n - 1] != '\n')
				sb_addc(out, ' ');
			sb_addn(out, p, (size_t)(q - p));
		}
		p = ptx_lex_trivia(q, end, NULL);
		if (p == q && p < end)
			break; /* an unterminated comment: the rest is comment */
		space = p > q;
	}
}
