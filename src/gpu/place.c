/*
 * place.c - buffers at recorded addresses, launches with a cluster shape or
 * other launch attributes (place.h).
 *
 * Decisions:
 *  - The ranges of all placed buffers are rounded out to the minimum
 *    granularity and merged before anything is reserved: two allocations
 *    of the program may share a 2 MiB granule, and reserving each on its
 *    own would fail on the second.
 *  - cuMemAddressReserve takes the address as a hint; anything but that
 *    address is a failure (the range is released again).
 */
#include "gpu/place.h"

#include "gpu/mfattr.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	CUdeviceptr base;
	size_t size;
	CUmemGenericAllocationHandle h;
	int reserved, created, mapped;
} Range;

struct GpuPlaced {
	Range *v;
	size_t n;
};

typedef CUresult (*ReserveFn)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
                              unsigned long long);
typedef CUresult (*FreeFn)(CUdeviceptr, size_t);
typedef CUresult (*CreateFn)(CUmemGenericAllocationHandle *, size_t,
                             const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*ReleaseFn)(CUmemGenericAllocationHandle);
typedef CUresult (*MapFn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                          unsigned long long);
typedef CUresult (*UnmapFn)(CUdeviceptr, size_t);
typedef CUresult (*AccessFn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*GranFn)(size_t *, const CUmemAllocationProp *,
                           CUmemAllocationGranularity_flags);
typedef CUresult (*LaunchExFn)(const CUlaunchConfig *, CUfunction, void **, void **);

static void *sym(const char *name, Err *e)
{
	void *p = gpu_cu.lib ? dlsym(gpu_cu.lib, name) : NULL;
	if (!p && e)
		err_set(e, "the CUDA driver has no '%s'", name);
	return p;
}

typedef struct {
	uint64_t lo, hi;
	size_t buffer;
} Want;

static int by_lo(const void *a, const void *b)
{
	const Want *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

void gpu_place_release(GpuPlaced *p)
{
	if (!p)
		return;
	UnmapFn unmap = (UnmapFn)sym("cuMemUnmap", NULL);
	ReleaseFn release = (ReleaseFn)sym("cuMemRelease", NULL);
	FreeFn afree = (FreeFn)sym("cuMemAddressFree", NULL);
	for (size_t i = 0; i < p->n; i++) {
		Range *r = &p->v[i];
		if (r->mapped && unmap)
			unmap(r->base, r->size);
		if (r->created && release)
			release(r->h);
		if (r->reserved && afree)
			afree(r->base, r->size);
	}
	free(p->v);
	free(p);
}

int gpu_place_buffers(const Manifest *m, GpuPlaced **out, Err *e)
{
	*out = NULL;
	size_t nw = 0;
	Want *w = xcalloc(m->nbuffers + 1, sizeof(*w));
	for (size_t i = 0; i < m->nbuffers; i++)
		if (m->buffers[i].address)
			w[nw++] = (Want){m->buffers[i].address,
			                 m->buffers[i].address + m->buffers[i].size, i};
	if (!nw) {
		free(w);
		return 0;
	}
	GpuPlaced *p = xcalloc(1, sizeof(*p));
	p->v = xcalloc(nw, sizeof(*p->v));
	const char *first = m->buffers[w[0].buffer].name;
	char why[200] = "";
	ReserveFn reserve = (ReserveFn)sym("cuMemAddressReserve", e);
	CreateFn create = (CreateFn)sym("cuMemCreate", e);
	MapFn map = (MapFn)sym("cuMemMap", e);
	AccessFn access = (AccessFn)sym("cuMemSetAccess", e);
	GranFn gran = (GranFn)sym("cuMemGetAllocationGranularity", e);
	FreeFn afree = (FreeFn)sym("cuMemAddressFree", e);
	if (!reserve || !create || !map || !access || !gran || !afree)
		goto fail_said;
	CUdevice dev = 0;
	gpu_cu.cuCtxGetDevice(&dev);
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	size_t g = 0;
	if (gran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || !g)
		g = 2u << 20;
	for (size_t i = 0; i < nw; i++) {
		w[i].lo -= w[i].lo % g;
		w[i].hi += (g - w[i].hi % g) % g;
	}
	qsort(w, nw, sizeof(*w), by_lo);
	for (size_t i = 0; i < nw;) {
		uint64_t lo = w[i].lo, hi = w[i].hi;
		size_t j = i + 1;
		while (j < nw && w[j].lo <= hi)
			hi = MAX(hi, w[j].hi), j++; /* MAX reads its arguments twice */
		Range *r = &p->v[p->n++];
		r->size = (size_t)(hi - lo);
		first = m->buffers[w[i].buffer].name;
		CUresult cr = reserve(&r->base, r->size, 0, (CUdeviceptr)lo, 0);
		if (cr != CUDA_SUCCESS) {
			snprintf(why, sizeof why, "cuMemAddressReserve failed (%d)",
			         (int)cr);
			goto fail;
		}
		r->reserved = 1;
		if (r->base != lo) {
			snprintf(why, sizeof why,
			         "cuMemAddressReserve gave 0x%llx: the address is taken "
			         "in this process",
			         (unsigned long long)r->base);
			goto fail;
		}
		if ((cr = create(&r->h, r->size, &prop, 0)) != CUDA_SUCCESS) {
			snprintf(why, sizeof why, "cuMemCreate of %zu bytes failed (%d)",
			         r->size, (int)cr);
			goto fail;
		}
		r->created = 1;
		if ((cr = map(r->base, r->size, 0, r->h, 0)) != CUDA_SUCCESS) {
			snprintf(why, sizeof why, "cuMemMap failed (%d)", (int)cr);
			goto fail;
		}
		r->mapped = 1;
		CUmemAccessDesc ad;
		memset(&ad, 0, sizeof ad);
		ad.location = prop.location;
		ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		if ((cr = access(r->base, r->size, &ad, 1)) != CUDA_SUCCESS) {
			snprintf(why, sizeof why, "cuMemSetAccess failed (%d)", (int)cr);
			goto fail;
		}
		i = j;
	}
	free(w);
	*out = p;
	return 0;
fail:
	err_set(e, "%s", why);
fail_said:;
	int bi = mf_buffer_index(m, first);
	char *msg = xstrdup(err_msg(e));
	err_set(e,
	        "buffer '%s' must be at 0x%" PRIx64
	        " (a captured layer whose buffers point into each other): %s",
	        first, bi >= 0 ? m->buffers[bi].address : 0, msg);
	free(msg);
	free(w);
	gpu_place_release(p);
	return -1;
}

/*
 * The launch again with the parameter block as kernelParams, each pointing
 * at its parameter's offset (cuFuncGetParamInfo), for a driver that takes
 * no `extra` with some attribute, as cuLaunchCooperativeKernel takes none.
 * `was` (the first launch's result) when the offsets cannot be had.
 */
static CUresult launch_with_params(LaunchExFn launch, const CUlaunchConfig *c, CUfunction f,
                                   void **extra, CUresult was)
{
	typedef CUresult (*ParamInfoFn)(CUfunction, size_t, size_t *, size_t *);
	ParamInfoFn info = (ParamInfoFn)sym("cuFuncGetParamInfo", NULL);
	unsigned char *block = NULL;
	size_t size = 0;
	for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			block = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			size = *(size_t *)extra[i + 1];
	}
	if (!info || !block)
		return was;
	void *kp[512];
	size_t n = 0, off, psize;
	while (n < ARRAY_SIZE(kp) && info(f, n, &off, &psize) == CUDA_SUCCESS) {
		if (off + psize > size)
			return was;
		kp[n++] = block + off;
	}
	return n || !size ? launch(c, f, kp, NULL) : was;
}

CUresult gpu_launch_ex(CUfunction f, const MfLaunch *l, CUstream s, void **extra)
{
	LaunchExFn launch = (LaunchExFn)sym("cuLaunchKernelEx", NULL);
	if (!launch)
		return CUDA_ERROR_NOT_SUPPORTED;
	CUlaunchAttribute at[MF_MAX_ATTRS + 1];
	memset(at, 0, sizeof at);
	unsigned n = 0;
	if (l->cluster[0] * l->cluster[1] * l->cluster[2] > 1) {
		at[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		at[n].value.clusterDim.x = l->cluster[0];
		at[n].value.clusterDim.y = l->cluster[1];
		at[n].value.clusterDim.z = l->cluster[2];
		n++;
	}
	for (unsigned i = 0; i < l->nattrs && n < MF_MAX_ATTRS + 1; i++, n++) {
		const MfAttrKind *k = mf_attr_kind_of(l->attrs[i].id);
		at[n].id = (CUlaunchAttributeID)l->attrs[i].id;
		if (k && k->shape) { /* every shape of the union is x, y, z first */
			at[n].value.preferredClusterDim.x = l->attrs[i].v[0];
			at[n].value.preferredClusterDim.y = l->attrs[i].v[1];
			at[n].value.preferredClusterDim.z = l->attrs[i].v[2];
		} else { /* every scalar of the union is 32 bits at its start */
			memcpy(&at[n].value, &l->attrs[i].v[0], 4);
		}
	}
	CUlaunchConfig c;
	memset(&c, 0, sizeof c);
	c.gridDimX = l->grid[0];
	c.gridDimY = l->grid[1];
	c.gridDimZ = l->grid[2];
	c.blockDimX = l->block[0];
	c.blockDimY = l->block[1];
	c.blockDimZ = l->block[2];
	c.sharedMemBytes = l->dynamic_shared_bytes;
	c.hStream = s;
	c.attrs = at;
	c.numAttrs = n;
	CUresult cr = launch(&c, f, NULL, extra);
	if (cr == CUDA_ERROR_INVALID_VALUE && extra)
		cr = launch_with_params(launch, &c, f, extra, cr);
	return cr;
}
