#!/usr/bin/env bash
# splice / recipe: usage errors exit 2 with a usage line; --help exits 0;
# missing files are named.
. "$D4R_TOP/tests/cli/lib.sh"
G="$D4R_TOP/tests/golden/splice"

expect_rc 2 "$D4R" splice
expect_grep 'give LAYER --phase N, or --recipe FILE' "$T/err"
expect_rc 0 "$D4R" splice --help
expect_grep '^usage: d4r-splice splice LAYER --phase N' "$T/out"
expect_rc 2 "$D4R" splice --bogus
expect_grep "unknown option '--bogus'" "$T/err"
expect_rc 2 "$D4R" splice enc4 --phase x
expect_grep "'x' is not a phase number" "$T/err"
expect_rc 2 "$D4R" splice --recipe
expect_grep "needs a value" "$T/err"
expect_rc 2 "$D4R" splice --recipe "$G/identity-phase1.recipe.json" --check=bogus
expect_grep "expected ptxas or none" "$T/err"
expect_rc 2 "$D4R" splice --recipe "$G/identity-phase1.recipe.json" --arch sm_x
expect_grep "option '--arch': bad architecture 'sm_x'" "$T/err"
expect_rc 2 "$D4R" splice --recipe "$T/missing.json"
expect_grep "cannot open '.*missing.json'" "$T/err"
# a recipe whose module is not there
expect_rc 2 "$D4R" splice --recipe "$G/identity-phase1.recipe.json" --module "$T/nope.ptx"
expect_grep "cannot open '.*nope.ptx'" "$T/err"
# an entry that is not there
expect_rc 2 "$D4R" splice --corpus "$G" --recipe "$G/identity-phase1.recipe.json" --entry nope -o "$T/o.ptx"
expect_grep "no function 'nope' with a body" "$T/err"
[ ! -e "$T/o.ptx" ] || fail "a failed splice wrote its output"
# --phase must agree with the recipe
expect_rc 2 "$D4R" splice small --phase 2 --corpus "$G" --recipe "$G/identity-phase1.recipe.json" -o "$T/o.ptx"
expect_grep "the recipe cuts phase 1, --phase says 2" "$T/err"

expect_rc 2 "$D4R" recipe
expect_grep '^usage: d4r-splice recipe new' "$T/err"
expect_rc 0 "$D4R" recipe --help
expect_rc 2 "$D4R" recipe frob
expect_grep "unknown sub-verb 'frob'" "$T/err"
expect_rc 2 "$D4R" recipe new small
expect_grep "give LAYER and --phase N" "$T/err"
expect_rc 2 "$D4R" recipe new small --phase 1 --cut sideways
expect_grep "expected phase or phase\+epilogue" "$T/err"
expect_rc 2 "$D4R" recipe check
expect_grep "no recipe given" "$T/err"

# recipe format errors name the file and the key's JSON path
printf '{"cut": {"phase": 1, "stmts": [1, 2]}, "template": "identity", "guards": {"sha256": "%064d"}}' 0 >"$T/r1.json"
expect_rc 2 "$D4R" recipe check "$T/r1.json"
expect_grep "r1.json: cut: give exactly one of 'phase' and 'stmts'$" "$T/err"
printf '{"cut": {"phase": 1}, "template": "identity"}' >"$T/r2.json"
expect_rc 2 "$D4R" recipe check "$T/r2.json"
expect_grep "r2.json: guards: missing key 'sha256' \\(every recipe pins" "$T/err"
printf '{"cut": {"phase": 1}, "template": "identity", "guards": {"sha256": "abc"}}' >"$T/r3.json"
expect_rc 2 "$D4R" recipe check "$T/r3.json"
expect_grep "r3.json: guards.sha256: expected 64 hex digits$" "$T/err"
printf '{"cut": {"phase": 1.5}, "template": "identity"}' >"$T/r4.json"
expect_rc 2 "$D4R" recipe check "$T/r4.json"
expect_grep "r4.json: cut.phase: expected an integer, found 1.5$" "$T/err"
printf '{"cut": {"phase": 1}, "template": "identity", "bind": {"a": "%%r1"}, "guards": {"sha256": "%064d"}}' 0 >"$T/r5.json"
expect_rc 2 "$D4R" recipe check "$T/r5.json"
expect_grep "r5.json: bind: the built-in 'identity' template takes none$" "$T/err"
printf '{"cut": {"phase": 1}, ' >"$T/r6.json"
expect_rc 2 "$D4R" recipe check "$T/r6.json"
expect_grep "r6.json:1:23: the document ends early: the object opened at .*r6.json:1:1 \(.\{.\) is not closed$" "$T/err"
printf '{"cut": {"phase": 1}, "template": "identity", "guards": {"sha256": "%064d"}}\n}\n' 0 >"$T/r7.json"
expect_rc 2 "$D4R" recipe check "$T/r7.json"
expect_grep "r7.json:2:1: text after the JSON document$" "$T/err"
printf '{"cut": {"phase": 1}, "template": "identity", "guards": {"sha256": "%064d", "mma": 1, "mma": 2}}' 0 >"$T/r8.json"
expect_rc 2 "$D4R" recipe check "$T/r8.json"
expect_grep "r8.json: guards: key 'mma' given twice$" "$T/err"
printf '{"cut": {"phase": 1}, "template": "identity", "gaurds": {}}' >"$T/r9.json"
expect_rc 2 "$D4R" splice --recipe "$T/r9.json" --module "$G/small.ptx"
expect_grep "^d4r-splice: .*r9.json: unknown key 'gaurds' \\(expected one of 'layer', 'module'," "$T/err"
exit 0
