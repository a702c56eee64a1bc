/*
 * extract.c - `d4r-splice extract BINARY... -o DIR`: PTX modules out of
 * vendor binaries.
 *
 * Options and printing only; the work is bin/extract.c.  Errors in one
 * input are printed as they are found and the other inputs are still
 * extracted; the exit status is 2 if there was any.  A progress line is
 * drawn on stderr while it is a terminal (and not with -q).
 */
#include "cmd.h"

#include "base/base.h"
#include "bin/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"d4r-splice extract [-q] [--arch sm_XX] (-o DIR | --list) BINARY...";

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

/* "sm_90", "compute_90" or "90" -> 90; 0 when malformed. */
static unsigned parse_arch(const char *s)
{
	if (!strncmp(s, "sm_", 3))
		s += 3;
	else if (!strncmp(s, "compute_", 8))
		s += 8;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (end == s || (*end && *end != 'a' && *end != 'f') || v == 0 || v > 10000)
		return 0;
	return (unsigned)v;
}

int cmd_extract(int argc, char **argv)
{
	Ui u = {0};
	ExtractOpts o = {0};
	const char **files = xcalloc((size_t)argc + 1, sizeof *files);
	size_t nfiles = 0;
	bool opts = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts && (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--arch"))) {
			if (i + 1 >= argc) {
				free(files);
				cmd_fail("option '%s' needs a value", a);
				return cmd_usage(usage_text);
			}
			if (!strcmp(a, "--arch")) {
				o.arch = parse_arch(argv[++i]);
				if (!o.arch) {
					free(files);
					return cmd_fail("bad architecture '%s' (want sm_XX)", argv[i]);
				}
			} else {
				o.outdir = argv[++i];
			}
		} else if (opts && !strncmp(a, "--output=", 9)) {
			o.outdir = a + 9;
		} else if (opts && !strncmp(a, "--arch=", 7)) {
			o.arch = parse_arch(a + 7);
			if (!o.arch) {
				free(files);
				return cmd_fail("bad architecture '%s' (want sm_XX)", a + 7);
			}
		} else if (opts && !strncmp(a, "-o", 2) && a[2]) {
			o.outdir = a + 2;
		} else if (opts && (!strcmp(a, "-q") || !strcmp(a, "--quiet"))) {
			u.quiet = true;
		} else if (opts && (!strcmp(a, "-l") || !strcmp(a, "--list"))) {
			u.list = true;
		} else if (opts && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			free(files);
			printf("usage: %s\n", usage_text);
			return EXIT_OK;
		} else if (opts && !strcmp(a, "--")) {
			opts = false;
		} else if (opts && a[0] == '-' && a[1]) {
			free(files);
			cmd_fail("unknown option '%s'", a);
			return cmd_usage(usage_text);
		} else {
			files[nfiles++] = a;
		}
	}
	if (!nfiles || (!o.outdir && !u.list) || (o.outdir && !o.outdir[0])) {
		free(files);
		if (!nfiles)
			cmd_fail("no input binary given");
		else
			cmd_fail("an output folder is required: -o DIR (or --list)");
		return cmd_usage(usage_text);
	}
	if (u.list)
		o.outdir = NULL;   /* --list writes nothing */
	u.progress = !u.quiet && isatty(2);
	o.on_error = on_error;
	o.on_module = on_module;
	o.ctx = &u;
	Err e = ERR_INIT;
	double t0 = now_seconds();
	Extractor *x = extract_new(&o, &e);
	if (!x) {
		free(files);
		int rc = cmd_fail("%s", err_msg(&e));
		err_release(&e);
		return rc;
	}
	u.x = x;
	int rc = EXIT_OK;
	for (size_t i = 0; i < nfiles; i++) {
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
	free(files);
	return rc;
}
