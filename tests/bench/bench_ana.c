/*
 * bench_ana.c - phase location and cut interfaces against parse time.
 *
 *   bench_ana FILE...     or     bench_ana @LIST   (one file name a line)
 *
 * For every file, three times: a parse, then the phase locator on every
 * function with mma statements (dataflow + phases) on one thread and on
 * one per CPU, as the phases verb runs it; the best of each.  Prints the
 * totals, the ratio (parse + phases)/parse over all files, for the three
 * largest modules and the three largest with mma, and, for the largest
 * function with mma, the time of its
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
#include <unistd.h>

static unsigned ncpu(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c > 0 ? (unsigned)c : 1;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Seconds for dataflow + phases over every function with mma, on `jobs`
 * threads (0: one per CPU), as the phases verb runs them. */
static double phases_time(const Module *m, unsigned jobs)
{
	double t0 = now_seconds();
	VEC(const Func *) fns = {0};
	for (size_t i = 0; i < m->funcs.n; i++) {
		const Func *f = &m->funcs.v[i];
		if (!(f->flags & FNF_DECL) && ana_func_has_mma(m, f))
			VEC_PUSH(fns, f);
	}
	FuncPhases *res = xcalloc(fns.n + 1, sizeof(FuncPhases));
	ana_phases_funcs(m, fns.v, fns.n, 0, jobs, res);
	func_phases_release(res, fns.n);
	free(res);
	VEC_FREE(fns);
	return now_seconds() - t0;
}

typedef struct {
	const char *path;
	size_t bytes;
	int mma, shown;
	double parse, one, all; /* best seconds: parse, phases on 1 thread, on all */
} Row;

static const char *base_name(const char *p)
{
	return strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
}

static void print_row(const char *what, const Row *r)
{
	double one = (r->parse + r->one) / r->parse, all = (r->parse + r->all) / r->parse;
	printf("phases: %s %.60s (%.1f MB%s): parse %.1f ms, phases %.1f ms on 1 thread "
	       "(ratio %.2f), %.1f ms on %u (ratio %.2f)  [target <= 1.5: %s]\n",
	       what, base_name(r->path), r->bytes / 1e6, r->mma ? ", mma" : ", no mma",
	       r->parse * 1e3, r->one * 1e3, one, r->all * 1e3, ncpu(), all,
	       all <= 1.5 ? "PASS" : "MISS");
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
	double parse_all = 0, one_all = 0, all_all = 0;
	size_t bytes_all = 0, nfiles = 0;
	VEC(Row) rows = {0};
	for (int a = 1; a < argc; a++) {
		Err e = ERR_INIT;
		MapFile mf;
		if (map_open(&mf, argv[a], &e) < 0)
			continue;
		Row row = {argv[a], mf.n, 0, 0, 1e9, 1e9, 1e9};
		Module *m = NULL;
		/* parse and phases taken turn about, so that both see the same
		 * spells of a shared machine */
		for (int r = 0; r < 3; r++) {
			double t0 = now_seconds();
			Module *mm = ptx_parse(argv[a], mf.p, mf.n, &e);
			double t = now_seconds() - t0;
			if (!mm)
				break;
			if (t < row.parse)
				row.parse = t;
			if (m)
				mod_free(m);
			m = mm;
			if (r == 0)
				for (size_t i = 0; i < m->funcs.n && !row.mma; i++)
					row.mma = !(m->funcs.v[i].flags & FNF_DECL) &&
					          ana_func_has_mma(m, &m->funcs.v[i]);
			double t1 = phases_time(m, 1), tn = ncpu() > 1 ? phases_time(m, 0) : t1;
			if (t1 < row.one)
				row.one = t1;
			if (tn < row.all)
				row.all = tn;
		}
		if (!m) {
			map_close(&mf);
			err_release(&e);
			continue;
		}
		parse_all += row.parse;
		one_all += row.one;
		all_all += row.all;
		bytes_all += mf.n;
		nfiles++;
		VEC_PUSH(rows, row);
		mod_free(m);
		map_close(&mf);
		err_release(&e);
	}
	if (!nfiles)
		return 0;
	double r1 = (parse_all + one_all) / parse_all, rn = (parse_all + all_all) / parse_all;
	printf("phases: %zu files, %.1f MB: parse %.3f s; phases %.3f s more on 1 thread "
	       "(ratio %.2f), %.3f s on %u (ratio %.2f)  [target <= 1.5: %s]\n",
	       nfiles, bytes_all / 1e6, parse_all, one_all, r1, all_all, ncpu(), rn,
	       rn <= 1.5 ? "PASS" : "MISS");
	/* the three largest modules, and the three largest with mma */
	for (int want_mma = 0; want_mma < 2; want_mma++) {
		for (size_t i = 0; i < rows.n; i++)
			rows.v[i].shown = 0;
		for (int k = 0; k < 3; k++) {
			size_t best = SIZE_MAX;
			for (size_t i = 0; i < rows.n; i++) {
				if ((want_mma && !rows.v[i].mma) || rows.v[i].shown)
					continue;
				if (best == SIZE_MAX || rows.v[i].bytes > rows.v[best].bytes)
					best = i;
			}
			if (best == SIZE_MAX)
				break;
			print_row(want_mma ? "largest with mma" : "largest module", &rows.v[best]);
			rows.v[best].shown = 1;
		}
	}
	VEC_FREE(rows);
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
			if (m->funcs.v[i].nstmt > bn &&
			    ana_func_has_mma(m, &m->funcs.v[i])) {
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
		if (m->funcs.v[i].nstmt == bn && ana_func_has_mma(m, &m->funcs.v[i]))
			f = &m->funcs.v[i];
	double t0 = now_seconds();
	Dataflow *df = f ? df_build(m, f, &e) : NULL;
	double t_df = now_seconds() - t0;
	PhaseList pl = {0};
	if (df && ana_phases(df, 0, &pl, &e) == 0 && pl.n) {
		double *t = calloc(pl.n, sizeof(double));
		for (size_t p = 0; p < pl.n; p++) {
			uint32_t last = phase_cut_last(&pl.v[p], true);
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
