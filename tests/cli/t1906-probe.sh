#!/usr/bin/env bash
# t1906-probe: `d4r-splice probe` writes an instrumented module without a
# GPU.  Checked here on its own terms, not the inserter's: every line of the
# input is a line of the output, unchanged and in order (a script of its
# own compares them); ptxas -arch=<the module's target> -e ENTRY, run
# directly, accepts the result; each store's offset is the one the layout
# gives.  On the enc4 stand-in (all 62 phases; phase 20 with its
# epilogue and every register, so predicates, 16- and 64-bit registers
# are stored); tests/corpus/t0500 does the same on the toolkit's modules.
. "$D4R_TOP/tests/cli/lib.sh"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
ENC4="$TOP/corpus/enc4/enc4.ptx"
MMA3="$TOP/tests/fixtures/bisect/mma3.ptx"
command -v python3 >/dev/null || skip "no python3"

# kept IN OUT : every line of IN is a line of OUT, in order; prints the count of added lines
kept() {
	python3 - "$1" "$2" <<'PY'
import sys
a = open(sys.argv[1], "rb").read().split(b"\n")
b = open(sys.argv[2], "rb").read().split(b"\n")
j = 0
for i, line in enumerate(a):
    while j < len(b) and b[j] != line:
        j += 1
    if j == len(b):
        sys.exit("line %d of %s is not in %s: %r" % (i + 1, sys.argv[1], sys.argv[2], line[:80]))
    j += 1
print(len(b) - len(a))
PY
}

# ptxas_ok FILE ENTRY : ptxas -arch=<.target> -e ENTRY accepts FILE
ptxas_ok() {
	local arch
	arch=$(grep -m1 '^\.target' "$1" | awk '{print $2}' | tr -d ',')
	"$PTXAS" -arch="$arch" -e "$2" "$1" -o /dev/null 2>"$T/ptxas.err" ||
		{ head -20 "$T/ptxas.err"; fail "ptxas -arch=$arch -e $2 rejects $1"; }
}

# 1. the small kernel: records, offsets against the layout, ptxas
expect_rc 0 "$D4R" probe "$MMA3" -o "$T/m.ptx" --layout "$T/m.json"
expect_grep "^probe: +3 records \(phase-end, phases all of 3\), 8 values \(live-out\), 1024 bytes per warp$" "$T/err"
expect_grep "^dump: +symbol __d4r_probe_dump \(.u64, the dump's address\)" "$T/err"
n=$(kept "$MMA3" "$T/m.ptx") || fail "probe changed a line of mma3.ptx"
[ "$n" -gt 60 ] || fail "only $n lines added"
grep -q '^\.visible \.global \.align 8 \.u64 __d4r_probe_dump;$' "$T/m.ptx" || fail "no symbol"
python3 - "$T/m.json" "$T/m.ptx" <<'PY' || fail "a store is not where the layout says"
import json, re, sys
lay = json.load(open(sys.argv[1]))
ptx = open(sys.argv[2]).read()
stores = re.findall(r"\tst\.global\.b(\d+) \t\[%prb0_(\d+)_a(\d)\+(\d+)\], (%\w+);", ptx)
assert len(stores) == 8, stores
want = []
for i, r in enumerate(lay["records"]):
    for v in r["values"]:
        base = "2" if v["slot"] == 8 else "1"
        want.append(("32", str(i), base, str(r["offset"] + v["offset"]), v["register"]))
assert sorted(stores) == sorted(want), (stores, want)
# hand-computed: phase 1's %r13/%r14, phase 2's %r16/%r17, phase 3's four f32, 128 bytes each
assert [w[4] for w in want] == ["%r13", "%r14", "%r16", "%r17", "%f3", "%f4", "%f5", "%f6"]
assert [int(w[3]) for w in want] == [128 * k for k in range(8)], want
assert [v["type"] for r in lay["records"] for v in r["values"]] == ["f16x2"] * 4 + ["f32"] * 4
PY
if [ -x "$PTXAS" ]; then
	ptxas_ok "$T/m.ptx" pattern
	expect_rc 0 "$D4R" probe "$MMA3" --at epilogue-end --registers all -o "$T/m2.ptx"
	ptxas_ok "$T/m2.ptx" pattern
	grep -q 'selp.u32 	%prb0_0_t6, 1, 0, %p1;' "$T/m2.ptx" || fail "the predicate is not stored"
	grep -q 'st.global.b16 	\[%prb0_0_a1+[0-9]*\], %rs1;' "$T/m2.ptx" || fail "%rs1 is not stored"
else
	skip_part "no $PTXAS, so the probed modules were not given to ptxas"
fi
# -o - and --check=ptxas
expect_rc 0 "$D4R" probe "$MMA3" --phases 2 -o - -q
grep -c 'd4r-splice probe [0-9]*:' "$T/out" | grep -qx 1 || fail "--phases 2: not one record"
grep -q 'phase 2 end' "$T/out" || fail "--phases 2: not phase 2"

# 2. enc4, every phase; phase 20 with its epilogue, every register; ptxas
# through probe's own --check=ptxas (its answers cached: a second run of
# the suite pays no ptxas run on these 21,669-statement kernels)
chk=()
[ -x "$PTXAS" ] && chk=(--check=ptxas)
expect_rc 0 "$D4R" probe "$ENC4" -o "$T/e.ptx" "${chk[@]}"
[ -x "$PTXAS" ] && expect_grep "^ptxas: +-arch=sm_89 -e cuda_dldn_engine_swin_enc4_kernel: ok" "$T/err"
expect_grep "^probe: +62 records \(phase-end, phases all of 62\), 1900 values \(live-out\)" "$T/err"
kept "$ENC4" "$T/e.ptx" >/dev/null || fail "probe changed a line of enc4.ptx"
[ "$(grep -c '^{	// d4r-splice probe [0-9]*: phase [0-9]* end, after s' "$T/e.ptx")" -eq 62 ] ||
	fail "not 62 records in enc4"
expect_rc 0 "$D4R" probe "$ENC4" --phases 20 --at epilogue-end --registers all -o "$T/e2.ptx" "${chk[@]}"
expect_grep "^probe: +1 records \(epilogue-end, phases 20 of 62\)" "$T/err"
[ -x "$PTXAS" ] && expect_grep "^ptxas: +-arch=sm_89 -e cuda_dldn_engine_swin_enc4_kernel: ok" "$T/err"
kept "$ENC4" "$T/e2.ptx" >/dev/null || fail "probe changed a line of enc4.ptx (epilogues)"
for w in b16 b32 b64; do
	grep -q "	st.global.$w 	\[%prb0_" "$T/e2.ptx" || fail "no $w store in phase 20 with its epilogue"
done
[ -x "$PTXAS" ] || skip_part "no $PTXAS, so the probed modules were not given to ptxas"

# 3. refusals
expect_rc 2 "$D4R" probe "$ENC4" --phases 63 -o "$T/x.ptx"
expect_grep "probe: --phases: phase 63 does not exist: cuda_dldn_engine_swin_enc4_kernel has 62 phases" "$T/err"
expect_rc 2 "$D4R" probe "$ENC4" --phases 3-1 -o "$T/x.ptx"
expect_grep "option '--phases': '3-1': the range '3-1' runs backwards" "$T/err"
expect_rc 2 "$D4R" probe "$ENC4"
expect_grep "no output given" "$T/err"
expect_rc 2 "$D4R" probe "$ENC4" --arch sm_90 -o "$T/x.ptx"
expect_grep "option '--arch' needs '--check=ptxas'" "$T/err"
expect_rc 2 "$D4R" probe "$TOP/tests/golden/roundtrip/addr-reg-plus-reg.ptx" -o "$T/x.ptx"
[ ! -e "$T/x.ptx" ] || fail "a refused probe wrote its output"
test_done
