#!/usr/bin/env bash
# Bytes outside the cut are the input's, checked without taking the
# splicer's word for where its edit lies.  The cut's span comes from `show`
# (the statements' source lines, from the parse of the original): the
# spliced module must begin with every byte of the original before the first
# statement of the cut and end with every byte after the ';' of its last.
# A splicer that also swallows the byte after a cut (the newline) fails
# here, and in `splice --every-phase`, whose in-memory check uses the same
# span (src/cmd/splice.c, outside_kept).
. "$D4R_TOP/tests/cli/lib.sh"
M="$D4R_TOP/corpus/enc4/enc4.ptx"
E=cuda_dldn_engine_swin_enc4_kernel
[ -f "$M" ] || fail "no corpus/enc4/enc4.ptx"
cd "$D4R_TOP" || exit 1

# kept P OUT : the lines of phase P in the original (from show) hold the cut;
# OUT keeps the bytes before its first statement and after its last ';'
kept() {
	"$D4R" show "$M" --phase "$1" >"$T/show" || fail "show --phase $1"
	awk '/^> s/ { l = $3; sub(/^L/, "", l); if (!f) f = l; last = l } END { print f, last }' \
		"$T/show" >"$T/lines"
	python3 - "$M" "$2" "$T/lines" <<'PY'
import sys
orig = open(sys.argv[1], "rb").read()
out = open(sys.argv[2], "rb").read()
first, last = map(int, open(sys.argv[3]).read().split())
starts = [0] + [i + 1 for i, c in enumerate(orig) if c == 10]
line = lambda n: orig[starts[n - 1]:starts[n] - 1]
a = starts[first - 1] + len(line(first)) - len(line(first).lstrip())  # first statement's first byte
b = starts[last - 1] + line(last).rindex(b";") + 1                   # after the last ';'
assert a + (len(orig) - b) <= len(out), "output shorter than what it must keep"
assert out[:a] == orig[:a], "a byte before the cut changed"
assert out[len(out) - (len(orig) - b):] == orig[b:], "a byte after the cut changed"
print("kept", a, "bytes before and", len(orig) - b, "after lines", first, "..", last)
PY
}

for p in 1 8 62; do
	expect_rc 0 "$D4R" splice enc4 --phase "$p" -o "$T/p$p.ptx"
	kept "$p" "$T/p$p.ptx" >"$T/k" 2>&1 || { cat "$T/k"; fail "phase $p: bytes outside the cut changed"; }
	expect_grep '^kept [0-9]+ bytes before and [0-9]+ after' "$T/k"
done

# the identity of every phase, alone and together, through the in-memory check
expect_rc 0 "$D4R" splice --module "$M" --entry $E --every-phase
[ "$(grep -c '^ok ' "$T/out")" -eq 62 ] || fail "not 62 identity splices kept the bytes outside their cuts"
expect_no_grep 'bytes outside the cut changed' "$T/out"
expect_rc 0 "$D4R" splice --module "$M" --entry $E --every-phase --together
expect_grep "^ok +$E: 62 of 62 phases spliced together \(identity\)$" "$T/out"
exit 0
