/*
 * bench_ana.c - phase location and cut interfaces against parse time.
 *
 *   bench_ana FILE...     or     bench_ana @LIST   (one file name a line)
 *
 * For every file: parse (best of 3), then the phase locator on every
 * function with mma statements (dataflow + phases, best of 3).  Prints the
 * totals, the ratio phases/parse over all files and over the largest file
 * with mma, and, for the largest function with mma, the time of its
 * dataflow and of the cut interface of each phase (phase + epilogue):
 * median and worst.  Targets (printed with PASS/MISS): phases <= 1.5 x
 * parse; a cut interface <= 20 ms.
 */
#include "ana/ana.h"
#include "base/file.h"
#include "ptx/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int has_mma(const Module *m, const Func *f)
{
	for (uint32_t i = 0; i < f->nstmt; i++)
		if (func_stmt(m, f, i)->flags & STMT_MMA)
			return 1;
	return 0;
}

/* Seconds for dataflow + phases over every function with mma. */
static double phases_time(const Module *m)
{
	double t0 = now_seconds();
	for (size_t i = 0; i < m->funcs.n; i++) {
		const Func *f = &m->funcs.v[i];
		if ((f->flags & FNF_DECL) || !has_mma(m, f))
			continue;
		Err e = ERR_INIT;
		Dataflow *df = df_build(m, f, &e);
		PhaseList pl = {0};
		if (df && ana_phases(df, 0, &pl, &e) == 0)
			phases_release(&pl);
		df_free(df);
		err_release(&e);
	}
	return now_seconds() - t0;
}

/* "@LIST": the file names, one a line, as an argv of their own. */
static char **read_list(const char *path, int *argc)
{
	char *text;
	size_t n;
	Err e = ERR_INIT;
	if (read_file(path, &text, &n, &e) < 0) {
		fprintf(stderr, "%s\n", err_msg(&e));
		exit(2);
	}
	char **v = xcalloc(n / 2 + 2, sizeof(char *));
	int c = 1;
	for (char *p = text; *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (*p)
			v[c++] = p;
		if (!nl)
			break;
		p = nl + 1;
	}
	*argc = c;
	return v;
}

int main(int argc, char **argv)
{
	if (argc == 2 && argv[1][0] == '@')
		argv = read_list(argv[1] + 1, &argc);
	double parse_all = 0, phases_all = 0;
	size_t bytes_all = 0, nfiles = 0;
	const char *big = NULL;
	size_t big_n = 0;
	double big_parse = 0, big_phases = 0;
	for (int a = 1; a < argc; a++) {
		Err e = ERR_INIT;
		MapFile mf;
		if (map_open(&mf, argv[a], &e) < 0)
			continue;
		double bp = 1e9, bph = 1e9;
		Module *m = NULL;
		for (int r = 0; r < 3; r++) {
			double t0 = now_seconds();
			Module *mm = ptx_parse(argv[a], mf.p, mf.n, &e);
			double t = now_seconds() - t0;
			if (!mm)
				break;
			if (t < bp)
				bp = t;
			if (m)
				mod_free(m);
			m = mm;
		}
		if (!m) {
			map_close(&mf);
			err_release(&e);
			continue;
		}
		int any = 0;
		for (size_t i = 0; i < m->funcs.n && !any; i++)
			any = !(m->funcs.v[i].flags & FNF_DECL) && has_mma(m, &m->funcs.v[i]);
		if (any)
			for (int r = 0; r < 3; r++) {
				double t = phases_time(m);
				if (t < bph)
					bph = t;
			}
		else
			bph = 0;
		parse_all += bp;
		phases_all += bph;
		bytes_all += mf.n;
		nfiles++;
		if (any && mf.n > big_n) {
			big_n = mf.n;
			big = argv[a];
			big_parse = bp;
			big_phases = bph;
		}
		mod_free(m);
		map_close(&mf);
		err_release(&e);
	}
	printf("phases: %zu files, %.1f MB: parse %.3f s, phases %.3f s extra: ratio (parse+phases)/parse %.2f  [target <= 1.5: %s]\n",
	       nfiles, bytes_all / 1e6, parse_all, phases_all, (parse_all + phases_all) / parse_all,
	       (parse_all + phases_all) / parse_all <= 1.5 ? "PASS" : "MISS");
	if (!big)
		return 0;
	printf("phases: largest module with mma %s (%.1f MB): parse %.1f ms, phases %.1f ms: ratio %.2f  [target <= 1.5: %s]\n",
	       strrchr(big, '/') ? strrchr(big, '/') + 1 : big, big_n / 1e6, big_parse * 1e3,
	       big_phases * 1e3, (big_parse + big_phases) / big_parse,
	       (big_parse + big_phases) / big_parse <= 1.5 ? "PASS" : "MISS");
	/* Cut interfaces in the largest function with mma of all files. */
	const char *bf = NULL;
	uint32_t bn = 0;
	for (int a = 1; a < argc; a++) {
		Err e = ERR_INIT;
		MapFile mf;
		if (map_open(&mf, argv[a], &e) < 0)
			continue;
		Module *m = ptx_parse(argv[a], mf.p, mf.n, &e);
		for (size_t i = 0; m && i < m->funcs.n; i++)
			if (m->funcs.v[i].nstmt > bn && has_mma(m, &m->funcs.v[i])) {
				bn = m->funcs.v[i].nstmt;
				bf = argv[a];
			}
		mod_free(m);
		map_close(&mf);
		err_release(&e);
	}
	Err e = ERR_INIT;
	MapFile mf;
	if (!bf || map_open(&mf, bf, &e) < 0)
		return 0;
	Module *m = ptx_parse(bf, mf.p, mf.n, &e);
	const Func *f = NULL;
	for (size_t i = 0; m && i < m->funcs.n; i++)
		if (m->funcs.v[i].nstmt == bn && has_mma(m, &m->funcs.v[i]))
			f = &m->funcs.v[i];
	double t0 = now_seconds();
	Dataflow *df = f ? df_build(m, f, &e) : NULL;
	double t_df = now_seconds() - t0;
	PhaseList pl = {0};
	if (df && ana_phases(df, 0, &pl, &e) == 0 && pl.n) {
		double *t = calloc(pl.n, sizeof(double));
		for (size_t p = 0; p < pl.n; p++) {
			uint32_t last = pl.v[p].epi_last >= pl.v[p].epi_first ? pl.v[p].epi_last : pl.v[p].last;
			CutInterface c;
			double c0 = now_seconds();
			if (df_cut(df, pl.v[p].first, last, &c, &e) == 0)
				cut_release(&c);
			t[p] = now_seconds() - c0;
		}
		qsort(t, pl.n, sizeof(double), cmp_d);
		printf("cut interface: %u-statement function in %s: dataflow %.1f ms once; %zu phase+epilogue cuts: median %.2f ms, worst %.2f ms  [target <= 20 ms: %s]\n",
		       bn, strrchr(bf, '/') ? strrchr(bf, '/') + 1 : bf, t_df * 1e3, pl.n,
		       t[pl.n / 2] * 1e3, t[pl.n - 1] * 1e3, t[pl.n - 1] * 1e3 <= 20 ? "PASS" : "MISS");
		free(t);
		phases_release(&pl);
	}
	df_free(df);
	mod_free(m);
	map_close(&mf);
	err_release(&e);
	return 0;
}
