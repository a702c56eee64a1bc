#!/usr/bin/env bash
# t2003-check-shard: check LAYER --shard I/N runs the I-th of N contiguous
# slices of the layer's recipes sorted by file name, the N slices together
# hold every recipe exactly once, each shard runs the original and writes
# its own JUnit report (suite "... shard I/N", original "(original) shard
# I/N"); bad shards are refused before any work.  On the stand-in driver.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
smoke_layer "$T/repo"
stand_in_driver
cd "$T/repo"
# five recipes; sorted: a b c mark phase-01
for r in c a b; do cp recipes/smoke/phase-01.json recipes/smoke/$r.json; done

# shard I N: the recipe names shard I/N's --json lists, in order
shard() {
	"$D4R" check smoke --shard "$1/$2" --json --junit "$T/junit-$1-of-$2.xml" >"$T/s.json" 2>"$T/err"
	python3 - "$T/s.json" "$1" "$2" <<'PY' || { cat "$T/err"; fail "check --shard $1/$2 --json"; }
import json, sys
d = json.load(open(sys.argv[1]))
i, n = int(sys.argv[2]), int(sys.argv[3])
assert d["shard"] == {"index": i, "count": n}, d["shard"]
assert d["recipes_in_layer"] == 5, d["recipes_in_layer"]
orig = [x for x in d["items"] if x["original"]]
assert len(orig) == 1 and orig[0]["verdict"] == "identical", orig
assert orig[0]["name"] == "(original) shard %d/%d" % (i, n), orig[0]["name"]
print(" ".join(x["name"] for x in d["items"] if not x["original"]))
PY
}
# floor((I-1)*5/N) .. floor(I*5/N), worked out by hand
[ "$(shard 1 2)" = "a.json b.json" ] || fail "shard 1/2: $(shard 1 2)"
[ "$(shard 2 2)" = "c.json mark.json phase-01.json" ] || fail "shard 2/2: $(shard 2 2)"
[ "$(shard 1 3)" = "a.json" ] || fail "shard 1/3: $(shard 1 3)"
[ "$(shard 2 3)" = "b.json c.json" ] || fail "shard 2/3: $(shard 2 3)"
[ "$(shard 3 3)" = "mark.json phase-01.json" ] || fail "shard 3/3: $(shard 3 3)"
[ "$(shard 1 1)" = "a.json b.json c.json mark.json phase-01.json" ] || fail "shard 1/1"
# more shards than recipes: some are empty, and still check the original
[ "$(shard 1 7)" = "" ] || fail "shard 1/7: $(shard 1 7)"
[ "$(shard 7 7)" = "phase-01.json" ] || fail "shard 7/7: $(shard 7 7)"
for i in 1 2 3 4 5 6 7; do shard $i 7; done | tr ' ' '\n' | grep . | sort >"$T/all7"
printf '%s\n' a.json b.json c.json mark.json phase-01.json | cmp -s - "$T/all7" ||
	fail "the 7 shards do not hold every recipe once: $(cat "$T/all7")"

# exit status per shard: mark.json (it differs) is in shard 2/2 only
expect_rc 0 "$D4R" check smoke --shard 1/2
expect_rc 1 "$D4R" check smoke --shard 2/2
expect_grep "^mark.json +DIFFERS" "$T/out"
expect_no_grep "^a.json" "$T/out"
expect_grep "^\(original\) shard 2/2 +IDENTICAL" "$T/out"

# the JUnit reports: one suite per shard, no test case name twice when merged
python3 - "$T"/junit-1-of-2.xml "$T"/junit-2-of-2.xml <<'PY' || fail "the shards' JUnit reports"
import sys, xml.etree.ElementTree as ET
names = []
for k, p in enumerate(sys.argv[1:], 1):
    s = ET.parse(p).getroot()
    assert s.tag == "testsuite" and s.get("name") == "d4r-splice check smoke shard %d/2" % k, s.attrib
    names += [c.get("name") for c in s.iter("testcase")]
    fails = [c.get("name") for c in s.iter("testcase") if c.find("failure") is not None]
    assert fails == ([] if k == 1 else ["mark.json"]), fails
assert sorted(names) == sorted(["(original) shard 1/2", "a.json", "b.json",
                                "(original) shard 2/2", "c.json", "mark.json", "phase-01.json"]), names
PY

# refused before any work
for bad in 0/2 3/2 1/0 2 a/b 1/2x -1/2 +1/2 " 1/2" ""; do
	expect_rc 2 "$D4R" check smoke --shard "$bad"
	expect_grep "option '--shard': '${bad//+/\\+}' is not a shard I/N with 1 <= I <= N" "$T/err"
done
expect_rc 2 "$D4R" check smoke --shard 1/2 --phases 1
expect_grep "option '--shard' cannot be used with '--phases'" "$T/err"
exit 0
