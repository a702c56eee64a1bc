#!/usr/bin/env bash
# The native recipes of phases 1-10 in both forms (recipes/enc4/phase-01..10
# .json, the vendor's instruction, and phase-01..10-f16.json, exact f16):
# each identical to the oracle, with its kernel time (20 timed runs).  All
# 124 recipes: scripts/enc4-native.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
R=$TOP/recipes/enc4
"$D4R" check enc4 "$R"/phase-0[1-9].json "$R"/phase-10.json "$R"/phase-0[1-9]-f16.json \
	"$R"/phase-10-f16.json --runs 20 --jobs "$JOBS" --junit "$OUTD/native-1-10.xml" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out" "$T/err"
cp "$T/out" "$OUTD/native-1-10.txt"
[ $rc -eq 0 ] || fail "check exited $rc"
[ "$(count IDENTICAL "$T/out")" -eq 21 ] || fail "expected 21 IDENTICAL lines"
