#!/usr/bin/env bash
# enc4: the family-1 recipes (phases 1-10 and the WMMA-style phase 8) fit the
# committed stand-in module and pass ptxas; the identity splice of every one
# of its 62 phases keeps every byte outside its cut and the module with all
# 62 identities spliced in passes ptxas; a stale recipe fails loudly.
# ptxas on this kernel takes about a minute per run, so the recipes are
# checked two at a time.
. "$D4R_TOP/tests/cli/lib.sh"
M="$D4R_TOP/corpus/enc4/enc4.ptx"
E=cuda_dldn_engine_swin_enc4_kernel
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -f "$M" ] || skip "no corpus/enc4/enc4.ptx"
cd "$D4R_TOP" || exit 1
recipes=$(ls recipes/enc4/phase-*.json)
[ "$(echo "$recipes" | wc -l)" -eq 11 ] || fail "expected 11 enc4 recipes, found: $recipes"

# the recipes are what the generator makes of the module and the descriptor
if command -v python3 >/dev/null; then
	D4R="$D4R" python3 ptx/enc4/gen-family1 --check >"$T/gen" 2>&1 || {
		cat "$T/gen"
		fail "recipes/enc4 or ptx/enc4 differ from what ptx/enc4/gen-family1 makes of the module"
	}
fi

# every recipe splices (guards, bindings, live-outs, memory effects)
expect_rc 0 "$D4R" recipe check $recipes
[ "$(grep -c '^ok ' "$T/out")" -eq 11 ] || fail "not every recipe passed"
expect_grep '^ok +recipes/enc4/phase-08.json: s[0-9]+\.\.s[0-9]+ \(24 mma\), ptx/enc4/family1-chain.ptx, 80 live-in, 48 live-out' "$T/out"

# the native phases load their operands and compute with the vendor's instruction
for p in 01 08 10; do
	expect_rc 0 "$D4R" splice enc4 --phase $p -o "$T/p$p.ptx" --quiet
	n=$(sed -n '/d4r-splice: begin/,/d4r-splice: end/p' "$T/p$p.ptx" |
		grep -c 'mma\.sync\.aligned\.m16n8k32\.row\.col\.f16\.e4m3\.e4m3\.f16')
	[ "$n" -eq 24 ] || fail "phase $p: $n vendor mma in the spliced region, expected 24"
	expect_grep 'ld\.shared\.v4\.u32' "$T/p$p.ptx"
done
expect_grep 'ld\.global\.u32[[:space:]]+%spl[0-9]+_b0, \[%rd[0-9]+\+8512\];' "$T/p08.ptx"

# identity: every phase alone keeps the bytes outside its cut ...
expect_rc 0 "$D4R" splice --module "$M" --entry $E --every-phase
[ "$(grep -c '^ok ' "$T/out")" -eq 62 ] || fail "not 62 identity splices"
if [ ! -x "$PTXAS" ]; then
	echo "ptxas: not run (no $PTXAS)"
	exit 0
fi
# ... and all 62 spliced together pass ptxas -arch=sm_89 -e ENTRY (one run)
"$D4R" splice --module "$M" --entry $E --every-phase --together --check=ptxas >"$T/tog" 2>&1 || {
	cat "$T/tog"
	fail "identity of every phase: ptxas rejects it"
}
expect_grep "^ok +$E: 62 of 62 phases spliced together \(identity\), ptxas ok" "$T/tog"

# every recipe passes ptxas, two at a time
echo "$recipes" | xargs -P2 -I{} sh -c '"$1" recipe check --ptxas "$2" >>"$3/ptxas.out" 2>>"$3/ptxas.err" || echo "$2" >>"$3/ptxas.failed"' sh "$D4R" {} "$T"
if [ -f "$T/ptxas.failed" ]; then
	cat "$T/ptxas.err"
	fail "ptxas rejects: $(cat "$T/ptxas.failed")"
fi
[ "$(grep -c '^ok .*ptxas ok' "$T/ptxas.out")" -eq 11 ] || fail "not 11 recipes through ptxas"

# a stale recipe: one statement of phase 8 changes
mkdir -p "$T/c/enc4"
cp "$M" "$T/c/enc4/enc4.ptx"
first=$(sed -n 's/.*"first":[[:space:]]*"\^\(mma[^"]*\)\$".*/\1/p' recipes/enc4/phase-08.json | head -n1)
line=$(grep -n -m1 -F "$(printf '%s' "$first" | sed 's/\\\\//g; s/\\//g')" "$T/c/enc4/enc4.ptx" | cut -d: -f1)
[ -n "$line" ] || fail "cannot find phase 8's first statement"
sed -i "${line}s/{%r\([0-9]*\), *%r\([0-9]*\)}, {/{%r\2, %r\1}, {/" "$T/c/enc4/enc4.ptx"
cmp -s "$M" "$T/c/enc4/enc4.ptx" && fail "the stale copy of the module is not changed"
expect_rc 2 "$D4R" recipe check --corpus "$T/c" recipes/enc4/phase-08.json
expect_grep "stale recipe: the cut s[0-9]+\.\.s[0-9]+ \(lines [0-9]+\.\.[0-9]+\) of 'cuda_dldn_engine_swin_enc4_kernel' does not match its guards" "$T/err"
expect_grep "sha256: expected [0-9a-f]{64}" "$T/err"
expect_grep "first: +expected /" "$T/err"
exit 0
