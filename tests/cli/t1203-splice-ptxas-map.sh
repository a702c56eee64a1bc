#!/usr/bin/env bash
# splice --check=ptxas: a ptxas error on a line of the template is reported
# at that template line; the output is still written, for inspection, and
# the exit status is 2.  recipe check --ptxas says the same, writes nothing.
. "$D4R_TOP/tests/cli/lib.sh"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -x "$PTXAS" ] || skip "no ptxas at $PTXAS"
G="$D4R_TOP/tests/golden/splice"
cp "$G/small.ptx" "$G/native1.tpl.ptx" "$G/native-phase1.recipe.json" "$T/"
cd "$T" || exit 1
# line 14 of the template: an instruction ptxas does not know
sed -i '14s/^\tmma\.sync\.aligned\.m16n8k32/\tmma.sync.aligned.m16n8k33/' native1.tpl.ptx
grep -q 'm16n8k33' native1.tpl.ptx || fail "could not break the template"
expect_rc 2 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o out.ptx --check=ptxas
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: REJECTED' "$T/err"
expect_grep 'template \./native1\.tpl\.ptx:14[;:]' "$T/err"
expect_grep 'ptxas rejects the spliced module \(written for inspection\)' "$T/err"
[ -f out.ptx ] || fail "the rejected module was not written"
expect_rc 2 "$D4R" recipe check --corpus . --ptxas native-phase1.recipe.json
expect_grep '^FAIL +native-phase1.recipe.json' "$T/out"
expect_grep 'template \./native1\.tpl\.ptx:14' "$T/err"
# the unbroken template passes
cp "$G/native1.tpl.ptx" .
expect_rc 0 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o out.ptx --check=ptxas
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: ok' "$T/err"
exit 0
