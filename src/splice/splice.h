/*
 * splice.h - replace a statement range of a kernel with a native phase.
 *
 * The splicer takes a parsed module, the entry, and a recipe; it finds the
 * cut (a phase, a phase and its epilogue, or an explicit statement range),
 * checks the recipe's guards against the cut's text, computes the cut
 * interface (ana.h: live-in, live-out, memory effects), checks the
 * template's formals against it, renders the template with fresh names,
 * and emits the module with exactly one edit: the bytes from the first
 * statement's first byte to the last statement's ';' are replaced by
 *
 *     {	// d4r-splice: begin <template> for sA..sB (fresh prefix %splN_)
 *     <rendered template, line for line>
 *     	}	// d4r-splice: end
 *
 * Everything outside that range is copied byte for byte (.version, .target,
 * comments, the rest of the function).  The `{ }` scope holds the
 * template's .reg declarations, so nothing is added elsewhere.  (A cut that
 * contains labels cannot be wrapped in a scope without hiding them from
 * branches outside; the built-in templates then declare their registers
 * after the function's last top-level .reg line instead, and a file
 * template refuses such a cut.)
 */
#ifndef D4R_SPLICE_SPLICE_H
#define D4R_SPLICE_SPLICE_H

#include "base/err.h"
#include "base/strbuf.h"
#include "ptx/module.h"
#include "recipe.h"

typedef struct {
	const Module *module;   /* parsed; its source must outlive the result */
	const char *entry;      /* function to cut; NULL: the recipe's entry */
	const Recipe *recipe;
	/* Folder that "template" names are relative to (the repository's ptx/).
	 * A name starting with "./" or "../" is relative to the recipe's folder;
	 * an absolute path is taken as is.  NULL: found from the recipe's path
	 * (the nearest ancestor with a ptx/ folder). */
	const char *ptx_root;
	bool force;             /* splice a cut with a read/write dependency (or
	                           effects the template's body does not reproduce)
	                           anyway, with a PTX comment saying so */
	unsigned prefix_from;   /* the fresh prefix is the first free %splN_ with
	                           N >= prefix_from (splice_many gives each cut its
	                           own) */
} SpliceRequest;

/* What one output line of the spliced region came from. */
enum { LM_GENERATED = 0, LM_TEMPLATE = 1, LM_MODULE = 2 };
typedef struct {
	uint32_t line;   /* 1-based line in the template or the input module */
	uint8_t kind;    /* LM_* */
} LineMapEntry;

typedef struct {
	StrBuf text;                 /* the spliced module */
	/* the cut */
	uint32_t first, last;        /* statement range, inclusive */
	uint32_t first_line, last_line; /* their source lines */
	uint32_t mma;                /* mma statements in the cut */
	uint32_t n_live_in, n_live_out, n_renamed;
	char sha256[65];             /* of the cut's normalised text */
	char prefix[32];             /* fresh register prefix, "%spl0_" */
	char *template_name;         /* as displayed: "ptx/enc4/phase-08.ptx", "identity" */
	/* where the edit landed */
	size_t region_off, region_len; /* byte range of the replacement in text */
	uint32_t region_line;        /* output line of its first line */
	VEC(LineMapEntry) line_map;  /* one per output line of the region */
	int64_t line_delta;          /* output line - input line after the region */
	bool forced;                 /* --force overrode a refusal */
	bool refused;                /* splice_run failed because the built-in
	                                template cannot apply to this cut (perturb
	                                and a wgmma not completed in it): the cut
	                                is fine, the message says why */
	StrBuf summary;              /* a few lines for stderr */
} SpliceResult;

/*
 * Produces the spliced module in memory.  Returns 0, or -1 with a message
 * that says what to fix:
 *  - a stale recipe (guards): the expected and found mma count, sha256, the
 *    anchors and the actual first/last statement text, and the range;
 *  - an unbound live-out register: "live-out '%r11890' (first used at s7803,
 *    line 12101) is not bound to any output of the template";
 *  - a read/write dependency, or memory effects of the cut that what the
 *    template's body does (not what its header claims) would change:
 *    "READ/WRITE DEPENDENCIES: cut invalid" with the statements (unless
 *    req->force);
 *  - type or width mismatches between formals and registers, inputs not
 *    defined before the cut, unknown formals or parameters, template errors.
 * `res` must be zeroed by the caller; release it with splice_result_release
 * whether or not the call succeeded.
 */
int splice_run(const SpliceRequest *req, SpliceResult *res, Err *e);
void splice_result_release(SpliceResult *res);

/*
 * Where output line `line` of the spliced module came from, for messages:
 * "template ptx/enc4/phase-08.ptx:12", "module line 12000 (in the cut)",
 * "module line 40000", "spliced line 12086 (generated)".
 */
void splice_where(const SpliceResult *res, const char *module_name, uint32_t line, StrBuf *out);

/*
 * Runs ptxas (CUDA_HOME/bin/ptxas, CUDA_HOME from the environment or the
 * build) on `text` with -arch=`arch` (NULL: the module's .target) and -e
 * `entry`, output discarded.  Returns 0 when ptxas accepts it, 1 when it
 * reports an error (its messages in `log`, each "line N" mapped through
 * `res` when given), -1 when ptxas could not be run.
 */
int splice_ptxas(const char *text, size_t len, const char *arch, const char *entry,
                 const SpliceResult *res, const char *module_name, StrBuf *log, Err *e);

/* splice_ptxas with more ptxas flags (`flags`, e.g. "-O3 -lineinfo"; NULL
 * for none), the cubin appended to *cubin when ptxas accepts the module. */
int splice_ptxas_cubin(const char *text, size_t len, const char *arch, const char *entry,
                       const char *flags, StrBuf *cubin, StrBuf *log, Err *e);

/* The .target's first architecture of a module ("sm_89"), into buf. */
int splice_module_arch(const Module *m, char *buf, size_t n);

/*
 * `recipe new`: computes the cut of phase `phase` (with its epilogue if
 * asked) of function `entry` and writes the recipe scaffold (JSON) into
 * `recipe_json` and a template skeleton into `template_text`: formals for
 * every live-in and live-out register, the cut's own statements with those
 * registers written as formals and its temporaries declared as locals, so
 * the scaffold splices as it stands (an identity) and the author edits from
 * there.  `layer`, `module_rel` and `template_name` go into the recipe.
 */
typedef struct {
	const Module *module;
	const char *entry;
	const char *layer;          /* may be NULL */
	const char *module_rel;     /* may be NULL (then "module" is left out) */
	const char *template_name;  /* e.g. "enc4/phase-08.ptx" */
	uint32_t phase;             /* 1-based; 0: use first/last */
	bool with_epilogue;
	uint32_t first, last;
} ScaffoldRequest;
int splice_scaffold(const ScaffoldRequest *req, StrBuf *recipe_json, StrBuf *template_text,
                    StrBuf *summary, Err *e);

/* Normalised text of statements [first, last] of f joined by '\n', and its
 * sha256 (the recipe guard). */
void splice_cut_text(const Module *m, const Func *f, uint32_t first, uint32_t last, StrBuf *out);

/* The guards of a cut of statements [first, last] of f, as the splicer
 * checks them, into the JSON object `guards`: "mma" (ana_mma_count),
 * "sha256" (of splice_cut_text), "first" and "last" (the first and last
 * statements' normalised text as anchored regular expressions, every
 * metacharacter escaped). */
struct cJSON;
void splice_guards_json(const Module *m, const Func *f, uint32_t first, uint32_t last,
                        struct cJSON *guards);

#endif
