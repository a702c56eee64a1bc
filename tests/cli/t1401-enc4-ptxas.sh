#!/usr/bin/env bash
# t1401: ptxas accepts the enc4 stand-in for sm_89 (the module's target) and
# sm_90 (the H200 the oracle is made on; the driver JITs the sm_89 PTX there).
# Every entry is assembled for both: one ptxas run per target, -e naming
# the three entries (ptxas compiles each as it would alone, and reads the
# 21,669-statement module once, not three times), and -v saying each one's
# "Compiling entry function" line.
. "$(dirname "$0")/lib.sh"
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[ -x "$PTXAS" ] || PTXAS=$(command -v ptxas) || skip "ptxas not found (no CUDA toolkit)"
ptx=$TOP/corpus/enc4/enc4.ptx
entries=(enc4_prepass_kernel cuda_dldn_engine_swin_enc4_kernel enc4_frame_kernel)
# both targets at once
for arch in sm_89 sm_90; do
	"$PTXAS" -arch=$arch -e "$(IFS=,; echo "${entries[*]}")" -v "$ptx" -o "$T/$arch.cubin" \
		>"$T/$arch.out" 2>"$T/$arch.err" &
	eval "pid_$arch=\$!"
done
for arch in sm_89 sm_90; do
	eval "wait \$pid_$arch" || { head -c 3000 "$T/$arch.err"; fail "ptxas -arch=$arch rejects enc4.ptx"; }
	for entry in "${entries[@]}"; do
		expect_grep "Compiling entry function '$entry' for '$arch'" "$T/$arch.err"
	done
	[ "$(grep -c "Compiling entry function" "$T/$arch.err")" -eq 3 ] || fail "$arch: not three entries compiled"
	expect_no_grep 'error' "$T/$arch.err"
done
exit 0
