#!/usr/bin/env bash
# t2008-run-tests: scripts/run-tests on a tree of its own (a copy of the
# script, tests written here): several tests at a time (two tests that each
# wait for the other pass with -j 2), the lines in the listing's order
# whatever order the tests end in, a failing test's whole output under its
# line, the summary line alone and exact, the exit status; a test or a few
# by name, an unknown name refused; the longest test of the last run
# (BUILD/test-times) started first.
. "$D4R_TOP/tests/cli/lib.sh"
R=$T/repo
mkdir -p "$R/scripts" "$R/tests/cli" "$R/build/tests"
cp "$TOP/scripts/run-tests" "$R/scripts/"
L=$T/started
# t0001 and t0002 meet: each writes its mark and waits (up to 30 s) for
# the other's; run one at a time, the first gives up and fails
meet() {
	cat >"$R/tests/cli/$1.sh" <<EOF
echo "$1" >>"$L"
touch "$T/$1.mark"
for i in \$(seq 300); do [ -f "$T/$2.mark" ] && exit 0; sleep 0.1; done
echo "$1: $2 never started"
exit 1
EOF
}
meet t0001-a t0002-b
meet t0002-b t0001-a
# t0003 ends last of all (it waits for t0004's mark), and is listed before it
cat >"$R/tests/cli/t0003-last.sh" <<EOF
echo t0003-last >>"$L"
for i in \$(seq 300); do [ -f "$T/t0004-fail.mark" ] && exit 0; sleep 0.1; done
exit 1
EOF
# t0004 fails with 100 lines of output; t0005 skips with its reason
cat >"$R/tests/cli/t0004-fail.sh" <<EOF
echo t0004-fail >>"$L"
for i in \$(seq 100); do echo "line \$i"; done
touch "$T/t0004-fail.mark"
exit 3
EOF
printf 'echo t0005-skip >>"%s"\necho "no widget here"\nexit 77\n' "$L" >"$R/tests/cli/t0005-skip.sh"

expect_rc 1 "$R/scripts/run-tests" -j 2 "$R/build" cli
sed 's/ *[0-9]*s$//' "$T/out" | grep -v '^      | ' >"$T/lines"
cat >"$T/want" <<'EOF'
ok    cli/t0001-a
ok    cli/t0002-b
ok    cli/t0003-last
FAIL  cli/t0004-fail                                   (exit 3)
skip  cli/t0005-skip                                   no widget here
3 passed, 1 failed, 1 skipped
EOF
diff -u "$T/want" "$T/lines" || fail "the lines are not the listing's, or the summary is not exact"
[ "$(grep -c '^      | line [0-9]*$' "$T/out")" -eq 100 ] || fail "not the failing test's whole output"
grep -A100 '^FAIL  cli/t0004' "$T/out" | sed -n 2,101p | grep -vq '^      | line ' && fail "the output is not under the failing test's line"
tail -n 1 "$T/out" | grep -qx "3 passed, 1 failed, 1 skipped" || fail "the summary is not the last line"

# the last run's times: the longest starts first (one at a time here, so
# the start order shows); t0001/t0002 cannot meet one at a time: left out
rm -f "$T"/*.mark "$L" "$R/tests/cli/t0001-a.sh" "$R/tests/cli/t0002-b.sh"
grep -q 'cli/t0005-skip' "$R/build/test-times" || fail "no test-times written"
printf '50 cli/t0004-fail\n1 cli/t0003-last\n' >"$R/build/test-times"
expect_rc 1 "$R/scripts/run-tests" -j 1 "$R/build" t0003 t0004
[ "$(head -n 1 "$L")" = t0004-fail ] || fail "the longest test of the last run did not start first: $(tr '\n' ' ' <"$L")"
expect_grep '^ok    cli/t0003-last ' "$T/out"
tail -n 1 "$T/out" | grep -qx '1 passed, 1 failed' || fail "t0003 t0004: $(tail -n 1 "$T/out")"
grep -q t0005 "$L" && fail "a test not named ran"

# by name; an unknown one
expect_rc 0 "$R/scripts/run-tests" "$R/build" cli/t0005
tail -n 1 "$T/out" | grep -qx '0 passed, 0 failed, 1 skipped' || fail "cli/t0005: $(tail -n 1 "$T/out")"
expect_rc 2 "$R/scripts/run-tests" "$R/build" t9999
expect_grep "no test named 't9999'" "$T/err"
expect_rc 2 "$R/scripts/run-tests" -j 0 "$R/build" cli
D4R_TEST_JOBS=x expect_rc 2 "$R/scripts/run-tests" "$R/build" cli
exit 0
