/*
 * recipe.h - cut recipes: which statement range of which kernel is replaced
 * by which template, with which parameters and register bindings, under
 * which guards.
 *
 * A recipe is JSON (format in d4r-splice(1), RECIPES):
 *
 *   { "layer": "enc4", "module": "enc4/enc4.ptx", "entry": "...",
 *     "cut": {"phase": 8} | {"phase": 8, "with_epilogue": true}
 *            | {"stmts": [7771, 7794]},
 *     "template": "enc4/phase-08.ptx" | "./local.ptx" | "identity" | "perturb",
 *     "params": {"NAME": 123, ...},
 *     "bind": {"formal": "%r123" | ["%r1", "%r2", ...], ...},
 *     "guards": {"mma": 24, "sha256": "<hex>", "first": "PCRE2", "last": "PCRE2",
 *                "reloads": {"stmts": [7548, ...], "sha256": "<hex>"}},
 *     "interface": {...},   (written by `recipe new`, ignored on load)
 *     "note": "..." }
 *
 * Unknown keys are an error (a typo must not silently drop a guard).  The
 * loader checks shapes and types, and what can be known from the recipe
 * alone; whether the recipe fits the module is the splicer's business
 * (splice.h).
 *
 * Decisions:
 *  - The guards' regular expressions are compiled when the recipe is read,
 *    so one that does not compile is an invalid recipe, reported by every
 *    verb that reads it (`recipe check` included) with PCRE2's message and
 *    offset, and never mistaken for a stale recipe (a guard that does not
 *    match).
 *  - "module" and "template" name files inside the corpus folder and the
 *    ptx/ folder (a template starting with "./" inside the recipe's own
 *    folder): an absolute path or a ".." component is refused, by the rule
 *    base/layout.h owns (layout_inside), so a recipe handed around cannot
 *    read files outside the folders it is run against.  Paths the user
 *    types on the command line (--module, --ptx, --corpus, --recipe) are
 *    the user's own and are not checked.
 */
#ifndef D4R_SPLICE_RECIPE_H
#define D4R_SPLICE_RECIPE_H

#include "base/base.h"
#include "base/err.h"

typedef enum { CUT_PHASE, CUT_STMTS } CutKind;
typedef enum { TPL_FILE, TPL_IDENTITY, TPL_PERTURB } TemplateKind;

typedef struct {
	char *name;
	int64_t value;
} RecipeParam;

typedef struct {
	char *formal;
	char **regs;      /* one for a scalar binding, n for a list */
	uint32_t nregs;
	bool list;        /* bound to a JSON array */
} RecipeBind;

typedef struct {
	char *path;           /* the file it was read from (for messages) */
	char *layer;          /* NULL if absent */
	char *module;         /* relative to the corpus folder; NULL if absent */
	char *entry;          /* NULL if absent */
	CutKind cut;
	uint32_t phase;       /* CUT_PHASE: 1-based */
	bool with_epilogue;
	uint32_t first, last; /* CUT_STMTS: inclusive */
	TemplateKind tkind;
	char *template_name;  /* as written */
	VEC(RecipeParam) params;
	VEC(RecipeBind) binds;
	/* guards */
	bool has_mma;
	uint32_t mma;
	char *sha256;         /* 64 hex digits, lower case; NULL if absent */
	char *first_re, *last_re;
	/* reloads: statements before the cut whose loads the template issues
	 * again, and the sha256 of their normalised text joined by '\n' */
	VEC(uint32_t) reloads;
	char *reloads_sha256;
	void *first_code, *last_code; /* compiled (pcre2_code *), NULL if absent */
} Recipe;

/* Reads and checks a recipe file.  Returns 0, or -1 with "path: JSON-PATH:
 * what is wrong" (base/json.h: "r.json: cut.phase: expected an integer"). */
int rcp_load(const char *path, Recipe *r, Err *e);
/* The same from text in memory; `path` names it in messages. */
int rcp_parse(const char *path, const char *text, size_t len, Recipe *r, Err *e);
void rcp_release(Recipe *r);

/*
 * Matches the first (last = false) or last anchor of r against subject[0..n).
 * Returns 1 on a match, 0 on none (also when the recipe has no such
 * anchor), -1 with "path: guards.first: ..." when the expression does not
 * compile (a Recipe built without rcp_parse) or PCRE2 cannot finish the
 * match (its match limit).
 */
int rcp_guard_match(const Recipe *r, bool last, const char *subject, size_t n, Err *e);

const RecipeBind *rcp_bind_find(const Recipe *r, const char *formal);
const RecipeParam *rcp_param_find(const Recipe *r, const char *name, size_t n);

#endif
