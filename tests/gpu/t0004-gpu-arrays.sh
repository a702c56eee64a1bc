#!/usr/bin/env bash
# t0004-gpu-arrays: CUDA arrays, texture and surface objects, seeded random
# contents: a kernel copies a texture (random f32, seed 5) into a surface
# texel by texel; the frame holds both arrays, rows packed.  The texture
# half must equal the documented generator's values (computed here in
# Python), and the surface half the texture half.
. "$D4R_TOP/tests/cli/lib.sh"
command -v python3 >/dev/null || skip "no python3 to check the generator"

mkdir -p "$T/repo/recipes/arr" "$T/repo/corpus/arr"
cat >"$T/repo/corpus/arr/copy.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64

.visible .entry copy(
	.param .u64 tex,
	.param .u64 surf
)
{
	.reg .b32 %r<6>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [tex];
	ld.param.u64 %rd2, [surf];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	cvt.rn.f32.u32 %f1, %r1;
	cvt.rn.f32.u32 %f2, %r2;
	tex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd1, {%f1, %f2}];
	mov.b32 %r3, %f3;
	shl.b32 %r4, %r1, 2;
	sust.b.2d.b32.trap [%rd2, {%r4, %r2}], {%r3};
	ret;
}
PTX
cat >"$T/repo/recipes/arr/layer.json" <<'JSON'
{
  "layer": "arr", "module": "arr/copy.ptx", "entry": "copy",
  "arrays": {
    "tex0": {"width": 32, "height": 8, "channels": 1, "format": "f32",
             "init": {"kind": "random", "seed": 5, "min": -1.0, "max": 1.0},
             "texture": {"filter": "point", "address": "clamp", "normalized": false}},
    "surf0": {"width": 32, "height": 8, "channels": 1, "format": "f32",
              "init": {"kind": "fill", "byte": 255}, "surface": true}
  },
  "launches": [{"entry": "copy", "grid": [1, 1, 1], "block": [32, 8, 1],
                "params": {"size": 16, "fields": [
                  {"offset": 0, "kind": "texture", "array": "tex0"},
                  {"offset": 8, "kind": "surface", "array": "surf0"}]}}],
  "frame": [{"name": "tex", "array": "tex0"}, {"name": "copy", "array": "surf0"}]
}
JSON
cd "$T/repo"

"$D4R" run arr --runs 3 --frame "$T/f" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "no CUDA driver" "$T/err"; then
	skip "$(grep -o 'no CUDA driver.*' "$T/err" | head -n 1)"
fi
cat "$T/out" "$T/err"
[ $rc -eq 0 ] || fail "run arr exited $rc"
python3 - "$T/f" <<'PY' || fail "frame does not hold the generator's values twice"
import struct, sys
f = open(sys.argv[1], "rb").read()
assert len(f) == 2048, len(f)
M = (1 << 64) - 1
s = 5
want = b""
for i in range(256):
    s = (s + 0x9e3779b97f4a7c15) & M
    z = s
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    z ^= z >> 31
    u = (z >> 11) * 2.0 ** -53
    want += struct.pack("<f", -1.0 + u * 2.0)
assert f[:1024] == want, "texture half differs from the generator"
assert f[1024:] == want, "surface half differs from the texture"
PY
expect_rc 0 "$D4R" diff "$T/f" "$T/f" --layout tex:f32:32x8x1,copy:f32:32x8x1
# Keep the frame for the record when scripts/gpu-run asks.
[ -n "${D4R_GPU_OUT:-}" ] && cp "$T/f" "$D4R_GPU_OUT/t0004-gpu-arrays.frame"
exit 0
