/*
 * multi.h - several recipes spliced into one module, checked as one: the
 * phases of a layer selected by a list ("1-10,13,21-60"), in a variant
 * ("f16": recipes/LAYER/phase-NN-f16.json).
 *
 * Every recipe is checked against the original module, as if it were the
 * only one (splice.h: guards, interface, bindings, memory effects), and its
 * statement numbers are the original's.  Then what one cut's template
 * relies on is checked against the others: cuts do not overlap; an input a
 * template reads that is defined inside another cut is live out of that
 * cut (so that cut's template writes it); and no other cut whose template
 * writes memory or runs a barrier lies between a load a template issues
 * again (guards.reloads) and its cut.  The module is emitted once with all
 * the edits; each cut gets its own fresh prefix.
 */
#ifndef D4R_SPLICE_MULTI_H
#define D4R_SPLICE_MULTI_H

#include "locate.h"
#include "ptxas.h"
#include "splice.h"

/*
 * Parses a phase selection: numbers and inclusive ranges, comma-separated
 * ("1-62", "1-10,13,21-60").  *out gets the phases, ascending and distinct
 * (malloc'd), *n their count.  Returns 0, or -1 with a message naming the
 * part that does not parse (a number below 1, a range that runs backwards,
 * an empty part).
 */
int splice_phase_list(const char *s, uint32_t **out, size_t *n, Err *e);

/*
 * The recipes of a selection: for each phase of `phases` (a list as above),
 * the layer's phase-NN.json, or phase-NN-VARIANT.json with a variant, loaded
 * (rcp_load).  *out gets n recipes (malloc'd; release each with rcp_release
 * and free the array).  -1 naming the first phase the layer does not have
 * or has no recipe for (splice_phase_recipe), or the first recipe that does
 * not load.
 */
int splice_select(const LayerRecipes *layer, const char *phases, const char *variant,
                  Recipe **out, size_t *n, Err *e);

typedef struct {
	const Module *module; /* parsed; its source outlives the result */
	const char *entry;    /* NULL: each recipe's entry */
	const Recipe *const *recipes;
	size_t n;
	const char *ptx_root; /* as SpliceRequest.ptx_root */
	bool force;           /* as SpliceRequest.force */
} SpliceManyRequest;

typedef struct {
	StrBuf text; /* the spliced module */
	/* per cut, in statement order: what splice_run said of it, with
	 * region_off, region_line and line_delta in the output's coordinates
	 * (line_delta: output line - input line after this region); text empty */
	SpliceResult *cuts;
	const Recipe **recipes; /* the recipe of each cut */
	size_t n;
	uint32_t mma;   /* mma statements cut, all cuts */
	StrBuf summary; /* a few lines for stderr */
} SpliceManyResult;

/*
 * Splices req->recipes[0..n) into one module.  Returns 0, or -1 with the
 * message of the first recipe that does not splice (prefixed with its
 * path, as splice_run gives it) or of the check between cuts that fails,
 * naming both recipes.  `res` must be zeroed; release it either way.
 */
int splice_many(const SpliceManyRequest *req, SpliceManyResult *res, Err *e);
void splice_many_release(SpliceManyResult *res);

/* splice_ptxas on res->text, each "line N" of its messages mapped with
 * splice_many_where (same return values). */
int splice_many_ptxas(const SpliceManyResult *res, const char *arch, const char *entry,
                      const char *module_name, PtxasCache *pc, StrBuf *log, Err *e);

/* Where output line `line` of a module spliced by splice_many came from
 * (splice_where for the region it falls in; the input's line outside). */
void splice_many_where(const SpliceManyResult *res, const char *module_name,
                       uint32_t line, StrBuf *out);

#endif
