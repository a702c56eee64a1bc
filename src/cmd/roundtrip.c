/*
 * roundtrip.c - `d4r-splice roundtrip FILE...`: parse, re-emit, compare.
 *
 * Proves the parser lossless on real input: each file is parsed, emitted with
 * no edits, and compared with its bytes; the model's own check (ptx_verify)
 * also re-renders every statement from its parsed parts, so a statement whose
 * operands were misread fails even though the emitted bytes would match.
 * "-" reads standard input.  --json gives one object, a row per file.
 * With --check=ptxas, a file that round-trips is also given to ptxas, every
 * entry (its answer cached, as splice's: splice/ptxas.h), so that a module
 * of the corpus is proven both parsed losslessly and valid PTX.
 */
#include "base/err.h"
#include "base/file.h"
#include "cmd.h"
#include "ptx/emit.h"
#include "ptx/opcheck.h"
#include "ptx/parse.h"
#include "splice/ptxas.h"
#include "splice/splice.h"

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

/* --opcodes: the first statement whose opcode is not the PTX ISA's (the
 * check templates get, ptx/opcheck.h), at its line and column. */
static int check_opcodes(const Module *m, const char *name, const char *src, size_t n, Err *e)
{
	for (size_t i = 0; i < m->stmts.n; i++) {
		const Stmt *s = &m->stmts.v[i];
		Str op = stmt_opcode(m, s);
		OpProblem pr;
		if (ptx_opcode_check(op.p, op.n, &pr))
			return err_at(e, name, src, n, s->off + s->opdelta + pr.off, "%s", pr.msg);
	}
	return 0;
}

/* A file that could not be read or parsed, as a row of --json. */
static void file_error(cJSON *row, const char *msg)
{
	cmd_json_error(msg);
	if (!row)
		return;
	cJSON_AddStringToObject(row, "result", "error");
	cJSON_AddNullToObject(row, "bytes");
	cJSON_AddNullToObject(row, "functions");
	cJSON_AddNullToObject(row, "statements");
	cJSON_AddNullToObject(row, "mma");
	cJSON_AddNullToObject(row, "parse_ms");
	cJSON_AddNullToObject(row, "ptxas");
	cJSON_AddStringToObject(row, "message", msg);
}

int cmd_roundtrip(int argc, char **argv)
{
	bool stats = false, no_verify = false, json = false, opcodes = false, no_cache = false;
	const char *check = "none";
	OptArch arch_o = {0};
	int rc = EXIT_OK;
	const Opt opts[] = {
		OPT_FLAG(0, "stats", &stats,
		         "a line per file: sizes, counts, parse time, result"),
		OPT_FLAG(0, "no-verify", &no_verify,
		         "compare the bytes only; skip the model's self-check"),
		OPT_FLAG(0, "opcodes", &opcodes,
		         "also check every opcode against the PTX ISA (as templates are)"),
		OPT_CHOICE_OPTARG("check", &check, "ptxas|none", "ptxas",
		                  "ptxas: also give each file to ptxas (default none)"),
		OPT_CALLBACK(0, "arch", &arch_o, "sm_XX", opt_arch,
		             "with --check=ptxas: the target (default .target)"),
		OPT_FLAG(0, "no-cache", &no_cache,
		         "with --check=ptxas: run ptxas, not its cached answer"),
		OPT_FLAG(0, "json", &json, "one JSON object, a row per file"),
		OPT_END(),
	};
	OptParse op = {.verb = "roundtrip", .usage = usage, .opts = opts};
	int nfiles = opt_parse(&op, argc, argv);
	if (nfiles < 0)
		return op.status;
	if (!nfiles)
		return opt_usage_error(&op, "no PTX file given");
	bool ptxas = !strcmp(check, "ptxas");
	if (!ptxas && (opt_given(&op, "arch") || no_cache))
		return opt_fail(&op, "option '%s' needs '--check=ptxas'",
		                opt_given(&op, "arch") ? opt_given(&op, "arch")
		                                       : opt_given(&op, "no-cache"));
	bool verify = !no_verify;
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	cJSON *rows = doc ? cJSON_AddArrayToObject(doc, "files") : NULL;
	unsigned n_same = 0, n_differ = 0, n_error = 0;
	if (stats && !json)
		printf("%-40s %10s %6s %9s %7s %9s %s\n", "file", "bytes", "funcs", "stmts", "mma",
		       "parse_ms", "result");
	for (int i = 0; i < nfiles; i++) {
		Err e = ERR_INIT;
		MapFile mf;
		cJSON *row = NULL;
		if (rows) {
			row = cJSON_CreateObject();
			cJSON_AddStringToObject(row, "file", map_name(argv[i]));
			cJSON_AddItemToArray(rows, row);
		}
		if (map_open(&mf, argv[i], &e) < 0) {
			fprintf(stderr, "d4r-splice: %s\n", err_msg(&e));
			file_error(row, err_msg(&e));
			n_error++;
			err_release(&e);
			rc = EXIT_ERROR;
			continue;
		}
		double t0 = now_seconds();
		Module *m = ptx_parse(map_name(argv[i]), mf.p, mf.n, &e);
		double t1 = now_seconds();
		if (!m) {
			fprintf(stderr, "%s\n", err_msg(&e));
			file_error(row, err_msg(&e));
			n_error++;
			err_release(&e);
			map_close(&mf);
			rc = EXIT_ERROR;
			continue;
		}
		const char *why = NULL;
		const char *result = "identical";
		Cmp cmp = {mf.p, mf.n, 0, (size_t)-1};
		if (ptx_emit_to(m, NULL, 0, compare_sink, &cmp, &e) < 0) {
			fprintf(stderr, "%s\n", err_msg(&e));
			result = "error";
			why = err_msg(&e);
			rc = EXIT_ERROR;
		} else if (cmp.first_diff != (size_t)-1 || cmp.at != mf.n) {
			size_t k = cmp.first_diff != (size_t)-1 ? cmp.first_diff : cmp.at;
			err_at(&e, map_name(argv[i]), mf.p, mf.n, k,
			       "re-emitted module differs from the input here");
			fprintf(stderr, "%s\n", err_msg(&e));
			result = "DIFFERS";
			why = err_msg(&e);
			if (rc == EXIT_OK)
				rc = EXIT_DIFFERS;
		} else if (verify && ptx_verify(m, &e) < 0) {
			fprintf(stderr, "%s\n", err_msg(&e));
			result = "DIFFERS";
			why = err_msg(&e);
			if (rc == EXIT_OK)
				rc = EXIT_DIFFERS;
		} else if (opcodes && check_opcodes(m, map_name(argv[i]), mf.p, mf.n, &e) < 0) {
			fprintf(stderr, "%s\n", err_msg(&e));
			result = "error";
			why = err_msg(&e);
			rc = EXIT_ERROR;
		}
		/* ptxas, on a file that round-trips: every entry, the module's
		 * target or --arch */
		StrBuf log = STRBUF_INIT;
		PtxasCache pc = {.no_cache = no_cache};
		char arch[64] = "";
		int pr = -1;
		if (ptxas && result[0] == 'i') {
			if (opt_given(&op, "arch"))
				snprintf(arch, sizeof arch, "%s", arch_o.name);
			else if (splice_module_arch(m, arch, sizeof arch) < 0)
				err_set(&e, "%s: no .target: give --arch", map_name(argv[i]));
			if (arch[0])
				pr = splice_ptxas(mf.p, mf.n, arch, NULL, NULL, map_name(argv[i]), &pc,
				                  &log, &e);
			if (pr != 0) {
				result = "error";
				why = pr > 0 ? "ptxas rejects it" : err_msg(&e);
				rc = EXIT_ERROR;
				fprintf(stderr, "d4r-splice: %s: %s%s\n%s", map_name(argv[i]), why,
				        pr > 0 ? cmd_ptxas_cached(&pc) : "", log.p ? log.p : "");
			} else if (!row)
				printf("ptxas:     -arch=%s %s: ok%s\n", arch, map_name(argv[i]),
				       cmd_ptxas_cached(&pc));
		}
		n_same += result[0] == 'i';
		n_differ += result[0] == 'D';
		n_error += result[0] == 'e';
		size_t nst = m->stmts.n, nf = 0;
		for (size_t f = 0; f < m->funcs.n; f++)
			nf += !(m->funcs.v[f].flags & FNF_DECL);
		if (row) {
			cJSON_AddStringToObject(row, "result", result[0] == 'D' ? "differs" : result);
			cJSON_AddNumberToObject(row, "bytes", (double)mf.n);
			cJSON_AddNumberToObject(row, "functions", (double)nf);
			cJSON_AddNumberToObject(row, "statements", (double)nst);
			cJSON_AddNumberToObject(row, "mma", m->nmma);
			cJSON_AddNumberToObject(row, "parse_ms", (t1 - t0) * 1e3);
			cmd_json_ptxas(row, pr >= 0, arch, pr == 0, &log, &pc);
			cmd_json_str_or_null(row, "message", why);
		} else if (stats) {
			const char *base = strrchr(map_name(argv[i]), '/');
			printf("%-40s %10zu %6zu %9zu %7u %9.2f %s\n", base ? base + 1 : map_name(argv[i]), mf.n, nf,
			       nst, m->nmma, (t1 - t0) * 1e3, result);
		}
		sb_release(&log);
		mod_free(m);
		map_close(&mf);
		err_release(&e);
	}
	if (doc) {
		cJSON_AddNumberToObject(doc, "identical", n_same);
		cJSON_AddNumberToObject(doc, "differ", n_differ);
		cJSON_AddNumberToObject(doc, "errors", n_error);
		cmd_json_print(doc, rc);
	}
	return rc;
}
