#!/usr/bin/env bash
# t1604-run-stand-in-driver: `run` from end to end without a GPU, against
# the CPU stand-in for libcuda.so.1 of tests/unit/test_gpu_launch.c, built
# here into a shared library and named by $D4R_LIBCUDA.  It shows what the
# command prints and writes and how it exits - frames, the oracle verdict,
# the reduction, the image cache, JIT errors, several modules, faults,
# hangs, --json - not what a real driver does (tests/gpu/ does that).
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
command -v python3 >/dev/null || skip "no python3 to build the expected frames"
stand_in_driver

mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke"
cat >"$T/repo/corpus/smoke/smoke.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64

.visible .entry unused(
	.param .u64 p
)
{
	bogus.instruction %r1;
	ret;
}

.visible .entry pattern(
	.param .u64 out,
	.param .u32 k
)
{
	ret;
}
PTX
sed 's|^.version 8.0|// mock: off-by-one\n.version 8.0|' "$T/repo/corpus/smoke/smoke.ptx" >"$T/wrong.ptx"
sed 's|^.version 8.0|// mock: illegal\n.version 8.0|' "$T/repo/corpus/smoke/smoke.ptx" >"$T/illegal.ptx"
sed 's|^.version 8.0|// mock: spin\n.version 8.0|' "$T/repo/corpus/smoke/smoke.ptx" >"$T/spin.ptx"
smoke_manifest "$T/repo"
smoke_oracle "$T/repo" 90
sha=$(sha256sum "$T/repo/corpus/smoke/oracle.frame" | cut -d" " -f1)
cd "$T/repo"

expect_rc 0 "$D4R" run smoke --runs 5 --frame "$T/f1"
expect_grep "^layer smoke on Stand-in H200 \(sm_90\), driver 13000$" "$T/out"
expect_grep "^module .*/corpus/smoke/smoke.ptx \(2 entries, 1 removed before the JIT\)$" "$T/out"
expect_grep "^  jit: [0-9.]+ s$" "$T/out"
expect_grep "^  kernel: median 0.2500 ms, min 0.2500, max 0.2500 over 5 runs$" "$T/out"
expect_grep "^  frame: 1024 bytes, sha256 $sha -> $T/f1$" "$T/out"
expect_grep "^  oracle: matches$" "$T/out"
expect_grep "^overhead: setup [0-9.]+ s, host [0-9.-]+ s; wall [0-9.]+ s$" "$T/out"
cmp "$T/f1" corpus/smoke/oracle.frame || fail "frame differs from the expected pattern"
ls "$T/cache/d4r-splice/"*.cubin >/dev/null 2>&1 || fail "no image in the cache"

expect_rc 0 "$D4R" run smoke --runs 0
expect_grep "^  jit: [0-9.]+ s \(compiled image from the cache\)$" "$T/out"
expect_grep "^  kernel: 0.2500 ms \(one run\)$" "$T/out"
expect_rc 0 "$D4R" run smoke --runs 0 --no-cache
expect_no_grep "from the cache" "$T/out"

# Not reduced: the broken entry reaches the JIT.
expect_rc 2 "$D4R" run smoke --no-reduce --runs 0
expect_grep "^  error: JIT of '.*smoke.ptx' failed: .*CUDA_ERROR_INVALID_PTX" "$T/out"
expect_grep "^    ptxas application ptx input, line 9; error" "$T/out"
expect_grep "^        9 \| 	bogus.instruction %r1;$" "$T/out"
expect_grep "^d4r-splice: error: .*smoke.ptx: JIT of" "$T/err"

# A differing module: exit 1, where it differs, the image.
expect_rc 1 "$D4R" run smoke --module "$T/wrong.ptx" --runs 0 --diff-image "$T/d.png"
expect_grep "^  oracle: DIFFERS \(expected sha256 $sha\)$" "$T/out"
expect_grep "^  frames differ: 1 byte$" "$T/out"
expect_grep "^  first difference at byte 700 \(output 'out' byte 700, pixel \(15, 10\) channel 0\)$" "$T/out"
expect_grep "^    out: 1 bytes, 1 u8 elements differ; max \|a-b\| 1 at element 700$" "$T/out"
[ "$(head -c 4 "$T/d.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "no PNG written"

# Two modules: frames, the ratio, exit 1 for the differing one.
expect_rc 1 "$D4R" run smoke --module corpus/smoke/smoke.ptx --frame "$T/a" \
	--module "$T/wrong.ptx" --frame "$T/b" --runs 4
expect_grep "^  kernel: median 0.2500 ms, min 0.2500, max 0.2500 over 4 runs; 1.000x the first module$" "$T/out"
expect_rc 1 "$D4R" diff "$T/a" "$T/b" --layer smoke
expect_grep "pixel \(15, 10\) channel 0" "$T/out"

# A fault after the original: its frame and timing stand; exit 2.
expect_rc 2 "$D4R" run smoke --module corpus/smoke/smoke.ptx --frame "$T/g" \
	--module "$T/illegal.ptx" --frame "$T/x" --runs 3 --json
[ -s "$T/g" ] && [ ! -e "$T/x" ] || fail "frames: the original's must be written, the faulting one's not"
python3 - "$T/out" <<'PY' || fail "bad --json output"
import json, sys
j = json.load(open(sys.argv[1]))
a, b = j["modules"]
assert j["status"] == "fault" and j["device"] == "Stand-in H200" and j["sm"] == "90", j
assert a["status"] == "ok" and a["oracle"] == "matches" and a["runs"] == 3, a
assert b["status"] == "fault" and "CUDA_ERROR_ILLEGAL_ADDRESS" in b["message"], b
assert "runs" not in b and "sha256" not in b, b
PY
expect_grep "^d4r-splice: fault: .*illegal.ptx: .*CUDA_ERROR_ILLEGAL_ADDRESS" "$T/err"

# A hang: killed at --timeout, exit 2, in about that time.
t0=$SECONDS
expect_rc 2 "$D4R" run smoke --module "$T/spin.ptx" --runs 0 --timeout 1
[ $((SECONDS - t0)) -lt 10 ] || fail "the hang took $((SECONDS - t0)) s to be reported"
expect_grep "^  hang: no result after [0-9.]+ s in stage 'launch .*spin.ptx' \(limit 1 s\): killed" "$T/out"
