/*
 * module.h - the PTX module model.
 *
 * A Module is the parse of one PTX file.  Nothing is copied: every name,
 * statement and operand is a byte span into the mapped source, which must
 * outlive the module.  Statements and operands of all functions live in two
 * module-wide arrays (a Func holds index ranges into them), so a 40 MB module
 * costs a few large allocations, not millions of small ones, and is freed in
 * one call.
 *
 * Definitions (documented in d4r-splice(1)):
 *  - A statement is one PTX instruction, with its optional @p / @!p guard,
 *    ended by ';', inside a function body.  Labels, directives and braces are
 *    not statements.  Statements are numbered sN from 0 in source order within
 *    each function: stmt index i of Func f is m->stmts[f->stmt0 + i].
 *  - Every statement keeps its byte span [off, off+len) (guard through ';')
 *    and its 1-based source line.
 *  - An mma statement is mma.sync / mma.sp / wmma.mma / wgmma.mma_async.
 *
 * Scopes: every function with a body has its `{ }` scopes recorded, scope 0
 * being the body itself and the others (inline-asm blocks such as
 * `{ .reg .pred p; ... }`, nested at will) numbered in the order they open.
 * A Scope knows the offsets of its braces, its depth (1 for the body), its
 * parent and the statements it holds, nested scopes' included; register
 * declarations and labels name the innermost scope they are in.  Braces
 * inside statements (vector operands), directives (initialisers), strings
 * and comments open no scope.
 */
#ifndef D4R_PTX_MODULE_H
#define D4R_PTX_MODULE_H

#include "base/arena.h"
#include "base/base.h"
#include "base/strbuf.h"

typedef struct {
	uint32_t off, len;
} Span;

typedef enum {
#define OP(e, s) OP_##e,
	OP_UNKNOWN = 0,
#include "ops.def"
#undef OP
	OP__COUNT
} Op;

const char *op_name(Op op);
/* Opcode of the first dotted component of s[0..n). */
Op op_lookup(const char *s, size_t n);

typedef enum {
	OPD_REG,    /* %r1, %tid.x, %r1.x            */
	OPD_IDENT,  /* name without '%': register in inline asm, symbol, label */
	OPD_INT,    /* 42, -1, 0xff, 0b101, 7U       */
	OPD_FLOAT,  /* 0f3F800000, 0d..., 1.5        */
	OPD_VEC,    /* { a, b, ... }  children: the elements */
	OPD_ADDR,   /* [ ... ]        children: see below */
	OPD_LIST,   /* ( a, b )       call argument lists  */
	OPD_PAIR,   /* %p|%q          children: the two    */
	OPD_SINK,   /* _                                   */
	OPD_EXPR,   /* sym+4 or anything else: children: the terms */
	OPD_STRING, /* "..."                               */
} OpdKind;

/* Operand flags */
enum {
	OPDF_NOT = 1,   /* !%p: logical negation of a predicate operand   */
	OPDF_PLUS = 0x80, /* a term written after '+' inside an EXPR       */
};

/*
 * An operand, 12 bytes.  Compound operands (VEC, ADDR, LIST, PAIR, EXPR) are
 * followed in the array by their descendants; `sub` counts them, so the next
 * sibling of operand i is i + 1 + sub.
 *
 * ADDR children: the comma-separated elements of the brackets.  An element
 * "base+imm" / "base-imm" / "base" / "imm" is stored as the base term and, if
 * present, an INT operand whose text includes a leading '-' when subtracted
 * (the '+' is not part of it): "[%rd1+-16]" -> REG %rd1, INT "-16";
 * "[%rd1+16]" -> REG, INT "16"; "[tex, {%f1, %f2}]" -> IDENT, VEC.
 */
typedef struct {
	uint32_t off;
	uint16_t len;
	uint16_t sub;
	uint8_t kind;
	uint8_t flags;
	uint8_t addr_terms; /* ADDR: number of children of the first element (1 or 2) */
	uint8_t pad;
} Operand;

/* Statement flags */
enum {
	STMT_GUARD = 1,       /* has @p or @!p: the guard operand is opds[opd] */
	STMT_GUARD_NOT = 2,   /* @!p                                           */
	STMT_MMA = 4,         /* an mma statement (see above)                  */
};

typedef struct {
	uint32_t off, len;    /* guard through ';'                              */
	uint32_t line;        /* 1-based source line of the first byte          */
	uint32_t opd;         /* first operand in Module.opds (the guard first)  */
	uint16_t op;          /* Op of the opcode's first component             */
	uint16_t oplen;       /* length of the opcode token                     */
	uint16_t opdelta;     /* opcode token offset from off                   */
	uint8_t nopd;         /* top-level operands, not counting the guard     */
	uint8_t flags;
} Stmt;

typedef enum { FN_ENTRY, FN_FUNC } FuncKind;
enum {
	FNF_VISIBLE = 1,
	FNF_EXTERN = 2,
	FNF_WEAK = 4,
	FNF_DECL = 8,      /* a prototype: no body */
	FNF_NORETURN = 16,
};

typedef struct {
	Span text;          /* the whole declaration, ".param .b64 foo_param_0" */
	Span name;
	Span type;          /* ".b64", ".b8" ... (the last type token)          */
	uint32_t align;     /* .align N, or 0                                   */
	uint32_t array;     /* [N] element count, or 0                          */
	uint8_t space;      /* 'p' .param, 'r' .reg                             */
	uint8_t is_ret;     /* a return parameter of a .func                    */
} Param;

/* One declared register name or range: `.reg .b32 %r<500>;` is one RegDecl
 * (name "%r", count 500, range 1); `.reg .f32 %f1, %f2;` is two. */
typedef struct {
	Span decl;          /* the whole `.reg ... ;` directive */
	Span name;
	Span type;          /* ".b32", ".pred", ... (the last type token) */
	uint32_t count;     /* range count, or 1 */
	uint8_t range;      /* declared with <N> */
	uint8_t vec;        /* .v2/.v4 element count, or 0 */
	uint16_t depth;     /* brace depth of the declaration (1 = function body) */
	uint32_t stmt;      /* index (within the function) of the next statement */
	uint32_t scope;     /* index (within the function) of its innermost scope */
} RegDecl;

typedef struct {
	Span name;
	uint32_t stmt;      /* index (within the function) of the next statement */
	uint32_t line;
	uint32_t scope;     /* index (within the function) of its innermost scope */
} Label;

/*
 * One `{ }` scope of a function body (see the top of this file).  Scope k
 * of Func f is m->scopes.v[f->scope0 + k]; scope 0 is the body.  Scopes
 * are in the order their '{' appears, so a scope's parent has a smaller
 * index and every scope inside it a larger one, and the innermost scope
 * around a statement is the last one whose range holds it.
 */
typedef struct {
	uint32_t open, close; /* offsets of its '{' and '}'                     */
	uint32_t stmt0;       /* first statement inside (index within the func) */
	uint32_t nstmt;       /* statements inside, nested scopes' included:
	                       * [stmt0, stmt0 + nstmt); 0 for an empty scope,
	                       * whose stmt0 is then the next statement's index */
	uint32_t parent;      /* index of the enclosing scope; 0 for scope 0    */
	uint16_t depth;       /* 1 for the body, 2 for a scope inside it, ...   */
	uint16_t pad;
} Scope;

typedef struct {
	Span name;
	Span text;          /* first linkage directive through '}' or ';' */
	Span header;        /* text up to (not including) '{'             */
	uint32_t body_open, body_close; /* offsets of '{' and '}'; 0 for declarations */
	uint32_t stmt0, nstmt;
	uint32_t param0, nparam;
	uint32_t reg0, nreg;
	uint32_t label0, nlabel;
	uint32_t scope0, nscope; /* its scopes; none for declarations */
	uint8_t kind;       /* FuncKind */
	uint8_t flags;
} Func;

typedef enum {
	ITEM_VERSION,
	ITEM_TARGET,
	ITEM_ADDRESS_SIZE,
	ITEM_FILE,
	ITEM_SECTION,
	ITEM_VAR,      /* .global/.shared/.const/.local/.tex/... variable */
	ITEM_FUNC,
	ITEM_PRAGMA,
	ITEM_OTHER,    /* any other module-level directive */
} ItemKind;

/* Item flags (variables) */
enum {
	ITEMF_EXTERN = 1,   /* declared .extern                                  */
	ITEMF_UNSIZED = 2,  /* an array with no size: `.extern .shared .b8 s[];`  */
};

typedef struct {
	Span text;
	Span name;          /* variables and functions */
	uint32_t func;      /* ITEM_FUNC: index in Module.funcs */
	uint8_t kind;
	uint8_t space;      /* ITEM_VAR: state space, as Param.space names it:
	                       's' .shared, 'g' .global, 'c' .const, 'l' .local,
	                       'p' .param, 't' .tex; 0 if none was given */
	uint8_t flags;      /* ITEM_VAR: ITEMF_* */
} Item;

typedef struct Module {
	const char *name;   /* for messages */
	const char *src;
	size_t len;
	Span version, target, address_size;   /* their values; len 0 if absent */
	VEC(Item) items;
	VEC(Func) funcs;
	VEC(Stmt) stmts;
	VEC(Operand) opds;
	VEC(Param) params;
	VEC(RegDecl) regs;
	VEC(Label) labels;
	VEC(Scope) scopes;
	Arena arena;
	uint32_t nmma;      /* mma statements in the module */
} Module;

/* ---- access -------------------------------------------------------------- */

static inline Str mod_str(const Module *m, Span s)
{
	return str_of(m->src + s.off, s.len);
}
static inline Str opd_str(const Module *m, const Operand *o)
{
	return str_of(m->src + o->off, o->len);
}
static inline const Stmt *func_stmt(const Module *m, const Func *f, uint32_t i)
{
	return &m->stmts.v[f->stmt0 + i];
}
static inline Str stmt_str(const Module *m, const Stmt *s)
{
	return str_of(m->src + s->off, s->len);
}
/* The opcode token, e.g. "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16". */
static inline Str stmt_opcode(const Module *m, const Stmt *s)
{
	return str_of(m->src + s->off + s->opdelta, s->oplen);
}
/* The guard operand, or NULL. */
static inline const Operand *stmt_guard(const Module *m, const Stmt *s)
{
	return (s->flags & STMT_GUARD) ? &m->opds.v[s->opd] : NULL;
}
/* Index (in m->opds) of the i-th top-level operand, i < s->nopd. */
uint32_t stmt_opd_index(const Module *m, const Stmt *s, unsigned i);
static inline const Operand *stmt_opd(const Module *m, const Stmt *s, unsigned i)
{
	return &m->opds.v[stmt_opd_index(m, s, i)];
}
/* Next sibling / first child of operand index i. */
static inline uint32_t opd_next(const Module *m, uint32_t i)
{
	return i + 1 + m->opds.v[i].sub;
}
/* Does the opcode token carry modifier `mod` (e.g. ".shared", ".e4m3")?
 * Matches whole dotted components, "::" sub-parts included in the component. */
bool stmt_has_mod(const Module *m, const Stmt *s, const char *mod);
/* Index in mods[0..nmods) (at most 16) of the first modifier of the opcode
 * that is one of them, or -1: several stmt_has_mod in one walk. */
int stmt_mod_any(const Module *m, const Stmt *s, const char *const *mods, size_t nmods);
/* Does the opcode token start with `prefix` ending at a component boundary
 * ("wmma.mma" matches "wmma.mma.sync...", not "wmma.mmax")? */
bool stmt_opcode_is(const Module *m, const Stmt *s, const char *prefix);

/* Scope k of f (k < f->nscope). */
static inline const Scope *func_scope(const Module *m, const Func *f, uint32_t k)
{
	return &m->scopes.v[f->scope0 + k];
}
/* Fills out[0..f->nstmt) with the innermost scope of each statement of f. */
void func_stmt_scopes(const Module *m, const Func *f, uint32_t *out);

/* Into out (32 bytes): the first prefix "%<stem>N_", N >= from, that no
 * register or parameter f declares starts with (in any scope; ranges and
 * .reg parameters included), so no name of f, under any naming scheme, can
 * equal a name made with it: PTX registers are declared before use and
 * belong to their function.  The splicer's fresh names ("spl") and the
 * probe's ("prb"). */
void func_fresh_prefix(const Module *m, const Func *f, const char *stem, unsigned from,
                       char out[32]);

Func *mod_func_find(const Module *m, Str name);
/* Index of f in m->funcs. */
static inline uint32_t mod_func_index(const Module *m, const Func *f)
{
	return (uint32_t)(f - m->funcs.v);
}

void mod_free(Module *m);

/* Appends the statement's tokens with all whitespace and comments removed,
 * rebuilt from the model (guard, opcode, operand tree): used to prove that the
 * parse accounts for every character of every statement. */
void stmt_render_compact(const Module *m, const Stmt *s, StrBuf *out);
/* Appends operand i (index in m->opds) the same way, its text without
 * whitespace or comments; returns the index of its next sibling. */
uint32_t opd_render_compact(const Module *m, uint32_t i, StrBuf *out);
/* Appends the statement's text with comments removed and every whitespace
 * run turned into one space (the form recipe guards hash). */
void stmt_normalized(const Module *m, const Stmt *s, StrBuf *out);

#endif
