#!/usr/bin/env bash
# `d4r-splice bisect` on the H200: where a spliced enc4 first differs.
#
#   1. tests/fixtures/bisect/enc4-phase-03-flip.json: phase 3 as it is plus
#      bit 0 of %r2175 flipped in block (5,3,0), warp 2, lane 17.  Bisect
#      must say DIFFERS (exit 1) at phase 3's end and name that block, warp,
#      lane and register, 1 ulp; the instrumented original's frame must be
#      the oracle (the probes do not change what they observe).
#   2. recipes/enc4/phase-08-f16.json (exact f16), cold (an empty image
#      cache) and warm: IDENTICAL (exit 0, no probe differs), the original
#      = oracle, and the time within the longer JIT + 2 s.  Another recipe
#      in $D4R_BISECT_RECIPE may differ: exit 0 or 1.
# Outputs (text and --json) go to $D4R_GPU_OUT as bisect-*.txt/json.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
export XDG_CACHE_HOME=$T/cache

FLIP="$TOP/tests/fixtures/bisect/enc4-phase-03-flip.json"
"$D4R" bisect enc4 --recipe "$FLIP" >"$T/flip.txt" 2>&1
rc=$?
cat "$T/flip.txt"
cp "$T/flip.txt" "$OUTD/bisect-flip.txt"
[ $rc -eq 1 ] || fail "flip: exit $rc, expected 1 (differs)"
expect_grep "^enc4 bisect \(recipe .*enc4-phase-03-flip.json\): DIFFERS at phase 3 end \(cut s7616-s7639\)$" "$T/flip.txt"
expect_grep "^  original  instrumented frame = oracle" "$T/flip.txt"
expect_grep "^  first     phase 3 end \(cut s7616-s7639\) \(after s7639, line 12416; spliced s7648\): block \(5,3,0\) warp 2 lane 17 register %r2175 \(f16x2\)$" "$T/flip.txt"
expect_grep "^            distance 1 ulp \(low half\)$" "$T/flip.txt"
expect_grep "^  before    2 records identical \(phases 1-2\)$" "$T/flip.txt"
expect_grep "^            phase 3 end \(cut s7616-s7639\) +1 " "$T/flip.txt"
"$D4R" bisect enc4 --recipe "$FLIP" --json >"$T/flip.json" 2>&1
cp "$T/flip.json" "$OUTD/bisect-flip.json"

R=${D4R_BISECT_RECIPE:-$TOP/recipes/enc4/phase-08-f16.json}
name=$(basename "$R" .json)
for run in cold warm; do
	"$D4R" bisect enc4 --recipe "$R" >"$T/$run.txt" 2>&1
	rc=$?
	cat "$T/$run.txt"
	cp "$T/$run.txt" "$OUTD/bisect-$name-$run.txt"
	if [ -z "${D4R_BISECT_RECIPE:-}" ]; then
		[ $rc -eq 0 ] || fail "$name ($run): exit $rc, expected 0 (identical)"
		expect_grep "^enc4 bisect \(recipe .*phase-08-f16\.json\): IDENTICAL \(no probe differs, spliced frame = oracle\)$" "$T/$run.txt"
		expect_grep "^  probes    all 62 records identical$" "$T/$run.txt"
	else
		[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "$name ($run): exit $rc"
	fi
	expect_grep "^  original  instrumented frame = oracle" "$T/$run.txt"
	expect_grep "^  seconds   .*\(longer JIT \+ 2 s = [0-9.]+: met\)$" "$T/$run.txt"
done
"$D4R" bisect enc4 --recipe "$R" --json >"$T/$name.json" 2>&1
cp "$T/$name.json" "$OUTD/bisect-$name.json"
