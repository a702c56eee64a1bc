/*
 * timing.h - kernel times: CUDA events around whole launch sequences.
 *
 * What is timed: one run of a module's launch sequence (every launch, each
 * `repeat` times), from an event recorded before the first launch to one
 * recorded after the last, on one stream.  Before every run the layer's
 * inputs are uploaded again (gpu_layer_reset, outside the events), so a
 * kernel that overwrites its inputs is timed on the same inputs that made
 * its frame.  A few warm-up runs come first (the first launch of a module
 * pays for loading it onto the device); then `runs` timed runs.  When two
 * modules are timed (original and spliced), their runs alternate in one
 * process and one context, so clocks, temperature and the rest of the
 * machine affect both alike, and the ratio is measured, not estimated.
 *
 * The default of 20 runs: the median of 20 is stable to a few percent
 * for kernels of 10 us and more on an otherwise idle GPU; min and max
 * show the spread.
 */
#ifndef D4R_GPU_TIMING_H
#define D4R_GPU_TIMING_H

#include "base/base.h"

#define GPU_DEFAULT_RUNS 20
#define GPU_DEFAULT_WARMUP 3

typedef struct {
	unsigned n;               /* timed runs; 0 when there was no timing */
	double median_ms, min_ms, max_ms;
} GpuTimes;

/* Median (mean of the middle two for an even count), min and max of
 * ms[0..n); sorts ms in place.  Pure. */
void gpu_times_from(double *ms, unsigned n, GpuTimes *t);

#endif
