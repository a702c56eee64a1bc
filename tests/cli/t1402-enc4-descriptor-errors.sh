#!/usr/bin/env bash
# t1402: gen-enc4 refuses a descriptor that is missing fields or is
# inconsistent, naming the phase and the field (exit 2), before anything is
# compiled or written; and its --shape check finds a PTX whose phases, layout
# or liveness are not the stand-in's (exit 1).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
desc=$TOP/corpus/enc4/descriptor.json
# mutate PYTHON-EXPR NAME : writes $T/NAME.json with the change applied to d
mutate() {
	python3 - "$desc" "$T/$2.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
P = d["phases"]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
check() {   # NAME PATTERN
	expect_rc 2 python3 "$TOP/scripts/gen-enc4" --descriptor "$T/$1.json" --shape "$TOP/corpus/enc4/enc4.ptx"
	expect_grep "$2" "$T/err"
}
mutate 'del P[7]["gemm"]["mma"]' no-mma
check no-mma "^gen-enc4: phase 8: field 'gemm.mma': missing$"
mutate 'P[20]["gemm"]["mma"] = 21' mma-chains
check mma-chains "^gen-enc4: phase 21: field 'gemm.mma': 21 != chains 4 \* k_chain_len 5$"
# README's and the man page's sample of this refusal are what it prints
python3 "$TOP/tests/cli/docs-run.py" "$TOP" sample \
	"scripts/gen-enc4 --descriptor mma-chains.json --shape corpus/enc4/enc4.ptx" "$T/err" ||
	fail "the documentation's gen-enc4 sample is not what gen-enc4 prints"
mutate 'P[11]["gemm"]["k"] = 64' bad-k
check bad-k "^gen-enc4: phase 12: field 'gemm.k': 64 != 32 \* k_chain_len 3$"
mutate 'P[0]["gemm"]["banded"] = True' bad-banded
check bad-banded "^gen-enc4: phase 1: field 'gemm.banded': is True but m_tiles\*n_tiles = 24 and mma = 24$"
mutate 'P[60]["gemm"]["weight_bytes"] = [428544, 448000]' bad-span
check bad-span "^gen-enc4: phase 61: field 'gemm.weight_bytes': span"
mutate 'del P[29]["a_source"]' no-a
check no-a "^gen-enc4: phase 30: field 'a_source': missing$"
mutate 'P[22]["c_operand"]["bytes"] = [1, 2]' bad-bias
check bad-bias "^gen-enc4: phase 23: field 'c_operand.bytes'"
mutate 'P[4]["phase"] = 7' bad-number
check bad-number "^gen-enc4: phase 5: field 'phase': is 7, expected 5"
mutate 'del P[61]' short
check short "^gen-enc4: descriptor: field 'phases': expected a list of 62 phases$"
mutate 'del d["layer"]["grid"]' no-grid
check no-grid "^gen-enc4: descriptor: field 'layer.grid': missing$"
# a descriptor that is fine but a PTX that is not: drop one mma of phase 8
python3 - "$TOP/corpus/enc4/enc4.ptx" "$T/cut.ptx" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
mma = [i for i, l in enumerate(lines) if l.startswith("mma.sync")]
del lines[mma[7 * 24 + 3]]
open(sys.argv[2], "w").write("\n".join(lines))
PY
expect_rc 1 python3 "$TOP/scripts/gen-enc4" --shape "$T/cut.ptx"
expect_grep '^8 .*MISMATCH' "$T/out"
expect_grep '^FAIL: 60 of 62 phases match the descriptor$' "$T/out"
expect_grep '^10 .*MISMATCH c_operand' "$T/out"
# the layout: one statement more before s1033 (it adds 0 to an accumulator of
# the residual) moves every citation
python3 - "$TOP/corpus/enc4/enc4.ptx" "$T/late.ptx" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
e = next(i for i, l in enumerate(lines) if l.startswith(".visible .entry cuda_dldn_engine_swin_enc4_kernel("))
k = next(i for i in range(e, len(lines)) if lines[i].startswith("add.f32 "))
acc = re.match(r"add\.f32 (%f\d+),", lines[k]).group(1)
lines.insert(k + 1, "add.f32 %s, %s, 0f00000000;" % (acc, acc))
open(sys.argv[2], "w").write("\n".join(lines))
PY
expect_rc 1 python3 "$TOP/scripts/gen-enc4" --shape "$T/late.ptx"
expect_grep '^ok: 62 of 62 phases match the descriptor$' "$T/out"
expect_grep '^layout MISMATCH s1033 origin load: seed 002 1033, PTX 1034$' "$T/out"
expect_grep '^layout MISMATCH line of s7547: seed 002 11871, PTX 11872$' "$T/out"
expect_grep '^FAIL: layout: [0-9]+ differences from seed 002$' "$T/out"
expect_grep '^ok: liveness' "$T/out"
# liveness: a statement whose result nothing reads
python3 - "$TOP/corpus/enc4/enc4.ptx" "$T/dead.ptx" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
e = next(i for i, l in enumerate(lines) if l.startswith(".visible .entry cuda_dldn_engine_swin_enc4_kernel("))
k = next(i for i in range(e, len(lines)) if lines[i] == "ret;")
lines.insert(k, "add.s32 %r1, %r2, 1;")
open(sys.argv[2], "w").write("\n".join(lines))
PY
expect_rc 1 python3 "$TOP/scripts/gen-enc4" --shape "$T/dead.ptx"
expect_grep '^liveness: s21668 \(line [0-9]+\) reaches no store: add\.s32 %r1, %r2, 1$' "$T/out"
expect_grep '^FAIL: liveness: 1 statements reach no store$' "$T/out"
exit 0
