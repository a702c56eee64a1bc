/*
 * bench_ptx.c - parse and emit throughput of the PTX front end.
 *
 *   bench_ptx [-n RUNS] [-p PASSES] corpus FILE...
 *                                        each file in turn, PASSES times over
 *                                        the corpus, RUNS runs each time; the
 *                                        best of all for each file, summed:
 *                                        parse-only and parse+emit MB/s over
 *                                        all the bytes
 *   bench_ptx [-n RUNS] file FILE        one file, best of RUNS
 *   bench_ptx mem FILE                   map, parse, emit once: peak RSS
 *                                        after the parse and after the emit,
 *                                        page faults during the parse
 *
 * Inputs are read into memory before the clock starts, so the figures are
 * the parser's, not the disk's.  Two clocks: wall time, and the CPU time of
 * this thread (CLOCK_THREAD_CPUTIME_ID), which a busy machine disturbs much
 * less; the best of RUNS is kept for each.  Output is `key value` lines for
 * scripts/bench to format.  Every parse is checked (emit must reproduce the
 * input), so a fast wrong parser cannot post a figure.
 */
#include "base/err.h"
#include "base/file.h"
#include "ptx/emit.h"
#include "ptx/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
	double wall, cpu;
} Times;

typedef struct {
	const char *path;
	char *p;
	size_t n;
} Input;

static void load(Input *in, const char *path)
{
	Err e = ERR_INIT;
	in->path = path;
	if (read_file(path, &in->p, &in->n, &e) < 0) {
		fprintf(stderr, "bench_ptx: %s\n", err_msg(&e));
		exit(2);
	}
}

/* Parses (and with `emit`, emits) one input; returns the seconds taken. */
static Times run(const Input *in, int emit, StrBuf *out)
{
	Err e = ERR_INIT;
	double t0 = now_seconds(), c0 = cpu_seconds();
	Module *m = ptx_parse(in->path, in->p, in->n, &e);
	if (!m) {
		fprintf(stderr, "%s\n", err_msg(&e));
		exit(2);
	}
	if (emit) {
		sb_reset(out);
		if (ptx_emit(m, NULL, 0, out, &e) < 0) {
			fprintf(stderr, "%s\n", err_msg(&e));
			exit(2);
		}
	}
	mod_free(m);
	Times t = {now_seconds() - t0, cpu_seconds() - c0};
	if (emit && (out->n != in->n || memcmp(out->p, in->p, in->n) != 0)) {
		fprintf(stderr, "bench_ptx: %s does not round-trip\n", in->path);
		exit(1);
	}
	return t;
}

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	int runs = 5, passes = 1, a = 1;
	for (;;) {
		if (a + 1 < argc && !strcmp(argv[a], "-n")) {
			runs = atoi(argv[a + 1]);
			a += 2;
		} else if (a + 1 < argc && !strcmp(argv[a], "-p")) {
			passes = atoi(argv[a + 1]);
			a += 2;
		} else
			break;
	}
	if (a + 1 >= argc || runs < 1 || passes < 1) {
		fprintf(stderr, "usage: bench_ptx [-n RUNS] [-p PASSES] corpus|file|mem FILE...\n");
		return 2;
	}
	const char *mode = argv[a++];
	StrBuf out = STRBUF_INIT;
	if (!strcmp(mode, "mem")) {
		/* The input is mapped and prefaulted as every verb maps it, so the
		 * peak counts the module's own pages, the model and the output. */
		long base = maxrss_kb();
		MapFile mf;
		Err e = ERR_INIT;
		if (map_open(&mf, argv[a], &e) < 0) {
			fprintf(stderr, "bench_ptx: %s\n", err_msg(&e));
			return 2;
		}
		struct rusage r0, r1;
		getrusage(RUSAGE_SELF, &r0);
		Module *m = ptx_parse(argv[a], mf.p, mf.n, &e);
		getrusage(RUSAGE_SELF, &r1);
		if (!m) {
			fprintf(stderr, "%s\n", err_msg(&e));
			return 2;
		}
		long parsed = maxrss_kb();
		/* page faults taken while parsing: the model's arrays filled */
		printf("parse_minflt %ld\n", r1.ru_minflt - r0.ru_minflt);
		if (ptx_emit(m, NULL, 0, &out, &e) < 0 || out.n != mf.n) {
			fprintf(stderr, "bench_ptx: emit failed\n");
			return 2;
		}
		long emitted = maxrss_kb();
		printf("bytes %zu\nbase_rss_kb %ld\nparse_rss_kb %ld\nparse_emit_rss_kb %ld\n", mf.n,
		       base, parsed, emitted);
		printf("stmts %zu\noperands %zu\nmodel_bytes %zu\n", m->stmts.n, m->opds.n,
		       m->stmts.n * sizeof(Stmt) + m->opds.n * sizeof(Operand));
		mod_free(m);
		map_close(&mf);
		sb_release(&out);
		return 0;
	}
	if (!strcmp(mode, "corpus")) {
		/* One file in memory at a time: the corpus is larger than RAM on
		 * small machines.  "-" reads the paths from stdin, one a line.
		 * PASSES passes over the whole corpus, RUNS runs of each file in
		 * each; a file's figure is its best over all of them, so a shared
		 * machine's slow spell (seconds long) is met by later passes. */
		VEC(char *) paths = {0};
		if (!strcmp(argv[a], "-")) {
			char line[8192];
			while (fgets(line, sizeof line, stdin)) {
				line[strcspn(line, "\n")] = 0;
				if (line[0])
					VEC_PUSH(paths, xstrdup(line));
			}
		} else
			for (int i = a; i < argc; i++)
				VEC_PUSH(paths, xstrdup(argv[i]));
		size_t nin = paths.n, total = 0;
		Times *bp = xmalloc((nin + 1) * sizeof(Times)), *bb = xmalloc((nin + 1) * sizeof(Times));
		size_t *size = xcalloc(nin + 1, sizeof(size_t));
		for (size_t i = 0; i < nin; i++)
			bp[i] = bb[i] = (Times){1e30, 1e30};
		for (int pass = 0; pass < passes; pass++)
			for (size_t i = 0; i < nin; i++) {
				Input in;
				load(&in, paths.v[i]);
				if (pass == 0)
					total += in.n, size[i] = in.n;
				for (int r = 0; r < runs; r++) {
					Times t = run(&in, 0, &out);
					bp[i].wall = t.wall < bp[i].wall ? t.wall : bp[i].wall;
					bp[i].cpu = t.cpu < bp[i].cpu ? t.cpu : bp[i].cpu;
					t = run(&in, 1, &out);
					bb[i].wall = t.wall < bb[i].wall ? t.wall : bb[i].wall;
					bb[i].cpu = t.cpu < bb[i].cpu ? t.cpu : bb[i].cpu;
				}
				free(in.p);
			}
		Times sp = {0, 0}, sb = {0, 0};
		size_t big = 0, big_n = 0;
		for (size_t i = 0; i < nin; i++) {
			sp.wall += bp[i].wall, sp.cpu += bp[i].cpu;
			sb.wall += bb[i].wall, sb.cpu += bb[i].cpu;
			if (size[i] > big_n)
				big = i, big_n = size[i];
			free(paths.v[i]);
		}
		if (nin) /* the largest file, measured in the same passes */
			printf("largest_bytes %zu\nlargest_parse_mbps %.1f\nlargest_parse_emit_mbps %.1f\n"
			       "largest_parse_wall_mbps %.1f\nlargest_parse_emit_wall_mbps %.1f\n",
			       big_n, big_n / bp[big].cpu / 1e6, big_n / bb[big].cpu / 1e6,
			       big_n / bp[big].wall / 1e6, big_n / bb[big].wall / 1e6);
		free(size);
		free(bp);
		free(bb);
		VEC_FREE(paths);
		printf("files %zu\nbytes %zu\npasses %d\nruns %d\n", nin, total, passes, runs);
		printf("parse_mbps %.1f\nparse_emit_mbps %.1f\n", total / sp.cpu / 1e6,
		       total / sb.cpu / 1e6);
		printf("parse_wall_mbps %.1f\nparse_emit_wall_mbps %.1f\n", total / sp.wall / 1e6,
		       total / sb.wall / 1e6);
		sb_release(&out);
		return 0;
	}
	int nin = argc - a;
	Input *in = calloc((size_t)nin, sizeof *in);
	size_t total = 0;
	for (int i = 0; i < nin; i++) {
		load(&in[i], argv[a + i]);
		total += in[i].n;
	}
	sb_grow(&out, 1 << 20);
	Times bp = {1e30, 1e30}, bb = {1e30, 1e30};
	for (int r = 0; r < runs; r++) {
		Times tp = {0, 0}, tb = {0, 0};
		for (int i = 0; i < nin; i++) {
			Times t = run(&in[i], 0, &out);
			tp.wall += t.wall, tp.cpu += t.cpu;
		}
		for (int i = 0; i < nin; i++) {
			Times t = run(&in[i], 1, &out);
			tb.wall += t.wall, tb.cpu += t.cpu;
		}
		bp.wall = tp.wall < bp.wall ? tp.wall : bp.wall;
		bp.cpu = tp.cpu < bp.cpu ? tp.cpu : bp.cpu;
		bb.wall = tb.wall < bb.wall ? tb.wall : bb.wall;
		bb.cpu = tb.cpu < bb.cpu ? tb.cpu : bb.cpu;
	}
	printf("files %d\nbytes %zu\n", nin, total);
	printf("parse_wall_s %.6f\nparse_cpu_s %.6f\nparse_emit_wall_s %.6f\nparse_emit_cpu_s %.6f\n",
	       bp.wall, bp.cpu, bb.wall, bb.cpu);
	printf("parse_mbps %.1f\nparse_emit_mbps %.1f\n", total / bp.cpu / 1e6, total / bb.cpu / 1e6);
	printf("parse_wall_mbps %.1f\nparse_emit_wall_mbps %.1f\n", total / bp.wall / 1e6,
	       total / bb.wall / 1e6);
	for (int i = 0; i < nin; i++)
		free(in[i].p);
	free(in);
	sb_release(&out);
	return 0;
}
