#!/usr/bin/env bash
# t2004-progress-streaming: the progress line (done/total, elapsed; the
# wait for a GPU child) is drawn on standard error when it is a terminal and
# never into a pipe or a file; standard output on a pipe is line-buffered, so each line reaches
# the reader while the command is still working.
. "$D4R_TOP/tests/cli/lib.sh"
cd "$TOP"
R=(recipes/enc4/phase-0[1-6].json)

# Not a terminal: no carriage return, no escape sequence on stderr.
expect_rc 0 "$D4R" recipe check "${R[@]}"
if grep -q $'\r\|\033' "$T/err"; then fail "recipe check drew a progress line into a file"; fi
expect_grep "^6 recipes, 0 failed$" "$T/err"
"$D4R" recipe check "${R[@]}" 2>&1 >/dev/null | cat >"$T/piped"
if grep -q $'\r\|\033' "$T/piped"; then fail "recipe check drew a progress line into a pipe"; fi

# A terminal (script(1) gives the command one): the line is drawn, with
# the count, and erased before the command ends.
if command -v script >/dev/null; then
	script -qec "'$D4R' recipe check ${R[*]} >/dev/null" "$T/tty" >/dev/null 2>&1 ||
		fail "recipe check under script(1): exit $?"
	grep -aEq $'recipe check: [0-6]/6 recipes, [0-9]+ s' "$T/tty" ||
		{ od -c "$T/tty" | head; fail "no progress line on a terminal"; }
	grep -aq $'\r\033\[K' "$T/tty" || fail "the progress line is not drawn in place"
	grep -aq "6 recipes, 0 failed" "$T/tty" || fail "the summary is missing on the terminal"
else
	echo "no script(1): the terminal case is not checked"
fi

# The main job's wait for its GPU children, on a terminal only (the
# stand-in driver: its JIT takes no time, the start is what is seen).
if command -v script >/dev/null; then
	. "$TOP/tests/cli/smoke-layer.sh"
	smoke_layer "$T/repo"
	stand_in_driver
	(cd "$T/repo" && script -qec "'$D4R' smoke --phase 1 --runs 0 --no-cache >/dev/null" "$T/tty2" >/dev/null 2>&1) ||
		fail "the main job under script(1)"
	grep -aq $'\r\033\[Kstarting the GPU 0 s' "$T/tty2" || { od -c "$T/tty2" | head; fail "no wait line on a terminal"; }
	(cd "$T/repo" && "$D4R" smoke --phase 1 --runs 0 --no-cache) >/dev/null 2>"$T/err2" || fail "the main job"
	if grep -q $'\r\|\033' "$T/err2"; then fail "the main job drew its wait into a file"; fi
fi

# Line-buffered on a pipe: roundtrip's first lines arrive while it still
# waits for its last input (a FIFO nobody has opened for writing yet).
mkfifo "$T/in" "$T/out.fifo"
"$D4R" roundtrip --stats tests/fixtures/ana/k.ptx "$T/in" >"$T/out.fifo" 2>/dev/null &
pid=$!
exec 3<"$T/out.fifo"
read -r -t 20 -u 3 head || { kill $pid; fail "no header line while the command runs"; }
read -r -t 20 -u 3 line || { kill $pid; fail "no line for the first file while the command runs"; }
: >"$T/in"   # the last input: empty, an error
wait $pid
exec 3<&-
case $head in file*bytes*result) ;; *) fail "unexpected header: $head" ;; esac
case $line in k.ptx*identical) ;; *) fail "unexpected first line: $line" ;; esac
exit 0
