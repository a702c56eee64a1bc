#!/usr/bin/env bash
# The identity splice of each phase together with its epilogue (every
# temporary of the cut renamed fresh) gives the oracle's frame.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
gen_builtin "$T/r" identity phase+epilogue
"$D4R" check enc4 "$T"/r/*.json --jobs "$JOBS" --force --junit "$OUTD/identity-epilogue.xml" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out" "$T/err"
cp "$T/out" "$OUTD/identity-epilogue.txt"
[ $rc -eq 0 ] || fail "check exited $rc"
[ "$(count IDENTICAL "$T/out")" -eq 63 ] || fail "expected 63 IDENTICAL lines"
