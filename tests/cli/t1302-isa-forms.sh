#!/usr/bin/env bash
# The PTX ISA's declaration and operand forms that compilers rarely write
# (tests/golden/roundtrip/isa-forms.ptx: vector variables and parameters
# with element selectors .x-.w and .r-.a, .texref, .branchtargets with
# brx.idx, parameter attributes, sinks in vectors, initialised arrays):
# ptxas accepts the file (so it is valid PTX), the tool round-trips it, and
# an element is a use of its variable (live-in figures derived by hand).
. "$D4R_TOP/tests/cli/lib.sh"
f=$TOP/tests/golden/roundtrip/isa-forms.ptx
expect_rc 0 "$D4R" roundtrip --stats --opcodes "$f"
expect_grep ' identical$' "$T/out"
# s20-s24: add %r7, pko.x, pko.y; ... %v2.x; %r5; %r6; setp ... %r4, %r3
expect_rc 0 "$D4R" show "$f" --entry forms --stmts 20:24 --live
expect_grep '^live-in \(6\)' "$T/out"
for r in pko %v2 %r5 %r6 %r4 %r3; do
	grep -Eq "^  $r +\\." "$T/out" || fail "live-in lacks $r"
done
expect_grep '^live-out \(3\)' "$T/out"
# pack2: out written in two halves, in.x and in.y read: in is live-in
expect_rc 0 "$D4R" show "$f" --entry pack2 --stmts 0:1 --live
expect_grep '^live-in \(1\)' "$T/out"
grep -Eq '^  in +\.' "$T/out" || fail "pack2: 'in' is not live-in"
ptxas=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[ -x "$ptxas" ] || skip "no ptxas at $ptxas: the file's validity is not checked"
"$ptxas" -arch=sm_90 "$f" -o "$T/forms.cubin" || fail "ptxas rejects $f"
exit 0
