/*
 * place.c - buffers at recorded addresses, launches with a cluster shape or
 * other launch attributes (place.h).
 *
 * Decisions:
 *  - The ranges of all placed buffers are rounded out to 2 MiB granules and
 *    gathered into clusters whose 32 MiB chunks touch; a cluster gets one
 *    reservation of its chunks, and one physical allocation mapped over all
 *    of it.  Two allocations of the program may
 *    share a granule, and the driver places reservations by chunks.
 *  - What the H200's driver 580 does with a hint (doc/gpu-logs/2026-12-02,
 *    call7-0545 to call10-0622): it gives a free hint on a 32 MiB boundary
 *    as it is, where the hint lies above the driver's own memory in the
 *    process (below that, the hint is ignored); a hint off a boundary, or
 *    over address space that was mapped when the driver started, gives the
 *    first free boundary past it, even once that space is unmapped.  So a
 *    cluster's chunks are asked for at the first one's boundary, no more
 *    than they (more only risks meeting the process's stack), and nothing
 *    is held or mapped in their way beforehand (holding the range, or the
 *    space above the driver, made it unavailable: call9 and call10).  Any
 *    other address is a failure, said with what the driver gave, or with
 *    what of the process lies in those chunks.
 *  - Whether the recorded addresses lie above the driver's memory in this
 *    process is chance (address-space randomisation); `capture` runs its
 *    PROGRAM with randomisation off, so that they lie at the top
 *    (cmd/capture.c), above a replay's driver almost always.
 *  - D4R_PLACE_TRACE=1 shows the hints and the mappings around them.
 */
#include "gpu/place.h"

#include "gpu/mfattr.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One reservation of the driver's address space, covering one cluster of
 * recorded ranges, with one physical allocation mapped over all of it. */
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
typedef CUresult (*LaunchExFn)(const CUlaunchConfig *, CUfunction, void **, void **);

static void *sym(const char *name, Err *e)
{
	void *p = gpu_cu.lib ? dlsym(gpu_cu.lib, name) : NULL;
	if (!p && e)
		err_set(e, "the CUDA driver has no '%s'", name);
	return p;
}

#define MIB ((uint64_t)1 << 20)
#define CHUNK (32 * MIB) /* the driver's unit of reservations (above) */
#define GRANULE (2 * MIB) /* the device memory's granularity (H200, and the stand-in) */

/* A cluster: recorded ranges (granules) whose chunks touch, with the
 * buffer that comes first, named when the cluster cannot be had. */
typedef struct {
	uint64_t lo, hi;
	size_t buffer;
} Cluster;

static int by_lo(const void *a, const void *b)
{
	const Cluster *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static uint64_t down(uint64_t v, uint64_t a) { return v - v % a; }
static uint64_t up(uint64_t v, uint64_t a) { return v + (a - v % a) % a; }

/* The clusters of m's recorded buffers, lowest first, in c (room for one
 * per buffer); their number. */
static size_t clusters_of(const Manifest *m, Cluster *c)
{
	size_t n = 0;
	for (size_t i = 0; i < m->nbuffers; i++) {
		const MfBuffer *b = &m->buffers[i];
		if (!b->address)
			continue;
		Cluster k = {down(b->address, GRANULE), up(b->address + b->size, GRANULE), i};
		if (k.hi <= k.lo) /* past the end of the address space */
			k.hi = UINT64_MAX - UINT64_MAX % GRANULE;
		c[n++] = k;
	}
	qsort(c, n, sizeof(*c), by_lo);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w && down(c[i].lo, CHUNK) <= up(c[w - 1].hi, CHUNK))
			c[w - 1].hi = MAX(c[w - 1].hi, c[i].hi); /* MAX reads its arguments twice */
		else
			c[w++] = c[i];
	}
	return w;
}

/* The span a cluster's reservation covers: its chunks, no more (any more
 * only risks meeting something of the process, as its stack). */
static uint64_t span_lo(const Cluster *c) { return down(c->lo, CHUNK); }
static size_t span_size(const Cluster *c) { return up(c->hi, CHUNK) - span_lo(c); }

typedef struct {
	uint64_t lo, hi;
	char what[120];
} Mapping;

static Mapping maps_buf[8192]; /* what mappings() reads into, for the two below */

/* The child's mappings, lowest first (as /proc/self/maps lists them). */
static size_t mappings(Mapping *v, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[600];
	size_t n = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi;
		int off = 0;
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2)
			continue;
		char *name = line + off;
		name[strcspn(name, "\n")] = '\0';
		if (n < max) {
			v[n].lo = lo, v[n].hi = hi;
			snprintf(v[n].what, sizeof v[n].what, "%s", *name ? name : "anonymous memory");
			n++;
		}
	}
	if (f)
		fclose(f);
	return n;
}

/* D4R_PLACE_TRACE set: on stderr, each hint and what it gave, and before
 * the first the child's mappings of 256 MiB or more and those within 4 GiB
 * of the recorded ranges (where the driver's own memory lies). */
static void trace_maps(uint64_t near)
{
	if (!getenv("D4R_PLACE_TRACE"))
		return;
	Mapping *v = maps_buf;
	size_t n = mappings(v, ARRAY_SIZE(maps_buf));
	const uint64_t w = (uint64_t)1 << 32;
	for (size_t i = 0; i < n; i++)
		if (v[i].hi - v[i].lo >= ((uint64_t)256 << 20) ||
		    (v[i].lo < near + w && v[i].hi + w > near))
			fprintf(stderr, "place: %llx-%llx %s\n", (unsigned long long)v[i].lo,
			        (unsigned long long)v[i].hi, v[i].what);
}

/* What of the child occupies [lo, hi), for the message; NULL where nothing. */
static const char *occupant(uint64_t lo, uint64_t hi, char *buf, size_t size)
{
	Mapping *v = maps_buf;
	size_t n = mappings(v, ARRAY_SIZE(maps_buf));
	for (size_t i = 0; i < n; i++)
		if (v[i].lo < hi && lo < v[i].hi) {
			snprintf(buf, size, "%s at 0x%llx-0x%llx", v[i].what,
			         (unsigned long long)v[i].lo, (unsigned long long)v[i].hi);
			return buf;
		}
	return NULL;
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

/*
 * The reservation of a cluster's chunks, [start, start + r->size), asked
 * for at its start (place.h: the driver gives a free chunk-aligned hint as
 * it is, above its own memory).  0 with r->base, or -1 with what the hint
 * gave in `why`.
 */
static int reserve_at(ReserveFn reserve, FreeFn afree, Range *r, uint64_t start, char *why,
                      size_t wsize)
{
	uint64_t hint = start;
	CUdeviceptr got = 0;
	CUresult cr = reserve(&got, r->size, 0, (CUdeviceptr)hint, 0);
	if (getenv("D4R_PLACE_TRACE"))
		fprintf(stderr, "place: hint 0x%llx, %zu bytes: %d, 0x%llx\n",
		        (unsigned long long)hint, r->size, (int)cr, (unsigned long long)got);
	if (cr == CUDA_SUCCESS && got == start) { /* not hint: a hint off the boundary is wrong */
		r->base = got;
		r->reserved = 1;
		return 0;
	}
	if (cr == CUDA_SUCCESS) {
		afree(got, r->size);
		snprintf(why, wsize,
		         "cuMemAddressReserve at 0x%llx gave 0x%llx (the driver gives an address "
		         "only above its own memory, where nothing was mapped when it started)",
		         (unsigned long long)hint, (unsigned long long)got);
	} else {
		snprintf(why, wsize, "cuMemAddressReserve at 0x%llx failed (%d)",
		         (unsigned long long)hint, (int)cr);
	}
	return -1;
}

int gpu_place_buffers(const Manifest *m, GpuPlaced **out, Err *e)
{
	*out = NULL;
	Cluster *c = xcalloc(m->nbuffers + 1, sizeof(*c));
	size_t nc = clusters_of(m, c);
	if (!nc) {
		free(c);
		return 0;
	}
	GpuPlaced *p = xcalloc(1, sizeof(*p));
	p->v = xcalloc(nc, sizeof(*p->v));
	const Cluster *at = &c[0];
	char why[600] = "";
	ReserveFn reserve = (ReserveFn)sym("cuMemAddressReserve", e);
	CreateFn create = (CreateFn)sym("cuMemCreate", e);
	MapFn map = (MapFn)sym("cuMemMap", e);
	AccessFn access = (AccessFn)sym("cuMemSetAccess", e);
	FreeFn afree = (FreeFn)sym("cuMemAddressFree", e);
	if (!reserve || !create || !map || !access || !afree)
		goto fail_said;
	CUdevice dev = 0;
	gpu_cu.cuCtxGetDevice(&dev);
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	trace_maps(c[0].lo);
	for (size_t i = 0; i < nc; i++) {
		at = &c[i];
		Range *r = &p->v[p->n++];
		r->size = span_size(at);
		char busy[200];
		if (span_lo(at) + r->size < span_lo(at) || at->hi > ((uint64_t)1 << 57)) {
			snprintf(why, sizeof why, "no device address is that high");
			goto fail;
		}
		if (reserve_at(reserve, afree, r, span_lo(at), why, sizeof why) < 0) {
			const char *o = occupant(span_lo(at), span_lo(at) + r->size, busy, sizeof busy);
			if (o) /* the plainer reason first */
				snprintf(why, sizeof why,
				         "its address space (the driver's 32 MiB chunks), 0x%llx-0x%llx, "
				         "holds %s in this process (each run is placed anew)",
				         (unsigned long long)span_lo(at),
				         (unsigned long long)(span_lo(at) + r->size), o);
			goto fail;
		}
		CUresult cr;
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
	}
	free(c);
	*out = p;
	return 0;
fail:
	err_set(e, "%s", why);
fail_said:;
	const MfBuffer *b = &m->buffers[at->buffer];
	char *msg = xstrdup(err_msg(e));
	err_set(e,
	        "buffer '%s' must be at 0x%" PRIx64
	        " (a captured layer whose buffers point into each other): %s",
	        b->name, b->address, msg);
	free(msg);
	free(c);
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
