#!/usr/bin/env bash
# t0001-gpu-smoke: a hand-written PTX kernel that writes a known pattern,
# run through a tiny manifest: the frame's bytes, the oracle verdict, the
# module reduction (an unused entry that does not assemble is removed), the
# JIT error report (with --no-reduce it is not), the image cache, --json,
# a differing module (exit 1, where it differs, --diff-image), and two
# modules timed in one run.
. "$D4R_TOP/tests/cli/lib.sh"
command -v python3 >/dev/null || skip "no python3 to build the expected frame"

mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke"
export XDG_CACHE_HOME="$T/cache"
cat >"$T/repo/corpus/smoke/smoke.ptx" <<'PTX'
//
// Hand-written: out[i] = (7 i + k) & 255 for i = global thread index.
//
.version 8.0
.target sm_90
.address_size 64

.visible .entry unused(
	.param .u64 p
)
{
	.reg .b32 %r<2>;
	// Does not assemble: proves the entry is removed before the JIT.
	bogus.instruction.u32 %r1, %r0;
	ret;
}

.visible .entry pattern(
	.param .u64 out,
	.param .u32 k
)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [k];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.u32 %r2, %r3, %r4, %r2;
	mad.lo.u32 %r5, %r2, 7, %r1;
	cvt.u64.u32 %rd2, %r2;
	add.u64 %rd3, %rd1, %rd2;
	st.global.u8 [%rd3], %r5;
	ret;
}
PTX
# The "wrong" module: one byte of the frame differs (thread 700 adds 1).
python3 - "$T/repo/corpus/smoke/smoke.ptx" "$T/wrong.ptx" <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace("\tmad.lo.u32 %r5, %r2, 7, %r1;\n",
              "\tmad.lo.u32 %r5, %r2, 7, %r1;\n"
              "\t{ .reg .pred %p; setp.eq.u32 %p, %r2, 700; @%p add.u32 %r5, %r5, 1; }\n")
open(sys.argv[2], "w").write(s)
PY
python3 -c '
import sys
open(sys.argv[1], "wb").write(bytes(((i * 7 + 90) & 255) for i in range(1024)))
' "$T/repo/corpus/smoke/oracle.frame"
sha=$(sha256sum "$T/repo/corpus/smoke/oracle.frame" | cut -d" " -f1)
# The parameter block is exactly the kernel's 12 bytes (.u64, .u32): the
# driver refuses a larger CU_LAUNCH_PARAM_BUFFER_SIZE with
# CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (seen on the H200, driver 580).
cat >"$T/repo/recipes/smoke/layer.json" <<JSON
{
  "layer": "smoke",
  "module": "smoke/smoke.ptx",
  "entry": "pattern",
  "buffers": {"out": {"size": 1024, "init": {"kind": "fill", "byte": 255}}},
  "launches": [
    {"entry": "pattern", "grid": [4, 1, 1], "block": [256, 1, 1],
     "params": {"size": 12, "fields": [
       {"offset": 0, "kind": "buffer", "buffer": "out"},
       {"offset": 8, "kind": "u32", "value": 90}]}}
  ],
  "frame": [{"name": "out", "buffer": "out", "format": "u8", "width": 16, "height": 16, "channels": 4}],
  "oracle": {"path": "smoke/oracle.frame", "sha256": "$sha"}
}
JSON
cd "$T/repo"

"$D4R" run smoke --runs 5 --frame "$T/f1" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "no CUDA driver" "$T/err"; then
	skip "$(grep -o 'no CUDA driver.*' "$T/err" | head -n 1)"
fi
cat "$T/out" "$T/err"
[ $rc -eq 0 ] || fail "run smoke exited $rc"
expect_grep "^layer smoke on .* \(sm_[0-9]+\), driver [0-9]+" "$T/out"
expect_grep "\(2 entries, 1 removed before the JIT\)" "$T/out"
expect_grep "kernel: median [0-9.]+ ms, min [0-9.]+, max [0-9.]+ over 5 runs" "$T/out"
expect_grep "sha256 $sha -> $T/f1" "$T/out"
expect_grep "oracle: matches" "$T/out"
expect_no_grep "WARNING" "$T/out"
cmp "$T/f1" corpus/smoke/oracle.frame || fail "frame bytes differ from the expected pattern"

# Second run: the compiled image comes from the cache; --no-cache bypasses it.
expect_rc 0 "$D4R" run smoke --runs 0
expect_grep "jit: [0-9.]+ s \(compiled image from the cache\)" "$T/out"
expect_grep "kernel: [0-9.]+ ms \(one run\)" "$T/out"
ls "$T/cache/d4r-splice/"*.cubin >/dev/null || fail "no cubin in the cache"
expect_rc 0 "$D4R" run smoke --runs 0 --no-cache
expect_no_grep "from the cache" "$T/out"

# Unreduced, the broken entry reaches the JIT: exit 2, the log and the PTX line.
expect_rc 2 "$D4R" run smoke --no-reduce --runs 0
cat "$T/out" "$T/err"
expect_grep "error: JIT of '.*smoke.ptx' failed" "$T/out"
expect_grep "^ +[0-9]+ \| [[:space:]]*bogus.instruction.u32 %r1, %r0;" "$T/out"

# JSON.
expect_rc 0 "$D4R" run smoke --runs 3 --json
python3 - "$T/out" "$sha" <<'PY' || fail "bad --json output"
import json, sys
j = json.load(open(sys.argv[1]))
m = j["modules"][0]
assert j["status"] == "ok", j
assert m["status"] == "ok" and m["oracle"] == "matches" and m["runs"] == 3, m
assert m["sha256"] == sys.argv[2] and m["frame_bytes"] == 1024, m
assert m["entries"] == 2 and m["entries_removed"] == 1, m
PY

# A module whose frame differs in one byte: exit 1, where, the diff image.
expect_rc 1 "$D4R" run smoke --module "$T/wrong.ptx" --runs 0 --diff-image "$T/d.png"
cat "$T/out"
expect_grep "oracle: DIFFERS" "$T/out"
expect_grep "frames differ: 1 byte" "$T/out"
expect_grep "first difference at byte 700 \(output 'out' byte 700, pixel \(15, 10\) channel 0\)" "$T/out"
[ "$(head -c 4 "$T/d.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "no PNG written"

# Two modules in one job: both frames, the ratio measured in the same run.
expect_rc 1 "$D4R" run smoke --module corpus/smoke/smoke.ptx --frame "$T/a" \
	--module "$T/wrong.ptx" --frame "$T/b" --runs 10
cat "$T/out"
expect_grep "oracle: matches" "$T/out"
expect_grep "x the first module" "$T/out"
expect_rc 1 "$D4R" diff "$T/a" "$T/b" --layer recipes/smoke/layer.json
expect_grep "pixel \(15, 10\) channel 0" "$T/out"
# Keep the frame for the record when scripts/gpu-run asks.
[ -n "${D4R_GPU_OUT:-}" ] && cp "$T/f1" "$D4R_GPU_OUT/t0001-gpu-smoke.frame"
exit 0
