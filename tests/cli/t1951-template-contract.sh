#!/usr/bin/env bash
# A template's header is a contract its body is held to, and `recipe check`
# (no --ptxas) reads the body with the project's parser: each mistake, a
# misspelt opcode included, is an error at the template's line and column
# (exit 2).  The memory verdict
# follows what the body does: a header that claims a store the body does
# not make does not cover the cut's store.
. "$D4R_TOP/tests/cli/lib.sh"
G="$D4R_TOP/tests/golden/splice"
mkdir -p "$T/repo/recipes/small" "$T/repo/ptx/small" "$T/repo/corpus/small"
cp "$G/small.ptx" "$T/repo/corpus/small/small.ptx"
cd "$T/repo" || exit 1
# the cut s12..s13: epilogue 1's two f16x2 adds (live-in %r12..%r15, live-out
# %r16 %r17); its sha256 from the stale message of a recipe with none
recipe() {   # FILE TEMPLATE CUT-FIRST CUT-LAST SHA
	printf '{"module": "small/small.ptx", "entry": "small_kernel", "cut": {"stmts": [%s, %s]},
 "template": "%s", "bind": {"x": ["%%r12", "%%r13", "%%r14", "%%r15"], "y": ["%%r16", "%%r17"]},
 "guards": {"sha256": "%s"}}\n' "$3" "$4" "$2" "$5" >"$1"
}
recipe recipes/small/r.json small/t.ptx 12 13 "$(printf '%064d' 0)"
cp "$G/adds.tpl.ptx" ptx/small/t.ptx
expect_rc 2 "$D4R" recipe check recipes/small/r.json
sha=$(sed -n 's/^ *found *\([0-9a-f]\{64\}\)$/\1/p' "$T/err")
[ ${#sha} -eq 64 ] || fail "no sha256 in the stale message"
recipe recipes/small/r.json small/t.ptx 12 13 "$sha"
expect_rc 0 "$D4R" recipe check recipes/small/r.json
expect_grep '^ok +recipes/small/r.json: s12\.\.s13' "$T/out"

# tpl LINE... : ptx/small/t.ptx is the header of adds.tpl.ptx, then LINEs
tpl() {
	{ sed -n '1,5p' "$G/adds.tpl.ptx"; printf '%s\n' "$@"; } >ptx/small/t.ptx
}
# check WANT : recipe check fails with WANT (an ERE) as its message's start
check() {
	expect_rc 2 "$D4R" recipe check recipes/small/r.json
	expect_grep "^d4r-splice: recipe check: ptx/small/t.ptx:$1" "$T/err"
	expect_grep "^FAIL +recipes/small/r.json" "$T/out"
}
adds=$'\tadd.rn.f16x2 \t%{y[0]}, %{x[0]}, %{x[2]};\n\tadd.rn.f16x2 \t%{y[1]}, %{x[1]}, %{x[3]};'

# a syntax error, after holes that change length on its line (col 24 is
# the second operand that lacks its comma; ptxas is not run)
tpl $'\tadd.rn.f16x2 \t%{y[0]} %{x[0]}, %{x[2]};' $'\tadd.rn.f16x2 \t%{y[1]}, %{x[1]}, %{x[3]};'
check "6:24: expected ',' or ';' after an operand"
expect_grep $'^    \tadd.rn.f16x2 \t%\\{y\\[0\\]\\} %\\{x\\[0\\]\\}, %\\{x\\[2\\]\\};$' "$T/err"
tpl "$adds" $'\t{'
check "8:2: this '\\{' is not closed in the template"
tpl "$adds" $'\tmov.b32 %{y[0]}, ;'
check "8:19: unexpected character in an operand"
# recipe check reads the template on its own: a stale recipe or a module
# that is not there does not hide what is wrong with it
recipe recipes/small/r2.json small/t.ptx 12 13 "$(printf '%064d' 0)"
sed 's|small/small.ptx|small/none.ptx|' recipes/small/r2.json >recipes/small/r3.json
for r in r2 r3; do
	expect_rc 2 "$D4R" recipe check recipes/small/$r.json
	expect_grep "^d4r-splice: recipe check: ptx/small/t.ptx:8:19: unexpected character" "$T/err"
	expect_no_grep "stale|none.ptx" "$T/err"
done
# an opcode that is not the PTX ISA's is caught before ptxas, at the
# misspelt component, with the nearest spelling (col 6: 'snyc' after the tab)
tpl "$adds" $'\tmma.snyc.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%{y[0]}, %{y[1]}}, {%{x[0]}, %{x[1]}, %{x[2]}, %{x[3]}}, {%{x[0]}, %{x[1]}}, {%{x[2]}, %{x[3]}};'
check "8:6: unknown modifier '\.snyc' of 'mma' \(did you mean 'mma\.sync'\?\)"
expect_grep $'^    \t    \^$' "$T/err"
tpl "$adds" $'\tmvo.b32 %{y[0]}, 0;'
check "8:2: unknown instruction 'mvo' \(did you mean 'mov\.b32'\?\)"
# memory under 'writes none' and 'reads none'
tpl "$adds" $'\tst.shared.u32 [%{x[0]}], %{y[0]};'
check "8:2: 'st.shared.u32' writes shared memory, and the header's '//! writes' does not list shared"
tpl "$adds" $'\t  red.shared.add.u32 [%{x[0]}], 1;'
check "8:4: 'red.shared.add.u32' writes shared memory"
tpl "$adds" $'\tatom.global.exch.b32 %{y[0]}, [%{x[0]}], 1;'
check "8:2: 'atom.global.exch.b32' writes global memory"
tpl "$adds" $'\tld.global.u32 %{y[0]}, [%{x[0]}];'
check "8:2: 'ld.global.u32' reads global memory, and the header's '//! reads' does not list global"
# a wgmma.mma_async reads its tiles from shared memory through its
# descriptors (B's always): a load of shared under 'reads none'
tpl "$adds" $'\t.reg .b64 %wd;' $'\tmov.b64 %wd, 0;' \
	$'\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%{y[0]}, %{y[1]}, %{x[0]}, %{x[1]}}, %wd, %wd, 1, 1, 1, 0, 0;'
check "10:2: 'wgmma\.mma_async\.sync\.aligned\.m64n8k16\.f32\.f16\.f16' reads shared memory, and the header's '//! reads' does not list shared"
# a barrier: the header has no barriers line, then says 0
tpl "$adds" $'\tbar.sync 0;'
check "8:2: 'bar.sync' is a barrier, and the header declares none"
{ sed -n '1,5p' "$G/adds.tpl.ptx"; echo '//! barriers 0'; echo "$adds"; echo $'\tbarrier.sync 0;'; } >ptx/small/t.ptx
check "9:2: 'barrier.sync' is a barrier, and the header says '//! barriers 0'"
# an out formal never written, an in formal written
tpl $'\tadd.rn.f16x2 \t%{y[0]}, %{x[0]}, %{x[2]};'
check "3:14: out formal 'y\\[1\\]' is never written by the template"
# an in formal the body writes: fine while its register is dead after the
# cut (%r15), an error when it is read there (%r5, by phase 2)
tpl "$adds" $'\tmov.b32 %{x[3]}, 0;'
expect_rc 0 "$D4R" recipe check recipes/small/r.json
{ sed -n '1,5p' "$G/adds.tpl.ptx"; echo '//! in .b32 z'; echo "$adds"; echo $'\tmov.b32 %{z}, 0;'; } \
	>ptx/small/t.ptx
sed 's|"y": \[|"z": "%r5", "y": [|' recipes/small/r.json >recipes/small/rz.json
expect_rc 2 "$D4R" recipe check recipes/small/rz.json
expect_grep "rz.json: 'bind.z': the template ptx/small/t.ptx writes in formal 'z' \\(line 9\\), and '%r5' is read after the cut: declare the formal inout" "$T/err"
# a header type that is not a PTX type
{ echo '//! in  .b32 x[4]'; echo '//! out .q32 y[2]'; echo "$adds"; } >ptx/small/t.ptx
check "2:9: '.q32' is not a PTX register type"

# the verdict: s12..s14 is the two adds and the shared store; a template
# whose header claims 'writes shared' but whose body does not store is not
# allowed to drop the store
recipe recipes/small/r.json small/t.ptx 12 14 "$(printf '%064d' 0)"
{ sed -n '1,4p' "$G/adds.tpl.ptx"; echo '//! writes shared'; echo "$adds"; } >ptx/small/t.ptx
expect_rc 2 "$D4R" recipe check recipes/small/r.json
sha=$(sed -n 's/^ *found *\([0-9a-f]\{64\}\)$/\1/p' "$T/err")
recipe recipes/small/r.json small/t.ptx 12 14 "$sha"
expect_rc 2 "$D4R" recipe check recipes/small/r.json
expect_grep "READ/WRITE DEPENDENCIES: cut invalid: s12\\.\\.s14" "$T/err"
expect_grep "the cut stores to shared \\(1 store\\) and the body of ptx/small/t.ptx stores nothing there" "$T/err"
# a body that stores where s16 reads after the cut is refused for that
{ sed -n '1,4p' "$G/adds.tpl.ptx"; echo '//! writes shared'; echo "$adds";
  echo $'\tst.shared.v2.u32 [%{x[0]}+512], {%{y[0]}, %{y[1]}};'; } >ptx/small/t.ptx
expect_rc 2 "$D4R" recipe check recipes/small/r.json
expect_grep "ptx/small/t.ptx:8 stores to shared memory, which may be read after the cut by s16 \\(line 37\\) 'ld\\.shared\\.v2\\.u32 \\{%r18, %r19\\}, \\[%r4\\+512\\];'" "$T/err"
exit 0
