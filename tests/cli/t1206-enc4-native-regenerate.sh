#!/usr/bin/env bash
# The committed enc4 recipes and templates are what `recipe new --native`
# writes from the module: all 62 phases in both forms, written again into a
# scratch folder, byte for byte the same files (no other phase-*.json and no
# other template); and all 124 splice (guards, bindings, reloads).
. "$D4R_TOP/tests/cli/lib.sh"
[ -f "$TOP/corpus/enc4/enc4.ptx" ] || skip "no corpus/enc4/enc4.ptx"
cd "$TOP" || exit 1
mkdir -p "$T/r" "$T/ptx"
for p in $(seq 1 62); do
	pp=$(printf %02d "$p")
	"$D4R" recipe new enc4 --phase "$p" --native mma -o "$T/r/phase-$pp.json" --ptx "$T/ptx" 2>"$T/err" ||
		{ cat "$T/err"; fail "recipe new enc4 --phase $p --native mma"; }
	"$D4R" recipe new enc4 --phase "$p" --native f16 -o "$T/r/phase-$pp-f16.json" --ptx "$T/ptx" 2>"$T/err" ||
		{ cat "$T/err"; fail "recipe new enc4 --phase $p --native f16"; }
done
(cd "$T/r" && ls) >"$T/want-r"
(cd recipes/enc4 && ls phase-*.json) >"$T/have-r"
diff -u "$T/want-r" "$T/have-r" || fail "recipes/enc4 holds other recipes than the 124 native ones"
(cd "$T/ptx/enc4" && ls) >"$T/want-t"
(cd ptx/enc4 && ls) >"$T/have-t"
diff -u "$T/want-t" "$T/have-t" || fail "ptx/enc4 holds other files than the 124 native templates"
while read -r f; do
	cmp -s "$T/r/$f" "recipes/enc4/$f" || fail "recipes/enc4/$f differs from what recipe new --native writes"
done <"$T/want-r"
while read -r f; do
	cmp -s "$T/ptx/enc4/$f" "ptx/enc4/$f" || fail "ptx/enc4/$f differs from what recipe new --native writes"
done <"$T/want-t"
expect_rc 0 "$D4R" recipe check recipes/enc4/phase-*.json --jobs 2
[ "$(grep -c '^ok ' "$T/out")" -eq 124 ] || fail "not all 124 recipes splice"
expect_grep '^ok +recipes/enc4/phase-61-f16\.json: s21138\.\.s21217 \(80 mma\), ptx/enc4/phase-61-f16\.ptx' "$T/out"
exit 0
