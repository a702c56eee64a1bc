#!/usr/bin/env bash
# replay, offline: the state plan of enc4's phase 8 (text and JSON) against
# facts read elsewhere (the recipe's bindings and output registers, the
# manifest's weights field, the kernel's shared declaration, the phase's
# statements as show prints them); the replay module of the same cut against
# its golden file (tests/golden/replay/enc4-phase-08.replay.ptx;
# D4R_REGEN=1 rewrites it) and ptxas; a refused cut (a ret inside, on the
# smoke layer) exits 1 naming the statement; usage errors exit 2 and write
# nothing.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
cd "$TOP" || exit 1
G="$TOP/tests/golden/replay/enc4-phase-08.replay.ptx"
R=recipes/enc4/phase-08.json

expect_rc 0 "$D4R" replay enc4 --phase 8 --plan
cp "$T/out" "$T/plan"
# the cut is the phase as show prints it
expect_rc 0 "$D4R" show corpus/enc4/enc4.ptx --phase 8
range=$(sed -n '1s/.*: \(s[0-9]*-s[0-9]*\) .*/\1/p' "$T/out")
expect_grep "^cut: +$range \(lines " "$T/plan"
# every input the recipe binds is a live-in; the two address bases rebased
for r in $(python3 -c 'import json,sys
b=json.load(open(sys.argv[1]))["bind"]
print(" ".join([b["a_base0"], b["b_base0"]] + b["c"]))' $R); do
	grep -q "^  $r " "$T/plan" || fail "bound input $r is not a live-in of the plan"
done
weights=$(python3 -c 'import json
l=json.load(open("recipes/enc4/layer.json"))["launches"][1]["params"]["fields"]
print([f["offset"] for f in l if f.get("buffer")=="weights"][0])')
expect_grep "^  %rd2831 +s64 +spliced +rebased: parameter \+$weights " "$T/plan"
arena=$(sed -n 's/^\.shared .* \([A-Za-z0-9_]*arena\)\[\([0-9]*\)\];$/\1 \2/p' corpus/enc4/enc4.ptx)
expect_grep "^  %r1926 +s32 +spliced +rebased: symbol ${arena% *} " "$T/plan"
expect_grep "^shared: +${arena#* } bytes per block" "$T/plan"
nd=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["bind"]["d"]))' $R)
expect_grep "^live-out: +$nd registers per thread" "$T/plan"
expect_grep "^global: .*taken whole at the launch's start: weights$" "$T/plan"
expect_grep "^replay: +possible$" "$T/plan"

# the JSON says the same
expect_rc 0 "$D4R" replay enc4 --phase 8 --plan --json
python3 - "$T/out" "$nd" <<'PY' || fail "replay --plan --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["replayable"] is True and d["refused"] == [], d["refused"]
assert len(d["live_out"]) == int(sys.argv[2])
ins = {r["register"]: r for r in d["live_in"]}
assert ins["%rd2831"]["value"] == "param" and ins["%rd2831"]["param_offset"] == 40
assert ins["%r1926"]["value"] == "symbol" and ins["%r1926"]["spliced"] is True
assert ins["%r1897"]["original"] is True and ins["%r1897"]["value"] == "data"
assert d["buffers_in"] == ["weights"] and d["buffers_out"] == []
assert d["warps"] == 308 and d["blocks"] == 77
PY

# the replay module: golden, and ptxas
expect_rc 0 "$D4R" replay enc4 --phase 8 --emit "$T/r8.ptx" --dump-module "$T/d8.ptx"
if [ "${D4R_REGEN:-}" = 1 ]; then
	cp "$T/r8.ptx" "$G"
fi
cmp -s "$T/r8.ptx" "$G" || {
	diff "$G" "$T/r8.ptx" | head -30
	fail "the replay module of phase 8 differs from $G (D4R_REGEN=1 rewrites it)"
}
# the dump module is the original with lines added: every line of it is there, in order
python3 - corpus/enc4/enc4.ptx "$T/d8.ptx" <<'PY' || fail "the dump module lost lines of the original"
import sys
a = open(sys.argv[1]).read().splitlines()
b = iter(open(sys.argv[2]).read().splitlines())
assert all(any(l == x for x in b) for l in a)
PY
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ]; then
	expect_rc 0 "$D4R" replay enc4 --phase 8 --emit "$T/r8b.ptx" --check=ptxas --arch=sm_90
	expect_grep "^ptxas: +-arch=sm_90: ok" "$T/err"
fi

# refused: a cut holding the smoke kernel's ret
smoke_layer "$T/repo"
(cd "$T/repo" && "$D4R" recipe new smoke --stmts 10:11 --template identity -o "$T/ret.json") \
	>/dev/null 2>&1 || fail "cannot write the smoke recipe"
cd "$T/repo" || exit 1
expect_rc 1 "$D4R" replay smoke --recipe "$T/ret.json" --plan
expect_grep "^s11 \(line 23\): 'ret' inside the cut" "$T/out"
expect_rc 2 "$D4R" replay smoke --recipe "$T/ret.json" --emit "$T/never.ptx"
[ ! -e "$T/never.ptx" ] || fail "a refused cut wrote its replay module"
expect_grep "replay refuses the cut s10-s11" "$T/err"
expect_rc 1 "$D4R" replay smoke --recipe "$T/ret.json" --plan --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["replayable"] is False and d["exit"] == 1 and len(d["refused"]) == 3' "$T/out" ||
	fail "a refused plan's JSON"

# usage
expect_rc 2 "$D4R" replay smoke --plan
expect_grep "no cut given" "$T/err"
expect_rc 2 "$D4R" replay smoke --phase 1 --plan --no-cache
expect_grep "cannot be used with" "$T/err"
expect_rc 2 "$D4R" replay smoke --phase 1 --plan --emit "$T/x.ptx"
expect_rc 2 "$D4R" replay smoke --phase 1 --check=ptxas --plan
expect_rc 2 "$D4R" replay smoke --phase 9 --plan
expect_grep "has no recipe for phase 9" "$T/err"
[ ! -e "$T/x.ptx" ] || fail "a usage error wrote a file"
test_done
