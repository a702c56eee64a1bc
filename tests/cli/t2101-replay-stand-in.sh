#!/usr/bin/env bash
# replay on the stand-in driver (tests/unit/test_gpu_launch.c's fake
# libcuda): the flow of `replay enc4 --phase 8` - the dump taken once and
# cached beside the image cache, then read from the cache; the proof
# ("replay reproduces the original phase"); IDENTICAL (exit 0); a spliced
# template that makes one value differ (the stand-in flips bit 0 of the
# register the "// mock: probe-flip REG WARP LANE" comment names) is DIFFERS
# (exit 1) at that block, warp, lane and register, 1 value, 1 ulp, the
# warp's block and warp in the block computed here from the launch's
# geometry; a dump that differs from what the original's entry stores (the
# marker in the original module) is INVALID: no verdict, exit 2.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
stand_in_driver
cd "$TOP" || exit 1

expect_rc 0 "$D4R" replay enc4 --phase 8
expect_grep "^state: +dumped " "$T/out"
expect_grep "^proof: +replay reproduces the original phase" "$T/out"
expect_grep "^verdict: +IDENTICAL$" "$T/out"
ls "$XDG_CACHE_HOME"/d4r-splice/replay/*.state >/dev/null 2>&1 || fail "no state in the cache"
expect_rc 0 "$D4R" replay enc4 --phase 8
expect_grep "^state: +cached " "$T/out"
expect_grep "^verdict: +IDENTICAL$" "$T/out"
# a cache file that is not a state of this plan is taken again
for f in "$XDG_CACHE_HOME"/d4r-splice/replay/*.state; do printf 'junk' >"$f"; done
expect_rc 0 "$D4R" replay enc4 --phase 8
expect_grep "^state: +dumped " "$T/out"
expect_rc 0 "$D4R" replay enc4 --phase 8 --no-cache
expect_grep "^state: +dumped " "$T/out"

# the spliced template flips %r2849 in warp 201, lane 17
cp ptx/enc4/phase-08.ptx "$T/flip.ptx"
echo "// mock: probe-flip %r2849 201 17" >>"$T/flip.ptx"
python3 - recipes/enc4/phase-08.json "$T/flip.json" "$T/flip.ptx" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["template"] = "./flip.ptx"
json.dump(r, open(sys.argv[2], "w"))
PY
# 4 warps a block (32x1x4), 11x7 blocks: warp 201 is warp 1 of block 50 = (6,4,0)
expect_rc 1 "$D4R" replay enc4 --recipe "$T/flip.json"
expect_grep "^proof: +replay reproduces the original phase" "$T/out"
expect_grep "^verdict: +DIFFERS: first difference at block \(6,4,0\) warp 1 lane 17 register %r2849: .* vs .*, 1 ulp; 1 values differ$" "$T/out"
expect_grep "^contract: +the phase's end state, bit for bit: stricter than the frame" "$T/out"
expect_grep "^frame: +not checked \(--frame runs the whole-module check of the recipe\)$" "$T/out"
! grep -q "^(original)" "$T/out" || fail "a whole-module check ran without --frame"
# --frame: check's own whole-module run follows; here the stand-in's frame
# is not the layer's oracle, so the frame gets no verdict (exit 2)
expect_rc 2 "$D4R" replay enc4 --recipe "$T/flip.json" --frame
expect_grep "^frame: +the whole-module check of the recipe follows$" "$T/out"
expect_grep "^\(original\) +DIFFERS " "$T/out"
expect_grep "^frame: +no verdict \(the whole-module check failed\)$" "$T/out"
expect_rc 2 "$D4R" replay enc4 --recipe "$T/flip.json" --frame --json
expect_grep "cannot be used with" "$T/err"
expect_rc 2 "$D4R" replay enc4 --phase 8 --plan --frame
expect_rc 1 "$D4R" replay enc4 --recipe "$T/flip.json" --json
python3 - "$T/out" <<'PY' || fail "replay --json of a difference"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "DIFFERS" and d["exit"] == 1 and d["proved"] is True, d
x = d["first_difference"]
assert x["in"] == "register" and x["block"] == [6, 4, 0] and x["warp"] == 1, x
assert x["lane"] == 17 and x["what"] == "%r2849" and x["ulps"] == 1 and x["count"] == 1, x
PY

# a spliced cut that leaves a live-out unwritten: every lane of every warp
# differs (the end slots are cleared before each entry, not the dump's)
sed 's|^// mock: probe-flip.*|// mock: replay-skip %r2850|' "$T/flip.ptx" >"$T/skip.ptx"
sed 's|"./flip.ptx"|"./skip.ptx"|' "$T/flip.json" >"$T/skip.json"
expect_rc 1 "$D4R" replay enc4 --recipe "$T/skip.json"
expect_grep "^verdict: +DIFFERS: first difference at block \(0,0,0\) warp 0 lane 0 register %r2850: .*; $((77 * 4 * 32)) values differ$" "$T/out"

# the dump stores what the original's entry does not: INVALID, no verdict
mkdir -p "$T/corpus"
cp -r corpus/enc4 "$T/corpus/enc4"
echo "// mock: probe-flip %r2849 3 4" >>"$T/corpus/enc4/enc4.ptx"
expect_rc 2 "$D4R" replay enc4 --phase 8 --corpus "$T/corpus"
expect_grep "^proof: +the original's entry does not reproduce the dumped end state: block \(0,0,0\) warp 3 lane 4 register %r2849" "$T/out"
expect_grep "^verdict: +INVALID$" "$T/out"

# the global bytes and the arrays a cut writes are in the proof: the
# stand-in's "// mock: global-write P OFF V" / "surface-write" in a
# function's body write byte V at OFF of the buffer (array) whose address
# (surface object) is at P of the parameter block, and the "dump-" forms
# anywhere in the module do so in a launch of the kernel they name only:
# in the dump, and in no replay entry.
W=tests/fixtures/replay
mkdir -p "$T/wc" "$T/d"
cp -r corpus/enc4 "$T/wc/enc4"
cp -r corpus/enc4 "$T/d/enc4"
# inside phase 62's epilogue, before its surface write (s21667, line
# 46616): byte 10 of surf2 (its object at +128) is 77; inside the cut of
# enc4-phase-60-small.json, before its store (s21137, line 45365): byte
# 100 of 'small' (+56) is 55
python3 - "$T/wc/enc4/enc4.ptx" <<'PY' || fail "cannot mark the writes"
import sys
L = open(sys.argv[1]).read().split("\n")
assert L[46615].startswith("sust.b.2d") and L[45364].startswith("st.global.f32"), (L[46615], L[45364])
L.insert(46615, "// mock: surface-write 128 10 77")
L.insert(45364, "// mock: global-write 56 100 55")
open(sys.argv[1], "w").write("\n".join(L))
PY
for r in enc4-phase-62-epilogue enc4-phase-60-small; do
	expect_rc 0 "$D4R" replay enc4 --recipe $W/$r.json --corpus "$T/wc"
	expect_grep "^proof: +replay reproduces the original phase" "$T/out"
	expect_grep "^verdict: +IDENTICAL$" "$T/out"
done
expect_rc 0 "$D4R" replay enc4 --recipe $W/enc4-phase-62-epilogue.json --corpus "$T/wc"
expect_grep "^state: +cached \(.*, 1 arrays\)" "$T/out"
expect_grep "^proof: +replay reproduces the original phase" "$T/out"
expect_rc 0 "$D4R" replay enc4 --recipe $W/enc4-phase-60-small.json --corpus "$T/wc"
expect_grep "^state: +cached \(.*, 39424 written global bytes\)" "$T/out"
# bytes the launch before the entry's writes (enc4_prepass_kernel), of
# the span and the array the cut writes but not where it writes them: the
# entries start from the state at the launch's start, not the layer's
# initial contents; and bytes the launch after it writes (enc4_frame_kernel):
# the end state is taken when the entry's launch ends.  The proof holds
cp -r "$T/wc/enc4" "$T/pc" && mkdir -p "$T/p" && mv "$T/pc" "$T/p/enc4"
printf '%s\n' "// mock: dump-global-write enc4_prepass_kernel 56 200 33" \
	"// mock: dump-surface-write enc4_prepass_kernel 128 20 44" \
	"// mock: dump-global-write enc4_frame_kernel 56 300 22" \
	"// mock: dump-surface-write enc4_frame_kernel 128 30 11" >>"$T/p/enc4/enc4.ptx"
for r in enc4-phase-62-epilogue enc4-phase-60-small; do
	expect_rc 0 "$D4R" replay enc4 --recipe $W/$r.json --corpus "$T/p"
	expect_grep "^proof: +replay reproduces the original phase" "$T/out"
done
# the same bytes written by the dump's kernel alone: the original's entry
# does not reproduce them, INVALID naming the array (buffer) and the byte
printf '%s\n' "// mock: dump-surface-write cuda_dldn_engine_swin_enc4_kernel 128 10 77" \
	"// mock: dump-global-write cuda_dldn_engine_swin_enc4_kernel 56 100 55" >>"$T/d/enc4/enc4.ptx"
expect_rc 2 "$D4R" replay enc4 --recipe $W/enc4-phase-62-epilogue.json --corpus "$T/d"
expect_grep "^proof: +the original's entry does not reproduce the dumped end state: array 'surf2'\+10: 0x4d vs 0x00; 1 bytes differ$" "$T/out"
expect_grep "^verdict: +INVALID$" "$T/out"
expect_rc 2 "$D4R" replay enc4 --recipe $W/enc4-phase-60-small.json --corpus "$T/d" --json
python3 - "$T/out" <<'PY' || fail "replay --json of a written byte the proof misses"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "INVALID" and d["proved"] is False, d
x = d["first_difference"]
assert x["in"] == "buffer" and x["what"] == "buffer 'small'+100" and x["original"] == "0x37", x
assert x["other"] == "0x00" and x["count"] == 1, x
PY
# check --replay takes those states in one dump: the two INVALID go to
# the whole-module check, phase 8 is proved (the cached states dropped)
rm -rf "$XDG_CACHE_HOME/d4r-splice/replay"
"$D4R" check enc4 --corpus "$T/d" --replay $W/enc4-phase-62-epilogue.json \
	$W/enc4-phase-60-small.json recipes/enc4/phase-08.json >"$T/out" 2>"$T/err"
expect_grep "^replay: +taking the state of 3 cuts in one dump" "$T/err"
expect_grep "^enc4-phase-62-epilogue\.json +WHOLE +replay INVALID \(the original's entry differs from the dump at array 'surf2'\+10: 0x4d vs 0x00" "$T/out"
expect_grep "^enc4-phase-60-small\.json +WHOLE +replay INVALID \(the original's entry differs from the dump at buffer 'small'\+100: 0x37 vs 0x00" "$T/out"
expect_grep "^phase-08\.json +IDENTICAL +replay \(proved\)" "$T/out"

# tests/fixtures/replay's cuts layer (a bar.sync, a whole loop inside the
# cut, a store the facts bound), the flow scripts/gpu-replay runs on the
# GPU: dumped, proved
cd "$TOP/tests/fixtures/replay" || exit 1
for r in barrier loop written; do
	expect_rc 0 "$D4R" replay cuts --recipe recipes/cuts/$r.json
	expect_grep "^proof: +replay reproduces the original phase" "$T/out"
	expect_grep "^verdict: +IDENTICAL$" "$T/out"
done
# the bound is kept: a byte of 'side' (+24) the dump's kernel alone writes
# outside the cut's bytes 0-511 is no part of its end state, one inside is
mkdir -p "$T/cc"
cp -r corpus/cuts "$T/cc/cuts"
echo "// mock: dump-global-write cuts 24 700 9" >>"$T/cc/cuts/cuts.ptx"
expect_rc 0 "$D4R" replay cuts --recipe recipes/cuts/written.json --corpus "$T/cc"
expect_grep "^verdict: +IDENTICAL$" "$T/out"
echo "// mock: dump-global-write cuts 24 500 9" >>"$T/cc/cuts/cuts.ptx"
expect_rc 2 "$D4R" replay cuts --recipe recipes/cuts/written.json --corpus "$T/cc"
expect_grep "^proof: +the original's entry does not reproduce the dumped end state: buffer 'side'\+500: 0x09 vs 0xa5; 1 bytes differ$" "$T/out"
test_done
