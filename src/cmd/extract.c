/*
 * extract.c - `d4r-splice extract BINARY... -o DIR`: PTX modules out of
 * vendor binaries.
 *
 * Options and printing only; the work is bin/extract.c.  Errors in one
 * input are printed as they are found and the other inputs are still
 * extracted; the exit status is 2 if there was any.  A progress line is
 * drawn on stderr while it is a terminal (and not with -q), and each file
 * of an earlier run that is removed is named there.
 */
#include "cmd.h"

#include "base/base.h"
#include "base/file.h"
#include "bin/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {"extract [options] -o DIR BINARY...",
                                    "extract [options] --list BINARY...", NULL};

typedef struct {
	bool quiet, list, progress, drawn;
	double last;
	const char *file;
	const Extractor *x;
} Ui;

static void clear_progress(Ui *u)
{
	if (u->drawn) {
		fputs("\r\033[K", stderr);
		u->drawn = false;
	}
}

static void on_error(void *ctx, const char *msg)
{
	Ui *u = ctx;
	clear_progress(u);
	fprintf(stderr, "d4r-splice: %s\n", msg);
}

static void on_note(void *ctx, const char *msg)
{
	Ui *u = ctx;
	clear_progress(u);
	if (!u->quiet)
		fprintf(stderr, "extract: %s\n", msg);
}

static void on_module(void *ctx, const ExtractModule *m)
{
	Ui *u = ctx;
	if (u->list && !m->filtered) {
		const FatbinEntry *en = m->en;
		printf("%s\t%s\t0x%zx\t0x%zx\tsm_%u\t%u.%u\t%s\t%zu\t%.16s\t%s\t%s\n", m->source,
		       en->section[0] ? en->section : "-", en->container_off, en->entry_off,
		       en->arch, en->ptx_major, en->ptx_minor, fatbin_codec_name(en->codec),
		       m->size, m->sha256, m->name[0] ? m->name : "-",
		       m->duplicate_of ? m->duplicate_of : "new");
	}
	if (u->progress) {
		double t = now_seconds();
		if (t - u->last >= 0.2) {
			const ExtractStats *st = extract_stats(u->x);
			u->last = t;
			fprintf(stderr, "\r\033[Kextract: %s: %u modules, %u duplicates, %.0f MiB",
			        u->file, st->written, st->skipped,
			        (double)st->bytes_written / (1 << 20));
			u->drawn = true;
		}
	}
}

int cmd_extract(int argc, char **argv)
{
	Ui u = {0};
	ExtractOpts o = {0};
	OptArch arch = {0};
	const Opt opts[] = {
		OPT_STRING('o', "output", &o.outdir, "DIR",
		           "the output folder (created if needed)"),
		OPT_FLAG('l', "list", &u.list,
		         "print the PTX entries found; write nothing"),
		OPT_CALLBACK(0, "arch", &arch, "sm_XX", opt_arch,
		             "keep only the entries for this architecture"),
		OPT_FLAG('q', "quiet", &u.quiet,
		         "no summary and no progress on standard error"),
		OPT_END(),
	};
	OptParse op = {.verb = "extract", .usage = usage, .opts = opts};
	int nfiles = opt_parse(&op, argc, argv);
	if (nfiles < 0)
		return op.status;
	if (!nfiles)
		return opt_usage_error(&op, "no input binary given");
	if (opt_conflict(&op, "output", "list"))
		return EXIT_ERROR;
	if (!u.list && (!o.outdir || !o.outdir[0]))
		return opt_usage_error(&op, "an output folder is required: -o DIR (or "
		                            "--list)");
	o.arch = arch.number;
	const char *const *files = (const char *const *)argv;
	u.progress = !u.quiet && isatty(2);
	o.on_error = on_error;
	o.on_module = on_module;
	o.on_note = on_note;
	o.ctx = &u;
	for (int i = 0; i < nfiles; i++)   /* no output replaces an input */
		file_input_add(files[i], "input");
	Err e = ERR_INIT;
	double t0 = now_seconds();
	Extractor *x = extract_new(&o, &e);
	if (!x) {
		int rc = cmd_fail("%s", err_msg(&e));
		err_release(&e);
		return rc;
	}
	u.x = x;
	int rc = EXIT_OK;
	for (int i = 0; i < nfiles; i++) {
		u.file = files[i];
		if (extract_file(x, files[i], &e) < 0) {
			clear_progress(&u);
			rc = cmd_fail("%s", err_msg(&e));
			break;
		}
	}
	if (rc == EXIT_OK && extract_finish(x, &e) < 0) {
		clear_progress(&u);
		rc = cmd_fail("%s", err_msg(&e));
	}
	clear_progress(&u);
	const ExtractStats *st = extract_stats(x);
	if (rc == EXIT_OK && st->errors)
		rc = EXIT_ERROR;
	if (!u.quiet)
		fprintf(stderr,
		        "extract: %u PTX entries in %u containers of %u files: %u modules %s "
		        "(%.1f MiB), %u duplicates skipped, %u filtered out, %u errors, %.2f s\n",
		        st->ptx_entries, st->containers, st->files, st->written,
		        u.list ? "distinct" : "written", (double)st->bytes_written / (1 << 20),
		        st->skipped, st->filtered, st->errors, now_seconds() - t0);
	extract_free(x);
	err_release(&e);
	return rc;
}
