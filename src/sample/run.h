/*
 * run.h (sample) - the GPU side of PC sampling: modules JIT-compiled in
 * child processes (gpu/child.h), their images sent back, and the layer's
 * launches of some of them run under CUPTI PC sampling in the child that
 * owns the context (sample.h: SampleSession).
 *
 * A module is either JIT only (its image comes back: the plain build the
 * .loc build is compared with, or a probed module compiled ahead into the
 * image cache) or sampled: the child opens the session on its context
 * before the module is loaded, JIT-compiles the module (with
 * CU_JIT_GENERATE_LINE_INFO for the .loc build), runs the launch sequence
 * once untimed, then `runs` times between start and stop, each range's
 * data read with GetData, and sends the image (what ran: the map is made of
 * it), the frame of the last run, and the samples of the entry.
 *
 * Decisions:
 *  - The JIT's image, not a ptxas build: the code sampled is the code the
 *    driver runs for `run` and the main job (the JIT may not be the
 *    toolkit's ptxas), and its image comes back from cuLinkComplete or the
 *    image cache (driver.h, keep_image).  CUPTI names each sample's cubin
 *    by CRC; the samples of the entry in a cubin of another CRC are not
 *    the entry's.
 *  - Sampled modules run one after the other (`serial`): another child's
 *    kernels on the GPU at the same time would share the SMs sampled.
 *  - The inputs are uploaded outside the sampled range, as the timed runs
 *    of gpu/probe.c upload them outside the events.
 */
#ifndef D4R_SAMPLE_RUN_H
#define D4R_SAMPLE_RUN_H

#include "base/base.h"
#include "base/err.h"
#include "gpu/child.h"
#include "gpu/manifest.h"
#include "sample/sample.h"

typedef struct {
	const char *name;
	const char *ptx;
	size_t ptx_len;
	bool line_info; /* CU_JIT_GENERATE_LINE_INFO */
	bool verbose;   /* CU_JIT_LOG_VERBOSE (the probe job's cache key) */
	bool sample;    /* run the layer under PC sampling */
} SampleModule;

typedef struct {
	const Manifest *manifest;
	const SampleModule *modules;
	size_t nmodules;
	double timeout_s; /* each module's launches */
	bool no_cache;
	const char *cache_dir; /* NULL: user_cache_dir() */
	int device;
	bool serial;
	unsigned runs;   /* sampled launch sequences */
	uint32_t period; /* log2 cycles, 5..31 */
} SampleJob;

typedef struct {
	char *name;
	GpuStatus status;
	char *message;
	unsigned char *image; /* the cubin loaded */
	size_t image_len;
	double jit_seconds;
	bool jit_cached;
	unsigned char *frame; /* with sample: the last run's */
	size_t frame_len;
	bool sampled;
	SamplePcs pcs;
	char device[128];
	int cc_major, cc_minor;
} SampleModuleResult;

typedef struct {
	GpuStatus status;
	char *message; /* the first module's that failed: "NAME: why" */
	SampleModuleResult *mods;
	size_t nmods;
	double wall_seconds;
} SampleRunResult;

/* Runs the job (above).  0 when the children ran (res says how each
 * ended); -1 when none could start (no driver...). */
int sample_run(const SampleJob *job, SampleRunResult *res, Err *e);
void sample_run_release(SampleRunResult *res);

#endif
