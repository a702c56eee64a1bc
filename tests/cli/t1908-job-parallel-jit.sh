#!/usr/bin/env bash
# t1908-job-parallel-jit: the main job JITs the original and the spliced
# module side by side when the cache has neither image, and launches them
# in one process after both JITs, as it times them.  Shown with the CPU
# stand-in driver (smoke-layer.sh): its events file ($D4R_MOCK_EVENTS)
# gets a line per compile's start and end and per launch, with the process
# id, and the module's "// mock: jit-meet 2" makes each compile wait until
# two have started (10 s at most), so JITs side by side both end after both
# began, and JITs one after the other do not.  No time is measured: the
# order of the events is the test.  A signal during the JITs leaves no
# file behind.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
smoke_layer "$T/repo"
stand_in_driver
cd "$T/repo"
echo '// mock: jit-meet 2' >>corpus/smoke/smoke.ptx
# a template the stand-in's JIT refuses ("bogus" in the module's text)
sed 's|// mock: off-by-one|// bogus|' ptx/smoke/mark.ptx >ptx/smoke/bad.ptx
sed 's|"smoke/mark.ptx"|"smoke/bad.ptx"|' recipes/smoke/mark.json >recipes/smoke/bad.json
mkdir -p "$T/tmp"
export TMPDIR="$T/tmp"

# events FILE: checks the order; prints "JIT_PIDS LAUNCH_PID"
events() {
	python3 - "$1" <<'PY' || fail "events out of order: $(tr '\n' ' ' <"$1")"
import sys
ev = [l.split() for l in open(sys.argv[1])]
begins = [i for i, (w, p) in enumerate(ev) if w == "jit-begin"]
ends = [i for i, (w, p) in enumerate(ev) if w == "jit-end"]
launches = [i for i, (w, p) in enumerate(ev) if w == "launch"]
jit_pids = sorted({ev[i][1] for i in begins})
launch_pids = {ev[i][1] for i in launches}
# every JIT began before any ended: they ran side by side
assert len(begins) == len(ends) and max(begins) < min(ends), ev
# one process launches, after every JIT, and it compiled none of them
assert len(launch_pids) == 1 and min(launches) > max(ends), ev
assert not launch_pids & set(jit_pids), ev
print(len(begins), len(jit_pids))
PY
}

# Cold, with the cache: two JITs side by side, each in its own process.
expect_rc 0 env D4R_MOCK_EVENTS="$T/ev1" "$D4R" smoke --phase 1 --runs 3
expect_grep "^smoke phase 1: IDENTICAL" "$T/out"
expect_grep "^  seconds   .*JIT [0-9.]+ \(parallel: original [0-9.]+, spliced [0-9.]+\), " "$T/out"
[ "$(events "$T/ev1")" = "2 2" ] || fail "not two JITs in two processes: $(cat "$T/ev1")"
[ "$(grep -c '^launch ' "$T/ev1")" -eq $((2 * (1 + 3 + 3 + 1))) ] ||
	fail "launches: frame, 3 warm-up and 3 timed runs, frame again, per module"
ls "$T/cache/d4r-splice/"*.cubin >/dev/null 2>&1 || fail "the JIT children filled no cache"

# Warm: no JIT at all, one process, no "parallel".
expect_rc 0 env D4R_MOCK_EVENTS="$T/ev2" "$D4R" smoke --phase 1 --runs 3 --json
python3 - "$T/out" <<'PY' || fail "warm --json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "IDENTICAL", j
assert j["original"]["jit_cached"] and j["spliced"]["jit_cached"], j
assert j["seconds"]["jit_parallel"] is False, j["seconds"]
PY
expect_no_grep "^jit-" "$T/ev2"

# --no-cache: side by side again, through a folder that is gone afterwards;
# the user's cache is not written.
rm -rf "$T/cache"
expect_rc 0 env D4R_MOCK_EVENTS="$T/ev3" "$D4R" smoke --phase 1 --runs 2 --no-cache --json
python3 - "$T/out" <<'PY' || fail "--no-cache --json"
import json, sys
j = json.load(open(sys.argv[1]))
s, o, p = j["seconds"], j["original"], j["spliced"]
assert j["verdict"] == "IDENTICAL", j
assert s["jit_parallel"] is True, s
assert not o["jit_cached"] and not p["jit_cached"], j
assert o["jit_seconds"] > 0 and p["jit_seconds"] > 0, j
assert s["jit_longest"] == max(o["jit_seconds"], p["jit_seconds"]), s
assert o["runs"] == 2 and p["runs"] == 2, j
PY
[ "$(events "$T/ev3")" = "2 2" ] || fail "--no-cache: not two JITs side by side"
[ ! -e "$T/cache" ] || fail "--no-cache wrote the cache: $(ls -R "$T/cache")"
[ -z "$(ls -A "$T/tmp")" ] || fail "left behind: $(ls -A "$T/tmp")"

# One image missing (the original's is cached): one JIT, in the process
# that launches, as before.
"$D4R" smoke --phase 1 --runs 0 >/dev/null 2>&1 || fail "cannot fill the cache"
cp "$T/ev1" "$T/ev4"   # two compiles begun: the stand-in's meet is passed
n=$(wc -l <"$T/ev4")
expect_rc 1 env D4R_MOCK_EVENTS="$T/ev4" "$D4R" smoke --phase 1 --recipe recipes/smoke/mark.json --runs 0
expect_grep "^  seconds   .*JIT [0-9.]+ \(original [0-9.]+ cached, spliced [0-9.]+\), " "$T/out"
tail -n +$((n + 1)) "$T/ev4" | awk '{print $1}' | sort | uniq -c | tr -s ' ' >"$T/counts"
[ "$(awk '$2 == "jit-begin"' "$T/counts")" = " 1 jit-begin" ] || fail "$(cat "$T/counts")"
[ "$(tail -n +$((n + 1)) "$T/ev4" | awk '{print $2}' | sort -u | wc -l)" -eq 1 ] ||
	fail "one image missing: more than one process"

# A spliced module the JIT refuses: the JIT's error, once; the original
# still runs and is timed.
rm -rf "$T/cache"
expect_rc 2 env D4R_MOCK_EVENTS="$T/ev5" "$D4R" smoke --phase 1 --recipe recipes/smoke/bad.json --runs 2 --json
python3 - "$T/out" <<'PY' || fail "JIT error --json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "ERROR", j
assert j["spliced"]["status"] == "error" and "CUDA_ERROR_INVALID_PTX" in j["spliced"]["message"], j
assert j["original"]["status"] == "ok" and j["original"]["runs"] == 2, j
PY
[ "$(grep -c '^jit-begin' "$T/ev5")" -eq 2 ] || fail "the failed JIT ran again: $(cat "$T/ev5")"

# SIGTERM while the JITs run (--no-cache: an image file per module in
# TMPDIR): the command ends by that signal, and no file of ours stays.
sed -i 's|// mock: jit-meet 2|// mock: jit-meet 3|' corpus/smoke/smoke.ptx   # they wait
D4R_MOCK_EVENTS="$T/ev6" "$D4R" smoke --phase 1 --no-cache >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1000); do
	[ "$(grep -c '^jit-begin' "$T/ev6" 2>/dev/null)" = 2 ] && break
	sleep 0.01
done
[ "$(grep -c '^jit-begin' "$T/ev6")" = 2 ] || fail "the JITs did not start: $(cat "$T/ev6")"
[ "$(ls "$T/tmp" | grep -c '^d4r-splice-jit-.*\.cubin$')" = 2 ] ||
	fail "no image file per module during the JITs: $(ls -A "$T/tmp")"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM during the JITs: exit $rc, expected 143"
[ -z "$(ls -A "$T/tmp")" ] || fail "left behind after SIGTERM: $(ls -A "$T/tmp")"
for p in $(awk '$1 == "jit-begin" {print $2}' "$T/ev6"); do   # the JIT children went too
	for _ in $(seq 500); do kill -0 "$p" 2>/dev/null || break; sleep 0.01; done
	! kill -0 "$p" 2>/dev/null || fail "JIT child $p still runs after SIGTERM"
done
