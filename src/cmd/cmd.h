/*
 * cmd.h - one function per verb (git's builtin/), dispatched from main.c.
 *
 * Each cmd_<verb> parses its own options and calls the library.  It returns
 * the process exit status: 0 ok / identical, 1 differs, 2 error.
 */
#ifndef D4R_CMD_H
#define D4R_CMD_H

enum { EXIT_OK = 0, EXIT_DIFFERS = 1, EXIT_ERROR = 2 };

int cmd_roundtrip(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_phases(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_grep(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_splice(int argc, char **argv);
int cmd_recipe(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
/* `d4r-splice LAYER --phase N`: the main job (argv[0] is the layer). */
int cmd_job(int argc, char **argv);

/* Helpers shared by the verbs (cmd/common.c). */
/* Prints "d4r-splice: <msg>" to stderr and returns EXIT_ERROR. */
int cmd_fail(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;
/* Prints a usage line and returns EXIT_ERROR. */
int cmd_usage(const char *usage);

#endif
