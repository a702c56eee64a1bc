#!/usr/bin/env bash
# splice: golden files.  Each tests/golden/splice/NAME.recipe.json is spliced
# into its module (small.ptx, through --corpus); NAME.out.ptx is the exact
# expected output, NAME.err the exact expected message (exit 2).  Outputs
# must also pass ptxas (when the toolkit is there) and keep every byte
# outside the spliced region.
. "$D4R_TOP/tests/cli/lib.sh"
G="$D4R_TOP/tests/golden/splice"
cd "$G" || fail "no $G"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"

# outside_unchanged IN OUT: OUT = prefix + region + suffix where IN = prefix
# + cut + suffix; the region runs from the "d4r-splice: begin" line's '{'
# (or comment) to the end of the "d4r-splice: end" marker.
outside_unchanged() {
	local in=$1 out=$2 b e n
	b=$(grep -b -o -m1 -E '(\{	)?// d4r-splice: begin' "$out" | head -n1 | cut -d: -f1)
	e=$(grep -b -o -E '// d4r-splice: end' "$out" | tail -n1 | cut -d: -f1)
	[ -n "$b" ] && [ -n "$e" ] || fail "$out: no d4r-splice markers"
	e=$((e + 18))
	head -c "$b" "$out" >"$T/pre"
	head -c "$b" "$in" | cmp -s - "$T/pre" || fail "$out: bytes before the cut differ from $in"
	tail -c +$((e + 1)) "$out" >"$T/suf"
	n=$(stat -c %s "$T/suf")
	tail -c "$n" "$in" | cmp -s - "$T/suf" || fail "$out: bytes after the cut differ from $in"
}

n=0
for r in *.recipe.json; do
	name=${r%.recipe.json}
	n=$((n + 1))
	if [ -f "$name.out.ptx" ]; then
		expect_rc 0 "$D4R" splice --quiet --corpus . --recipe "$r" -o "$T/$name.ptx"
		cmp -s "$T/$name.ptx" "$name.out.ptx" || {
			diff "$name.out.ptx" "$T/$name.ptx" | head -40
			fail "$name: output differs from $name.out.ptx"
		}
		outside_unchanged small.ptx "$T/$name.ptx"
		if [ -x "$PTXAS" ]; then
			"$PTXAS" -arch=sm_89 -e small_kernel "$T/$name.ptx" -o /dev/null ||
				fail "$name: ptxas rejects the output"
		else
			skip_part "no $PTXAS, so the golden outputs were not given to ptxas"
		fi
	elif [ -f "$name.err" ]; then
		expect_rc 2 "$D4R" splice --quiet --corpus . --recipe "$r" -o "$T/$name.ptx"
		cmp -s "$T/err" "$name.err" || {
			diff "$name.err" "$T/err"
			fail "$name: message differs from $name.err"
		}
		[ ! -e "$T/$name.ptx" ] || fail "$name: a failed splice wrote its output"
	else
		fail "$name: neither $name.out.ptx nor $name.err"
	fi
done
[ "$n" -ge 10 ] || fail "only $n golden recipes"
test_done
