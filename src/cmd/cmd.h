/*
 * cmd.h - one function per verb (git's builtin/), dispatched from main.c.
 *
 * Each cmd_<verb> declares its option table (options.h), parses argv with
 * it and calls the library.  It returns the process exit status: 0 ok /
 * identical, 1 differs, 2 error.
 */
#ifndef D4R_CMD_H
#define D4R_CMD_H

enum { EXIT_OK = 0, EXIT_DIFFERS = 1, EXIT_ERROR = 2 };

#include "jsonout.h"
#include "options.h"

/* A verb in a dispatch table: main.c's, and one of sub-verbs (recipe's).
 * Tables end with a {NULL} entry. */
typedef struct CmdVerb {
	const char *name;
	int (*fn)(int argc, char **argv);  /* argv[0] is the verb's name */
	const char *help;                  /* one line for the list of verbs */
	const struct CmdVerb *sub;         /* its sub-verbs, or NULL */
} CmdVerb;

int cmd_roundtrip(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_phases(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_grep(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_splice(int argc, char **argv);
int cmd_recipe(int argc, char **argv);
/* recipe's sub-verbs (new, check): cmd_recipe dispatches to them. */
extern const CmdVerb cmd_recipe_verbs[];
int cmd_run(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_replay(int argc, char **argv);
/* `d4r-splice LAYER --phase N`: the main job (argv[0] is the layer). */
int cmd_job(int argc, char **argv);

/* Helpers shared by the verbs (cmd/common.c). */
/* Prints "d4r-splice: <msg>" to stderr and returns EXIT_ERROR. */
int cmd_fail(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* A module read and parsed for a verb. */
#include "base/file.h"
#include "ptx/module.h"
typedef struct {
	MapFile mf;
	Module *m;
	double parse_s;  /* seconds the parse took (mapping not included) */
} LoadedModule;
/* Maps and parses `path`; on failure prints the error and returns -1. */
int cmd_load_module(const char *path, LoadedModule *lm);
void cmd_unload_module(LoadedModule *lm);
/* The function named `entry` (any .entry/.func with a body), or when entry is
 * NULL the only function with mma statements (or the only function at all).
 * On failure prints "unknown entry 'x'" with the list of entries, returns NULL. */
const Func *cmd_pick_func(const Module *m, const char *entry);
/* Parses "A:B" (or "sA:sB") into an inclusive range; -1 on bad syntax. */
int cmd_parse_range(const char *s, uint32_t *a, uint32_t *b);
/* Registers a loaded recipe's files as inputs of the command (base/file.h:
 * no output replaces them): the recipe, and its template file as the
 * splicer finds it (`ptx_root`: --ptx, or NULL). */
#include "splice/recipe.h"
void cmd_recipe_inputs(const Recipe *r, const char *ptx_root);
#include "base/strbuf.h"
/*
 * Where a module that ptxas rejected goes instead of `out` ("-o OUT"):
 * OUT with its ".ptx" taken off (if it has one) and ".rejected.ptx" put on,
 * beside it ("x/enc4-8.ptx" -> "x/enc4-8.rejected.ptx"); malloc'd.  NULL
 * for standard output ("-") and for what is not a regular file or a new
 * path (a device such as /dev/null): nothing is written beside those.
 */
char *cmd_rejected_name(const char *out);

/*
 * Writes the module a verb made (a spliced or instrumented module, text[0..n))
 * to `out` when ptxas accepted it or did not run (rejected false).  When
 * ptxas rejected it, `out` gets nothing and keeps what it had, so that a
 * script never picks up a module ptxas rejects; the module goes to
 * cmd_rejected_name(out) instead, or to `out` itself with `keep`
 * (--keep-rejected).  *written is the path written (malloc'd; NULL when
 * nothing was).  Says "wrote: PATH (N bytes)" on stderr unless quiet.
 * 0, or -1 with the message.
 */
int cmd_write_module(const char *out, const char *text, size_t n, bool rejected, bool keep,
                     bool quiet, char **written, Err *e);

/* The message for a module ptxas rejected, once cmd_write_module has put it
 * where it goes ("ptxas rejects the spliced module: 'o.ptx' not written ..."),
 * printed as "d4r-splice: VERB: ..."; returns EXIT_ERROR. */
int cmd_fail_rejected(const char *verb, const char *what, const char *out, const char *written,
                      bool keep);

/* Parses a non-negative integer option value; -1 on bad syntax. */
int cmd_parse_uint(const char *s, unsigned *out);
/* --variant NAME: letters, digits and '_' (NULL passes); prints the
 * message and returns EXIT_ERROR otherwise, else 0. */
int cmd_check_variant(const char *variant);

/* The name nearest `word` among `n` names, when it is near enough to be a
 * typo of it: at most one edit away for a name of up to four letters, two
 * for a longer one (an edit: a letter inserted, removed, replaced, or two
 * neighbours swapped, as in "splcie").  NULL when none is, or when two are
 * equally near. */
const char *cmd_nearest(const char *word, const char *const *names, size_t n);
/* The same over a verb table (ends with {NULL}). */
const char *cmd_nearest_verb(const char *word, const CmdVerb *table);
/*
 * A verb's sub-verbs: runs the one argv[1] names.  A first word that is not
 * an option and names none is "unknown sub-verb 'nwe' of 'recipe' (did you
 * mean 'new'?)", before any option is read; returns -1 when argv[1] is an
 * option or missing (the caller parses it), else the exit status.
 */
int cmd_sub_verb(const char *verb, const CmdVerb *subs, int argc, char **argv);

#endif
