/*
 * roundtrip.c - `d4r-splice roundtrip FILE...`: parse, re-emit, compare.
 *
 * Proves the parser lossless on real input: each file is parsed, emitted with
 * no edits, and compared with its bytes; the model's own check (ptx_verify)
 * also re-renders every statement from its parsed parts, so a statement whose
 * operands were misread fails even though the emitted bytes would match.
 */
#include "base/err.h"
#include "base/file.h"
#include "cmd.h"
#include "ptx/emit.h"
#include "ptx/parse.h"

#include <stdio.h>
#include <string.h>

/* Compares the emitted bytes with the input as they come, so the module is
 * never held twice in memory. */
typedef struct {
	const char *src;
	size_t n, at;
	size_t first_diff;  /* (size_t)-1 while equal */
} Cmp;

static int compare_sink(void *ctx, const char *p, size_t n)
{
	Cmp *c = ctx;
	if (c->first_diff == (size_t)-1) {
		size_t k = 0, avail = c->at < c->n ? c->n - c->at : 0;
		size_t m = n < avail ? n : avail;
		if (memcmp(c->src + c->at, p, m) != 0) {
			while (k < m && c->src[c->at + k] == p[k])
				k++;
			c->first_diff = c->at + k;
		} else if (n > avail)
			c->first_diff = c->n; /* longer than the input */
	}
	c->at += n;
	return 0;
}

static const char *const usage[] = {"roundtrip [options] FILE...", NULL};

int cmd_roundtrip(int argc, char **argv)
{
	bool stats = false, no_verify = false;
	int rc = EXIT_OK;
	const Opt opts[] = {
		OPT_FLAG(0, "stats", &stats,
		         "a line per file: sizes, counts, parse time, result"),
		OPT_FLAG(0, "no-verify", &no_verify,
		         "compare the bytes only; skip the model's self-check"),
		OPT_END(),
	};
	OptParse op = {.verb = "roundtrip", .usage = usage, .opts = opts};
	int nfiles = opt_parse(&op, argc, argv);
	if (nfiles < 0)
		return op.status;
	if (!nfiles)
		return opt_usage_error(&op, "no PTX file given");
	bool verify = !no_verify;
	if (stats)
		printf("%-40s %10s %6s %9s %7s %9s %s\n", "file", "bytes", "funcs", "stmts", "mma",
		       "parse_ms", "result");
	for (int i = 0; i < nfiles; i++) {
		Err e = ERR_INIT;
		MapFile mf;
		if (map_open(&mf, argv[i], &e) < 0) {
			fprintf(stderr, "d4r-splice: %s\n", err_msg(&e));
			err_release(&e);
			rc = EXIT_ERROR;
			continue;
		}
		double t0 = now_seconds();
		Module *m = ptx_parse(argv[i], mf.p, mf.n, &e);
		double t1 = now_seconds();
		if (!m) {
			fprintf(stderr, "%s\n", err_msg(&e));
			err_release(&e);
			map_close(&mf);
			rc = EXIT_ERROR;
			continue;
		}
		const char *result = "identical";
		Cmp cmp = {mf.p, mf.n, 0, (size_t)-1};
		if (ptx_emit_to(m, NULL, 0, compare_sink, &cmp, &e) < 0) {
			fprintf(stderr, "%s\n", err_msg(&e));
			result = "error";
			rc = EXIT_ERROR;
		} else if (cmp.first_diff != (size_t)-1 || cmp.at != mf.n) {
			size_t k = cmp.first_diff != (size_t)-1 ? cmp.first_diff : cmp.at;
			err_at(&e, argv[i], mf.p, mf.n, k, "re-emitted module differs from the input here");
			fprintf(stderr, "%s\n", err_msg(&e));
			result = "DIFFERS";
			if (rc == EXIT_OK)
				rc = EXIT_DIFFERS;
		} else if (verify && ptx_verify(m, &e) < 0) {
			fprintf(stderr, "%s\n", err_msg(&e));
			result = "DIFFERS";
			if (rc == EXIT_OK)
				rc = EXIT_DIFFERS;
		}
		if (stats) {
			size_t nst = m->stmts.n, nf = 0;
			for (size_t f = 0; f < m->funcs.n; f++)
				nf += !(m->funcs.v[f].flags & FNF_DECL);
			const char *base = strrchr(argv[i], '/');
			printf("%-40s %10zu %6zu %9zu %7u %9.2f %s\n", base ? base + 1 : argv[i], mf.n, nf,
			       nst, m->nmma, (t1 - t0) * 1e3, result);
		}
		mod_free(m);
		map_close(&mf);
		err_release(&e);
	}
	return rc;
}
