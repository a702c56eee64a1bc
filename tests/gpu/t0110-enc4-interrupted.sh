#!/usr/bin/env bash
# t0110-enc4-interrupted: the main job interrupted during a real JIT.
# SIGINT to the process group (Ctrl-C) and SIGTERM to the tool alone, while
# the child compiles enc4 with an empty image cache: the tool ends by that
# signal (130, 143), the child is gone, and no temporary file is left in
# TMPDIR, in the image cache or in the --keep folder.  (tests/cli/t1902 is
# the same with ptxas and the stand-in driver.)
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
set -m

descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

interrupt() {   # SIGNAL EXIT-STATUS group|process
	local sig=$1 want=$2 how=$3 w="$T/$1"
	mkdir -p "$w/tmp" "$w/cache" "$w/keep"
	(cd "$TOP" && TMPDIR="$w/tmp" XDG_CACHE_HOME="$w/cache" exec "$D4R" enc4 --phase 8 \
		--runs 0 --keep="$w/keep") >"$w/out" 2>"$w/err" &
	local pid=$! i kids=""
	for i in $(seq 500); do
		kids=$(descendants $pid)
		[ -n "$kids" ] && break
		sleep 0.02
	done
	[ -n "$kids" ] || fail "$sig: no GPU child started"
	sleep 1   # into the JIT of the original (seconds, with an empty cache)
	if [ "$how" = group ]; then kill -s "$sig" -- -$pid; else kill -s "$sig" $pid; fi
	wait $pid
	local rc=$?
	cat "$w/out" "$w/err"
	[ $rc -eq "$want" ] || fail "$sig: exit status $rc, expected $want"
	for i in $(seq 250); do
		local alive=0 k
		for k in $kids; do kill -0 "$k" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.02
	done
	[ $alive -eq 0 ] || fail "$sig: the GPU child outlived the tool"
	[ -z "$(ls -A "$w/tmp")" ] || fail "$sig: left in TMPDIR: $(ls -A "$w/tmp")"
	local left
	left=$(find "$w/cache" "$w/keep" -name '*.tmp*')
	[ -z "$left" ] || fail "$sig: temporary files left: $left"
}
interrupt INT 130 group
interrupt TERM 143 process
exit 0
