#!/usr/bin/env bash
# show (statements, --live cut interface, --context), grep, report.
. "$D4R_TOP/tests/cli/lib.sh"
K=$TOP/tests/fixtures/ana/k.ptx

expect_rc 0 "$D4R" show "$K" --entry k --phase 2
expect_grep '^k: s23-s24 \(2 statements\)' "$T/out"
expect_grep '^> s23 +L[0-9]+ +mma\.sync\.aligned\.m16n8k32' "$T/out"
expect_rc 0 "$D4R" show "$K" --entry k --phase 2 --context 1 --live
expect_grep '^  s22 ' "$T/out"
expect_grep '^  s25 ' "$T/out"
# live-in of phase 2: A (%r50, %r51), B (%r20..%r23), C (%r60)
for r in %r50 %r51 %r20 %r21 %r22 %r23 %r60; do
	expect_grep "^  $r +\.b32 +first use s2[34]" "$T/out"
done
expect_grep '^live-in \(7\)' "$T/out"
# live-out: %r72, %r73 (read by the add at s25); %r70/%r71 are consumed inside
expect_grep '^live-out \(2\)' "$T/out"
expect_grep '^  %r72 +\.b32 +last def s24' "$T/out"
expect_no_grep '^  %r70 ' "$T/out"
expect_grep 'read/write dependencies: none' "$T/out"

# a range that stores to shared memory read after it? no later read: valid;
# the phase 2 epilogue stores to global, nothing reads it after: valid
expect_rc 0 "$D4R" show "$K" --stmts 23:26 --entry k --live
expect_grep 'global stores 1' "$T/out"

expect_rc 2 "$D4R" show "$K" --entry k --phase 9
expect_grep "show: phase 9 does not exist: k has 3 phases" "$T/err"
expect_rc 2 "$D4R" show "$K" --entry k --stmts 5:999
expect_grep "s999 does not exist" "$T/err"
expect_rc 2 "$D4R" show "$K" --entry k --stmts 9:3
expect_rc 2 "$D4R" show "$K" --entry k

# grep: PCRE2 over statement text
expect_rc 0 "$D4R" grep "$K" 'cvt\.rn\.satfinite\.e4m3x2'
expect_grep '^k:s16:[0-9]+: cvt\.rn\.satfinite\.e4m3x2\.f16x2 %rs1, %r40;$' "$T/out"
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "4 cvt statements expected"
expect_rc 0 "$D4R" grep "$K" -c 'mma\.sync'
expect_grep '^k: 9$' "$T/out"
expect_grep '^plain: 0$' "$T/out"
expect_rc 0 "$D4R" grep "$K" --phase 3 --entry k '\{%r46, %r47\}'
expect_grep '^k:s27:' "$T/out"
expect_rc 1 "$D4R" grep "$K" 'nothing-like-this'
expect_rc 2 "$D4R" grep "$K" '('
expect_grep 'bad pattern' "$T/err"

# report: coverage line, one row per phase, validity and provenance
expect_rc 0 "$D4R" report "$K" --entry k
expect_grep '^Static analysis of the PTX text' "$T/out"
expect_grep '^ +1 s12-s15 +s16-s22 ' "$T/out"
expect_grep 'derived from k\.ptx \(sha256 [0-9a-f]{12}\) s12-s22' "$T/out"
expect_rc 0 "$D4R" report "$K" --entry k --json
python3 - "$T/out" <<'PY' || fail "report JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["entry"] == "k" and len(d["phases"]) == 3
r = d["phases"][2]
# phase 3's cut stores to shared (s31): nothing reads it afterwards -> valid
assert r["valid"] is True and r["cut_stmt_range"] == [27, 31], r
# the phase 2 cut reads 7 b32 registers and the b64 address %rd4
assert d["phases"][1]["live_in"] == 8 and d["phases"][1]["bytes_per_warp_in"] == 7 * 4 * 32 + 8 * 32
PY
expect_rc 0 "$D4R" report "$K" --entry k --md
expect_grep '^\| Phase \| MMA stmts' "$T/out"

# a cut that writes shared memory which a later statement reads: invalid
sed 's|  ret;|  ld.shared.u32 %r99, [%r4];\n  st.global.u32 [%rd4+8], %r99;\n  ret;|' "$K" >"$T/rw.ptx"
expect_rc 0 "$D4R" report "$T/rw.ptx" --entry k
expect_grep 'READ/WRITE DEPENDENCIES: cut invalid' "$T/out"
