#!/usr/bin/env bash
# t1403: `make corpus` is reproducible: gen-enc4 --check regenerates the stand-in
# into a temporary folder, starting its fit from the committed fit.json, and
# finds enc4.cu, enc4.ptx, weights.bin and fit.json equal to the committed
# bytes (so the committed knobs are the fit's fixed point: one pass).  Needs
# nvcc (about half a minute).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[ -x "$NVCC" ] || command -v nvcc >/dev/null || skip "nvcc not found (no CUDA toolkit)"
expect_rc 0 python3 "$TOP/scripts/gen-enc4" --check
expect_grep '^gen-enc4: regeneration reproduces enc4.cu, enc4.ptx, weights.bin, fit.json byte for byte$' "$T/out"
exit 0
