# capture-matmul.py - the program tests/gpu/t0300-capture.sh captures: a
# Triton f16 matmul (compiled for the GPU it runs on, sm_90 on the H200) and
# a torch.matmul (cuBLAS, which PyTorch ships as cubins only), on the same
# seeded inputs.  It prints what each computed, so a log shows the program
# ran, and checks the two agree (f32 accumulation both) within f16 rounding.
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, sam, sak, sbk, sbn, scm, scn,
                  K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    # unrolled (K is a constant): straight-line code, so a cut through a
    # phase and the wgmma.wait_group that completes it exists
    for _ in tl.static_range(0, K, BK):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * sak
        b += BK * sbk
    c = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, acc.to(tl.float16))


def main():
    torch.manual_seed(0)
    M = N = 256
    K = 64
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    matmul_kernel[(M // 64, N // 64)](a, b, c, M, N, a.stride(0), a.stride(1),
                                      b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                      K=K, BM=64, BN=64, BK=32)
    d = torch.matmul(a, b)
    torch.cuda.synchronize()
    err = (c.float() - d.float()).abs().max().item()
    print("capture-matmul: %s, triton c[0,0] %.4f, cublas d[0,0] %.4f, max |c - d| %.4g"
          % (torch.cuda.get_device_name(), c[0, 0].item(), d[0, 0].item(), err))
    return 0 if err < 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
