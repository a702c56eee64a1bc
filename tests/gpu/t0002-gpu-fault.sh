#!/usr/bin/env bash
# t0002-gpu-fault: a kernel that faults (illegal address; misaligned
# address) is reported as a fault with the CUDA error, exit 2, and the
# tool does not crash; a module run before it in the same job keeps its
# frame and verdict.
. "$D4R_TOP/tests/cli/lib.sh"

mkdir -p "$T/repo/recipes/iso" "$T/repo/corpus/iso"
cat >"$T/repo/corpus/iso/good.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
	.param .u64 out
)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd2, %r1, 4;
	add.u64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r1;
	ret;
}
PTX
# Stores to address 16: illegal.
sed 's/add.u64 %rd3, %rd1, %rd2;/mov.u64 %rd3, 16;/' "$T/repo/corpus/iso/good.ptx" >"$T/illegal.ptx"
# Stores a u32 one byte past an aligned address: misaligned.
sed 's/add.u64 %rd3, %rd1, %rd2;/add.u64 %rd3, %rd1, %rd2;\n\tadd.u64 %rd3, %rd3, 1;/' \
	"$T/repo/corpus/iso/good.ptx" >"$T/misaligned.ptx"
printf '' >"$T/empty"
cat >"$T/repo/recipes/iso/layer.json" <<'JSON'
{
  "layer": "iso", "module": "iso/good.ptx", "entry": "k",
  "buffers": {"out": {"size": 1024, "init": {"kind": "zero"}}},
  "launches": [{"entry": "k", "grid": [1, 1, 1], "block": [256, 1, 1],
                "params": {"size": 8, "fields": [{"offset": 0, "kind": "buffer", "buffer": "out"}]}}],
  "frame": [{"name": "out", "buffer": "out", "format": "u32"}]
}
JSON
cd "$T/repo"

"$D4R" run iso --runs 0 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "no CUDA driver" "$T/err"; then
	skip "$(grep -o 'no CUDA driver.*' "$T/err" | head -n 1)"
fi
cat "$T/out" "$T/err"
[ $rc -eq 0 ] || fail "the good module exited $rc"

expect_rc 2 "$D4R" run iso --module "$T/illegal.ptx" --runs 0
cat "$T/out" "$T/err"
expect_grep "fault: .*CUDA_ERROR_ILLEGAL_ADDRESS" "$T/out"
expect_grep "^d4r-splice: fault: " "$T/err"

expect_rc 2 "$D4R" run iso --module "$T/misaligned.ptx" --runs 0
cat "$T/out" "$T/err"
expect_grep "fault: .*CUDA_ERROR_MISALIGNED_ADDRESS" "$T/out"

# Original first, then the faulting one: the original's frame stands.
expect_rc 2 "$D4R" run iso --module corpus/iso/good.ptx --frame "$T/good.frame" \
	--module "$T/illegal.ptx" --frame "$T/bad.frame" --runs 5 --json
cat "$T/out" "$T/err"
[ -s "$T/good.frame" ] || fail "the original's frame was not written"
[ ! -e "$T/bad.frame" ] || fail "a frame was written for the faulting module"
python3 - "$T/out" <<'PY' || fail "bad --json output"
import json, sys
j = json.load(open(sys.argv[1]))
a, b = j["modules"]
assert j["status"] == "fault", j
assert a["status"] == "ok" and a["frame_bytes"] == 1024, a
assert a["runs"] == 5, a   # timed again without the faulting module
assert b["status"] == "fault" and "ILLEGAL_ADDRESS" in b["message"], b
PY
exit 0
