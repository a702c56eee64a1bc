/*
 * fuzz_ptx.c - libFuzzer target for the PTX parser, emitter and self-check.
 *
 * Any byte string is fed to ptx_parse.  A parse may fail (with a located
 * message), but it must not crash, and whenever it succeeds the module must
 * re-emit the input byte for byte and pass ptx_verify: the parser may reject
 * input, never misread what it accepts.
 */
#include "base/err.h"
#include "base/strbuf.h"
#include "ptx/emit.h"
#include "ptx/parse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy so reads past the end are caught by ASan. */
	char *src = malloc(size ? size : 1);
	if (size)
		memcpy(src, data, size);
	Err e = ERR_INIT;
	Module *m = ptx_parse("fuzz.ptx", src, size, &e);
	if (!m) {
		if (!e.set || !err_msg(&e)[0]) {
			fprintf(stderr, "parse failed without a message\n");
			abort();
		}
		err_release(&e);
		free(src);
		return 0;
	}
	StrBuf out = STRBUF_INIT;
	if (ptx_emit(m, NULL, 0, &out, &e) < 0) {
		fprintf(stderr, "emit failed: %s\n", err_msg(&e));
		abort();
	}
	if (out.n != size || (size && memcmp(out.p, src, size) != 0)) {
		fprintf(stderr, "emit does not reproduce the input\n");
		abort();
	}
	if (ptx_verify(m, &e) < 0) {
		fprintf(stderr, "verify failed: %s\n", err_msg(&e));
		abort();
	}
	/* Walk the model the way analyses do. */
	for (size_t f = 0; f < m->funcs.n; f++) {
		const Func *fn = &m->funcs.v[f];
		for (uint32_t i = 0; i < fn->nstmt; i++) {
			const Stmt *s = func_stmt(m, fn, i);
			for (unsigned k = 0; k < s->nopd; k++)
				if (stmt_opd_index(m, s, k) >= m->opds.n)
					abort();
			sb_reset(&out);
			stmt_normalized(m, s, &out);
		}
	}
	sb_release(&out);
	mod_free(m);
	err_release(&e);
	free(src);
	return 0;
}
