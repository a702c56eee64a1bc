/*
 * fuzz_json.c - libFuzzer target for the readers of recipes and layer
 * manifests (base/json.h under splice/recipe.h and gpu/manifest.h).
 *
 * Any byte string is read as a recipe and as a manifest.  Either may be
 * refused, but never without a message, and every message names the file
 * first: "FILE: PATH: what" or "FILE:LINE:COL: what".
 */
#include "base/err.h"
#include "gpu/manifest.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy so reads past the end are caught by ASan. */
	char *text = malloc(size ? size : 1);
	if (size)
		memcpy(text, data, size);
	Err e = ERR_INIT;
	Recipe r;
	if (rcp_parse("fuzz.json", text, size, &r, &e) == 0)
		rcp_release(&r);
	else
		refused("fuzz.json", &e);
	err_clear(&e);
	Manifest m;
	if (mf_parse("fuzz-layer.json", text, size, &m, &e) == 0)
		mf_release(&m);
	else
		refused("fuzz-layer.json", &e);
	err_release(&e);
	free(text);
	return 0;
}
