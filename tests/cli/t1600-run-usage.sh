#!/usr/bin/env bash
# t1600-run-usage: run's usage and option errors (exit 2), --help (exit 0).
. "$D4R_TOP/tests/cli/lib.sh"
expect_rc 2 "$D4R" run
expect_grep "^usage: d4r-splice run LAYER" "$T/err"
expect_rc 0 "$D4R" run --help
expect_grep "^usage: d4r-splice run LAYER" "$T/out"
expect_rc 2 "$D4R" run x --bogus
expect_grep "unknown option '--bogus'" "$T/err"
expect_rc 2 "$D4R" run x --runs -1
expect_grep "option '--runs': '-1' is not a whole number in \\[0, 100000\\]" "$T/err"
expect_rc 2 "$D4R" run x --timeout 0
expect_grep "option '--timeout': '0' is not a number of seconds" "$T/err"
expect_rc 2 "$D4R" run x --frame
expect_grep "option '--frame' needs a value" "$T/err"
expect_rc 2 "$D4R" run x y
expect_grep "unexpected argument 'y'" "$T/err"
expect_rc 2 "$D4R" run x --frame a --frame b
expect_grep "2 --frame for 1 module" "$T/err"
cd "$T"
expect_rc 2 "$D4R" run no-such-layer
expect_grep "no layer 'no-such-layer'" "$T/err"
expect_rc 2 "$D4R" run "$T/none/layer.json"
expect_grep "no manifest at '$T/none/layer.json'" "$T/err"
