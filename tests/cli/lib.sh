# lib.sh - sourced by tests/cli, tests/corpus and tests/gpu scripts.
# Gives: $D4R (the binary), $TOP (the repo), $T (a scratch dir removed on
# exit), and small assertion helpers that print what was expected.
set -u
TOP=${D4R_TOP:?run through scripts/run-tests}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
# expect_rc N cmd... : runs cmd, output in $T/out and $T/err, checks exit status
expect_rc() {
	local want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	[ "$rc" -eq "$want" ] || {
		echo "--- stdout"; head -c 3000 "$T/out"; echo "--- stderr"; head -c 3000 "$T/err"
		fail "'$*' exited $rc, expected $want"
	}
}
# expect_grep PATTERN FILE : FILE must contain a line matching PATTERN (ERE)
expect_grep() {
	grep -Eq -- "$1" "$2" || { echo "--- $2"; head -c 3000 "$2"; fail "no line matching '$1' in $2"; }
}
expect_no_grep() {
	! grep -Eq -- "$1" "$2" || { echo "--- $2"; head -c 3000 "$2"; fail "unexpected line matching '$1' in $2"; }
}
# toolkit_lib64 : where the CUDA toolkit's libraries are
toolkit_lib64() { echo "${CUDA_HOME:-/usr/local/cuda}/lib64"; }
