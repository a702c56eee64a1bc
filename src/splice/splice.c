/*
 * splice.c - recipe + template -> one edit -> the spliced module.
 *
 * The order of the work is the order of the checks a user wants to see
 * fail first:
 *
 *   1. the function and the cut: phase N (ana_phase_range), with its epilogue,
 *      or an explicit statement range;
 *   2. the guards: mma count, sha256 of the cut's normalised text, the
 *      first/last anchors.  A stale recipe stops here, showing what it
 *      expected and what the module holds, so the wrong range is never
 *      spliced;
 *   3. the shape of the range: balanced braces, labels, loops (a range may
 *      hold whole loops, not part of one and code outside it);
 *   4. the cut interface (df_cut): live-in, live-out, memory effects;
 *   5. the template against the interface (fit.c): every live-out bound to an
 *      output, inputs defined before the cut, types and widths, parameters,
 *      memory effects: the cut's, against what the template's body does
 *      (a read/write dependency refuses the cut);
 *   6. fresh names: a register prefix no name of the function starts with
 *      (func_fresh_prefix);
 *   7. rendering the region with its line map, and ptx_emit with that one
 *      edit.  Bytes outside the region are the emitter's verbatim copy.
 *
 * The built-in templates need no file: "identity" re-emits the cut's own
 * statements, renaming every register that is neither live-in nor live-out
 * (a temporary of the cut) to a fresh name and binding the live registers
 * to themselves, so it exercises the whole mechanism on any range of any
 * module; "perturb" is identity plus one change that must alter the frame
 * (1.0 added to the first D register of the cut's first mma, right after
 * it; for a wgmma.mma_async, whose accumulators are in flight until a
 * wgmma.wait_group completes it, after that wait in the cut, or refused
 * with the reason when the cut holds none; in a cut that holds the wgmma
 * loop, the wait after the loop), for the GPU sensitivity test.
 */
#include "splice.h"
#include "splice_internal.h"

#include "ana/ana.h"
#include "base/file.h"
#include "base/layout.h"
#include "base/sha256.h"
#include "ptx/emit.h"
#include "template.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------- */

static const Stmt *st(const Module *m, const Func *f, uint32_t i)
{
	return func_stmt(m, f, i);
}

void splice_cut_text(const Module *m, const Func *f, uint32_t first, uint32_t last, StrBuf *out)
{
	for (uint32_t i = first; i <= last; i++) {
		if (i > first)
			sb_addc(out, '\n');
		stmt_normalized(m, st(m, f, i), out);
	}
}

void splice_stmt_desc(const Module *m, const Func *f, uint32_t i, StrBuf *out)
{
	StrBuf t = STRBUF_INIT;
	stmt_normalized(m, st(m, f, i), &t);
	sb_addf(out, "s%u (line %u) '%s'", i, st(m, f, i)->line, t.p ? t.p : "");
	sb_release(&t);
}

/* ---- the region under construction, with its line map --------------------- */

typedef struct {
	StrBuf text;
	VEC(LineMapEntry) map;
} Region;

/* Appends s[0..n) whose first byte sits on source line `line` of `kind`
 * (LM_GENERATED: line ignored).  The map gets an entry for each line that
 * starts in this text; the first line of the region starts with the first
 * append. */
static void reg_add(Region *r, const char *s, size_t n, uint8_t kind, uint32_t line)
{
	if (!n)
		return;
	if (!r->map.n || r->text.p[r->text.n - 1] == '\n') {
		LineMapEntry le = {kind == LM_GENERATED ? 0 : line, kind};
		VEC_PUSH(r->map, le);
	} else if (kind != LM_GENERATED && r->map.v[r->map.n - 1].kind == LM_GENERATED) {
		/* a generated indent before source text: the line is the source's */
		size_t k = r->text.n;
		while (k && (r->text.p[k - 1] == ' ' || r->text.p[k - 1] == '\t'))
			k--;
		if (!k || r->text.p[k - 1] == '\n') {
			r->map.v[r->map.n - 1].kind = kind;
			r->map.v[r->map.n - 1].line = line;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' && i + 1 < n) {
			LineMapEntry le = {kind == LM_GENERATED ? 0 : ++line, kind};
			VEC_PUSH(r->map, le);
		} else if (s[i] == '\n')
			line++;
	sb_addn(&r->text, s, n);
}

static void reg_adds(Region *r, const char *s)
{
	reg_add(r, s, strlen(s), LM_GENERATED, 0);
}

/* ---- 1. the cut -------------------------------------------------------------- */

/* The cut of recipe r in f: its explicit statement range, or phase N (with
 * its epilogue if the recipe says so) as src/ana defines a phase, found
 * from the statement flags: no dataflow is needed for a range. */
static int resolve_cut(const Module *m, const Func *f, const Recipe *r, uint32_t *first,
                       uint32_t *last, Err *e)
{
	const char *fname = mod_str(m, f->name).p;
	int fl = (int)f->name.len;
	if (r->cut == CUT_STMTS) {
		if (r->last >= f->nstmt)
			return err_set(e, "%s: cut s%u..s%u: '%.*s' has %u statements (s0..s%u)", r->path,
			               r->first, r->last, fl, fname, f->nstmt, f->nstmt ? f->nstmt - 1 : 0);
		*first = r->first;
		*last = r->last;
		return 0;
	}
	size_t n = 0;
	if (ana_phase_range(m, f, 0, r->phase, r->with_epilogue, first, last, &n) < 0) {
		char *who = r->layer ? xstrdup(r->layer) : xstrndup(mod_str(m, f->name).p, mod_str(m, f->name).n);
		ana_phase_missing(r->path, r->phase, who, n, e);
		free(who);
		return -1;
	}
	return 0;
}

/* ---- 2. guards --------------------------------------------------------------- */

/* s as the anchored regular expression that matches it alone. */
static void anchor_escape(const char *s, StrBuf *out)
{
	sb_addc(out, '^');
	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}", *s))
			sb_addc(out, '\\');
		sb_addc(out, *s);
	}
	sb_addc(out, '$');
}

void splice_guards_json(const Module *m, const Func *f, uint32_t first, uint32_t last,
                        cJSON *guards)
{
	StrBuf txt = STRBUF_INIT, re = STRBUF_INIT;
	splice_cut_text(m, f, first, last, &txt);
	char hex[65];
	sha256_hex(txt.p ? txt.p : "", txt.n, hex);
	cJSON_AddNumberToObject(guards, "mma", ana_mma_count(m, f, first, last));
	cJSON_AddStringToObject(guards, "sha256", hex);
	for (int k = 0; k < 2; k++) {
		sb_reset(&txt);
		sb_reset(&re);
		stmt_normalized(m, st(m, f, k ? last : first), &txt);
		anchor_escape(txt.p ? txt.p : "", &re);
		cJSON_AddStringToObject(guards, k ? "last" : "first", re.p);
	}
	sb_release(&txt);
	sb_release(&re);
}

static int check_guards(const Module *m, const Func *f, const Recipe *r, uint32_t first,
                        uint32_t last, SpliceResult *res, Err *e)
{
	StrBuf text = STRBUF_INIT, bad = STRBUF_INIT, fs = STRBUF_INIT, ls = STRBUF_INIT;
	splice_cut_text(m, f, first, last, &text);
	sha256_hex(text.p ? text.p : "", text.n, res->sha256);
	uint32_t mma = ana_mma_count(m, f, first, last);
	res->mma = mma;
	stmt_normalized(m, st(m, f, first), &fs);
	stmt_normalized(m, st(m, f, last), &ls);
	if (r->has_mma && r->mma != mma)
		sb_addf(&bad, "\n  mma:    expected %u, found %u", r->mma, mma);
	if (r->sha256 && strcmp(r->sha256, res->sha256))
		sb_addf(&bad, "\n  sha256: expected %s\n          found    %s", r->sha256, res->sha256);
	/* An anchor that cannot be evaluated makes the recipe invalid, not
	 * stale: that message stands alone. */
	int rc = 0, okf = 0, okl = 0;
	if ((okf = rcp_guard_match(r, false, fs.p ? fs.p : "", fs.n, e)) < 0 ||
	    (okl = rcp_guard_match(r, true, ls.p ? ls.p : "", ls.n, e)) < 0) {
		rc = -1;
		goto out;
	}
	if (r->first_re && !okf)
		sb_addf(&bad, "\n  first:  expected /%s/\n          found    '%s'", r->first_re,
		        fs.p ? fs.p : "");
	if (r->last_re && !okl)
		sb_addf(&bad, "\n  last:   expected /%s/\n          found    '%s'", r->last_re,
		        ls.p ? ls.p : "");
	if (bad.n) {
		err_set(e,
		        "%s: stale recipe: the cut s%u..s%u (lines %u..%u) of '%.*s' does not match its "
		        "guards%s\n  the cut holds %u statements, %u mma\n  first statement: s%u '%s'\n"
		        "  last statement:  s%u '%s'",
		        r->path, first, last, st(m, f, first)->line, st(m, f, last)->line,
		        (int)f->name.len, mod_str(m, f->name).p, bad.p ? bad.p : "", last - first + 1, mma,
		        first, fs.p ? fs.p : "", last, ls.p ? ls.p : "");
		rc = -1;
	}
out:
	sb_release(&text);
	sb_release(&bad);
	sb_release(&fs);
	sb_release(&ls);
	return rc;
}

/* guards.reloads: the loads the template issues again are the ones the
 * recipe was written against (their text), and loading them again at the
 * cut still reads what they read (ana_reload_check), so a reload is never
 * spliced on facts that no longer hold. */
static int check_reloads(Dataflow *df, const Recipe *r, uint32_t first, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	StrBuf text = STRBUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < r->reloads.n && !rc; i++) {
		if (r->reloads.v[i] >= first)
			rc = err_set(e, "%s: 'guards.reloads': s%u is not before the cut (s%u)", r->path,
			             r->reloads.v[i], first);
		else {
			if (i)
				sb_addc(&text, '\n');
			stmt_normalized(m, st(m, f, r->reloads.v[i]), &text);
		}
	}
	char hex[65];
	sha256_hex(text.p ? text.p : "", text.n, hex);
	if (!rc && strcmp(hex, r->reloads_sha256)) {
		StrBuf one = STRBUF_INIT;
		splice_stmt_desc(m, f, r->reloads.v[0], &one);
		rc = err_set(e, "%s: stale recipe: the loads its template issues again (guards.reloads) "
		             "are not the module's\n  sha256: expected %s\n          found    %s\n"
		             "  first of them: %s", r->path, r->reloads_sha256, hex, one.p);
		sb_release(&one);
	}
	for (size_t i = 0; i < r->reloads.n && !rc; i++) {
		OpdLoad l;
		if (ana_reload_check(df, r->reloads.v[i], first, &l) < 0 || !l.reload_safe) {
			StrBuf one = STRBUF_INIT;
			splice_stmt_desc(m, f, r->reloads.v[i], &one);
			rc = err_set(e, "%s: 'guards.reloads': loading %s again at the cut (s%u) is not "
			             "safe: %s", r->path, one.p, first, l.why ? l.why : "it is not a load");
			if (l.blocker >= 0) {
				sb_reset(&one);
				splice_stmt_desc(m, f, (uint32_t)l.blocker, &one);
				err_note(e, "  at %s", one.p);
			}
			sb_release(&one);
		}
		VEC_FREE(l.checked);
	}
	sb_release(&text);
	return rc;
}

/* ---- 3. the shape of the range ---------------------------------------------- */

/* The cut's bytes must not cross a '{ }' scope boundary: a cut that starts
 * inside a scope and ends outside it (or the other way round) cannot be
 * replaced.  The scopes come from the model; the line named is that of the
 * first '}' in the cut closing a scope opened before it, else the cut's end
 * (a scope opened inside it is still open there). */
static int check_braces(const Module *m, const Func *f, uint32_t first, uint32_t last,
                        const char *rpath, Err *e)
{
	const Stmt *a = st(m, f, first), *b = st(m, f, last);
	uint32_t lo = a->off, hi = b->off + b->len;
	uint32_t at = UINT32_MAX;
	bool open_inside = false;
	for (uint32_t k = 1; k < f->nscope; k++) {
		const Scope *sc = func_scope(m, f, k);
		if (sc->open < lo && sc->close >= lo && sc->close < hi)
			at = MIN(at, sc->close);
		else if (sc->open >= lo && sc->open < hi && sc->close >= hi)
			open_inside = true;
	}
	if (at == UINT32_MAX && !open_inside)
		return 0;
	unsigned line, col;
	err_line_col(m->src, m->len, at != UINT32_MAX ? at : hi, &line, &col);
	return err_set(e,
	               "%s: the cut s%u..s%u crosses a '{ }' scope boundary (line %u): "
	               "choose a range inside one scope",
	               rpath, first, last, line);
}

/* A cut may hold whole loops, or lie inside one loop body, but not hold
 * part of a loop and code outside it: the replaced text would hold a back
 * edge without its header or the other way round.  The message names the
 * loop's header and back edge as MODULE:LINE:COL. */
static int check_loops(Dataflow *df, uint32_t first, uint32_t last, const Recipe *r,
                       Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	uint32_t in = 0, out = 0;
	int64_t k = df_cut_loop_split(df, first, last, &in, &out);
	if (k < 0)
		return 0;
	const DfLoop *lp;
	(void)df_loops(df, &lp);
	const DfLoop *l = &lp[k];
	StrBuf hd = STRBUF_INIT, bk = STRBUF_INIT;
	stmt_normalized(m, st(m, f, l->header), &hd);
	stmt_normalized(m, st(m, f, l->back), &bk);
	const char *mname = m->name ? m->name : "?";
	unsigned hl, hc, bl, bc;
	const Label *lab = NULL;
	for (uint32_t i = 0; i < f->nlabel && !lab; i++)
		if (m->labels.v[f->label0 + i].stmt == l->header)
			lab = &m->labels.v[f->label0 + i];
	err_line_col(m->src, m->len, lab ? lab->name.off : st(m, f, l->header)->off, &hl,
	             &hc);
	err_line_col(m->src, m->len, st(m, f, l->back)->off, &bl, &bc);
	err_set(
	    e,
	    "%s: %s: the cut s%u..s%u cuts a loop in two: it holds s%u of the loop "
	    "s%u..s%u but not s%u\n"
	    "  %s:%u:%u: the loop's header%s%.*s%s, first statement s%u '%s'\n"
	    "  %s:%u:%u: the loop's back edge s%u '%s'\n"
	    "  (cut the whole loop, with the wait after it that completes its wgmma "
	    "groups: recipe new --phase N --through-wait; or a range inside its body)",
	    r->path, r->cut == CUT_STMTS ? "cut.stmts" : "cut", first, last, in, l->lo,
	    l->hi, out, mname, hl, hc, lab ? " '" : "", lab ? (int)lab->name.len : 0,
	    lab ? mod_str(m, lab->name).p : "", lab ? "'" : "", l->header,
	    hd.p ? hd.p : "", mname, bl, bc, l->back, bk.p ? bk.p : "");
	sb_release(&hd);
	sb_release(&bk);
	return -1;
}

/* Labels strictly inside the range (a label before the first statement is
 * outside the replaced bytes). */
static const Label *label_inside(const Module *m, const Func *f, uint32_t first, uint32_t last)
{
	for (uint32_t i = 0; i < f->nlabel; i++) {
		const Label *l = &m->labels.v[f->label0 + i];
		if (l->stmt > first && l->stmt <= last)
			return l;
	}
	return NULL;
}

/* ---- 4. is df_cut (src/ana); 5., the template against it, is fit.c -------- */

/* ---- 7. rendering ----------------------------------------------------------------- */

typedef struct {
	uint32_t off, len;
	const char *name; /* new text */
	size_t n;
} Repl;

/* The operand index range [lo, hi) of statement s (guard included). */
static void stmt_opd_range(const Module *m, const Stmt *s, uint32_t *lo, uint32_t *hi)
{
	uint32_t i = s->opd;
	unsigned cnt = s->nopd + ((s->flags & STMT_GUARD) ? 1 : 0);
	for (unsigned k = 0; k < cnt; k++)
		i = opd_next(m, i);
	*lo = s->opd;
	*hi = i;
}

static bool leaf(const Operand *o)
{
	return o->kind == OPD_REG || o->kind == OPD_IDENT;
}

/* The D type of an mma opcode: its first component that is a type. */
static const char *mma_dtype(const Module *m, const Stmt *s)
{
	Str op = stmt_opcode(m, s);
	static const char *const types[] = {"f16", "f32", "s32", "f64", "bf16"};
	const char *p = op.p, *end = op.p + op.n;
	while (p < end) {
		const char *q = memchr(p, '.', (size_t)(end - p));
		if (!q)
			q = end;
		for (size_t i = 0; i < ARRAY_SIZE(types); i++)
			if ((size_t)(q - p) == strlen(types[i]) && !memcmp(p, types[i], (size_t)(q - p)))
				return types[i];
		p = q + 1;
	}
	return NULL;
}

/* Names declared inside the replaced bytes (scoped .reg lines of the cut):
 * those travel with the copied text and are not renamed. */
static bool declared_inside(const Module *m, const Func *f, size_t lo, size_t hi, Str name)
{
	for (uint32_t i = 0; i < f->nreg; i++) {
		const RegDecl *d = &m->regs.v[f->reg0 + i];
		if (d->decl.off < lo || d->decl.off >= hi)
			continue;
		Str dn = mod_str(m, d->name);
		if (!d->range ? str_eq(dn, name)
		              : (name.n > dn.n && !memcmp(name.p, dn.p, dn.n)))
			return true;
	}
	return false;
}

typedef struct {
	uint32_t *ids;
	size_t n;
} IdSet;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static bool idset_has(const IdSet *s, uint32_t id)
{
	return s->n && bsearch(&id, s->ids, s->n, sizeof(uint32_t), cmp_u32);
}

/*
 * Where perturb may change the first D register `reg` of the wgmma.mma_async
 * at statement i0: after a wgmma.wait_group of the cut that completes the
 * groups of every wgmma.mma_async writing reg, on every path to it (the
 * groups in flight, src/ana/groups.c: through a loop's back edge too, so a
 * cut that holds a wgmma loop and the wait after it is perturbed after
 * that wait).  The PTX ISA leaves touching an accumulator of a wgmma in
 * flight undefined, and ptxas injects waits around such code.  Returns the
 * wait's statement, or -1.
 */
static int64_t wgmma_perturb_after(Dataflow *df, const CutInterface *cut, uint32_t i0,
                                   uint32_t reg)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	VEC(uint32_t) w = {0};
	for (uint32_t i = 0; i < f->nstmt; i++) {
		const Stmt *s = st(m, f, i);
		if (s->op == OP_WGMMA && stmt_opcode_is(m, s, "wgmma.mma_async") &&
		    df_stmt_defines(df, i, reg, NULL))
			VEC_PUSH(w, i);
	}
	WgGroups *g = groups_build(df, w.v, w.n);
	int64_t at = groups_completing_wait(g, i0, cut->last);
	groups_free(g);
	VEC_FREE(w);
	return at;
}

/* The built-in templates: the cut's own text, temporaries renamed. */
static int render_builtin(Dataflow *df, const CutInterface *cut, bool perturb,
                          const char *prefix, bool scoped, Region *rg, SpliceResult *res, Err *e)
{
	const Module *m = df_module(df);
	const Func *f = df_func(df);
	const Stmt *s0 = st(m, f, cut->first), *s1 = st(m, f, cut->last);
	size_t lo = s0->off, hi = (size_t)s1->off + s1->len;

	/* the temporaries */
	VEC(uint32_t) tmp = {0};
	for (uint32_t i = cut->first; i <= cut->last; i++) {
		uint32_t a, b;
		stmt_opd_range(m, st(m, f, i), &a, &b);
		for (uint32_t k = a; k < b; k++) {
			if (!leaf(&m->opds.v[k]))
				continue;
			int64_t id = df_opd_reg(df, k);
			if (id < 0)
				continue;
			const RegInfo *ri = df_reg(df, (uint32_t)id);
			if (ri->special || !ri->type.n ||
			    splice_cut_has(cut->live_in.v, cut->live_in.n, (uint32_t)id) ||
			    splice_cut_has(cut->live_out.v, cut->live_out.n, (uint32_t)id) ||
			    declared_inside(m, f, lo, hi, ri->name))
				continue;
			VEC_PUSH(tmp, (uint32_t)id);
		}
	}
	if (tmp.n)
		qsort(tmp.v, tmp.n, sizeof(uint32_t), cmp_u32);
	size_t u = 0;
	for (size_t i = 0; i < tmp.n; i++)
		if (!u || tmp.v[u - 1] != tmp.v[i])
			tmp.v[u++] = tmp.v[i];
	tmp.n = u;
	IdSet set = {tmp.v, tmp.n};
	res->n_renamed = (uint32_t)tmp.n;

	/* declarations, grouped by type, 8 names a line */
	bool *done = xcalloc(tmp.n ? tmp.n : 1, 1);
	for (size_t i = 0; i < tmp.n; i++) {
		if (done[i])
			continue;
		const RegInfo *ri = df_reg(df, tmp.v[i]);
		StrBuf ln = STRBUF_INIT;
		unsigned k = 0;
		for (size_t j = i; j < tmp.n; j++) {
			const RegInfo *rj = df_reg(df, tmp.v[j]);
			if (done[j] || rj->vec != ri->vec || !str_eq(rj->type, ri->type))
				continue;
			done[j] = 1;
			if (k % 8 == 0) {
				if (k)
					sb_adds(&ln, ";\n");
				sb_adds(&ln, "\t.reg ");
				if (ri->vec)
					sb_addf(&ln, ".v%u ", ri->vec);
				sb_addf(&ln, "%.*s ", (int)ri->type.n, ri->type.p);
			} else
				sb_adds(&ln, ", ");
			Str nm = rj->name;
			if (nm.n && nm.p[0] == '%')
				nm.p++, nm.n--;
			sb_addf(&ln, "%s%.*s", prefix, (int)nm.n, nm.p);
			k++;
		}
		sb_adds(&ln, ";\n");
		reg_adds(rg, ln.p);
		sb_release(&ln);
	}
	free(done);
	reg_adds(rg, "\t");

	/* the text, with replacements */
	VEC(Repl) rp = {0};
	StrBuf names = STRBUF_INIT; /* holds the new names; offsets into it */
	VEC(size_t) name_off = {0};
	bool perturbed = false;
	char pert[320] = "";
	/* perturb changes the cut's first mma: right after it, or for a wgmma
	 * after the wait that completes it (pert_after) */
	int64_t pert_at = perturb ? ana_mma_first(m, f, cut->first, cut->last) : -1;
	int64_t pert_after = pert_at;
	for (uint32_t i = cut->first; i <= cut->last; i++) {
		const Stmt *s = st(m, f, i);
		uint32_t a, b;
		stmt_opd_range(m, s, &a, &b);
		for (uint32_t k = a; k < b; k++) {
			const Operand *o = &m->opds.v[k];
			if (!leaf(o))
				continue;
			int64_t id = df_opd_reg(df, k);
			if (id < 0 || !idset_has(&set, (uint32_t)id))
				continue;
			const RegInfo *ri = df_reg(df, (uint32_t)id);
			if (o->len < ri->name.n || memcmp(m->src + o->off, ri->name.p, ri->name.n))
				continue; /* the operand does not spell the name: leave it */
			Str nm = ri->name;
			if (nm.n && nm.p[0] == '%')
				nm.p++, nm.n--;
			VEC_PUSH(name_off, names.n);
			sb_addf(&names, "%s%.*s", prefix, (int)nm.n, nm.p);
			Repl r = {o->off, (uint32_t)ri->name.n, NULL, names.n - name_off.v[name_off.n - 1]};
			VEC_PUSH(rp, r);
		}
		if ((int64_t)i == pert_at) {
			/* add 1.0 to the first D register, right after the mma, on its line */
			const Operand *d = stmt_opd(m, s, 0);
			uint32_t di = stmt_opd_index(m, s, 0);
			if (d->kind == OPD_VEC)
				di++;
			int64_t id = df_opd_reg(df, di);
			const char *dt = mma_dtype(m, s);
			if (id < 0 || !dt) {
				VEC_FREE(rp);
				VEC_FREE(name_off);
				sb_release(&names);
				VEC_FREE(tmp);
				return err_set(e, "perturb: cannot find the D register or type of s%u", i);
			}
			const RegInfo *ri = df_reg(df, (uint32_t)id);
			bool async = stmt_opcode_is(m, s, "wgmma.mma_async");
			if (async && (pert_after = wgmma_perturb_after(
			                  df, cut, i, (uint32_t)id)) < 0) {
				VEC_FREE(rp);
				VEC_FREE(name_off);
				sb_release(&names);
				VEC_FREE(tmp);
				res->refused = true;
				return err_set(e,
				               "perturb: s%u is a wgmma.mma_async, whose "
				               "accumulators may not be "
				               "touched until a wgmma.wait_group "
				               "completes it (undefined in the "
				               "PTX ISA; ptxas injects waits), and no "
				               "wgmma.wait_group in the cut "
				               "s%u..s%u does: cut through the wait to "
				               "perturb it (recipe new --phase N "
				               "--through-wait, or a statement range)",
				               i, cut->first, cut->last);
			}
			StrBuf dn = STRBUF_INIT;
			if (idset_has(&set, (uint32_t)id)) {
				Str nm = ri->name;
				if (nm.n && nm.p[0] == '%')
					nm.p++, nm.n--;
				sb_addf(&dn, "%s%.*s", prefix, (int)nm.n, nm.p);
			} else
				sb_addn(&dn, ri->name.p, ri->name.n);
			/* an element of a vector variable (`d.x`) keeps its selector */
			if (df_opd_partial(df, di)) {
				Str ot = opd_str(m, &m->opds.v[di]);
				if (ot.n > ri->name.n)
					sb_addn(&dn, ot.p + ri->name.n, ot.n - ri->name.n);
			}
			/* after a wait, a wgmma.fence orders the add before any later
			 * wgmma that reads the register */
			const char *tail = async ? " wgmma.fence.sync.aligned;  // "
			                           "d4r-splice: perturb, after "
			                           "the wait that completes the wgmma"
			                         : "  // d4r-splice: perturb";
			if (!strcmp(dt, "f16"))
				snprintf(pert, sizeof pert,
				         " { .reg .b32 %sone; mov.b32 %sone, 0x3C003C00; "
				         "add.rn.f16x2 %s, %s, "
				         "%sone; }%s",
				         prefix, prefix, dn.p, dn.p, prefix, tail);
			else if (!strcmp(dt, "f32"))
				snprintf(pert, sizeof pert,
				         " add.f32 %s, %s, 0f3F800000;%s", dn.p, dn.p,
				         tail);
			else if (!strcmp(dt, "s32"))
				snprintf(pert, sizeof pert, " add.s32 %s, %s, 1;%s", dn.p,
				         dn.p, tail);
			else if (!strcmp(dt, "f64"))
				snprintf(pert, sizeof pert,
				         " add.f64 %s, %s, 0d3FF0000000000000;%s", dn.p,
				         dn.p, tail);
			else {
				sb_release(&dn);
				VEC_FREE(rp);
				VEC_FREE(name_off);
				sb_release(&names);
				VEC_FREE(tmp);
				return err_set(e, "perturb: mma s%u has D type .%s, which perturb does not handle",
				               i, dt);
			}
			sb_release(&dn);
			perturbed = true;
		}
		if (perturbed && (int64_t)i == pert_after) {
			Repl r = {s->off + s->len, 0, NULL, (size_t)-1}; /* marker: insert pert */
			VEC_PUSH(rp, r);
			VEC_PUSH(name_off, 0);
		}
	}
	if (perturb && !perturbed) {
		VEC_FREE(rp);
		VEC_FREE(name_off);
		sb_release(&names);
		VEC_FREE(tmp);
		return err_set(e, "perturb: the cut s%u..s%u holds no mma statement", cut->first,
		               cut->last);
	}
	size_t pos = lo;
	uint32_t line = s0->line;
	for (size_t i = 0; i < rp.n; i++) {
		const Repl *r = &rp.v[i];
		if (r->off < pos)
			continue;
		reg_add(rg, m->src + pos, r->off - pos, LM_MODULE, line);
		for (size_t k = pos; k < r->off; k++)
			line += m->src[k] == '\n';
		if (r->n == (size_t)-1)
			reg_add(rg, pert, strlen(pert), LM_MODULE, line);
		else
			reg_add(rg, names.p + name_off.v[i], r->n, LM_MODULE, line);
		pos = r->off + r->len;
	}
	reg_add(rg, m->src + pos, hi - pos, LM_MODULE, line);
	VEC_FREE(rp);
	VEC_FREE(name_off);
	sb_release(&names);
	VEC_FREE(tmp);
	return 0;
}

/* ---- the driver -------------------------------------------------------------------- */

int splice_run(const SpliceRequest *req, SpliceResult *res, Err *e)
{
	const Module *m = req->module;
	const Recipe *r = req->recipe;
	const char *entry = req->entry ? req->entry : r->entry;
	if (!entry)
		return err_set(e, "%s: no entry: the recipe names none and none was given", r->path);
	const Func *f = mod_func_find(m, str_c(entry));
	if (!f || (f->flags & FNF_DECL))
		return err_set(e, "%s: no function '%s' with a body in module '%s'", r->path, entry,
		               m->name ? m->name : "?");
	if (!f->nstmt)
		return err_set(e, "%s: function '%s' has no statements", r->path, entry);

	int rc = -1;
	Template t = {0};
	bool have_t = false;
	CutInterface cut = {0};
	bool have_cut = false;
	Region rg = {0};
	char *tpath = NULL;
	StrBuf why = STRBUF_INIT;
	Dataflow *df = df_build(m, f, e);
	if (!df)
		return -1;

	uint32_t first = 0, last = 0;
	if (resolve_cut(m, f, r, &first, &last, e) < 0)
		goto out;
	res->first = first;
	res->last = last;
	res->first_line = st(m, f, first)->line;
	res->last_line = st(m, f, last)->line;
	if (check_guards(m, f, r, first, last, res, e) < 0)
		goto out;
	if (r->reloads.n && check_reloads(df, r, first, e) < 0)
		goto out;
	if (check_braces(m, f, first, last, r->path, e) < 0)
		goto out;
	if (check_loops(df, first, last, r, e) < 0)
		goto out;
	const Label *lab = label_inside(m, f, first, last);
	if (lab && r->tkind == TPL_FILE) {
		err_set(e, "%s: the cut s%u..s%u contains label '%.*s' (line %u): a template would "
		        "remove a branch target", r->path, first, last, (int)lab->name.len,
		        mod_str(m, lab->name).p, lab->line);
		goto out;
	}
	if (df_cut(df, first, last, &cut, e) < 0)
		goto out;
	have_cut = true;
	res->n_live_in = (uint32_t)cut.live_in.n;
	res->n_live_out = (uint32_t)cut.live_out.n;

	if (r->tkind == TPL_FILE) {
		char *display = NULL;
		if (layout_template(r->template_name, r->path, req->ptx_root, &tpath, &display, e) < 0)
			goto out;
		res->template_name = display;
		if (req->template_text ? tpl_parse(display, req->template_text, req->template_len, &t, e)
		                       : tpl_load(tpath, display, &t, e))
			goto out;
		have_t = true;
		if (splice_check_bindings(df, &t, r, &cut, entry, e) < 0)
			goto out;
		splice_effect_problems(df, &cut, &t, &why);
	} else {
		res->template_name = xstrdup(r->template_name);
		/* The built-ins re-emit the cut's own statements: its memory effects
		 * are the template's by construction, and a read/write dependency
		 * inside the cut stays in order.  Nothing to refuse. */
	}
	if (why.n) {
		if (!req->force) {
			err_set(e, "%s: READ/WRITE DEPENDENCIES: cut invalid: s%u..s%u (lines %u..%u)%s\n"
			        "  (--force splices anyway, with a comment in the output)",
			        r->path, first, last, res->first_line, res->last_line, why.p);
			res->invalid_cut = true;
			goto out;
		}
		res->forced = true;
	}

	func_fresh_prefix(m, f, "spl", req->prefix_from, res->prefix);
	bool scoped = !lab;
	char head[512];
	snprintf(head, sizeof head, "%s// d4r-splice: begin %s for s%u..s%u (fresh prefix %s)\n",
	         scoped ? "{\t" : "", res->template_name, first, last, res->prefix);
	reg_adds(&rg, head);
	if (res->forced) {
		reg_adds(&rg, "\t// d4r-splice: --force: READ/WRITE DEPENDENCIES: cut invalid, spliced "
		              "anyway:");
		for (char *p = why.p, *q; p && *p; p = q ? q + 1 : NULL) {
			q = strchr(p, '\n');
			StrBuf l = STRBUF_INIT;
			sb_adds(&l, "\n\t//   ");
			sb_addn(&l, p, q ? (size_t)(q - p) : strlen(p));
			if (p != why.p || q != p)
				reg_adds(&rg, l.p);
			sb_release(&l);
			if (!q)
				break;
		}
		reg_adds(&rg, "\n");
	}
	if (r->tkind == TPL_FILE) {
		StrBuf body = STRBUF_INIT;
		if (tpl_render(&t, r, res->prefix, &body, e) < 0) {
			sb_release(&body);
			goto out;
		}
		if (body.n && body.p[body.n - 1] != '\n')
			sb_addc(&body, '\n');
		reg_add(&rg, body.p ? body.p : "", body.n, LM_TEMPLATE, 1);
		sb_release(&body);
	} else {
		if (render_builtin(df, &cut, r->tkind == TPL_PERTURB, res->prefix, scoped, &rg, res, e) < 0)
			goto out;
		reg_adds(&rg, "\n");
	}
	reg_adds(&rg, scoped ? "\t}\t// d4r-splice: end" : "\t// d4r-splice: end");

	/* emit */
	const Stmt *s0 = st(m, f, first), *s1 = st(m, f, last);
	Edit ed = {s0->off, s1->off + s1->len - s0->off, rg.text.p, rg.text.n};
	sb_grow(&res->text, m->len + rg.text.n + 1); /* one allocation for the output */
	if (ptx_emit(m, &ed, 1, &res->text, e) < 0)
		goto out;
	res->region_off = s0->off;
	res->region_len = rg.text.n;
	res->region_line = s0->line;
	res->line_map.v = rg.map.v;
	res->line_map.n = rg.map.n;
	res->line_map.cap = rg.map.cap;
	rg.map.v = NULL;
	rg.map.n = rg.map.cap = 0;
	res->line_delta = (int64_t)res->line_map.n - (int64_t)(s1->line - s0->line + 1);

	StrBuf *sm = &res->summary;
	sb_addf(sm, "cut:       s%u..s%u (lines %u..%u) of %s, %u statements, %u mma\n", first, last,
	        res->first_line, res->last_line, entry, last - first + 1, res->mma);
	sb_addf(sm, "interface: %u live-in, %u live-out registers", res->n_live_in, res->n_live_out);
	for (int s = 0; s < SP__COUNT; s++)
		if (cut.loads[s] || cut.stores[s])
			sb_addf(sm, "; %s %u ld %u st", space_name((Space)s), cut.loads[s], cut.stores[s]);
	if (cut.barriers)
		sb_addf(sm, "; %u barriers", cut.barriers);
	sb_addf(sm, "%s\n", cut.rw_dependency ? "; READ/WRITE DEPENDENCY" : "");
	sb_addf(sm, "template:  %s", res->template_name);
	if (r->tkind != TPL_FILE)
		sb_addf(sm, " (%u temporaries renamed)", res->n_renamed);
	else
		sb_addf(sm, " (%zu formals, %zu locals)", t.formals.n, t.locals.n);
	sb_addf(sm, ", fresh prefix %s\n", res->prefix);
	sb_addf(sm, "guards:    sha256 %.16s...%s%s%s\n", res->sha256, r->has_mma ? ", mma" : "",
	        r->first_re ? ", first" : "", r->last_re ? ", last" : "");
	if (res->forced)
		sb_adds(sm, "FORCED:    READ/WRITE DEPENDENCIES: cut invalid, spliced anyway (--force)\n");
	rc = 0;
out:
	if (have_cut)
		cut_release(&cut);
	if (have_t)
		tpl_release(&t);
	df_free(df);
	free(tpath);
	sb_release(&why);
	sb_release(&rg.text);
	VEC_FREE(rg.map);
	return rc;
}

void splice_result_release(SpliceResult *res)
{
	sb_release(&res->text);
	sb_release(&res->summary);
	VEC_FREE(res->line_map);
	free(res->template_name);
	memset(res, 0, sizeof(*res));
}

void splice_where(const SpliceResult *res, const char *module_name, uint32_t line, StrBuf *out)
{
	if (!res || !res->line_map.n || line < res->region_line) {
		sb_addf(out, "%s:%u", module_name, line);
		return;
	}
	uint32_t k = line - res->region_line;
	if (k >= res->line_map.n) {
		sb_addf(out, "%s:%lld", module_name, (long long)line - res->line_delta);
		return;
	}
	const LineMapEntry *le = &res->line_map.v[k];
	if (le->kind == LM_TEMPLATE)
		sb_addf(out, "template %s:%u", res->template_name, le->line);
	else if (le->kind == LM_MODULE)
		sb_addf(out, "%s:%u (in the cut, %s)", module_name, le->line, res->template_name);
	else
		sb_addf(out, "spliced line %u (generated by d4r-splice)", line);
}

int splice_module_arch(const Module *m, char *buf, size_t n)
{
	Str t = mod_str(m, m->target);
	size_t k = 0;
	while (k < t.n && t.p[k] != ',' && !isspace((unsigned char)t.p[k]))
		k++;
	if (!k || k >= n)
		return -1;
	memcpy(buf, t.p, k);
	buf[k] = 0;
	return 0;
}
