#!/usr/bin/env bash
# t1913-profile-sass: `profile --sass`, SASS instructions per phase and
# epilogue of the original and the spliced module, offline: ptxas compiles
# each module as it is and with a .loc line per statement, CUPTI's
# SASS-to-source correlation maps each instruction to its statement (no
# device).  On t1907's three-phase kernel with the identity of phase 2.
# The expected totals are read here from the cubins ptxas makes, with a
# section-table reader of this script's own.  Skipped (77) without ptxas
# or libcupti.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
command -v python3 >/dev/null || skip "no python3"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -x "$PTXAS" ] || skip "no ptxas at $PTXAS"
mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke" "$T/repo/ptx"
cp "$TOP/tests/fixtures/bisect/mma3.ptx" "$T/repo/corpus/smoke/smoke.ptx"
smoke_manifest "$T/repo"
smoke_oracle "$T/repo" 90
cd "$T/repo"
"$D4R" recipe new smoke --phase 2 --template identity -o recipes/smoke/phase-02.json >/dev/null 2>&1 ||
	fail "recipe new"

# insns ARCH : the instructions of `pattern` in ptxas's cubin of the module
insns() {
	"$PTXAS" -O3 -arch="$1" -e pattern corpus/smoke/smoke.ptx -o "$T/p.cubin" || fail "ptxas -arch=$1"
	python3 - "$T/p.cubin" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", b, 0x28)
ent, num, stridx = struct.unpack_from("<HHH", b, 0x3a)
sh = [struct.unpack_from("<IIQQQQ", b, shoff + i * ent) for i in range(num)]
stroff = sh[stridx][4]
for name, _, _, _, off, size in sh:
    n = b[stroff + name:b.index(b"\0", stroff + name)]
    if n == b".text.pattern":
        print(size // 16)
PY
}

rc=0
"$D4R" profile smoke --phase 2 --sass >"$T/out" 2>"$T/err" || rc=$?
grep -q "no CUPTI library" "$T/err" && skip "$(cat "$T/err")"
[ $rc -eq 0 ] || { cat "$T/err"; fail "profile --sass: exit $rc"; }
n=$(insns sm_90)
[ "$n" -gt 8 ] || fail "the cubin holds $n instructions"
expect_grep "^smoke SASS per phase \(recipe recipes/smoke/phase-02.json\): ptxas -O3 -arch=sm_90 \(the module's .target\), no GPU$" "$T/out"
expect_grep "^  .loc      original: $n instructions, the same with and without the .loc lines$" "$T/out"
expect_grep "^            spliced : [0-9]+ instructions, the same with and without the .loc lines$" "$T/out"
expect_grep "^  kernel +$n +[0-9]+ " "$T/out"
cp "$T/out" "$T/sass.txt"
python3 - "$T/sass.txt" "$n" <<'PY' || fail "the regions do not add up"
import re, sys
rows = {}
for l in open(sys.argv[1]):
    m = re.match(r"^  (prologue|phase \d+|epilogue \d+|unattributed|kernel) +(\d+) +(\d+) ", l)
    if m:
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
names = ["prologue"] + ["%s %d" % (k, p) for p in (1, 2, 3) for k in ("phase", "epilogue")]
assert all(n in rows for n in names + ["unattributed", "kernel"]), rows
for col in (0, 1):
    assert sum(rows[n][col] for n in names) + rows["unattributed"][col] == rows["kernel"][col], rows
assert rows["kernel"][0] == int(sys.argv[2])
# every phase is at least its mma: phase 1 two, phases 2 and 3 one each
assert rows["phase 1"][0] >= 2 and rows["phase 2"][0] >= 1 and rows["phase 3"][0] >= 1, rows
assert rows["unattributed"][0] * 4 < rows["kernel"][0], rows
PY

# --json: the same figures
expect_rc 0 "$D4R" profile smoke --phase 2 --sass --json
python3 - "$T/out" "$T/sass.txt" <<'PY' || fail "bad --sass --json"
import json, re, sys
j = json.load(open(sys.argv[1]))
assert j["arch"] == "sm_90" and j["arch_from"] == "the module's .target", j
o = j["modules"]["original"]
assert o["same_stream"] and o["instructions"] == o["instructions_without_loc"], o
txt = {}
for l in open(sys.argv[2]):
    m = re.match(r"^  (prologue|phase \d+|epilogue \d+) +(\d+) +(\d+) ", l)
    if m:
        txt[m.group(1)] = (int(m.group(2)), int(m.group(3)))
for r in j["regions"]:
    name = r["region"] + ("" if r["region"] == "prologue" else " %d" % r["phase"])
    assert txt[name] == (r["original"], r["spliced"]), (name, r, txt[name])
assert len(j["regions"]) == 7
PY

# the architecture asked for
n100=$(insns sm_100)
D4R_SASS_ARCH=sm_100 expect_rc 0 "$D4R" profile smoke --phase 2 --sass
expect_grep "ptxas -O3 -arch=sm_100 \(\\\$D4R_SASS_ARCH\), no GPU$" "$T/out"
expect_grep "^  .loc      original: $n100 instructions, the same" "$T/out"
# a list of variants is refused
expect_rc 2 "$D4R" profile smoke --phases 1-3 --variant mma,f16 --sass
expect_grep "nor '--sass'" "$T/err"
# no libcupti: said, exit 2
D4R_LIBCUPTI=/nonexistent/libcupti.so expect_rc 2 "$D4R" profile smoke --phase 2 --sass
expect_grep "^d4r-splice: profile: no CUPTI library \(libcupti.so.13\): /nonexistent/libcupti.so" "$T/err"
