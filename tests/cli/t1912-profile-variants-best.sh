#!/usr/bin/env bash
# t1912-profile-variants-best: `profile --variant A,B` ranks the variants of
# each phase, and `recipe best` writes the layer of the fastest proven one,
# without a GPU, against the stand-in driver (tests/cli/t1909 describes it:
# a read's clock value is its line in the module times 2 + warp % 3, so a
# phase and its epilogue take 3 x the lines from the phase's start read to
# the next phase's, as a median over the 32 warps).
#
# The layer of t1907's three-phase kernel has two forms of each phase:
# "mma" (phase-NN.json) and "f16" (phase-NN-f16.json).  Phases 1 and 3 in
# f16 carry 8 comment lines more than their mma form, phase 2's mma form 6
# more than its f16 one: the stand-in's cycles then rank mma first in
# phases 1 and 3, f16 in phase 2.  The expected cycles are recomputed here
# from the modules each variant's profile keeps.  Then phase 2's f16 form
# is made to differ from the oracle ("// mock: off-by-one"): the best-of
# layer passes it over for the slower mma form, and the main job proves it.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
command -v python3 >/dev/null || skip "no python3"
stand_in_driver
mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke" "$T/repo/ptx"
cp "$TOP/tests/fixtures/bisect/mma3.ptx" "$T/repo/corpus/smoke/smoke.ptx"
smoke_manifest "$T/repo"
smoke_oracle "$T/repo" 90
cd "$T/repo"
R=recipes/smoke
pad() { for i in $(seq "$2"); do echo "	// pad $i" >>"ptx/smoke/$1.ptx"; done; }
for p in 1 3; do
	"$D4R" recipe new smoke --phase $p --template identity -o $R/phase-0$p.json >/dev/null 2>&1 &&
		"$D4R" recipe new smoke --phase $p --template smoke/long-$p.ptx -o $R/phase-0$p-f16.json \
			>/dev/null 2>&1 || fail "recipe new, phase $p"
	pad long-$p 8
done
"$D4R" recipe new smoke --phase 2 --template smoke/short-2.ptx -o $R/phase-02-f16.json >/dev/null 2>&1 &&
	"$D4R" recipe new smoke --phase 2 --template smoke/pad-2.ptx -o $R/phase-02.json >/dev/null 2>&1 ||
	fail "recipe new, phase 2"
pad pad-2 6

# cycles V : "P CYCLES ORIGINAL" per phase, from the modules of V's profile
for v in mma f16; do
	expect_rc 0 "$D4R" profile smoke --phases 1-3 --variant $v --keep "$T/k-$v" --no-run
	python3 - "$T/k-$v" >"$T/cyc-$v" <<'PY' || fail "cycles of $v"
import re, sys
d = sys.argv[1]
def at(which):
    lines = open("%s/%s.probed.ptx" % (d, which)).read().split("\n")
    line = {}
    for i, l in enumerate(lines):
        m = re.search(r"// d4r-splice probe 0 value (\d+): read", l)
        if m:
            line[int(m.group(1))] = i + 1
    at = {}
    for l in open("%s/%s.points.txt" % (d, which)):
        k, what = l.rstrip("\n").split(": ", 1)
        for part in what.split(" = "):
            at[part] = line[int(k.split()[1])]
    return at
o, s = at("original"), at("spliced")
for p in (1, 2, 3):
    cyc = lambda a: 3 * (a["epilogue %d end" % p] - a["phase %d start" % p])
    print(p, cyc(s), cyc(o))
PY
done

# 1. the ranking
expect_rc 0 "$D4R" profile smoke --phases 1-3 --variant mma,f16
cp "$T/out" "$T/rank.txt"
expect_grep "^smoke profile \(phases 1-3, variants mma,f16\): per phase, the median cycles of the phase and its epilogue" "$T/out"
expect_grep "^  mma       kernel original 0.2500 ms, spliced 0.2500 ms \(1.00x\); probes' overhead \+4.0%, \+4.0%; spliced frame = the original's$" "$T/out"
expect_grep "^  CHANGED   f16, original: the probes changed the compiled kernel: registers 32 -> 40, 4% slower" "$T/out"
while read -r p mc oc && read -r _ fc _ <&3; do
	fastest=mma
	[ "$fc" -lt "$mc" ] && fastest=f16
	mr=$(python3 -c "print('%.2fx' % ($mc / $oc))")
	fr=$(python3 -c "print('%.2fx' % ($fc / $oc))")
	expect_grep "^  phase $p +$oc +$mc $mr +$fc $fr +$fastest$" "$T/rank.txt"
	echo "$p $fastest" >>"$T/fastest"
done <"$T/cyc-mma" 3<"$T/cyc-f16"
[ "$(tr '\n' ' ' <"$T/fastest")" = "1 mma 2 f16 3 mma " ] || fail "the padding did not rank as meant: $(cat "$T/fastest")"
expect_grep "^  fastest   mma 2 phases, f16 1 phase " "$T/rank.txt"
expect_rc 0 "$D4R" profile smoke --phases 1-3 --variant mma,f16 --json
cp "$T/out" "$T/rank.json"
python3 - "$T/rank.json" "$T/cyc-mma" "$T/cyc-f16" <<'PY' || fail "bad ranking --json"
import json, sys
j = json.load(open(sys.argv[1]))
cyc = {v: {int(l.split()[0]): (float(l.split()[1]), float(l.split()[2])) for l in open(f)}
       for v, f in (("mma", sys.argv[2]), ("f16", sys.argv[3]))}
assert j["layer"] == "smoke" and j["phases"] == "1-3", j
assert [v["variant"] for v in j["variants"]] == ["mma", "f16"], j["variants"]
assert j["variants"][0]["overhead_percent"]["met"] is False
assert [v["fastest_phases"] for v in j["variants"]] == [2, 1]
for r in j["ranking"]:
    vs = r["variants"]
    assert [c["ratio"] for c in vs] == sorted(c["ratio"] for c in vs), r
    for c in vs:
        s, o = cyc[c["variant"]][r["phase"]]
        assert (c["cycles"], c["original_cycles"]) == (s, o), (r["phase"], c)
        assert abs(c["ratio"] - s / o) < 1e-12
PY

# 2. every recipe proven: the fastest of each phase
expect_rc 0 "$D4R" check smoke --json
cp "$T/out" "$T/check.json"
expect_rc 0 "$D4R" recipe best smoke --ranking "$T/rank.json" --proof "$T/check.json"
expect_grep "^smoke best-of layer \(ranking $T/rank.json, proof $T/check.json\): 3 of 3 phases proven$" "$T/out"
expect_grep "^  phase 1    mma      [0-9.]+x  passed over: -$|^  phase 1    mma      [0-9.]+x$" "$T/out"
expect_grep "^  phase 2    f16      [0-9.]+x$" "$T/out"
expect_grep "^  next      d4r-splice smoke --phases 1-3 --variant best   \(proves and times it\)$" "$T/out"
cmp $R/phase-01-best.json $R/phase-01.json || fail "phase 1 is not the mma recipe"
cmp $R/phase-02-best.json $R/phase-02-f16.json || fail "phase 2 is not the f16 recipe"
cmp $R/phase-03-best.json $R/phase-03.json || fail "phase 3 is not the mma recipe"
expect_rc 0 "$D4R" smoke --phases 1-3 --variant best
expect_grep "^smoke phases 1-3 variant best: IDENTICAL" "$T/out"

# 3. phase 2's f16 form differs: passed over for mma, said so
echo '// mock: off-by-one' >>ptx/smoke/short-2.ptx
expect_rc 1 "$D4R" check smoke --json
cp "$T/out" "$T/check2.json"
expect_rc 2 "$D4R" recipe best smoke --ranking "$T/rank.json" --proof "$T/check2.json"
expect_grep "recipes/smoke/phase-01-best.json' exists \(--force replaces an earlier best-of layer\)" "$T/err"
cmp $R/phase-02-best.json $R/phase-02-f16.json || fail "a refused run replaced a file"
expect_rc 0 "$D4R" recipe best smoke --ranking "$T/rank.json" --proof "$T/check2.json" --force --json
python3 - "$T/out" <<'PY' || fail "bad recipe best --json"
import json, sys
j = json.load(open(sys.argv[1]))
p = {x["phase"]: x for x in j["picks"]}
assert [p[k]["variant"] for k in (1, 2, 3)] == ["mma", "mma", "mma"], p
assert p[2]["passed_over"].startswith("f16 ") and p[2]["passed_over"].endswith("x differs"), p[2]
assert p[2]["written"].endswith("phase-02-best.json") and j["phases"] == "1-3", j
PY
cmp $R/phase-02-best.json $R/phase-02.json || fail "phase 2 is not the mma recipe"
expect_rc 0 "$D4R" smoke --phases 1-3 --variant best
expect_grep "^smoke phases 1-3 variant best: IDENTICAL" "$T/out"

# 4. refusals
expect_rc 2 "$D4R" recipe best smoke --ranking "$T/rank.json" --proof "$T/check.json" --name f16 --force
expect_grep "option '--name': 'f16' is a variant of the ranking" "$T/err"
expect_rc 2 "$D4R" recipe best smoke --ranking "$T/rank.json"
expect_grep "name the ranking and the proof" "$T/err"
sed 's/"layer":[^,]*,/"layer": "enc4",/' "$T/rank.json" >"$T/other.json"
expect_rc 2 "$D4R" recipe best smoke --ranking "$T/other.json" --proof "$T/check.json" --force
expect_grep "a ranking of layer 'enc4', not of 'smoke'" "$T/err"
expect_rc 2 "$D4R" profile smoke --phases 1-3 --variant mma,f16 --keep "$T/kk"
expect_grep "a list of variants takes neither '--keep'" "$T/err"
expect_rc 2 "$D4R" profile smoke --phases 1-3 --variant mma,no-such
expect_grep "'no-such' is not a variant name" "$T/err"
