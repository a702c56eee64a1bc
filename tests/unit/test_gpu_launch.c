/*
 * test_gpu_launch.c - the whole GPU side (job child, JIT and image cache,
 * layer allocation, parameter blocks, launches, arrays, texture and surface
 * objects, read-back, timing, faults and hangs) run against a CPU stand-in
 * for the CUDA driver, installed with gpu_driver_use.
 *
 * The stand-in "compiles" PTX by keeping its text ("cubins" are the text
 * behind a header) and "runs" the kernels it knows by entry name, in C,
 * reading their raw parameter blocks the way the device would:
 *
 *   pattern(u64 out, u32 k)     out[i] = 7 i + k for every thread i
 *   copy(u64 tex, u64 surf)     the texture's array into the surface's
 *   shm(u64 out)                needs the dynamic shared memory opt-in
 *   illegal(u64 out)            a sticky CUDA_ERROR_ILLEGAL_ADDRESS
 *   spin(u64 out)               never finishes
 *
 * and a module's text can say "// mock: illegal", "// mock: spin" (any of
 * its kernels then faults or spins) or "// mock: off-by-one" (pattern's
 * byte 700 is one more).
 *
 * Figures of a real run can be replayed: "// mock: kernel MS REGS STACK
 * STORES LOADS" gives a module without probes that kernel time, registers,
 * stack (local memory), spill stores and loads (bytes, in the verbose JIT
 * log and cuFuncGetAttribute); "// mock: probed ..." the same for a module
 * with the probe layer's lines (which also holds the first marker, being
 * the module with probes added).
 *
 * A module instrumented by the probe layer (splice/probe.h) declares its
 * dump symbol, which cuModuleGetGlobal hands out; a launch of any kernel of
 * such a module, once the host has set the symbol, does what the probes
 * would: for every warp of the grid and every lane, each per-lane store
 * ("st.global.b32 [%prb..+OFF], REG;") writes a value made from the
 * register's name, the warp and the lane at OFF in the warp's area (the
 * area's size is in the "d4r-splice probe: dump" line), finite as f16
 * halves.  "// mock: probe-flip REG WARP LANE" flips bit 0 of that value
 * wherever REG is stored.
 *
 * What it cannot show is the real driver's behaviour: that is what
 * tests/gpu/ is for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/file.h"
#include "gpu/gpu.h"
#include "gpu/launch.h"
#include "gpu/probe.h"
#include "sample/run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the stand-in driver -------------------------------------------------------- */

/* MOCK-BEGIN: tests/cli/t1604-run-stand-in-driver.sh builds this part into a
 * shared library (-DD4R_MOCK_SO) that takes libcuda.so.1's place. */
#ifdef D4R_MOCK_SO
#include <cuda.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#endif

typedef struct {
	char name[96];
	uint64_t *p;                     /* its 8 bytes of "device" memory */
} MockGlobal;

typedef struct {
	char *text;
	MockGlobal globals[4];           /* the .u64 globals handed out */
	int nglobals;
} MockModule;

typedef struct {
	char name[64];
	int max_dyn;
	int illegal, spin, off_by_one;   /* "// mock: ..." markers in the module */
	MockModule *mod;                 /* kept alive while the function is used */
} MockFunc;

typedef struct {
	unsigned char *p;
	size_t w, h, ch, es;
	int surface; CUarray_format fmt;
} MockArray;

typedef struct {
	unsigned n;
	CUjit_option *opt;
	void **val;
	char *text;
	char *cubin;
} MockLink;

static CUresult sticky;           /* the context's sticky error */
static int pending_spin;          /* the next synchronise never returns */
static int last_probed;           /* the last launch ran a module with probes */
static float last_ms;             /* and its "// mock: kernel/probed" time, or 0 */
static int links, modules_loaded; /* compiles, and cubins loaded */
static MockArray *objects[64];    /* texture / surface handles - 1 */
static size_t nobjects;
#include "capture/stand-in-driver.inc" /* what the capture tests ask of it */

static const char *err_name(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS: return "CUDA_SUCCESS";
	case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
	case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
	case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
	case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
	default: return "CUDA_ERROR_UNKNOWN";
	}
}

#ifdef D4R_MOCK_SO
static CUresult m_cuInit(unsigned int f)
{
	(void)f;
	static int started;
	if (!started++)
		vm_start(); /* stand-in-driver.inc */
	return CUDA_SUCCESS;
}
#else
static CUresult m_cuInit(unsigned int f) { (void)f; return CUDA_SUCCESS; }
#endif
static CUresult m_cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
static CUresult m_cuDeviceGet(CUdevice *d, int o) { *d = o; return CUDA_SUCCESS; }
static CUresult m_cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
static CUresult m_cuDeviceGetName(char *name, int len, CUdevice d)
{
	(void)d;
	snprintf(name, (size_t)len, "Stand-in H200");
	return CUDA_SUCCESS;
}
static CUresult m_cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	*pi = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
	return CUDA_SUCCESS;
}
static CUresult m_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	(void)d;
	*c = (CUcontext)(uintptr_t)0x1000;
	return CUDA_SUCCESS;
}
static CUresult m_cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; return CUDA_SUCCESS; }
static CUresult m_cuCtxSetCurrent(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static CUresult sync_now(void)
{
	if (pending_spin)
		for (;;)
			pause();
	return sticky;
}
static CUresult m_cuCtxSynchronize(void) { return sync_now(); }
static CUresult m_cuCtxGetDevice(CUdevice *d) { *d = 0; return CUDA_SUCCESS; }
static CUresult m_cuGetErrorName(CUresult r, const char **s) { *s = err_name(r); return CUDA_SUCCESS; }
static CUresult m_cuGetErrorString(CUresult r, const char **s)
{
	*s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered" : "stand-in";
	return CUDA_SUCCESS;
}

/* With $D4R_MOCK_EVENTS, a line per compile's start and end and per
 * launch, with the process id, appended to that file (one write each, so
 * the lines of several processes do not mix). */
static void mock_event(const char *what)
{
	const char *path = getenv("D4R_MOCK_EVENTS");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	if (f) {
		setvbuf(f, NULL, _IOFBF, 256);
		fprintf(f, "%s %ld\n", what, (long)getpid());
		fclose(f);
	}
}

/* "// mock: jit-meet N": a compile waits (10 s at most) until the events
 * file shows N compiles started, so JITs that run side by side all end
 * after every one has begun, and JITs one after the other do not. */
static void jit_meet(const char *text)
{
	const char *m = strstr(text, "// mock: jit-meet ");
	const char *path = getenv("D4R_MOCK_EVENTS");
	if (!m || !path)
		return;
	int want = atoi(m + 18);
	for (int tries = 0; tries < 1000; tries++) {
		FILE *f = fopen(path, "r");
		char line[128];
		int begun = 0;
		while (f && fgets(line, sizeof line, f))
			begun += !strncmp(line, "jit-begin ", 10);
		if (f)
			fclose(f);
		if (begun >= want)
			return;
		usleep(10000);
	}
}

/* "Compiles": PTX with "bogus" in it fails with a ptxas-style log. */
/* The "// mock: kernel ..." or "// mock: probed ..." figures of a module's
 * text (the second when it has probes); 0 when it has no such marker. */
typedef struct {
	float ms;
	int regs, stack, stores, loads;
} MockFigures;
static int mock_figures(const char *text, MockFigures *f)
{
	const char *want = strstr(text, "d4r-splice probe") ? "// mock: probed " : "// mock: kernel ";
	const char *m = strstr(text, want);
	memset(f, 0, sizeof *f);
	return m && sscanf(m + strlen(want), "%f %d %d %d %d", &f->ms, &f->regs, &f->stack,
	                   &f->stores, &f->loads) == 5;
}

static CUresult compile(const char *text, unsigned n, CUjit_option *opt, void **val)
{
	mock_event("jit-begin");
	jit_meet(text);
	mock_event("jit-end");
	const char *bad = strstr(text, "bogus");
	int verbose = 0;
	for (unsigned i = 0; i < n; i++)
		if (opt[i] == CU_JIT_LOG_VERBOSE)
			verbose = val[i] != NULL;
	for (unsigned i = 0; i < n; i++) {
		if (opt[i] == CU_JIT_ERROR_LOG_BUFFER && bad) {
			unsigned line = 1;
			for (const char *p = text; p < bad; p++)
				line += *p == '\n';
			snprintf(val[i], 256,
			         "ptxas application ptx input, line %u; error   : Not a name of any "
			         "known instruction: 'bogus'\nptxas fatal   : Ptx assembly aborted due to "
			         "errors\n", line);
		}
		if (opt[i] == CU_JIT_INFO_LOG_BUFFER && !bad) {
			/* verbose: a block for the first entry, which spills with
			 * "// mock: spill" */
			const char *en = strstr(text, ".entry ");
			int nl = 0, sp = strstr(text, "// mock: spill") != NULL;
			MockFigures fg, dflt = {0, 32, sp ? 64 : 0, sp ? 64 : 0, sp ? 60 : 0};
			if (!mock_figures(text, &fg))
				fg = dflt;
			while (en && en[7 + nl] && en[7 + nl] != '(' && nl < 64)
				nl++;
			if (verbose && en)
				snprintf(val[i], 512,
				         "ptxas info    : stand-in compile\n"
				         "ptxas info    : Compiling entry function '%.*s' for 'sm_90'\n"
				         "ptxas info    : Function properties for %.*s\n"
				         "    %d bytes stack frame, %d bytes spill stores, %d bytes spill "
				         "loads\n"
				         "ptxas info    : Used %d registers, 0 bytes smem",
				         nl, en + 7, nl, en + 7, fg.stack, fg.stores, fg.loads, fg.regs);
			else
				snprintf(val[i], 64, "ptxas info    : stand-in compile");
		}
		if (opt[i] == CU_JIT_WALL_TIME) {
			float ms = 1.5f;
			memcpy(&val[i], &ms, sizeof ms);
		}
	}
	return bad ? CUDA_ERROR_INVALID_PTX : CUDA_SUCCESS;
}

static CUresult new_module(CUmodule *m, const char *text)
{
	MockModule *mm = calloc(1, sizeof *mm);
	mm->text = strdup(text);
	*m = (CUmodule)mm;
	return CUDA_SUCCESS;
}

static CUresult m_cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n,
                                     CUjit_option *opt, void **val)
{
	CUresult r = compile(image, n, opt, val);
	return r ? r : new_module(m, image);
}
static CUresult m_cuModuleLoadData(CUmodule *m, const void *image)
{
	if (strncmp(image, "MOCKCUBIN\n", 10))
		return CUDA_ERROR_INVALID_VALUE;
	modules_loaded++;
	return new_module(m, (const char *)image + 10);
}
static CUresult m_cuModuleUnload(CUmodule m)
{
	MockModule *mm = (MockModule *)m;
	for (int i = 0; i < mm->nglobals; i++)
		free(mm->globals[i].p);
	free(mm->text);
	free(m);
	return CUDA_SUCCESS;
}
/* A `.global ... .u64 NAME;` of the module's text: 8 bytes of its own. */
static CUresult m_cuModuleGetGlobal(CUdeviceptr *dp, size_t *bytes, CUmodule m, const char *name)
{
	MockModule *mm = (MockModule *)m;
	char want[128];
	snprintf(want, sizeof want, ".u64 %s;", name);
	const char *at = strstr(mm->text, want);
	if (!at)
		return CUDA_ERROR_NOT_FOUND;
	const char *bol = at;
	while (bol > mm->text && bol[-1] != '\n')
		bol--;
	if (!strstr(bol, ".global") || strstr(bol, ".global") > at)
		return CUDA_ERROR_NOT_FOUND;
	for (int i = 0; i < mm->nglobals; i++)
		if (!strcmp(mm->globals[i].name, name)) {
			*dp = (CUdeviceptr)(uintptr_t)mm->globals[i].p;
			*bytes = 8;
			return CUDA_SUCCESS;
		}
	if (mm->nglobals == 4)
		return CUDA_ERROR_INVALID_VALUE;
	MockGlobal *g = &mm->globals[mm->nglobals++];
	snprintf(g->name, sizeof g->name, "%s", name);
	g->p = calloc(1, 8);
	*dp = (CUdeviceptr)(uintptr_t)g->p;
	if (bytes)
		*bytes = 8;
	return CUDA_SUCCESS;
}
static CUresult m_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	char want[80];
	snprintf(want, sizeof want, ".entry %s(", name);
	if (!strstr(((MockModule *)m)->text, want))
		return CUDA_ERROR_NOT_FOUND;
	MockFunc *mf = calloc(1, sizeof *mf);   /* kept: the stand-in never frees them */
	snprintf(mf->name, sizeof mf->name, "%s", name);
	mf->max_dyn = 48 * 1024;
	const char *text = ((MockModule *)m)->text;
	mf->illegal = strstr(text, "// mock: illegal") != NULL;
	mf->spin = strstr(text, "// mock: spin") != NULL;
	mf->off_by_one = strstr(text, "// mock: off-by-one") != NULL;
	mf->mod = (MockModule *)m;
	*f = (CUfunction)mf;
	return CUDA_SUCCESS;
}
static CUresult m_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
		((MockFunc *)f)->max_dyn = v;
	return CUDA_SUCCESS;
}
/* Registers: 40 with probes, else 32; local memory 64 bytes with
 * "// mock: spill"; shared memory 0; or the "// mock: kernel/probed"
 * figures. */
static CUresult m_cuFuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction f)
{
	const char *text = ((MockFunc *)f)->mod->text;
	MockFigures fg;
	if (mock_figures(text, &fg) &&
	    (a == CU_FUNC_ATTRIBUTE_NUM_REGS || a == CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)) {
		*pi = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? fg.regs : fg.stack;
		return CUDA_SUCCESS;
	}
	*pi = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? (strstr(text, "d4r-splice probe") ? 40 : 32)
	      : a == CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES ? (strstr(text, "// mock: spill") ? 64 : 0)
	      : a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024
	                                                   : 0;
	return CUDA_SUCCESS;
}
static CUresult m_cuLinkCreate(unsigned int n, CUjit_option *opt, void **val, CUlinkState *s)
{
	MockLink *l = calloc(1, sizeof *l);
	l->n = n;
	l->opt = opt;
	l->val = val;
	*s = (CUlinkState)l;
	return CUDA_SUCCESS;
}
static CUresult m_cuLinkAddData(CUlinkState s, CUjitInputType type, void *data, size_t size,
                                const char *name, unsigned int n, CUjit_option *opt,
                                void **val)
{
	(void)name, (void)n, (void)opt, (void)val;
	MockLink *l = (MockLink *)s;
	if (type != CU_JIT_INPUT_PTX || ((char *)data)[size - 1] != 0)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = compile(data, l->n, l->opt, l->val);
	if (r)
		return r;
	l->text = strdup(data);
	return CUDA_SUCCESS;
}
static CUresult m_cuLinkComplete(CUlinkState s, void **cubin, size_t *size)
{
	MockLink *l = (MockLink *)s;
	links++;
	size_t n = strlen(l->text);
	l->cubin = malloc(n + 11);
	memcpy(l->cubin, "MOCKCUBIN\n", 10);
	memcpy(l->cubin + 10, l->text, n + 1);
	*cubin = l->cubin;
	*size = n + 11;
	return CUDA_SUCCESS;
}
static CUresult m_cuLinkDestroy(CUlinkState s)
{
	MockLink *l = (MockLink *)s;
	free(l->text);
	free(l->cubin);
	free(l);
	return CUDA_SUCCESS;
}
#ifdef D4R_MOCK_SO
/* Device memory of the shared stand-in: the stand-in driver's own heap
 * below its 8 GiB (stand-in-driver.inc), as the H200's driver has it, not
 * the process's heap (under a sanitizer that sits at the same fixed
 * addresses in every process, so a layer captured in one process could not
 * be given its recorded addresses in another). */
static CUresult m_cuMemAlloc(CUdeviceptr *p, size_t n)
{
	void *q = vm_alloc(n ? n : 1); /* stand-in-driver.inc */
	if (!q)
		return CUDA_ERROR_OUT_OF_MEMORY;
	vm_mapped(q);
	track(*p = (CUdeviceptr)(uintptr_t)q, n ? n : 1);
	return CUDA_SUCCESS;
}
static CUresult m_cuMemFree(CUdeviceptr p)
{
	for (size_t i = 0; i < 256; i++)
		if (allocs[i].p == p) {
			if (!vm_in_heap(p)) /* the heap's pages are shared: never given back */
				munmap((void *)(uintptr_t)p, allocs[i].n);
			break;
		}
	track(p, 0);
	return CUDA_SUCCESS;
}
#else
static CUresult m_cuMemAlloc(CUdeviceptr *p, size_t n)
{
	track(*p = (CUdeviceptr)(uintptr_t)calloc(1, n), n);
	return CUDA_SUCCESS;
}
static CUresult m_cuMemFree(CUdeviceptr p) { track(p, 0); free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
#endif
static CUresult m_cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
	memcpy((void *)(uintptr_t)d, s, n);
	return sticky;
}
static CUresult m_cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
	memcpy(d, (void *)(uintptr_t)s, n);
	return sticky;
}
static CUresult m_cuMemsetD8(CUdeviceptr d, unsigned char c, size_t n)
{
	memset((void *)(uintptr_t)d, c, n);
	return sticky;
}
/* $D4R_MOCK_FREE_KB of free memory (default 8 GB) of 80 GB. */
static CUresult m_cuMemGetInfo(size_t *free_b, size_t *total)
{
	const char *kb = getenv("D4R_MOCK_FREE_KB");
	*free_b = (size_t)(kb && *kb ? strtoull(kb, NULL, 10) : 8388608) << 10;
	*total = (size_t)81920 << 20;
	return CUDA_SUCCESS;
}
static size_t format_bytes(CUarray_format f)
{
	switch (f) {
	case CU_AD_FORMAT_UNSIGNED_INT8:
	case CU_AD_FORMAT_SIGNED_INT8: return 1;
	case CU_AD_FORMAT_UNSIGNED_INT16:
	case CU_AD_FORMAT_SIGNED_INT16:
	case CU_AD_FORMAT_HALF: return 2;
	default: return 4;
	}
}
static CUresult m_cuArray3DCreate(CUarray *a, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
	if (d->Depth != 0 || !(d->NumChannels == 1 || d->NumChannels == 2 || d->NumChannels == 4))
		return CUDA_ERROR_INVALID_VALUE;
	MockArray *ma = calloc(1, sizeof *ma);
	ma->w = d->Width, ma->h = d->Height, ma->ch = d->NumChannels;
	ma->es = format_bytes(d->Format), ma->fmt = d->Format;
	ma->surface = (d->Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0;
	ma->p = calloc(1, ma->w * ma->h * ma->ch * ma->es);
	*a = (CUarray)ma;
	return CUDA_SUCCESS;
}
static CUresult m_cuArrayDestroy(CUarray a)
{
	free(((MockArray *)a)->p);
	free(a);
	return CUDA_SUCCESS;
}
static CUresult m_cuMemcpy2D(const CUDA_MEMCPY2D *c)
{
	if (c->srcMemoryType == CU_MEMORYTYPE_HOST && c->dstMemoryType == CU_MEMORYTYPE_ARRAY) {
		MockArray *a = (MockArray *)c->dstArray;
		if (c->WidthInBytes != a->w * a->ch * a->es || c->Height != a->h)
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t y = 0; y < c->Height; y++)
			memcpy(a->p + y * c->WidthInBytes, (const char *)c->srcHost + y * c->srcPitch,
			       c->WidthInBytes);
		return sticky;
	}
	if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY && c->dstMemoryType == CU_MEMORYTYPE_HOST) {
		MockArray *a = (MockArray *)c->srcArray;
		if (c->WidthInBytes != a->w * a->ch * a->es || c->Height != a->h)
			return CUDA_ERROR_INVALID_VALUE;
		for (size_t y = 0; y < c->Height; y++)
			memcpy((char *)c->dstHost + y * c->dstPitch, a->p + y * c->WidthInBytes,
			       c->WidthInBytes);
		return sticky;
	}
	return CUDA_ERROR_INVALID_VALUE;
}
static CUresult m_cuTexObjectCreate(CUtexObject *t, const CUDA_RESOURCE_DESC *r,
                                    const CUDA_TEXTURE_DESC *td, const CUDA_RESOURCE_VIEW_DESC *v)
{
	(void)td, (void)v;
	if (r->resType != CU_RESOURCE_TYPE_ARRAY)
		return CUDA_ERROR_INVALID_VALUE;
	object_is_surface[nobjects] = 0, object_tex[nobjects] = *td;
	objects[nobjects++] = (MockArray *)r->res.array.hArray;
	*t = nobjects;
	return CUDA_SUCCESS;
}
static CUresult m_cuTexObjectDestroy(CUtexObject t) { (void)t; return CUDA_SUCCESS; }
static CUresult m_cuSurfObjectCreate(CUsurfObject *s, const CUDA_RESOURCE_DESC *r)
{
	MockArray *a = (MockArray *)r->res.array.hArray;
	if (!a->surface)
		return CUDA_ERROR_INVALID_VALUE;
	object_is_surface[nobjects] = 1, objects[nobjects++] = a;
	*s = nobjects;
	return CUDA_SUCCESS;
}
static CUresult m_cuSurfObjectDestroy(CUsurfObject s) { (void)s; return CUDA_SUCCESS; }

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The value the stand-in's probes store for register `reg` in warp w,
 * lane l: a hash, with bit 14 of each half clear (a finite f16). */
static uint32_t probe_value(const char *reg, size_t n, uint64_t w, unsigned l)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)reg[i]) * 16777619u;
	h ^= (uint32_t)w * 0x9e3779b1u ^ l * 0x85ebca77u;
	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	return h & ~0x40004000u;
}

/* The "clock" of the profile's reads: the read's line in the module
 * times 2 + warp % 3 (the register's `cvt` names the line), and the
 * "globaltimer" 1000 x the warp; 0 for any other guarded store.  *line
 * gets the line (0: none), *timer whether it is the globaltimer. */
static void clock_of(const char *text, const char *reg, uint64_t *line, int *timer)
{
	char want[96];
	const char *at;
	*line = 0;
	*timer = 0;
	snprintf(want, sizeof want, "mov.u64 \t%s, %%globaltimer;", reg);
	if (strstr(text, want)) {
		*timer = 1;
		return;
	}
	snprintf(want, sizeof want, "cvt.u32.u64 \t%s,", reg);
	if (!(at = strstr(text, want)))
		return;
	*line = 1;
	for (const char *p = text; p < at; p++)
		*line += *p == '\n';
}

/* What the probes in mf's body would store in a launch of the grid. */
static void probe_stores(const MockFunc *mf, uint64_t warps)
{
	const MockModule *mm = mf->mod;
	const char *text = mm->text;
	char ent[96];
	snprintf(ent, sizeof ent, ".entry %s(", mf->name);
	const char *body = strstr(text, ent);
	if (!body)
		return;
	const char *body_end = strstr(body + 1, ".entry ");
	if (!body_end)
		body_end = body + strlen(body);
	for (int g = 0; g < mm->nglobals; g++) {
		unsigned char *dump = (unsigned char *)(uintptr_t)*mm->globals[g].p;
		char want[160];
		snprintf(want, sizeof want, "// d4r-splice probe: dump %s,", mm->globals[g].name);
		const char *hdr = strstr(text, want);
		const char *bpw = hdr ? strstr(hdr, " records, ") : NULL;
		if (!dump || !bpw)
			continue;
		unsigned long long wbytes = strtoull(bpw + 10, NULL, 10);
		char flip[64] = "";
		unsigned long long fw = 0;
		unsigned fl = 0;
		const char *fp = strstr(text, "// mock: probe-flip ");
		if (fp)
			sscanf(fp + 20, "%63s %llu %u", flip, &fw, &fl);
		for (const char *p = body; (p = strstr(p, "st.global.b")) != NULL && p < body_end;
		     p++) {
			if (p[-1] != '\t' && p[-1] != ' ')
				continue;
			unsigned bits;
			unsigned long long off;
			char reg[64];
			int used = 0;
			if (sscanf(p, "st.global.b%u \t[%%prb%*[^+]+%llu], %63[^;];%n", &bits, &off, reg,
			           &used) != 3 || !used || (bits != 32 && bits != 64))
				continue;
			const char *bol = p;
			while (bol > text && bol[-1] != '\n')
				bol--;
			if (memchr(bol, '@', (size_t)(p - bol))) {   /* guarded: lane 0's, of a read */
				uint64_t line;
				int timer;
				clock_of(text, reg, &line, &timer);
				for (uint64_t w = 0; w < warps; w++) {
					uint64_t v = timer ? 1000 * w : line * (2 + w % 3);
					memcpy(dump + w * wbytes + off, &v, bits / 8);
				}
				continue;
			}
			size_t rn = strlen(reg);
			for (uint64_t w = 0; w < warps; w++)
				for (unsigned l = 0; l < 32; l++) {
					uint32_t v = probe_value(reg, rn, w, l);
					if (*flip && !strcmp(flip, reg) && w == fw && l == fl)
						v ^= 1;
					unsigned char *at = dump + w * wbytes + off + l * (bits / 8);
					memcpy(at, &v, 4);
					if (bits == 64) {
						uint32_t hi = probe_value(reg, rn, w, l + 32);
						memcpy(at + 4, &hi, 4);
					}
				}
		}
	}
}

#include "mock_replay.c" /* replay_stores: the stand-in of a replay entry */

static CUresult m_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                 CUstream s, void **kp, void **extra)
{
	(void)s, (void)kp;
	MockFunc *mf = (MockFunc *)f;
	mock_event("launch");
	if (sticky)
		return sticky;
	if ((int)smem > mf->max_dyn)
		return CUDA_ERROR_INVALID_VALUE;
	const unsigned char *params = NULL;
	size_t size = 0;
	for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			params = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			size = *(size_t *)extra[i + 1];
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (mf->illegal || mf->spin) {
		sticky = mf->illegal ? CUDA_ERROR_ILLEGAL_ADDRESS : sticky;
		pending_spin = mf->spin;
	} else if (!strcmp(mf->name, "pattern")) {
		if (size < 12)   /* the driver refuses a block smaller than the kernel's */
			return CUDA_ERROR_INVALID_VALUE;
		unsigned char *out = (unsigned char *)(uintptr_t)rd64(params);
		uint32_t k;
		memcpy(&k, params + 8, 4);
		for (unsigned i = 0; i < gx * bx; i++)
			out[i] = (unsigned char)(7 * i + k + (mf->off_by_one && i == 700));
	} else if (!strcmp(mf->name, "indirect") && indirect(params, size, gx * bx) < 0) {
		return CUDA_ERROR_INVALID_VALUE;
	} else if (!strcmp(mf->name, "copy")) {
		if (size < 16)
			return CUDA_ERROR_INVALID_VALUE;
		MockArray *t = objects[rd64(params) - 1], *o = objects[rd64(params + 8) - 1];
		memcpy(o->p, t->p, t->w * t->h * t->ch * t->es);
	} else if (!strcmp(mf->name, "shm")) {
		unsigned *out = (unsigned *)(uintptr_t)rd64(params);
		for (unsigned i = 0; i < bx; i++)
			out[i] += i;
	} else if (!strcmp(mf->name, "illegal")) {
		sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
	} else if (!strcmp(mf->name, "spin")) {
		pending_spin = 1;
	}
	if (!sticky && !pending_spin)
		mock_writes(mf, params, size);
	if (!sticky && !pending_spin && !strncmp(mf->name, "__d4r_replay_", 13))
		replay_stores(mf, (uint64_t)gx * gy * gz * ((bx * by * bz + 31) / 32));
	else if (!sticky && !pending_spin)
		probe_stores(mf, (uint64_t)gx * gy * gz * ((bx * by * bz + 31) / 32));
	last_probed = strstr(mf->mod->text, "d4r-splice probe") != NULL;
	MockFigures fg;
	last_ms = mock_figures(mf->mod->text, &fg) ? fg.ms : 0;
	return CUDA_SUCCESS;
}
static CUresult m_cuStreamCreate(CUstream *s, unsigned int f)
{
	(void)f;
	*s = (CUstream)(uintptr_t)0x2000;
	return CUDA_SUCCESS;
}
static CUresult m_cuStreamDestroy(CUstream s) { (void)s; return CUDA_SUCCESS; }
static CUresult m_cuStreamSynchronize(CUstream s) { (void)s; return sync_now(); }
static CUresult m_cuEventCreate(CUevent *e, unsigned int f)
{
	(void)f;
	*e = (CUevent)(uintptr_t)0x3000;
	return CUDA_SUCCESS;
}
static CUresult m_cuEventRecord(CUevent e, CUstream s) { (void)e, (void)s; return sticky; }
static CUresult m_cuEventSynchronize(CUevent e) { (void)e; return sync_now(); }
/* 0.25 ms, and 4% more after a launch of a module with probes; or the
 * last launch's "// mock: kernel/probed" time. */
static CUresult m_cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	(void)a, (void)b;
	*ms = last_ms > 0 ? last_ms : last_probed ? 0.26f : 0.25f;
	return sticky;
}
static CUresult m_cuEventDestroy(CUevent e) { (void)e; return CUDA_SUCCESS; }

#ifdef D4R_MOCK_SO
/* The exported names; cuda.h maps some to versioned ones (cuMemAlloc ->
 * cuMemAlloc_v2), which is what the program looks up. */
#define EXPORT(ret, name, params, args) \
	__attribute__((visibility("default"))) ret CUDAAPI name params { return m_##name args; }
EXPORT(CUresult, cuInit, (unsigned int f), (f))
EXPORT(CUresult, cuDriverGetVersion, (int *v), (v))
EXPORT(CUresult, cuDeviceGet, (CUdevice *d, int o), (d, o))
EXPORT(CUresult, cuDeviceGetCount, (int *n), (n))
EXPORT(CUresult, cuDeviceGetName, (char *n, int l, CUdevice d), (n, l, d))
EXPORT(CUresult, cuDeviceGetAttribute, (int *pi, CUdevice_attribute a, CUdevice d), (pi, a, d))
EXPORT(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *c, CUdevice d), (c, d))
EXPORT(CUresult, cuDevicePrimaryCtxRelease, (CUdevice d), (d))
EXPORT(CUresult, cuCtxSetCurrent, (CUcontext c), (c))
EXPORT(CUresult, cuCtxSynchronize, (void), ())
EXPORT(CUresult, cuCtxGetDevice, (CUdevice *d), (d))
EXPORT(CUresult, cuGetErrorName, (CUresult r, const char **s), (r, s))
EXPORT(CUresult, cuGetErrorString, (CUresult r, const char **s), (r, s))
EXPORT(CUresult, cuModuleLoadDataEx, (CUmodule *m, const void *i, unsigned int n, CUjit_option *o, void **v), (m, i, n, o, v))
EXPORT(CUresult, cuModuleLoadData, (CUmodule *m, const void *i), (m, i))
EXPORT(CUresult, cuModuleUnload, (CUmodule m), (m))
EXPORT(CUresult, cuModuleGetFunction, (CUfunction *f, CUmodule m, const char *n), (f, m, n))
EXPORT(CUresult, cuModuleGetGlobal, (CUdeviceptr *d, size_t *b, CUmodule m, const char *n), (d, b, m, n))
EXPORT(CUresult, cuMemGetInfo, (size_t *f, size_t *t), (f, t))
EXPORT(CUresult, cuFuncSetAttribute, (CUfunction f, CUfunction_attribute a, int v), (f, a, v))
EXPORT(CUresult, cuFuncGetAttribute, (int *pi, CUfunction_attribute a, CUfunction f), (pi, a, f))
EXPORT(CUresult, cuLinkCreate, (unsigned int n, CUjit_option *o, void **v, CUlinkState *s), (n, o, v, s))
EXPORT(CUresult, cuLinkAddData, (CUlinkState s, CUjitInputType t, void *d, size_t z, const char *nm, unsigned int n, CUjit_option *o, void **v), (s, t, d, z, nm, n, o, v))
EXPORT(CUresult, cuLinkComplete, (CUlinkState s, void **c, size_t *z), (s, c, z))
EXPORT(CUresult, cuLinkDestroy, (CUlinkState s), (s))
EXPORT(CUresult, cuMemAlloc, (CUdeviceptr *p, size_t n), (p, n))
EXPORT(CUresult, cuMemFree, (CUdeviceptr p), (p))
EXPORT(CUresult, cuMemcpyHtoD, (CUdeviceptr d, const void *s, size_t n), (d, s, n))
EXPORT(CUresult, cuMemcpyDtoH, (void *d, CUdeviceptr s, size_t n), (d, s, n))
EXPORT(CUresult, cuMemsetD8, (CUdeviceptr d, unsigned char c, size_t n), (d, c, n))
EXPORT(CUresult, cuArray3DCreate, (CUarray *a, const CUDA_ARRAY3D_DESCRIPTOR *d), (a, d))
EXPORT(CUresult, cuArrayDestroy, (CUarray a), (a))
EXPORT(CUresult, cuMemcpy2D, (const CUDA_MEMCPY2D *c), (c))
EXPORT(CUresult, cuTexObjectCreate, (CUtexObject *t, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *d, const CUDA_RESOURCE_VIEW_DESC *v), (t, r, d, v))
EXPORT(CUresult, cuTexObjectDestroy, (CUtexObject t), (t))
EXPORT(CUresult, cuSurfObjectCreate, (CUsurfObject *s, const CUDA_RESOURCE_DESC *r), (s, r))
EXPORT(CUresult, cuSurfObjectDestroy, (CUsurfObject s), (s))
EXPORT(CUresult, cuLaunchKernel, (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sm, CUstream st, void **kp, void **ex), (f, gx, gy, gz, bx, by, bz, sm, st, kp, ex))
EXPORT(CUresult, cuStreamCreate, (CUstream *s, unsigned int f), (s, f))
EXPORT(CUresult, cuStreamDestroy, (CUstream s), (s))
EXPORT(CUresult, cuStreamSynchronize, (CUstream s), (s))
EXPORT(CUresult, cuEventCreate, (CUevent *e, unsigned int f), (e, f))
EXPORT(CUresult, cuEventRecord, (CUevent e, CUstream s), (e, s))
EXPORT(CUresult, cuEventSynchronize, (CUevent e), (e))
EXPORT(CUresult, cuEventElapsedTime, (float *ms, CUevent a, CUevent b), (ms, a, b))
EXPORT(CUresult, cuEventDestroy, (CUevent e), (e))
#endif
/* MOCK-END */

static void install(void)
{
	GpuDriver d;
	memset(&d, 0, sizeof d);
#define SET(name) d.name = m_##name;
	SET(cuInit) SET(cuDriverGetVersion) SET(cuDeviceGet) SET(cuDeviceGetCount)
	SET(cuDeviceGetName) SET(cuDeviceGetAttribute) SET(cuDevicePrimaryCtxRetain)
	SET(cuCtxSetCurrent) SET(cuCtxSynchronize) SET(cuCtxGetDevice) SET(cuGetErrorName)
	SET(cuGetErrorString) SET(cuModuleLoadDataEx) SET(cuModuleLoadData) SET(cuModuleUnload)
	SET(cuModuleGetFunction) SET(cuFuncSetAttribute) SET(cuFuncGetAttribute)
	SET(cuLinkComplete) SET(cuLinkDestroy) SET(cuArrayDestroy) SET(cuTexObjectCreate)
	SET(cuTexObjectDestroy) SET(cuSurfObjectCreate) SET(cuSurfObjectDestroy)
	SET(cuLaunchKernel) SET(cuStreamCreate) SET(cuStreamSynchronize) SET(cuEventCreate)
	SET(cuEventRecord) SET(cuEventSynchronize)
#undef SET
	/* The names cuda.h maps to versioned entry points. */
	d.cuDevicePrimaryCtxRelease = m_cuDevicePrimaryCtxRelease;
	d.cuLinkCreate = m_cuLinkCreate;
	d.cuLinkAddData = m_cuLinkAddData;
	d.cuMemAlloc = m_cuMemAlloc;
	d.cuMemFree = m_cuMemFree;
	d.cuMemcpyHtoD = m_cuMemcpyHtoD;
	d.cuMemcpyDtoH = m_cuMemcpyDtoH;
	d.cuMemsetD8 = m_cuMemsetD8;
	d.cuModuleGetGlobal = m_cuModuleGetGlobal;
	d.cuMemGetInfo = m_cuMemGetInfo;
	d.cuArray3DCreate = m_cuArray3DCreate;
	d.cuMemcpy2D = m_cuMemcpy2D;
	d.cuStreamDestroy = m_cuStreamDestroy;
	d.cuEventElapsedTime = m_cuEventElapsedTime;
	d.cuEventDestroy = m_cuEventDestroy;
	d.driver_version = 13000;
	gpu_driver_use(&d);
}

/* ---- fixtures ------------------------------------------------------------------- */

static char cache_dir[] = "/tmp/d4r-launch-XXXXXX";

static const char pattern_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry pattern(.param .u64 out, .param .u32 k)\n{\n\tret;\n}\n";

static const char layer_json[] =
	"{\"layer\": \"t\", \"module\": \"t.ptx\", \"entry\": \"pattern\","
	" \"buffers\": {\"out\": {\"size\": 1024, \"init\": {\"kind\": \"fill\", \"byte\": 255}}},"
	" \"launches\": [{\"entry\": \"pattern\", \"grid\": [4,1,1], \"block\": [256,1,1],"
	"  \"params\": {\"size\": 12, \"fields\": ["
	"   {\"offset\": 0, \"kind\": \"buffer\", \"buffer\": \"out\"},"
	"   {\"offset\": 8, \"kind\": \"u32\", \"value\": 90}]}}],"
	" \"frame\": [{\"name\": \"out\", \"buffer\": \"out\", \"offset\": 512, \"size\": 512}]}";

static int setup(void **state)
{
	(void)state;
	install();
	gpu_job_body = gpu_job_child;
	assert_non_null(mkdtemp(cache_dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void reset_mock(void)
{
	sticky = CUDA_SUCCESS;
	pending_spin = 0;
	last_ms = 0;
	links = modules_loaded = 0;
	nobjects = 0;
}

static GpuResult run_job(const char *json, const GpuModuleSrc *srcs, size_t n, unsigned runs,
                         bool no_cache, double timeout)
{
	reset_mock();
	Manifest m;
	Err e = ERR_INIT;
	if (mf_parse("t/layer.json", json, strlen(json), &m, &e))
		fail_msg("%s", err_msg(&e));
	m.corpus = xstrdup(cache_dir);
	GpuJob job = {.manifest = &m, .modules = srcs, .nmodules = n, .runs = runs,
	              .warmup = 2, .timeout_s = timeout, .jit_limit_s = 10,
	              .no_cache = no_cache, .cache_dir = cache_dir};
	GpuResult res;
	assert_int_equal(gpu_job_run(&job, &res, &e), 0);
	mf_release(&m);
	err_release(&e);
	return res;
}

/* ---- tests ----------------------------------------------------------------------- */

static void test_gpu_launch__frame_timing_and_cache(void **state)
{
	(void)state;
	GpuModuleSrc src[2] = {{.name = "a", .ptx = pattern_ptx, .ptx_len = strlen(pattern_ptx)},
	                       {.name = "b", .ptx = pattern_ptx, .ptx_len = strlen(pattern_ptx)}};
	GpuResult r = run_job(layer_json, src, 2, 7, false, 5);
	if (r.status)
		fail_msg("%s", r.message);
	assert_string_equal(r.device, "Stand-in H200");
	assert_int_equal(r.cc_major, 9);
	for (int k = 0; k < 2; k++) {
		const GpuModuleResult *mr = &r.mods[k];
		assert_int_equal(mr->status, GPU_OK);
		assert_int_equal(mr->frame_len, 512);
		for (unsigned i = 0; i < 512; i++)   /* the frame is bytes 512.. of the buffer */
			assert_int_equal(mr->frame[i], (unsigned char)(7 * (i + 512) + 90));
		assert_int_equal(mr->times.n, 7);
		assert_true(mr->times.median_ms == 0.25f);
		assert_true(mr->repeat_checked && mr->repeatable);
	}
	/* The first compile was stored; the second module (same PTX) came from it. */
	assert_false(r.mods[0].jit_cached);
	assert_true(r.mods[0].jit_driver_ms == 1.5f);
	assert_string_equal(r.mods[0].jit_log, "ptxas info    : stand-in compile");
	assert_true(r.mods[1].jit_cached);
	gpu_result_release(&r);

	/* A second job: everything from the cache. */
	r = run_job(layer_json, src, 1, 0, false, 5);
	assert_int_equal(r.status, GPU_OK);
	assert_true(r.mods[0].jit_cached);
	assert_string_equal(r.mods[0].jit_log, "ptxas info    : stand-in compile");
	assert_int_equal(r.mods[0].times.n, 0);
	gpu_result_release(&r);

	/* --no-cache: cuModuleLoadDataEx, nothing read. */
	r = run_job(layer_json, src, 1, 0, true, 5);
	assert_int_equal(r.status, GPU_OK);
	assert_false(r.mods[0].jit_cached);
	gpu_result_release(&r);
}

static void note(void *ctx, unsigned line, StrBuf *out)
{
	sb_addf(out, "%s line %u", (const char *)ctx, line + 100);
}

static void test_gpu_launch__jit_error_shows_the_line(void **state)
{
	(void)state;
	const char bad[] = ".version 8.0\n.target sm_90\n"
	                   ".visible .entry pattern(.param .u64 out, .param .u32 k)\n{\n"
	                   "\tbogus.op %r1;\n\tret;\n}\n";
	for (int nc = 0; nc < 2; nc++) {
		GpuModuleSrc src[2] = {
			{.name = "spliced.ptx", .ptx = bad, .ptx_len = strlen(bad), .line_note = note,
			 .line_ctx = (void *)"template ptx/t.ptx"},
			{.name = "good", .ptx = pattern_ptx, .ptx_len = strlen(pattern_ptx)}};
		GpuResult r = run_job(layer_json, src, 2, 3, nc, 5);
		assert_int_equal(r.status, GPU_ERROR);
		const char *msg = r.mods[0].message;
		assert_non_null(strstr(msg, "JIT of 'spliced.ptx' failed: "));
		assert_non_null(strstr(msg, "CUDA_ERROR_INVALID_PTX"));
		assert_non_null(strstr(msg, "ptxas application ptx input, line 5; error"));
		assert_non_null(strstr(msg, "\n    5 | \tbogus.op %r1;\n      (template ptx/t.ptx line 105)"));
		/* A JIT error is no fault: the other module runs and is timed. */
		assert_int_equal(r.mods[1].status, GPU_OK);
		assert_int_equal(r.mods[1].times.n, 3);
		gpu_result_release(&r);
	}
}

static void test_gpu_launch__missing_entry(void **state)
{
	(void)state;
	const char other[] = ".visible .entry other(.param .u64 out)\n{\n\tret;\n}\n";
	GpuModuleSrc src = {.name = "m", .ptx = other, .ptx_len = strlen(other)};
	GpuResult r = run_job(layer_json, &src, 1, 0, true, 5);
	assert_int_equal(r.status, GPU_ERROR);
	assert_non_null(strstr(r.mods[0].message,
	                        "launches[0]: cuModuleGetFunction 'pattern': CUDA_ERROR_NOT_FOUND"));
	gpu_result_release(&r);
}

static const char iso_json[] =
	"{\"layer\": \"t\", \"module\": \"t.ptx\", \"entry\": \"k\","
	" \"buffers\": {\"out\": {\"size\": 64, \"init\": {\"kind\": \"zero\"}}},"
	" \"launches\": [{\"entry\": \"%s\", \"grid\": [1,1,1], \"block\": [16,1,1],"
	"  \"params\": {\"size\": 8, \"fields\": [{\"offset\": 0, \"kind\": \"buffer\", \"buffer\": \"out\"}]}}],"
	" \"frame\": [{\"name\": \"out\", \"buffer\": \"out\"}]}";

static void test_gpu_launch__fault_and_hang_isolated(void **state)
{
	(void)state;
	/* Every module defines the entry "k"... as the stand-in kernel named in
	 * its text: the manifest's entry is "shm" (harmless) for the original. */
	char json[2048];
	snprintf(json, sizeof json, iso_json, "shm");
	const char good[] = ".visible .entry shm(.param .u64 out)\n{\n\tret;\n}\n";
	GpuModuleSrc one = {.name = "good", .ptx = good, .ptx_len = strlen(good)};
	GpuResult r = run_job(json, &one, 1, 0, true, 5);
	assert_int_equal(r.status, GPU_OK);
	unsigned want[16];
	for (unsigned i = 0; i < 16; i++)
		want[i] = i;
	assert_memory_equal(r.mods[0].frame, want, 64);
	gpu_result_release(&r);

	/* The faulting kernel, under the manifest's entry name. */
	snprintf(json, sizeof json, iso_json, "illegal");
	const char illegal[] = ".visible .entry illegal(.param .u64 out)\n{\n\tret;\n}\n";
	GpuModuleSrc two[2] = {{.name = "illegal-1", .ptx = illegal, .ptx_len = strlen(illegal)},
	                       {.name = "illegal-2", .ptx = illegal, .ptx_len = strlen(illegal)}};
	r = run_job(json, two, 2, 5, true, 5);
	assert_int_equal(r.status, GPU_FAULT);
	assert_int_equal(r.mods[0].status, GPU_FAULT);
	if (!strstr(r.mods[0].message, "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access"))
		fail_msg("%s", r.mods[0].message);
	/* Run again without the first, the second faults on its own. */
	assert_int_equal(r.mods[1].status, GPU_FAULT);
	assert_false(r.mods[1].not_run);
	gpu_result_release(&r);

	snprintf(json, sizeof json, iso_json, "spin");
	const char spin[] = ".visible .entry spin(.param .u64 out)\n{\n\tret;\n}\n";
	GpuModuleSrc s = {.name = "spinner", .ptx = spin, .ptx_len = strlen(spin)};
	double t0 = now_seconds();
	r = run_job(json, &s, 1, 0, true, 0.3);
	assert_true(now_seconds() - t0 < 5);
	assert_int_equal(r.status, GPU_HANG);
	assert_non_null(strstr(r.mods[0].message, "stage 'launch spinner'"));
	gpu_result_release(&r);
}

static void test_gpu_launch__arrays_and_objects(void **state)
{
	(void)state;
	const char json[] =
		"{\"layer\": \"t\", \"module\": \"t.ptx\", \"entry\": \"copy\","
		" \"arrays\": {"
		"  \"tex0\": {\"width\": 5, \"height\": 3, \"channels\": 2, \"format\": \"f16\","
		"   \"init\": {\"kind\": \"random\", \"seed\": 11, \"min\": -2.0, \"max\": 2.0},"
		"   \"texture\": {\"filter\": \"linear\", \"address\": \"wrap\", \"normalized\": true}},"
		"  \"surf0\": {\"width\": 5, \"height\": 3, \"channels\": 2, \"format\": \"f16\","
		"   \"init\": {\"kind\": \"fill\", \"byte\": 7}, \"surface\": true}},"
		" \"launches\": [{\"entry\": \"copy\", \"grid\": [1,1,1], \"block\": [5,3,1],"
		"  \"params\": {\"size\": 16, \"fields\": ["
		"   {\"offset\": 8, \"kind\": \"surface\", \"array\": \"surf0\"},"
		"   {\"offset\": 0, \"kind\": \"texture\", \"array\": \"tex0\"}]}}],"
		" \"frame\": [{\"name\": \"copy\", \"array\": \"surf0\"}, {\"name\": \"tex\", \"array\": \"tex0\"}]}";
	const char ptx[] = ".visible .entry copy(.param .u64 t, .param .u64 s)\n{\n\tret;\n}\n";
	GpuModuleSrc src = {.name = "copy", .ptx = ptx, .ptx_len = strlen(ptx)};
	GpuResult r = run_job(json, &src, 1, 2, true, 5);
	if (r.status)
		fail_msg("%s", r.message);
	assert_int_equal(r.mods[0].frame_len, 2 * 60);
	MfInit in = {.kind = MF_INIT_RANDOM, .seed = 11, .min = -2, .max = 2};
	unsigned char want[60];
	mf_fill_random(&in, MF_F16, want, 60);
	assert_memory_equal(r.mods[0].frame, want, 60);        /* the surface: a copy */
	assert_memory_equal(r.mods[0].frame + 60, want, 60);   /* the texture's array */
	gpu_result_release(&r);
}

static void test_gpu_launch__dynamic_shared_opt_in(void **state)
{
	(void)state;
	char json[2048];
	snprintf(json, sizeof json, iso_json, "shm");
	/* 64 KB of dynamic shared memory: above 48 KB the kernel is opted in
	 * (the stand-in refuses the launch otherwise); repeat 3 adds i thrice. */
	char *big = strstr(json, "\"grid\"");
	char fixed[2048];
	snprintf(fixed, sizeof fixed, "%.*s\"dynamic_shared_bytes\": 65536, \"repeat\": 3, %s",
	         (int)(big - json), json, big);
	const char good[] = ".visible .entry shm(.param .u64 out)\n{\n\tret;\n}\n";
	GpuModuleSrc one = {.name = "good", .ptx = good, .ptx_len = strlen(good)};
	GpuResult r = run_job(fixed, &one, 1, 4, true, 5);
	if (r.status)
		fail_msg("%s", r.message);
	unsigned want[16];
	for (unsigned i = 0; i < 16; i++)
		want[i] = 3 * i;
	assert_memory_equal(r.mods[0].frame, want, 64);
	/* Inputs are uploaded again before each run: no drift. */
	assert_true(r.mods[0].repeatable);
	gpu_result_release(&r);
}

/* Instrumented modules side by side (gpu/probe.h): the symbol set, the dump
 * back with the frame, one flipped bit where the module says, and a dump
 * that does not fit refused before it is allocated. */
static void test_gpu_launch__probe_modules_side_by_side(void **state)
{
	(void)state;
	static const char probed[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		"// d4r-splice probe: dump __d4r_probe_dump, 1 records, 256 bytes per warp, x\n"
		".visible .global .align 8 .u64 __d4r_probe_dump;\n"
		".visible .entry pattern(.param .u64 out, .param .u32 k)\n{\n"
		"\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n"
		"\tst.global.b32 \t[%prb0_0_a1+0], %r1;\n"
		"\tst.global.b32 \t[%prb0_0_a1+128], %r2;\n"
		"\tret;\n}\n";
	char flipped[sizeof probed + 64];
	snprintf(flipped, sizeof flipped, "// mock: probe-flip %%r2 21 6\n%s", probed);
	reset_mock();
	Manifest m;
	Err e = ERR_INIT;
	if (mf_parse("t/layer.json", layer_json, strlen(layer_json), &m, &e))
		fail_msg("%s", err_msg(&e));
	m.corpus = xstrdup(cache_dir);
	uint64_t bytes = 32 * 256; /* 4 blocks of 8 warps */
	GpuProbeModule mods[2] = {
		{"original", probed, strlen(probed), "__d4r_probe_dump", bytes, NULL, NULL},
		{"spliced", flipped, strlen(flipped), "__d4r_probe_dump", bytes, NULL, NULL}};
	GpuProbeJob job = {.manifest = &m, .modules = mods, .nmodules = 2, .timeout_s = 5,
	                   .jit_limit_s = 10, .no_cache = true};
	GpuProbeResult r;
	assert_int_equal(gpu_probe_run(&job, &r, &e), 0);
	if (r.status)
		fail_msg("%s", r.message);
	assert_string_equal(r.mods[0].device, "Stand-in H200");
	for (int k = 0; k < 2; k++) {
		assert_int_equal(r.mods[k].frame_len, 512);
		assert_int_equal(r.mods[k].frame[0], (unsigned char)(7 * 512 + 90));
		assert_int_equal(r.mods[k].dump_len, bytes);
	}
	size_t diff = 0, at = 0, zero = 0;
	for (size_t i = 0; i < bytes; i++) {
		if (r.mods[0].dump[i] != r.mods[1].dump[i])
			diff++, at = i;
		zero += r.mods[0].dump[i] == 0;
	}
	assert_int_equal(diff, 1);                 /* bit 0 of %r2, warp 21, lane 6 */
	assert_int_equal(at, 21 * 256 + 128 + 6 * 4);
	assert_int_equal(r.mods[0].dump[at] ^ r.mods[1].dump[at], 1);
	assert_true(zero < bytes / 16);            /* every slot was written */
	gpu_probe_result_release(&r);

	/* no room on the device */
	setenv("D4R_MOCK_FREE_KB", "0", 1);
	assert_int_equal(gpu_probe_run(&job, &r, &e), 0);
	unsetenv("D4R_MOCK_FREE_KB");
	assert_int_equal(r.status, GPU_ERROR);
	assert_non_null(strstr(r.mods[1].message, "the dump of 'spliced' (0.0 MB) does not fit in "
	                                           "the device's free memory (0.0 MB of 81920.0 MB)"));
	gpu_probe_result_release(&r);

	/* a module without the symbol */
	GpuProbeModule plain = {"plain", pattern_ptx, strlen(pattern_ptx), "__d4r_probe_dump",
	                        bytes, NULL, NULL};
	job.modules = &plain;
	job.nmodules = 1;
	assert_int_equal(gpu_probe_run(&job, &r, &e), 0);
	assert_int_equal(r.status, GPU_ERROR);
	assert_non_null(strstr(r.mods[0].message, "cuModuleGetGlobal '__d4r_probe_dump'"));
	gpu_probe_result_release(&r);
	mf_release(&m);
	err_release(&e);
}

/* The children of a sampling job (sample/run.h) on the stand-in: the JIT's
 * image comes back, from a compile and from the cache; line information is
 * part of the cache key; a sampled module without CUPTI fails, said. */
static void test_gpu_launch__sample_run_images(void **state)
{
	(void)state;
	reset_mock();
	Manifest m;
	Err e = ERR_INIT;
	if (mf_parse("t/layer.json", layer_json, strlen(layer_json), &m, &e))
		fail_msg("%s", err_msg(&e));
	m.corpus = xstrdup(cache_dir);
	size_t n = strlen(pattern_ptx);
	SampleModule mods[2] = {{"plain", pattern_ptx, n, false, true, false},
	                        {"lines", pattern_ptx, n, true, false, false}};
	SampleJob job = {.manifest = &m, .modules = mods, .nmodules = 1, .timeout_s = 5,
	                 .cache_dir = cache_dir, .runs = 2, .period = 8};
	SampleRunResult r;
	/* the plain build alone, then the .loc build: not the plain one's image */
	for (int pass = 0; pass < 3; pass++) {
		job.modules = pass == 1 ? &mods[1] : mods;
		job.nmodules = pass == 2 ? 2 : 1;
		assert_int_equal(sample_run(&job, &r, &e), 0);
		if (r.status)
			fail_msg("%s", r.message);
		for (size_t k = 0; k < r.nmods; k++) {
			const SampleModuleResult *mr = &r.mods[k];
			assert_int_equal(mr->jit_cached, pass == 2);
			assert_false(mr->sampled);
			assert_string_equal(mr->device, "Stand-in H200");
			assert_int_equal(mr->image_len, n + 11);
			assert_memory_equal(mr->image, "MOCKCUBIN\n", 10);
			assert_memory_equal(mr->image + 10, pattern_ptx, n);
		}
		sample_run_release(&r);
	}
	/* no cache: the image of the compile itself */
	job.no_cache = true;
	assert_int_equal(sample_run(&job, &r, &e), 0);
	assert_int_equal(r.status, GPU_OK);
	assert_int_equal(r.mods[1].image_len, n + 11);
	assert_false(r.mods[1].jit_cached);
	sample_run_release(&r);
	/* sampled, with no libcupti: the module fails, and says why */
	mods[1].sample = true;
	job.modules = &mods[1];
	job.nmodules = 1;
	setenv("D4R_LIBCUPTI", "/nonexistent/libcupti.so", 1);
	assert_int_equal(sample_run(&job, &r, &e), 0);
	unsetenv("D4R_LIBCUPTI");
	assert_int_equal(r.status, GPU_ERROR);
	assert_non_null(strstr(r.message, "lines: no CUPTI library (libcupti.so.13): "
	                                  "/nonexistent/libcupti.so"));
	assert_false(r.mods[0].sampled);
	sample_run_release(&r);
	mf_release(&m);
	err_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_launch__frame_timing_and_cache),
		cmocka_unit_test(test_gpu_launch__jit_error_shows_the_line),
		cmocka_unit_test(test_gpu_launch__missing_entry),
		cmocka_unit_test(test_gpu_launch__fault_and_hang_isolated),
		cmocka_unit_test(test_gpu_launch__arrays_and_objects),
		cmocka_unit_test(test_gpu_launch__dynamic_shared_opt_in),
		cmocka_unit_test(test_gpu_launch__probe_modules_side_by_side),
		cmocka_unit_test(test_gpu_launch__sample_run_images),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
