// capture-coop.cu - the kernel of tests/gpu/capture-coop.c: a reduction
// across the whole grid that needs a cooperative launch.  t0300-capture.sh
// builds it with `nvcc -ptx -arch=sm_90`.
//
// Each block sums its 256 inputs into partial[block] (integer atomics: the
// same sum in any order), the grid waits at grid.sync(), and then every
// block writes the total of all partials into out[block].  grid.sync()
// needs the grid's barrier a cooperative launch provides: launched as an
// ordinary kernel it traps, so a replay that drops the cooperative
// attribute fails instead of passing by luck.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void grid_total(const int *in, int *partial, int *out)
{
    cg::grid_group g = cg::this_grid();
    const unsigned b = blockIdx.x, i = b * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        partial[b] = 0;
    __syncthreads();
    atomicAdd(&partial[b], in[i]);
    g.sync();
    if (threadIdx.x == 0) {
        int s = 0;
        for (unsigned k = 0; k < gridDim.x; k++)
            s += partial[k];
        out[b] = s;
    }
}
