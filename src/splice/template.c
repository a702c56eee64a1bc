/*
 * template.c - reading and rendering native-phase templates.
 *
 * A template is PTX plus three kinds of holes: %{formal} for module
 * registers the recipe binds, ${EXPR} for numbers the recipe gives, and
 * local registers the splicer renames.  The reader collects the `//!`
 * header and the `.reg` declarations; the renderer copies the text, filling
 * the holes.  Where a comment or a string begins and ends is the PTX
 * lexer's decision (ptx/lex.h); inside one, registers and '.reg' are text
 * (only ${EXPR} in a '//' comment is filled in).
 * Nothing here knows about the module: the splicer (splice.c) checks
 * bindings against the cut interface before rendering.
 */
#include "template.h"

#include "base/file.h"
#include "ptx/lex.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const space_names[SP__COUNT] = {
	[SP_GENERIC] = "generic", [SP_GLOBAL] = "global", [SP_SHARED] = "shared",
	[SP_LOCAL] = "local",     [SP_CONST] = "const",   [SP_PARAM] = "param",
	[SP_TEX] = "tex",         [SP_SURF] = "surf",
};

static int tpl_err(Err *e, const Template *t, uint32_t line, const char *fmt, ...)
	PRINTF_LIKE(4, 5);
static int tpl_err(Err *e, const Template *t, uint32_t line, const char *fmt, ...)
{
	StrBuf sb = STRBUF_INIT;
	va_list ap;
	char buf[1024];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	sb_addf(&sb, "%s:%u: %s", t->path, line, buf);
	err_set(e, "%s", sb.p);
	sb_release(&sb);
	return -1;
}

/* [A-Za-z0-9_$]: a byte of a register or parameter name (the lexer's class) */
static bool idch(char c)
{
	return ptx_lex_is(c, LX_IDCONT);
}

uint32_t ptx_type_bits(const char *type, size_t n)
{
	if (n >= 2 && type[0] == '.')
		type++, n--;
	if (n == 4 && !memcmp(type, "pred", 4))
		return 1;
	if (n >= 4 && !memcmp(type + n - 2, "x2", 2)) /* f16x2, bf16x2 */
		return 32;
	size_t i = 0;
	while (i < n && isalpha((unsigned char)type[i]))
		i++;
	if (i == 0 || i == n)
		return 0;
	uint32_t v = 0;
	for (; i < n; i++) {
		if (!isdigit((unsigned char)type[i]))
			return 0;
		v = v * 10 + (uint32_t)(type[i] - '0');
	}
	return (v == 8 || v == 16 || v == 32 || v == 64 || v == 128) ? v : 0;
}

/* 'b' untyped, 'f' float (f, bf, tf32, e4m3...), 'i' integer (u, s), 'p' predicate */
static char type_class(Str t)
{
	const char *p = t.p;
	size_t n = t.n;
	if (n && *p == '.')
		p++, n--;
	if (n == 4 && !memcmp(p, "pred", 4))
		return 'p';
	if (n && *p == 'b' && n > 1 && isdigit((unsigned char)p[1]))
		return 'b';
	if (n && (*p == 'u' || *p == 's'))
		return 'i';
	return 'f';
}

bool ptx_type_compatible(Str want, Str reg)
{
	if (!want.n || !reg.n)
		return true; /* undeclared (inline asm names): nothing to compare */
	uint32_t a = ptx_type_bits(want.p, want.n), b = ptx_type_bits(reg.p, reg.n);
	if (a != b)
		return false;
	char ca = type_class(want), cb = type_class(reg);
	if ((ca == 'p') != (cb == 'p'))
		return false;
	return ca == 'b' || cb == 'b' || ca == cb;
}

bool ptx_special_reg(const char *name, size_t n)
{
	static const char *const specials[] = {
		"%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid",
		"%nsmid", "%gridid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge",
		"%lanemask_gt", "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo",
		"%globaltimer_hi", "%total_smem_size", "%aggr_smem_size", "%dynamic_smem_size",
		"%is_explicit_cluster", "%clusterid", "%nclusterid", "%cluster_ctaid",
		"%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank", "%current_graph_exec",
	};
	/* strip a .x/.y/.z component */
	size_t k = n;
	for (size_t i = 1; i < n; i++)
		if (name[i] == '.') {
			k = i;
			break;
		}
	for (size_t i = 0; i < ARRAY_SIZE(specials); i++)
		if (strlen(specials[i]) == k && !memcmp(specials[i], name, k))
			return true;
	if (k > 3 && !memcmp(name, "%pm", 3))
		return true;
	if (k > 7 && !memcmp(name, "%envreg", 7))
		return true;
	if (k > 22 && !memcmp(name, "%reserved_smem_offset_", 22))
		return true;
	return false;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct {
	const char *p, *end;
} Cur;

static Str word(Cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
	const char *s = c->p;
	while (c->p < c->end && !(*c->p == ' ' || *c->p == '\t' || *c->p == '\r'))
		c->p++;
	return str_of(s, (size_t)(c->p - s));
}

static int header_line(Template *t, const char *p, const char *end, uint32_t line, Err *e)
{
	Cur c = {p, end};
	Str kw = word(&c);
	if (!kw.n || str_eqc(kw, "note"))
		return 0;
	int dir = str_eqc(kw, "in") ? FM_IN : str_eqc(kw, "out") ? FM_OUT
	          : str_eqc(kw, "inout") ? FM_INOUT : 0;
	if (dir) {
		Str ty = word(&c);
		uint8_t vec = 0;
		if (ty.n >= 3 && (str_starts(ty, ".v2") || str_starts(ty, ".v4"))) {
			vec = (uint8_t)(ty.p[2] - '0');
			ty.p += 3;
			ty.n -= 3;
			if (!ty.n) /* ".v2 .b32" written apart */
				ty = word(&c);
		}
		uint32_t bits = ty.n ? ptx_type_bits(ty.p, ty.n) : 0;
		if (!ty.n || ty.p[0] != '.' || !bits || ty.n >= sizeof(((Formal *)0)->type))
			return tpl_err(e, t, line, "'%.*s': expected a register type such as .b32",
			               (int)ty.n, ty.p);
		int nnames = 0;
		for (Str w = word(&c); w.n; w = word(&c), nnames++) {
			Formal f = {0};
			size_t k = 0;
			while (k < w.n && (isalnum((unsigned char)w.p[k]) || w.p[k] == '_'))
				k++;
			if (!k || isdigit((unsigned char)w.p[0]))
				return tpl_err(e, t, line, "'%.*s': a formal name is letters, digits and '_'",
				               (int)w.n, w.p);
			if (k < w.n) {
				char *q;
				if (w.p[k] != '[' || w.p[w.n - 1] != ']')
					return tpl_err(e, t, line, "'%.*s': expected NAME or NAME[N]", (int)w.n, w.p);
				unsigned long v = strtoul(w.p + k + 1, &q, 10);
				if (q != w.p + w.n - 1 || v == 0 || v > 65536)
					return tpl_err(e, t, line, "'%.*s': bad list length", (int)w.n, w.p);
				f.count = (uint32_t)v;
			}
			if (tpl_formal(t, w.p, k))
				return tpl_err(e, t, line, "formal '%.*s' declared twice", (int)k, w.p);
			f.name = xstrndup(w.p, k);
			memcpy(f.type, ty.p, ty.n);
			f.bits = bits;
			f.vec = vec;
			f.dir = (uint8_t)dir;
			f.line = line;
			VEC_PUSH(t->formals, f);
		}
		if (!nnames)
			return tpl_err(e, t, line, "'%.*s' names no formal", (int)kw.n, kw.p);
		return 0;
	}
	if (str_eqc(kw, "param")) {
		for (Str w = word(&c); w.n; w = word(&c)) {
			for (size_t i = 0; i < w.n; i++)
				if (!(isalnum((unsigned char)w.p[i]) || w.p[i] == '_') || isdigit((unsigned char)w.p[0]))
					return tpl_err(e, t, line, "'%.*s': a parameter name is letters, digits and '_'",
					               (int)w.n, w.p);
			VEC_PUSH(t->params, xstrndup(w.p, w.n));
		}
		return 0;
	}
	if (str_eqc(kw, "reads") || str_eqc(kw, "writes")) {
		unsigned *mask = kw.p[0] == 'r' ? &t->reads : &t->writes;
		t->effects_declared = true;
		for (Str w = word(&c); w.n; w = word(&c)) {
			if (str_eqc(w, "none"))
				continue;
			int sp = -1;
			for (int i = 0; i < SP__COUNT; i++)
				if (str_eqc(w, space_names[i]))
					sp = i;
			if (sp < 0)
				return tpl_err(e, t, line,
				               "'%.*s': expected a state space (global shared local const param "
				               "generic tex surf) or none", (int)w.n, w.p);
			*mask |= 1u << sp;
		}
		return 0;
	}
	if (str_eqc(kw, "barriers")) {
		Str w = word(&c);
		char *q;
		char buf[32];
		if (!w.n || w.n >= sizeof buf)
			return tpl_err(e, t, line, "'barriers' needs a count");
		memcpy(buf, w.p, w.n);
		buf[w.n] = 0;
		long v = strtol(buf, &q, 10);
		if (*q || v < 0 || v > 1000000)
			return tpl_err(e, t, line, "'%s': bad barrier count", buf);
		t->barriers = (int)v;
		return 0;
	}
	return tpl_err(e, t, line,
	               "unknown header directive '%.*s' (expected in, out, inout, param, reads, "
	               "writes, barriers, note)", (int)kw.n, kw.p);
}

/* `.reg .b32 %t<4>, %u;` starting at p (just after ".reg"). */
static int reg_line(Template *t, const char *p, const char *end, uint32_t line, Err *e)
{
	const char *semi = memchr(p, ';', (size_t)(end - p));
	if (!semi)
		return tpl_err(e, t, line, "'.reg' declaration without ';' on its line");
	const char *q = p;
	while (q < semi) {
		while (q < semi && (isspace((unsigned char)*q) || *q == ','))
			q++;
		if (q >= semi)
			break;
		const char *s = q;
		if (*q == '.') { /* a type or .vN */
			q = ptx_lex_idcont(q + 1, semi);
			continue;
		}
		if (*q != '%')
			return tpl_err(e, t, line, "local '%.*s': template locals are %%names", (int)(semi - s), s);
		q = ptx_lex_idcont(q + 1, semi);
		TplLocal l = {xstrndup(s, (size_t)(q - s)), 0, line};
		if (q < semi && *q == '<') {
			char *z;
			unsigned long v = strtoul(q + 1, &z, 10);
			if (*z != '>' || v == 0) {
				free(l.name);
				return tpl_err(e, t, line, "bad register range in '.reg'");
			}
			l.count = (uint32_t)v;
			q = z + 1;
		}
		for (size_t i = 0; i < t->formals.n; i++)
			if (!strcmp(t->formals.v[i].name, l.name + 1)) {
				int rc = tpl_err(e, t, line, "local '%s' has the name of a formal", l.name);
				free(l.name);
				return rc;
			}
		VEC_PUSH(t->locals, l);
	}
	return 0;
}

int tpl_parse(const char *path, const char *text, size_t len, Template *t, Err *e)
{
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->text = xstrndup(text, len);
	t->len = len;
	t->barriers = -1;
	/* Header lines and .reg lines are recognised where a line starts (after
	 * blanks); the lexer steps over comments (block comments spanning lines
	 * included) and strings, so nothing inside them counts. */
	const char *end = t->text + len;
	Lexer lx = ptx_lex_init(t->text, len);
	bool bol = true; /* only blanks since the line began */
	for (;;) {
		uint32_t line = lx.line;
		Token k = ptx_lex_next(&lx);
		if (k.kind == TK_END)
			break;
		if (k.kind == TK_SPACE) {
			const char *from = k.p, *nl = memrchr(k.p, '\n', k.n);
			if (nl) {
				from = nl + 1;
				bol = true;
			}
			for (const char *z = from; z < k.p + k.n && bol; z++)
				bol = *z == ' ' || *z == '\t';
			continue;
		}
		if (bol) {
			const char *eol = memchr(k.p, '\n', (size_t)(end - k.p));
			if (!eol)
				eol = end;
			if (k.kind == TK_COMMENT && k.n >= 3 && k.p[1] == '/' &&
			    k.p[2] == '!') {
				if (header_line(t, k.p + 3, eol, line, e) < 0)
					goto fail;
			} else if (k.kind == TK_DIRECTIVE && k.n == 4 &&
			           !memcmp(k.p, ".reg", 4) &&
			           (k.p + 4 == eol || isspace((unsigned char)k.p[4]))) {
				if (reg_line(t, k.p + 4, eol, line, e) < 0)
					goto fail;
			}
		}
		bol = false;
	}
	t->nlines = len ? lx.line - (t->text[len - 1] == '\n') : 0;
	/* formals' list names must not clash with locals */
	for (size_t i = 0; i < t->params.n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->params.v[i], t->params.v[j])) {
				tpl_err(e, t, 1, "parameter '%s' declared twice", t->params.v[i]);
				goto fail;
			}
	return 0;
fail:
	tpl_release(t);
	return -1;
}

int tpl_load(const char *path, const char *display, Template *t, Err *e)
{
	char *text;
	size_t n;
	memset(t, 0, sizeof(*t));
	if (read_file(path, &text, &n, e) < 0)
		return -1;
	int rc = tpl_parse(display ? display : path, text, n, t, e);
	free(text);
	return rc;
}

void tpl_release(Template *t)
{
	free(t->path);
	free(t->text);
	for (size_t i = 0; i < t->formals.n; i++)
		free(t->formals.v[i].name);
	VEC_FREE(t->formals);
	for (size_t i = 0; i < t->params.n; i++)
		free(t->params.v[i]);
	VEC_FREE(t->params);
	for (size_t i = 0; i < t->locals.n; i++)
		free(t->locals.v[i].name);
	VEC_FREE(t->locals);
	memset(t, 0, sizeof(*t));
}

const Formal *tpl_formal(const Template *t, const char *name, size_t n)
{
	for (size_t i = 0; i < t->formals.n; i++)
		if (strlen(t->formals.v[i].name) == n && !memcmp(t->formals.v[i].name, name, n))
			return &t->formals.v[i];
	return NULL;
}

/* ---- rendering ----------------------------------------------------------- */

typedef struct {
	const Template *t;
	const Recipe *r;
	const char *p, *end;
	uint32_t line;
	Err *e;
	int failed;
} Expr;

static int64_t expr_sum(Expr *x);

static void expr_ws(Expr *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
		x->p++;
}

static int64_t expr_atom(Expr *x)
{
	expr_ws(x);
	if (x->p >= x->end) {
		x->failed = tpl_err(x->e, x->t, x->line, "incomplete ${...} expression");
		return 0;
	}
	char c = *x->p;
	if (c == '(') {
		x->p++;
		int64_t v = expr_sum(x);
		expr_ws(x);
		if (x->p >= x->end || *x->p != ')') {
			x->failed = tpl_err(x->e, x->t, x->line, "missing ')' in ${...}");
			return 0;
		}
		x->p++;
		return v;
	}
	if (c == '-') {
		x->p++;
		return -expr_atom(x);
	}
	if (isdigit((unsigned char)c)) {
		char *q;
		int64_t v = (int64_t)strtoll(x->p, &q, 0);
		x->p = q;
		return v;
	}
	if (isalpha((unsigned char)c) || c == '_') {
		const char *s = x->p;
		while (x->p < x->end && (isalnum((unsigned char)*x->p) || *x->p == '_'))
			x->p++;
		size_t n = (size_t)(x->p - s);
		bool declared = false;
		for (size_t i = 0; i < x->t->params.n; i++)
			if (strlen(x->t->params.v[i]) == n && !memcmp(x->t->params.v[i], s, n))
				declared = true;
		if (!declared) {
			x->failed = tpl_err(x->e, x->t, x->line,
			                    "parameter '%.*s' is not declared ('//! param %.*s')", (int)n, s,
			                    (int)n, s);
			return 0;
		}
		const RecipeParam *rp = rcp_param_find(x->r, s, n);
		if (!rp) {
			x->failed = tpl_err(x->e, x->t, x->line, "parameter '%.*s' has no value in the recipe",
			                    (int)n, s);
			return 0;
		}
		return rp->value;
	}
	x->failed = tpl_err(x->e, x->t, x->line, "unexpected '%c' in ${...}", c);
	return 0;
}

static int64_t expr_prod(Expr *x)
{
	int64_t v = expr_atom(x);
	for (;;) {
		expr_ws(x);
		if (x->failed || x->p >= x->end || (*x->p != '*' && *x->p != '/' && *x->p != '%'))
			return v;
		char op = *x->p++;
		int64_t w = expr_atom(x);
		if (op == '*')
			v *= w;
		else if (w == 0) {
			x->failed = tpl_err(x->e, x->t, x->line, "division by zero in ${...}");
			return 0;
		} else
			v = op == '/' ? v / w : v % w;
	}
}

static int64_t expr_sum(Expr *x)
{
	int64_t v = expr_prod(x);
	for (;;) {
		expr_ws(x);
		if (x->failed || x->p >= x->end || (*x->p != '+' && *x->p != '-'))
			return v;
		char op = *x->p++;
		int64_t w = expr_prod(x);
		v = op == '+' ? v + w : v - w;
	}
}

static const TplLocal *local_of(const Template *t, const char *s, size_t n)
{
	for (size_t i = 0; i < t->locals.n; i++) {
		const TplLocal *l = &t->locals.v[i];
		size_t k = strlen(l->name);
		if (!l->count) {
			if (k == n && !memcmp(l->name, s, n))
				return l;
			continue;
		}
		if (n <= k || memcmp(l->name, s, k))
			continue;
		uint64_t v = 0;
		size_t j = k;
		for (; j < n && isdigit((unsigned char)s[j]) && v < 1u << 31; j++)
			v = v * 10 + (uint64_t)(s[j] - '0');
		if (j == n && v < l->count && !(s[k] == '0' && n > k + 1))
			return l;
	}
	return NULL;
}

int tpl_render(const Template *t, const Recipe *r, const char *prefix, StrBuf *out, Err *e)
{
	const char *p = t->text, *end = p + t->len;
	uint32_t line = 1;
	while (p < end) {
		char c = *p;
		if (c == '\n') {
			line++;
			sb_addc(out, c);
			p++;
		} else if ((c == '/' && p + 1 < end && (p[1] == '/' || p[1] == '*')) ||
		           c == '"') {
			/* a comment or a string: verbatim (as the lexer delimits it),
			 * except that ${EXPR} is filled in in '//' comments (so the
			 * output documents the numbers it was made with); header
			 * lines (//!) stay as written */
			Lexer lx = ptx_lex_init(p, (size_t)(end - p));
			Token k = ptx_lex_next(&lx);
			const char *z = p + k.n;
			if (k.kind == TK_COMMENT && p[1] == '/' &&
			    !(k.n >= 3 && p[2] == '!')) {
				while (p < z) {
					const char *d = memchr(p, '$', (size_t)(z - p));
					while (d && !(d + 1 < z && d[1] == '{'))
						d = memchr(d + 1, '$',
						           (size_t)(z - d - 1));
					const char *q =
					    d ? memchr(d, '}', (size_t)(z - d)) : NULL;
					if (!d || !q)
						break;
					sb_addn(out, p, (size_t)(d - p));
					Expr x = {t, r, d + 2, q, line, e, 0};
					int64_t v = expr_sum(&x);
					if (x.failed)
						return -1;
					sb_addf(out, "%lld", (long long)v);
					p = q + 1;
				}
			}
			sb_addn(out, p, (size_t)(z - p));
			p = z;
			line += lx.line - 1;
		} else if (c == '%' && p + 1 < end && p[1] == '{') {
			const char *s = p + 2, *z = s;
			while (z < end && *z != '}' && *z != '\n')
				z++;
			if (z >= end || *z != '}')
				return tpl_err(e, t, line, "unterminated '%%{'");
			const char *br = memchr(s, '[', (size_t)(z - s));
			size_t nlen = (size_t)((br ? br : z) - s);
			const Formal *f = tpl_formal(t, s, nlen);
			if (!f)
				return tpl_err(e, t, line, "'%%{%.*s}': no such formal in the header", (int)(z - s), s);
			long idx = -1;
			if (br) {
				char *q;
				idx = strtol(br + 1, &q, 10);
				if (q == br + 1 || *q != ']' || q + 1 != z || idx < 0)
					return tpl_err(e, t, line, "'%%{%.*s}': bad index", (int)(z - s), s);
			}
			if (f->count && (idx < 0 || (uint32_t)idx >= f->count))
				return tpl_err(e, t, line, "'%%{%.*s}': formal '%s' is a list of %u: give an index "
				               "0..%u", (int)(z - s), s, f->name, f->count, f->count - 1);
			if (!f->count && idx >= 0)
				return tpl_err(e, t, line, "'%%{%.*s}': formal '%s' is not a list", (int)(z - s), s,
				               f->name);
			const RecipeBind *b = rcp_bind_find(r, f->name);
			if (!b)
				return tpl_err(e, t, line, "formal '%s' is not bound by the recipe", f->name);
			uint32_t k = idx < 0 ? 0 : (uint32_t)idx;
			if (k >= b->nregs)
				return tpl_err(e, t, line, "'%%{%.*s}': the binding has %u registers", (int)(z - s),
				               s, b->nregs);
			sb_adds(out, b->regs[k]);
			p = z + 1;
		} else if (c == '$' && p + 1 < end && p[1] == '{') {
			const char *z = p + 2;
			while (z < end && *z != '}' && *z != '\n')
				z++;
			if (z >= end || *z != '}')
				return tpl_err(e, t, line, "unterminated '${'");
			Expr x = {t, r, p + 2, z, line, e, 0};
			int64_t v = expr_sum(&x);
			if (x.failed)
				return -1;
			expr_ws(&x);
			if (x.p != z)
				return tpl_err(e, t, line, "unexpected '%c' in ${...}", *x.p);
			sb_addf(out, "%lld", (long long)v);
			p = z + 1;
		} else if (c == '%' && p + 1 < end &&
		           (isalpha((unsigned char)p[1]) || p[1] == '_' || p[1] == '$')) {
			const char *s = p;
			p = ptx_lex_idcont(p + 1, end);
			size_t n = (size_t)(p - s);
			bool local = local_of(t, s, n) != NULL;
			if (!local && p < end && *p == '<') /* the name of a range in its .reg line */
				for (size_t i = 0; i < t->locals.n; i++)
					if (t->locals.v[i].count && strlen(t->locals.v[i].name) == n &&
					    !memcmp(t->locals.v[i].name, s, n))
						local = true;
			if (local) {
				sb_adds(out, prefix);
				sb_addn(out, s + 1, n - 1);
			} else if (ptx_special_reg(s, n)) {
				sb_addn(out, s, n);
			} else
				return tpl_err(e, t, line,
				               "register '%.*s' is neither a template local (.reg) nor a formal "
				               "(%%{...}) nor a special register", (int)n, s);
		} else if (idch(c)) {
			const char *s = p;
			p = ptx_lex_idcont(p, end);
			sb_addn(out, s, (size_t)(p - s));
		} else {
			sb_addc(out, c);
			p++;
		}
	}
	return 0;
}
