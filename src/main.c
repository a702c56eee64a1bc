/*
 * main.c - d4r-splice: cut, splice and prove hand-written phases in vendor PTX.
 *
 * The verbs live in src/cmd/, one file each; this file only dispatches
 * (git.c's commands[]).  `d4r-splice LAYER --phase N` - the first word not a
 * verb - is the main job.  Standard output is flushed and closed, and the
 * result checked, before exiting, so a full disk is an error, not silence.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef D4R_VERSION
#define D4R_VERSION "0.1.0"
#endif

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{"roundtrip", cmd_roundtrip, "parse and re-emit PTX; prove it byte-identical"},
	{"extract", cmd_extract, "pull PTX modules out of vendor binaries"},
	{"phases", cmd_phases, "the mma phase table of a module"},
	{"show", cmd_show, "statements of a phase or range, with the cut interface"},
	{"grep", cmd_grep, "search statement text with a regular expression"},
	{"report", cmd_report, "per-phase cut report with validity and provenance"},
	{"splice", cmd_splice, "apply a cut recipe and write the spliced module"},
	{"recipe", cmd_recipe, "write a recipe scaffold, or check a recipe"},
	{"run", cmd_run, "run a layer's module on the GPU and write its frame"},
	{"diff", cmd_diff, "compare two frames on disk"},
	{"check", cmd_check, "every recipe of a layer against the oracle (CI)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: d4r-splice LAYER --phase N [options]   (the main job)\n"
	           "       d4r-splice <verb> [options] [args]\n\nverbs:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nSee d4r-splice(1) for details.\n");
}

static int close_stdout(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "d4r-splice: cannot write to standard output: %s\n",
			        strerror(errno));
		return 2;
	}
	if (fclose(stdout) != 0 && errno != EPIPE) {
		fprintf(stderr, "d4r-splice: cannot close standard output: %s\n",
		        strerror(errno));
		return 2;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *verb = argv[1];
	if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help")) {
		usage(stdout);
		return close_stdout(0);
	}
	if (!strcmp(verb, "--version") || !strcmp(verb, "version")) {
		printf("d4r-splice %s\n", D4R_VERSION);
		return close_stdout(0);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(verb, commands[i].name))
			return close_stdout(commands[i].fn(argc - 1, argv + 1));
	if (verb[0] == '-') {
		fprintf(stderr, "d4r-splice: unknown option '%s'\n", verb);
		usage(stderr);
		return 2;
	}
	return close_stdout(cmd_job(argc - 1, argv + 1));
}
