#!/usr/bin/env bash
# check --replay on the stand-in driver: the recipes replay proves IDENTICAL
# get their verdict from it and are not run again; those it finds DIFFERS
# (the flip fixtures: at the block, warp, lane and register bisect names)
# and those it refuses go to the whole-module check, which decides their
# frames, and the lines say which was which; a DIFFERS of the phase's
# contract with an IDENTICAL frame says the contract is stricter than the
# frame.  The states are taken by one dump of all the cuts and cached, so a
# second run and `replay` of one of them read the cache.  --json and --junit
# carry the same: one item (testcase) per recipe, how it was decided.  The
# stand-in runs no PTX: enc4's frame is all zeros, the oracle of
# enc4_zero_layer, so every frame here is IDENTICAL.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
stand_in_driver
enc4_zero_layer "$T/e4"
cd "$T/e4" || exit 1
F=tests/fixtures/bisect
R="recipes/enc4/phase-08.json recipes/enc4/phase-61-f16.json $F/enc4-phase-03-flip.json $F/enc4-phase-09-lowbit.json"
expect_rc 0 "$D4R" check enc4 --replay $R
expect_grep "taking the state of 4 cuts in one dump \(12 records\)" "$T/err"
expect_grep "^phase-08.json +IDENTICAL +replay \(proved\)" "$T/out"
expect_grep "^phase-61-f16.json +IDENTICAL +replay \(proved\)" "$T/out"
expect_grep "^enc4-phase-03-flip.json +DIFFERS +replay: first difference at block \(5,3,0\) warp 2 lane 17 register %r2175: .*, 1 ulp; 1 values differ; the whole-module check decides the frame$" "$T/out"
expect_grep "^enc4-phase-09-lowbit.json +DIFFERS +replay: first difference at block \(5,3,0\) warp 2 lane 17 register %r3001: .*, 1 ulp; 1 values differ; the whole-module check decides the frame$" "$T/out"
expect_grep "^replay: 2 identical, 2 differ \(the phase's contract\), 0 not proved;" "$T/out"
expect_grep "^whole-module check of the 2 recipes replay did not prove identical:$" "$T/out"
expect_grep "^\(original\) +IDENTICAL +jit " "$T/out"
expect_grep "^enc4-phase-09-lowbit.json +IDENTICAL +jit .*  replay DIFFERS, the frame IDENTICAL: the phase contract is stricter than the frame \(block \(5,3,0\) warp 2 lane 17 register %r3001: .*\)$" "$T/out"
expect_grep "^enc4-phase-03-flip.json +IDENTICAL +jit .*the phase contract is stricter than the frame" "$T/out"
! grep -Eq "^phase-(08|61-f16).json +[A-Z]+ +jit" "$T/out" || fail "a recipe replay proved was run again"
expect_grep "^5 identical \(2 by replay\), 0 differ, 0 errors \(oracle " "$T/out"

# replay --frame: the same two verdicts for one recipe, check's own lines
expect_rc 0 "$D4R" replay enc4 --recipe "$F/enc4-phase-09-lowbit.json" --frame
expect_grep "^verdict: +DIFFERS: first difference at block \(5,3,0\) warp 2 lane 17 register %r3001: " "$T/out"
expect_grep "^enc4-phase-09-lowbit.json +IDENTICAL +jit " "$T/out"
expect_grep "^frame: +IDENTICAL, replay DIFFERS: the phase contract is stricter than the frame$" "$T/out"
expect_rc 0 "$D4R" replay enc4 --phase 8 --frame
! grep -q "^frame:" "$T/out" || fail "replay --frame ran the whole module after an IDENTICAL"

# the same as one JSON document and a JUnit report, one item per recipe
expect_rc 0 "$D4R" check enc4 --replay $R --json --junit "$T/r.xml"
python3 - "$T/out" "$T/r.xml" <<'PY' || fail "check --replay --json --junit"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
assert d["exit"] == 0 and (d["identical"], d["differ"], d["errors"]) == (5, 0, 0), d
r = d["replay"]
assert (r["identical"], r["differ"], r["not_proved"]) == (2, 2, 0), r
it = {i["name"]: i for i in d["items"]}
assert list(it) == ["(original)", "phase-08.json", "phase-61-f16.json",
                    "enc4-phase-03-flip.json", "enc4-phase-09-lowbit.json"], list(it)
o = it["(original)"]
assert o["original"] is True and o["decided_by"] == "whole-module" and o["replay"] is None, o
for n in ("phase-08.json", "phase-61-f16.json"):
    x = it[n]
    assert x["verdict"] == "identical" and x["decided_by"] == "replay", x
    assert x["jit_seconds"] is None and x["frame_sha256"] is None, x
    assert x["replay"]["verdict"] == "identical" and x["replay"]["message"] is None, x
    assert x["replay"]["original_ms"] > 0 and "first_difference" not in x["replay"], x
for n, reg in (("enc4-phase-03-flip.json", "%r2175"), ("enc4-phase-09-lowbit.json", "%r3001")):
    x = it[n]
    assert x["verdict"] == "identical" and x["decided_by"] == "whole-module", x
    assert len(x["frame_sha256"]) == 64, x
    p = x["replay"]
    assert p["verdict"] == "differs" and reg in p["message"], p
    f = p["first_difference"]
    assert (f["in"], f["block"], f["warp"], f["lane"], f["what"], f["ulps"], f["count"]) == \
        ("register", [5, 3, 0], 2, 17, reg, 1, 1), f
t = ET.parse(sys.argv[2]).getroot()
assert (t.get("tests"), t.get("failures"), t.get("errors")) == ("5", "0", "0"), t.attrib
cases = {c.get("name"): c for c in t.findall("testcase")}
assert list(cases) == list(it), list(cases)
assert "decided by replay: IDENTICAL" in cases["phase-08.json"].find("system-out").text
low = cases["enc4-phase-09-lowbit.json"].find("system-out").text
assert "decided by the whole-module check" in low and "the phase contract is stricter than the frame" in low, low
assert cases["(original)"].find("system-out") is None
PY

# the states are cached: no dump the second time, and replay reads them
expect_rc 0 "$D4R" check enc4 --replay $R
! grep -q "taking the state" "$T/err" || fail "the second check dumped again"
expect_rc 0 "$D4R" replay enc4 --phase 61 --variant f16
expect_grep "^state: +cached " "$T/out"
# every recipe proved: no whole-module check, no original
expect_rc 0 "$D4R" check enc4 --replay recipes/enc4/phase-08.json recipes/enc4/phase-61-f16.json
! grep -q "whole-module check of" "$T/out" || fail "a whole-module check ran with every recipe proved"
expect_grep "^2 identical \(2 by replay\), 0 differ, 0 errors \(no whole-module check; oracle " "$T/out"
expect_rc 0 "$D4R" check enc4 --replay recipes/enc4/phase-08.json --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [i["name"] for i in d["items"]] == ["phase-08.json"] and d["identical"] == 1, d' "$T/out" ||
	fail "check --replay --json with every recipe proved"

# 40 cuts: two dumps of 20 (at most 32 a dump), every one proved
cd "$TOP" || exit 1
R40=$(ls recipes/enc4/phase-*.json | head -n 40)
expect_rc 0 "$D4R" check enc4 --replay $R40 --no-cache
[ "$(grep -c 'taking the state of 20 cuts in one dump (60 records)' "$T/err")" -eq 2 ] ||
	fail "40 cuts were not dumped in two batches of 20"
[ "$(grep -Ec '^phase-[0-9]+(-f16)?\.json +IDENTICAL +replay \(proved\)' "$T/out")" -eq 40 ] ||
	fail "not 40 recipes proved"

# a refused recipe: the whole-module check decides
smoke_layer "$T/repo"
cd "$T/repo" || exit 1
"$D4R" recipe new smoke --stmts 10:11 --template identity -o "$T/ret.json" >/dev/null 2>&1 ||
	fail "cannot write the smoke recipe"
expect_rc 0 "$D4R" check smoke --replay recipes/smoke/phase-01.json "$T/ret.json"
expect_grep "^phase-01.json +IDENTICAL +replay \(proved\)" "$T/out"
expect_grep "^ret.json +WHOLE +replay refused: s11 \(line 23\): 'ret' inside the cut.*; the whole-module check decides$" "$T/out"
expect_grep "^whole-module check of the 1 recipes replay did not prove identical:$" "$T/out"
expect_grep "^ret.json +IDENTICAL +jit .*  replay refused: s11 \(line 23\): 'ret' inside the cut" "$T/out"
expect_rc 0 "$D4R" check smoke --replay recipes/smoke/phase-01.json "$T/ret.json" --json --junit "$T/s.xml"
python3 - "$T/out" "$T/s.xml" <<'PY' || fail "check --replay --json of a refused recipe"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
it = {i["name"]: i for i in d["items"]}
x = it["ret.json"]
assert x["decided_by"] == "whole-module" and x["verdict"] == "identical", x
assert x["replay"]["verdict"] == "refused" and "'ret' inside the cut" in x["replay"]["message"], x
assert x["replay"]["original_ms"] is None and "first_difference" not in x["replay"], x
assert it["phase-01.json"]["decided_by"] == "replay", it
c = {c.get("name"): c for c in ET.parse(sys.argv[2]).getroot().findall("testcase")}
assert "replay refused" in c["ret.json"].find("system-out").text, c
PY
expect_rc 2 "$D4R" check smoke --replay --phases 1
expect_grep "cannot be used with" "$T/err"
test_done
