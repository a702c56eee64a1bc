# lib.sh - sourced by tests/cli, tests/corpus and tests/gpu scripts.
# Gives: $D4R (the binary), $TOP (the repo), $T (a scratch dir removed on
# exit), and small assertion helpers that print what was expected.
set -u
TOP=${D4R_TOP:?run through scripts/run-tests}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }
# skip_part REASON : a part of the test cannot run here (no ptxas, no nvcc);
# says so once and the rest of the test runs.  test_done then exits 77
# with every such reason on its last line, so run-tests lists the test as
# skipped with the reason, never as passed.
SKIPPED_PARTS=
skip_part() {
	case "; $SKIPPED_PARTS;" in
	*"; $*;"*) ;; # said already
	*)
		echo "skip: $*"
		SKIPPED_PARTS="${SKIPPED_PARTS:+$SKIPPED_PARTS; }$*"
		;;
	esac
}
# test_done : the end of a test that may have skipped parts: exit 0 when
# every part ran, else 77 with the reasons
test_done() {
	[ -z "$SKIPPED_PARTS" ] || skip "skip: $SKIPPED_PARTS (the rest passed)"
	exit 0
}
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
