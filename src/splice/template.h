/*
 * template.h - native-phase templates (ptx/...): PTX text with formal
 * registers %{name} / %{name[i]}, parameters ${EXPR} and local registers.
 *
 * The header is made of `//!` lines (anywhere in the file; they stay in the
 * output as comments):
 *
 *   //! in    .b32 a0 a1 a[24]    formal inputs (type; name[N] is a list)
 *   //! out   .b32 d0 d1          formal outputs
 *   //! inout .v2.b32 acc         read and written
 *   //! param WOFF SHIFT          numeric parameters: ${WOFF}, ${WOFF+16}
 *   //! reads  global shared      state spaces the template reads
 *   //! writes none               ... and writes
 *   //! barriers 0                bar/barrier statements it executes
 *   //! note free text
 *
 * Every other line is PTX.  `.reg` directives declare locals; each local
 * (which must be a %name) is renamed with the splicer's fresh prefix.  Any
 * other %name in the text must be a special register (%tid.x, %laneid...),
 * else it is an error: a template cannot reach a module register except
 * through a formal.  Substitution skips comments and strings and never
 * adds or removes a newline, so template line k is output line k of the
 * rendered text (the splicer's line map relies on it).
 *
 * The header is a contract, and reading a template checks its body against
 * it with the project's own PTX parser and dataflow (tplbody.c says how):
 * a body that stores (st, red, atom, ...) to a space the `writes` line does
 * not list, loads from one the `reads` line does not list, executes a
 * barrier under `barriers 0` (or a straight-line body whose count differs),
 * or never writes one of its `out` formals, is an error at the template's
 * line and column, and so is a PTX syntax error in the body.  What the
 * body does is kept for the splicer, which trusts the body, not the
 * header: its memory effects (Template.body) for the read/write-dependency
 * verdict, and the formals it writes (Formal.written: an `in` formal
 * written whose register is read after the cut is an error there).
 */
#ifndef D4R_SPLICE_TEMPLATE_H
#define D4R_SPLICE_TEMPLATE_H

#include "ana/ana.h"
#include "base/err.h"
#include "base/strbuf.h"
#include "recipe.h"

enum { FM_IN = 1, FM_OUT = 2, FM_INOUT = 3 };

typedef struct {
	char *name;
	char type[24];  /* ".b32", ".f16x2", ".pred" (without the .vN) */
	uint32_t bits;  /* element width */
	uint8_t vec;    /* .v2 / .v4 registers, else 0 */
	uint8_t dir;    /* FM_* */
	uint32_t count; /* name[N]: bound to a list of N registers; 0: scalar */
	uint32_t line;
	uint32_t off;        /* byte offset of its name in the text */
	uint8_t *written;    /* per element (one for a scalar): the body writes it */
	uint32_t write_line; /* template line of the first statement writing it, or 0 */
} Formal;

typedef struct {
	char *name;     /* "%t" as declared */
	uint32_t count; /* %t<N>: N; 0 for a single register */
	uint32_t line;
} TplLocal;

/* What the body's statements do, read from the parsed body (not from the
 * header): statement counts per state space, and the template line of the
 * first statement of each kind (0: none), for messages. */
typedef struct {
	uint32_t loads[SP__COUNT], stores[SP__COUNT];
	uint32_t atomics, barriers;
	uint32_t load_line[SP__COUNT], store_line[SP__COUNT];
	uint32_t atomic_line, barrier_line;
} TplBody;

typedef struct {
	char *path; /* as named in messages */
	char *text;
	size_t len;
	uint32_t nlines; /* lines of text (a last line without '\n' counts) */
	VEC(Formal) formals;
	VEC(char *) params;
	unsigned reads, writes; /* bit (1 << Space) per declared space */
	bool effects_declared;  /* any reads/writes line */
	int barriers;           /* -1: not declared */
	VEC(TplLocal) locals;
	TplBody body;
	uint32_t formal_regs; /* registers the formals stand for (a list: N) */
} Template;

/* The most registers a template's formals may stand for, lists counted in
 * full (a kernel has some thousands; the body check declares each). */
#define TPL_MAX_REGS 65536u

/*
 * Parses template text (copied): the header, the locals, and the body, which
 * is checked against the header (above).  Returns 0 or -1 with
 * "path:line:col: ...", the line and a caret.
 */
int tpl_parse(const char *path, const char *text, size_t len, Template *t, Err *e);
int tpl_load(const char *path, const char *display, Template *t, Err *e);
void tpl_release(Template *t);
const Formal *tpl_formal(const Template *t, const char *name, size_t n);

/* Is `type` (".b32", with its dot) a PTX register type: .pred, .bN, .uN,
 * .sN (8 to 64; .b128), .f16, .f16x2, .bf16, .bf16x2, .f32, .f64? */
bool ptx_reg_type(const char *type, size_t n);
/* Bits per element of a PTX type name (".b32" -> 32, ".pred" -> 1,
 * ".f16x2" -> 32); 0 if unknown. */
uint32_t ptx_type_bits(const char *type, size_t n);
/* Can a register declared `reg_type` stand where `want` is expected?  Same
 * width, predicates only with predicates, and untyped .bN with anything;
 * float and integer kinds do not mix. */
bool ptx_type_compatible(Str want, Str reg_type);
/* Is name (with '%') a PTX special register (%tid.x, %laneid, %clock64...)? */
bool ptx_special_reg(const char *name, size_t n);

/*
 * Renders the template into `out`: locals renamed with `prefix` ("%spl0_":
 * %t3 -> %spl0_t3), formals replaced by the recipe's bindings, ${EXPR}
 * evaluated with the recipe's parameters in 64-bit arithmetic, where an
 * overflow (or a division by zero) is an error at the expression.  The
 * caller has checked that bindings and parameters match the header; what
 * tpl_parse could check without a recipe (unknown formals, parameters and
 * registers) it has checked.  Errors are "path:line:col: ...".
 */
int tpl_render(const Template *t, const Recipe *r, const char *prefix, StrBuf *out,
               Err *e);

#endif
