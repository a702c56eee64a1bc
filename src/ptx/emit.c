/*
 * emit.c - lossless emission with edits, and the model's self-check.
 *
 * Emission walks the module's items in order: the bytes between items
 * (whitespace, comments) and inside them are copied from the source, except
 * where an edit replaces a range.  Because edits name byte ranges of the
 * source, a splice changes exactly the statements it names and nothing else.
 */
#include "emit.h"

#include "lex.h"

#include <stdlib.h>
#include <string.h>

static int cmp_edit(const void *a, const void *b)
{
	const Edit *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* insertions before replacements at the same offset; otherwise keep order */
	if ((x->len == 0) != (y->len == 0))
		return x->len == 0 ? -1 : 1;
	return x < y ? -1 : x > y;
}

int ptx_emit_to(const Module *m, Edit *edits, size_t nedits, EmitSink sink, void *ctx, Err *e)
{
	if (nedits > 1)
		qsort(edits, nedits, sizeof(Edit), cmp_edit);
	size_t at = 0, k = 0;
	/* Copy item by item so the output is assembled from the model's spans;
	 * edits are applied inside whichever span they fall in. */
	for (size_t i = 0; i <= m->items.n; i++) {
		size_t upto = i < m->items.n ? m->items.v[i].text.off + m->items.v[i].text.len : m->len;
		while (k < nedits && edits[k].off <= upto &&
		       (edits[k].off < upto || i == m->items.n || edits[k].len == 0)) {
			const Edit *ed = &edits[k];
			if (ed->off < at)
				return err_set(e, "%s: overlapping edits at byte %u", m->name, ed->off);
			if ((size_t)ed->off + ed->len > m->len)
				return err_set(e, "%s: edit at byte %u runs past the end of the file",
				               m->name, ed->off);
			if (sink(ctx, m->src + at, ed->off - at) < 0 || sink(ctx, ed->text, ed->tlen) < 0)
				return err_set(e, "%s: cannot write the emitted module", m->name);
			at = ed->off + ed->len;
			k++;
		}
		if (upto > at) {
			if (sink(ctx, m->src + at, upto - at) < 0)
				return err_set(e, "%s: cannot write the emitted module", m->name);
			at = upto;
		}
	}
	if (k < nedits)
		return err_set(e, "%s: edit at byte %u is outside the file", m->name, edits[k].off);
	return 0;
}

static int to_strbuf(void *ctx, const char *p, size_t n)
{
	sb_addn(ctx, p, n);
	return 0;
}

int ptx_emit(const Module *m, Edit *edits, size_t nedits, StrBuf *out, Err *e)
{
	sb_grow(out, m->len + 1024);
	return ptx_emit_to(m, edits, nedits, to_strbuf, out, e);
}

static int only_trivia(const char *p, const char *end)
{
	return ptx_lex_trivia(p, end, NULL) == end;
}

/* The statement's source with whitespace and comments removed (strings
 * keep their spaces). */
static void compact_source(const Module *m, const Stmt *s, StrBuf *out)
{
	const char *p = m->src + s->off, *end = p + s->len;
	while (p < end) {
		const char *q = ptx_lex_solid(p, end);
		sb_addn(out, p, (size_t)(q - p));
		p = ptx_lex_trivia(q, end, NULL);
		if (p == q && p < end)
			break; /* an unterminated comment: the rest is comment */
	}
}

/* The scopes of fn: scope 0 is the body; each other one opens after the
 * one before it, lies inside its parent one level deeper, and holds
 * exactly the statements between its braces.  Returns the offset of the
 * first scope that breaks this, or UINT32_MAX. */
static uint32_t bad_scope(const Module *m, const Func *fn)
{
	if (fn->flags & FNF_DECL)
		return fn->nscope ? fn->text.off : UINT32_MAX;
	const Scope *s0 = fn->nscope ? func_scope(m, fn, 0) : NULL;
	if (!s0 || s0->open != fn->body_open || s0->close != fn->body_close ||
	    s0->depth != 1 || s0->parent != 0 || s0->stmt0 != 0 || s0->nstmt != fn->nstmt)
		return fn->body_open;
	for (uint32_t k = 1; k < fn->nscope; k++) {
		const Scope *sc = func_scope(m, fn, k);
		const Scope *up = func_scope(m, fn, sc->parent);
		uint32_t end = sc->stmt0 + sc->nstmt;
		if (sc->parent >= k || sc->open <= func_scope(m, fn, k - 1)->open ||
		    sc->open <= up->open || sc->close >= up->close ||
		    sc->close <= sc->open || m->src[sc->open] != '{' ||
		    m->src[sc->close] != '}' || sc->depth != up->depth + 1 ||
		    sc->stmt0 < up->stmt0 || end > up->stmt0 + up->nstmt)
			return sc->open;
		if (sc->nstmt && (func_stmt(m, fn, sc->stmt0)->off < sc->open ||
		                  func_stmt(m, fn, end - 1)->off > sc->close))
			return sc->open;
		if ((sc->stmt0 > 0 && func_stmt(m, fn, sc->stmt0 - 1)->off > sc->open) ||
		    (end < fn->nstmt && func_stmt(m, fn, end)->off < sc->close))
			return sc->open;
	}
	return UINT32_MAX;
}

int ptx_verify(const Module *m, Err *e)
{
	size_t at = 0;
	for (size_t i = 0; i < m->items.n; i++) {
		const Item *it = &m->items.v[i];
		if (it->text.off < at || !only_trivia(m->src + at, m->src + it->text.off))
			return err_at(e, m->name, m->src, m->len, at,
			              "bytes before this item are not whitespace or comments");
		at = it->text.off + it->text.len;
	}
	if (!only_trivia(m->src + at, m->src + m->len))
		return err_at(e, m->name, m->src, m->len, at,
		              "bytes after the last item are not whitespace or comments");
	StrBuf a = STRBUF_INIT, b = STRBUF_INIT;
	int rc = 0;
	for (size_t f = 0; f < m->funcs.n && !rc; f++) {
		const Func *fn = &m->funcs.v[f];
		uint32_t bad = bad_scope(m, fn);
		if (bad != UINT32_MAX) {
			rc = err_at(e, m->name, m->src, m->len, bad,
			            "the scope record of this '{' does not match it");
			break;
		}
		uint32_t prev = fn->body_open;
		for (uint32_t i = 0; i < fn->nstmt; i++) {
			const Stmt *s = func_stmt(m, fn, i);
			if (s->off <= prev || s->off + s->len > fn->body_close) {
				rc = err_at(e, m->name, m->src, m->len, s->off,
				            "statement s%u lies outside its function body or overlaps", i);
				break;
			}
			prev = s->off + s->len - 1;
			sb_reset(&a);
			sb_reset(&b);
			stmt_render_compact(m, s, &a);
			compact_source(m, s, &b);
			if (a.n != b.n || memcmp(a.p, b.p, a.n) != 0) {
				rc = err_at(e, m->name, m->src, m->len, s->off,
				            "statement s%u re-renders as '%.200s'", i, a.p);
				break;
			}
		}
	}
	sb_release(&a);
	sb_release(&b);
	return rc;
}
