/*
 * timing.c - the statistics of timed runs (the runs themselves are in
 * job.c, which owns the stream and the events).
 */
#include "gpu/timing.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void gpu_times_from(double *ms, unsigned n, GpuTimes *t)
{
	memset(t, 0, sizeof(*t));
	if (!n)
		return;
	qsort(ms, n, sizeof(double), cmp_double);
	t->n = n;
	t->min_ms = ms[0];
	t->max_ms = ms[n - 1];
	t->median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}
