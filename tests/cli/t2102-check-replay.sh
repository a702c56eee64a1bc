#!/usr/bin/env bash
# check --replay on the stand-in driver: the recipes replay proves get their
# verdict from it (IDENTICAL, or DIFFERS at the flip fixture's block, warp,
# lane and register as bisect names them, exit 1), their states taken by one
# dump of all the cuts and cached, so a second run and `replay` of one of
# them read the cache; a recipe the plan refuses (a ret inside the cut, on
# the smoke layer) goes to the whole-module check, and the lines say which
# was which.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
stand_in_driver
cd "$TOP" || exit 1
R="recipes/enc4/phase-08.json recipes/enc4/phase-61-f16.json tests/fixtures/bisect/enc4-phase-03-flip.json"
expect_rc 1 "$D4R" check enc4 --replay $R
expect_grep "taking the state of 3 cuts in one dump \(9 records\)" "$T/err"
expect_grep "^phase-08.json +IDENTICAL +replay \(proved\)" "$T/out"
expect_grep "^phase-61-f16.json +IDENTICAL +replay \(proved\)" "$T/out"
expect_grep "^enc4-phase-03-flip.json +DIFFERS +replay: first difference at block \(5,3,0\) warp 2 lane 17 register %r2175: .*, 1 ulp; 1 values differ$" "$T/out"
expect_grep "^replay: 2 identical, 1 differ \(the phase's contract\), 0 left to the whole-module check" "$T/out"
! grep -q "whole-module check of" "$T/out" || fail "a whole-module check ran with every recipe proved"
# the states are cached: no dump the second time, and replay reads them
expect_rc 1 "$D4R" check enc4 --replay $R
! grep -q "taking the state" "$T/err" || fail "the second check dumped again"
expect_rc 0 "$D4R" replay enc4 --phase 61 --variant f16
expect_grep "^state: +cached " "$T/out"

# 40 cuts: two dumps of 20 (at most 32 a dump), every one proved
R40=$(ls recipes/enc4/phase-*.json | head -n 40)
expect_rc 0 "$D4R" check enc4 --replay $R40 --no-cache
[ "$(grep -c 'taking the state of 20 cuts in one dump (60 records)' "$T/err")" -eq 2 ] ||
	fail "40 cuts were not dumped in two batches of 20"
[ "$(grep -Ec '^phase-[0-9]+(-f16)?\.json +IDENTICAL +replay \(proved\)' "$T/out")" -eq 40 ] ||
	fail "not 40 recipes proved"

# a refused recipe: the whole-module check decides
smoke_layer "$T/repo"
cd "$T/repo" || exit 1
"$D4R" recipe new smoke --stmts 10:11 --template identity -o "$T/ret.json" >/dev/null 2>&1 ||
	fail "cannot write the smoke recipe"
expect_rc 0 "$D4R" check smoke --replay recipes/smoke/phase-01.json "$T/ret.json"
expect_grep "^phase-01.json +IDENTICAL +replay \(proved\)" "$T/out"
expect_grep "^ret.json +WHOLE +replay refused: s11 \(line 23\): 'ret' inside the cut.*; the whole-module check decides$" "$T/out"
expect_grep "^whole-module check of the 1 recipes replay did not prove:$" "$T/out"
expect_grep "^ret.json +IDENTICAL +jit " "$T/out"
expect_rc 2 "$D4R" check smoke --replay --json
expect_grep "cannot be used with" "$T/err"
test_done
