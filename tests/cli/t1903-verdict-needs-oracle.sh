#!/usr/bin/env bash
# t1903-verdict-needs-oracle: no verdict without its oracle.  A missing or
# unreadable oracle (the manifest's, or --oracle) and an oracle whose sha256
# is not the manifest's are exit 2 naming the file, before any GPU work, in
# the main job, run and check; nothing is compared with the original's frame
# instead.  With the stand-in driver: IDENTICAL and DIFFERS as measured, and
# an original that does not reproduce the oracle is said to be that (a stale
# oracle or changed inputs), not "spliced frame differs".
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
smoke_layer "$T/repo"
cd "$T/repo"
oracle="$T/repo/corpus/smoke/oracle.frame"

# Without a driver (one that is not there): the oracle is looked at first.
export D4R_LIBCUDA=/nonexistent/libcuda.so.1
before_gpu() {   # PATTERN COMMAND...: exit 2, PATTERN on stderr, no GPU work
	local pat=$1
	shift
	expect_rc 2 "$@"
	expect_grep "$pat" "$T/err"
	expect_no_grep "no CUDA driver|IDENTICAL|compared with" "$T/err"
	expect_no_grep "IDENTICAL" "$T/out"
}
mv "$oracle" "$T/saved.frame"
missing="oracle.path: cannot open '$oracle': No such file or directory"
before_gpu "$missing" "$D4R" smoke --phase 1
before_gpu "$missing" "$D4R" run smoke
before_gpu "$missing" "$D4R" check smoke
before_gpu "^d4r-splice: --oracle: cannot open '$T/none.frame'" "$D4R" smoke --phase 1 --oracle "$T/none.frame"
# an oracle that is there but cannot be read (a directory)
mkdir "$oracle"
before_gpu "oracle.path: .*'$oracle'" "$D4R" smoke --phase 1
rmdir "$oracle"
# an oracle whose sha256 is not the manifest's: an error, not a note
cp "$T/saved.frame" "$oracle"
printf '\001' | dd of="$oracle" bs=1 seek=5 conv=notrunc status=none
disagree="oracle '$oracle' has sha256 [0-9a-f]{64}, but recipes/smoke/layer.json says [0-9a-f]{64}: the oracle file and the manifest disagree"
before_gpu "$disagree" "$D4R" smoke --phase 1
before_gpu "$disagree" "$D4R" run smoke
before_gpu "$disagree" "$D4R" check smoke
cp "$T/saved.frame" "$oracle"

# With the stand-in driver, the verdicts as measured; a missing oracle is
# still exit 2 before the GPU (not IDENTICAL against the original's frame).
stand_in_driver
mv "$oracle" "$T/saved.frame"
before_gpu "$missing" "$D4R" smoke --phase 1 --runs 0
expect_no_grep "Stand-in" "$T/out"
cp "$T/saved.frame" "$oracle"
expect_rc 0 "$D4R" smoke --phase 1 --runs 0
expect_grep "^smoke phase 1: IDENTICAL \(spliced frame = oracle, 1024 bytes, sha256 [0-9a-f]{16}\)$" "$T/out"
# the layer's oracle, inside the current folder: named relative to it (d4r-splice(1), OUTPUTS)
expect_grep "^  oracle    corpus/smoke/oracle.frame$" "$T/out"
expect_grep "^  original  .*\[ok, = oracle\]$" "$T/out"
expect_rc 1 "$D4R" smoke --phase 1 --recipe recipes/smoke/mark.json --runs 0
expect_grep "^smoke phase 1: DIFFERS \(spliced frame differs from the oracle\)$" "$T/out"
expect_grep "first difference at byte 700" "$T/out"
# --oracle names the frame to compare with, as it is
cp "$oracle" "$T/mine.frame"
expect_rc 0 "$D4R" smoke --phase 1 --runs 0 --oracle "$T/mine.frame"
expect_grep "^  oracle    $T/mine.frame$" "$T/out"

# A stale oracle (made with k = 91; the launch passes 90), with its sha256
# in the manifest: the original does not reproduce it, and the headline says
# so for a spliced module that matches the original and for one that does not.
smoke_oracle "$T/repo" 91
stale="^smoke phase 1: ERROR \(the original's frame differs from the oracle '$oracle': a stale oracle or changed inputs; no verdict on the spliced frame\)$"
for r in phase-01 mark; do
	expect_rc 2 "$D4R" smoke --phase 1 --recipe recipes/smoke/$r.json --runs 0
	expect_grep "$stale" "$T/out"
	expect_no_grep "spliced frame differs|IDENTICAL" "$T/out"
	expect_grep "^  original  .*DOES NOT REPRODUCE THE ORACLE\]$" "$T/out"
	expect_grep "^  diff      original vs oracle: frames differ: 1024 bytes$" "$T/out"
done
expect_rc 2 "$D4R" smoke --phase 1 --runs 0 --json
python3 - "$T/out" <<'PY' || fail "--json of a stale oracle"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "ERROR" and j["status"] == "error" and j["exit"] == 2, j
assert "stale oracle" in j["message"], j["message"]
assert j["original"]["identical"] is False, j["original"]
PY
# check: the original's line, and why no verdict can be trusted
expect_rc 2 "$D4R" check smoke
expect_grep "^\(original\) +DIFFERS" "$T/out"
expect_grep "^the original's frame differs from the oracle: a stale oracle or changed inputs" "$T/out"
exit 0
