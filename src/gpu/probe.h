/*
 * probe.h (gpu) - running modules instrumented with probes (splice/probe.h):
 * the dump's address set through the probe's symbol before the launches,
 * the dump read back with the frame after them.
 *
 * Each module runs in a child process of its own (child.h: a fault or a
 * hang costs that module only), and the children run at the same time, so
 * the JITs of an original and a spliced module, the seconds a check
 * spends, overlap: the driver compiles in each process independently.
 * One child does, for its module: context, layer (launch.h), JIT (driver.h,
 * cached), bind, cuModuleGetGlobal of the symbol, the dump allocated and
 * cleared to zero, its address copied into the symbol, the inputs
 * uploaded, the launch sequence run once, the frame and the dump read back
 * and sent up the pipe.  A dump that does not fit in the device's free
 * memory is refused before it is allocated, with both sizes.
 *
 * With `runs` (profile's use), the launch sequence then runs `warmup` +
 * `runs` more times, each timed with CUDA events after its inputs are
 * uploaded again, and the frame and the dump are those of the last run
 * (warm caches, what the timings see).  A module without a symbol has no
 * probes: it is timed only, the uninstrumented reference a probed
 * module's overhead is measured against.  Timed modules are best run
 * `serial`: children at once would share the GPU while timed.  With
 * `attrs`, the launched entry's registers, local and shared memory are
 * read (cuFuncGetAttribute) and the JIT's info log comes back.
 */
#ifndef D4R_GPU_PROBE_H
#define D4R_GPU_PROBE_H

#include "base/base.h"
#include "base/err.h"
#include "gpu/child.h"
#include "gpu/driver.h"
#include "gpu/manifest.h"
#include "gpu/timing.h"

typedef struct {
	const char *name; /* "original", "spliced" */
	const char *ptx;  /* the instrumented (and reduced) PTX */
	size_t ptx_len;
	const char *symbol;    /* the probe's .u64 global; NULL: no probes */
	uint64_t dump_bytes;   /* the dump of the manifest's launches */
	GpuLineNote line_note; /* maps PTX lines in JIT errors (may be NULL) */
	void *line_ctx;
} GpuProbeModule;

typedef struct {
	const Manifest *manifest;
	const GpuProbeModule *modules;
	size_t nmodules;
	double timeout_s;      /* limit for each module's launches */
	double jit_limit_s;    /* limit for each module's JIT; 0: 900 s */
	bool no_cache;         /* no compiled-image cache */
	const char *cache_dir; /* NULL: user_cache_dir() */
	int device;            /* CUDA device ordinal */
	bool serial;           /* one child after the other, not all at once */
	unsigned runs;         /* timed runs after the first (0: none) */
	unsigned warmup;       /* untimed runs before them */
	bool attrs;            /* read the entry's attributes and the JIT log */
} GpuProbeJob;

typedef struct {
	char *name;
	GpuStatus status;     /* ok, error (JIT, CUDA, memory), fault, hang */
	char *message;        /* why, when not ok */
	unsigned char *frame; /* manifest->frame_size bytes when ok */
	size_t frame_len;
	char sha256[65];     /* of the frame; "" when none */
	unsigned char *dump; /* dump_bytes when ok */
	uint64_t dump_len;
	double jit_seconds; /* wall time of the JIT (or the cache load) */
	bool jit_cached;
	double setup_seconds; /* context and layer */
	double run_ms;        /* the launch sequence, CUDA events */
	double read_seconds;  /* frame and dump copied back */
	double child_seconds; /* the child, fork to exit (the pipe included) */
	uint64_t free_bytes;  /* device memory free before the dump */
	uint64_t total_bytes;
	char device[128]; /* "" when the child did not get that far */
	int cc_major, cc_minor, driver_version;
	GpuTimes times;      /* with job->runs */
	GpuFuncAttrs attrs;  /* with job->attrs: the manifest's entry */
	char *jit_log;       /* with job->attrs: the JIT's info log */
	unsigned char *blob; /* owns frame and dump */
} GpuProbeModuleResult;

typedef struct {
	GpuStatus status;           /* the worst of the modules' */
	char *message;              /* the first non-ok message, "NAME: why" */
	GpuProbeModuleResult *mods; /* job->nmodules entries */
	size_t nmods;
	double wall_seconds; /* first child started to last one ended */
} GpuProbeResult;

/*
 * Runs every module of `job` (see the top of this file).  Returns 0 when
 * the children ran, whatever became of the modules (res->status and
 * res->mods[k].status say); -1 when none could start: no CUDA driver ("no
 * CUDA driver: libcuda.so.1: ..."), no module, fork failed.  res is filled
 * in either way; release it with gpu_probe_result_release.
 */
int gpu_probe_run(const GpuProbeJob *job, GpuProbeResult *res, Err *e);
void gpu_probe_result_release(GpuProbeResult *res);

/*
 * The free and total memory of CUDA device `device` and its name, asked in
 * a child process (this process never initialises CUDA: its children could
 * not use it after a fork).  Takes what a context takes to open; a caller
 * that has other work can run it on a thread of its own meanwhile.
 * Returns 0, or -1 ("no CUDA driver: ...", a CUDA error).
 */
int gpu_probe_device_memory(int device, uint64_t *free_b, uint64_t *total_b,
                            char name[128], Err *e);

#endif
