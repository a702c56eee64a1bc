/*
 * parse.c - recursive-descent parser from PTX text to the module model.
 *
 * The parser reads the mapped file once, left to right, and never copies it:
 * what it records are byte spans.  It calls the lexer's scanners (lex.h:
 * the class table, names, directives, trivia, strings, numbers) from its
 * own loops rather than pulling a token stream, because this is the hot
 * path of every verb and a 40 MB module must parse in tens of milliseconds:
 * the common shapes (", " between operands, "%r12" names) are decided
 * without a call, and there is no per-token allocation.
 *
 * What is kept and what is skipped:
 *  - Whitespace and comments ("trivia") are skipped but never lost: the model
 *    keeps the span of every item and statement, and the emitter copies the
 *    bytes between them verbatim, so an unmodified module re-emits exactly.
 *  - Module-level directives become Items: .version/.target/.address_size/
 *    .file (line-terminated), .section blocks (balanced braces), variables
 *    (through ';', initialisers included), functions, .pragma.
 *  - Function bodies are parsed into statements (guard, opcode token, operand
 *    tree), labels and register declarations.  Other body directives (.loc,
 *    .pragma, .local, .shared, .param, .callprototype, ...) are recognised and
 *    stepped over.
 *  - Opcodes are not validated against a grammar per instruction: any dotted
 *    opcode token with operands of the general shape parses, and opcodes not
 *    in ops.def are OP_UNKNOWN, so newer PTX still round-trips.
 *
 * Grammar (informal; each function below names the rule it implements):
 *   module     := { directive | declaration }
 *   function   := linkage* (.entry|.func) [ '(' params ')' ] name
 *                 [ '(' params ')' ] perf-directive* ( '{' body '}' | ';' )
 *   body       := { '{' body '}' | label ':' | directive | statement }
 *   statement  := [ '@' ['!'] pred ] opcode [ operand { ',' operand } ] ';'
 *   operand    := ['!'] ( vector | address | list | name ['|' name]
 *                 | name ('+'|'-') number | number | '_' | string )
 */
#include "parse.h"

#include "lex.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *name;
	const char *src, *p, *end;
	uint32_t line;
	Module *m;
	Err *e;
	int failed;
} Parser;

static inline int at_end(const Parser *P)
{
	return P->p >= P->end;
}
static inline int peek(const Parser *P)
{
	return P->p < P->end ? (unsigned char)*P->p : -1;
}
static inline int peek2(const Parser *P)
{
	return P->p + 1 < P->end ? (unsigned char)P->p[1] : -1;
}
static inline uint32_t pos(const Parser *P)
{
	return (uint32_t)(P->p - P->src);
}

static int fail_at(Parser *P, const char *at, const char *what)
{
	if (!P->failed)
		err_at(P->e, P->name, P->src, (size_t)(P->end - P->src),
		       (size_t)(at - P->src), "%s", what);
	P->failed = 1;
	return -1;
}

/* trivia (lex.h) from P->p, counting lines; an unterminated block comment
 * is an error. */
static int trivia_slow(Parser *P)
{
	const char *p = ptx_lex_trivia(P->p, P->end, &P->line);
	P->p = p;
	if (UNLIKELY(ptx_lex_open_comment(p, P->end)))
		return fail_at(P, p, "unterminated comment");
	return 0;
}

/* Most calls find no trivia at all (the next byte is ',' or ';'), and most
 * of the rest a newline and some blanks: answer those without a call. */
static inline int trivia(Parser *P)
{
	const char *p = P->p, *end = P->end;
	if (LIKELY(p < end) && !ptx_lex_is(*p, LX_TRIV))
		return 0;
	uint32_t nl = 0;
	while (p < end) {
		unsigned c = (unsigned char)*p;
		if (c == ' ' || c == '\t')
			p++;
		else if (c == '\n')
			nl++, p++;
		else
			break;
	}
	P->line += nl;
	P->p = p;
	if (p < end && ptx_lex_is(*p, LX_TRIV))
		return trivia_slow(P);
	return 0;
}

static inline int word_is(const char *p, const char *q, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(q - p) == n && memcmp(p, w, n) == 0;
}

/* Moves P->p to the end of a line-terminated directive's text (trailing
 * blanks and comment excluded) and returns it. */
static const char *skip_line(Parser *P)
{
	P->p = ptx_lex_line_end(P->p, P->end);
	return P->p;
}

/* Skips a string literal at P->p ('"'). */
static int skip_string(Parser *P)
{
	bool closed;
	const char *q = ptx_lex_string(P->p, P->end, &closed);
	if (!closed)
		return fail_at(P, P->p, "unterminated string");
	P->p = q;
	return 0;
}

/* At p ('/' or '"'): steps over a comment or a string; other '/' by one. */
static int skip_special(Parser *P, const char **pp)
{
	const char *p = *pp;
	P->p = p;
	if (*p == '"') {
		if (skip_string(P) < 0)
			return -1;
	} else if (p + 1 < P->end && (p[1] == '/' || p[1] == '*')) {
		if (trivia_slow(P) < 0)
			return -1;
	} else
		P->p = p + 1;
	*pp = P->p;
	return 0;
}

/*
 * From P->p over balanced braces, comments and strings: to just after the
 * ';' at depth 0 (`semi`), or just after the '}' that closes the first '{'
 * (not `semi`).  Data initialisers can be megabytes, so the plain bytes
 * between the characters that matter are skipped in a tight loop.
 */
static int skip_balanced(Parser *P, const char *start, bool semi)
{
	int depth = 0;
	const char *p = P->p, *end = P->end;
	for (;;) {
		p = ptx_lex_plain(p, end);
		if (p >= end)
			break;
		int c = (unsigned char)*p;
		if (c == '\n') {
			P->line++;
			p++;
		} else if (c == '/' || c == '"') {
			if (skip_special(P, &p) < 0)
				return -1;
		} else if (c == '{') {
			depth++;
			p++;
		} else if (c == '}') {
			if (semi && depth == 0) {
				P->p = p;
				return fail_at(P, p, "expected ';' before '}'");
			}
			p++;
			if (--depth == 0 && !semi) {
				P->p = p;
				return 0;
			}
		} else { /* ';' */
			p++;
			if (semi && depth == 0) {
				P->p = p;
				return 0;
			}
		}
	}
	P->p = p;
	return fail_at(P, start, semi ? "unterminated directive: no ';' before the end of the file"
	                              : "unterminated section: no closing '}'");
}

/*
 * until_semicolon := { string | '{' ... '}' | any } ';'
 * Skips through the ';' that ends a directive at brace depth 0 (initialisers
 * hold braces and commas).  Stops with an error at a '}' that would close an
 * enclosing scope.
 */
static int skip_to_semicolon(Parser *P, const char *start)
{
	return skip_balanced(P, start, true);
}

/* section := '.section' name '{' balanced '}' */
static int skip_block(Parser *P, const char *start)
{
	if (trivia(P) < 0)
		return -1;
	while (P->p < P->end && *P->p != '{' && *P->p != '\n')
		P->p++;
	if (trivia(P) < 0)
		return -1;
	if (peek(P) != '{')
		return fail_at(P, P->p, "expected '{' to open the section");
	return skip_balanced(P, start, false);
}

/* ---- operands ------------------------------------------------------------ */

/* Pushes a leaf operand whose extent is known. */
static inline int push_leaf(Parser *P, const char *at, const char *end, OpdKind kind)
{
	Module *m = P->m;
	if (UNLIKELY(m->opds.n == m->opds.cap))
		VEC_GROW(m->opds, m->opds.n + 1);
	size_t len = (size_t)(end - at);
	if (UNLIKELY(len > 0xffff))
		return fail_at(P, at, "operand too long");
	Operand *o = &m->opds.v[m->opds.n++];
	o->off = (uint32_t)(at - P->src);
	o->len = (uint16_t)len;
	o->sub = 0;
	o->kind = (uint8_t)kind;
	o->flags = 0;
	o->addr_terms = 0;
	o->pad = 0;
	return 0;
}

static uint32_t push_opd(Parser *P, const char *at, OpdKind kind)
{
	Operand o = {0};
	o.off = (uint32_t)(at - P->src);
	o.kind = (uint8_t)kind;
	VEC_PUSH(P->m->opds, o);
	return (uint32_t)(P->m->opds.n - 1);
}

static int finish_opd(Parser *P, uint32_t i, const char *end)
{
	Operand *o = &P->m->opds.v[i];
	size_t len = (size_t)(end - P->src) - o->off;
	size_t sub = P->m->opds.n - 1 - i;
	if (len > 0xffff || sub > 0xffff)
		return fail_at(P, P->src + o->off, "operand too long");
	o->len = (uint16_t)len;
	o->sub = (uint16_t)sub;
	return 0;
}

/* number := ['-'] ( 0f hex8 | 0d hex16 | 0x hex+ | 0b [01]+ | digits
 *            [ '.' digits ] [ e [+-] digits ] ) [ 'U' ] */
static int number(Parser *P)
{
	const char *s = P->p, *p = s, *end = P->end;
	OpdKind kind = OPD_INT;
	if (p < end && (*p == '-' || *p == '+'))
		p++;
	if (p >= end || !ptx_lex_is(*p, LX_DIGIT))
		return fail_at(P, s, "expected a number");
	bool is_float;
	p = ptx_lex_number(p, end, &is_float);
	if (is_float)
		kind = OPD_FLOAT;
	if (p < end && ptx_lex_is(*p, LX_IDCONT))
		return fail_at(P, s, "malformed number");
	P->p = p;
	return push_leaf(P, s, p, kind);
}

static int operand(Parser *P, int depth);

/* A bracketed list: open ( elem { ',' elem } )? close.  Empty lists are
 * allowed for '(' only. */
static int bracketed(Parser *P, char close, OpdKind kind, int depth, int addr)
{
	const char *s = P->p;
	uint32_t i = push_opd(P, s, kind);
	P->p++;
	if (trivia(P) < 0)
		return -1;
	if (peek(P) == close && kind == OPD_LIST) {
		P->p++;
		return finish_opd(P, i, P->p);
	}
	for (;;) {
		if (addr) {
			/* address element := term { ('+'|'-') term } */
			uint32_t first = (uint32_t)P->m->opds.n;
			if (operand(P, depth + 1) < 0)
				return -1;
			if (trivia(P) < 0)
				return -1;
			int c = peek(P);
			if (c == '+' || c == '-') {
				/* turn the term into EXPR(term, INT...) */
				Operand ex = P->m->opds.v[first];
				ex.kind = OPD_EXPR;
				ex.flags = 0;
				VEC_PUSH(P->m->opds, ex); /* grow first */
				memmove(&P->m->opds.v[first + 1], &P->m->opds.v[first],
				        (P->m->opds.n - 1 - first) * sizeof(Operand));
				P->m->opds.v[first] = ex;
				while (c == '+' || c == '-') {
					const char *opat = P->p;
					if (c == '+')
						P->p++;
					if (trivia(P) < 0)
						return -1;
					int d = peek(P);
					if (d == '-' ||
					    (d >= 0 && ptx_lex_is(d, LX_DIGIT))) {
						if (number(P) < 0)
							return -1;
						if (c == '+')
							P->m->opds.v[P->m->opds.n - 1].flags |= OPDF_PLUS;
					} else if (c == '+' && d >= 0 &&
					           ptx_lex_is(d, LX_IDSTART)) {
						uint32_t t = (uint32_t)P->m->opds.n;
						if (operand(P, depth + 1) < 0)
							return -1;
						P->m->opds.v[t].flags |= OPDF_PLUS;
					} else
						return fail_at(P, opat, "expected a number after '+' or '-' in an address");
					if (trivia(P) < 0)
						return -1;
					c = peek(P);
				}
				if (finish_opd(P, first, P->p) < 0)
					return -1;
			}
			if (first == i + 1) {
				const Operand *el = &P->m->opds.v[first];
				unsigned terms = 1;
				if (el->kind == OPD_EXPR) {
					terms = 0;
					for (uint32_t k = first + 1; k <= first + el->sub; k = opd_next(P->m, k))
						terms++;
				}
				P->m->opds.v[i].addr_terms = (uint8_t)MIN(terms, 255u);
			}
		} else if (operand(P, depth + 1) < 0)
			return -1;
		if (trivia(P) < 0)
			return -1;
		int c = peek(P);
		if (c == ',') {
			P->p++;
			if (trivia(P) < 0)
				return -1;
			continue;
		}
		if (c == close) {
			P->p++;
			return finish_opd(P, i, P->p);
		}
		char msg[64];
		snprintf(msg, sizeof msg, "expected ',' or '%c'", close);
		return fail_at(P, c < 0 ? P->end : P->p, msg);
	}
}

/* operand := ['!'] ( '{' ... '}' | '[' ... ']' | '(' ... ')' | number
 *            | name ['|' name] | name ('+'|'-') number | '_' | string ) */
static int operand(Parser *P, int depth)
{
	if (depth > 32)
		return fail_at(P, P->p, "operand nested too deeply");
	int c = peek(P);
	switch (c) {
	case '{':
		return bracketed(P, '}', OPD_VEC, depth, 0);
	case '[':
		return bracketed(P, ']', OPD_ADDR, depth, 1);
	case '(':
		return bracketed(P, ')', OPD_LIST, depth, 0);
	case '!': {
		P->p++;
		if (trivia(P) < 0)
			return -1;
		if (peek(P) == '!') /* the model has one NOT flag, PTX one '!' */
			return fail_at(P, P->p, "repeated '!'");
		uint32_t i = (uint32_t)P->m->opds.n;
		if (operand(P, depth + 1) < 0)
			return -1;
		P->m->opds.v[i].flags |= OPDF_NOT;
		return 0;
	}
	case '"': {
		const char *s = P->p;
		if (skip_string(P) < 0)
			return -1;
		uint32_t i = push_opd(P, s, OPD_STRING);
		return finish_opd(P, i, P->p);
	}
	case '-':
	case '+':
		return number(P);
	default:
		break;
	}
	if (c >= 0 && ptx_lex_is(c, LX_DIGIT))
		return number(P);
	if (c < 0 || !ptx_lex_is(c, LX_IDSTART))
		return fail_at(P, c < 0 ? P->end : P->p, c < 0 ? "unexpected end of file in an operand"
		                                              : "unexpected character in an operand");
	const char *s = P->p;
	const char *q = ptx_lex_operand_name(s, P->end);
	OpdKind kind = *s == '%' ? OPD_REG : (q == s + 1 && *s == '_') ? OPD_SINK : OPD_IDENT;
	/* A name followed by '|' (predicate pair) or '+'/'-' number (symbol
	 * offset) becomes a compound operand. */
	P->p = q;
	if (trivia(P) < 0)
		return -1;
	int d = peek(P);
	if (d == '|' || ((d == '+' || d == '-') && depth == 0)) {
		uint32_t i = push_opd(P, s, d == '|' ? OPD_PAIR : OPD_EXPR);
		uint32_t j = push_opd(P, s, kind);
		if (finish_opd(P, j, q) < 0)
			return -1;
		if (d == '|') {
			P->p++;
			if (trivia(P) < 0)
				return -1;
			if (operand(P, depth + 1) < 0)
				return -1;
		} else {
			if (d == '+')
				P->p++;
			if (trivia(P) < 0)
				return -1;
			if (number(P) < 0)
				return -1;
			if (d == '+')
				P->m->opds.v[P->m->opds.n - 1].flags |= OPDF_PLUS;
		}
		return finish_opd(P, i, P->p);
	}
	/* A plain name: P->p stays after the trivia that follows it. */
	return push_leaf(P, s, q, kind);
}

/* ---- statements ---------------------------------------------------------- */

/*
 * Opcode lookup keyed by the component's bytes as a little-endian word: all
 * but a few opcodes are at most 8 bytes, so one multiply-shift hash and one
 * 64-bit compare replace a string hash and memcmp.  Longer ones go to
 * op_lookup.
 */
enum { OPTAB_BITS = 9 };
static struct {
	uint64_t key;
	uint16_t op;
} optab[1u << OPTAB_BITS];
static bool optab_built;

static inline uint32_t optab_hash(uint64_t k)
{
	return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - OPTAB_BITS));
}

static void init_optab(void)
{
	if (optab_built)
		return;
	for (int op = 1; op < OP__COUNT; op++) {
		const char *name = op_name((Op)op);
		size_t n = strlen(name);
		if (n > 8)
			continue;
		uint64_t k = 0;
		memcpy(&k, name, n);
		uint32_t h = optab_hash(k);
		while (optab[h].op)
			h = (h + 1) & ((1u << OPTAB_BITS) - 1);
		optab[h].key = k;
		optab[h].op = (uint16_t)op;
	}
	optab_built = true;
}

static inline Op op_find(const char *s, size_t n, const char *end)
{
	if (n > 8 || n == 0)
		return op_lookup(s, n);
	uint64_t k = 0;
	if (LIKELY(s + 8 <= end)) {
		memcpy(&k, s, 8);
		if (n < 8)
			k &= (1ull << (8 * n)) - 1;
	} else
		memcpy(&k, s, n);
	for (uint32_t h = optab_hash(k);; h = (h + 1) & ((1u << OPTAB_BITS) - 1)) {
		if (optab[h].key == k)
			return (Op)optab[h].op;
		if (!optab[h].op)
			return OP_UNKNOWN;
	}
}

/* Skips blanks; anything else that is trivia goes the general way. */
static inline int blanks(Parser *P)
{
	const char *p = P->p, *end = P->end;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	P->p = p;
	if (p < end && ptx_lex_is(*p, LX_TRIV))
		return trivia_slow(P);
	return 0;
}

/*
 * The shapes that make up nearly every operand of compiler output, parsed
 * without the general machinery: a register or name followed by ',' ';'
 * (or blanks and one of them), "{ reg|int|_, ... }" and "[ name ]" /
 * "[ name+int ]" / "[ name-int ]".  Each builds exactly the operands the
 * general rule would; anything else returns 0 with nothing pushed and P->p
 * untouched, and the caller takes the general path.
 */
static inline const char *fast_name(Parser *P, const char *p, int depth)
{
	const char *end = P->end;
	const char *q = ptx_lex_operand_name(p, end);
	if (UNLIKELY(q >= end))
		return NULL;
	int d = (unsigned char)*q;
	if (d != ',' && d != ';') {
		const char *r = q;
		while (r < end && (*r == ' ' || *r == '\t'))
			r++;
		if (r >= end)
			return NULL;
		d = (unsigned char)*r;
		if (d == '|' || (depth == 0 && (d == '+' || d == '-')) ||
		    ptx_lex_is(d, LX_TRIV))
			return NULL;
	}
	OpdKind kind = *p == '%' ? OPD_REG : (q == p + 1 && *p == '_') ? OPD_SINK : OPD_IDENT;
	if (push_leaf(P, p, q, kind) < 0)
		return NULL;
	return q;
}

static int fast_operand(Parser *P)
{
	Module *m = P->m;
	const char *s = P->p, *end = P->end;
	if (UNLIKELY(s >= end))
		return 0;
	int c = (unsigned char)*s;
	size_t mark = m->opds.n;
	if (ptx_lex_is(c, LX_IDSTART)) {
		const char *q = fast_name(P, s, 0);
		if (!q)
			return 0;
		P->p = q;
		return 1;
	}
	if (c == '{') {
		uint32_t i = push_opd(P, s, OPD_VEC);
		const char *p = s + 1;
		for (;;) {
			while (p < end && *p == ' ')
				p++;
			if (p >= end)
				goto slow;
			int e = (unsigned char)*p;
			if (e == '%' || e == '_') {
				p = fast_name(P, p, 1);
				if (!p)
					goto slow;
			} else if (ptx_lex_is(e, LX_DIGIT) || e == '-') {
				P->p = p;
				if (number(P) < 0) {
					P->failed = 0;
					goto slow;
				}
				p = P->p;
			} else
				goto slow;
			while (p < end && *p == ' ')
				p++;
			if (p >= end)
				goto slow;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p != '}')
				goto slow;
			P->p = p + 1;
			if (finish_opd(P, i, P->p) < 0)
				goto slow;
			return 1;
		}
	}
	if (c == '[') {
		uint32_t i = push_opd(P, s, OPD_ADDR);
		const char *p = s + 1;
		if (p >= end || !ptx_lex_is(*p, LX_IDSTART))
			goto slow;
		const char *q = ptx_lex_operand_name(p, end);
		OpdKind kind = *p == '%' ? OPD_REG : (q == p + 1 && *p == '_') ? OPD_SINK : OPD_IDENT;
		if (q >= end)
			goto slow;
		if (*q == ']') {
			if (push_leaf(P, p, q, kind) < 0)
				goto slow;
			m->opds.v[i].addr_terms = 1;
			P->p = q + 1;
			return finish_opd(P, i, P->p) < 0 ? (P->failed = 0, m->opds.n = mark, P->p = s, 0) : 1;
		}
		if ((*q != '+' && *q != '-') || q + 1 >= end)
			goto slow;
		const char *num = *q == '+' ? q + 1 : q;
		if (!ptx_lex_is(num[0], LX_DIGIT) &&
		    !(num[0] == '-' && num + 1 < end && ptx_lex_is(num[1], LX_DIGIT)))
			goto slow;
		uint32_t ex = push_opd(P, p, OPD_EXPR);
		if (push_leaf(P, p, q, kind) < 0)
			goto slow;
		P->p = num;
		if (number(P) < 0) {
			P->failed = 0;
			goto slow;
		}
		if (*q == '+')
			m->opds.v[m->opds.n - 1].flags |= OPDF_PLUS;
		if (P->p >= end || *P->p != ']')
			goto slow;
		if (finish_opd(P, ex, P->p) < 0)
			goto slow;
		m->opds.v[i].addr_terms = 2;
		P->p++;
		if (finish_opd(P, i, P->p) < 0)
			goto slow;
		return 1;
	}
	return 0;
slow:
	/* Not one of the usual shapes (or a malformed one): forget what was
	 * pushed and let the general rule parse it and report any error. */
	if (P->e && P->failed)
		err_clear(P->e);
	P->failed = 0;
	m->opds.n = mark;
	P->p = s;
	return 0;
}

static int is_mma(const Module *m, const Stmt *s)
{
	switch (s->op) {
	case OP_MMA:
		return 1;
	case OP_WMMA:
		return stmt_opcode_is(m, s, "wmma.mma");
	case OP_WGMMA:
		return stmt_opcode_is(m, s, "wgmma.mma_async");
	default:
		return 0;
	}
}

/* statement := [ '@' ['!'] pred ] opcode [ operand { ',' operand } ] ';'
 * P->p is at '@' or at the opcode's first character. */
static int statement(Parser *P, const char *q1)
{
	Stmt st = {0};
	const char *s = P->p;
	st.off = (uint32_t)(s - P->src);
	st.line = P->line;
	st.opd = (uint32_t)P->m->opds.n;
	if (*P->p == '@') {
		P->p++;
		st.flags |= STMT_GUARD;
		if (trivia(P) < 0)
			return -1;
		if (peek(P) == '!') {
			st.flags |= STMT_GUARD_NOT;
			P->p++;
			if (trivia(P) < 0)
				return -1;
		}
		int c = peek(P);
		if (c < 0 || !ptx_lex_is(c, LX_IDSTART))
			return fail_at(P, c < 0 ? P->end : P->p, "expected a predicate after '@'");
		const char *q = ptx_lex_name(P->p, P->end);
		if (push_leaf(P, P->p, q, *P->p == '%' ? OPD_REG : OPD_IDENT) < 0)
			return -1;
		P->p = q;
		if (trivia(P) < 0)
			return -1;
	}
	const char *op = P->p, *end = P->end;
	if (op >= end || !ptx_lex_is(*op, LX_IDSTART) || *op == '%' || *op == '$')
		return fail_at(P, op >= end ? end : op, "expected an instruction");
	const char *q = q1 ? q1 : ptx_lex_idcont(op + 1, end);
	st.op = (uint16_t)op_find(op, (size_t)(q - op), end);
	/* modifiers: ( '.' word | '::' word )* */
	for (;;) {
		q = ptx_lex_class(q, end, 1);
		if (q + 2 < end && q[0] == ':' && q[1] == ':' &&
		    ptx_lex_is(q[2], LX_IDCONT))
			q += 2;
		else
			break;
	}
	while (q[-1] == '.') /* a trailing '.' is not part of the opcode */
		q--;
	if ((size_t)(q - op) > 0xffff || (size_t)(op - s) > 0xffff)
		return fail_at(P, op, "instruction too long");
	st.oplen = (uint16_t)(q - op);
	st.opdelta = (uint16_t)(op - s);
	P->p = q;
	if (blanks(P) < 0)
		return -1;
	unsigned n = 0;
	if (peek(P) != ';') {
		for (;;) {
			if (!fast_operand(P) && operand(P, 0) < 0)
				return -1;
			if (UNLIKELY(++n > 255))
				return fail_at(P, P->p, "too many operands");
			const char *p = P->p;
			/* ", " before the next operand, or ';': the usual case */
			if (LIKELY(p + 2 < end) && p[0] == ',' && p[1] == ' ' &&
			    !ptx_lex_is(p[2], LX_TRIV)) {
				P->p = p + 2;
				continue;
			}
			if (LIKELY(p < end) && *p == ';')
				break;
			if (blanks(P) < 0)
				return -1;
			int c = peek(P);
			if (c == ',') {
				P->p++;
				if (blanks(P) < 0)
					return -1;
				continue;
			}
			if (c == ';')
				break;
			return fail_at(P, c < 0 ? P->end : P->p,
			               c < 0 ? "unexpected end of file: statement without ';'"
			                     : "expected ',' or ';' after an operand");
		}
	}
	P->p++; /* ';' */
	st.len = (uint32_t)(P->p - s);
	st.nopd = (uint8_t)n;
	if (is_mma(P->m, &st)) {
		st.flags |= STMT_MMA;
		P->m->nmma++;
	}
	VEC_PUSH(P->m->stmts, st);
	return 0;
}

/* ---- declarations -------------------------------------------------------- */

static int is_type_word(const char *p, const char *q)
{
	size_t n = (size_t)(q - p);
	if (n < 2 || p[0] != '.')
		return 0;
	if (word_is(p, q, ".pred") || word_is(p, q, ".texref") || word_is(p, q, ".samplerref") ||
	    word_is(p, q, ".surfref"))
		return 1;
	char c = p[1];
	if (c != 'b' && c != 'u' && c != 's' && c != 'f' && c != 'e' && c != 't')
		return 0;
	return n >= 3 && ptx_lex_is(p[2], LX_DIGIT)
	           ? 1
	           : word_is(p, q, ".tf32") || word_is(p, q, ".bf16") ||
	                 word_is(p, q, ".bf16x2");
}

static uint32_t parse_uint(const char *p, const char *q)
{
	uint64_t v = 0;
	for (; p < q && ptx_lex_is(*p, LX_DIGIT); p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

/* regdecl := '.reg' { directive } name [ '<' N '>' | '[' N ']' ]
 *            { ',' name [...] } ';' */
static int reg_decl(Parser *P, const char *start, uint16_t depth, uint32_t stmt,
                    uint32_t scope)
{
	Span type = {0};
	uint8_t vec = 0;
	size_t first = P->m->regs.n;
	for (;;) {
		if (trivia(P) < 0)
			return -1;
		int c = peek(P);
		if (c == '.') {
			const char *q = ptx_lex_directive(P->p, P->end);
			if (word_is(P->p, q, ".v2"))
				vec = 2;
			else if (word_is(P->p, q, ".v4"))
				vec = 4;
			else if (word_is(P->p, q, ".v8"))
				vec = 8;
			else if (word_is(P->p, q, ".align")) {
				P->p = q;
				if (trivia(P) < 0)
					return -1;
				while (P->p < P->end && ptx_lex_is(*P->p, LX_DIGIT))
					P->p++;
				continue;
			} else
				type = (Span){(uint32_t)(P->p - P->src), (uint32_t)(q - P->p)};
			P->p = q;
			continue;
		}
		if (c < 0 || !ptx_lex_is(c, LX_IDSTART))
			return fail_at(P, c < 0 ? P->end : P->p, "expected a register name in '.reg'");
		break;
	}
	for (;;) {
		const char *n0 = P->p, *n1 = ptx_lex_name(P->p, P->end);
		RegDecl r = {0};
		r.name = (Span){(uint32_t)(n0 - P->src), (uint32_t)(n1 - n0)};
		r.type = type;
		r.vec = vec;
		r.depth = depth;
		r.stmt = stmt;
		r.scope = scope;
		r.count = 1;
		P->p = n1;
		if (trivia(P) < 0)
			return -1;
		int c = peek(P);
		if (c == '<' || c == '[') {
			char close = c == '<' ? '>' : ']';
			P->p++;
			if (trivia(P) < 0)
				return -1;
			const char *d0 = P->p;
			while (P->p < P->end && ptx_lex_is(*P->p, LX_DIGIT))
				P->p++;
			if (P->p == d0)
				return fail_at(P, P->p, "expected a register count");
			r.count = parse_uint(d0, P->p);
			r.range = c == '<';
			if (trivia(P) < 0)
				return -1;
			if (peek(P) != close)
				return fail_at(P, P->p, close == '>' ? "expected '>'" : "expected ']'");
			P->p++;
			if (trivia(P) < 0)
				return -1;
			c = peek(P);
		}
		VEC_PUSH(P->m->regs, r);
		if (c == ',') {
			P->p++;
			if (trivia(P) < 0)
				return -1;
			c = peek(P);
			if (c < 0 || !ptx_lex_is(c, LX_IDSTART))
				return fail_at(P, c < 0 ? P->end : P->p, "expected a register name");
			continue;
		}
		if (c == ';') {
			P->p++;
			break;
		}
		return fail_at(P, c < 0 ? P->end : P->p, "expected ',' or ';' in '.reg'");
	}
	Span decl = {(uint32_t)(start - P->src), (uint32_t)(P->p - start)};
	for (size_t i = first; i < P->m->regs.n; i++)
		P->m->regs.v[i].decl = decl;
	return 0;
}

/* param := ('.param'|'.reg') { directive | N } name [ '[' N ']' ] */
static int param(Parser *P, int is_ret)
{
	Param pr = {0};
	const char *s = P->p;
	pr.is_ret = (uint8_t)is_ret;
	for (;;) {
		if (trivia(P) < 0)
			return -1;
		int c = peek(P);
		if (c == '.') {
			const char *q = ptx_lex_directive(P->p, P->end);
			if (word_is(P->p, q, ".param"))
				pr.space = 'p';
			else if (word_is(P->p, q, ".reg"))
				pr.space = 'r';
			else if (word_is(P->p, q, ".align")) {
				P->p = q;
				if (trivia(P) < 0)
					return -1;
				const char *d0 = P->p;
				while (P->p < P->end && ptx_lex_is(*P->p, LX_DIGIT))
					P->p++;
				pr.align = parse_uint(d0, P->p);
				continue;
			} else if (is_type_word(P->p, q))
				pr.type = (Span){(uint32_t)(P->p - P->src), (uint32_t)(q - P->p)};
			P->p = q;
			continue;
		}
		if (c >= 0 && ptx_lex_is(c, LX_IDSTART)) {
			const char *q = ptx_lex_name(P->p, P->end);
			pr.name = (Span){(uint32_t)(P->p - P->src), (uint32_t)(q - P->p)};
			P->p = q;
			continue;
		}
		if (c == '[') {
			P->p++;
			if (trivia(P) < 0)
				return -1;
			const char *d0 = P->p;
			while (P->p < P->end && ptx_lex_is(*P->p, LX_DIGIT))
				P->p++;
			pr.array = parse_uint(d0, P->p);
			if (trivia(P) < 0)
				return -1;
			if (peek(P) != ']')
				return fail_at(P, P->p, "expected ']' in a parameter");
			P->p++;
			continue;
		}
		if (c == ',' || c == ')')
			break;
		return fail_at(P, c < 0 ? P->end : P->p, "unexpected character in a parameter list");
	}
	if (!pr.name.len)
		return fail_at(P, s, "parameter without a name");
	const char *e = P->p;
	while (e > s && ptx_lex_is(e[-1], LX_SPACE))
		e--;
	pr.text = (Span){(uint32_t)(s - P->src), (uint32_t)(e - s)};
	VEC_PUSH(P->m->params, pr);
	return 0;
}

/* params := '(' [ param { ',' param } ] ')' */
static int params(Parser *P, int is_ret)
{
	P->p++;
	if (trivia(P) < 0)
		return -1;
	if (peek(P) == ')') {
		P->p++;
		return 0;
	}
	for (;;) {
		if (param(P, is_ret) < 0)
			return -1;
		int c = peek(P);
		P->p++;
		if (c == ')')
			return 0;
		if (trivia(P) < 0)
			return -1;
	}
}

/*
 * body := { '{' body '}' | label ':' | directive | statement } '}'
 * P->p is just after the body's '{'.  Records the body's scopes (module.h):
 * scope 0 for the body, one more for each '{' at the start of a body item.
 */
static int body(Parser *P, Func *fn, const char *fstart)
{
	Module *m = P->m;
	uint16_t depth = 1;
	uint32_t stmt0 = (uint32_t)m->stmts.n;
	uint32_t scope0 = (uint32_t)m->scopes.n, cur = 0; /* innermost open scope */
	Scope top = {.open = fn->body_open, .depth = 1};
	VEC_PUSH(m->scopes, top);
	fn->scope0 = scope0;
	for (;;) {
		if (trivia(P) < 0)
			return -1;
		if (at_end(P))
			return fail_at(P, fstart, "unterminated function body: no closing '}'");
		const char *s = P->p;
		int c = (unsigned char)*s;
		if (c == '{') {
			if (depth == 0xffff)
				return fail_at(P, s, "scopes nested too deeply");
			depth++;
			Scope sc = {.open = (uint32_t)(s - P->src),
			            .stmt0 = (uint32_t)m->stmts.n - stmt0,
			            .parent = cur,
			            .depth = depth};
			VEC_PUSH(m->scopes, sc);
			cur = (uint32_t)m->scopes.n - 1 - scope0;
			P->p++;
			continue;
		}
		if (c == '}') {
			Scope *sc = &m->scopes.v[scope0 + cur];
			sc->close = (uint32_t)(s - P->src);
			sc->nstmt = (uint32_t)m->stmts.n - stmt0 - sc->stmt0;
			cur = sc->parent;
			P->p++;
			if (--depth == 0) {
				fn->body_close = sc->close;
				fn->nscope = (uint32_t)m->scopes.n - scope0;
				return 0;
			}
			continue;
		}
		if (c == '.') {
			const char *q = ptx_lex_directive(s, P->end);
			P->p = q;
			if (word_is(s, q, ".reg")) {
				uint32_t next = (uint32_t)m->stmts.n - stmt0;
				if (reg_decl(P, s, depth, next, cur) < 0)
					return -1;
			} else if (word_is(s, q, ".loc") || word_is(s, q, ".file")) {
				skip_line(P);
			} else if (word_is(s, q, ".section")) {
				if (skip_block(P, s) < 0)
					return -1;
			} else if (q == s + 1) {
				return fail_at(P, s, "unexpected '.'");
			} else if (skip_to_semicolon(P, s) < 0)
				return -1;
			continue;
		}
		if (c == '@') {
			if (statement(P, NULL) < 0)
				return -1;
			continue;
		}
		if (ptx_lex_is(c, LX_IDSTART)) {
			const char *q = ptx_lex_name(s, P->end);
			/* "word." or "word;" can only start an instruction */
			if (q < P->end && (*q == '.' || *q == ';') && c != '%') {
				if (statement(P, q) < 0)
					return -1;
				continue;
			}
			const char *after = q;
			uint32_t line = P->line;
			P->p = q;
			if (trivia(P) < 0)
				return -1;
			if (peek(P) == ':' && peek2(P) != ':') {
				Span nm = {(uint32_t)(s - P->src), (uint32_t)(after - s)};
				Label l = {nm, (uint32_t)m->stmts.n - stmt0, line, cur};
				VEC_PUSH(P->m->labels, l);
				P->p++;
				continue;
			}
			P->p = s;
			P->line = line;
			if (statement(P, NULL) < 0)
				return -1;
			continue;
		}
		if (c == ';')
			return fail_at(P, s, "empty statement");
		return fail_at(P, s, "unexpected character in a function body");
	}
}

/*
 * function := linkage* ('.entry'|'.func') [ '(' params ')' ] name
 *             [ '(' params ')' ] perf-directive* ( '{' body '}' | ';' )
 * P->p is just after the .entry/.func word; `start` is the first linkage word.
 */
static int function(Parser *P, const char *start, FuncKind kind, uint8_t flags)
{
	Func fn = {0};
	fn.kind = (uint8_t)kind;
	fn.flags = flags;
	fn.param0 = (uint32_t)P->m->params.n;
	fn.reg0 = (uint32_t)P->m->regs.n;
	fn.label0 = (uint32_t)P->m->labels.n;
	fn.stmt0 = (uint32_t)P->m->stmts.n;
	if (trivia(P) < 0)
		return -1;
	if (peek(P) == '(') {
		if (params(P, 1) < 0)
			return -1;
		if (trivia(P) < 0)
			return -1;
	}
	int c = peek(P);
	if (c < 0 || !ptx_lex_is(c, LX_IDSTART))
		return fail_at(P, c < 0 ? P->end : P->p, "expected a function name");
	const char *q = ptx_lex_name(P->p, P->end);
	fn.name = (Span){(uint32_t)(P->p - P->src), (uint32_t)(q - P->p)};
	P->p = q;
	for (;;) {
		if (trivia(P) < 0)
			return -1;
		c = peek(P);
		if (c == '(') {
			if (params(P, 0) < 0)
				return -1;
			continue;
		}
		if (c == '.') {
			const char *d = P->p, *e = ptx_lex_directive(d, P->end);
			P->p = e;
			if (word_is(d, e, ".noreturn")) {
				fn.flags |= FNF_NORETURN;
				continue;
			}
			if (word_is(d, e, ".pragma")) {
				if (skip_to_semicolon(P, d) < 0)
					return -1;
				continue;
			}
			if (word_is(d, e, ".attribute")) {
				if (trivia(P) < 0)
					return -1;
				if (peek(P) == '(') {
					while (P->p < P->end && *P->p != ')')
						P->p++;
					if (at_end(P))
						return fail_at(P, d, "unterminated '.attribute('");
					P->p++;
				}
				continue;
			}
			/* .maxntid 128, 1, 1 / .reqntid / .minnctapersm N / .maxnreg N
			 * / .maxclusterrank / .reqnctapercluster / .explicitcluster /
			 * .blocksareclusters: numbers and commas. */
			for (;;) {
				if (trivia(P) < 0)
					return -1;
				int d2 = peek(P);
				if (d2 >= 0 && (ptx_lex_is(d2, LX_DIGIT) || d2 == ','))
					P->p++;
				else
					break;
			}
			continue;
		}
		break;
	}
	fn.header = (Span){(uint32_t)(start - P->src), pos(P) - (uint32_t)(start - P->src)};
	if (c == ';') {
		P->p++;
		fn.flags |= FNF_DECL;
	} else if (c == '{') {
		fn.body_open = pos(P);
		P->p++;
		if (body(P, &fn, start) < 0)
			return -1;
	} else
		return fail_at(P, c < 0 ? P->end : P->p, "expected '{' or ';' after the function header");
	fn.nparam = (uint32_t)P->m->params.n - fn.param0;
	fn.nreg = (uint32_t)P->m->regs.n - fn.reg0;
	fn.nlabel = (uint32_t)P->m->labels.n - fn.label0;
	fn.nstmt = (uint32_t)P->m->stmts.n - fn.stmt0;
	fn.text = (Span){(uint32_t)(start - P->src), pos(P) - (uint32_t)(start - P->src)};
	VEC_PUSH(P->m->funcs, fn);
	Item it = {fn.text, fn.name, (uint32_t)(P->m->funcs.n - 1), ITEM_FUNC};
	VEC_PUSH(P->m->items, it);
	return 0;
}

/*
 * declaration := { linkage | space | directive | name | '[' N ']' } ( function | ';' )
 * A module-level declaration that is not a line directive: a variable
 * (through ';', initialiser included) or a function.
 */
static int declaration(Parser *P, const char *start)
{
	static const char *const spaces[] = {".shared", ".global", ".const", ".local",
	                                     ".param", ".tex"};
	static const char space_code[] = "sgclpt";
	uint8_t flags = 0, space = 0, vflags = 0;
	Span name = {0};
	for (;;) {
		if (trivia(P) < 0)
			return -1;
		int c = peek(P);
		if (c == '.') {
			const char *d = P->p, *e = ptx_lex_directive(d, P->end);
			P->p = e;
			if (word_is(d, e, ".entry"))
				return function(P, start, FN_ENTRY, flags);
			if (word_is(d, e, ".func"))
				return function(P, start, FN_FUNC, flags);
			if (word_is(d, e, ".visible"))
				flags |= FNF_VISIBLE;
			else if (word_is(d, e, ".extern"))
				flags |= FNF_EXTERN, vflags |= ITEMF_EXTERN;
			else if (word_is(d, e, ".weak"))
				flags |= FNF_WEAK;
			else if (word_is(d, e, ".attribute")) {
				if (trivia(P) < 0)
					return -1;
				if (peek(P) == '(') {
					while (P->p < P->end && *P->p != ')')
						P->p++;
					if (at_end(P))
						return fail_at(P, d, "unterminated '.attribute('");
					P->p++;
				}
			} else if (!space) {
				for (size_t k = 0; k < ARRAY_SIZE(spaces); k++)
					if (word_is(d, e, spaces[k]))
						space = (uint8_t)space_code[k];
			}
			continue;
		}
		if (c >= 0 && ptx_lex_is(c, LX_IDSTART)) {
			const char *q = ptx_lex_name(P->p, P->end);
			name = (Span){pos(P), (uint32_t)(q - P->p)};
			P->p = q;
			continue;
		}
		if (c >= 0 &&
		    (ptx_lex_is(c, LX_DIGIT) || c == ',' || c == '<' || c == '>')) {
			P->p++;
			continue;
		}
		if (c == '[') {
			if (name.len && pos(P) == name.off + name.len && P->p + 1 < P->end &&
			    P->p[1] == ']')
				vflags |= ITEMF_UNSIZED; /* "name[]" */
			while (P->p < P->end && *P->p != ']')
				P->p++;
			if (at_end(P))
				return fail_at(P, start, "unterminated '['");
			P->p++;
			continue;
		}
		if (c == '=' || c == ';') {
			if (skip_to_semicolon(P, start) < 0)
				return -1;
			Item it = {{(uint32_t)(start - P->src), pos(P) - (uint32_t)(start - P->src)},
			           name, 0, ITEM_VAR, space, vflags};
			VEC_PUSH(P->m->items, it);
			return 0;
		}
		if (c < 0)
			return fail_at(P, start, "unterminated declaration: no ';' before the end of the file");
		return fail_at(P, P->p, "unexpected character in a declaration");
	}
}

/* module := { directive | declaration } */
static int module(Parser *P)
{
	for (;;) {
		if (trivia(P) < 0)
			return -1;
		if (at_end(P))
			return 0;
		const char *s = P->p;
		if (*s == 0x7f && P->end - s >= 4 && !memcmp(s, "\177ELF", 4))
			return fail_at(P, s,
			               "expected a directive (this does not look like PTX: an ELF "
			               "file, a cubin? a captured layer without PTX is replay-only: "
			               "run replays it; phases, recipes and splices need its PTX, "
			               "capture --ptx-from DIR)");
		if (*s != '.')
			return fail_at(P, s, "expected a directive (this does not look like PTX)");
		const char *q = ptx_lex_directive(s, P->end);
		if (q == s + 1)
			return fail_at(P, s, "expected a directive name after '.'");
		P->p = q;
		ItemKind kind = ITEM_OTHER;
		Span *value = NULL;
		if (word_is(s, q, ".version"))
			kind = ITEM_VERSION, value = &P->m->version;
		else if (word_is(s, q, ".target"))
			kind = ITEM_TARGET, value = &P->m->target;
		else if (word_is(s, q, ".address_size"))
			kind = ITEM_ADDRESS_SIZE, value = &P->m->address_size;
		else if (word_is(s, q, ".file") || word_is(s, q, ".loc"))
			kind = word_is(s, q, ".file") ? ITEM_FILE : ITEM_OTHER;
		else if (word_is(s, q, ".section")) {
			if (skip_block(P, s) < 0)
				return -1;
			Item it = {{(uint32_t)(s - P->src), pos(P) - (uint32_t)(s - P->src)}, {0}, 0,
			           ITEM_SECTION};
			VEC_PUSH(P->m->items, it);
			continue;
		} else if (word_is(s, q, ".pragma") || word_is(s, q, ".alias")) {
			if (skip_to_semicolon(P, s) < 0)
				return -1;
			Item it = {{(uint32_t)(s - P->src), pos(P) - (uint32_t)(s - P->src)}, {0}, 0,
			           word_is(s, q, ".pragma") ? ITEM_PRAGMA : ITEM_OTHER};
			VEC_PUSH(P->m->items, it);
			continue;
		} else {
			P->p = s;
			if (declaration(P, s) < 0)
				return -1;
			continue;
		}
		/* line-terminated directive */
		const char *v0 = P->p;
		while (v0 < P->end && (*v0 == ' ' || *v0 == '\t'))
			v0++;
		const char *e = skip_line(P);
		if (value)
			*value = (Span){(uint32_t)(v0 - P->src), e > v0 ? (uint32_t)(e - v0) : 0};
		Item it = {{(uint32_t)(s - P->src), (uint32_t)(e - s)}, {0}, 0, (uint8_t)kind};
		VEC_PUSH(P->m->items, it);
	}
}

Module *ptx_parse(const char *name, const char *src, size_t len, Err *e)
{
	init_optab();
	if (len >= 0xffffffffu) {
		err_set(e, "%s: file too large (%zu bytes; at most 4 GiB)", name, len);
		return NULL;
	}
	Module *m = xcalloc(1, sizeof(*m));
	m->name = name;
	m->src = src;
	m->len = len;
	arena_init(&m->arena, 0);
	/* Size the arrays from the length so that a large module never grows
	 * them: every statement ends in ';', and the toolkit's modules of more
	 * than 100 kB have at least 30 bytes per ';' (37 on average) and at most
	 * 3.7 operands per ';'.  Only what is used is ever touched (and so
	 * resident); a module denser than that grows its arrays by realloc. */
	size_t semis = len / 24;
	VEC_GROW(m->stmts, semis + 16);
	VEC_GROW(m->opds, semis * 4 + 64);
	Parser P = {name, src, src, src + len, 1, m, e, 0};
	if (module(&P) < 0) {
		mod_free(m);
		return NULL;
	}
	if (!m->version.len) {
		/* Every PTX module starts with .version: without it this is not
		 * PTX (an empty file, a comment, a fragment). */
		if (len == 0)
			err_set(e, "%s: empty file: not a PTX module", name);
		else
			err_at(e, name, src, len, 0, "no '.version' directive: not a PTX module");
		mod_free(m);
		return NULL;
	}
	return m;
}
