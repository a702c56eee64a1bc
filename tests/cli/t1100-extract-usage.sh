#!/usr/bin/env bash
# extract: usage errors exit 2 with a usage line; --help exits 0.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"

expect_rc 2 "$D4R" extract
expect_grep '^usage: d4r-splice extract' "$T/err"
expect_grep 'no input binary' "$T/err"

sample_ptx k >"$T/k.ptx"
fatbin_ptx "$T/k.ptx" 80 >"$T/k.fatbin"
expect_rc 2 "$D4R" extract "$T/k.fatbin"
expect_grep 'output folder is required' "$T/err"
expect_rc 2 "$D4R" extract "$T/k.fatbin" -o
expect_grep "needs a value" "$T/err"
expect_rc 2 "$D4R" extract --bogus "$T/k.fatbin" -o "$T/o"
expect_grep "unknown option '--bogus'" "$T/err"
expect_rc 2 "$D4R" extract --arch sm_x "$T/k.fatbin" -o "$T/o"
expect_grep "bad architecture" "$T/err"
[ ! -e "$T/o" ] || fail "a usage error created the output folder"

expect_rc 0 "$D4R" extract --help
expect_grep '^usage: d4r-splice extract' "$T/out"

# A file that is not there: error naming it, exit 2.
expect_rc 2 "$D4R" extract "$T/missing" -o "$T/o"
expect_grep "cannot open '.*missing'" "$T/err"
exit 0
