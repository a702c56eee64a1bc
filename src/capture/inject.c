/*
 * inject.c - the CUPTI glue of libd4r-capture.so: the only file that
 * includes cupti.h.
 *
 * The CUDA driver loads the library named by CUDA_INJECTION64_PATH when
 * PROGRAM initialises CUDA and calls its InitializeInjection.  That loads
 * CUPTI (dlopen: $D4R_LIBCUPTI, which `capture` sets to the one it found,
 * else libcupti.so.13, libcupti.so), subscribes one callback, and enables
 *
 *   resource domain    CUPTI_CBID_RESOURCE_MODULE_LOADED: the image
 *   driver API domain  cuLaunchKernel, cuLaunchKernelEx, their _ptsz
 *                      forms, cuLaunchCooperativeKernel(_ptsz): the
 *                      launch, on entry and on exit; cuGraphLaunch(_ptsz):
 *                      said, since the kernels inside a graph are not seen
 *
 * and hands each to the tap (tap.h), which does the work.  Without CUPTI
 * the events file says so and PROGRAM runs on untouched.
 */
#include "capture/tap.h"

#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef CUptiResult (*SubscribeFn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*EnableCbFn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId);
typedef CUptiResult (*EnableDomainFn)(uint32_t, CUpti_SubscriberHandle,
                                      CUpti_CallbackDomain);

static const CUpti_CallbackId launch_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

/* The launch in a callback's parameters; false for a graph launch. */
/* The fields cuLaunchKernel's and cuLaunchCooperativeKernel's parameter
 * structs share, by the same names. */
#define LAUNCH_OF(l, p)                                                             \
	do {                                                                        \
		(l)->f = (p)->f;                                                    \
		(l)->grid[0] = (p)->gridDimX, (l)->grid[1] = (p)->gridDimY;         \
		(l)->grid[2] = (p)->gridDimZ;                                       \
		(l)->block[0] = (p)->blockDimX, (l)->block[1] = (p)->blockDimY;     \
		(l)->block[2] = (p)->blockDimZ;                                     \
		(l)->shared = (p)->sharedMemBytes;                                  \
		(l)->stream = (p)->hStream;                                         \
		(l)->kernel_params = (p)->kernelParams;                             \
	} while (0)

static bool launch_of(CUpti_CallbackId cbid, const CUpti_CallbackData *cd, TapLaunch *l)
{
	memset(l, 0, sizeof(*l));
	l->api = cd->functionName;
	l->kernel = cd->symbolName;
	l->cluster[0] = l->cluster[1] = l->cluster[2] = 1;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = cd->functionParams;
		LAUNCH_OF(l, p);
		l->extra = p->extra;
		return true;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = cd->functionParams;
		LAUNCH_OF(l, p);
		l->cooperative = true;
		return true;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = cd->functionParams;
		const CUlaunchConfig *c = p->config;
		l->f = p->f;
		l->kernel_params = p->kernelParams;
		l->extra = p->extra;
		if (!c)
			return true;
		l->grid[0] = c->gridDimX, l->grid[1] = c->gridDimY,
		l->grid[2] = c->gridDimZ;
		l->block[0] = c->blockDimX, l->block[1] = c->blockDimY,
		l->block[2] = c->blockDimZ;
		l->shared = c->sharedMemBytes;
		l->stream = c->hStream;
		l->attrs = c->attrs;
		l->nattrs = c->numAttrs;
		for (unsigned i = 0; i < c->numAttrs; i++) {
			const CUlaunchAttribute *a = &c->attrs[i];
			if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
				l->cluster[0] = a->value.clusterDim.x;
				l->cluster[1] = a->value.clusterDim.y;
				l->cluster[2] = a->value.clusterDim.z;
			}
		}
		return true;
	}
	default:
		return false;
	}
}

static void CUPTIAPI callback(void *ud, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const void *data)
{
	(void)ud;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
	    cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
		const CUpti_ResourceData *rd = data;
		const CUpti_ModuleResourceData *md = rd->resourceDescriptor;
		if (md)
			d4r_tap_module(md->pCubin, md->cubinSize);
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	const CUpti_CallbackData *cd = data;
	TapLaunch l;
	if (!launch_of(cbid, cd, &l)) {
		if (cd->callbackSite == CUPTI_API_ENTER)
			d4r_tap_graph_launch(cd->functionName);
		return;
	}
	if (cd->callbackSite == CUPTI_API_ENTER) {
		void *cookie = NULL;
		d4r_tap_launch_enter(&l, &cookie);
		*cd->correlationData = (uint64_t)(uintptr_t)cookie;
	} else {
		void *cookie = (void *)(uintptr_t)*cd->correlationData;
		if (cookie && cd->functionReturnValue &&
		    *(CUresult *)cd->functionReturnValue != CUDA_SUCCESS) {
			d4r_tap_event("refuse %s: the launch call itself failed (%d)",
			              l.kernel,
			              (int)*(CUresult *)cd->functionReturnValue);
		}
		d4r_tap_launch_exit(&l, cookie);
	}
}

TAP_API int InitializeInjection(void);
TAP_API int InitializeInjection(void)
{
	if (d4r_tap_init() != 0)
		return 1;
	static const char *const names[] = {NULL, "libcupti.so.13", "libcupti.so"};
	void *lib = NULL;
	const char *tried = "libcupti.so.13, libcupti.so";
	const char *env = getenv("D4R_LIBCUPTI");
	for (size_t i = env && *env ? 0 : 1; !lib && i < sizeof names / sizeof *names;
	     i++)
		lib = dlopen(i ? names[i] : env, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		d4r_tap_event("error no CUPTI: %s (tried %s%s%s)", dlerror(),
		              env ? env : "", env ? ", " : "", tried);
		return 1;
	}
	SubscribeFn subscribe = (SubscribeFn)dlsym(lib, "cuptiSubscribe");
	EnableCbFn enable_cb = (EnableCbFn)dlsym(lib, "cuptiEnableCallback");
	EnableDomainFn enable_domain = (EnableDomainFn)dlsym(lib, "cuptiEnableDomain");
	CUpti_SubscriberHandle sub;
	CUptiResult r;
	if (!subscribe || !enable_cb || !enable_domain) {
		d4r_tap_event("error no CUPTI: cuptiSubscribe, cuptiEnableCallback or "
		              "cuptiEnableDomain missing");
		return 1;
	}
	if ((r = subscribe(&sub, callback, NULL)) != CUPTI_SUCCESS) {
		d4r_tap_event("error cuptiSubscribe failed (%d): another CUPTI client (a "
		              "profiler?) "
		              "may hold the subscription",
		              (int)r);
		return 1;
	}
	enable_domain(1, sub, CUPTI_CB_DOMAIN_RESOURCE);
	for (size_t i = 0; i < sizeof launch_cbids / sizeof *launch_cbids; i++)
		enable_cb(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, launch_cbids[i]);
	d4r_tap_event("note CUPTI subscribed");
	return 1;
}
