/*
 * tap.h - the recorder inside PROGRAM (capture.h says where it stands).
 *
 * inject.c calls these from its CUPTI callbacks; a stand-in driver in the
 * tests calls them directly, as CUPTI would, so everything the injection
 * library does except the CUPTI glue runs in CI.  They are exported from
 * libd4r-capture.so for that reason.
 *
 * The tap is driven by the environment `capture` sets:
 *   D4R_CAPTURE_SPOOL      the spool folder (without it the tap is off)
 *   D4R_CAPTURE_KERNEL     POSIX extended regular expression on kernel names
 *   D4R_CAPTURE_LAUNCH     N (the N-th launch of a matching kernel, from 1)
 *                          or "all"
 *   D4R_CAPTURE_MAX_BYTES  the most bytes of allocations one launch may copy
 *   D4R_LIBCUDA            the driver to look the memory calls up in
 *                          (default libcuda.so.1, the one PROGRAM loaded)
 */
#ifndef D4R_CAPTURE_TAP_H
#define D4R_CAPTURE_TAP_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>

#define TAP_API __attribute__((visibility("default")))

typedef struct {
	const char *api;    /* "cuLaunchKernelEx" */
	const char *kernel; /* the kernel's name */
	CUfunction f;
	unsigned grid[3], block[3], cluster[3];
	unsigned shared; /* dynamic shared memory bytes */
	CUstream stream;
	void **kernel_params;
	void **extra;
	const CUlaunchAttribute *attrs; /* cuLaunchKernelEx's, as given */
	unsigned nattrs;
	bool cooperative; /* cuLaunchCooperativeKernel */
} TapLaunch;

/* Reads the environment once; 0 when the tap is on. */
TAP_API int d4r_tap_init(void);
/* A module image as the driver was handed it (copied). */
TAP_API void d4r_tap_module(const void *image, size_t size);
/* Before a launch: whether it is the chosen one and, if so, the snapshot
 * before it.  *cookie is handed back to d4r_tap_launch_exit. */
TAP_API void d4r_tap_launch_enter(const TapLaunch *l, void **cookie);
/* After the launch call returned: the snapshot after, the record. */
TAP_API void d4r_tap_launch_exit(const TapLaunch *l, void *cookie);
/* A CUDA graph launched (cuGraphLaunch): its kernels are not seen.  The
 * events file says so once ("graph API"). */
TAP_API void d4r_tap_graph_launch(const char *api);
/* A line in the spool's events file ("note ...", "error ..."). */
TAP_API void d4r_tap_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
