#!/usr/bin/env bash
# --every-phase --together: when ptxas rejects the module, each message is
# named by the spliced region it falls in, from the splices' own line maps
# (not from marker comments in the text).  Two e4m3 mma phases under
# .target sm_80 (FP8 mma needs sm_89): ptxas rejects the line of each, and
# each is placed in its own phase's region; the run fails (exit 2) and
# does not also say "ok".
. "$D4R_TOP/tests/cli/lib.sh"
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[ -x "$ptxas" ] || skip "no ptxas at $ptxas"
cat >"$T/two.ptx" <<'PTX'
.version 8.7
.target sm_80
.address_size 64

.visible .entry two(.param .u64 p)
{
	.reg .b32 %r<20>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [p];
	ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
	ld.global.v2.u32 {%r5, %r6}, [%rd1+16];
	mov.b32 %r7, 0;
	mov.b32 %r8, 0;
	mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r9, %r10}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r7, %r8};
	add.u32 %r11, %r9, %r10;
	mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r12, %r13}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%r9, %r10};
	add.u32 %r11, %r11, %r12;
	add.u32 %r11, %r11, %r13;
	st.global.u32 [%rd1], %r11;
	ret;
}
PTX
expect_rc 2 "$D4R" splice --module "$T/two.ptx" --every-phase --together --check=ptxas
expect_grep '^FAIL  two: ptxas rejects the module' "$T/out"
# the regions, by their output lines: phase 1's mma is on line 15 of the
# spliced text (one line of the region's opening before it), phase 2's on
# line 19 (phase 1's region adds two lines, phase 2's own opening one)
expect_grep 'spliced:15.*\[in the region of phase 1, s5\.\.s5\]' "$T/out"
expect_grep 'spliced:19.*\[in the region of phase 2, s7\.\.s7\]' "$T/out"
grep -q '^ok ' "$T/out" && fail "a rejected module is also reported ok"
exit 0
