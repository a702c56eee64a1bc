#!/usr/bin/env bash
# The enc4 stand-in against seed 002, field by field, for all 62 phases:
# `phases --json` on corpus/enc4/enc4.ptx must give every field of the seed
# that it reports: the gemm fields (m_tiles, n_tiles, k, k_chain_len, mma,
# chains, banded, weight_bytes, c_source_bytes), the statement ranges
# (mma_stmt_range, epilogue_statements, epilogue_stmt_range, and the same two
# again under epilogue), the A and C kinds with the phase they come from, the
# arena offsets of A (phases 1-10) and the bytes of the bias words.
#
# Not compared, because d4r-splice reports nothing that could hold them: the
# seed's prose (k_tiling, note, evidence, how, written_by, read_at,
# unverified), a_source.shift_group, c_operand.table_bytes, the source phase
# of a "prev_acc_plus_table" C (d4r-splice calls that C "computed", which has
# no source phase), and epilogue.ops (the seed's words for the operations are
# not d4r-splice's).
#
# The descriptor's kinds are the seed's words; the map to d4r-splice's kinds
# (d4r-splice(1), DEFINITIONS) is in the script below.
. "$D4R_TOP/tests/cli/lib.sh"
M=$TOP/corpus/enc4/enc4.ptx
D=$TOP/corpus/enc4/descriptor.json
[ -f "$M" ] || fail "no $M"
expect_rc 0 "$D4R" phases "$M" --entry cuda_dldn_engine_swin_enc4_kernel --json
python3 - "$D" "$T/out" >"$T/cmp" <<'PY' || { cat "$T/cmp"; fail "phases differ from seed 002"; }
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
    for f in ("m_tiles", "n_tiles", "k", "k_chain_len", "mma", "chains", "banded",
              "weight_bytes", "c_source_bytes", "mma_stmt_range", "epilogue_statements",
              "epilogue_stmt_range"):
        check("gemm." + f, w["gemm"][f], g["gemm"].get(f))
    check("epilogue.statements", w["epilogue"]["statements"], g["epilogue"].get("statements"))
    check("epilogue.stmt_range", w["epilogue"]["stmt_range"], g["epilogue"].get("stmt_range"))
    a, c = w["a_source"], w["c_operand"]
    check("a_source.kind", A.get(a["kind"], "?" + a["kind"]), g["a_source"]["kind"])
    if "from_phase" in a:
        check("a_source.from_phase", a["from_phase"], g["a_source"].get("from_phase"))
    if a["kind"] == "requantise_softmax":
        check("a_source.from_phase", 11, g["a_source"].get("from_phase"))
    if "arena_byte_offsets_per_mtile" in a:
        check("a_source.arena_byte_offsets", a["arena_byte_offsets_per_mtile"],
              g["a_source"].get("arena_byte_offsets"))
    check("c_operand.kind", C.get(c["kind"], "?" + c["kind"]), g["c_operand"]["kind"])
    if C.get(c["kind"]) == "phase_acc":
        check("c_operand.from_phase", c["from_phase"], g["c_operand"].get("from_phase"))
    if "bytes" in c:
        check("c_operand.bytes", c["bytes"], g["gemm"].get("c_source_bytes"))
for b in bad:
    print(b)
print(f"{len(got)} phases, {fields} fields compared, {len(bad)} differ")
sys.exit(1 if bad else 0)
PY
# 62 x 17 fields every phase has, 43 A and 9 C source phases, the arena
# offsets of phases 1-10 and the bias words of the 22 bias_word phases
expect_grep '^62 phases, 1138 fields compared, 0 differ$' "$T/cmp"
exit 0
