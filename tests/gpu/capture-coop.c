/*
 * capture-coop.c - the program t0300-capture.sh captures to show a
 * cooperative launch replayed as one on the GPU: capture-coop.cu's
 * grid_total (loaded as PTX through the driver) launched with
 * cuLaunchCooperativeKernel over 8 blocks of 256 threads.
 *
 *   capture-coop KERNEL.ptx
 *
 * in[i] = i % 97 for the 2048 inputs; partial and out (1024 bytes each, of
 * which the kernel writes the first 8 ints) hold 0xff bytes before.  After it partial[b] is the sum of block b's
 * inputs and every out[b] the sum of all; the program checks both against
 * sums it works out itself and prints "capture-coop: total T in every
 * block" (exit 0) or the first wrong value (exit 1).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 8
#define THREADS 256
#define SLOT_BYTES 1024 /* partial's and out's allocations */

#define CK(x)                                                                            \
	do {                                                                             \
		CUresult r_ = (x);                                                       \
		if (r_ != CUDA_SUCCESS) {                                                \
			const char *s_ = "?";                                            \
			cuGetErrorString(r_, &s_);                                       \
			fprintf(stderr, "capture-coop: %s: %s\n", #x, s_);               \
			exit(2);                                                         \
		}                                                                        \
	} while (0)

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: capture-coop KERNEL.ptx\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	static char ptx[1 << 20];
	size_t n = f ? fread(ptx, 1, sizeof ptx - 1, f) : 0;
	if (!f || !n) {
		perror(argv[1]);
		return 2;
	}
	fclose(f);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	int coop = 0;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
	if (!coop) {
		fprintf(stderr, "capture-coop: the device has no cooperative launch\n");
		return 2;
	}
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fn, mod, "grid_total"));
	static int in[BLOCKS * THREADS];
	long want_part[BLOCKS] = {0}, want = 0;
	for (int i = 0; i < BLOCKS * THREADS; i++) {
		in[i] = i % 97;
		want_part[i / THREADS] += in[i];
		want += in[i];
	}
	CUdeviceptr din, dpart, dout;
	CK(cuMemAlloc(&din, sizeof in));
	CK(cuMemcpyHtoD(din, in, sizeof in));
	CK(cuMemAlloc(&dpart, SLOT_BYTES));
	CK(cuMemAlloc(&dout, SLOT_BYTES));
	CK(cuMemsetD8(dpart, 0xff, SLOT_BYTES));
	CK(cuMemsetD8(dout, 0xff, SLOT_BYTES));
	void *args[] = {&din, &dpart, &dout};
	CK(cuLaunchCooperativeKernel(fn, BLOCKS, 1, 1, THREADS, 1, 1, 0, NULL, args));
	CK(cuCtxSynchronize());
	int part[BLOCKS], out[BLOCKS];
	CK(cuMemcpyDtoH(part, dpart, sizeof part));
	CK(cuMemcpyDtoH(out, dout, sizeof out));
	for (int b = 0; b < BLOCKS; b++)
		if (part[b] != want_part[b] || out[b] != want) {
			printf("capture-coop: block %d: partial %d (expected %ld), total %d "
			       "(expected %ld)\n",
			       b, part[b], want_part[b], out[b], want);
			return 1;
		}
	printf("capture-coop: total %ld in every block\n", want);
	return 0;
}
