#!/usr/bin/env bash
# What a replay cut may hold, offline: each shape replays (its state plan
# says "possible" and its replay module passes ptxas) or is refused with
# the reason and the statement, never planned as if it replayed.
#   - tests/fixtures/replay (layer cuts, written by hand; cuts.ptx says which
#     region is which): a bar.sync inside (replays), a whole loop inside with
#     a predicate live-in (replays), a cut from the loop's label (its back
#     edge returns to the cut's first statement), one from inside the loop
#     (it holds the back edge, not the header: the loop cut in two, refused
#     when the recipe is read), a live-in address selected between two
#     buffers (cannot be rebased);
#   - the cuts layer's store whose bytes the address facts bound
#     (%ctaid.x x 256 + %tid.x x 4: bytes 0-511 of 'side') replays, and so
#     does its whole-buffer store once nothing else writes the buffer;
#   - enc4: a statement range around a bar.sync replays; phase 60 with its
#     epilogue is refused for its plane scatter (the facts do not bound it,
#     and other epilogues write 'plane': the first is named), its epilogue
#     after the scatter (two bar.sync, shared staging, the store to
#     'small') replays; phase 62 with its epilogue up to its surface write
#     replays (its texture fetches read tex0, which no surface writes: the
#     layer's own contents), and with its surface write too (surf2 taken at
#     the launch's start and compared at the end); with tex0 bound as a
#     surface too the fetches still replay (no statement of the kernel
#     writes it: taken at the launch's start); phase 61 with its epilogue
#     is refused for its surface write through a selp of two objects;
#   - triton-matmul-f16-sm90 (tests/fixtures/foreign/triton): a wgmma group in
#     flight at the cut's start, the loop's body with its back edge, and a
#     cp.async group in flight are refused, naming the statements that
#     `show` prints there.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas

# plan NAME RC RECIPE... : replay --plan of the recipe exits RC, output in $T/NAME
plan() {
	local name=$1 rc=$2
	shift 2
	expect_rc "$rc" "$D4R" replay "$@" --plan
	cp "$T/out" "$T/$name"
}
# emits LAYER RECIPE [--corpus DIR]: the replay module passes ptxas
emits() {
	[ -x "$PTXAS" ] || return 0
	expect_rc 0 "$D4R" replay "$@" --emit "$T/r.ptx" --check=ptxas
	expect_grep "^ptxas: +-arch=sm_[0-9]+: ok" "$T/err"
}

cd "$TOP/tests/fixtures/replay" || exit 1
S=corpus/cuts/cuts.ptx
# the regions are where cuts.ptx says (show's numbering)
expect_rc 0 "$D4R" show "$S" --stmts 20:33
expect_grep "^> s21 .* bar\.sync 0;$" "$T/out"
expect_grep "^> s26 .* fma\.rn\.f32 %f4, " "$T/out"
expect_grep "^> s29 .* @%p2 bra \\\$L__loop;$" "$T/out"
expect_grep "^> s31 .* selp\.b64 %rd8, %rd6, %rd7, %p1;$" "$T/out"

plan barrier 0 cuts --recipe recipes/cuts/barrier.json
expect_grep "^cut: +s20-s23 " "$T/barrier"
expect_grep "^barriers: +2 in the cuts \(whole blocks replay\)$" "$T/barrier"
expect_grep "^shared: +256 bytes per block" "$T/barrier"
expect_grep "^replay: +possible$" "$T/barrier"
emits cuts --recipe recipes/cuts/barrier.json

plan loop 0 cuts --recipe recipes/cuts/loop.json
expect_grep "^cut: +s24-s30 " "$T/loop"
expect_grep "^  %p1 +pred +original, spliced" "$T/loop"
expect_grep "^replay: +possible$" "$T/loop"
emits cuts --recipe recipes/cuts/loop.json

plan label 1 cuts --recipe recipes/cuts/loop-label.json
expect_grep "^s29 \(line 67\): a loop back edge to the cut's first statement \('\\\$L__loop'\): the state at the cut's start would be taken on every iteration; start the cut before the loop's label" "$T/label"
expect_rc 2 "$D4R" replay cuts --recipe recipes/cuts/loop-label.json --emit "$T/never.ptx"
[ ! -e "$T/never.ptx" ] || fail "a refused cut wrote its replay module"

# a cut that holds the loop's back edge but not its header cuts the loop
# in two: refused when the recipe is read (exit 2), before any plan
plan inside 2 cuts --recipe recipes/cuts/loop-inside.json
expect_grep "cut\.stmts: the cut s27\.\.s30 cuts a loop in two: it holds s27 of the loop s26\.\.s29 but not s26" "$T/err"
expect_grep "cuts\.ptx:67:2: the loop's back edge s29 '@%p2 bra \\\$L__loop;'" "$T/err"

plan bases 1 cuts --recipe recipes/cuts/two-bases.json
expect_grep "^s31 \(line 69\): live-in '%rd8' cannot be rebased: this statement selects between values of different bases$" "$T/bases"
expect_grep "^s32 \(line 70\): a global read whose address the facts cannot place in one launch buffer" "$T/bases"
expect_rc 1 "$D4R" replay cuts --recipe recipes/cuts/two-bases.json --plan --json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["replayable"] is False and len(d["refused"]) == 3, d["refused"]
assert any("%rd8" in r for r in d["refused"]), d["refused"]' "$T/out" || fail "two-bases: the JSON's refusals"

# a store the facts bound: %ctaid.x (0-1) x 256 + %tid.x (0-63) x 4 + 4
# bytes: 0-511 of 'side'; nothing else of the kernel writes 'side'
plan written 0 cuts --recipe recipes/cuts/written.json
expect_grep "^written: +buffer 'side' bytes 0-$((1 * 256 + 63 * 4 + 4 - 1)) \(512 bytes, bounded by the address facts; s42\)" "$T/written"
expect_grep "^replay: +possible$" "$T/written"
emits cuts --recipe recipes/cuts/written.json
# the store to 'out' (s34) has a thread index the facts do not bound
# (%ctaid.x x %ntid.x): the whole buffer, which nothing else writes
"$D4R" recipe new cuts --stmts 34:34 --template identity -o "$T/out34.json" >/dev/null 2>&1 ||
	fail "cannot write the recipe of s34"
plan out34 0 cuts --recipe "$T/out34.json"
expect_grep "^written: +buffer 'out' bytes 0-511 \(512 bytes, the whole buffer; s34\)" "$T/out34"

# enc4
cd "$TOP" || exit 1
expect_rc 0 "$D4R" show corpus/enc4/enc4.ptx --stmts 11968:11968
expect_grep "^> s11968 .* bar\.sync 0;$" "$T/out"
"$D4R" recipe new enc4 --stmts 11960:11970 --template identity -o "$T/bar.json" >/dev/null 2>&1 ||
	fail "cannot write the enc4 recipe around s11968"
plan e4bar 0 enc4 --recipe "$T/bar.json"
expect_grep "^barriers: +2 in the cuts" "$T/e4bar"
expect_grep "^replay: +possible$" "$T/e4bar"
emits enc4 --recipe "$T/bar.json"
P60=tests/fixtures/replay/enc4-phase-60-epilogue.json
plan e4p60 1 enc4 --recipe "$P60"
expect_grep "^cut: +s19737-s21137 " "$T/e4p60"
expect_grep "^barriers: +4 in the cuts" "$T/e4p60"
expect_grep "^global: .*compared whole at the end: plane small$" "$T/e4p60"
expect_grep "^written: +buffer 'plane' bytes 0-65945599 \(65945600 bytes, the whole buffer; s19821\)" "$T/e4p60"
expect_grep "^refused: +1 reasons$" "$T/e4p60"
expect_grep "^s987 \(line 2001\): writes bytes of buffer 'plane' the cut writes too, outside the cut \(and 9 more\)" "$T/e4p60"
expect_rc 0 "$D4R" show corpus/enc4/enc4.ptx --stmts 987:987
expect_grep "^> s987 .* st\.global\.v4\.u32 \[%rd741\+102400\]" "$T/out"
P60S=tests/fixtures/replay/enc4-phase-60-small.json
plan e4p60s 0 enc4 --recipe "$P60S"
expect_grep "^cut: +s19831-s21137 " "$T/e4p60s"
expect_grep "^written: +buffer 'small' bytes 0-39423 \(39424 bytes, the whole buffer; s21137\)" "$T/e4p60s"
expect_grep "^replay: +possible$" "$T/e4p60s"
emits enc4 --recipe "$P60S"
P62E=tests/fixtures/replay/enc4-phase-62-epilogue.json
plan e4p62 0 enc4 --recipe "$P62E"
expect_grep "^cut: +s21335-s21667 " "$T/e4p62"
# surf2: 40 x 23 texels of 4 f16 channels
expect_grep "^array: +surf2 \($((40 * 23 * 4 * 2)) bytes\): taken at the launch's start, written by the cut: compared at the end$" "$T/e4p62"
expect_grep "^replay: +possible$" "$T/e4p62"
expect_rc 0 "$D4R" replay enc4 --recipe "$P62E" --plan --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["arrays_out"] == ["surf2"] and d["arrays_in"] == ["surf2"] and d["written"] == [], d["arrays_out"]' "$T/out" ||
	fail "the phase 62 epilogue's plan JSON"
emits enc4 --recipe "$P62E"
"$D4R" recipe new enc4 --phase 61 --cut phase+epilogue --template identity -o "$T/p61.json" \
	--force >/dev/null 2>&1 || fail "cannot write the recipe of phase 61 with its epilogue"
plan e4p61 1 enc4 --recipe "$T/p61.json"
expect_grep "^refused: +2 reasons$" "$T/e4p61"
expect_grep "^s21239 \(line 45949\): a surface access replay cannot place: its object is no surface field of the launch$" "$T/e4p61"
expect_rc 0 "$D4R" show corpus/enc4/enc4.ptx --stmts 21239:21239
expect_grep "^> s21239 .* sust\.b\.2d\.v2\.b32\.zero \[%rd2874, " "$T/out"
expect_rc 0 "$D4R" show corpus/enc4/enc4.ptx --stmts 21376:21376
expect_grep "^> s21376 .* tex\.2d\.v4\.f32\.f32 .*\[%rd2875, " "$T/out"
P62=tests/fixtures/replay/enc4-phase-62-textures.json
plan e4p62t 0 enc4 --recipe "$P62"
expect_grep "^cut: +s21335-s21665 " "$T/e4p62t"
expect_grep "^textures: +tex0 \(no surface is bound to it: the layer's contents at every cut\)$" "$T/e4p62t"
expect_rc 0 "$D4R" replay enc4 --recipe "$P62" --plan --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["textures"] == ["tex0"] and d["replayable"] is True, d["textures"]' "$T/out" ||
	fail "the textures fixture's plan JSON"
expect_grep "^replay: +possible$" "$T/e4p62t"
emits enc4 --recipe "$P62"
# the same fetches when tex0 is a surface too: no statement of the kernel
# writes it (no field of the launch is its surface), so it is taken at the
# launch's start (an earlier launch may write it)
enc4_zero_layer "$T/e4s"
python3 - "$T/e4s/recipes/enc4/layer.json" <<'PY' || fail "cannot bind tex0 as a surface"
import json, sys
d = json.load(open(sys.argv[1]))
d["arrays"]["tex0"]["surface"] = True
json.dump(d, open(sys.argv[1], "w"))
PY
(cd "$T/e4s" && "$D4R" replay enc4 --recipe "$TOP/$P62" --plan) >"$T/e4s.out" 2>&1
[ $? -eq 0 ] || { cat "$T/e4s.out"; fail "the texture fetches of an array bound as a surface did not replay"; }
expect_grep "^array: +tex0 \([0-9]+ bytes\): taken at the launch's start, read$" "$T/e4s.out"

# triton's sm_90 matmul: wgmma and cp.async groups across its loop
W=$T/tri
L=triton-matmul-f16-sm90
mkdir -p "$W/recipes" && cp -r tests/fixtures/foreign/triton "$W/corpus" && cp -r "$W/corpus/$L" "$W/recipes/$L" ||
	fail "cannot set up the triton layer"
cd "$W" || exit 1
C=(--corpus "$W/corpus")
expect_rc 0 "$D4R" show "corpus/$L.ptx" --stmts 321:321
expect_grep "^> s321 .* wgmma\.mma_async" "$T/out"
expect_rc 0 "$D4R" show "corpus/$L.ptx" --stmts 346:346
expect_grep "^> s346 .* wgmma\.wait_group\.sync\.aligned 1;$" "$T/out"
expect_rc 0 "$D4R" show "corpus/$L.ptx" --stmts 406:406
expect_grep "^> s406 .* @%p5 bra \\\$L__BB0_1;$" "$T/out"
for c in wait:346:346 body:303:406; do
	"$D4R" recipe new "$L" "${C[@]}" --stmts "${c#*:}" --template identity -o "$W/${c%%:*}.json" \
		>/dev/null 2>&1 || fail "cannot write the triton recipe $c"
done
plan wait 1 "$L" "${C[@]}" --recipe "$W/wait.json"
expect_grep "^s321 \(line 441\): a wgmma group in flight at the cut's start: no 'wgmma\.wait_group 0' between this wgmma and s346" "$T/wait"
expect_grep "^s69 \(line 115\): an asynchronous copy in flight at the cut's start" "$T/wait"
plan body 1 "$L" "${C[@]}" --recipe "$W/body.json"
expect_grep "^s406 \(line 582\): a loop back edge to the cut's first statement \('\\\$L__BB0_1'\)" "$T/body"
expect_grep "^s369 \(line 512\): an asynchronous copy inside the cut$" "$T/body"
expect_grep "^s404 \(line 580\): live-in '%rd108' cannot be rebased: this statement reads it where definitions of different bases reach it" "$T/body"
test_done
