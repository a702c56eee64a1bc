#!/usr/bin/env bash
# splice --check=ptxas: a ptxas error on a line of the template is reported
# at that template line and the exit status is 2; the output path gets
# nothing (it keeps what it had) and the module goes beside it as
# NAME.rejected.ptx, named in the message, unless --keep-rejected asks for
# it at the output path; the same for splice --phases and probe.  recipe
# check --ptxas says the same, writes nothing.
. "$D4R_TOP/tests/cli/lib.sh"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -x "$PTXAS" ] || skip "no ptxas at $PTXAS"
G="$D4R_TOP/tests/golden/splice"
cp "$G/small.ptx" "$G/native1.tpl.ptx" "$G/native-phase1.recipe.json" "$T/"
cd "$T" || exit 1
# line 14 of the template: layouts ptxas refuses for this mma (each one a
# PTX modifier, so only ptxas can tell)
sed -i '14s/^\(\tmma\.sync\.aligned\.m16n8k32\)\.row\.col\./\1.col.row./' native1.tpl.ptx
grep -q 'm16n8k32\.col\.row' native1.tpl.ptx || fail "could not break the template"
echo "kept" >out.ptx
expect_rc 2 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o out.ptx --check=ptxas
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: REJECTED' "$T/err"
expect_grep 'template \./native1\.tpl\.ptx:14[;:]' "$T/err"
expect_grep "ptxas rejects the spliced module: 'out.ptx' not written \(it keeps what it had\); the module is in 'out.rejected.ptx'" "$T/err"
expect_grep '^wrote: +out\.rejected\.ptx \([0-9]+ bytes\), rejected by ptxas' "$T/err"
[ "$(cat out.ptx)" = kept ] || fail "a module ptxas rejects was written to -o"
expect_grep 'm16n8k32\.col\.row' out.rejected.ptx
# --json says where it went; no .ptx suffix: NAME.rejected.ptx
expect_rc 2 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o plain --check=ptxas --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["output"]=="plain" and d["rejected"]=="plain.rejected.ptx", d' "$T/out" ||
	fail "splice --json: output and rejected"
[ ! -e plain ] && [ -f plain.rejected.ptx ] || fail "-o plain: expected only plain.rejected.ptx"
# standard output gets nothing
expect_rc 2 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o - --check=ptxas
[ ! -s "$T/out" ] || fail "-o -: a module ptxas rejects went to standard output"
expect_grep "nothing written to standard output \(--keep-rejected writes it there\)" "$T/err"
# asked for: written to -o all the same, still exit 2
rm -f out.rejected.ptx
expect_rc 2 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o out.ptx --check=ptxas --keep-rejected
expect_grep "written to 'out.ptx' all the same, as --keep-rejected asks" "$T/err"
expect_grep 'm16n8k32\.col\.row' out.ptx
[ ! -e out.rejected.ptx ] || fail "--keep-rejected wrote out.rejected.ptx too"
expect_rc 2 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o out.ptx --keep-rejected
expect_grep "option '--keep-rejected' needs '--check=ptxas'" "$T/err"
# splice --phases: the same
mkdir -p recipes/small
cp native-phase1.recipe.json recipes/small/phase-01.json && cp native1.tpl.ptx recipes/small/
expect_rc 2 "$D4R" splice small --phases 1 --corpus . --check=ptxas -o phases.ptx
expect_grep "'phases.ptx' not written \(it keeps what it had\); the module is in 'phases.rejected.ptx'" "$T/err"
[ ! -e phases.ptx ] && [ -f phases.rejected.ptx ] || fail "splice --phases wrote a module ptxas rejects to -o"
# probe: the instrumented module of a module ptxas rejects (the spliced one)
cp out.ptx spliced.ptx
echo "kept" >probe.ptx
expect_rc 2 "$D4R" probe spliced.ptx --check=ptxas -o probe.ptx
expect_grep "probe: ptxas rejects the instrumented module: 'probe.ptx' not written \(it keeps what it had\); the module is in 'probe.rejected.ptx'" "$T/err"
[ "$(cat probe.ptx)" = kept ] && [ -f probe.rejected.ptx ] || fail "probe wrote a module ptxas rejects to -o"
expect_rc 2 "$D4R" recipe check --corpus . --ptxas native-phase1.recipe.json
expect_grep '^FAIL +native-phase1.recipe.json' "$T/out"
expect_grep 'template \./native1\.tpl\.ptx:14' "$T/err"
# the unbroken template passes
cp "$G/native1.tpl.ptx" .
expect_rc 0 "$D4R" splice --corpus . --recipe native-phase1.recipe.json -o out.ptx --check=ptxas
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: ok' "$T/err"
exit 0
