/*
 * lex.c - the PTX lexer (see lex.h): the class table, trivia, strings,
 * numbers, line directives, and the token reader.
 *
 * The parser calls the scanners directly from its hot loops (the inline
 * ones in lex.h, these for the rarer cases), so they take and return plain
 * pointers and keep no state.  The token reader is built from the same
 * scanners, which is what makes every reader of PTX text agree on where a
 * comment, a string or a name ends.
 */
#include "lex.h"

#include <string.h>

#define SP (LX_SPACE | LX_TRIV)
#define AL (LX_IDSTART | LX_IDCONT | LX_OPC)
#define AH (AL | LX_HEX)
#define DG (LX_IDCONT | LX_DIGIT | LX_HEX | LX_OPC)

/* clang-format off */
const unsigned char ptx_lex_cls[256] = {
	['\t'] = SP, ['\n'] = SP | LX_STOP, ['\v'] = SP, ['\f'] = SP, ['\r'] = SP, [' '] = SP,
	['"'] = LX_STOP, ['$'] = AL, ['%'] = LX_IDSTART, ['.'] = LX_OPC,
	['/'] = LX_TRIV | LX_STOP, [';'] = LX_STOP, ['{'] = LX_STOP, ['}'] = LX_STOP,
	['_'] = AL,
	['0'] = DG, ['1'] = DG, ['2'] = DG, ['3'] = DG, ['4'] = DG,
	['5'] = DG, ['6'] = DG, ['7'] = DG, ['8'] = DG, ['9'] = DG,
	['A'] = AH, ['B'] = AH, ['C'] = AH, ['D'] = AH, ['E'] = AH, ['F'] = AH,
	['G'] = AL, ['H'] = AL, ['I'] = AL, ['J'] = AL, ['K'] = AL, ['L'] = AL, ['M'] = AL,
	['N'] = AL, ['O'] = AL, ['P'] = AL, ['Q'] = AL, ['R'] = AL, ['S'] = AL, ['T'] = AL,
	['U'] = AL, ['V'] = AL, ['W'] = AL, ['X'] = AL, ['Y'] = AL, ['Z'] = AL,
	['a'] = AH, ['b'] = AH, ['c'] = AH, ['d'] = AH, ['e'] = AH, ['f'] = AH,
	['g'] = AL, ['h'] = AL, ['i'] = AL, ['j'] = AL, ['k'] = AL, ['l'] = AL, ['m'] = AL,
	['n'] = AL, ['o'] = AL, ['p'] = AL, ['q'] = AL, ['r'] = AL, ['s'] = AL, ['t'] = AL,
	['u'] = AL, ['v'] = AL, ['w'] = AL, ['x'] = AL, ['y'] = AL, ['z'] = AL,
};
/* clang-format on */

const char *ptx_lex_trivia(const char *p, const char *end, uint32_t *lines)
{
	uint32_t nl = 0;
	for (;;) {
		while (p < end && ptx_lex_is(*p, LX_SPACE)) {
			nl += *p == '\n';
			p++;
		}
		if (p + 1 < end && p[0] == '/') {
			if (p[1] == '/') {
				const char *q = memchr(p, '\n', (size_t)(end - p));
				p = q ? q : end;
				continue;
			}
			if (p[1] == '*') {
				const char *q = p + 2;
				uint32_t k = 0;
				while (q + 1 < end && !(q[0] == '*' && q[1] == '/'))
					k += *q++ == '\n';
				if (q + 1 >= end)
					break; /* unterminated: not trivia */
				nl += k;
				p = q + 2;
				continue;
			}
		}
		break;
	}
	if (lines)
		*lines += nl;
	return p;
}

const char *ptx_lex_string(const char *p, const char *end, bool *closed)
{
	p++;
	while (p < end && *p != '"' && *p != '\n')
		p += (*p == '\\' && p + 1 < end) ? 2 : 1;
	*closed = p < end && *p == '"';
	return *closed ? p + 1 : p;
}

const char *ptx_lex_number(const char *p, const char *end, bool *is_float)
{
	*is_float = false;
	if (p + 1 < end && p[0] == '0' &&
	    (p[1] == 'f' || p[1] == 'F' || p[1] == 'd' || p[1] == 'D')) {
		*is_float = true;
		p += 2;
		while (p < end && ptx_lex_is(*p, LX_HEX))
			p++;
	} else if (p + 1 < end && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		while (p < end && ptx_lex_is(*p, LX_HEX))
			p++;
	} else if (p + 1 < end && p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
		p += 2;
		while (p < end && (*p == '0' || *p == '1'))
			p++;
	} else {
		while (p < end && ptx_lex_is(*p, LX_DIGIT))
			p++;
		if (p < end && *p == '.' && p + 1 < end && ptx_lex_is(p[1], LX_DIGIT)) {
			*is_float = true;
			p++;
			while (p < end && ptx_lex_is(*p, LX_DIGIT))
				p++;
		}
		if (*is_float && p < end && (*p == 'e' || *p == 'E')) {
			p++;
			if (p < end && (*p == '+' || *p == '-'))
				p++;
			while (p < end && ptx_lex_is(*p, LX_DIGIT))
				p++;
		}
	}
	if (p < end && (*p == 'U' || *p == 'u'))
		p++;
	return p;
}

const char *ptx_lex_line_end(const char *p, const char *end)
{
	const char *last = p;
	while (p < end && *p != '\n') {
		if (*p == '"') {
			bool closed;
			p = last = ptx_lex_string(p, end, &closed);
			continue;
		}
		if (p + 1 < end && p[0] == '/' && (p[1] == '/' || p[1] == '*'))
			break;
		if (!ptx_lex_is(*p, LX_SPACE))
			last = p + 1;
		p++;
	}
	return last;
}

const char *ptx_lex_solid(const char *p, const char *end)
{
	while (p < end) {
		unsigned c = (unsigned char)*p;
		if (LIKELY(!ptx_lex_is(c, LX_TRIV) && c != '"')) {
			p++;
			continue;
		}
		if (c == '"') {
			bool closed;
			p = ptx_lex_string(p, end, &closed);
			continue;
		}
		if (ptx_lex_is(c, LX_SPACE) ||
		    (p + 1 < end && (p[1] == '/' || p[1] == '*')))
			break;
		p++; /* a '/' that starts no comment */
	}
	return p;
}

static uint32_t newlines(const char *p, size_t n)
{
	uint32_t k = 0;
	for (const char *end = p + n; (p = memchr(p, '\n', (size_t)(end - p))) != NULL;
	     p++)
		k++;
	return k;
}

Token ptx_lex_next(Lexer *lx)
{
	const char *p = lx->p, *end = lx->end, *q;
	Token t = {p, 0, TK_END};
	if (p >= end)
		return t;
	unsigned c = (unsigned char)*p;
	unsigned cl = ptx_lex_cls[c];
	if (cl & LX_SPACE) {
		q = p + 1;
		while (q < end && ptx_lex_is(*q, LX_SPACE))
			q++;
		t.kind = TK_SPACE;
	} else if (c == '/' && p + 1 < end && (p[1] == '/' || p[1] == '*')) {
		if (p[1] == '/') {
			q = memchr(p, '\n', (size_t)(end - p));
			q = q ? q : end;
			t.kind = TK_COMMENT;
		} else {
			q = p + 2;
			while (q + 1 < end && !(q[0] == '*' && q[1] == '/'))
				q++;
			if (q + 1 < end) {
				q += 2;
				t.kind = TK_COMMENT;
			} else {
				q = end;
				t.kind = TK_BAD;
			}
		}
	} else if (c == '"') {
		bool closed;
		q = ptx_lex_string(p, end, &closed);
		t.kind = closed ? TK_STRING : TK_BAD;
	} else if ((cl & LX_IDSTART) &&
	           (c != '%' || (p + 1 < end && ptx_lex_is(p[1], LX_IDCONT)))) {
		q = ptx_lex_name(p, end);
		t.kind = TK_NAME;
	} else if (c == '.' && p + 1 < end && ptx_lex_is(p[1], LX_IDCONT)) {
		q = ptx_lex_directive(p, end);
		t.kind = TK_DIRECTIVE;
	} else if (cl & LX_DIGIT) {
		bool fl;
		q = ptx_lex_number(p, end, &fl);
		t.kind = TK_NUMBER;
	} else {
		q = p + 1;
		t.kind = TK_PUNCT;
	}
	t.n = (uint32_t)(q - p);
	if (t.kind == TK_SPACE || t.kind == TK_COMMENT || t.kind == TK_STRING ||
	    t.kind == TK_BAD)
		lx->line += newlines(p, t.n);
	lx->p = q;
	return t;
}
