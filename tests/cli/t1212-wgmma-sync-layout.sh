#!/usr/bin/env bash
# The mma_sync form of every f16 wgmma phase of the Triton sm_90 fixtures
# reads the kernel's own data: tests/checker/wgmma_sync_emulate.py runs
# the kernel (block 0, its 128 threads) on the CPU up to the cut - integer
# arithmetic exactly, its cp.async and st.shared recording which element of
# which global buffer lands at which shared byte, by the kernel's own
# addresses and swizzle - then the template, and checks that every thread's
# A and B registers of every mma.sync.m16n8k16 hold the PTX ISA's m16n8k16
# fragments of one 16-row tile per warp (rows 16w..), one k16 step and one
# 8-column block, the blocks in order, and that mma j of each wgmma writes
# registers 4j..4j+3 of that wgmma's D; then, running the matmul to its
# end, that its own epilogue stores the wgmma D registers where that
# fragment puts them.  Neither the template's nor the descriptors' layout
# is taken from d4r-splice.
#
# Expected first tile of each phase, from the kernels' tiling (the Triton
# source: BM 128 = two m64 wgmma tiles, BK 64 = four k16 steps, in the
# order the PTX issues them; read off the PTX: the matmul's phases 1-4 use
# A at +0, +32, +64, +96 bytes of the stage, 5-8 at +8192..; the
# attention's phase 4 starts with the k-step 3 of the first tile, its
# phases 5-8 take A from registers and B = V):
#   matmul phase p: A rows 64 * ((p-1) / 4), k 16 * ((p-1) % 4), column 0
#   attn phases 1-4: rows 0, k 0, 16, 32, 48; phases 5-8: k 0, 16, 32, 48
. "$D4R_TOP/tests/cli/lib.sh"
command -v python3 >/dev/null || skip "no python3"
FIX="$TOP/tests/fixtures/foreign/triton"
EMU="$TOP/tests/checker/wgmma_sync_emulate.py"
W="$T/w"
mkdir -p "$W/recipes" "$W/ptx"
cp -r "$FIX" "$W/corpus"
cd "$W" || exit 1
C=(--corpus "$W/corpus")
emu() { # LAYER PHASE ROLES EXPECT
	local L=$1 pp
	pp=$(printf %02d "$2")
	[ -d "recipes/$L" ] || cp -r "corpus/$L" "recipes/$L"
	expect_rc 0 "$D4R" recipe new "$L" "${C[@]}" --phase "$2" --native mma_sync
	python3 "$EMU" "corpus/$L.ptx" "ptx/$L/phase-$pp-mma_sync.ptx" "recipes/$L/phase-$pp-mma_sync.json" \
		"$3" "$4" >"$T/emu.out" 2>&1 || { cat "$T/emu.out"; fail "$L phase $2: the mma_sync form does not read the kernel's data"; }
	tail -1 "$T/emu.out"
}
MM=A=matmul_kernel_param_0:256:256:mk,B=matmul_kernel_param_1:256:256:kn
for p in 1 2 3 4 5 6 7 8; do
	emu triton-matmul-f16-sm90 "$p" "$MM" "$((64 * ((p - 1) / 4))):$((16 * ((p - 1) % 4))):0"
done
QK=A=attn_kernel_param_0:256:64:mk,B=attn_kernel_param_1:256:64:nk
PV=A=attn_kernel_param_0:256:64:mk,B=attn_kernel_param_2:256:64:kn
for p in 1 2 3 4; do
	emu triton-attn-f16-sm90 "$p" "$QK" "0:$((16 * (p - 1))):0"
done
for p in 5 6 7 8; do
	emu triton-attn-f16-sm90 "$p" "$PV" "-:$((16 * (p - 5))):0"
done
# the accumulator fragment the form assumes, against the matmul's own
# epilogue (its cvt, st.shared, ldmatrix and st.global of the wgmma D
# registers, run to the end of the kernel): register i of lane 4g + q of
# warp w is row 16w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2q + i % 2
python3 "$EMU" --accumulators corpus/triton-matmul-f16-sm90.ptx matmul_kernel_param_2:256:256 >"$T/emu.out" 2>&1 ||
	{ cat "$T/emu.out"; fail "the matmul's epilogue does not store the accumulators as the fragment says"; }
cat "$T/emu.out"
expect_grep '^ok: 16384 output elements' "$T/emu.out"
exit 0
