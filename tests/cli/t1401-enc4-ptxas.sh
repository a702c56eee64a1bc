#!/usr/bin/env bash
# t1401: ptxas accepts the enc4 stand-in for sm_89 (the module's target) and
# sm_90 (the H200 the oracle is made on; the driver JITs the sm_89 PTX there).
# Every entry is assembled for both: `roundtrip --check=ptxas` gives the
# module to ptxas with no -e (every entry of the module: the three listed
# here, which the module's .entry lines must be), one run per target, both
# targets at once; ptxas's answers are cached by the module's bytes, the
# target and the ptxas binary, so a second run of the suite pays no run on
# this 21,669-statement kernel (t1209 shows a cached answer is ptxas's).
. "$(dirname "$0")/lib.sh"
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[ -x "$PTXAS" ] || skip "ptxas not found at $PTXAS (no CUDA toolkit)"
ptx=$TOP/corpus/enc4/enc4.ptx
entries="enc4_prepass_kernel cuda_dldn_engine_swin_enc4_kernel enc4_frame_kernel"
got=$(sed -n 's/^\(\.visible \)\{0,1\}\.entry \([A-Za-z0-9_]*\)(.*/\2/p' "$ptx" | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$entries" ] || fail "the module's entries are '$got', expected '$entries'"
for arch in sm_89 sm_90; do
	"$D4R" roundtrip --check=ptxas --arch $arch "$ptx" >"$T/$arch.out" 2>"$T/$arch.err" &
	eval "pid_$arch=\$!"
done
for arch in sm_89 sm_90; do
	eval "wait \$pid_$arch" || { head -c 3000 "$T/$arch.err"; fail "ptxas -arch=$arch rejects enc4.ptx"; }
	expect_grep "^ptxas: +-arch=$arch $ptx: ok( \(cached\))?$" "$T/$arch.out"
	expect_no_grep 'error' "$T/$arch.err"
done
exit 0
