/*
 * lex.h - the PTX lexer: the one place that knows how PTX text is cut into
 * comments, whitespace, strings, names, directives, numbers and punctuation.
 *
 * Two interfaces over the same definitions:
 *
 *  - Scanners: a character-class table and functions that return where a
 *    name, directive, number, string, run of trivia (whitespace and
 *    comments) or run of solid bytes ends.  They take and return plain
 *    pointers on [p, end), never read past end and keep no state, so the
 *    parser calls them from its hot loops (the short ones are inline), and
 *    the emitter's self-check and normalised statement text are a loop of
 *    ptx_lex_trivia and ptx_lex_solid.
 *  - A token reader, ptx_lex_next, for readers that need every byte
 *    classified (templates, the fuzz target): it returns every byte of the
 *    input in exactly one token, trivia included, so a caller can copy, drop
 *    or rewrite each kind as it needs.
 *
 * Decisions:
 *  - Tokens are {p, n, kind} pointing into the text: nothing is copied and
 *    nothing is allocated.
 *  - A string is '"' ... '"' with backslash escapes (an escaped newline is
 *    part of it), on one line: a string that a newline or the end of the
 *    text ends first is unterminated (the parser rejects it; the token
 *    reader returns it as TK_BAD up to that newline).
 *  - A block comment without its closing "* /" is not trivia: ptx_lex_trivia
 *    stops at its '/', and the token reader returns TK_BAD to the end.
 *  - A '%' that no name byte follows (a template's "%{") is punctuation.
 *  - The class table is a constant (no initialisation, safe on any thread).
 */
#ifndef D4R_PTX_LEX_H
#define D4R_PTX_LEX_H

#include "base/base.h"

#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Character classes: bits of ptx_lex_cls[c]. */
enum {
	LX_SPACE = 1,   /* ' ' \t \n \r \f \v */
	LX_IDSTART = 2, /* [A-Za-z_$%]: first byte of a name */
	LX_IDCONT = 4,  /* [A-Za-z0-9_$]: the rest of a name */
	LX_DIGIT = 8,
	LX_HEX = 16,
	LX_TRIV = 32,  /* whitespace or '/': trivia may start here */
	LX_OPC = 64,   /* IDCONT or '.': inside an opcode token */
	LX_STOP = 128, /* ; { } " / newline: what ptx_lex_plain stops at */
};
extern const unsigned char ptx_lex_cls[256];

static inline bool ptx_lex_is(int c, unsigned cls)
{
	return (ptx_lex_cls[(unsigned char)c] & cls) != 0;
}

/*
 * Scans [A-Za-z0-9_$]* (with `dot`, also '.') from p; returns the first byte
 * after it.  Names in vendor PTX are long (mangled C++ parameter names run
 * past 100 bytes), so with SSE2 sixteen bytes are classified at once:
 * letters by folding case and one biased signed compare, digits likewise,
 * '_' '$' '.' by equality.  The vector path only loads inside [p, end); the
 * tail is scalar.
 */
#ifdef __SSE2__
static inline unsigned ptx_lex_idcont_mask(__m128i v, int dot)
{
	__m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
	__m128i letter =
	    _mm_cmplt_epi8(_mm_add_epi8(lower, _mm_set1_epi8((char)(0x80 - 'a'))),
	                   _mm_set1_epi8((char)(0x80 + 26)));
	__m128i digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - '0'))),
	                               _mm_set1_epi8((char)(0x80 + 10)));
	__m128i ok = _mm_or_si128(letter, digit);
	ok = _mm_or_si128(ok, _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
	ok = _mm_or_si128(ok, _mm_cmpeq_epi8(v, _mm_set1_epi8('$')));
	if (dot)
		ok = _mm_or_si128(ok, _mm_cmpeq_epi8(v, _mm_set1_epi8('.')));
	return (unsigned)_mm_movemask_epi8(ok);
}
#endif

static inline const char *ptx_lex_class(const char *p, const char *end, int dot)
{
#ifdef __SSE2__
	while (p + 16 <= end) {
		unsigned m = ~ptx_lex_idcont_mask(
		                 _mm_loadu_si128((const __m128i *)(const void *)p), dot) &
		             0xffffu;
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	unsigned char want = dot ? LX_OPC : LX_IDCONT;
	while (p < end && (ptx_lex_cls[(unsigned char)*p] & want))
		p++;
	return p;
}

/* [A-Za-z0-9_$]* from p.  Most names (registers) are a few bytes: eight are
 * looked at one by one before going wide. */
static inline const char *ptx_lex_idcont(const char *p, const char *end)
{
	if (LIKELY(p + 8 <= end)) {
		for (int i = 0; i < 8; i++)
			if (!ptx_lex_is(p[i], LX_IDCONT))
				return p + i;
		p += 8;
	}
	return ptx_lex_class(p, end, 0);
}

/*
 * name := [%A-Za-z_$][A-Za-z0-9_$]* ; a '%' name may carry ".x"-style
 * components (%tid.x, %r1.y).  p is at the first byte (an LX_IDSTART one);
 * returns the end.  The sixteen bytes after the first are classified at
 * once: registers ("%r2352") end inside them.
 */
static inline const char *ptx_lex_name(const char *p, const char *end)
{
	const char *q = p + 1;
#ifdef __SSE2__
	unsigned m;
	if (LIKELY(q + 16 <= end) &&
	    (m = ~ptx_lex_idcont_mask(_mm_loadu_si128((const __m128i *)(const void *)q),
	                              0) &
	         0xffffu))
		q += __builtin_ctz(m);
	else
#endif
		q = ptx_lex_class(q, end, 0);
	if (*p == '%')
		while (q + 1 < end && *q == '.' && ptx_lex_is(q[1], LX_IDSTART) &&
		       q[1] != '%')
			q = ptx_lex_idcont(q + 1, end);
	return q;
}

/*
 * operand-name := name [ '.' ( x | y | z | w | r | g | b | a ) ]
 * A name in operand position: a vector variable declared without '%'
 * (`.reg .v4 .b32 a;`) is used one element at a time as `a.x` ... `a.w` or
 * `a.r` ... `a.a` (the PTX ISA's vector element selectors); a '%' name
 * takes its components in ptx_lex_name already.
 */
static inline const char *ptx_lex_operand_name(const char *p, const char *end)
{
	const char *q = ptx_lex_name(p, end);
	if (*p != '%' && q + 1 < end && q[0] == '.' && memchr("xyzwrgba", q[1], 8) &&
	    (q + 2 >= end || !ptx_lex_is(q[2], LX_IDCONT)))
		q += 2;
	return q;
}
/* directive := '.' [A-Za-z0-9_$]* ( '::' [A-Za-z0-9_$]+ )*; p is at '.'. */
static inline const char *ptx_lex_directive(const char *p, const char *end)
{
	p = ptx_lex_idcont(p + 1, end);
	while (p + 2 < end && p[0] == ':' && p[1] == ':' && ptx_lex_is(p[2], LX_IDCONT))
		p = ptx_lex_idcont(p + 2, end);
	return p;
}

/* Steps over bytes that need no attention when skipping a balanced region
 * (anything but ; { } " / newline); returns the next one that does. */
static inline const char *ptx_lex_plain(const char *p, const char *end)
{
	while (p < end && !ptx_lex_is(*p, LX_STOP))
		p++;
	return p;
}

/*
 * trivia := { whitespace | '//' ... newline | '/ *' ... '* /' }
 * Returns the first byte from p on that is not whitespace or part of a
 * complete comment; adds the newlines stepped over to *lines (may be NULL).
 * At an unterminated block comment it stops at the comment's '/':
 * ptx_lex_open_comment tells that case.
 */
const char *ptx_lex_trivia(const char *p, const char *end, uint32_t *lines);

/* Does a block comment start at p? (After ptx_lex_trivia: one that never
 * closes.) */
static inline bool ptx_lex_open_comment(const char *p, const char *end)
{
	return p + 1 < end && p[0] == '/' && p[1] == '*';
}

/* string := '"' { '\' any | any but '"' and newline } '"'; p is at '"'.
 * Returns the byte after the closing quote with *closed set; when the line
 * or the text ends first, *closed is false and the result is that newline
 * (or end). */
const char *ptx_lex_string(const char *p, const char *end, bool *closed);

/*
 * number := 0f hex* | 0d hex* | 0x hex* | 0b [01]* | digits [ '.' digits ]
 *           [ e [+-] digits ] , then an optional 'U'.
 * p is at a digit (a sign is the caller's); returns the end, and sets
 * *is_float for 0f/0d and decimal fractions.  A name byte right after the
 * end means a malformed number; the caller decides.
 */
const char *ptx_lex_number(const char *p, const char *end, bool *is_float);

/*
 * The end of a line-terminated directive's text (.loc, .file, .version ...)
 * from p: up to the newline, less trailing whitespace and any comment;
 * strings (which may hold "//") are stepped over whole, an unterminated one
 * to where it stops (ptx_lex_string).
 */
const char *ptx_lex_line_end(const char *p, const char *end);

/*
 * The end of the run of bytes from p that holds no whitespace and no
 * comment (a string is stepped over whole, spaces and all): with
 * ptx_lex_trivia, text splits into solid runs and trivia, which is all that
 * a compacted or normalised copy of a statement needs.
 */
const char *ptx_lex_solid(const char *p, const char *end);

/* ---- tokens ------------------------------------------------------------- */

typedef enum {
	TK_END,       /* the end of the text: n is 0                          */
	TK_SPACE,     /* a run of whitespace                                  */
	TK_COMMENT,   /* '//' to the end of the line (newline excluded), or a
	               * whole block comment                                  */
	TK_STRING,    /* "...", quotes included                               */
	TK_NAME,      /* %r1, %tid.x, foo, _, $L__BB0_1                        */
	TK_DIRECTIVE, /* .reg, .b32, .shared::cta                             */
	TK_NUMBER,    /* 42, 0x1f, 0f3F800000, 1.5e3, 7U (no sign)            */
	TK_PUNCT,     /* any other byte, one at a time                        */
	TK_BAD,       /* an unterminated block comment (to the end of the
	               * text) or string (to the end of its line)             */
} TokKind;

typedef struct {
	const char *p;
	uint32_t n;
	uint8_t kind; /* TokKind */
} Token;

/* A cursor over text[0..len): the next token starts at p; line is the
 * 1-based line of p. */
typedef struct {
	const char *p, *end;
	uint32_t line;
} Lexer;

static inline Lexer ptx_lex_init(const char *text, size_t len)
{
	Lexer lx = {text, text + len, 1};
	return lx;
}

/*
 * Reads the token at lx->p and moves past it (counting its newlines in
 * lx->line).  The tokens of a text tile it: concatenated they are the text.
 * At the end returns TK_END, again and again.
 */
Token ptx_lex_next(Lexer *lx);

#endif
