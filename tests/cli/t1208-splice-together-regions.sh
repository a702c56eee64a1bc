#!/usr/bin/env bash
# --every-phase --together: when ptxas rejects the module, each message is
# named by the spliced region it falls in, from the splices' own line maps
# (not from marker comments in the text).  Two e4m3 mma phases under
# .target sm_80 (FP8 mma needs sm_89): ptxas rejects the line of each, and
# each is placed in its own phase's region; the run fails (exit 2) and
# does not also say "ok".  With two such entries, the module is one and so
# is the ptxas run (-e naming both): each message is placed in its
# function's region, and for sm_89 both are accepted by the same run.
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

# Two entries, each with one such phase: one module and one ptxas run for
# both (-e naming each), and each message placed in its function's region
sed -e 's/\.entry two(/.entry one(/' "$T/two.ptx" >"$T/both.ptx"
sed -n '/^\.visible \.entry two(/,$p' "$T/two.ptx" >>"$T/both.ptx"
expect_rc 2 "$D4R" splice --module "$T/both.ptx" --every-phase --together --check=ptxas
expect_grep '^FAIL  one,two: ptxas rejects the module with 4 phases spliced' "$T/out"
expect_grep 'in the region of phase 1 of one, s5\.\.s5\]' "$T/out"
expect_grep 'in the region of phase 2 of two, s7\.\.s7\]' "$T/out"
grep -q '^ok ' "$T/out" && fail "a rejected module is also reported ok (two entries)"
# the same entries, with sm_89 (FP8 mma's target): both accepted by the one run
sed -i 's/^\.target sm_80$/.target sm_89/' "$T/both.ptx"
expect_rc 0 "$D4R" splice --module "$T/both.ptx" --every-phase --together --check=ptxas --json
python3 - "$T/out" <<'PY' || fail "two entries, sm_89: not both accepted by one ptxas run"
import json, sys
d = json.load(open(sys.argv[1]))
fs = d["functions"]
assert [f["function"] for f in fs] == ["one", "two"], fs
assert all(f["result"] == "ok" and f["spliced"] == 2 and f["ptxas"]["accepted"] for f in fs), fs
assert fs[0]["ptxas"]["cache_key"] == fs[1]["ptxas"]["cache_key"], "not one ptxas run"
PY
exit 0
