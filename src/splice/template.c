/*
 * template.c - reading, checking and rendering native-phase templates.
 *
 * A template is PTX plus three kinds of holes: %{formal} for module
 * registers the recipe binds, ${EXPR} for numbers the recipe gives, and
 * local registers the splicer renames.  The reader collects the `//!`
 * header and the `.reg` declarations, then checks the body against the
 * header; the renderer copies the text, filling the holes.  Where a comment
 * or a string begins and ends is the PTX lexer's decision (ptx/lex.h);
 * inside one, registers and '.reg' are text (only ${EXPR} in a '//'
 * comment is filled in).  Nothing here knows about the module: the splicer
 * (fit.c) checks bindings against the cut interface before rendering.
 *
 * The body check against the header is in tplbody.c.
 *
 * Decisions:
 *  - ${EXPR} arithmetic is 64-bit and checked (__builtin_*_overflow): a
 *    number that does not fit, an overflowing +, -, *, /, % or unary minus,
 *    and a division by zero are errors at the operator; nesting is bounded
 *    so no expression can exhaust the stack.
 */
#include "template.h"
#include "tpl_internal.h"

#include "base/file.h"
#include "ptx/lex.h"
#include "ptx/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int tpl_error(Err *e, const Template *t, size_t off, const char *fmt, ...)
{
	va_list ap;
	char buf[1536];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return err_at(e, t->path, t->text, t->len, off, "%s", buf);
}

static size_t off_of(const Template *t, const char *p)
{
	return (size_t)(p - t->text);
}

/* [A-Za-z0-9_$]: a byte of a register or parameter name (the lexer's class) */
static bool idch(char c)
{
	return ptx_lex_is(c, LX_IDCONT);
}

bool ptx_reg_type(const char *type, size_t n)
{
	static const char *const types[] = {
	    ".pred", ".b8",    ".b16",  ".b32",    ".b64", ".b128", ".u8",
	    ".u16",  ".u32",   ".u64",  ".s8",     ".s16", ".s32",  ".s64",
	    ".f16",  ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64",
	};
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (strlen(types[i]) == n && !memcmp(types[i], type, n))
			return true;
	return false;
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
		if (v > 128)
			return 0;
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
	    "%tid",
	    "%ntid",
	    "%laneid",
	    "%warpid",
	    "%nwarpid",
	    "%ctaid",
	    "%nctaid",
	    "%smid",
	    "%nsmid",
	    "%gridid",
	    "%lanemask_eq",
	    "%lanemask_le",
	    "%lanemask_lt",
	    "%lanemask_ge",
	    "%lanemask_gt",
	    "%clock",
	    "%clock_hi",
	    "%clock64",
	    "%globaltimer",
	    "%globaltimer_lo",
	    "%globaltimer_hi",
	    "%total_smem_size",
	    "%aggr_smem_size",
	    "%dynamic_smem_size",
	    "%is_explicit_cluster",
	    "%clusterid",
	    "%nclusterid",
	    "%cluster_ctaid",
	    "%cluster_nctaid",
	    "%cluster_ctarank",
	    "%cluster_nctarank",
	    "%current_graph_exec",
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
	int dir = str_eqc(kw, "in")      ? FM_IN
	          : str_eqc(kw, "out")   ? FM_OUT
	          : str_eqc(kw, "inout") ? FM_INOUT
	                                 : 0;
	if (dir) {
		Str ty = word(&c);
		const char *at = ty.n ? ty.p : c.p;
		uint8_t vec = 0;
		if (ty.n >= 3 && (str_starts(ty, ".v2") || str_starts(ty, ".v4"))) {
			vec = (uint8_t)(ty.p[2] - '0');
			ty.p += 3;
			ty.n -= 3;
			if (!ty.n) /* ".v2 .b32" written apart */
				ty = word(&c);
		}
		if (!ty.n || ty.p[0] != '.')
			return tpl_error(e, t, off_of(t, at),
			               "'%.*s': expected a register type such as .b32",
			               (int)ty.n, ty.p);
		if (!ptx_reg_type(ty.p, ty.n) || ty.n >= sizeof(((Formal *)0)->type))
			return tpl_error(
			    e, t, off_of(t, ty.p),
			    "'%.*s' is not a PTX register type (.pred, .b8-.b128, "
			    ".u8-.u64, "
			    ".s8-.s64, .f16, .f16x2, .bf16, .bf16x2, .f32, .f64)",
			    (int)ty.n, ty.p);
		if (vec && str_eqc(ty, ".pred"))
			return tpl_error(e, t, off_of(t, at),
			               "a predicate cannot be a vector register");
		uint32_t bits = ptx_type_bits(ty.p, ty.n);
		int nnames = 0;
		for (Str w = word(&c); w.n; w = word(&c), nnames++) {
			Formal f = {0};
			size_t k = 0;
			while (k < w.n &&
			       (isalnum((unsigned char)w.p[k]) || w.p[k] == '_'))
				k++;
			if (!k || isdigit((unsigned char)w.p[0]))
				return tpl_error(
				    e, t, off_of(t, w.p),
				    "'%.*s': a formal name is letters, digits and '_'",
				    (int)w.n, w.p);
			if (k < w.n) {
				char *q;
				if (w.p[k] != '[' || w.p[w.n - 1] != ']' ||
				    !isdigit((unsigned char)w.p[k + 1]))
					return tpl_error(e, t, off_of(t, w.p),
					               "'%.*s': expected NAME or NAME[N]",
					               (int)w.n, w.p);
				unsigned long v = strtoul(w.p + k + 1, &q, 10);
				if (q != w.p + w.n - 1 || v == 0 || v > 65536)
					return tpl_error(e, t, off_of(t, w.p),
					               "'%.*s': bad list length",
					               (int)w.n, w.p);
				f.count = (uint32_t)v;
			}
			if (tpl_formal(t, w.p, k))
				return tpl_error(e, t, off_of(t, w.p),
				               "formal '%.*s' declared twice", (int)k,
				               w.p);
			uint32_t regs = f.count ? f.count : 1;
			if (regs > TPL_MAX_REGS - t->formal_regs)
				return tpl_error(e, t, off_of(t, w.p),
				               "'%.*s': the formals stand for more than "
				               "%u registers",
				               (int)w.n, w.p, TPL_MAX_REGS);
			t->formal_regs += regs;
			f.name = xstrndup(w.p, k);
			memcpy(f.type, ty.p, ty.n);
			f.bits = bits;
			f.vec = vec;
			f.dir = (uint8_t)dir;
			f.line = line;
			f.off = (uint32_t)off_of(t, w.p);
			VEC_PUSH(t->formals, f);
		}
		if (!nnames)
			return tpl_error(e, t, off_of(t, kw.p), "'%.*s' names no formal",
			               (int)kw.n, kw.p);
		return 0;
	}
	if (str_eqc(kw, "param")) {
		for (Str w = word(&c); w.n; w = word(&c)) {
			for (size_t i = 0; i < w.n; i++)
				if (!(isalnum((unsigned char)w.p[i]) || w.p[i] == '_') ||
				    isdigit((unsigned char)w.p[0]))
					return tpl_error(e, t, off_of(t, w.p),
					               "'%.*s': a parameter name is "
					               "letters, digits and '_'",
					               (int)w.n, w.p);
			for (size_t i = 0; i < t->params.n; i++)
				if (str_eqc(w, t->params.v[i]))
					return tpl_error(e, t, off_of(t, w.p),
					               "parameter '%.*s' declared twice",
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
				if (str_eqc(w, space_name((Space)i)))
					sp = i;
			if (sp < 0)
				return tpl_error(e, t, off_of(t, w.p),
				               "'%.*s': expected a state space (global "
				               "shared local const param "
				               "generic tex surf) or none",
				               (int)w.n, w.p);
			*mask |= 1u << sp;
		}
		return 0;
	}
	if (str_eqc(kw, "barriers")) {
		Str w = word(&c);
		char *q;
		char buf[32];
		if (!w.n || w.n >= sizeof buf)
			return tpl_error(e, t, off_of(t, w.n ? w.p : kw.p),
			               "'barriers' needs a count");
		memcpy(buf, w.p, w.n);
		buf[w.n] = 0;
		long v = strtol(buf, &q, 10);
		if (*q || !isdigit((unsigned char)buf[0]) || v > 1000000)
			return tpl_error(e, t, off_of(t, w.p), "'%s': bad barrier count",
			               buf);
		t->barriers = (int)v;
		return 0;
	}
	return tpl_error(
	    e, t, off_of(t, kw.p),
	    "unknown header directive '%.*s' (expected in, out, inout, param, reads, "
	    "writes, barriers, note)",
	    (int)kw.n, kw.p);
}

/* `.reg .b32 %t<4>, %u;` starting at p (just after ".reg"). */
static int reg_line(Template *t, const char *p, const char *end, Err *e)
{
	const char *semi = memchr(p, ';', (size_t)(end - p));
	if (!semi)
		return tpl_error(e, t, off_of(t, p) - 4,
		               "'.reg' declaration without ';' on its line");
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
			return tpl_error(e, t, off_of(t, s),
			               "local '%.*s': template locals are %%names",
			               (int)(semi - s), s);
		q = ptx_lex_idcont(q + 1, semi);
		unsigned line, col;
		err_line_col(t->text, t->len, off_of(t, s), &line, &col);
		TplLocal l = {xstrndup(s, (size_t)(q - s)), 0, line};
		if (q < semi && *q == '<') {
			char *z;
			unsigned long v =
			    isdigit((unsigned char)q[1]) ? strtoul(q + 1, &z, 10) : 0;
			if (!v || *z != '>' || v > (1u << 24)) {
				free(l.name);
				return tpl_error(e, t, off_of(t, q),
				               "bad register range in '.reg'");
			}
			l.count = (uint32_t)v;
			q = z + 1;
		}
		for (size_t i = 0; i < t->formals.n; i++)
			if (!strcmp(t->formals.v[i].name, l.name + 1)) {
				int rc = tpl_error(e, t, off_of(t, s),
				                 "local '%s' has the name of a formal",
				                 l.name);
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
	if (len && memchr(text, 0, len)) {
		tpl_error(e, t, (size_t)((const char *)memchr(text, 0, len) - text),
		        "NUL byte in the template");
		goto fail;
	}
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
				if (reg_line(t, k.p + 4, eol, e) < 0)
					goto fail;
			}
		}
		bol = false;
	}
	t->nlines = len ? lx.line - (t->text[len - 1] == '\n') : 0;
	if (tpl_check_body(t, e) < 0)
		goto fail;
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
	for (size_t i = 0; i < t->formals.n; i++) {
		free(t->formals.v[i].name);
		free(t->formals.v[i].written);
	}
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
		if (strlen(t->formals.v[i].name) == n &&
		    !memcmp(t->formals.v[i].name, name, n))
			return &t->formals.v[i];
	return NULL;
}

/* ---- ${EXPR}: checked 64-bit arithmetic ------------------------------------ */

typedef struct {
	const Template *t;
	const Recipe *r; /* NULL: syntax and names only, every value 0 */
	const char *p, *end;
	Err *e;
	int failed;
	int depth;
} Expr;

#define EXPR_DEPTH 64

static int64_t expr_sum(Expr *x);

static void expr_ws(Expr *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
		x->p++;
}

static int64_t expr_fail(Expr *x, const char *at, const char *fmt, ...) PRINTF_LIKE(3, 4);
static int64_t expr_fail(Expr *x, const char *at, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (!x->failed)
		x->failed = tpl_error(x->e, x->t, off_of(x->t, at), "%s", buf);
	return 0;
}

/* a op b, or an error at `at` (the operator) when the result does not fit */
static int64_t expr_apply(Expr *x, const char *at, char op, int64_t a, int64_t b)
{
	int64_t v = 0;
	bool over = false;
	if (!x->r)
		return 0;
	switch (op) {
	case '+':
		over = __builtin_add_overflow(a, b, &v);
		break;
	case '-':
		over = __builtin_sub_overflow(a, b, &v);
		break;
	case '*':
		over = __builtin_mul_overflow(a, b, &v);
		break;
	default: /* '/' and '%': INT64_MIN / -1 is the one quotient that does not fit */
		if (b == 0)
			return expr_fail(x, at, "division by zero in ${...}: %lld %c 0",
			                 (long long)a, op);
		over = a == INT64_MIN && b == -1;
		if (!over)
			v = op == '/' ? a / b : a % b;
		break;
	}
	if (over)
		return expr_fail(x, at, "${...} overflows 64 bits: %lld %c %lld",
		                 (long long)a, op, (long long)b);
	return v;
}

static int64_t expr_atom(Expr *x)
{
	expr_ws(x);
	if (x->p >= x->end)
		return expr_fail(x, x->p, "incomplete ${...} expression");
	if (++x->depth > EXPR_DEPTH)
		return expr_fail(x, x->p, "${...} nested more than %d deep", EXPR_DEPTH);
	char c = *x->p;
	int64_t v = 0;
	if (c == '(') {
		x->p++;
		v = expr_sum(x);
		expr_ws(x);
		if (!x->failed && (x->p >= x->end || *x->p != ')'))
			return expr_fail(x, x->p, "missing ')' in ${...}");
		x->p++;
	} else if (c == '-') {
		const char *at = x->p++;
		int64_t w = expr_atom(x);
		if (x->r && !x->failed && __builtin_sub_overflow((int64_t)0, w, &v))
			return expr_fail(x, at, "${...} overflows 64 bits: -(%lld)",
			                 (long long)w);
	} else if (isdigit((unsigned char)c)) {
		char *q;
		errno = 0;
		long long n = strtoll(x->p, &q, 0);
		if (errno == ERANGE)
			return expr_fail(x, x->p, "'%.*s' does not fit in 64 bits",
			                 (int)(q - x->p), x->p);
		x->p = q;
		v = x->r ? (int64_t)n : 0;
	} else if (isalpha((unsigned char)c) || c == '_') {
		const char *s = x->p;
		while (x->p < x->end && (isalnum((unsigned char)*x->p) || *x->p == '_'))
			x->p++;
		size_t n = (size_t)(x->p - s);
		bool declared = false;
		for (size_t i = 0; i < x->t->params.n; i++)
			if (strlen(x->t->params.v[i]) == n &&
			    !memcmp(x->t->params.v[i], s, n))
				declared = true;
		if (!declared)
			return expr_fail(
			    x, s, "parameter '%.*s' is not declared ('//! param %.*s')",
			    (int)n, s, (int)n, s);
		if (x->r) {
			const RecipeParam *rp = rcp_param_find(x->r, s, n);
			if (!rp)
				return expr_fail(
				    x, s, "parameter '%.*s' has no value in the recipe",
				    (int)n, s);
			v = rp->value;
		}
	} else
		return expr_fail(x, x->p, "unexpected '%c' in ${...}", c);
	x->depth--;
	return v;
}

static int64_t expr_prod(Expr *x)
{
	int64_t v = expr_atom(x);
	for (;;) {
		expr_ws(x);
		if (x->failed || x->p >= x->end ||
		    (*x->p != '*' && *x->p != '/' && *x->p != '%'))
			return v;
		const char *at = x->p++;
		int64_t w = expr_atom(x);
		if (!x->failed)
			v = expr_apply(x, at, *at, v, w);
	}
}

static int64_t expr_sum(Expr *x)
{
	int64_t v = expr_prod(x);
	for (;;) {
		expr_ws(x);
		if (x->failed || x->p >= x->end || (*x->p != '+' && *x->p != '-'))
			return v;
		const char *at = x->p++;
		int64_t w = expr_prod(x);
		if (!x->failed)
			v = expr_apply(x, at, *at, v, w);
	}
}

/* The value of the expression in [p, end) (the inside of "${...}"), into
 * *v; -1 when it fails (the message set).  All of it must be read. */
static int expr_eval(const Template *t, const Recipe *r, const char *p, const char *end,
                     int64_t *v, Err *e)
{
	Expr x = {t, r, p, end, e, 0, 0};
	*v = expr_sum(&x);
	if (x.failed)
		return -1;
	expr_ws(&x);
	if (x.p != end)
		return tpl_error(e, t, off_of(t, x.p), "unexpected '%c' in ${...}", *x.p);
	return 0;
}

/* ---- expanding the holes -------------------------------------------------- */

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

void tpl_dummy_name(StrBuf *out, const Formal *f, long idx)
{
	if (idx < 0)
		sb_addf(out, "%%%s$", f->name);
	else
		sb_addf(out, "%%%s$%ld", f->name, idx);
}

static void hole(Expand *x, size_t chk0, const char *from, const char *to)
{
	if (x->r)
		return;
	Hole h = {chk0, x->out->n, off_of(x->t, from), off_of(x->t, to)};
	VEC_PUSH(x->holes, h);
}

/* %{name} or %{name[i]} at p: the binding's register (rendering) or the
 * formal's dummy (the body check). */
static const char *expand_formal(Expand *x, const char *p, const char *end)
{
	const Template *t = x->t;
	Err *e = x->e;
	const char *s = p + 2, *z = s;
	while (z < end && *z != '}' && *z != '\n')
		z++;
	if (z >= end || *z != '}')
		return tpl_error(e, t, off_of(t, p), "unterminated '%%{'"), NULL;
	const char *br = memchr(s, '[', (size_t)(z - s));
	size_t nlen = (size_t)((br ? br : z) - s);
	int hl = (int)(z - s);
	const Formal *f = tpl_formal(t, s, nlen);
	if (!f)
		return tpl_error(e, t, off_of(t, p),
		               "'%%{%.*s}': no such formal in the header", hl, s),
		       NULL;
	long idx = -1;
	if (br) {
		char *q;
		idx = isdigit((unsigned char)br[1]) ? strtol(br + 1, &q, 10) : -1;
		if (idx < 0 || *q != ']' || q + 1 != z)
			return tpl_error(e, t, off_of(t, p), "'%%{%.*s}': bad index", hl,
			               s),
			       NULL;
	}
	if (f->count && (idx < 0 || (unsigned long)idx >= f->count))
		return tpl_error(
		           e, t, off_of(t, p),
		           "'%%{%.*s}': formal '%s' is a list of %u: give an index 0..%u",
		           hl, s, f->name, f->count, f->count - 1),
		       NULL;
	if (!f->count && idx >= 0)
		return tpl_error(e, t, off_of(t, p),
		               "'%%{%.*s}': formal '%s' is not a list", hl, s, f->name),
		       NULL;
	if (!x->r) {
		size_t at = x->out->n;
		tpl_dummy_name(x->out, f, idx);
		hole(x, at, p, z + 1);
		return z + 1;
	}
	const RecipeBind *b = rcp_bind_find(x->r, f->name);
	if (!b)
		return tpl_error(e, t, off_of(t, p),
		               "formal '%s' is not bound by the recipe", f->name),
		       NULL;
	uint32_t k = idx < 0 ? 0 : (uint32_t)idx;
	if (k >= b->nregs)
		return tpl_error(e, t, off_of(t, p),
		               "'%%{%.*s}': the binding has %u registers", hl, s,
		               b->nregs),
		       NULL;
	sb_adds(x->out, b->regs[k]);
	return z + 1;
}

/* ${EXPR} at p: its value (rendering) or "0" once it is known to be
 * well formed (the body check). */
static const char *expand_expr(Expand *x, const char *p, const char *end)
{
	const char *z = p + 2;
	while (z < end && *z != '}' && *z != '\n')
		z++;
	if (z >= end || *z != '}')
		return tpl_error(x->e, x->t, off_of(x->t, p), "unterminated '${'"), NULL;
	int64_t v;
	if (expr_eval(x->t, x->r, p + 2, z, &v, x->e) < 0)
		return NULL;
	size_t at = x->out->n;
	sb_addf(x->out, "%lld", (long long)v);
	hole(x, at, p, z + 1);
	return z + 1;
}

/* A comment or a string at p, verbatim as the lexer delimits it, except
 * that ${EXPR} is filled in in '//' comments when rendering (so the output
 * documents the numbers it was made with; the body check checks them and
 * keeps the text); header lines (//!) stay as written. */
static const char *expand_trivia(Expand *x, const char *p, const char *end)
{
	Lexer lx = ptx_lex_init(p, (size_t)(end - p));
	Token k = ptx_lex_next(&lx);
	const char *z = p + k.n;
	/* Unterminated, it would hide the holes after it from this walk, and
	 * the parser may not see it either (a .loc line is read as text). */
	if (k.kind == TK_BAD)
		return tpl_error(x->e, x->t, off_of(x->t, p), "unterminated %s",
		               *p == '"' ? "string" : "comment"),
		       NULL;
	if (k.kind == TK_COMMENT && p[1] == '/' && !(k.n >= 3 && p[2] == '!')) {
		const char *q = p;
		while (q < z) {
			const char *d = memchr(q, '$', (size_t)(z - q));
			while (d && !(d + 1 < z && d[1] == '{'))
				d = memchr(d + 1, '$', (size_t)(z - d - 1));
			const char *c = d ? memchr(d, '}', (size_t)(z - d)) : NULL;
			if (!d || !c)
				break;
			int64_t v;
			if (expr_eval(x->t, x->r, d + 2, c, &v, x->e) < 0)
				return NULL;
			if (x->r) {
				sb_addn(x->out, q, (size_t)(d - q));
				sb_addf(x->out, "%lld", (long long)v);
				p = c + 1;
			}
			q = c + 1;
		}
	}
	sb_addn(x->out, p, (size_t)(z - p));
	return z;
}

/* A %name at p: a local (renamed when rendering), a special register, or
 * an error. */
/* A name or number [s, p) that took the '$' of a "${" hole as one of its
 * bytes ('$' is a name byte): the hole would be left in the text.  Refused
 * rather than pasted, so "${" and "%{" are holes wherever they stand. */
static bool glued_hole(Expand *x, const char *s, const char *p, const char *end)
{
	if (!(p > s && p[-1] == '$' && p < end && *p == '{'))
		return false;
	tpl_error(x->e, x->t, off_of(x->t, p - 1),
	        "'%.*s{': a ${...} cannot continue a name or a number", (int)(p - s), s);
	return true;
}

static const char *expand_reg(Expand *x, const char *p, const char *end)
{
	const Template *t = x->t;
	const char *s = p;
	p = ptx_lex_idcont(p + 1, end);
	if (glued_hole(x, s, p, end))
		return NULL;
	size_t n = (size_t)(p - s);
	bool local = local_of(t, s, n) != NULL;
	if (!local && p < end && *p == '<') /* the name of a range in its .reg line */
		for (size_t i = 0; i < t->locals.n; i++)
			if (t->locals.v[i].count && strlen(t->locals.v[i].name) == n &&
			    !memcmp(t->locals.v[i].name, s, n))
				local = true;
	if (local && x->r) {
		sb_adds(x->out, x->prefix);
		sb_addn(x->out, s + 1, n - 1);
	} else if (local || ptx_special_reg(s, n)) {
		sb_addn(x->out, s, n);
	} else
		return tpl_error(x->e, t, off_of(t, s),
		               "register '%.*s' is neither a template local (.reg) nor a "
		               "formal "
		               "(%%{...}) nor a special register",
		               (int)n, s),
		       NULL;
	return p;
}

int tpl_expand(Expand *x)
{
	const char *p = x->t->text, *end = p + x->t->len;
	while (p) {
		if (p >= end)
			return 0;
		char c = *p;
		if ((c == '/' && p + 1 < end && (p[1] == '/' || p[1] == '*')) ||
		    c == '"') {
			p = expand_trivia(x, p, end);
		} else if (c == '%' && p + 1 < end && p[1] == '{') {
			p = expand_formal(x, p, end);
		} else if (c == '$' && p + 1 < end && p[1] == '{') {
			p = expand_expr(x, p, end);
		} else if (c == '%' && p + 1 < end &&
		           (isalpha((unsigned char)p[1]) || p[1] == '_' || p[1] == '$')) {
			p = expand_reg(x, p, end);
		} else if (idch(c)) {
			const char *s = p;
			p = ptx_lex_idcont(p, end);
			if (glued_hole(x, s, p, end))
				return -1;
			sb_addn(x->out, s, (size_t)(p - s));
		} else {
			sb_addc(x->out, c);
			p++;
		}
	}
	return -1;
}

int tpl_render(const Template *t, const Recipe *r, const char *prefix, StrBuf *out,
               Err *e)
{
	Expand x = {t, r, prefix, out, {0}, e};
	return tpl_expand(&x);
}
