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
	char type[24];   /* ".b32", ".f16x2", ".pred" (without the .vN) */
	uint32_t bits;   /* element width */
	uint8_t vec;     /* .v2 / .v4 registers, else 0 */
	uint8_t dir;     /* FM_* */
	uint32_t count;  /* name[N]: bound to a list of N registers; 0: scalar */
	uint32_t line;
} Formal;

typedef struct {
	char *name;      /* "%t" as declared */
	uint32_t count;  /* %t<N>: N; 0 for a single register */
	uint32_t line;
} TplLocal;

typedef struct {
	char *path;      /* as named in messages */
	char *text;
	size_t len;
	uint32_t nlines; /* lines of text (a last line without '\n' counts) */
	VEC(Formal) formals;
	VEC(char *) params;
	unsigned reads, writes; /* bit (1 << Space) per declared space */
	bool effects_declared;  /* any reads/writes line */
	int barriers;           /* -1: not declared */
	VEC(TplLocal) locals;
} Template;

/* Parses template text (copied).  Returns 0 or -1 with "path:line: ...". */
int tpl_parse(const char *path, const char *text, size_t len, Template *t, Err *e);
int tpl_load(const char *path, const char *display, Template *t, Err *e);
void tpl_release(Template *t);
const Formal *tpl_formal(const Template *t, const char *name, size_t n);

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
 * evaluated with the recipe's parameters.  The caller has checked that
 * bindings and parameters match the header; a reference to an unknown
 * formal, parameter or register is still an error here ("path:line: ...").
 */
int tpl_render(const Template *t, const Recipe *r, const char *prefix, StrBuf *out, Err *e);

#endif
