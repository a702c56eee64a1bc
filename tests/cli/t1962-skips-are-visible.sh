#!/usr/bin/env bash
# A test whose part needs ptxas or nvcc does not pass where the tool is
# missing: it runs the rest, then exits 77 with the reason on its last line
# (what scripts/run-tests prints for a skip).  Here the tests that have such
# parts run against a toolkit folder with neither tool (t1104 gets the
# toolkit's fatbinary, which its first part needs).
. "$D4R_TOP/tests/cli/lib.sh"
none=$T/cuda
mkdir -p "$none/bin" || exit 1
real=${CUDA_HOME:-/usr/local/cuda}
[ -x "$real/bin/fatbinary" ] && ln -s "$real/bin/fatbinary" "$none/bin/fatbinary"

# skipped T WHAT : test T exits 77 and its last line names the missing WHAT
skipped() {
	CUDA_HOME=$none bash "$TOP/tests/cli/$1.sh" >"$T/o" 2>&1
	local rc=$?
	[ $rc -eq 77 ] || { tail -n 20 "$T/o"; fail "$1 without $2: exit $rc, expected 77 (skip)"; }
	tail -n 1 "$T/o" | grep -Eq "^skip: no $none/bin/$2, .*\(the rest passed\)$" ||
		fail "$1 without $2: the last line does not give the reason: $(tail -n 1 "$T/o")"
}
skipped t1200-splice-golden ptxas
skipped t1202-recipe-new-check ptxas
skipped t1204-recipe-native ptxas
[ -e "$none/bin/fatbinary" ] && skipped t1104-extract-compressed nvcc
exit 0
