/*
 * tap.c - the recorder inside PROGRAM: module images, the chosen launch,
 * its allocations before and after, written to the spool (capture.h).
 *
 * For every launch the tap counts the kernel; for the chosen one it
 *
 *   1. synchronises the context (work on other streams may be writing the
 *      buffers; the events file says it was done)
 *   2. finds the module image that defines the kernel (the latest loaded)
 *   3. builds the parameter block: from `extra` when the caller passed one,
 *      else from kernelParams with each parameter's offset and size, taken
 *      from cuFuncGetParamInfo, else from the image (nvinfo.c)
 *   4. resolves every 8-byte piece of the block that the driver knows as
 *      device memory to its allocation (cuMemGetAddressRange), refusing
 *      host, managed and peer memory; then the same for 8-byte values
 *      inside the copied allocations (pointer tables), so every allocation
 *      the launch can reach through them is copied too
 *   5. copies each allocation before the launch and, after the launch call
 *      returned and the context is synchronised again, after it
 *   6. writes the record with every launch attribute as the program gave it
 *      (record.c decides which a replay gives and refuses the others)
 *
 * Refusals are events ("refuse KERNEL #N: why"), never a failure of
 * PROGRAM: the tap must not change what PROGRAM does.
 *
 * Decisions:
 *  - One mutex around all of it: launches from several threads are
 *    counted in one order, and a snapshot is not interleaved with another.
 *  - Module images are kept in memory, not written, until a launch of one
 *    of their kernels is recorded: a PyTorch process loads hundreds.
 *  - Values inside allocations are followed only when they have the shape
 *    of a device address (at least 2^32, below 2^57) and only inside
 *    allocations of at most 64 MiB: asking the driver about every word of
 *    a gigabyte of weights would take longer than the program.
 *  - The driver is the one PROGRAM loaded (dlopen RTLD_NOLOAD first); its
 *    entry points are looked up by their versioned names, as gpu/driver.c
 *    does, but not through it: the injection library carries only the
 *    files it needs (Makefile: CAPTURE_LIB).
 */
#include "capture/tap.h"

#include "capture/capture.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
	unsigned char *p;
	size_t n;
	unsigned index; /* written as modules/mINDEX.img once used */
	bool written;
} Image;

typedef struct {
	char *name;
	unsigned count;
} Seen;

typedef struct {
	CapAlloc *allocs;
	size_t n, cap;
	uint64_t bytes;
} Allocs;

typedef struct {
	CUarray arr;
	CapArray a;
} TapArray;

typedef struct {
	char dir[4200];
	char kernel_line[64];
	unsigned kcount;
	Allocs a;
	TapArray *arrays;
	size_t narrays;
	CapObject *objects;
	size_t nobjects;
	unsigned char *block;
	uint32_t block_size;
	CapParams params;
	const char *param_source;
	unsigned module;
} Pending;

static struct {
	int on;
	char spool[4096];
	regex_t re;
	bool have_re, all;
	unsigned want;
	uint64_t max_bytes;
	Image *mods;
	size_t nmods, capmods;
	Seen *seen;
	size_t nseen, capseen;
	unsigned matched, recorded;
	unsigned graphs; /* CUDA graph launches seen */
	CUresult (*ctx_sync)(void);
	CUresult (*ctx_device)(CUdevice *);
	CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr);
	CUresult (*attr)(void *, CUpointer_attribute, CUdeviceptr);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*param_info)(CUfunction, size_t, size_t *, size_t *);
	CUresult (*capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*tex_res)(CUDA_RESOURCE_DESC *, CUtexObject);
	CUresult (*tex_desc)(CUDA_TEXTURE_DESC *, CUtexObject);
	CUresult (*surf_res)(CUDA_RESOURCE_DESC *, CUsurfObject);
	CUresult (*array_desc)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);
	CUresult (*copy2d)(const CUDA_MEMCPY2D *);
} T;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* ---- 1. the spool ---------------------------------------------------------------- */

static void vevent(const char *fmt, va_list ap)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/events", T.spool);
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fclose(f);
}

static void ev(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ev(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vevent(fmt, ap);
	va_end(ap);
}

TAP_API void d4r_tap_event(const char *fmt, ...)
{
	if (d4r_tap_init() != 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vevent(fmt, ap);
	va_end(ap);
}

/* Writes dir/name; false (and an error event) on failure. */
static bool put(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(p, 1, n, f) == n;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		ev("error cannot write '%s': %s", path, strerror(errno));
	return ok;
}

/* ---- 2. set-up -------------------------------------------------------------------- */

static void *driver_sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);
	return p || !b ? p : dlsym(lib, b);
}

static void setup(void)
{
	const char *spool = getenv("D4R_CAPTURE_SPOOL");
	if (!spool || !*spool || strlen(spool) >= sizeof T.spool)
		return;
	snprintf(T.spool, sizeof T.spool, "%s", spool);
	const char *re = getenv("D4R_CAPTURE_KERNEL");
	if (re && *re) {
		if (regcomp(&T.re, re, REG_EXTENDED | REG_NOSUB) != 0) {
			ev("error --kernel '%s' is not a POSIX extended regular "
			   "expression",
			   re);
			return;
		}
		T.have_re = true;
	}
	const char *launch = getenv("D4R_CAPTURE_LAUNCH");
	T.all = launch && !strcmp(launch, "all");
	T.want = launch && !T.all ? (unsigned)strtoul(launch, NULL, 10) : 1;
	const char *max = getenv("D4R_CAPTURE_MAX_BYTES");
	T.max_bytes = max && *max ? strtoull(max, NULL, 10) : 4ull << 30;
	const char *libname = getenv("D4R_LIBCUDA");
	if (!libname || !*libname)
		libname = "libcuda.so.1";
	void *lib = dlopen(libname, RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		lib = dlopen(libname, RTLD_NOW);
	T.on = 1;
	if (!lib) {
		ev("error no CUDA driver: %s", dlerror());
		T.on = 0;
		return;
	}
	T.ctx_sync = driver_sym(lib, "cuCtxSynchronize", NULL);
	T.ctx_device = driver_sym(lib, "cuCtxGetDevice", NULL);
	T.range = driver_sym(lib, "cuMemGetAddressRange_v2", "cuMemGetAddressRange");
	T.attr = driver_sym(lib, "cuPointerGetAttribute", NULL);
	T.dtoh = driver_sym(lib, "cuMemcpyDtoH_v2", "cuMemcpyDtoH");
	T.param_info = driver_sym(lib, "cuFuncGetParamInfo", NULL);
	T.capturing = driver_sym(lib, "cuStreamIsCapturing", NULL);
	T.tex_res = driver_sym(lib, "cuTexObjectGetResourceDesc", NULL);
	T.tex_desc = driver_sym(lib, "cuTexObjectGetTextureDesc", NULL);
	T.surf_res = driver_sym(lib, "cuSurfObjectGetResourceDesc", NULL);
	T.array_desc =
	    driver_sym(lib, "cuArray3DGetDescriptor_v2", "cuArray3DGetDescriptor");
	T.copy2d = driver_sym(lib, "cuMemcpy2D_v2", "cuMemcpy2D");
	if (!T.ctx_sync || !T.range || !T.attr || !T.dtoh) {
		ev("error the CUDA driver lacks cuCtxSynchronize, cuMemGetAddressRange, "
		   "cuPointerGetAttribute or cuMemcpyDtoH");
		T.on = 0;
		return;
	}
	ev("loaded");
}

TAP_API int d4r_tap_init(void)
{
	pthread_once(&once, setup);
	return T.on ? 0 : -1;
}

TAP_API void d4r_tap_module(const void *image, size_t size)
{
	if (d4r_tap_init() != 0 || !image || !size)
		return;
	pthread_mutex_lock(&mu);
	if (T.nmods == T.capmods) {
		T.capmods = T.capmods ? T.capmods * 2 : 16;
		T.mods = xrealloc(T.mods, T.capmods * sizeof(*T.mods));
	}
	Image *im = &T.mods[T.nmods];
	im->p = xmalloc(size);
	memcpy(im->p, image, size);
	im->n = size;
	im->index = (unsigned)T.nmods++;
	im->written = false;
	pthread_mutex_unlock(&mu);
}

TAP_API void d4r_tap_graph_launch(const char *api)
{
	if (d4r_tap_init() != 0)
		return;
	pthread_mutex_lock(&mu);
	if (!T.graphs++) /* a program may launch a graph thousands of times */
		ev("graph %s", api ? api : "cuGraphLaunch");
	pthread_mutex_unlock(&mu);
}

/* ---- 3. one launch -------------------------------------------------------------------
 */

/* How many launches of `name` so far, this one included. */
static unsigned count_launch(const char *name)
{
	for (size_t i = 0; i < T.nseen; i++)
		if (!strcmp(T.seen[i].name, name))
			return ++T.seen[i].count;
	if (T.nseen == T.capseen) {
		T.capseen = T.capseen ? T.capseen * 2 : 64;
		T.seen = xrealloc(T.seen, T.capseen * sizeof(*T.seen));
	}
	T.seen[T.nseen++] = (Seen){xstrdup(name), 1};
	ev("launch %s", name);
	return 1;
}

static void free_pending(Pending *p)
{
	for (size_t i = 0; i < p->a.n; i++) {
		free(p->a.allocs[i].before);
		free(p->a.allocs[i].after);
	}
	free(p->a.allocs);
	for (size_t i = 0; i < p->narrays; i++) {
		free(p->arrays[i].a.before);
		free(p->arrays[i].a.after);
	}
	free(p->arrays);
	free(p->objects);
	free(p->block);
	cap_params_release(&p->params);
	free(p);
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static bool known(const Allocs *a, uint64_t v)
{
	for (size_t i = 0; i < a->n; i++)
		if (v >= a->allocs[i].base && v - a->allocs[i].base < a->allocs[i].size)
			return true;
	return false;
}

/*
 * Adds the allocation holding v (when v is device memory the driver
 * knows) and copies it.  0 not a pointer or already known, 1 added, -1
 * refused (why[] says it).
 */
static int resolve(Allocs *a, uint64_t v, const char *where, char *why, size_t cap)
{
	if (!v || known(a, v))
		return 0;
	unsigned type = 0;
	if (T.attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)v) !=
	    CUDA_SUCCESS)
		return 0;
	int managed = 0;
	if (T.attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)v) ==
	        CUDA_SUCCESS &&
	    managed) {
		snprintf(why, cap, "%s 0x%" PRIx64 " is managed memory (not captured)",
		         where, v);
		return -1;
	}
	if (type == CU_MEMORYTYPE_HOST) {
		snprintf(why, cap, "%s 0x%" PRIx64 " is host memory (not captured)",
		         where, v);
		return -1;
	}
	if (type != CU_MEMORYTYPE_DEVICE)
		return 0;
	int ordinal = -1;
	CUdevice dev = 0;
	if (T.ctx_device && T.ctx_device(&dev) == CUDA_SUCCESS &&
	    T.attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)v) ==
	        CUDA_SUCCESS &&
	    ordinal >= 0 && ordinal != (int)dev) {
		snprintf(why, cap,
		         "%s 0x%" PRIx64 " is memory of device %d, a peer (not captured)",
		         where, v, ordinal);
		return -1;
	}
	CUdeviceptr base = 0;
	size_t size = 0;
	if (T.range(&base, &size, (CUdeviceptr)v) != CUDA_SUCCESS || !size)
		return 0;
	if (a->bytes + size > T.max_bytes) {
		snprintf(why, cap,
		         "%s 0x%" PRIx64
		         ": its allocation 0x%llx of %zu bytes takes the copies past "
		         "--max-bytes %" PRIu64,
		         where, v, (unsigned long long)base, size, T.max_bytes);
		return -1;
	}
	unsigned char *before = malloc(size);
	if (!before) {
		snprintf(why, cap,
		         "no memory for a copy of allocation 0x%llx (%zu bytes)",
		         (unsigned long long)base, size);
		return -1;
	}
	CUresult cr = T.dtoh(before, base, size);
	if (cr != CUDA_SUCCESS) {
		free(before);
		snprintf(why, cap,
		         "cuMemcpyDtoH of allocation 0x%llx (%zu bytes) failed (%d)",
		         (unsigned long long)base, size, (int)cr);
		return -1;
	}
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 8;
		a->allocs = xrealloc(a->allocs, a->cap * sizeof(*a->allocs));
	}
	a->allocs[a->n++] = (CapAlloc){(uint64_t)base, size, before, NULL};
	a->bytes += size;
	return 1;
}

/* Copies CUDA array t to the host. */
static CUresult copy_array(const TapArray *t, unsigned char *host)
{
	CUDA_MEMCPY2D c;
	memset(&c, 0, sizeof c);
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	c.srcArray = t->arr;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = host;
	c.WidthInBytes = t->a.bytes / t->a.height;
	c.dstPitch = c.WidthInBytes;
	c.Height = t->a.height;
	return T.copy2d(&c);
}

static const char *format_name(CUarray_format f, unsigned *size)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
		return *size = 1, "u8";
	case CU_AD_FORMAT_UNSIGNED_INT16:
		return *size = 2, "u16";
	case CU_AD_FORMAT_UNSIGNED_INT32:
		return *size = 4, "u32";
	case CU_AD_FORMAT_SIGNED_INT8:
		return *size = 1, "s8";
	case CU_AD_FORMAT_SIGNED_INT16:
		return *size = 2, "s16";
	case CU_AD_FORMAT_SIGNED_INT32:
		return *size = 4, "s32";
	case CU_AD_FORMAT_HALF:
		return *size = 2, "f16";
	case CU_AD_FORMAT_FLOAT:
		return *size = 4, "f32";
	default:
		return NULL;
	}
}

/*
 * The 8 bytes at `at` as a texture or surface object over a CUDA array:
 * 0 not one, 1 recorded (the array copied), -1 refused.
 */
static int resolve_object(Pending *p, uint64_t v, uint32_t at, char *why, size_t cap)
{
	if (!v || !T.copy2d || !T.array_desc)
		return 0;
	CUDA_RESOURCE_DESC rd;
	memset(&rd, 0, sizeof rd);
	bool surface = false;
	if (!T.tex_res || T.tex_res(&rd, (CUtexObject)v) != CUDA_SUCCESS) {
		memset(&rd, 0, sizeof rd);
		if (!T.surf_res || T.surf_res(&rd, (CUsurfObject)v) != CUDA_SUCCESS)
			return 0;
		surface = true;
	}
	const char *what = surface ? "surface" : "texture";
	if (rd.resType != CU_RESOURCE_TYPE_ARRAY) {
		snprintf(
		    why, cap,
		    "the parameter at offset %u is a %s object over %s (not captured)",
		    at, what,
		    rd.resType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY ? "a mipmapped array"
		                                                   : "linear memory");
		return -1;
	}
	size_t k = 0;
	while (k < p->narrays && p->arrays[k].arr != rd.res.array.hArray)
		k++;
	if (k == p->narrays) {
		CUDA_ARRAY3D_DESCRIPTOR d;
		unsigned es = 0;
		const char *fmt = NULL;
		if (T.array_desc(&d, rd.res.array.hArray) != CUDA_SUCCESS ||
		    !(fmt = format_name(d.Format, &es)) || d.Depth > 1 ||
		    (d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4)) {
			snprintf(why, cap,
			         "the parameter at offset %u is a %s object over a CUDA "
			         "array that is "
			         "not 2-D with 1, 2 or 4 channels of a plain format (not "
			         "captured)",
			         at, what);
			return -1;
		}
		TapArray t;
		memset(&t, 0, sizeof t);
		t.arr = rd.res.array.hArray;
		t.a.width = (unsigned)d.Width;
		t.a.height = d.Height ? (unsigned)d.Height : 1;
		t.a.channels = d.NumChannels;
		snprintf(t.a.format, sizeof t.a.format, "%s", fmt);
		t.a.bytes = (uint64_t)t.a.width * t.a.height * t.a.channels * es;
		if (p->a.bytes + t.a.bytes > T.max_bytes) {
			snprintf(why, cap,
			         "the %s at offset %u: its array of %" PRIu64
			         " bytes takes the copies past --max-bytes %" PRIu64,
			         what, at, t.a.bytes, T.max_bytes);
			return -1;
		}
		t.a.before = xmalloc(t.a.bytes);
		if (copy_array(&t, t.a.before) != CUDA_SUCCESS) {
			free(t.a.before);
			snprintf(why, cap, "cannot copy the array of the %s at offset %u",
			         what, at);
			return -1;
		}
		p->a.bytes += t.a.bytes;
		p->arrays = xrealloc(p->arrays, (p->narrays + 1) * sizeof(*p->arrays));
		p->arrays[p->narrays++] = t;
	}
	CapArray *a = &p->arrays[k].a;
	if (surface) {
		a->surface = true;
	} else {
		CUDA_TEXTURE_DESC td;
		memset(&td, 0, sizeof td);
		/* CUaddress_mode: wrap 0, clamp 1, mirror 2, border 3 */
		static const char *const modes[] = {"wrap", "clamp", "mirror", "border"};
		snprintf(a->filter, sizeof a->filter, "point");
		snprintf(a->address, sizeof a->address, "clamp");
		if (T.tex_desc && T.tex_desc(&td, (CUtexObject)v) == CUDA_SUCCESS) {
			if (td.filterMode == CU_TR_FILTER_MODE_LINEAR)
				snprintf(a->filter, sizeof a->filter, "linear");
			if ((unsigned)td.addressMode[0] < 4)
				snprintf(a->address, sizeof a->address, "%s",
				         modes[td.addressMode[0]]);
			a->normalized = (td.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
			a->read_float = strcmp(a->format, "f16") &&
			                strcmp(a->format, "f32") &&
			                !(td.flags & CU_TRSF_READ_AS_INTEGER);
		}
		a->texture = true;
	}
	p->objects = xrealloc(p->objects, (p->nobjects + 1) * sizeof(*p->objects));
	p->objects[p->nobjects++] = (CapObject){at, surface, (unsigned)k};
	return 1;
}

/* Steps 3 and 4 of the essay; -1 with why[] when the launch is refused. */
static int build(const TapLaunch *l, Pending *p, char *why, size_t cap)
{
	int im = -1;
	for (size_t i = T.nmods; i-- > 0;)
		if (cap_image_has_kernel(T.mods[i].p, T.mods[i].n, l->kernel)) {
			im = (int)i;
			break;
		}
	if (im < 0) {
		snprintf(why, cap, "no module image loaded while capturing defines it");
		return -1;
	}
	p->module = (unsigned)im;
	size_t *sz = NULL;
	if (l->extra) {
		void *buf = NULL;
		for (void **e = l->extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
			if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = e[1];
			else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE)
				sz = e[1];
		}
		if (buf && sz) {
			p->block_size = (uint32_t)*sz;
			p->block = xcalloc(1, *sz + 1);
			memcpy(p->block, buf, *sz);
			p->param_source = "extra";
		}
	}
	if (!p->block) {
		Err e = ERR_INIT;
		size_t off, size;
		for (size_t i = 0;
		     T.param_info && T.param_info(l->f, i, &off, &size) == CUDA_SUCCESS;
		     i++) {
			VEC_PUSH(p->params, ((CapParam){(uint32_t)off, (uint32_t)size}));
			p->params.block_size =
			    MAX(p->params.block_size, (uint32_t)(off + size));
		}
		p->param_source = "cuFuncGetParamInfo";
		if (!p->params.n) {
			int r = cap_image_params(T.mods[im].p, T.mods[im].n, l->kernel,
			                         &p->params, &p->param_source, &e);
			if (r <= 0) {
				snprintf(
				    why, cap, "no parameter layout (%s)",
				    r < 0
				        ? err_msg(&e)
				        : "cuFuncGetParamInfo gave none, nor the image");
				err_release(&e);
				return -1;
			}
		}
		err_release(&e);
		p->block_size = p->params.block_size;
		p->block = xcalloc(1, p->block_size + 1);
		for (size_t i = 0; i < p->params.n; i++) {
			if (!l->kernel_params || !l->kernel_params[i]) {
				snprintf(why, cap, "kernelParams[%zu] is missing", i);
				return -1;
			}
			memcpy(p->block + p->params.v[i].offset, l->kernel_params[i],
			       p->params.v[i].size);
		}
	}
	char where[64];
	for (uint32_t at = 0; at + 8 <= p->block_size; at += 8) {
		snprintf(where, sizeof where, "the parameter at offset %u,", at);
		int r = resolve(&p->a, rd64(p->block + at), where, why, cap);
		if (r == 0)
			r = resolve_object(p, rd64(p->block + at), at, why, cap);
		if (r < 0)
			return -1;
	}
	for (size_t i = 0; i < p->a.n; i++) {
		const CapAlloc *al = &p->a.allocs[i];
		if (al->size > 64u << 20)
			continue;
		snprintf(where, sizeof where,
		         "a pointer inside allocation 0x%" PRIx64 ",", al->base);
		for (uint64_t k = 0; k + 8 <= al->size; k += 8) {
			uint64_t v = rd64(p->a.allocs[i].before + k);
			if (v >> 32 && !(v >> 57) &&
			    resolve(&p->a, v, where, why, cap) < 0)
				return -1;
			al = &p->a.allocs[i]; /* resolve may move the array */
		}
	}
	if (!p->a.n && !p->narrays) {
		snprintf(why, cap,
		         "none of its parameters points to device memory: no frame");
		return -1;
	}
	return 0;
}

TAP_API void d4r_tap_launch_enter(const TapLaunch *l, void **cookie)
{
	*cookie = NULL;
	if (d4r_tap_init() != 0 || !l->kernel)
		return;
	pthread_mutex_lock(&mu);
	unsigned kcount = count_launch(l->kernel);
	if (T.have_re && regexec(&T.re, l->kernel, 0, NULL, 0) != 0)
		goto out;
	T.matched++;
	if (!T.all && T.matched != T.want)
		goto out;
	char why[600] = "";
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (T.capturing && T.capturing(l->stream, &st) == CUDA_SUCCESS &&
	    st != CU_STREAM_CAPTURE_STATUS_NONE) {
		ev("refuse %s #%u: launched into a CUDA graph being captured (it does "
		   "not run now; kernels inside graphs are not captured)",
		   l->kernel, kcount);
		goto out;
	}
	CUresult cr = T.ctx_sync();
	if (cr != CUDA_SUCCESS) {
		ev("refuse %s #%u: cuCtxSynchronize before the launch failed (%d)",
		   l->kernel, kcount, (int)cr);
		goto out;
	}
	Pending *p = xcalloc(1, sizeof(*p));
	p->kcount = kcount;
	if (build(l, p, why, sizeof why) < 0) {
		ev("refuse %s #%u: %s", l->kernel, kcount, why);
		free_pending(p);
		goto out;
	}
	*cookie = p;
out:
	pthread_mutex_unlock(&mu);
}

static void write_record(const TapLaunch *l, Pending *p)
{
	char name[64];
	snprintf(name, sizeof name, "L-%u", ++T.recorded);
	snprintf(p->dir, sizeof p->dir, "%s/%s", T.spool, name);
	char mods[4200];
	snprintf(mods, sizeof mods, "%s/modules", T.spool);
	mkdir(mods, 0777);
	if (mkdir(p->dir, 0777) != 0 && errno != EEXIST) {
		ev("error cannot make '%s': %s", p->dir, strerror(errno));
		return;
	}
	Image *im = &T.mods[p->module];
	char file[64];
	snprintf(file, sizeof file, "m%04u.img", im->index);
	if (!im->written && !put(mods, file, im->p, im->n))
		return;
	im->written = true;
	for (size_t i = 0; i < p->a.n; i++) {
		char part[32];
		snprintf(part, sizeof part, "a%zu.before", i);
		if (!put(p->dir, part, p->a.allocs[i].before, p->a.allocs[i].size))
			return;
		snprintf(part, sizeof part, "a%zu.after", i);
		if (!put(p->dir, part, p->a.allocs[i].after, p->a.allocs[i].size))
			return;
	}
	for (size_t i = 0; i < p->narrays; i++) {
		char part[32];
		snprintf(part, sizeof part, "r%zu.before", i);
		if (!put(p->dir, part, p->arrays[i].a.before, p->arrays[i].a.bytes))
			return;
		snprintf(part, sizeof part, "r%zu.after", i);
		if (!put(p->dir, part, p->arrays[i].a.after, p->arrays[i].a.bytes))
			return;
	}
	if (!put(p->dir, "params.bin", p->block, p->block_size))
		return;
	StrBuf j = STRBUF_INIT;
	sb_adds(&j, "{\"kernel\": ");
	sb_add_json(&j, l->kernel);
	sb_addf(&j, ", \"launch\": %u, \"api\": ", p->kcount);
	sb_add_json(&j, l->api);
	sb_addf(&j,
	        ", \"module\": \"%s\",\n \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u]",
	        file, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
	        l->block[2]);
	sb_addf(&j, ", \"cluster\": [%u, %u, %u], \"dynamic_shared_bytes\": %u,\n",
	        l->cluster[0] ? l->cluster[0] : 1, l->cluster[1] ? l->cluster[1] : 1,
	        l->cluster[2] ? l->cluster[2] : 1, l->shared);
	sb_addf(&j, " \"param_size\": %u, \"param_source\": \"%s\", \"params\": [",
	        p->block_size, p->param_source);
	for (size_t i = 0; i < p->params.n; i++)
		sb_addf(&j, "%s{\"offset\": %u, \"size\": %u}", i ? ", " : "",
		        p->params.v[i].offset, p->params.v[i].size);
	sb_adds(&j, "],\n \"allocations\": [");
	for (size_t i = 0; i < p->a.n; i++)
		sb_addf(&j, "%s{\"base\": \"0x%" PRIx64 "\", \"size\": %" PRIu64 "}",
		        i ? ", " : "", p->a.allocs[i].base, p->a.allocs[i].size);
	if (p->narrays) {
		sb_adds(&j, "],\n \"arrays\": [");
		for (size_t i = 0; i < p->narrays; i++) {
			const CapArray *a = &p->arrays[i].a;
			sb_addf(&j,
			        "%s{\"width\": %u, \"height\": %u, \"channels\": %u, "
			        "\"format\": \"%s\", "
			        "\"texture\": %s, \"surface\": %s",
			        i ? ", " : "", a->width, a->height, a->channels,
			        a->format, a->texture ? "true" : "false",
			        a->surface ? "true" : "false");
			if (a->texture)
				sb_addf(&j,
				        ", \"filter\": \"%s\", \"address\": \"%s\", "
				        "\"normalized\": %s, "
				        "\"read_float\": %s",
				        a->filter, a->address,
				        a->normalized ? "true" : "false",
				        a->read_float ? "true" : "false");
			sb_adds(&j, "}");
		}
		sb_adds(&j, "],\n \"objects\": [");
		for (size_t i = 0; i < p->nobjects; i++)
			sb_addf(&j, "%s{\"offset\": %u, \"surface\": %s, \"array\": %u}",
			        i ? ", " : "", p->objects[i].offset,
			        p->objects[i].surface ? "true" : "false",
			        p->objects[i].array);
	}
	/* every launch attribute as given: its id and the first 32 bytes of its
	 * value, as eight 32-bit words (record.c decides what each asks) */
	sb_addf(&j, "],\n \"cooperative\": %s, \"attributes\": [",
	        l->cooperative ? "true" : "false");
	for (unsigned i = 0; l->attrs && i < l->nattrs; i++) {
		uint32_t w[8];
		memcpy(w, &l->attrs[i].value, sizeof w);
		sb_addf(&j, "%s{\"id\": %u, \"value\": [", i ? ", " : "",
		        (unsigned)l->attrs[i].id);
		for (int k = 0; k < 8; k++)
			sb_addf(&j, "%s%" PRIu32, k ? ", " : "", w[k]);
		sb_adds(&j, "]}");
	}
	sb_adds(&j, "],\n \"synchronised\": true}\n");
	bool ok = put(p->dir, "record.json", j.p, j.n);
	sb_release(&j);
	if (ok)
		ev("record %s %s", name, l->kernel);
}

TAP_API void d4r_tap_launch_exit(const TapLaunch *l, void *cookie)
{
	Pending *p = cookie;
	if (!p)
		return;
	pthread_mutex_lock(&mu);
	CUresult cr = T.ctx_sync();
	if (cr != CUDA_SUCCESS) {
		ev("refuse %s #%u: the launch failed (cuCtxSynchronize after it: %d)",
		   l->kernel, p->kcount, (int)cr);
		goto out;
	}
	for (size_t i = 0; i < p->a.n; i++) {
		CapAlloc *a = &p->a.allocs[i];
		a->after = malloc(a->size);
		if (!a->after || T.dtoh(a->after, a->base, a->size) != CUDA_SUCCESS) {
			ev("refuse %s #%u: cannot copy allocation 0x%" PRIx64
			   " after the launch",
			   l->kernel, p->kcount, a->base);
			goto out;
		}
	}
	for (size_t i = 0; i < p->narrays; i++) {
		TapArray *t = &p->arrays[i];
		t->a.after = malloc(t->a.bytes);
		if (!t->a.after || copy_array(t, t->a.after) != CUDA_SUCCESS) {
			ev("refuse %s #%u: cannot copy array %zu after the launch",
			   l->kernel, p->kcount, i);
			goto out;
		}
	}
	ev("note %s #%u: the context was synchronised before and after the launch "
	   "(work on other streams finished first)",
	   l->kernel, p->kcount);
	write_record(l, p);
out:
	free_pending(p);
	pthread_mutex_unlock(&mu);
}
