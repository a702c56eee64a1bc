/*
 * place.h - what a captured layer asks of the device beyond cuMemAlloc and
 * cuLaunchKernel: buffers at the device addresses they had in the program
 * (their contents hold pointers to each other, which no manifest field can
 * rebase), and launches in thread-block clusters or with other launch
 * attributes (a cooperative launch, a priority: manifest.h, MfAttr).
 *
 * Both use driver entry points that a written layer never needs
 * (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess,
 * cuLaunchKernelEx); they are looked up in the loaded driver when a layer
 * asks for them, so a driver without them fails only such a layer, saying
 * which entry point it lacks.
 */
#ifndef D4R_GPU_PLACE_H
#define D4R_GPU_PLACE_H

#include "gpu/driver.h"
#include "gpu/manifest.h"

typedef struct GpuPlaced GpuPlaced;

/*
 * Maps device memory at every buffer's "address" (the ranges gathered into
 * clusters, each reserved whole and mapped whole, so neighbours share a
 * mapping).  -1 with "buffer 'a0' must be at 0x7f2a00000000 (a captured
 * layer whose buffers point into each other): ..." saying what was in the
 * way: the address taken in this process (by what), or the hints tried and
 * the reservations they gave.  *out is NULL when no buffer has an address.
 */
int gpu_place_buffers(const Manifest *m, GpuPlaced **out, Err *e);
void gpu_place_release(GpuPlaced *p);

/* Does launch l need cuLaunchKernelEx (a cluster shape, an attribute)? */
static inline bool gpu_launch_needs_ex(const MfLaunch *l)
{
	return l->cluster[0] * l->cluster[1] * l->cluster[2] > 1 || l->nattrs;
}
/* cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION l->cluster
 * (when it is more than one block) and each of l->attrs; the parameter
 * block in `extra`, or, should the driver refuse that
 * (CUDA_ERROR_INVALID_VALUE), as kernelParams at each parameter's offset
 * (cuFuncGetParamInfo). */
CUresult gpu_launch_ex(CUfunction f, const MfLaunch *l, CUstream s, void **extra);

#endif
