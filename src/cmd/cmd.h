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
/* Parses a non-negative integer option value; -1 on bad syntax. */
int cmd_parse_uint(const char *s, unsigned *out);
/* --variant NAME: letters, digits and '_' (NULL passes); prints the
 * message and returns EXIT_ERROR otherwise, else 0. */
int cmd_check_variant(const char *variant);

#endif
