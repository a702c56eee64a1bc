#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>
#include <stdint.h>
#include <inttypes.h>

static void *L;
#define F(name) static __typeof__(&name) p_##name
F(cuInit); F(cuDeviceGet); F(cuMemAlloc_v2); F(cuMemAddressReserve); F(cuMemAddressFree);
F(cuMemCreate); F(cuMemMap); F(cuMemSetAccess); F(cuMemGetAddressRange_v2); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent);
#define G(name) p_##name = dlsym(L, #name)

static void maps(const char *when, uint64_t big)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;
	printf("-- maps %s (regions >= %" PRIu64 " MiB):\n", when, big >> 20);
	while (fgets(line, sizeof line, f)) {
		uint64_t lo, hi;
		n++;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && hi - lo >= big)
			printf("   %s", line);
	}
	printf("   (%d mappings)\n", n);
	fclose(f);
}

static uint64_t try_at(uint64_t hint, size_t size)
{
	CUdeviceptr got = 0;
	CUresult r = p_cuMemAddressReserve(&got, size, 0, hint, 0);
	printf("   reserve 0x%zx at hint 0x%" PRIx64 ": rc %d got 0x%llx %s\n", size, hint, r,
	       (unsigned long long)got, r == 0 && got == hint ? "HONOURED" : "not");
	if (r == 0 && got != hint) {
		p_cuMemAddressFree(got, size);
		return 0;
	}
	if (r == 0) {
		/* map it and write to see it works */
		CUmemAllocationProp prop = {0};
		prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop.location.id = 0;
		CUmemGenericAllocationHandle h;
		CUresult a = p_cuMemCreate(&h, size, &prop, 0);
		CUresult b = a ? a : p_cuMemMap(got, size, 0, h, 0);
		CUmemAccessDesc ad = {0};
		ad.location = prop.location;
		ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		CUresult c = b ? b : p_cuMemSetAccess(got, size, &ad, 1);
		printf("      create %d map %d access %d\n", a, b, c);
		return got;
	}
	return 0;
}


static uint64_t big_top(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t best = 0, top = 0;
	while (fgets(line, sizeof line, f)) {
		uint64_t lo, hi;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && hi - lo > best && lo > 0x100000000000ull)
			best = hi - lo, top = hi;
	}
	fclose(f);
	return top;
}

static void try_al(uint64_t hint, size_t size, size_t al)
{
	CUdeviceptr got = 0;
	CUresult r = p_cuMemAddressReserve(&got, size, al, hint, 0);
	printf("   size 0x%zx align 0x%zx hint 0x%" PRIx64 ": rc %d got 0x%llx %s\n", size, al, hint, r,
	       (unsigned long long)got, r == 0 && got == hint ? "HONOURED" : (r == 0 && got > hint ? "above" : "below/other"));
	if (r == 0)
		p_cuMemAddressFree(got, size);
}

static void init(void)
{
	L = dlopen("libcuda.so.1", RTLD_NOW);
	G(cuInit); G(cuDeviceGet); G(cuMemAlloc_v2); G(cuMemAddressReserve); G(cuMemAddressFree);
	G(cuMemCreate); G(cuMemMap); G(cuMemSetAccess); G(cuMemGetAddressRange_v2); G(cuDevicePrimaryCtxRetain); G(cuCtxSetCurrent);
}

static void ctx(void)
{
	CUdevice d;
	CUcontext c;
	p_cuInit(0);
	maps("after cuInit", 1ull << 30);
	p_cuDeviceGet(&d, 0);
	p_cuDevicePrimaryCtxRetain(&c, d);
	p_cuCtxSetCurrent(c);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "survey";
	init();
	if (!strcmp(mode, "child")) { /* print where cuMemAlloc puts things */
		ctx();
		CUdeviceptr a, b, base; size_t sz;
		p_cuMemAlloc_v2(&a, 8192);
		p_cuMemAlloc_v2(&b, 64 << 20);
		p_cuMemGetAddressRange_v2(&base, &sz, a);
		printf("ALLOC 0x%llx 0x%llx\n", (unsigned long long)a, (unsigned long long)b);
		maps("child after alloc", 1ull << 30);
		return 0;
	}

	if (!strcmp(mode, "sweep")) {
		ctx();
		CUdeviceptr a;
		p_cuMemAlloc_v2(&a, 4 << 20);
		uint64_t top = big_top(), M2 = 2ull << 20;
		printf("alloc 0x%llx, top of the driver's big region 0x%" PRIx64 "\n", (unsigned long long)a, top);
		uint64_t hints[] = {((top + (6ull << 30)) & ~(M2 - 1)) + 3 * M2, (a & ~(M2 - 1)) + (64ull << 20) + M2,
		                    0x7e0000000000ull + 5 * M2, 0x100000200000ull, ((top + (40ull << 30)) & ~(M2 - 1)) + 7 * M2};
		size_t sizes[] = {2 << 20, 6 << 20};
		size_t als[] = {0, 2 << 20, 4096};
		for (size_t h = 0; h < 5; h++)
			for (size_t s = 0; s < 2; s++)
				for (size_t l = 0; l < 3; l++)
					try_al(hints[h], sizes[s], als[l]);
		return 0;
	}
	if (!strcmp(mode, "other")) { /* argv[2]: an address from another process; argv[3]: hold */
		uint64_t want = strtoull(argv[2], 0, 16) & ~((2ull << 20) - 1);
		void *ph = MAP_FAILED;
		if (argc > 3)
			ph = mmap((void *)want, 6 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		ctx();
		if (ph != MAP_FAILED)
			munmap(ph, 6 << 20);
		printf("held: %s\n", ph != MAP_FAILED ? "yes" : "no");
		try_al(want, 6 << 20, 2 << 20);
		try_al(want, 6 << 20, 0);
		try_al(want, 2 << 20, 2 << 20);
		return 0;
	}

	if (!strcmp(mode, "order")) { /* argv[2] address, argv[3]: "init" = let go after cuInit, "ctx" = after the context */
		uint64_t want = strtoull(argv[2], 0, 16) & ~((32ull << 20) - 1);
		size_t size = 64 << 20;
		void *ph = mmap((void *)(want - size), 3 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		CUdevice d; CUcontext c;
		p_cuInit(0);
		if (!strcmp(argv[3], "init") && ph != MAP_FAILED) munmap(ph, 3 * size);
		p_cuDeviceGet(&d, 0);
		p_cuDevicePrimaryCtxRetain(&c, d);
		p_cuCtxSetCurrent(c);
		if (!strcmp(argv[3], "ctx") && ph != MAP_FAILED) munmap(ph, 3 * size);
		printf("%s held %d: ", argv[3], ph != MAP_FAILED);
		try_al(want, size, 0);
		return 0;
	}
	if (!strcmp(mode, "hold")) { /* argv[2] = address from another process */
		uint64_t want = strtoull(argv[2], 0, 16) & ~((2ull << 20) - 1);
		size_t size = 4 << 20;
		void *ph = mmap((void *)want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		printf("placeholder at 0x%" PRIx64 ": %p\n", want, ph);
		ctx();
		maps("hold after ctx", 1ull << 30);
		if (ph != MAP_FAILED)
			munmap(ph, size);
		try_at(want, size);
		return 0;
	}
	if (!strcmp(mode, "nohold")) {
		uint64_t want = strtoull(argv[2], 0, 16) & ~((2ull << 20) - 1);
		ctx();
		try_at(want, 4 << 20);
		return 0;
	}
	/* survey */
	maps("at start", 1ull << 30);
	ctx();
	maps("after ctx", 1ull << 30);
	CUdeviceptr a;
	p_cuMemAlloc_v2(&a, 4 << 20);
	printf("cuMemAlloc: 0x%llx\n", (unsigned long long)a);
	maps("after alloc", 256ull << 20);
	uint64_t hints[] = {(a & ~0x1fffffull) + (64ull << 20), (a & ~0x1fffffull) + (1ull << 30),
	                    (a & ~0x1fffffull) - (1ull << 30), 0x100000000000ull, 0x10000000000ull,
	                    0x200000000ull, 0x7e0000000000ull, 0x500000000000ull, 0x7f0000000000ull};
	for (size_t i = 0; i < sizeof hints / sizeof *hints; i++)
		try_at(hints[i], 2 << 20);
	return 0;
}
