/*
 * driver.h - the CUDA driver, loaded at run time, and the JIT.
 *
 * libcuda is never linked: gpu_driver_load dlopens "libcuda.so.1" and looks
 * up the entry points this program uses, versioned names first (nvtop's
 * way), into the table `gpu_cu`.  Without a driver every verb that needs no
 * GPU works; the GPU verbs get "no CUDA driver: ..." and exit 2.
 *
 * cuda.h is included for its types and enums only.  Its macros rename some
 * API names to versioned ones (cuMemAlloc -> cuMemAlloc_v2); the table's
 * members go through the same macros, so `gpu_cu.cuMemAlloc(...)` reads
 * like the API and calls the versioned entry point.
 */
#ifndef D4R_GPU_DRIVER_H
#define D4R_GPU_DRIVER_H

#include "base/base.h"
#include "base/err.h"
#include "base/strbuf.h"

#include <cuda.h>

#define GPU_CU_FUNCS(X)                                                         \
	X(cuInit)                                                                   \
	X(cuDriverGetVersion)                                                       \
	X(cuDeviceGet)                                                              \
	X(cuDeviceGetCount)                                                         \
	X(cuDeviceGetName)                                                          \
	X(cuDeviceGetAttribute)                                                     \
	X(cuDevicePrimaryCtxRetain)                                                 \
	X(cuDevicePrimaryCtxRelease)                                                \
	X(cuCtxSetCurrent)                                                          \
	X(cuCtxSynchronize)                                                         \
	X(cuCtxGetDevice)                                                           \
	X(cuGetErrorName)                                                           \
	X(cuGetErrorString)                                                         \
	X(cuModuleLoadDataEx)                                                       \
	X(cuModuleLoadData)                                                         \
	X(cuModuleUnload)                                                           \
	X(cuModuleGetFunction)                                                      \
	X(cuModuleGetGlobal)                                                        \
	X(cuFuncSetAttribute)                                                       \
	X(cuFuncGetAttribute)                                                       \
	X(cuLinkCreate)                                                             \
	X(cuLinkAddData)                                                            \
	X(cuLinkComplete)                                                           \
	X(cuLinkDestroy)                                                            \
	X(cuMemAlloc)                                                               \
	X(cuMemFree)                                                                \
	X(cuMemcpyHtoD)                                                             \
	X(cuMemcpyDtoH)                                                             \
	X(cuMemsetD8)                                                               \
	X(cuMemGetInfo)                                                             \
	X(cuArray3DCreate)                                                          \
	X(cuArrayDestroy)                                                           \
	X(cuMemcpy2D)                                                               \
	X(cuTexObjectCreate)                                                        \
	X(cuTexObjectDestroy)                                                       \
	X(cuSurfObjectCreate)                                                       \
	X(cuSurfObjectDestroy)                                                      \
	X(cuLaunchKernel)                                                           \
	X(cuStreamCreate)                                                           \
	X(cuStreamDestroy)                                                          \
	X(cuStreamSynchronize)                                                      \
	X(cuEventCreate)                                                            \
	X(cuEventRecord)                                                            \
	X(cuEventSynchronize)                                                       \
	X(cuEventElapsedTime)                                                       \
	X(cuEventDestroy)

typedef struct {
	void *lib;
	int driver_version;        /* cuDriverGetVersion, e.g. 13000 */
#define GPU_CU_MEMBER(name) __typeof__(name) *name;
	GPU_CU_FUNCS(GPU_CU_MEMBER)
#undef GPU_CU_MEMBER
} GpuDriver;

extern GpuDriver gpu_cu;

/*
 * Loads libcuda.so.1 and every entry point (once; later calls return the
 * first answer).  -1 with "no CUDA driver: libcuda.so.1: <dlerror>" when
 * the library is absent, or naming the missing symbol.  Does not call
 * cuInit: that belongs to the child process that uses the GPU (a process
 * must not fork after cuInit and use CUDA in the child).
 */
int gpu_driver_load(Err *e);

/*
 * Installs a driver table instead of loading libcuda: every entry point must
 * be set.  For tests, which run the whole GPU side against a CPU stand-in.
 */
void gpu_driver_use(const GpuDriver *d);

/* `what`: CUDA_ERROR_NAME (code): description.  Returns -1 (or 0 when r is
 * CUDA_SUCCESS).  The failing code is kept in gpu_cu_last_error, so a
 * caller several levels up can tell a fault from another error. */
int gpu_cu_check(CUresult r, const char *what, Err *e);
extern CUresult gpu_cu_last_error;
/* A sticky error of a kernel (illegal address, misaligned address, launch
 * failure, illegal instruction, trap...): the context is lost. */
bool gpu_cu_is_fault(CUresult r);

/* cuInit, device `ordinal`, its primary context made current. */
typedef struct {
	CUdevice dev;
	CUcontext ctx;
	char name[128];
	int cc_major, cc_minor;
} GpuContext;
int gpu_context_open(int ordinal, GpuContext *c, Err *e);
void gpu_context_close(GpuContext *c);

/*
 * Called for a PTX line named in a JIT error log, so the caller can say
 * where that line came from (the splicer maps spliced lines back to the
 * template).  Appends to `out`; may append nothing.
 */
typedef void (*GpuLineNote)(void *ctx, unsigned ptx_line, StrBuf *out);

typedef struct {
	const char *name;          /* the module's name in messages and logs */
	bool no_cache;             /* neither read nor write the image cache */
	const char *cache_dir;     /* NULL: user_cache_dir() */
	bool verbose;              /* CU_JIT_LOG_VERBOSE (register use per function) */
	int opt_level;             /* CU_JIT_OPTIMIZATION_LEVEL 0-4; -1 the driver's default */
	bool line_info;            /* CU_JIT_GENERATE_LINE_INFO: .loc lines kept in the image
	                              (PC sampling's map, sample/sample.h) */
	bool keep_image;           /* the compiled image comes back in the result */
	const char *image_file;    /* the image's file instead of the cache's (not with
	                              no_cache): loaded when not empty, else written;
	                              no info log kept beside it */
	GpuLineNote line_note;
	void *line_ctx;
} GpuJitOptions;

typedef struct {
	CUmodule module;
	double seconds;            /* wall time of the whole JIT (or cache load) */
	float driver_ms;           /* CU_JIT_WALL_TIME as the driver measured it */
	bool cached;               /* the compiled image came from the cache */
	char key[65];              /* cache key (sha256), "" with no_cache */
	char *info_log;            /* whole info log, malloc'd ("" when none) */
	char *error_log;           /* whole error log, malloc'd ("" when none) */
	unsigned char *image;      /* with keep_image: the cubin loaded, malloc'd */
	size_t image_len;
} GpuJitResult;

/*
 * JIT-compiles ptx[0..n) for the current context's device and loads it.
 *
 * Without no_cache: the image cache is looked up by
 * sha256(PTX, driver version, device compute capability, JIT options); a
 * hit is loaded with cuModuleLoadData, a miss is compiled with
 * cuLinkCreate / cuLinkAddData / cuLinkComplete (which hands back the
 * cubin), stored, then loaded.  With image_file, that file takes the
 * cached image's place (empty: a miss).  With no_cache: cuModuleLoadDataEx.
 *
 * On failure: -1; the message holds the error log, and for every PTX line
 * the log names ("line N"), that line of the PTX (and the line_note's
 * words).  r->info_log / r->error_log hold the whole logs either way.
 */
int gpu_jit(const char *ptx, size_t n, const GpuJitOptions *o, GpuJitResult *r, Err *e);
void gpu_jit_result_release(GpuJitResult *r);

/*
 * Whether gpu_jit with these options would load ptx[0..n) from the image
 * cache (an image for the current context's device is there) or from a
 * non-empty image_file: false with no_cache, without a cache folder,
 * without a context.  Reads no image.
 */
bool gpu_jit_cached(const char *ptx, size_t n, const GpuJitOptions *o);

/*
 * The cache key of a compile (pure; testable without a GPU): lower-case
 * hex sha256 of the PTX, the driver version, the target "sm_MN" and the
 * option string.
 */
void gpu_cache_key(const char *ptx, size_t n, int driver_version, int cc_major,
                   int cc_minor, const char *options, char out[65]);

/*
 * Appends, for each distinct "line N" in `log` (at most `max`), the PTX
 * line N of ptx[0..n) as "    N | text", and the note callback's words.
 * Pure; testable without a GPU.
 */
void gpu_log_lines(const char *log, const char *ptx, size_t n, unsigned max,
                   GpuLineNote note, void *note_ctx, StrBuf *out);

/* What the compiler made of a kernel (cuFuncGetAttribute). */
typedef struct {
	bool known;       /* the attributes were read */
	int regs;         /* CU_FUNC_ATTRIBUTE_NUM_REGS: registers per thread */
	int local_bytes;  /* ..._LOCAL_SIZE_BYTES: local memory per thread (spills, stack) */
	int shared_bytes; /* ..._SHARED_SIZE_BYTES: static shared memory per block */
	int max_threads;  /* ..._MAX_THREADS_PER_BLOCK with these registers */
} GpuFuncAttrs;

/* The attributes of f; -1 naming the call that failed. */
int gpu_func_attrs(CUfunction f, GpuFuncAttrs *a, Err *e);

/*
 * The spill lines of a JIT info log (with CU_JIT_LOG_VERBOSE the compiler
 * writes "N bytes stack frame, N bytes spill stores, N bytes spill loads"
 * per function): every line that names spills with a number that is not
 * 0 is appended to `lines` (may be NULL), one per line, and the spill
 * stores and loads are summed into *stores and *loads (may be NULL).
 * Returns the number of such lines.  Pure.
 */
unsigned gpu_log_spills(const char *log, StrBuf *lines, uint64_t *stores, uint64_t *loads);

/* What the compiler's verbose log (CU_JIT_LOG_VERBOSE) says of one entry. */
typedef struct {
	bool known;                /* the log has the entry's block */
	int regs;                  /* "Used N registers" */
	int stack_bytes;           /* "N bytes stack frame": local memory per thread */
	int shared_bytes;          /* "N bytes smem" */
	uint64_t spill_stores, spill_loads;
	char spill_line[192];      /* "1096 bytes stack frame, 3192 bytes spill stores, ..." */
} GpuLogAttrs;

/*
 * The figures of `entry` in a verbose JIT log: the lines from "Compiling
 * entry function 'ENTRY'" (or "Function properties for ENTRY") up to the
 * next function's.  Returns 0, or -1 (a->known false) when the log has no
 * such block (a log that is not verbose, a cached image without its log).
 * Pure.
 */
int gpu_log_func_attrs(const char *log, const char *entry, GpuLogAttrs *a);

/* "168 registers, 1096 B stack, 16384 B shared, spills 3192 B stored / 3404 B
 * loaded" (or "no spills"); "-" when unknown. */
void gpu_log_attrs_text(const GpuLogAttrs *a, StrBuf *out);

/* Does b spill where a does not (both known)? */
bool gpu_log_attrs_spill_more(const GpuLogAttrs *a, const GpuLogAttrs *b);

/* "168 registers, 0 B local, 16384 B shared" */
void gpu_func_attrs_text(const GpuFuncAttrs *a, StrBuf *out);

/* One figure the compiler made differently of two builds of a kernel. */
typedef struct {
	const char *what; /* "registers", "local memory", "spill stores", "spill loads" */
	const char *key;  /* its JSON name: registers, local_bytes, spill_store_bytes, ... */
	const char *unit; /* "" or " B" */
	long long a, b;
} GpuCompiledChange;

/*
 * Where the compiled kernel b differs from a: registers and local memory
 * from cuFuncGetAttribute (fa, fb; where both are known), spill stores and
 * loads from the verbose JIT log (la, lb; where both are known).  The
 * differing figures go to out[0..4) in that order; returns their number.
 * Pure.
 */
unsigned gpu_compiled_changes(const GpuFuncAttrs *fa, const GpuLogAttrs *la,
                              const GpuFuncAttrs *fb, const GpuLogAttrs *lb,
                              GpuCompiledChange out[4]);

/* "spill stores 3120 -> 1724 B, spill loads 3172 -> 1716 B" */
void gpu_compiled_changes_text(const GpuCompiledChange *c, unsigned n, StrBuf *out);

#endif
