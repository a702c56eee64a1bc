/*
 * launch.c - a manifest made real on the device (see launch.h).
 */
#include "gpu/launch.h"

#include "base/file.h"
#include "gpu/place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gpu_init_image(const Manifest *m, const MfInit *init, MfFormat f, uint64_t size,
                   const char *what, unsigned char **out, Err *e)
{
	*out = NULL;
	switch (init->kind) {
	case MF_INIT_ZERO:
	case MF_INIT_FILL:
		return 0;
	case MF_INIT_RANDOM: {
		unsigned char *p = xmalloc(size ? size : 1);
		mf_fill_random(init, f, p, size);
		*out = p;
		return 0;
	}
	case MF_INIT_FILE: {
		char *path;
		if (mf_corpus_path(m, init->path, &path, e) < 0)
			return err_set(e, "%s: %s.init: %s", m->path, what, err_msg(e));
		char *data;
		size_t n;
		if (read_file(path, &data, &n, e) < 0) {
			err_set(e, "%s: %s.init.path: %s", m->path, what, err_msg(e));
			free(path);
			return -1;
		}
		if (n > size) {
			err_set(e, "%s: %s.init.path: '%s' holds %zu bytes, more than the %llu it "
			           "fills", m->path, what, path, n, (unsigned long long)size);
			free(data);
			free(path);
			return -1;
		}
		free(path);
		unsigned char *p = xcalloc(1, size ? size : 1);
		memcpy(p, data, n);
		free(data);
		*out = p;
		return 0;
	}
	}
	return err_set(e, "%s: %s.init: unknown kind", m->path, what);
}

typedef struct {
	CUarray arr;
	CUtexObject tex;
	CUsurfObject surf;
	unsigned char *image;       /* NULL: zero/fill */
	uint64_t row_bytes;
} LArray;

struct GpuLayer {
	const Manifest *m;
	CUdeviceptr *bufs;
	unsigned char **images;     /* per buffer; NULL: zero/fill */
	LArray *arrays;
	uint64_t *addr, *tex, *surf; /* what the parameter blocks take */
	GpuPlaced *placed;          /* buffers at their recorded addresses (place.h) */
};

static CUarray_format array_format(MfFormat f)
{
	switch (f) {
	case MF_U8: return CU_AD_FORMAT_UNSIGNED_INT8;
	case MF_U16: return CU_AD_FORMAT_UNSIGNED_INT16;
	case MF_U32: return CU_AD_FORMAT_UNSIGNED_INT32;
	case MF_S8: return CU_AD_FORMAT_SIGNED_INT8;
	case MF_S16: return CU_AD_FORMAT_SIGNED_INT16;
	case MF_S32: return CU_AD_FORMAT_SIGNED_INT32;
	case MF_F16: return CU_AD_FORMAT_HALF;
	default: return CU_AD_FORMAT_FLOAT;
	}
}

static const CUaddress_mode address_modes[] = {
	[MF_ADDR_CLAMP] = CU_TR_ADDRESS_MODE_CLAMP,
	[MF_ADDR_WRAP] = CU_TR_ADDRESS_MODE_WRAP,
	[MF_ADDR_BORDER] = CU_TR_ADDRESS_MODE_BORDER,
	[MF_ADDR_MIRROR] = CU_TR_ADDRESS_MODE_MIRROR,
};

int gpu_layer_open(const Manifest *m, GpuLayer **out, Err *e)
{
	GpuLayer *L = xcalloc(1, sizeof(*L));
	L->m = m;
	L->bufs = xcalloc(m->nbuffers + 1, sizeof(*L->bufs));
	L->images = xcalloc(m->nbuffers + 1, sizeof(*L->images));
	L->arrays = xcalloc(m->narrays + 1, sizeof(*L->arrays));
	L->addr = xcalloc(m->nbuffers + 1, sizeof(uint64_t));
	L->tex = xcalloc(m->narrays + 1, sizeof(uint64_t));
	L->surf = xcalloc(m->narrays + 1, sizeof(uint64_t));
	*out = L;
	char what[300];
	if (gpu_place_buffers(m, &L->placed, e) < 0)
		goto fail;
	for (size_t i = 0; i < m->nbuffers; i++) {
		const MfBuffer *b = &m->buffers[i];
		snprintf(what, sizeof what, "buffers.%s", b->name);
		if (gpu_init_image(m, &b->init, b->init.format, b->size, what, &L->images[i], e) < 0)
			goto fail;
		if (b->address) { /* mapped by gpu_place_buffers */
			L->addr[i] = b->address;
			L->bufs[i] = (CUdeviceptr)b->address;
			continue;
		}
		char call[340];
		snprintf(call, sizeof call, "cuMemAlloc of buffer '%s' (%llu bytes)", b->name,
		         (unsigned long long)b->size);
		if (gpu_cu_check(gpu_cu.cuMemAlloc(&L->bufs[i], b->size), call, e) < 0)
			goto fail;
		L->addr[i] = (uint64_t)L->bufs[i];
	}
	for (size_t i = 0; i < m->narrays; i++) {
		const MfArray *a = &m->arrays[i];
		LArray *la = &L->arrays[i];
		snprintf(what, sizeof what, "arrays.%s", a->name);
		la->row_bytes = (uint64_t)a->width * a->channels * mf_format_size(a->format);
		if (gpu_init_image(m, &a->init, a->format, mf_array_bytes(a), what, &la->image,
		                   e) < 0)
			goto fail;
		CUDA_ARRAY3D_DESCRIPTOR d;
		memset(&d, 0, sizeof d);
		d.Width = a->width;
		d.Height = a->height;
		d.Depth = 0;
		d.Format = array_format(a->format);
		d.NumChannels = a->channels;
		d.Flags = a->surface ? CUDA_ARRAY3D_SURFACE_LDST : 0;
		char call[340];
		snprintf(call, sizeof call, "cuArray3DCreate of array '%s'", a->name);
		if (gpu_cu_check(gpu_cu.cuArray3DCreate(&la->arr, &d), call, e) < 0)
			goto fail;
		CUDA_RESOURCE_DESC rd;
		memset(&rd, 0, sizeof rd);
		rd.resType = CU_RESOURCE_TYPE_ARRAY;
		rd.res.array.hArray = la->arr;
		if (a->texture) {
			CUDA_TEXTURE_DESC td;
			memset(&td, 0, sizeof td);
			for (int k = 0; k < 3; k++)
				td.addressMode[k] = address_modes[a->tex_address];
			td.filterMode = a->tex_linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
			int is_int = a->format != MF_F16 && a->format != MF_F32;
			td.flags = (a->tex_normalized ? CU_TRSF_NORMALIZED_COORDINATES : 0) |
			           (is_int && !a->tex_read_float ? CU_TRSF_READ_AS_INTEGER : 0);
			snprintf(call, sizeof call, "cuTexObjectCreate over array '%s'", a->name);
			if (gpu_cu_check(gpu_cu.cuTexObjectCreate(&la->tex, &rd, &td, NULL), call, e) < 0)
				goto fail;
			L->tex[i] = (uint64_t)la->tex;
		}
		if (a->surface) {
			snprintf(call, sizeof call, "cuSurfObjectCreate over array '%s'", a->name);
			if (gpu_cu_check(gpu_cu.cuSurfObjectCreate(&la->surf, &rd), call, e) < 0)
				goto fail;
			L->surf[i] = (uint64_t)la->surf;
		}
	}
	return 0;
fail:
	gpu_layer_close(L);
	*out = NULL;
	return -1;
}

static int copy_array(LArray *la, const MfArray *a, const unsigned char *host, int to_device,
                      unsigned char *dst, Err *e)
{
	CUDA_MEMCPY2D c;
	memset(&c, 0, sizeof c);
	if (to_device) {
		c.srcMemoryType = CU_MEMORYTYPE_HOST;
		c.srcHost = host;
		c.srcPitch = la->row_bytes;
		c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
		c.dstArray = la->arr;
	} else {
		c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
		c.srcArray = la->arr;
		c.dstMemoryType = CU_MEMORYTYPE_HOST;
		c.dstHost = dst;
		c.dstPitch = la->row_bytes;
	}
	c.WidthInBytes = la->row_bytes;
	c.Height = a->height;
	char call[300];
	snprintf(call, sizeof call, "cuMemcpy2D %s array '%s'", to_device ? "to" : "from",
	         a->name);
	return gpu_cu_check(gpu_cu.cuMemcpy2D(&c), call, e);
}

int gpu_layer_reset(GpuLayer *L, CUstream s, Err *e)
{
	const Manifest *m = L->m;
	(void)s;   /* the copies are synchronous: a run starts after its inputs */
	for (size_t i = 0; i < m->nbuffers; i++) {
		const MfBuffer *b = &m->buffers[i];
		CUresult r;
		if (L->images[i])
			r = gpu_cu.cuMemcpyHtoD(L->bufs[i], L->images[i], b->size);
		else
			r = gpu_cu.cuMemsetD8(L->bufs[i],
			                      b->init.kind == MF_INIT_FILL ? (unsigned char)b->init.byte : 0,
			                      b->size);
		char call[300];
		snprintf(call, sizeof call, "initialising buffer '%s'", b->name);
		if (gpu_cu_check(r, call, e) < 0)
			return -1;
	}
	for (size_t i = 0; i < m->narrays; i++) {
		const MfArray *a = &m->arrays[i];
		LArray *la = &L->arrays[i];
		unsigned char *tmp = NULL;
		const unsigned char *src = la->image;
		if (!src) {
			uint64_t n = mf_array_bytes(a);
			tmp = xmalloc(n);
			memset(tmp, a->init.kind == MF_INIT_FILL ? (int)a->init.byte : 0, n);
			src = tmp;
		}
		int rc = copy_array(la, a, src, 1, NULL, e);
		free(tmp);
		if (rc < 0)
			return -1;
	}
	/* Every upload is done before the first kernel of the run. */
	return gpu_cu_check(gpu_cu.cuCtxSynchronize(), "synchronising after the uploads", e);
}

void gpu_layer_close(GpuLayer *L)
{
	if (!L)
		return;
	const Manifest *m = L->m;
	for (size_t i = 0; i < m->narrays; i++) {
		LArray *la = &L->arrays[i];
		if (la->tex)
			gpu_cu.cuTexObjectDestroy(la->tex);
		if (la->surf)
			gpu_cu.cuSurfObjectDestroy(la->surf);
		if (la->arr)
			gpu_cu.cuArrayDestroy(la->arr);
		free(la->image);
	}
	for (size_t i = 0; i < m->nbuffers; i++) {
		if (L->bufs[i] && !m->buffers[i].address)
			gpu_cu.cuMemFree(L->bufs[i]);
		free(L->images[i]);
	}
	gpu_place_release(L->placed);
	free(L->bufs);
	free(L->images);
	free(L->arrays);
	free(L->addr);
	free(L->tex);
	free(L->surf);
	free(L);
}

int gpu_layer_bind(GpuLayer *L, CUmodule mod, GpuBound *b, Err *e)
{
	const Manifest *m = L->m;
	b->funcs = xcalloc(m->nlaunches + 1, sizeof(CUfunction));
	b->params = xcalloc(m->nlaunches + 1, sizeof(unsigned char *));
	for (size_t i = 0; i < m->nlaunches; i++) {
		const MfLaunch *l = &m->launches[i];
		char call[400];
		snprintf(call, sizeof call, "launches[%zu]: cuModuleGetFunction '%s'", i, l->entry);
		if (gpu_cu_check(gpu_cu.cuModuleGetFunction(&b->funcs[i], mod, l->entry), call,
		                 e) < 0)
			goto fail;
		if (l->dynamic_shared_bytes > 48 * 1024) {
			snprintf(call, sizeof call,
			         "launches[%zu]: '%s': allowing %u bytes of dynamic shared memory", i,
			         l->entry, l->dynamic_shared_bytes);
			if (gpu_cu_check(gpu_cu.cuFuncSetAttribute(
			                     b->funcs[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
			                     (int)l->dynamic_shared_bytes),
			                 call, e) < 0)
				goto fail;
		}
		b->params[i] = xcalloc(1, l->param_size + 8);
		mf_param_block(l, L->addr, L->tex, L->surf, b->params[i]);
	}
	return 0;
fail:
	gpu_bound_release(L, b);
	return -1;
}

void gpu_bound_release(GpuLayer *L, GpuBound *b)
{
	if (b->params)
		for (size_t i = 0; i < L->m->nlaunches; i++)
			free(b->params[i]);
	free(b->params);
	free(b->funcs);
	b->params = NULL;
	b->funcs = NULL;
}

int gpu_layer_launch(GpuLayer *L, const GpuBound *b, CUstream s, Err *e)
{
	return gpu_layer_launch_range(L, b, 0, L->m->nlaunches, s, e);
}

CUdeviceptr gpu_layer_buffer(const GpuLayer *L, size_t i)
{
	return L->bufs[i];
}

int gpu_layer_array_read(GpuLayer *L, size_t i, unsigned char *out, Err *e)
{
	return copy_array(&L->arrays[i], &L->m->arrays[i], NULL, 0, out, e);
}

int gpu_layer_array_write(GpuLayer *L, size_t i, const unsigned char *in, Err *e)
{
	return copy_array(&L->arrays[i], &L->m->arrays[i], in, 1, NULL, e);
}

void gpu_layer_params(const GpuLayer *L, size_t k, unsigned char *out)
{
	mf_param_block(&L->m->launches[k], L->addr, L->tex, L->surf, out);
}

int gpu_layer_launch_range(GpuLayer *L, const GpuBound *b, size_t from, size_t to, CUstream s,
                           Err *e)
{
	const Manifest *m = L->m;
	for (size_t i = from; i < to && i < m->nlaunches; i++) {
		const MfLaunch *l = &m->launches[i];
		size_t size = l->param_size;
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, b->params[i],
		                 CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
		for (unsigned r = 0; r < l->repeat; r++) {
			CUresult cr =
			    gpu_launch_needs_ex(l)
			        ? gpu_launch_ex(b->funcs[i], l, s, size ? extra : NULL)
			        : gpu_cu.cuLaunchKernel(b->funcs[i], l->grid[0], l->grid[1], l->grid[2],
			                                l->block[0], l->block[1], l->block[2],
			                                l->dynamic_shared_bytes, s, NULL,
			                                size ? extra : NULL);
			if (cr != CUDA_SUCCESS) {
				char call[400];
				snprintf(call, sizeof call, "launches[%zu]: cuLaunchKernel '%s'", i,
				         l->entry);
				return gpu_cu_check(cr, call, e);
			}
		}
	}
	return 0;
}

int gpu_layer_read_frame(GpuLayer *L, unsigned char *out, Err *e)
{
	const Manifest *m = L->m;
	for (size_t i = 0; i < m->noutputs; i++) {
		const MfOutput *o = &m->outputs[i];
		if (o->buffer >= 0) {
			char call[300];
			snprintf(call, sizeof call, "reading frame output '%s'", o->name);
			if (gpu_cu_check(gpu_cu.cuMemcpyDtoH(out + o->frame_off,
			                                     L->bufs[o->buffer] + o->offset, o->size),
			                 call, e) < 0)
				return -1;
		} else if (copy_array(&L->arrays[o->array], &m->arrays[o->array], NULL, 0,
		                      out + o->frame_off, e) < 0) {
			return -1;
		}
	}
	return 0;
}
