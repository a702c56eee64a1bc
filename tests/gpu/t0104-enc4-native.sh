#!/usr/bin/env bash
# The native phases of family 1 (recipes/enc4/phase-01..10.json): each
# identical to the oracle, with its kernel time (20 timed runs).
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
R=$TOP/recipes/enc4
"$D4R" check enc4 "$R"/phase-0[1-9].json "$R"/phase-10.json --runs 20 --jobs "$JOBS" \
	--junit "$OUTD/family1.xml" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out" "$T/err"
cp "$T/out" "$OUTD/family1.txt"
[ $rc -eq 0 ] || fail "check exited $rc"
[ "$(count IDENTICAL "$T/out")" -eq 11 ] || fail "expected 11 IDENTICAL lines"
