#!/usr/bin/env bash
# The enc4 stand-in against seed 002, field by field, for all 62 phases:
# `phases --json` on corpus/enc4/enc4.ptx must give the descriptor's gemm
# fields (m_tiles, n_tiles, k, k_chain_len, mma, chains, banded), A and C
# kinds (with the phase they come from), weight_bytes and c_source_bytes.
# The descriptor's kinds are the seed's words; the map to d4r-splice's
# kinds (d4r-splice(1), DEFINITIONS) is in the script below.
. "$D4R_TOP/tests/cli/lib.sh"
M=$TOP/corpus/enc4/enc4.ptx
D=$TOP/corpus/enc4/descriptor.json
[ -f "$M" ] || fail "no $M"
expect_rc 0 "$D4R" phases "$M" --entry cuda_dldn_engine_swin_enc4_kernel --json
python3 - "$D" "$T/out" <<'PY' || fail "phases differ from seed 002"
import json, sys
desc = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))["functions"][0]["phases"]
want = desc["phases"]
A = {"shared_staged_e4m3": "shared", "requantise_prev_acc": "converted",
     "requantise_softmax": "converted", "normalised_tile": "converted",
     "requantise_activation": "converted"}
C = {"zero": "zero", "prev_chain_acc": "phase_acc", "prev_acc": "phase_acc",
     "bias_pair_f16": "loaded", "bias_word": "loaded",
     "bias_plus_residual": "computed", "prev_acc_plus_table": "computed"}
bad = []
if len(got) != len(want):
    bad.append(f"{len(got)} phases, seed has {len(want)}")
fields = 0
for w, g in zip(want, got):
    p = w["phase"]
    def check(name, a, b):
        global fields
        fields += 1
        if a != b:
            bad.append(f"phase {p}: {name}: seed {a!r}, d4r-splice {b!r}")
    check("phase", p, g["phase"])
    for f in ("m_tiles", "n_tiles", "k", "k_chain_len", "mma", "chains", "banded"):
        check(f, w["gemm"][f], g["gemm"][f])
    check("weight_bytes", w["gemm"]["weight_bytes"], g["gemm"]["weight_bytes"])
    check("c_source_bytes", w["gemm"]["c_source_bytes"], g["gemm"]["c_source_bytes"])
    check("a_source.kind", A.get(w["a_source"]["kind"], "?" + w["a_source"]["kind"]), g["a_source"]["kind"])
    if "from_phase" in w["a_source"]:
        check("a_source.from_phase", w["a_source"]["from_phase"], g["a_source"].get("from_phase"))
    if w["a_source"]["kind"] == "requantise_softmax":
        check("a_source.from_phase", 11, g["a_source"].get("from_phase"))
    check("c_operand.kind", C.get(w["c_operand"]["kind"], "?" + w["c_operand"]["kind"]), g["c_operand"]["kind"])
    if C.get(w["c_operand"]["kind"]) == "phase_acc":
        check("c_operand.from_phase", w["c_operand"]["from_phase"], g["c_operand"].get("from_phase"))
for b in bad:
    print(b)
print(f"{len(got)} phases, {fields} fields compared, {len(bad)} differ")
sys.exit(1 if bad else 0)
PY
