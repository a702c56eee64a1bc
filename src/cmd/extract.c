/*
 * extract.c - `d4r-splice extract BINARY... -o DIR`: PTX modules out of
 * vendor binaries.
 *
 * Options and printing only; the work is bin/extract.c.  Errors in one
 * input are printed as they are found and the other inputs are still
 * extracted; the exit status is 2 if there was any.  A progress line
 * (base/progress.h: files done of all, modules, duplicates, MiB) is drawn
 * on stderr while it is a terminal (and not with -q), and each file of an
 * earlier run that is removed is named there.  --json prints the modules
 * (written, or found with --list) and the counts as one JSON object.
 */
#include "cmd.h"

#include "base/base.h"
#include "base/file.h"
#include "base/progress.h"
#include "bin/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {"extract [options] -o DIR BINARY...",
                                    "extract [options] --list BINARY...", NULL};

typedef struct {
	bool quiet, list;
	Progress *pg;
	const char *file;
	const Extractor *x;
	cJSON *jmods; /* --json: the modules' array, else NULL */
} Ui;

static void clear_progress(Ui *u)
{
	progress_hide(u->pg);
}

/* One module as a row of --json. */
static void module_json(cJSON *a, const ExtractModule *m)
{
	const FatbinEntry *en = m->en;
	cJSON *o = cJSON_CreateObject();
	char v[32];
	cJSON_AddStringToObject(o, "source", m->source);
	cmd_json_str_or_null(o, "section", en->section[0] ? en->section : NULL);
	cJSON_AddNumberToObject(o, "container_offset", (double)en->container_off);
	cJSON_AddNumberToObject(o, "entry_offset", (double)en->entry_off);
	snprintf(v, sizeof v, "sm_%u", en->arch);
	cJSON_AddStringToObject(o, "arch", v);
	snprintf(v, sizeof v, "%u.%u", en->ptx_major, en->ptx_minor);
	cJSON_AddStringToObject(o, "ptx_version", v);
	cJSON_AddStringToObject(o, "codec", fatbin_codec_name(en->codec));
	cJSON_AddNumberToObject(o, "bytes", (double)m->size);
	cJSON_AddStringToObject(o, "sha256", m->sha256);
	cmd_json_str_or_null(o, "name", m->name[0] ? m->name : NULL);
	cmd_json_str_or_null(o, "file", m->file);
	cmd_json_str_or_null(o, "duplicate_of", m->duplicate_of);
	cJSON_AddItemToArray(a, o);
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
	if (u->jmods && !m->filtered)
		module_json(u->jmods, m);
	else if (u->list && !m->filtered) {
		const FatbinEntry *en = m->en;
		printf("%s\t%s\t0x%zx\t0x%zx\tsm_%u\t%u.%u\t%s\t%zu\t%.16s\t%s\t%s\n", m->source,
		       en->section[0] ? en->section : "-", en->container_off, en->entry_off,
		       en->arch, en->ptx_major, en->ptx_minor, fatbin_codec_name(en->codec),
		       m->size, m->sha256, m->name[0] ? m->name : "-",
		       m->duplicate_of ? m->duplicate_of : "new");
	}
	if (u->pg) {
		const ExtractStats *st = extract_stats(u->x);
		progress_detail(u->pg, "%u modules, %u duplicates, %.0f MiB", st->written, st->skipped,
		                (double)st->bytes_written / (1 << 20));
	}
}

int cmd_extract(int argc, char **argv)
{
	Ui u = {0};
	ExtractOpts o = {0};
	OptArch arch = {0};
	bool json = false;
	const Opt opts[] = {
		OPT_STRING('o', "output", &o.outdir, "DIR",
		           "the output folder (created if needed)"),
		OPT_FLAG('l', "list", &u.list,
		         "print the PTX entries found; write nothing"),
		OPT_CALLBACK(0, "arch", &arch, "sm_XX", opt_arch,
		             "keep only the entries for this architecture"),
		OPT_FLAG('q', "quiet", &u.quiet,
		         "no summary and no progress on standard error"),
		OPT_FLAG(0, "json", &json, "one JSON object: the modules and the counts"),
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
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	if (doc)
		u.jmods = cJSON_AddArrayToObject(doc, "modules");
	if (!u.quiet)
		u.pg = progress_start("extract", (size_t)nfiles, "files");
	int rc = EXIT_OK;
	for (int i = 0; i < nfiles; i++) {
		u.file = files[i];
		progress_item(u.pg, files[i]);
		int xr = extract_file(x, files[i], &e);
		progress_step(u.pg, NULL);
		if (xr < 0) {
			clear_progress(&u);
			rc = cmd_fail("%s", err_msg(&e));
			break;
		}
	}
	if (rc == EXIT_OK && extract_finish(x, &e) < 0) {
		clear_progress(&u);
		rc = cmd_fail("%s", err_msg(&e));
	}
	progress_end(u.pg);
	const ExtractStats *st = extract_stats(x);
	if (rc == EXIT_OK && st->errors)
		rc = EXIT_ERROR;
	if (doc) {
		cJSON_AddBoolToObject(doc, "list", u.list);
		cmd_json_str_or_null(doc, "output", o.outdir);
		cJSON_AddNumberToObject(doc, "files", st->files);
		cJSON_AddNumberToObject(doc, "containers", st->containers);
		cJSON_AddNumberToObject(doc, "ptx_entries", st->ptx_entries);
		cJSON_AddNumberToObject(doc, "distinct", st->written);
		cJSON_AddNumberToObject(doc, "duplicates", st->skipped);
		cJSON_AddNumberToObject(doc, "filtered", st->filtered);
		cJSON_AddNumberToObject(doc, "errors", st->errors);
		cJSON_AddNumberToObject(doc, "bytes", (double)st->bytes_written);
		if (rc == EXIT_ERROR && !cmd_json_error_msg())
			cJSON_AddStringToObject(doc, "message", "some inputs could not be read");
		cmd_json_print(doc, rc);
	}
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
