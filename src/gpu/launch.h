/*
 * launch.h - a layer on the device: buffers, arrays, objects, launches.
 *
 * gpu_layer_open turns a manifest into device state: every buffer
 * allocated, every array created (with CUDA_ARRAY3D_SURFACE_LDST when it is
 * a surface), texture and surface objects over the arrays, and the host
 * image of every initial content that is not a plain byte fill (files are
 * read, random contents generated once).  gpu_layer_reset uploads the
 * initial contents; every run of a launch sequence starts from it, so a
 * kernel that overwrites its inputs sees the same inputs in every run and
 * in every module.
 *
 * A module is bound to the layer with gpu_layer_bind (its functions looked
 * up, parameter blocks built, dynamic shared memory above 48 KB opted in);
 * gpu_layer_launch runs the sequence on a stream; gpu_layer_read_frame
 * copies the frame's outputs back in manifest order (arrays rows packed).
 */
#ifndef D4R_GPU_LAUNCH_H
#define D4R_GPU_LAUNCH_H

#include "base/base.h"
#include "base/err.h"
#include "gpu/driver.h"
#include "gpu/manifest.h"

/*
 * The initial contents of one buffer or array (pure apart from reading a
 * file; testable without a GPU).  `size` bytes of format `f` (random);
 * `what` names the object in messages ("buffers.weights").  Sets *out to a
 * malloc'd image of `size` bytes, or to NULL for zero and fill (which the
 * device sets with cuMemsetD8: no host copy).
 */
int gpu_init_image(const Manifest *m, const MfInit *init, MfFormat f, uint64_t size,
                   const char *what, unsigned char **out, Err *e);

typedef struct GpuLayer GpuLayer;

int gpu_layer_open(const Manifest *m, GpuLayer **out, Err *e);
/* Uploads every buffer's and array's initial contents (on the stream). */
int gpu_layer_reset(GpuLayer *L, CUstream s, Err *e);
void gpu_layer_close(GpuLayer *L);

/* A module's functions and parameter blocks for the layer's launches. */
typedef struct {
	CUfunction *funcs;         /* one per launch */
	unsigned char **params;    /* one block per launch */
} GpuBound;

int gpu_layer_bind(GpuLayer *L, CUmodule mod, GpuBound *b, Err *e);
void gpu_bound_release(GpuLayer *L, GpuBound *b);

/* Runs the launch sequence (each launch `repeat` times) on stream s; does
 * not synchronise. */
int gpu_layer_launch(GpuLayer *L, const GpuBound *b, CUstream s, Err *e);

/* Launches [from, to) of the sequence alone (gpu_layer_launch runs them
 * all): what a caller that looks at the buffers between two launches
 * runs. */
int gpu_layer_launch_range(GpuLayer *L, const GpuBound *b, size_t from, size_t to, CUstream s,
                           Err *e);
/* Buffer i's device address. */
CUdeviceptr gpu_layer_buffer(const GpuLayer *L, size_t i);
/* Array i's contents, rows packed (mf_array_bytes of them), copied off the
 * device into out, or from in onto it (cuMemcpy2D, synchronous): what a
 * caller that takes an array's state between two launches copies. */
int gpu_layer_array_read(GpuLayer *L, size_t i, unsigned char *out, Err *e);
int gpu_layer_array_write(GpuLayer *L, size_t i, const unsigned char *in, Err *e);
/* Launch k's parameter block as gpu_layer_bind builds it, into
 * out[0..param_size): for a function of another module launched as k. */
void gpu_layer_params(const GpuLayer *L, size_t k, unsigned char *out);

/* Copies the frame (m->frame_size bytes) into out, synchronously. */
int gpu_layer_read_frame(GpuLayer *L, unsigned char *out, Err *e);

#endif
