/*
 * fuzz_ptx.c - libFuzzer target for the PTX parser, emitter and self-check.
 *
 * Any byte string is fed to ptx_parse.  A parse may fail (with a located
 * message), but it must not crash, and whenever it succeeds the module must
 * re-emit the input byte for byte and pass ptx_verify (which also checks
 * the scope records): the parser may reject input, never misread what it
 * accepts.  The same bytes go through the lexer's token reader, whose
 * tokens must tile them and count their lines.
 */
#include "base/err.h"
#include "base/strbuf.h"
#include "ptx/emit.h"
#include "ptx/lex.h"
#include "ptx/parse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every byte in exactly one token, in order; no empty token but the end;
 * the line count is the newlines seen plus one. */
static void lex_tiles(const char *src, size_t size)
{
	Lexer lx = ptx_lex_init(src, size);
	const char *at = src;
	uint32_t lines = 1;
	for (;;) {
		Token t = ptx_lex_next(&lx);
		if (t.p != at)
			abort();
		if (t.kind == TK_END) {
			if (t.n || at != src + size)
				abort();
			break;
		}
		if (!t.n || t.n > (size_t)(src + size - at))
			abort();
		for (uint32_t i = 0; i < t.n; i++)
			lines += t.p[i] == '\n';
		if (lx.line != lines)
			abort();
		at += t.n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy so reads past the end are caught by ASan. */
	char *src = malloc(size ? size : 1);
	if (size)
		memcpy(src, data, size);
	lex_tiles(src, size);
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
		uint32_t *sc = malloc((fn->nstmt + 1) * sizeof(uint32_t));
		func_stmt_scopes(m, fn, sc);
		for (uint32_t i = 0; i < fn->nstmt; i++) {
			const Stmt *s = func_stmt(m, fn, i);
			const Scope *in = func_scope(m, fn, sc[i]);
			if (s->off < in->open || s->off > in->close)
				abort();
			for (unsigned k = 0; k < s->nopd; k++)
				if (stmt_opd_index(m, s, k) >= m->opds.n)
					abort();
			sb_reset(&out);
			stmt_normalized(m, s, &out);
		}
		free(sc);
	}
	sb_release(&out);
	mod_free(m);
	err_release(&e);
	free(src);
	return 0;
}
