#!/usr/bin/env bash
# t1902-temp-files-signals: temporary files are removed on every exit path.
# SIGINT (to the process group, as Ctrl-C sends it) and SIGTERM (to the
# process alone, as kill and timeout send it) while ptxas checks a spliced
# enc4 module: the command ends by that signal (exit 128+N), and neither
# TMPDIR nor the output's folder holds a file of ours afterwards.  The GPU
# child (the stand-in driver's spinning kernel) is stopped with its parent.
# --no-cache: ptxas runs, whatever an earlier check of the same module kept.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[ -x "$ptxas" ] || skip "no ptxas at $ptxas to interrupt"
# Job control: a background job of a shell without it starts with SIGINT
# ignored, and an ignored signal stays ignored.  A suite started with
# SIGINT ignored (nohup, a background job) gets it back to the default for
# the command under test where env can do that (coreutils 8.31 and later).
set -m
dflt=()
env --default-signal=INT,TERM true 2>/dev/null && dflt=(env --default-signal=INT,TERM)

# descendants PID: every process below PID
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

interrupt() {   # SIGNAL EXIT-STATUS group|process
	local sig=$1 want=$2 how=$3 tmp="$T/tmp-$1" out="$T/out-$1"
	mkdir -p "$tmp" "$out"
	(cd "$TOP" && TMPDIR="$tmp" exec "${dflt[@]}" "$D4R" splice enc4 --phase 8 --check=ptxas --no-cache -q \
		-o "$out/spliced.ptx") &
	local pid=$! i
	for i in $(seq 500); do
		ls "$tmp" | grep -q '^d4r-splice-.*\.ptx$' && break
		sleep 0.02
	done
	ls "$tmp" | grep -q '^d4r-splice-.*\.ptx$' || fail "$sig: no temporary module in TMPDIR while ptxas runs"
	local kids
	kids=$(descendants $pid)
	[ -n "$kids" ] || fail "$sig: ptxas is not running"
	if [ "$how" = group ]; then kill -s "$sig" -- -$pid; else kill -s "$sig" $pid; fi
	wait $pid
	local rc=$?
	[ $rc -eq "$want" ] || fail "$sig: exit status $rc, expected $want (ended by the signal)"
	# ptxas (left running by a signal to the process alone) ends on its own;
	# what it leaves counts too.
	for i in $(seq 1500); do
		local alive=0 k
		for k in $kids; do kill -0 "$k" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.02
	done
	local left
	left=$(ls -A "$tmp" "$out")
	[ -z "$(ls -A "$tmp")" ] || fail "$sig: left in TMPDIR: $(ls -A "$tmp")"
	[ -z "$(ls -A "$out")" ] || fail "$sig: left beside the output: $(ls -A "$out")"
}
interrupt INT 130 group
interrupt TERM 143 process

# The GPU child: SIGTERM to the parent while the child's kernel spins; the
# parent ends by SIGTERM, and the child is gone with it.
stand_in_driver
smoke_layer "$T/repo"
cd "$T/repo"
sed 's|^.version 8.0|// mock: spin\n.version 8.0|' corpus/smoke/smoke.ptx >"$T/spin.ptx"
"$D4R" run smoke --module "$T/spin.ptx" --runs 0 --timeout 60 >"$T/out" 2>"$T/err" &
pid=$!
for i in $(seq 250); do
	child=$(ps -o pid= --ppid $pid | head -n 1)
	[ -n "$child" ] && break
	sleep 0.02
done
[ -n "$child" ] || fail "no GPU child process"
sleep 0.3   # into the launch
kill -s TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || { cat "$T/err"; fail "run: exit status $rc, expected 143"; }
for i in $(seq 150); do kill -0 "$child" 2>/dev/null || break; sleep 0.02; done
if kill -0 "$child" 2>/dev/null; then
	kill -s KILL "$child"
	fail "the GPU child outlived its parent's SIGTERM"
fi
exit 0
