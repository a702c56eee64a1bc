/*
 * fuzz_nvinfo.c - libFuzzer target for the parameter-layout readers of the
 * capture stage (src/capture/nvinfo.c): a cubin's .nv.info records and a
 * PTX entry's parameter list, and the image classification the tap uses.
 *
 * Any byte string is read as an ELF cubin (the .nv.info.k section), as PTX
 * (`.entry k`), and as an image of any kind.  Errors are expected; crashes,
 * over-reads (ASan), undefined behaviour (UBSan), a layout that leaves the
 * block it states, and errors without a file offset are not.
 */
#include "base/err.h"
#include "capture/capture.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const CapParams *p, int r, Err *e)
{
	if (r < 0 && !strstr(err_msg(e), "offset 0x")) {
		fprintf(stderr, "an error without an offset: %s\n", err_msg(e));
		abort();
	}
	for (size_t i = 0; r > 0 && i < p->n; i++)
		if ((uint64_t)p->v[i].offset + p->v[i].size > p->block_size) {
			fprintf(stderr, "parameter %zu at %u + %u leaves the %u-byte block\n", i,
			        p->v[i].offset, p->v[i].size, p->block_size);
			abort();
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy of the exact size, so reads past the end are caught. */
	uint8_t *p = malloc(size ? size : 1);
	if (size)
		memcpy(p, data, size);
	CapParams out;
	Err e = ERR_INIT;
	int r = cap_nvinfo_params(p, size, "k", &out, &e);
	check(&out, r, &e);
	cap_params_release(&out);
	err_release(&e);
	r = cap_ptx_params((const char *)p, size, "k", &out, &e);
	check(&out, r, &e);
	cap_params_release(&out);
	err_release(&e);
	const char *source = NULL;
	r = cap_image_params(p, size, "k", &out, &source, &e);
	check(&out, r, &e);
	cap_params_release(&out);
	err_release(&e);
	(void)cap_image_has_kernel(p, size, "k");
	free(p);
	return 0;
}
