#!/usr/bin/env bash
# Phase 8 as WMMA-style f16 k16 steps (recipes/enc4/phase-08-wmma.json): not
# bit-exact by construction; its verdict, diff statistics and diff image are
# reported as they are.  Fails only on an error (exit 2).
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
"$D4R" enc4 --phase 8 --recipe "$TOP/recipes/enc4/phase-08-wmma.json" \
	--diff-image "$OUTD/phase8-wmma-diff.png" >"$T/out" 2>&1
rc=$?
cat "$T/out"
cp "$T/out" "$OUTD/phase8-wmma.txt"
[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "exit $rc"
