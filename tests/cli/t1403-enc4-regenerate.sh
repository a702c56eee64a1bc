#!/usr/bin/env bash
# t1403: `make corpus` is reproducible: gen-enc4 --check regenerates the stand-in
# into a temporary folder and finds enc4.cu, enc4.ptx and weights.bin equal to
# the committed bytes.  Needs nvcc (about half a minute).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$NVCC" ] || command -v nvcc >/dev/null || skip "nvcc not found (no CUDA toolkit)"
expect_rc 0 python3 "$TOP/scripts/gen-enc4" --check
expect_grep '^gen-enc4: regeneration reproduces enc4.cu, enc4.ptx, weights.bin byte for byte$' "$T/out"
exit 0
