#!/usr/bin/env bash
# The identity splice of each of the 62 phases of enc4 gives a frame
# identical to the oracle (and the original reproduces it).
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
gen_builtin "$T/r" identity phase
"$D4R" check enc4 "$T"/r/*.json --jobs "$JOBS" --junit "$OUTD/identity.xml" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out" "$T/err"
cp "$T/out" "$OUTD/identity.txt"
[ $rc -eq 0 ] || fail "check exited $rc"
[ "$(count IDENTICAL "$T/out")" -eq 63 ] || fail "expected 63 IDENTICAL lines (62 phases + the original)"
