/*
 * fuzz_recipe.c - libFuzzer target for the recipe reader (splice/recipe.h
 * over base/json.h).
 *
 * Any byte string is read as a recipe.  It may be refused, but never
 * without a message, and every message names the file first: "FILE: PATH:
 * what" or "FILE:LINE:COL: what".  What is accepted keeps the reader's
 * promises: a built-in template takes no bindings or parameters, the guard
 * is 64 lower-case hex digits, each anchor given is compiled and can be
 * matched, every file name stays inside its folder, and no string holds a
 * NUL the text did not show.
 */
#include "base/err.h"
#include "base/layout.h"
#include "splice/recipe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(const char *file, const Err *e)
{
	size_t n = strlen(file);
	if (!e->set || strncmp(err_msg(e), file, n) || (err_msg(e)[n] != ':')) {
		fprintf(stderr, "refused without a message naming '%s': '%s'\n", file,
		        e->set ? err_msg(e) : "(none)");
		abort();
	}
}

static void accepted(const Recipe *r)
{
	if (r->tkind != TPL_FILE && (r->binds.n || r->params.n))
		abort();
	if (!r->sha256 || strlen(r->sha256) != 64 || strspn(r->sha256, "0123456789abcdef") != 64)
		abort();
	if (!!r->first_re != !!r->first_code || !!r->last_re != !!r->last_code)
		abort();
	if (r->module && !layout_inside(r->module))
		abort();
	if (r->tkind == TPL_FILE && !layout_inside(r->template_name))
		abort();
	for (size_t i = 0; i < r->binds.n; i++)
		if (!r->binds.v[i].nregs || (!r->binds.v[i].list && r->binds.v[i].nregs != 1))
			abort();
	/* the anchors run against a real statement, and an odd subject */
	static const char stmt[] = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r12, "
	                           "%r13}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r11, %r11};";
	Err e = ERR_INIT;
	for (int last = 0; last < 2; last++) {
		if (rcp_guard_match(r, last, stmt, sizeof stmt - 1, &e) < 0)
			refused(r->path, &e);
		if (rcp_guard_match(r, last, "", 0, &e) < 0)
			refused(r->path, &e);
	}
	err_release(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy so reads past the end are caught by ASan. */
	char *text = malloc(size ? size : 1);
	if (size)
		memcpy(text, data, size);
	Err e = ERR_INIT;
	Recipe r;
	if (rcp_parse("fuzz.json", text, size, &r, &e) == 0) {
		accepted(&r);
		rcp_release(&r);
	} else
		refused("fuzz.json", &e);
	err_release(&e);
	free(text);
	return 0;
}
