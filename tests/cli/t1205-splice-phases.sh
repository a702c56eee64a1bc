#!/usr/bin/env bash
# --phases LIST [--variant NAME]: the recipes of those phases spliced into one
# module.  The list is parsed or refused by name; the module keeps every byte
# outside the cuts, which is checked here from the original's own statement
# lines (show --phase on the original), not from the splicer's report; each
# cut has its own fresh prefix; the main job and check take the same
# selection (without a GPU they stop at the driver, after the splice).
. "$D4R_TOP/tests/cli/lib.sh"
M="$TOP/corpus/enc4/enc4.ptx"
E=cuda_dldn_engine_swin_enc4_kernel
[ -f "$M" ] || skip "no corpus/enc4/enc4.ptx"
cd "$TOP" || exit 1

# the list and the variant, refused by name
expect_rc 2 "$D4R" splice enc4 --phases 0 -o "$T/x.ptx"
expect_grep "phase list '0': '0': the numbers count from 1" "$T/err"
expect_rc 2 "$D4R" splice enc4 --phases 5-3 -o "$T/x.ptx"
expect_grep "'5-3' runs backwards" "$T/err"
expect_rc 2 "$D4R" splice enc4 --phases 1,,2 -o "$T/x.ptx"
expect_grep "is not a number or a range A-B" "$T/err"
expect_rc 2 "$D4R" splice enc4 --phases 62-63 -o "$T/x.ptx"
expect_grep "^d4r-splice: phase 63 does not exist: enc4 has 62 phases$" "$T/err"
expect_rc 2 "$D4R" splice enc4 --phases 1-2 --variant nope -o "$T/x.ptx"
expect_grep "layer 'enc4' has no recipe for phase 1 in the variant 'nope': '.*recipes/enc4/phase-01-nope\.json' does not exist" "$T/err"
expect_rc 2 "$D4R" splice enc4 --phases 1-2 --variant 'f 16' -o "$T/x.ptx"
expect_grep "option '--variant': 'f 16' is not a variant name" "$T/err"
expect_rc 2 "$D4R" splice enc4 --phases 1-2 --phase 3
expect_grep "option '--phases?' cannot be used with '--phases?'" "$T/err"
expect_rc 2 "$D4R" splice --module "$M" --phases 1-2
expect_grep "option '--phases' needs LAYER" "$T/err"
expect_rc 2 "$D4R" splice --module "$M" --every-phase --phases 1-2
expect_rc 2 "$D4R" check enc4 --variant f16
expect_grep "option '--variant' needs '--phases'" "$T/err"
[ ! -e "$T/x.ptx" ] || fail "a refused splice wrote output"

# the statement lines of every phase of the original, from its own parse
for p in $(seq 1 62); do
	"$D4R" show "$M" --phase "$p" | awk -v p="$p" '/^> s/ { l = $3; sub(/^L/, "", l); if (!f) f = l; last = l } END { print p, f, last }'
done >"$T/lines"
[ "$(wc -l <"$T/lines")" -eq 62 ] || fail "not 62 phases in the original"

# outside_kept SPLICED PHASE... : every line of the original outside the cut
# lines of those phases is in SPLICED in order, and each cut is one region
outside_kept() {
	python3 - "$M" "$1" "$T/lines" "${@:2}" <<'PY'
import sys
orig = open(sys.argv[1], encoding="latin-1").read().split("\n")
out = open(sys.argv[2], encoding="latin-1").read().split("\n")
lines = {int(a): (int(b), int(c)) for a, b, c in (l.split() for l in open(sys.argv[3]))}
cuts = sorted(lines[int(p)] for p in sys.argv[4:])
j, i, k = 0, 1, 0                 # j: index in out; i: 1-based line of orig
while i <= len(orig):
    if k < len(cuts) and i == cuts[k][0]:
        first, last = cuts[k]
        lead = orig[i - 1][:len(orig[i - 1]) - len(orig[i - 1].lstrip())]
        assert out[j] .startswith(lead + "{\t// d4r-splice: begin "), (i, out[j][:80])
        while "// d4r-splice: end" not in out[j]:
            j += 1
        tail = orig[last - 1][orig[last - 1].rindex(";") + 1:]
        assert out[j].endswith("}\t// d4r-splice: end" + tail), (last, out[j][-60:])
        j += 1
        i = last + 1
        k += 1
        continue
    assert out[j] == orig[i - 1], ("line", i, orig[i - 1][:60], out[j][:60])
    i += 1
    j += 1
assert k == len(cuts) and j == len(out), (k, len(cuts), j, len(out))
print("kept", len(orig) - sum(b - a + 1 for a, b in cuts), "lines,", k, "regions")
PY
}

for v in "" f16; do
	vopt=()
	[ -n "$v" ] && vopt=(--variant "$v")
	expect_rc 0 "$D4R" splice enc4 --phases 1-62 "${vopt[@]}" -o "$T/all$v.ptx"
	expect_grep "^cuts: +62 recipes, 1386 mma, s7554\.\.s21344 of $E, fresh prefixes %spl0_\.\.%spl61_" "$T/err"
	outside_kept "$T/all$v.ptx" $(seq 1 62) >"$T/kept" 2>&1 || { cat "$T/kept"; fail "phases 1-62 ${v:-mma}: bytes outside the cuts changed"; }
	expect_grep '^kept [0-9]+ lines, 62 regions$' "$T/kept"
	# 62 regions, 62 distinct prefixes, and the template each names is its phase's
	[ "$(grep -o 'fresh prefix %spl[0-9]*_' "$T/all$v.ptx" | sort -u | wc -l)" -eq 62 ] || fail "not 62 distinct prefixes"
	for p in 1 12 21 61 62; do
		pp=$(printf %02d $p)
		expect_grep "begin ptx/enc4/phase-$pp${v:+-$v}\.ptx for s[0-9]+\.\.s[0-9]+" "$T/all$v.ptx"
	done
done
# the mma form keeps every vendor mma (1386); the f16 form has none left in
# its regions and two m16n8k16 for each
sed -n '/d4r-splice: begin/,/d4r-splice: end/p' "$T/all.ptx" | grep -Ec '^[[:space:]]*mma\.sync\.aligned\.m16n8k32\.row\.col\.f16\.e4m3\.e4m3\.f16' >"$T/n"
[ "$(cat "$T/n")" -eq 1386 ] || fail "mma form: $(cat "$T/n") vendor mma in the regions, expected 1386"
[ "$(grep -Ec '^[[:space:]]*mma\.sync\.aligned\.m16n8k32' "$T/allf16.ptx")" -eq 0 ] || fail "f16 form: a vendor mma is left"
[ "$(grep -Ec '^[[:space:]]*mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16' "$T/allf16.ptx")" -eq 2772 ] ||
	fail "f16 form: not 2 x 1386 m16n8k16 mma"

# a list with gaps: the phases named, no others
expect_rc 0 "$D4R" splice enc4 --phases 1-10,13,21-60 --variant f16 -o "$T/some.ptx"
expect_grep "^cuts: +51 recipes" "$T/err"
outside_kept "$T/some.ptx" $(seq 1 10) 13 $(seq 21 60) >"$T/kept" 2>&1 || { cat "$T/kept"; fail "phases 1-10,13,21-60: bytes outside the cuts changed"; }
expect_grep ', 51 regions$' "$T/kept"
expect_no_grep 'phase-1[12]-f16' "$T/some.ptx"

# one phase in a variant: the same recipe file as --recipe names
expect_rc 0 "$D4R" splice enc4 --phase 8 --variant f16 -o "$T/p8.ptx"
expect_grep 'template: +ptx/enc4/phase-08-f16\.ptx' "$T/err"

# the main job and check take the selection; without a driver they stop there
expect_rc 2 "$D4R" enc4 --phases 1-3 --variant f16
expect_grep "no CUDA driver" "$T/err"
expect_rc 2 "$D4R" enc4 --phases 3-1
expect_grep "runs backwards" "$T/err"
expect_rc 2 "$D4R" enc4 --phases 1-2 --recipe recipes/enc4/phase-01.json
expect_grep "option '--(phases|recipe)' cannot be used with '--(phases|recipe)'" "$T/err"
expect_rc 2 "$D4R" check enc4 --phases 1-3 recipes/enc4/phase-01.json
expect_grep "option '--phases' selects the recipes" "$T/err"
exit 0
