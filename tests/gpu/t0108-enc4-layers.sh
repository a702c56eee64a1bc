#!/usr/bin/env bash
# The whole layer spliced at once, in each form: `enc4 --phases 1-62` (the
# vendor's instruction in 62 native phases) and `--variant f16` (all 1,386
# e4m3 mma in exact f16 form); each identical to the oracle, both kernel
# times measured in the same run.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
for v in mma f16; do
	vopt=()
	[ $v = f16 ] && vopt=(--variant f16)
	"$D4R" enc4 --phases 1-62 "${vopt[@]}" --runs 50 >"$T/out" 2>&1
	rc=$?
	cat "$T/out"
	cp "$T/out" "$OUTD/layer-$v.txt"
	[ $rc -eq 0 ] || fail "--phases 1-62 ($v): exit $rc"
	expect_grep "^enc4 phases 1-62.*: IDENTICAL" "$T/out"
	expect_grep '^  cuts +62 cuts s7554-s21344, 1386 mma' "$T/out"
done
