/*
 * main.c - d4r-splice: cut, splice and prove hand-written phases in vendor PTX.
 *
 * The verbs live in src/cmd/, one file each; this file only dispatches
 * (git.c's commands[]).  `d4r-splice LAYER --phase N` - the first word not a
 * verb - is the main job.  Words starting with '-' before any verb are the
 * global options, read with the same option parser as every verb's.
 * Standard output is flushed and closed, and the result checked, before
 * exiting, so a full disk is an error, not silence.
 *
 * Decisions:
 *  - `--list-verbs` (not in --help) prints every verb and sub-verb, one a
 *    line ("recipe new"), for the tests and for shell completion; with
 *    `VERB --list-options` on each, and `LAYER --list-options` for the main
 *    job, it is the whole command line's grammar.
 *  - Standard output is line-buffered when it is a pipe (or a socket), so a
 *    CI log shows each result line as it is made, not when a buffer fills.
 *  - --json: main.c asks for it from the words before the options are
 *    parsed and prints the error document of a verb that ends without one
 *    (cmd/jsonout.h); the main job prints its own on every exit path.
 *  - A first word that is neither a verb nor a layer, and is one typo away
 *    from a verb, is an unknown verb with the verb it was meant to be
 *    ("unknown verb 'splcie' (did you mean 'splice'?)"); a layer of that
 *    name, when there is one, is still the main job's.
 *  - The progress line (base/progress.h) hears of the driver's JIT and the
 *    launches through the GPU child's watcher, installed here for every
 *    verb; children waited for at the same time (the two JITs of the main
 *    job) are named together on it.
 */
#include "base/layout.h"
#include "base/progress.h"
#include "cmd/cmd.h"
#include "gpu/child.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef D4R_VERSION
#define D4R_VERSION "0.1.0"
#endif

static const CmdVerb commands[] = {
	{"roundtrip", cmd_roundtrip, "parse and re-emit PTX; prove it byte-identical",
	 NULL},
	{"extract", cmd_extract, "pull PTX modules out of vendor binaries", NULL},
	{"phases", cmd_phases, "the mma phase table of a module", NULL},
	{"show", cmd_show, "statements of a phase or range, with the cut interface",
	 NULL},
	{"grep", cmd_grep, "search statement text with a regular expression", NULL},
	{"report", cmd_report, "per-phase cut report with validity and provenance", NULL},
	{"splice", cmd_splice, "apply a cut recipe and write the spliced module", NULL},
	{"recipe", cmd_recipe, "write a recipe scaffold, or check a recipe",
	 cmd_recipe_verbs},
	{"run", cmd_run, "run a layer's module on the GPU and write its frame", NULL},
	{"diff", cmd_diff, "compare two frames on disk", NULL},
	{"check", cmd_check, "every recipe of a layer against the oracle (CI)", NULL},
	{"probe", cmd_probe, "instrument a module: store registers after its phases", NULL},
	{"bisect", cmd_bisect, "where an original and a spliced module first differ", NULL},
	{"profile", cmd_profile, "cycles per phase and epilogue, original vs spliced", NULL},
	{"capture", cmd_capture, "record a launch of a running program as a layer", NULL},
	{"replay", cmd_replay, "one cut alone, from the state at its start", NULL},
	{NULL, NULL, NULL, NULL},
};

static const char *const usage[] = {
	"LAYER --phase N [options]   (the main job)",
	"VERB [options] [args]",
	"(--help | --version)",
	NULL,
};

static void list_verbs(FILE *f)
{
	fputs("\nverbs:\n", f);
	for (const CmdVerb *v = commands; v->name; v++)
		fprintf(f, "  %-10s %s\n", v->name, v->help);
	fputs("\nd4r-splice VERB --help lists a verb's options; d4r-splice(1) says "
	      "more.\n", f);
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

/* The global options: words starting with '-' before any verb.  `out` is
 * where --help goes. */
static int global_options(int argc, char **argv, FILE *out)
{
	bool version = false, verbs = false;
	const Opt opts[] = {
		OPT_FLAG(0, "version", &version, "print the version"),
		{.type = OT_FLAG, .long_name = "list-verbs", .value = &verbs,
		 .flags = OPTF_HIDDEN},
		OPT_END(),
	};
	OptParse op = {.verb = "", .usage = usage, .opts = opts, .more_help = list_verbs,
	               .out = out};
	int nargs = opt_parse(&op, argc, argv);
	if (nargs < 0)
		return op.status;
	if (nargs)
		return opt_usage_error(&op, "unexpected argument '%s': the verb comes "
		                            "first", argv[0]);
	if (verbs) {
		for (const CmdVerb *v = commands; v->name; v++) {
			printf("%s\n", v->name);
			for (const CmdVerb *s = v->sub; s && s->name; s++)
				printf("%s %s\n", v->name, s->name);
		}
	} else if (version)
		printf("d4r-splice %s\n", D4R_VERSION);
	return EXIT_OK;
}

/* The children being waited for now, one per waiting thread (the main job
 * JITs its two modules side by side; check waits on --jobs children). */
enum { WAITS = 16 };
static struct {
	pthread_t thread;
	bool used, jit;
	char what[96]; /* "original" for a JIT, else the whole phrase */
	double seconds;
} waits[WAITS];
static pthread_mutex_t waits_lock = PTHREAD_MUTEX_INITIALIZER;

/* The progress line's wait, from every child waited for: "compiling
 * original and spliced (driver JIT) 8 s", "running pattern 2 s". */
static void waits_show(void)
{
	char jit[160] = "", other[160] = "";
	double jit_s = 0, other_s = 0;
	unsigned njit = 0;
	for (int i = 0; i < WAITS; i++) {
		if (!waits[i].used)
			continue;
		if (waits[i].jit) {
			size_t n = strlen(jit);
			snprintf(jit + n, sizeof jit - n, "%s%s", njit ? " and " : "", waits[i].what);
			njit++;
			jit_s = waits[i].seconds > jit_s ? waits[i].seconds : jit_s;
		} else if (!other[0]) {
			snprintf(other, sizeof other, "%s", waits[i].what);
			other_s = waits[i].seconds;
		}
	}
	char what[200];
	if (njit)
		snprintf(what, sizeof what, "compiling %s (driver JIT)", jit);
	if (njit)
		progress_wait(what, jit_s);
	else if (other[0])
		progress_wait(other, other_s);
	else
		progress_wait(NULL, 0);
}

/* What a GPU child's stage means to the user, on the progress line. */
static void child_watch(void *ctx, const char *stage, double seconds)
{
	pthread_t self = pthread_self();
	pthread_mutex_lock(&waits_lock);
	int slot = -1, free_slot = -1;
	for (int i = 0; i < WAITS && slot < 0; i++) {
		if (waits[i].used && pthread_equal(waits[i].thread, self))
			slot = i;
		else if (!waits[i].used && free_slot < 0)
			free_slot = i;
	}
	if (!stage) {
		if (slot >= 0)
			waits[slot].used = false;
	} else if (slot >= 0 || free_slot >= 0) {
		int k = slot >= 0 ? slot : free_slot;
		waits[k].thread = self;
		waits[k].used = true;
		waits[k].jit = !strncmp(stage, "jit ", 4);
		waits[k].seconds = seconds;
		if (waits[k].jit)
			snprintf(waits[k].what, sizeof waits[k].what, "%s", stage + 4);
		else if (!strcmp(stage, "launch timing"))
			snprintf(waits[k].what, sizeof waits[k].what, "timing the kernels");
		else if (!strncmp(stage, "launch ", 7))
			snprintf(waits[k].what, sizeof waits[k].what, "running %s", stage + 7);
		else
			snprintf(waits[k].what, sizeof waits[k].what, "starting the GPU");
	}
	waits_show();
	pthread_mutex_unlock(&waits_lock);
}

int main(int argc, char **argv)
{
	struct stat so;
	if (fstat(STDOUT_FILENO, &so) == 0 && (S_ISFIFO(so.st_mode) || S_ISSOCK(so.st_mode)))
		setvbuf(stdout, NULL, _IOLBF, 0);
	gpu_child_watch(child_watch, NULL);
	cmd_json_request(argc - 1, argv + 1);
	char *help[] = {argv[0], (char *)"--help", NULL};
	char *version[] = {argv[0], (char *)"--version", NULL};
	if (argc < 2) {
		global_options(2, help, stderr);
		return 2;
	}
	const char *verb = argv[1];
	if (verb[0] == '-')
		return close_stdout(global_options(argc, argv, stdout));
	if (!strcmp(verb, "help"))
		return close_stdout(global_options(2, help, stdout));
	if (!strcmp(verb, "version"))
		return close_stdout(global_options(2, version, stdout));
	for (const CmdVerb *v = commands; v->name; v++)
		if (!strcmp(verb, v->name))
			return close_stdout(cmd_json_finish(v->fn(argc - 1, argv + 1)));
	/* Not a verb: a layer, or a verb mistyped.  A word that names no layer
	 * and is a typo of a verb is said to be one; any other is the main
	 * job's to refuse ("no layer 'foo'"). */
	Err e = ERR_INIT;
	char *manifest = layout_find_layer(verb, &e);
	err_release(&e);
	const char *near = manifest ? NULL : cmd_nearest_verb(verb, commands);
	free(manifest);
	if (near)
		return close_stdout(cmd_json_finish(cmd_fail(
		    "unknown verb '%s' (did you mean '%s'?)", verb, near)));
	return close_stdout(cmd_job(argc - 1, argv + 1));
}
