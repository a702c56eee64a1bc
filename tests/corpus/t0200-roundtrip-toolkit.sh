#!/usr/bin/env bash
# roundtrip: every PTX module of the CUDA toolkit's libraries parses,
# re-emits byte for byte and passes ptx_verify (roundtrip's default), so the
# parser is lossless on the whole real corpus, not just on what we wrote;
# and every opcode in it passes the check templates get (--opcodes: its base
# an instruction of ops.def, every modifier word one of the ISA's), so that
# check flags no real PTX.
# The modules come from scripts/toolkit-corpus (extracted once, then reused);
# they are checked many files per invocation, one invocation per CPU.
. "$D4R_TOP/tests/cli/lib.sh"
dir=$("$TOP/scripts/toolkit-corpus")
rc=$?
[ $rc -eq 77 ] && skip "$dir"
[ $rc -eq 0 ] || fail "scripts/toolkit-corpus failed ($rc)"
find "$dir" -maxdepth 1 -name '*.ptx' -print0 >"$T/files"
n=$(tr -cd '\0' <"$T/files" | wc -c)
[ "$n" -gt 0 ] || fail "no .ptx files in $dir"
bytes=$(find "$dir" -maxdepth 1 -name '*.ptx' -printf '%s\n' | awk '{ s += $1 } END { printf "%d", s }')
jobs=$(nproc 2>/dev/null || echo 2)
t0=$(date +%s.%N)
xargs -0 -P "$jobs" -n 100 "$D4R" roundtrip --opcodes <"$T/files" >"$T/out" 2>"$T/err"
rc=$?
t1=$(date +%s.%N)
if [ $rc -ne 0 ]; then
	echo "--- first failures"
	head -n 40 "$T/err"
	fail "roundtrip failed on $(grep -c '^[^ ].*:[0-9]*:[0-9]*: ' "$T/err") module(s) (xargs exit $rc)"
fi
[ -s "$T/err" ] && { head -n 20 "$T/err"; fail "roundtrip wrote to stderr"; }
awk -v n="$n" -v b="$bytes" -v a="$t0" -v c="$t1" -v j="$jobs" 'BEGIN {
	printf "%d modules, %d bytes (%.1f MiB): all byte-identical and verified in %.1f s on %d jobs\n",
	       n, b, b / 1048576, c - a, j }'
exit 0
