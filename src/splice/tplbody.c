/*
 * tplbody.c - a template's body checked against its header.
 *
 * The body check.  The header says what the body does to memory, how many
 * barriers it runs and which formals it writes; the splicer's verdicts rest
 * on that, so the reader proves it from the body itself.  The body is
 * expanded by the same walker that renders it (expand below), in a mode
 * with no recipe: each formal becomes a dummy register of its type ("%d$3"
 * for %{d[3]}, "%a$" for %{a}: '$' is a name byte in PTX and never one of a
 * formal's, so no name the author wrote is a dummy), each ${EXPR} is
 * checked for its syntax and its parameters and becomes "0", locals and
 * special registers stay as written.  That text, inside a one-function
 * module that declares the dummies, goes to ptx_parse and df_build, the
 * parser and dataflow every module goes through; statement by statement,
 * df_mem_effect says what is loaded and stored where, df_defs what is
 * written.  A message from the parser names a place in that text, which is
 * mapped back to the template's own line and column through the record of
 * the holes whose length changed.
 *
 * Decisions:
 *  - Dummy bindings rather than the recipe's: the template is checked once,
 *    on its own, by every verb that reads it (`recipe check` without
 *    --ptxas included), and the errors are the template's, not a recipe's.
 *    What needs the recipe's values (the numbers, their overflow) is
 *    checked when rendering.
 *  - The contract is one-sided where it is safe to be: a body may do less
 *    than its header declares (a `reads` space it never loads), never more.
 *    The splicer's verdict uses TplBody, so an over-declared header costs
 *    nothing.  An `out` formal never written is an error (its module
 *    register would keep a stale value).  A written `in` formal is the
 *    splicer's to judge (Formal.written): it is harmless when the register
 *    bound to it is dead after the cut (a scaffold's accumulator the cut
 *    overwrites in place), and an error when it is read there.
 *  - Barriers are counted statically: a body with no branch must execute
 *    exactly the declared number; one with branches is only held to
 *    "none under `barriers 0`" (a static count is not an execution count).
 *    A template without a reads, writes or barriers line declares none.
 */
#include "template.h"
#include "tpl_internal.h"

#include "ana/ana.h"
#include "ptx/lex.h"
#include "ptx/opcheck.h"
#include "ptx/parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one-function module the body is parsed in: the prefix declares the
 * formals' dummies, the body follows from its first byte, the suffix
 * closes the function. */
#define CHECK_NAME "template body"

typedef struct {
	Template *t;
	Expand x;     /* its out: the whole module's text */
	size_t body0; /* where the expanded body starts */
	size_t body1; /* ... and ends */
	Module *m;
	Dataflow *df;
	Err *e;
} Check;

/* Template offset of byte `off` of the module's text. */
static size_t tpl_off(const Check *c, size_t off)
{
	if (off < c->body0)
		return 0;
	if (off >= c->body1)
		return c->t->len;
	off -= c->body0;
	size_t delta_at = 0, tpl_at = 0; /* the last hole passed: its ends */
	for (size_t i = 0; i < c->x.holes.n; i++) {
		const Hole *h = &c->x.holes.v[i];
		size_t c0 = h->chk0 - c->body0, c1 = h->chk1 - c->body0;
		if (off < c0)
			break;
		if (off < c1)
			return h->tpl0;
		delta_at = c1;
		tpl_at = h->tpl1;
	}
	return tpl_at + (off - delta_at);
}

static void declare_dummies(StrBuf *sb, const Template *t)
{
	for (size_t i = 0; i < t->formals.n; i++) {
		const Formal *f = &t->formals.v[i];
		sb_adds(sb, "\t.reg ");
		if (f->vec)
			sb_addf(sb, ".v%u ", f->vec);
		sb_addf(sb, "%s ", f->type);
		if (!f->count)
			tpl_dummy_name(sb, f, -1);
		for (uint32_t k = 0; k < f->count; k++) {
			if (k)
				sb_adds(sb, ", ");
			tpl_dummy_name(sb, f, (long)k);
		}
		sb_adds(sb, ";\n");
	}
}

/* The parser's "NAME:LINE:COL: what" (and its source line), said again at
 * the template's own line and column. */
static int parse_error(Check *c, const Err *pe)
{
	const char *msg = err_msg(pe);
	size_t nn = strlen(CHECK_NAME);
	unsigned line = 0, col = 0;
	int used = 0;
	if (strncmp(msg, CHECK_NAME ":", nn + 1) ||
	    sscanf(msg + nn + 1, "%u:%u: %n", &line, &col, &used) != 2 || !used)
		return tpl_error(c->e, c->t, 0, "%s",
		                 strncmp(msg, CHECK_NAME ": ", nn + 2) ? msg
		                                                       : msg + nn + 2);
	const char *what = msg + nn + 1 + used;
	size_t wn = strcspn(what, "\n");
	/* the byte the parser pointed at */
	const char *s = c->x.out->p;
	size_t n = c->x.out->n, off = 0;
	for (unsigned l = 1; l < line && off < n; off++)
		l += s[off] == '\n';
	off += col - 1;
	if (off < c->body0 || off >= c->body1)
		return tpl_error(c->e, c->t, c->t->len,
		                 "%.*s (at the end of the template)", (int)wn, what);
	return tpl_error(c->e, c->t, tpl_off(c, off), "%.*s", (int)wn, what);
}

/* The body's braces balance (as the lexer sees them: not in comments and
 * strings), so that the function the body is parsed in is closed by its
 * own '}' and nothing else. */
static int check_braces(const Check *c)
{
	const char *s = c->x.out->p + c->body0;
	Lexer lx = ptx_lex_init(s, c->body1 - c->body0);
	VEC(size_t) open = {0};
	int rc = 0;
	for (;;) {
		Token k = ptx_lex_next(&lx);
		if (k.kind == TK_END)
			break;
		if (k.kind != TK_PUNCT || (*k.p != '{' && *k.p != '}'))
			continue;
		if (*k.p == '{') {
			VEC_PUSH(open, (size_t)(k.p - c->x.out->p));
		} else if (!open.n) {
			rc =
			    tpl_error(c->e, c->t, tpl_off(c, (size_t)(k.p - c->x.out->p)),
			              "this '}' closes no '{' of the template");
			break;
		} else
			open.n--;
	}
	if (!rc && open.n)
		rc = tpl_error(c->e, c->t, tpl_off(c, open.v[open.n - 1]),
		               "this '{' is not closed in the template");
	VEC_FREE(open);
	return rc;
}

static int stmt_err(const Check *c, const Stmt *s, const char *fmt, ...)
    PRINTF_LIKE(3, 4);
static int stmt_err(const Check *c, const Stmt *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tpl_error(c->e, c->t, tpl_off(c, s->off), "%s", buf);
}

static uint32_t tpl_line(const Check *c, const Stmt *s)
{
	unsigned line, col;
	err_line_col(c->t->text, c->t->len, tpl_off(c, s->off), &line, &col);
	return line;
}

/* Every statement's opcode is an instruction of the PTX ISA, its modifiers
 * words of the ISA's (ptx/opcheck.h): a misspelling is the template's error
 * at its line and column, with the nearest spelling, not ptxas's later. */
static int check_opcodes(const Check *c, const Func *f)
{
	for (uint32_t i = 0; i < f->nstmt; i++) {
		const Stmt *s = func_stmt(c->m, f, i);
		Str op = stmt_opcode(c->m, s);
		OpProblem pr;
		if (ptx_opcode_check(op.p, op.n, &pr))
			return tpl_error(c->e, c->t, tpl_off(c, s->off + s->opdelta + pr.off), "%s",
			                 pr.msg);
	}
	return 0;
}

/* What each statement does to memory, against the reads, writes and
 * barriers lines; the counts into t->body. */
static int check_effects(Check *c, const Func *f)
{
	Template *t = c->t;
	TplBody *b = &t->body;
	bool branches = f->nlabel > 0;
	const Stmt *first_barrier = NULL;
	for (uint32_t i = 0; i < f->nstmt; i++) {
		const Stmt *s = func_stmt(c->m, f, i);
		Str op = stmt_opcode(c->m, s);
		if (s->op == OP_BRA || s->op == OP_BRX || s->op == OP_CALL ||
		    s->op == OP_RET || s->op == OP_EXIT)
			branches = true;
		MemEffect me = df_mem_effect(c->df, i);
		if (me.flags & ME_STORE) {
			if (!(t->writes & (1u << me.store)))
				return stmt_err(c, s,
				                "'%.*s' writes %s memory, and the "
				                "header's '//! writes' does "
				                "not list %s",
				                (int)op.n, op.p, space_name(me.store),
				                space_name(me.store));
			if (!b->stores[me.store]++)
				b->store_line[me.store] = tpl_line(c, s);
		}
		if (me.flags & ME_LOAD) {
			if (!(t->reads & (1u << me.load)))
				return stmt_err(c, s,
				                "'%.*s' reads %s memory, and the "
				                "header's '//! reads' does "
				                "not list %s",
				                (int)op.n, op.p, space_name(me.load),
				                space_name(me.load));
			if (!b->loads[me.load]++)
				b->load_line[me.load] = tpl_line(c, s);
		}
		if ((me.flags & ME_ATOMIC) && !b->atomics++)
			b->atomic_line = tpl_line(c, s);
		if (me.flags & ME_BARRIER) {
			if (t->barriers <= 0)
				return stmt_err(c, s,
				                "'%.*s' is a barrier, and the header %s",
				                (int)op.n, op.p,
				                t->barriers == 0
				                    ? "says '//! barriers 0'"
				                    : "declares none ('//! barriers N')");
			if (!b->barriers++) {
				b->barrier_line = tpl_line(c, s);
				first_barrier = s;
			}
		}
	}
	if (!branches && t->barriers > 0 && (int)b->barriers != t->barriers) {
		if (first_barrier)
			return stmt_err(
			    c, first_barrier,
			    "the header says '//! barriers %d', and the body (with no "
			    "branch) executes %u",
			    t->barriers, b->barriers);
		return tpl_error(
		    c->e, t, 0,
		    "the header says '//! barriers %d', and the body executes none",
		    t->barriers);
	}
	return 0;
}

/* Every element of every out formal is written.  Which elements the body
 * writes is kept in each formal (Formal.written): for an in formal that is
 * the splicer's to judge, since only the module says whether the register
 * bound to it is read after the cut. */
static int check_formals(Check *c, const Func *f)
{
	Template *t = c->t;
	uint32_t nr = df_nregs(c->df);
	uint32_t *writer = xmalloc((nr ? nr : 1) * sizeof *writer);
	for (uint32_t i = 0; i < nr; i++)
		writer[i] = UINT32_MAX;
	for (uint32_t i = f->nstmt; i-- > 0;) {
		uint32_t n;
		const uint32_t *d = df_defs(c->df, i, &n);
		for (uint32_t k = 0; k < n; k++)
			writer[d[k]] = i; /* the first statement that writes it */
	}
	int rc = 0;
	StrBuf nm = STRBUF_INIT;
	for (size_t i = 0; i < t->formals.n && !rc; i++) {
		Formal *fm = &t->formals.v[i];
		uint32_t n = fm->count ? fm->count : 1;
		fm->written = xcalloc(n, 1);
		for (uint32_t k = 0; k < n && !rc; k++) {
			sb_reset(&nm);
			tpl_dummy_name(&nm, fm, fm->count ? (long)k : -1);
			int64_t id = df_reg_find(c->df, str_of(nm.p, nm.n));
			uint32_t w = id < 0 ? UINT32_MAX : writer[id];
			if (w != UINT32_MAX) {
				fm->written[k] = 1;
				if (!fm->write_line)
					fm->write_line =
					    tpl_line(c, func_stmt(c->m, f, w));
				continue;
			}
			if (fm->dir != FM_OUT)
				continue;
			char el[24] = "";
			if (fm->count)
				snprintf(el, sizeof el, "[%u]", k);
			rc = tpl_error(
			    c->e, t, fm->off,
			    "out formal '%s%s' is never written by the template "
			    "(no statement "
			    "has '%%{%s%s}' as its destination)",
			    fm->name, el, fm->name, el);
		}
	}
	sb_release(&nm);
	free(writer);
	return rc;
}

/* Parses the body with the project's parser and checks it against the
 * header (the essay at the top says how). */
int tpl_check_body(Template *t, Err *e)
{
	StrBuf text = STRBUF_INIT;
	Check c = {t, {t, NULL, NULL, &text, {0}, e}, 0, 0, NULL, NULL, e};
	sb_adds(&text, ".version 8.7\n.target sm_90a\n.address_size 64\n"
	               ".visible .entry d4r_template()\n{\n");
	declare_dummies(&text, t);
	c.body0 = text.n;
	int rc = -1;
	if (tpl_expand(&c.x) < 0)
		goto out;
	c.body1 = text.n;
	sb_adds(&text, "\n}\n");
	if (check_braces(&c) < 0)
		goto out;
	Err pe = ERR_INIT;
	c.m = ptx_parse(CHECK_NAME, text.p, text.n, &pe);
	if (!c.m) {
		parse_error(&c, &pe);
		err_release(&pe);
		goto out;
	}
	err_release(&pe);
	const Func *f = c.m->funcs.n ? &c.m->funcs.v[0] : NULL;
	if (c.m->funcs.n != 1 || f->body_close != c.body1 + 1) {
		/* a '}' of the body closed the function */
		tpl_error(e, t, tpl_off(&c, f ? f->body_close : c.body1),
		          "this '}' closes no '{' of the template");
		goto out;
	}
	c.df = df_build(c.m, f, e);
	if (!c.df)
		goto out;
	if (check_opcodes(&c, f) < 0 || check_effects(&c, f) < 0 || check_formals(&c, f) < 0)
		goto out;
	rc = 0;
out:
	if (c.df)
		df_free(c.df);
	if (c.m)
		mod_free(c.m);
	VEC_FREE(c.x.holes);
	sb_release(&text);
	return rc;
}
