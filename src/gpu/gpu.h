/*
 * gpu.h - the GPU side as one call: run modules of a layer, get frames and
 * timings back.  This is what `run`, the main job and `check` use.
 *
 * A job is a manifest plus one or more PTX modules (the original first,
 * then spliced ones).  gpu_job_run forks a child (child.h) that, in one
 * CUDA context:
 *
 *   1. allocates the layer (launch.h) once;
 *   2. for each module in order: JITs it (driver.h; cached), binds it,
 *      uploads the inputs, runs the launch sequence once and reads the frame
 *      back - and sends that module's result up at once;
 *   3. when runs > 0: warm-up runs, then `runs` timed runs of every module
 *      that produced a frame, alternating between modules (timing.h), and
 *      the frame read again after the last run (repeatable or not).
 *
 * Because each module's result is sent as soon as it exists, a module that
 * faults (illegal address, misaligned access: the context is lost) or hangs
 * (the child is killed at the time limit) costs only itself: the original,
 * run first, keeps its frame, and the job runs again in a new child
 * without the modules that faulted or hung, so the modules after them get
 * their results and every module with a frame its timing, still measured
 * together in one process (res->timing_status says why when even that
 * failed).
 *
 * With job->parallel_jit, the JITs of two or more modules whose images
 * the cache lacks run side by side before that child, each in a child of
 * its own (gpu_child_run_all) that only compiles and stores the image; the
 * child of the launches then loads them from the cache, so no two
 * processes ever launch at the same time and the timed runs are the same
 * as without it.  Each module's JIT seconds are its own child's compile
 * (res->jit_wall_seconds: the side-by-side part's wall).  With no_cache,
 * or without a cache folder, the images go through temporary files
 * (base/temp.h) removed afterwards.  A module whose JIT failed there keeps that
 * failure and is not compiled again.  `check` leaves it off: its --jobs
 * run jobs side by side already.
 *
 * The PTX is handed to the JIT as given: reducing it to the launched entries
 * is a step before the job (layer.h: gpu_reduce_module), taken on the
 * module the verb has parsed already.
 */
#ifndef D4R_GPU_GPU_H
#define D4R_GPU_GPU_H

#include "base/base.h"
#include "base/err.h"
#include "gpu/child.h"
#include "gpu/driver.h"
#include "gpu/manifest.h"
#include "gpu/reduce.h"
#include "gpu/timing.h"

typedef struct {
	const char *name;          /* "original", "spliced", a file name */
	const char *ptx;           /* the PTX text (need not be NUL-terminated) */
	size_t ptx_len;
	GpuLineNote line_note;     /* maps PTX lines in JIT errors (may be NULL) */
	void *line_ctx;
	const char *image_file;    /* the compiled image's file instead of the cache's
	                              (gpu_job_run sets it for parallel_jit; NULL) */
} GpuModuleSrc;

typedef struct {
	const Manifest *manifest;
	const GpuModuleSrc *modules;
	size_t nmodules;
	unsigned runs;             /* timed runs per module; 0: frames only */
	unsigned warmup;           /* warm-up runs per module before timing */
	double timeout_s;          /* limit for each module's launches, and for the timing */
	double jit_limit_s;        /* limit for each module's JIT; 0: 900 s */
	bool no_cache;             /* no compiled-image cache */
	const char *cache_dir;     /* NULL: user_cache_dir() */
	bool verbose_jit;          /* CU_JIT_LOG_VERBOSE */
	int device;                /* CUDA device ordinal */
	bool parallel_jit;         /* JIT the modules side by side first (see below) */
} GpuJob;

typedef struct {
	char *name;
	GpuStatus status;          /* ok, error (JIT, CUDA, files), fault, hang */
	char *message;             /* why, when not ok; "not run: ..." for skipped */
	unsigned char *frame;      /* manifest->frame_size bytes when ok */
	size_t frame_len;
	char sha256[65];           /* of the frame; "" when none */
	double jit_seconds;        /* wall time of the JIT (or the cache load) */
	float jit_driver_ms;       /* the driver's own CU_JIT_WALL_TIME */
	bool jit_cached;
	char *jit_log;             /* the whole info log ("" when none) */
	double frame_run_ms;       /* event time of the run that made the frame */
	GpuTimes times;            /* timed runs; times.n == 0 without timing */
	bool repeat_checked;       /* the frame was read again after the timed runs */
	bool repeatable;           /* ... and was the same */
	bool not_run;              /* an earlier module ended its child, and no rerun
	                              gave it a result (status error) */
} GpuModuleResult;

typedef struct {
	GpuStatus status;          /* worst of the modules' and the timing's */
	char *message;             /* the first non-ok message */
	GpuModuleResult *mods;     /* job->nmodules entries */
	size_t nmods;
	GpuStatus timing_status;   /* ok also when no timing was asked for */
	char *timing_message;
	char device[128];          /* "" when the child did not get that far */
	int cc_major, cc_minor;
	int driver_version;
	double wall_seconds;       /* the children, fork to exit (JIT children side
	                              by side counted once, by their wall) */
	double setup_seconds;      /* context and layer (allocation, input images) */
	double host_seconds;       /* the tool's own overhead: wall - JIT - GPU time */
	bool jit_parallel;         /* two or more modules' JIT figures come from
	                              children that compiled them side by side */
	double jit_wall_seconds;   /* those children, first start to last end */
} GpuResult;

/*
 * The module reduced for the layer: ptx[0..n) without the entries that no
 * launch of `m` names (reduce.h; line numbers kept), appended to `out`.
 * `spans` are the module's function spans (from the PTX parser's model);
 * *removed (may be NULL) gets the number of entries removed.  -1 when a
 * launched entry is not in the module.
 */
int gpu_reduce_for_layer(const Manifest *m, const char *ptx, size_t n,
                         const GpuFuncSpan *spans, size_t nspans, StrBuf *out,
                         size_t *removed, Err *e);

/*
 * Runs `job` in a child process.  Returns 0 when the child ran, whatever
 * became of the modules (see res->status and res->mods[i].status); -1 with
 * a message when it could not start: no CUDA driver ("no CUDA driver:
 * libcuda.so.1: ..."), no module, or fork failed.  res is filled in either
 * way and released with gpu_result_release.
 */
int gpu_job_run(const GpuJob *job, GpuResult *res, Err *e);
void gpu_result_release(GpuResult *res);

/*
 * The child's side, exposed so that tests can stand in for the GPU.
 * gpu_job_child is the real body (`arg` is the const GpuJob *);
 * gpu_job_body is what gpu_job_run forks (tests point it at a stand-in).
 * A body reports through these records, in this order: the device once;
 * per module, in order, its result or its failure (tag 'M', index k); the
 * timing, or its failure (tag 'T', index of the module that failed); the
 * end.  A failure before any module (context, layer) is tag 'E', index -1.
 * Stages are marked with gpu_chan_stage: "jit NAME" before a module's JIT,
 * "launch NAME" before its runs, "launch timing" before the timed runs.
 */
int gpu_job_child(void *arg, GpuChan *ch);
extern GpuChildBody gpu_job_body;
void gpu_job_send_device(GpuChan *ch, const char *name, int cc_major, int cc_minor,
                         int driver_version, double setup_s);
void gpu_job_send_module(GpuChan *ch, size_t k, double jit_s, double jit_driver_ms,
                         bool cached, const char *info_log, double frame_run_ms,
                         const void *frame, size_t n);
void gpu_job_send_failure(GpuChan *ch, char tag, int idx, GpuStatus st, const char *msg);
void gpu_job_send_timing(GpuChan *ch, size_t n, const GpuTimes *t, const int *same);
void gpu_job_send_end(GpuChan *ch, double wall_s, double jit_s, double gpu_s);

#endif
