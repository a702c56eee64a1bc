#!/usr/bin/env bash
# t2002-stdin-stdout: "-" is standard input for a module argument (phases,
# show, grep, report, roundtrip, probe, splice --module, recipe check
# --module, read again for each recipe) and for a frame of diff, and
# standard output for -o; what a command prints from "-" is what it prints
# from the file, and its messages name the input <stdin>.
. "$D4R_TOP/tests/cli/lib.sh"
cd "$TOP"
M=corpus/enc4/enc4.ptx
E=cuda_dldn_engine_swin_enc4_kernel

# same ARGS...: the verb with "-" and the module on stdin prints what it
# prints with the module's path, exits the same
same() {
	local v=$1
	shift
	"$D4R" $v "$M" "$@" >"$T/file.out" 2>"$T/file.err"
	local rc1=$?
	"$D4R" $v - "$@" <"$M" >"$T/stdin.out" 2>"$T/stdin.err"
	local rc2=$?
	[ $rc1 -eq $rc2 ] || fail "$v - $*: exit $rc2, from the file $rc1"
	sed "s|$M|<stdin>|g; s|${M##*/}|<stdin>|g" "$T/file.out" | cmp -s - "$T/stdin.out" ||
		{ diff "$T/file.out" "$T/stdin.out" | head; fail "$v - $*: not what the file gives"; }
}
same phases
same phases --json
same show --phase 8 --live
same grep 'cvt\.rn\.satfinite\.e4m3x2' --phase 10 --epilogue
same report --md
same roundtrip
expect_rc 0 "$D4R" roundtrip --stats - <"$M"
expect_grep "^<stdin> +987647 +3 +22370 +1386 .* identical$" "$T/out"
same probe --phases 8 -o - -q

# splice: module from stdin, module to stdout
"$D4R" splice enc4 --phase 8 -q -o "$T/want.ptx" || fail "splice enc4 --phase 8"
expect_rc 0 "$D4R" splice --module - --entry $E --recipe recipes/enc4/phase-08.json -q -o - <"$M"
cmp -s "$T/out" "$T/want.ptx" || fail "splice --module - -o -: not the spliced module"
# recipe check reads "-" once and gives it to every recipe
expect_rc 0 "$D4R" recipe check recipes/enc4/phase-08.json recipes/enc4/phase-09.json --module - <"$M"
expect_grep "^ok    recipes/enc4/phase-08.json: s7771\.\.s7794 \(24 mma\)" "$T/out"
expect_grep "^ok    recipes/enc4/phase-09.json: s7802\.\.s7825 \(24 mma\)" "$T/out"
# recipe new: module from stdin, recipe to stdout
expect_rc 0 "$D4R" recipe new --module - --entry $E --phase 8 --template identity -o - <"$M"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["cut"]["phase"] == 8, r' "$T/out" ||
	fail "recipe new --module - -o -: not a recipe of phase 8"

# diff: a frame from stdin
printf 'abcdefgh' >"$T/a"
printf 'abcdefgX' >"$T/b"
expect_rc 0 "$D4R" diff - "$T/a" <"$T/a"
expect_rc 1 "$D4R" diff "$T/a" - <"$T/b"

# messages name the input <stdin>
printf 'garbage {\n' >"$T/bad.ptx"
expect_rc 2 "$D4R" phases - <"$T/bad.ptx"
expect_grep "^<stdin>:1:1: " "$T/err"
expect_rc 2 "$D4R" roundtrip - <"$T/bad.ptx"
expect_grep "^<stdin>:1:1: " "$T/err"
exit 0
