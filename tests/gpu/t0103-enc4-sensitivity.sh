#!/usr/bin/env bash
# The oracle check has teeth: for each of the 62 phases, a recipe that adds
# 1.0 to one accumulator of its first mma (the built-in perturb template)
# gives a frame that differs from the oracle.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
gen_builtin "$T/r" perturb phase
"$D4R" check enc4 "$T"/r/*.json --jobs "$JOBS" --junit "$OUTD/sensitivity.xml" >"$T/out" 2>"$T/err"
rc=$?
cat "$T/out" "$T/err"
cp "$T/out" "$OUTD/sensitivity.txt"
[ $rc -eq 1 ] || fail "check exited $rc, expected 1 (differs)"
[ "$(count DIFFERS "$T/out")" -eq 62 ] || fail "expected 62 DIFFERS lines"
grep -q '^(original) *IDENTICAL' "$T/out" || fail "the original must reproduce the oracle"
