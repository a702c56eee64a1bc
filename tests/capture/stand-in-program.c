/*
 * stand-in-program.c - a program as the CUDA driver and CUPTI would show it
 * to the injection library, for the capture tests without a GPU.
 *
 * It loads the stand-in driver ($D4R_LIBCUDA) and, as the real driver does
 * with CUDA_INJECTION64_PATH, the injection library; then it calls the tap
 * where CUPTI's callbacks would (the module load, launch entry and exit).
 * The kernel is the stand-in's "pattern" (byte i = 7 i + k over 4 x 256
 * threads), its parameters handed to the tap as kernelParams, so the tap
 * needs their layout (the stand-in's cuFuncGetParamInfo gives none, as on
 * the H200) from the module's PTX; the stand-in driver runs the launch from
 * the same bytes as one parameter block.  It prints its MODE on stdout, as
 * a program prints its own output.
 *
 *   stand-in-program MODULE.ptx [MODE]
 *     MODE "ok"      one launch of pattern with k = 90 (default)
 *     MODE "twice"   two launches, k = 90 then k = 91
 *     MODE "racy"    the program writes byte 5 of the output after the
 *                    kernel and before the launch call returns (as another
 *                    stream or an atomic would): a replay cannot reproduce it
 *     MODE "fail"    exit status 3 after the launch
 *     MODE "none"    no launch at all
 *     MODE "cluster" one launch of pattern with k = 90 through cuLaunchKernelEx
 *                    in clusters of 2 blocks (the stand-in adds cluster.x - 1
 *                    to k in a cluster launch: the frame has k = 91)
 *     MODE "attrs"   as "cluster", with the launch attributes priority 3,
 *                    cooperative and a cluster scheduling policy (spread)
 *                    too: the stand-in adds 1 + 3 + 10 to k (k = 104); its
 *                    parameters as kernelParams (a cooperative launch's)
 *     MODE "coop"    one launch of pattern with k = 90 the tap is shown as
 *                    cuLaunchCooperativeKernel (the stand-in runs it as
 *                    cuLaunchKernelEx with the cooperative attribute: k = 100)
 *     MODE "event"   as "cluster", with a launch completion event attribute
 *                    (an event of the program's: a replay cannot have it)
 *     MODE "graph"   as "ok", but the tap is told the launch went to a stream
 *                    that captures a CUDA graph (the stand-in's stream 0x6a7)
 *     MODE "managed" as "ok" with the output in managed memory
 *     MODE "host"    as "ok" with the output in pinned host memory
 *     MODE "peer"    as "ok" with the output on device 1 (the stand-in is
 *                    told so: d4r_mock_peer)
 *     MODE "graphs"  three CUDA graph launches (the tap is told, as CUPTI's
 *                    cuGraphLaunch callback does), then one launch of
 *                    pattern into a stream capturing a graph
 *     MODE "crash"   killed by SIGKILL after the launch
 *     MODE "table"   the stand-in's "indirect" kernel (MODULE must define it):
 *                    its parameter is a table whose first entry points to
 *                    the output (byte i = 5 i + k, k = 90): a pointer
 *                    inside a buffer, which no manifest field rebases
 *     MODE "arrays"  the stand-in's "copy" kernel (MODULE must define it):
 *                    a texture over an 8 x 4 f16x4 array holding bytes
 *                    3 i + 1 is copied into a surface over another, the
 *                    parameters (the two objects) passed in `extra`
 */
#include "capture/tap.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEED(x)                                                                          \
	do {                                                                             \
		if ((x) != CUDA_SUCCESS) {                                               \
			fprintf(stderr, "stand-in-program: %s failed\n", #x);            \
			return 2;                                                        \
		}                                                                        \
	} while (0)

typedef CUresult (*LaunchFn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);

/* The launch the tap saw as kernelParams (a u64 and a u32), run by the
 * stand-in driver from the same bytes as one parameter block. */
static CUresult launch_params(LaunchFn launch, CUfunction fn, void **args)
{
	unsigned char block[12];
	memcpy(block, args[0], 8);
	memcpy(block + 8, args[1], 4);
	size_t sz = sizeof block;
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, block,
	                 CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
	return launch(fn, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, extra);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "ok";
	printf("stand-in-program: %s\n", mode); /* a program's own output */
	fflush(stdout);
	void *cu = dlopen(getenv("D4R_LIBCUDA"), RTLD_NOW | RTLD_GLOBAL);
	if (!cu) {
		fprintf(stderr, "stand-in-program: %s\n", dlerror());
		return 2;
	}
	const char *inj_path = getenv("CUDA_INJECTION64_PATH");
	void *inj = inj_path ? dlopen(inj_path, RTLD_NOW) : NULL;
	void (*tap_module)(const void *, size_t) =
	    inj ? dlsym(inj, "d4r_tap_module") : NULL;
	void (*tap_enter)(const TapLaunch *, void **) =
	    inj ? dlsym(inj, "d4r_tap_launch_enter") : NULL;
	void (*tap_exit)(const TapLaunch *, void *) =
	    inj ? dlsym(inj, "d4r_tap_launch_exit") : NULL;
	void (*tap_graph)(const char *) = inj ? dlsym(inj, "d4r_tap_graph_launch") : NULL;
	CUresult (*init)(unsigned) = dlsym(cu, "cuInit");
	CUresult (*load)(CUmodule *, const void *, unsigned, CUjit_option *, void **) =
	    dlsym(cu, "cuModuleLoadDataEx");
	CUresult (*getf)(CUfunction *, CUmodule, const char *) =
	    dlsym(cu, "cuModuleGetFunction");
	CUresult (*alloc)(CUdeviceptr *, size_t) = dlsym(cu, "cuMemAlloc_v2");
	CUresult (*memset8)(CUdeviceptr, unsigned char, size_t) =
	    dlsym(cu, "cuMemsetD8_v2");
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                   unsigned, unsigned, CUstream, void **, void **) =
	    dlsym(cu, "cuLaunchKernel");
	FILE *f = fopen(argv[1], "rb");
	static char ptx[1 << 16];
	size_t n = f ? fread(ptx, 1, sizeof ptx - 1, f) : 0;
	if (!f || !n)
		return 2;
	fclose(f);
	NEED(init(0));
	CUmodule mod;
	CUfunction fn;
	NEED(load(&mod, ptx, 0, NULL, NULL));
	if (tap_module)
		tap_module(ptx, n);
	if (!strcmp(mode, "arrays")) {
		CUresult (*mkarray)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *) =
		    dlsym(cu, "cuArray3DCreate_v2");
		CUresult (*copy2d)(const CUDA_MEMCPY2D *) = dlsym(cu, "cuMemcpy2D_v2");
		CUresult (*mktex)(
		    CUtexObject *, const CUDA_RESOURCE_DESC *, const CUDA_TEXTURE_DESC *,
		    const CUDA_RESOURCE_VIEW_DESC *) = dlsym(cu, "cuTexObjectCreate");
		CUresult (*mksurf)(CUsurfObject *, const CUDA_RESOURCE_DESC *) =
		    dlsym(cu, "cuSurfObjectCreate");
		NEED(getf(&fn, mod, "copy"));
		CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 8,
		                             .Height = 4,
		                             .Format = CU_AD_FORMAT_HALF,
		                             .NumChannels = 4};
		CUarray src, dst;
		NEED(mkarray(&src, &d));
		d.Flags = CUDA_ARRAY3D_SURFACE_LDST;
		NEED(mkarray(&dst, &d));
		static unsigned char img[8 * 4 * 8];
		for (size_t i = 0; i < sizeof img; i++)
			img[i] = (unsigned char)(3 * i + 1);
		CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_HOST,
		                   .srcHost = img,
		                   .srcPitch = 64,
		                   .dstMemoryType = CU_MEMORYTYPE_ARRAY,
		                   .dstArray = src,
		                   .WidthInBytes = 64,
		                   .Height = 4};
		NEED(copy2d(&c));
		CUDA_RESOURCE_DESC rd = {.resType = CU_RESOURCE_TYPE_ARRAY};
		rd.res.array.hArray = src;
		CUDA_TEXTURE_DESC td = {.filterMode = CU_TR_FILTER_MODE_POINT};
		td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
		CUtexObject tex;
		CUsurfObject surf;
		NEED(mktex(&tex, &rd, &td, NULL));
		rd.res.array.hArray = dst;
		NEED(mksurf(&surf, &rd));
		unsigned char block[16];
		memcpy(block, &tex, 8);
		memcpy(block + 8, &surf, 8);
		size_t sz = sizeof block;
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, block,
		                 CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
		TapLaunch l = {.api = "cuLaunchKernel",
		               .kernel = "copy",
		               .f = fn,
		               .grid = {1, 1, 1},
		               .block = {1, 1, 1},
		               .cluster = {1, 1, 1},
		               .extra = extra};
		void *cookie = NULL;
		if (tap_enter)
			tap_enter(&l, &cookie);
		NEED(launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
		if (tap_exit)
			tap_exit(&l, cookie);
		return 0;
	}
	if (!strcmp(mode, "cluster") || !strcmp(mode, "attrs") || !strcmp(mode, "coop") ||
	    !strcmp(mode, "event")) {
		CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **,
		                      void **) = dlsym(cu, "cuLaunchKernelEx");
		NEED(getf(&fn, mod, "pattern"));
		CUdeviceptr dst;
		NEED(alloc(&dst, 1024));
		unsigned k = 90;
		unsigned char block[12];
		memcpy(block, &dst, 8);
		memcpy(block + 8, &k, 4);
		size_t sz = sizeof block;
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, block,
		                 CU_LAUNCH_PARAM_BUFFER_SIZE, &sz, CU_LAUNCH_PARAM_END};
		bool coop = !strcmp(mode, "coop");
		CUlaunchAttribute at[4] = {{.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION}};
		at[0].value.clusterDim.x = 2,
		at[0].value.clusterDim.y = at[0].value.clusterDim.z = 1;
		unsigned nat = 1;
		if (!strcmp(mode, "attrs")) {
			at[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
			at[1].value.priority = 3;
			at[2].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
			at[2].value.cooperative = 1;
			at[3].id =
			    CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
			at[3].value.clusterSchedulingPolicyPreference =
			    CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
			nat = 4;
		} else if (!strcmp(mode, "event")) {
			at[1].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
			nat = 2;
		} else if (coop) { /* the cooperative kernel call, as cuLaunchKernelEx */
			at[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
			at[0].value.cooperative = 1;
		}
		bool by_params = coop || !strcmp(mode, "attrs"); /* cooperative */
		void *args[] = {&dst, &k};
		CUlaunchConfig cfg = {.gridDimX = 4,
		                      .gridDimY = 1,
		                      .gridDimZ = 1,
		                      .blockDimX = 256,
		                      .blockDimY = 1,
		                      .blockDimZ = 1,
		                      .attrs = at,
		                      .numAttrs = nat};
		TapLaunch l = {.api = coop ? "cuLaunchCooperativeKernel"
		                           : "cuLaunchKernelEx",
		               .kernel = "pattern",
		               .f = fn,
		               .grid = {4, 1, 1},
		               .block = {256, 1, 1},
		               .cluster = {coop ? 1 : 2, 1, 1},
		               .extra = by_params ? NULL : extra,
		               .kernel_params = by_params ? args : NULL,
		               .attrs = coop ? NULL : at,
		               .nattrs = coop ? 0 : nat,
		               .cooperative = coop};
		void *cookie = NULL;
		if (tap_enter)
			tap_enter(&l, &cookie);
		NEED(by_params ? launch_ex(&cfg, fn, args, NULL) : launch_ex(&cfg, fn, NULL, extra));
		if (tap_exit)
			tap_exit(&l, cookie);
		return 0;
	}
	if (!strcmp(mode, "table")) {
		NEED(getf(&fn, mod, "indirect"));
		CUresult (*htod)(CUdeviceptr, const void *, size_t) =
		    dlsym(cu, "cuMemcpyHtoD_v2");
		CUdeviceptr table, dst;
		NEED(alloc(&dst, 1024));
		NEED(alloc(&table, 64));
		NEED(htod(table, &dst, 8));
		unsigned k = 90;
		void *args[] = {&table, &k};
		TapLaunch l = {.api = "cuLaunchKernel",
		               .kernel = "indirect",
		               .f = fn,
		               .grid = {4, 1, 1},
		               .block = {256, 1, 1},
		               .cluster = {1, 1, 1},
		               .kernel_params = args};
		void *cookie = NULL;
		if (tap_enter)
			tap_enter(&l, &cookie);
		NEED(launch_params(launch, fn, args));
		if (tap_exit)
			tap_exit(&l, cookie);
		return 0;
	}
	NEED(getf(&fn, mod, "pattern"));
	CUdeviceptr out, unused;
	NEED(alloc(&unused, 64));
	if (!strcmp(mode, "managed")) {
		CUresult (*managed)(CUdeviceptr *, size_t, unsigned) =
		    dlsym(cu, "cuMemAllocManaged");
		NEED(managed(&out, 1024, CU_MEM_ATTACH_GLOBAL));
	} else if (!strcmp(mode, "host")) {
		CUresult (*host)(void **, size_t) = dlsym(cu, "cuMemAllocHost_v2");
		void *h = NULL;
		NEED(host(&h, 1024));
		out = (CUdeviceptr)(uintptr_t)h;
	} else {
		NEED(alloc(&out, 1024));
	}
	if (!strcmp(mode, "peer")) {
		void (*peer)(CUdeviceptr) = dlsym(cu, "d4r_mock_peer");
		if (peer)
			peer(out);
	}
	for (int g = 0; !strcmp(mode, "graphs") && tap_graph && g < 3; g++)
		tap_graph("cuGraphLaunch");
	NEED(memset8(out, 0xff, 1024));
	unsigned runs = !strcmp(mode, "none") ? 0 : !strcmp(mode, "twice") ? 2 : 1;
	for (unsigned r = 0; r < runs; r++) {
		unsigned k = 90 + r;
		void *args[] = {&out, &k};
		TapLaunch l = {.api = "cuLaunchKernel",
		               .kernel = "pattern",
		               .f = fn,
		               .grid = {4, 1, 1},
		               .block = {256, 1, 1},
		               .cluster = {1, 1, 1},
		               .kernel_params = args};
		if (!strcmp(mode, "graph") || !strcmp(mode, "graphs"))
			l.stream = (CUstream)(uintptr_t)0x6a7;
		void *cookie = NULL;
		if (tap_enter)
			tap_enter(&l, &cookie);
		NEED(launch_params(launch, fn, args));
		if (!strcmp(mode, "racy"))
			NEED(memset8(out + 5, 0, 1));
		if (tap_exit)
			tap_exit(&l, cookie);
	}
	if (!strcmp(mode, "crash"))
		raise(SIGKILL);
	return !strcmp(mode, "fail") ? 3 : 0;
}
