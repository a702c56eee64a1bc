#!/usr/bin/env bash
# phases: table, JSON fields with evidence, markdown, --entry, --gap, errors.
. "$D4R_TOP/tests/cli/lib.sh"
K=$TOP/tests/fixtures/ana/k.ptx

expect_rc 0 "$D4R" phases "$K"
expect_grep '^k: 3 phases, 9 mma statements' "$T/out"
expect_grep '^ +1 s12-s15 +4 +2 +2 +32 +1 +4 no +shared +zero +\[320,332\] +s16-s22\(7\)' "$T/out"
expect_grep '^ +2 s23-s24 +2 +1 +2 +64 +2 +1 no +converted\(p1\) +loaded:global' "$T/out"
expect_grep '^ +3 s27-s29 +3 +3 +3 +96 +3 +1 yes +mixed +phase_acc\(p1\)' "$T/out"
expect_no_grep '^plain' "$T/out"   # no mma: not listed

expect_rc 0 "$D4R" phases "$K" --json
python3 - "$T/out" <<'PY' || fail "JSON fields"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["functions"]
assert len(f) == 1 and f[0]["name"] == "k", f
p = f[0]["phases"]
assert [x["phase"] for x in p] == [1, 2, 3]
g = p[0]["gemm"]
assert (g["m_tiles"], g["n_tiles"], g["k"], g["k_chain_len"], g["mma"], g["chains"], g["banded"]) == (2, 2, 32, 1, 4, 4, False), g
assert g["weight_bytes"] == [320, 332] and g["weight_base_param_offset"] == 40, g
assert g["mma_stmt_range"] == [12, 15] and g["epilogue_stmt_range"] == [16, 22], g
assert p[0]["a_source"]["kind"] == "shared" and p[0]["a_source"]["arena_byte_offsets"] == [0, 2560]
assert p[0]["c_operand"]["kind"] == "zero" and p[0]["c_operand"]["evidence_stmt"] == 11
assert p[1]["a_source"] == {"kind": "converted", "from_phase": 1, "evidence_stmt": 18}, p[1]["a_source"]
assert p[1]["gemm"]["c_source_bytes"] == [1024]
assert p[1]["c_operand"]["kind"] == "loaded" and p[1]["c_operand"]["space"] == "global"
assert p[2]["c_operand"]["kind"] == "phase_acc" and p[2]["c_operand"]["from_phase"] == 1
assert p[2]["gemm"]["banded"] is True
e = p[0]["epilogue"]
assert e["ops"] == ["e4m3_requantise", "f16_pack", "next_c_load"], e
assert e["evidence"]["next_c_load"] == [22] and e["statements"] == 7
PY

expect_rc 0 "$D4R" phases "$K" --md
expect_grep '^\| 1 \| s12-s15 \| 4 \| 2 \| 2 \| 32 \|' "$T/out"

# --gap joins phases separated by up to N other statements
expect_rc 0 "$D4R" phases "$K" --gap 2
expect_grep '^k: 2 phases' "$T/out"

# --jobs: the same output on one thread as on several, functions in module
# order (the module has two functions with mma: k, then k2 after it)
sed -e 's/\.entry k(/.entry k2(/' -e 's/^\.version.*//' -e 's/^\.target.*//' \
	-e 's/^\.address_size.*//' "$K" >"$T/k2.part"
cat "$K" "$T/k2.part" >"$T/two.ptx"
expect_rc 0 "$D4R" phases "$T/two.ptx" --jobs 1
cp "$T/out" "$T/one-thread"
expect_grep '^k2: 3 phases' "$T/one-thread"
expect_rc 0 "$D4R" phases "$T/two.ptx" --jobs 4
cmp -s "$T/one-thread" "$T/out" || fail "phases --jobs 4 differs from --jobs 1"
[ "$(grep -n ' phases, ' "$T/out" | cut -d: -f2)" = "$(printf 'k\nk2')" ] ||
	fail "functions not in module order: $(grep ' phases, ' "$T/out")"
expect_rc 2 "$D4R" phases "$K" --jobs 0
expect_grep "option '--jobs': '0' is not a positive whole number" "$T/err"

# errors
expect_rc 2 "$D4R" phases "$K" --entry nosuch
expect_grep "unknown entry 'nosuch'" "$T/err"
expect_grep '\.entry k$' "$T/err"
expect_grep '\.entry plain$' "$T/err"
expect_rc 2 "$D4R" phases "$K" --gap x
expect_rc 2 "$D4R" phases "$K" --json --md
expect_rc 2 "$D4R" phases "$T/missing.ptx"
expect_grep "cannot open" "$T/err"
printf 'not ptx\n' >"$T/bad.ptx"
expect_rc 2 "$D4R" phases "$T/bad.ptx"
expect_grep 'bad.ptx:1:1: ' "$T/err"
expect_rc 0 "$D4R" phases "$K" --entry plain
expect_grep '^plain: 0 phases' "$T/out"
