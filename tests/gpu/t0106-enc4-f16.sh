#!/usr/bin/env bash
# Phase 8 in exact f16 form (recipes/enc4/phase-08-f16.json: each e4m3 mma as
# sm_90 executes it, two m16n8k16 f16 mma and an f16x2 add): identical to the
# oracle, with both kernel times and the diff image if it is not.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
"$D4R" enc4 --phase 8 --variant f16 --diff-image "$OUTD/phase8-f16-diff.png" >"$T/out" 2>&1
rc=$?
cat "$T/out"
cp "$T/out" "$OUTD/phase8-f16.txt"
[ $rc -eq 0 ] || fail "exit $rc"
expect_grep '^enc4 phase 8: IDENTICAL' "$T/out"
expect_grep 'template ptx/enc4/phase-08-f16\.ptx' "$T/out"
