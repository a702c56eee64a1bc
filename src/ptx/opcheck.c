/*
 * opcheck.c - an opcode against the PTX ISA's instruction set (opcheck.h).
 *
 * An opcode is split at its dots: the first component is the instruction
 * (ops.def, the parser's table), each further one a modifier made of words
 * joined by "::" (".L2::cache_hint").  A word is known when mods.def lists
 * it or when it has the form of a family the ISA spells by pattern: types
 * (.b32, .s16x2, .f16x2, .bf16x2, .e4m3x2, .tf32), vectors (.v4), counts
 * (.x4), matrix shapes (.m16n8k32, .m8n8), dimensions (.2d), sizes and
 * numbers (.64B, .1X, cta_group::2), tcgen05 data paths (.32x32b,
 * .16x32bx2) and ldmatrix element forms (.b8x16, .b6x16_p32).
 *
 * A word that is unknown gets the nearest known one as a suggestion, by
 * optimal-string-alignment distance (Levenshtein with a transposition of
 * neighbours counting one, so "snyc" is one step from "sync"), within one
 * edit for words of up to four letters and two for longer ones.
 *
 * Decisions:
 *  - Words, not whole opcodes: the ISA's modifiers combine freely enough
 *    (ld alone has thousands of spellings) that a list of opcodes would
 *    never be complete, and a misspelt word is what a hand-written
 *    template gets wrong.  Which words go with which instruction, and in
 *    which order, is left to ptxas.
 *  - Case counts (".NaN", ".L2", ".noComplete" are the ISA's spellings);
 *    a suggestion may differ from the word in case only.
 */
#include "opcheck.h"

#include "module.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *const words[] = {
#define MOD(s) s,
#include "mods.def"
#undef MOD
};
enum { NWORDS = sizeof words / sizeof *words };

/* ---- the patterns --------------------------------------------------------- */

/* Skips the digits at *p; how many there were. */
static size_t digits(const char **p, const char *end)
{
	const char *s = *p;
	while (*p < end && isdigit((unsigned char)**p))
		(*p)++;
	return (size_t)(*p - s);
}

static bool lit(const char **p, const char *end, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(end - *p) < n || memcmp(*p, s, n))
		return false;
	*p += n;
	return true;
}

/* A type: [bsuf]N, or one of the named element types, each optionally
 * packed xN (.f16x2, .e4m3x2, .u8x4). */
static bool is_type(const char *p, const char *end)
{
	static const char *const named[] = {"bf16", "tf32", "e4m3",  "e5m2",  "e2m1",
	                                    "e3m2", "e2m3", "ue8m0", "ue4m3", "pred"};
	bool base = false;
	for (size_t i = 0; i < sizeof named / sizeof *named && !base; i++)
		base = lit(&p, end, named[i]);
	if (!base) {
		if (p == end || !strchr("bsuf", *p))
			return false;
		p++;
		if (!digits(&p, end))
			return false;
	}
	if (p < end && *p == 'x') {
		p++;
		if (!digits(&p, end))
			return false;
	}
	return p == end;
}

/* The families the ISA spells by pattern (see the top of the file). */
static bool is_pattern(const char *p, const char *end)
{
	const char *q = p;
	if (is_type(p, end))
		return true;
	/* .v4, .x4 */
	if ((*p == 'v' || *p == 'x') && (q = p + 1, digits(&q, end)) && q == end)
		return true;
	/* .m16n8k32, .m8n8 */
	q = p;
	if (lit(&q, end, "m") && digits(&q, end) && lit(&q, end, "n") &&
	    digits(&q, end)) {
		if (q == end)
			return true;
		if (lit(&q, end, "k") && digits(&q, end) && q == end)
			return true;
	}
	/* .2d, .64B, .1X, .1, 02_13 (warpx2::02_13) */
	q = p;
	if (digits(&q, end)) {
		if (q == end || (q + 1 == end && isalpha((unsigned char)*q)))
			return true;
		if (*q == '_' && (q++, digits(&q, end)) && q == end)
			return true;
		/* .32x32b, .16x32bx2 */
		if (lit(&q, end, "x") && digits(&q, end) && lit(&q, end, "b")) {
			if (q == end)
				return true;
			if (lit(&q, end, "x") && digits(&q, end) && q == end)
				return true;
		}
	}
	/* .b8x16, .b6x16_p32 */
	q = p;
	if (lit(&q, end, "b") && digits(&q, end) && lit(&q, end, "x") &&
	    digits(&q, end)) {
		if (q == end)
			return true;
		if (lit(&q, end, "_p") && digits(&q, end) && q == end)
			return true;
	}
	return false;
}

static bool known_word(const char *p, size_t n)
{
	for (size_t i = 0; i < NWORDS; i++)
		if (strlen(words[i]) == n && !memcmp(words[i], p, n))
			return true;
	return n && is_pattern(p, p + n);
}

/* ---- the nearest spelling ----------------------------------------------------- */

/* The nearest of names[0..count) to s[0..n) (str_nearest), or NULL. */
static const char *nearest(const char *s, size_t n, const char *const *names,
                           size_t count)
{
	return str_nearest(s, n, names, count);
}

/* ---- the check ------------------------------------------------------------------ */

int ptx_opcode_check(const char *op, size_t n, OpProblem *p)
{
	memset(p, 0, sizeof(*p));
	const char *end = op + n;
	const char *dot = memchr(op, '.', n);
	size_t bn = dot ? (size_t)(dot - op) : n;
	if (op_lookup(op, bn) == OP_UNKNOWN) {
		const char *names[OP__COUNT];
		for (int k = 0; k < OP__COUNT; k++)
			names[k] = k ? op_name((Op)k) : NULL;
		const char *s = nearest(op, bn, names, OP__COUNT);
		p->off = 0;
		p->len = bn;
		if (s)
			snprintf(p->msg, sizeof p->msg,
			         "unknown instruction '%.*s' (did you mean '%s%.*s'?)",
			         (int)bn, op, s, (int)(n - bn), op + bn);
		else
			snprintf(p->msg, sizeof p->msg,
			         "unknown instruction '%.*s': not in the PTX ISA's "
			         "instruction set",
			         (int)bn, op);
		return 1;
	}
	for (const char *c = dot; c && c < end;) {
		const char *c0 = c + 1, *c1 = memchr(c0, '.', (size_t)(end - c0));
		if (!c1)
			c1 = end;
		for (const char *w = c0; w <= c1;) {
			const char *w1 = w;
			while (w1 < c1 && !(w1 + 1 < c1 && w1[0] == ':' && w1[1] == ':'))
				w1++;
			if (!known_word(w, (size_t)(w1 - w))) {
				const char *s =
				    w1 > w ? nearest(w, (size_t)(w1 - w), words, NWORDS)
				           : NULL;
				p->off = (size_t)(c0 - op);
				p->len = (size_t)(c1 - c0);
				int pre = (int)(w - op);
				if (w1 == w)
					snprintf(p->msg, sizeof p->msg,
					         "empty modifier in '%.*s' of '%.*s'",
					         (int)(c1 - op), op, (int)bn, op);
				else if (s)
					snprintf(p->msg, sizeof p->msg,
					         "unknown modifier '.%.*s' of '%.*s' "
					         "(did you mean "
					         "'%.*s%s%.*s'?)",
					         (int)(c1 - c0), c0, (int)bn, op, pre, op,
					         s, (int)(c1 - w1), w1);
				else
					snprintf(p->msg, sizeof p->msg,
					         "unknown modifier '.%.*s' of '%.*s': no "
					         "word of the PTX ISA's "
					         "modifiers is spelt '%.*s'",
					         (int)(c1 - c0), c0, (int)bn, op,
					         (int)(w1 - w), w);
				return 1;
			}
			if (w1 >= c1)
				break;
			w = w1 + 2;
		}
		c = c1 < end ? c1 : NULL;
	}
	return 0;
}
