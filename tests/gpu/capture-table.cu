// capture-table.cu - the kernel of tests/gpu/capture-table.c, a program whose
// kernel reaches its buffers only through a table of device pointers (as an
// array of tensors, a batched GEMM's pointer arrays, a ragged batch do).
// t0300-capture.sh builds it with `nvcc -ptx -arch=sm_90`.
//
// rows[0 .. nrows) are the sources, rows[nrows .. 2 nrows) the
// destinations: dst[r][c] = src[r][c] * scale + r, one block per row.
// A capture must copy every allocation the table points to, and a replay
// must put each at the address the table holds: no manifest field rebases
// a pointer stored inside a buffer.
extern "C" __global__ void table_scale(const float *const *rows, int nrows, float scale)
{
    const int r = blockIdx.x, c = threadIdx.x;
    const float *src = rows[r];
    float *dst = const_cast<float *>(rows[nrows + r]);
    dst[c] = src[c] * scale + (float)r;
}
