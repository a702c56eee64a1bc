#!/usr/bin/env bash
# recipe new --native writes a native phase from the phase's facts, in the
# vendor's instruction (mma) or in exact f16 form (f16): the recipe and the
# template land where the layer keeps them, splice and pass ptxas; writing
# them again gives the same bytes; an existing template that differs is kept
# unless --force; options the native form cannot honour are refused; without
# a layer the template goes beside the recipe.
. "$D4R_TOP/tests/cli/lib.sh"
G="$D4R_TOP/tests/golden/splice"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
mkdir -p "$T/repo/recipes/small" "$T/repo/ptx" "$T/repo/corpus/small"
cp "$G/small.ptx" "$T/repo/corpus/small/small.ptx"
cd "$T/repo" || exit 1
M="corpus/small/small.ptx"
A=(--module $M --entry small_kernel)
ptxas_opt=
if [ -x "$PTXAS" ]; then
	ptxas_opt=--ptxas
else
	skip_part "no $PTXAS, so recipe check ran without --ptxas"
fi

expect_rc 0 "$D4R" recipe new small --phase 1 --native mma "${A[@]}"
expect_grep '^form: +mma \(the vendor.s instruction\)' "$T/err"
expect_grep "wrote (.*/)?ptx/small/phase-01.ptx" "$T/err"
expect_grep "wrote (.*/)?recipes/small/phase-01.json" "$T/err"
expect_rc 0 "$D4R" recipe new small --phase 1 --native f16 "${A[@]}"
expect_grep "wrote (.*/)?ptx/small/phase-01-f16.ptx" "$T/err"
expect_grep "wrote (.*/)?recipes/small/phase-01-f16.json" "$T/err"
expect_grep '"template":[[:space:]]*"small/phase-01-f16.ptx"' recipes/small/phase-01-f16.json
expect_grep '"reloads":' recipes/small/phase-01-f16.json
# small.ptx phase 1: A from [%r4] in shared, B from [%rd3+64], C zero; both
# mma read the same A words and the same two B words (in the other order):
# the f16 form converts each of the 6 words once, low and high halves
expect_grep '^	ld\.shared\.v4\.u32 	\{%a0, %a1, %a2, %a3\}, \[%\{a_base0\}\];	// s7$' ptx/small/phase-01.ptx
expect_grep '^	ld\.global\.nc\.v2\.u32 	\{%b0, %b1\}, \[%\{b_base0\}\+64\];	// s8$' ptx/small/phase-01.ptx
[ "$(grep -c '^	cvt\.rn\.f16x2\.e4m3x2' ptx/small/phase-01-f16.ptx)" -eq 12 ] ||
	fail "phase 1 f16: expected 12 conversions (6 words, low and high halves, each once)"
expect_grep '\{%s2, %s3\}, \{%lo0, %lo1, %lo2, %lo3\}, \{%lo5, %lo4\}, \{%z, %z\};' ptx/small/phase-01-f16.ptx
[ "$(grep -c '^	mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16' ptx/small/phase-01-f16.ptx)" -eq 4 ] ||
	fail "phase 1 f16: expected two m16n8k16 mma per e4m3 mma"
[ "$(grep -c '^	add\.rn\.f16x2' ptx/small/phase-01-f16.ptx)" -eq 4 ] ||
	fail "phase 1 f16: expected one f16x2 add per D word"
expect_no_grep 'm16n8k32' <(grep -v '^//' ptx/small/phase-01-f16.ptx)
expect_rc 0 "$D4R" recipe check recipes/small/phase-01.json recipes/small/phase-01-f16.json \
	--module $M $ptxas_opt
[ "$(grep -c '^ok ' "$T/out")" -eq 2 ] || fail "not both native recipes pass"

# written again: the same bytes; the recipe is not overwritten without --force
cp ptx/small/phase-01-f16.ptx "$T/t1" && cp recipes/small/phase-01-f16.json "$T/r1"
expect_rc 2 "$D4R" recipe new small --phase 1 --native f16 "${A[@]}"
expect_grep "phase-01-f16.json' exists \(--force overwrites it\)" "$T/err"
expect_rc 0 "$D4R" recipe new small --phase 1 --native f16 "${A[@]}" --force
expect_grep 'phase-01-f16.ptx unchanged' "$T/err"
cmp -s "$T/t1" ptx/small/phase-01-f16.ptx || fail "the template changed when written again"
cmp -s "$T/r1" recipes/small/phase-01-f16.json || fail "the recipe changed when written again"
# a template that differs is the author's: kept, unless --force
echo "// edited" >>ptx/small/phase-01-f16.ptx
rm recipes/small/phase-01-f16.json
expect_rc 2 "$D4R" recipe new small --phase 1 --native f16 "${A[@]}"
expect_grep "phase-01-f16.ptx' exists and differs from the phase's native template \(--force replaces it\)" "$T/err"
[ ! -e recipes/small/phase-01-f16.json ] || fail "a refused run wrote the recipe"
expect_rc 0 "$D4R" recipe new small --phase 1 --native f16 "${A[@]}" --force
cmp -s "$T/t1" ptx/small/phase-01-f16.ptx || fail "--force did not write the template again"

# refused: what the native form cannot honour
expect_rc 2 "$D4R" recipe new small --phase 1 --native f16 --template identity "${A[@]}" -o x.json
expect_grep "option '--native' writes a phase's own template: it cannot be used with a built-in template" "$T/err"
expect_rc 2 "$D4R" recipe new small --phase 1 --native mma --cut phase+epilogue "${A[@]}"
expect_grep "cannot be used with '--cut=phase\+epilogue'" "$T/err"
expect_rc 2 "$D4R" recipe new small --phase 1 --native mma -o - "${A[@]}"
expect_grep "cannot be used with '-o -'" "$T/err"
expect_rc 2 "$D4R" recipe new small --phase 1 --native wmma "${A[@]}"
expect_grep "native" "$T/err"
expect_rc 2 "$D4R" recipe new small --phase 9 --native mma "${A[@]}" -o x.json
expect_grep "recipe new: phase 9 does not exist: small has 2 phases" "$T/err"

# without a layer: the template beside the recipe, named after it
mkdir -p "$T/loose"
expect_rc 0 "$D4R" recipe new --module $M --entry small_kernel --phase 2 --native f16 -o "$T/loose/p2.json"
[ -f "$T/loose/p2.ptx" ] || fail "no template beside the recipe"
expect_grep '"template":[[:space:]]*"\./p2\.ptx"' "$T/loose/p2.json"
expect_grep '^// Written by `d4r-splice recipe new --module small\.ptx --phase 2 --native f16`' "$T/loose/p2.ptx"
expect_rc 0 "$D4R" recipe check "$T/loose/p2.json" --module $M $ptxas_opt
test_done
