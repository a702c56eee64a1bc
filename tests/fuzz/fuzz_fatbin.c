/*
 * fuzz_fatbin.c - libFuzzer target for the container reader.
 *
 * Any byte string is classified (ELF, PE, fatbin, unknown), scanned for
 * containers and walked; every PTX entry is decompressed and its names
 * read.  Errors are expected; crashes, over-reads (ASan), undefined
 * behaviour (UBSan), endless scans and errors without a file offset are
 * not.  Entries that state an uncompressed size over 16 MiB are not
 * decompressed here: the reader would honour such a size if the payload
 * really produced it, and that costs the fuzzer time, not coverage.
 */
#include "base/err.h"
#include "bin/extract.h"
#include "bin/fatbin.h"
#include "bin/objfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void name_cb(void *ctx, Str s)
{
	size_t *n = ctx;
	*n += s.n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy of the exact size, so reads past the end are caught. */
	uint8_t *p = malloc(size ? size : 1);
	if (size)
		memcpy(p, data, size);
	ObjFile o;
	obj_regions(&o, p, size);
	FatbinScan s;
	fatbin_scan_init(&s, p, size, &o);
	uint8_t *buf = NULL;
	size_t cap = 0;
	/* Each step consumes at least one byte or one entry of >= 64 bytes. */
	for (size_t steps = 0;; steps++) {
		if (steps > 4 * size + 16) {
			fprintf(stderr, "fuzz_fatbin: scan does not end\n");
			abort();
		}
		FatbinEntry en;
		Err e = ERR_INIT;
		int r = fatbin_scan_next(&s, &en, &e);
		if (r < 0 && strncmp(err_msg(&e), "offset 0x", 9) != 0) {
			fprintf(stderr, "fuzz_fatbin: error without an offset: %s\n", err_msg(&e));
			abort();
		}
		if (r > 0 && en.kind == FATBIN_PTX && en.raw_size <= (16u << 20)) {
			if ((const uint8_t *)en.data < p || en.data + en.data_size > p + size)
				abort();
			size_t len;
			if (fatbin_entry_data(&en, &buf, &cap, &len, &e) == 0) {
				size_t names = 0;
				char first[64];
				extract_entry_names((const char *)buf, len, name_cb, &names);
				extract_first_name((const char *)buf, len, first, sizeof first);
			} else if (strncmp(err_msg(&e), "offset 0x", 9) != 0) {
				fprintf(stderr, "fuzz_fatbin: error without an offset: %s\n", err_msg(&e));
				abort();
			}
		}
		err_release(&e);
		if (r == 0)
			break;
	}
	free(buf);
	obj_release(&o);
	free(p);
	return 0;
}
