#!/usr/bin/env bash
# t1401: ptxas accepts the enc4 stand-in for sm_89 (the module's target) and
# sm_90 (the H200 the oracle is made on; the driver JITs the sm_89 PTX there).
# Every entry is assembled for both.
. "$(dirname "$0")/lib.sh"
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[ -x "$PTXAS" ] || PTXAS=$(command -v ptxas) || skip "ptxas not found (no CUDA toolkit)"
ptx=$TOP/corpus/enc4/enc4.ptx
for arch in sm_89 sm_90; do
	for entry in enc4_prepass_kernel cuda_dldn_engine_swin_enc4_kernel enc4_frame_kernel; do
		expect_rc 0 "$PTXAS" -arch=$arch -e $entry -v "$ptx" -o "$T/$arch-$entry.cubin"
		expect_grep "Compiling entry function '$entry' for '$arch'" "$T/err"
		expect_no_grep 'error' "$T/err"
	done
done
exit 0
