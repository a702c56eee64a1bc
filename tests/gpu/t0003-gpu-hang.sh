#!/usr/bin/env bash
# t0003-gpu-hang: a kernel that spins forever is killed at --timeout and
# reported as a hang (exit 2), well before anything else would stop it; a
# module run before it keeps its frame.
. "$D4R_TOP/tests/cli/lib.sh"

mkdir -p "$T/repo/recipes/spin" "$T/repo/corpus/spin"
cat >"$T/repo/corpus/spin/good.ptx" <<'PTX'
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
# Waits for a word of the (zeroed, never written) buffer to become 1.
cat >"$T/spin.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
	.param .u64 out
)
{
	.reg .pred %p;
	.reg .b32 %r<3>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	add.u64 %rd2, %rd1, 1020;
$Lspin:
	ld.volatile.global.u32 %r1, [%rd2];
	setp.ne.u32 %p, %r1, 1;
	@%p bra $Lspin;
	ret;
}
PTX
cat >"$T/repo/recipes/spin/layer.json" <<'JSON'
{
  "layer": "spin", "module": "spin/good.ptx", "entry": "k",
  "buffers": {"out": {"size": 1024, "init": {"kind": "zero"}}},
  "launches": [{"entry": "k", "grid": [1, 1, 1], "block": [255, 1, 1],
                "params": {"size": 8, "fields": [{"offset": 0, "kind": "buffer", "buffer": "out"}]}}],
  "frame": [{"name": "out", "buffer": "out", "format": "u32"}]
}
JSON
cd "$T/repo"

"$D4R" run spin --runs 0 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "no CUDA driver" "$T/err"; then
	skip "$(grep -o 'no CUDA driver.*' "$T/err" | head -n 1)"
fi
[ $rc -eq 0 ] || { cat "$T/out" "$T/err"; fail "the good module exited $rc"; }

t0=$SECONDS
expect_rc 2 "$D4R" run spin --module "$T/spin.ptx" --runs 0 --timeout 3
dt=$((SECONDS - t0))
cat "$T/out" "$T/err"
expect_grep "hang: no result after [0-9.]+ s in stage 'launch .*spin.ptx' \(limit 3 s\): killed" "$T/out"
[ $dt -lt 60 ] || fail "the hang took ${dt}s to be reported"

expect_rc 2 "$D4R" run spin --module corpus/spin/good.ptx --frame "$T/good.frame" \
	--module "$T/spin.ptx" --runs 0 --timeout 3
cat "$T/out" "$T/err"
[ -s "$T/good.frame" ] || fail "the first module's frame was not written"
expect_grep "hang: " "$T/out"
exit 0
