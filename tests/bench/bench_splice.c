/*
 * bench_splice.c - the cost of a splice against the cost of a parse, in the
 * same process run (scripts/bench, section "splice").
 *
 *   bench_splice [-n RUNS] MODULE ENTRY PHASE       identity into one phase
 *                                                   (ENTRY "." : the entry with
 *                                                   the most mma)
 *   bench_splice [-n RUNS] MODULE - RECIPE...       each recipe (its entry)
 *
 * Prints, per line: what was spliced, the best parse time of the module,
 * the best splice_run time (cut, guards, dataflow of the function, cut
 * interface, template, rendering and the emission of the whole module), and
 * the median over the runs of splice/parse; each run parses the module and
 * splices into what it parsed, as the splice verb does.  Target: a splice
 * costs at most 2x a parse.
 */
#include "ana/ana.h"
#include "base/file.h"
#include "base/sha256.h"
#include "ptx/parse.h"
#include "splice/recipe.h"
#include "splice/splice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* `runs` times, as the splice verb does it: parse the module, then splice r
 * into what was parsed.  Prints the best of each and their ratio. */
static int one(const MapFile *mf, const char *label, const Recipe *r, const char *entry,
               int runs)
{
	double best = 1e9, bw = 1e9, parse = 1e9, parse_wall = 1e9;
	double *ratio = xcalloc((size_t)runs + 1, sizeof(double));
	for (int i = 0; i < runs; i++) {
		Err e = ERR_INIT;
		double p0 = cpu_now(), pw0 = now_seconds();
		Module *m = ptx_parse(mf->path, mf->p, mf->n, &e);
		double pc = cpu_now() - p0, pw = now_seconds() - pw0;
		if (!m) {
			fprintf(stderr, "%s\n", err_msg(&e));
			exit(2);
		}
		if (pc < parse)
			parse = pc;
		if (pw < parse_wall)
			parse_wall = pw;
		SpliceResult res;
		memset(&res, 0, sizeof res);
		SpliceRequest req = {m, entry, r, NULL, false};
		double t0 = cpu_now(), w0 = now_seconds();
		int rc = splice_run(&req, &res, &e);
		double dt = cpu_now() - t0, dw = now_seconds() - w0;
		splice_result_release(&res);
		mod_free(m);
		if (rc < 0) {
			fprintf(stderr, "%s: %s\n", label, err_msg(&e));
			err_release(&e);
			return -1;
		}
		err_release(&e);
		if (dt < best)
			best = dt;
		if (dw < bw)
			bw = dw;
		ratio[i] = dt / pc;
	}
	/* the judged figure: the median of each run's splice/parse, the two
	 * taken back to back, so a fast or slow spell of the machine weighs on
	 * both sides of a ratio alike */
	qsort(ratio, (size_t)runs, sizeof(double), cmp_d);
	double med = ratio[runs / 2];
	free(ratio);
	printf("%-34s %10.2f %10.2f %10.2f %10.2f %7.2f  %s\n", label, parse * 1e3, best * 1e3,
	       parse_wall * 1e3, bw * 1e3, med, med <= 2 ? "PASS" : "MISS");
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 5, i = 1;
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		runs = atoi(argv[2]);
		i = 3;
	}
	if (argc - i < 3) {
		fprintf(stderr, "usage: bench_splice [-n RUNS] MODULE (ENTRY PHASE | - RECIPE...)\n");
		return 2;
	}
	Err e = ERR_INIT;
	MapFile mf;
	if (map_open(&mf, argv[i], &e) < 0) {
		fprintf(stderr, "%s\n", err_msg(&e));
		return 2;
	}
	Module *m = ptx_parse(argv[i], mf.p, mf.n, &e);
	printf("%-34s %10s %10s %10s %10s %7s  %s\n", "", "parse cpu", "splice cpu", "parse wall",
	       "splice wal", "x parse", "<= 2x (median of runs)");
	int rc = 0;
	if (strcmp(argv[i + 1], "-")) {
		const char *entry = argv[i + 1];
		unsigned phase = (unsigned)atoi(argv[i + 2]);
		const Func *f = NULL;
		char *auto_name = NULL;
		if (!strcmp(entry, ".")) {
			uint32_t most = 0;
			for (size_t k = 0; k < m->funcs.n; k++) {
				const Func *g = &m->funcs.v[k];
				uint32_t n =
				    g->nstmt ? ana_mma_count(m, g, 0, g->nstmt - 1) : 0;
				if (n > most) {
					most = n;
					f = g;
				}
			}
			if (f) {
				auto_name = xstrndup(m->src + f->name.off, f->name.len);
				entry = auto_name;
			}
		} else
			f = mod_func_find(m, str_c(entry));
		Recipe r;
		memset(&r, 0, sizeof r);
		if (!f ||
		    ana_phase_range(m, f, 0, phase, false, &r.first, &r.last, NULL) < 0) {
			fprintf(stderr, "no phase %u of '%s'\n", phase, entry);
			return 2;
		}
		r.path = (char *)"(bench)";
		r.cut = CUT_STMTS;
		r.tkind = TPL_IDENTITY;
		r.template_name = (char *)"identity";
		StrBuf txt = STRBUF_INIT;
		char hex[65];
		splice_cut_text(m, f, r.first, r.last, &txt);
		sha256_hex(txt.p ? txt.p : "", txt.n, hex);
		sb_release(&txt);
		r.sha256 = hex;
		char label[64];
		snprintf(label, sizeof label, "identity, phase %u (%u mma, s%u)", phase,
		         ana_mma_count(m, f, r.first, r.last), r.first);
		rc = one(&mf, label, &r, entry, runs);
		free(auto_name);
	} else {
		for (int k = i + 2; k < argc; k++) {
			Recipe r;
			if (rcp_load(argv[k], &r, &e) < 0) {
				fprintf(stderr, "%s\n", err_msg(&e));
				rc = -1;
				continue;
			}
			const char *b = strrchr(argv[k], '/');
			if (one(&mf, b ? b + 1 : argv[k], &r, r.entry, runs) < 0)
				rc = -1;
			rcp_release(&r);
		}
	}
	mod_free(m);
	map_close(&mf);
	err_release(&e);
	return rc < 0 ? 1 : 0;
}
