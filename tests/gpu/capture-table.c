/*
 * capture-table.c - the program t0300-capture.sh captures to show a replay at
 * the recorded addresses on the GPU: a kernel (capture-table.cu, loaded as
 * PTX through the driver, as a renderer loads its shaders) that reaches its
 * buffers only through a table of device pointers.
 *
 *   capture-table KERNEL.ptx [graph]
 *
 * Four source rows of 256 floats, each its own cuMemAlloc (src[r][c] =
 * 256 r + c), one 4096-byte destination (0xff bytes before) of which each
 * row is a quarter: the table holds the four source pointers, then four
 * interior pointers into the destination.  One launch of table_scale with
 * scale 2: dst[r][c] = 2 (256 r + c) + r, exact in f32; the program checks
 * every value and prints "capture-table: 1024 values right" (exit 0) or the
 * first wrong one (exit 1).  With "graph" the launch is captured into a
 * CUDA graph on a stream of its own (cuStreamBeginCapture), and the graph
 * is launched twice (cuGraphLaunch): the kernel never runs outside a graph.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 4
#define WIDTH 256

#define CK(x)                                                                            \
	do {                                                                             \
		CUresult r_ = (x);                                                       \
		if (r_ != CUDA_SUCCESS) {                                                \
			const char *s_ = "?";                                            \
			cuGetErrorString(r_, &s_);                                       \
			fprintf(stderr, "capture-table: %s: %s\n", #x, s_);              \
			exit(2);                                                         \
		}                                                                        \
	} while (0)

int main(int argc, char **argv)
{
	bool graph = argc == 3 && !strcmp(argv[2], "graph");
	if (argc != 2 && !graph) {
		fprintf(stderr, "usage: capture-table KERNEL.ptx [graph]\n");
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
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fn, mod, "table_scale"));
	CUdeviceptr src[ROWS], dst, table;
	static float host[ROWS][WIDTH];
	for (int r = 0; r < ROWS; r++) {
		for (int c = 0; c < WIDTH; c++)
			host[r][c] = (float)(WIDTH * r + c);
		CK(cuMemAlloc(&src[r], sizeof host[r]));
		CK(cuMemcpyHtoD(src[r], host[r], sizeof host[r]));
	}
	CK(cuMemAlloc(&dst, sizeof host));
	CK(cuMemsetD8(dst, 0xff, sizeof host));
	unsigned long long rows[2 * ROWS];
	for (int r = 0; r < ROWS; r++) {
		rows[r] = src[r];
		rows[ROWS + r] = dst + (unsigned long long)r * sizeof host[r];
	}
	CK(cuMemAlloc(&table, sizeof rows));
	CK(cuMemcpyHtoD(table, rows, sizeof rows));
	int nrows = ROWS;
	float scale = 2.0f;
	void *args[] = {&table, &nrows, &scale};
	if (graph) {
		CUstream s;
		CUgraph g;
		CUgraphExec x;
		CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
		CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		CK(cuLaunchKernel(fn, ROWS, 1, 1, WIDTH, 1, 1, 0, s, args, NULL));
		CK(cuStreamEndCapture(s, &g));
		CK(cuGraphInstantiate(&x, g, 0));
		CK(cuGraphLaunch(x, s));
		CK(cuGraphLaunch(x, s));
		CK(cuStreamSynchronize(s));
	} else {
		CK(cuLaunchKernel(fn, ROWS, 1, 1, WIDTH, 1, 1, 0, NULL, args, NULL));
	}
	CK(cuCtxSynchronize());
	static float out[ROWS][WIDTH];
	CK(cuMemcpyDtoH(out, dst, sizeof out));
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < WIDTH; c++)
			if (out[r][c] != 2.0f * (float)(WIDTH * r + c) + (float)r) {
				printf("capture-table: dst[%d][%d] = %g, expected %g\n",
				       r, c, out[r][c],
				       2.0f * (float)(WIDTH * r + c) + (float)r);
				return 1;
			}
	printf("capture-table: %d values right%s\n", ROWS * WIDTH,
	       graph ? " (through a CUDA graph, launched twice)" : "");
	return 0;
}
