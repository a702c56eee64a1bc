#!/usr/bin/env bash
# t0005-gpu-dynamic-shared: a launch with more than 48 KB of dynamic shared
# memory (opted in with cuFuncSetAttribute) and "repeat": each thread
# writes a word at the far end of 64 KB of shared memory, reads it back and
# adds it to its output word; three repeats leave 3 * tid.
. "$D4R_TOP/tests/cli/lib.sh"
command -v python3 >/dev/null || skip "no python3 to build the expected frame"

mkdir -p "$T/repo/recipes/shm" "$T/repo/corpus/shm"
cat >"$T/repo/corpus/shm/shm.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64

.extern .shared .align 16 .b8 dyn[];

.visible .entry k(
	.param .u64 out
)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, dyn;
	shl.b32 %r3, %r1, 2;
	add.u32 %r4, %r2, %r3;
	add.u32 %r4, %r4, 64512;
	st.shared.u32 [%r4], %r1;
	bar.sync 0;
	ld.shared.u32 %r5, [%r4];
	mul.wide.u32 %rd2, %r1, 4;
	add.u64 %rd3, %rd1, %rd2;
	ld.global.u32 %r6, [%rd3];
	add.u32 %r6, %r6, %r5;
	st.global.u32 [%rd3], %r6;
	ret;
}
PTX
python3 -c '
import struct, sys
open(sys.argv[1], "wb").write(b"".join(struct.pack("<I", 3 * i) for i in range(256)))
' "$T/repo/corpus/shm/oracle.frame"
sha=$(sha256sum "$T/repo/corpus/shm/oracle.frame" | cut -d" " -f1)
cat >"$T/repo/recipes/shm/layer.json" <<JSON
{
  "layer": "shm", "module": "shm/shm.ptx", "entry": "k",
  "buffers": {"out": {"size": 1024, "init": {"kind": "zero"}}},
  "launches": [{"entry": "k", "grid": [1, 1, 1], "block": [256, 1, 1],
                "dynamic_shared_bytes": 65536, "repeat": 3,
                "params": {"size": 8, "fields": [{"offset": 0, "kind": "buffer", "buffer": "out"}]}}],
  "frame": [{"name": "out", "buffer": "out", "format": "u32", "width": 256, "height": 1}],
  "oracle": {"path": "shm/oracle.frame", "sha256": "$sha"}
}
JSON
cd "$T/repo"

"$D4R" run shm --runs 5 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "no CUDA driver" "$T/err"; then
	skip "$(grep -o 'no CUDA driver.*' "$T/err" | head -n 1)"
fi
cat "$T/out" "$T/err"
[ $rc -eq 0 ] || fail "run shm exited $rc"
expect_grep "oracle: matches" "$T/out"
# Inputs are reset before every run: the frame does not drift across runs.
expect_no_grep "WARNING" "$T/out"
exit 0
