#!/usr/bin/env bash
# Bad facts get refusals, not wrong code: a native recipe written against
# enc4 fails its guards on a module where its phase differs, on one where a
# load it issues again differs, on one where a store now stands between that
# load and the cut, and on another module altogether; nothing is written.
# Spliced with others, a cut whose template writes memory between another's
# reload and its cut is refused too.
. "$D4R_TOP/tests/cli/lib.sh"
M="$TOP/corpus/enc4/enc4.ptx"
[ -f "$M" ] || skip "no corpus/enc4/enc4.ptx"
cd "$TOP" || exit 1
R=recipes/enc4

# copy_with SED : corpus $T/c/enc4/enc4.ptx, the module edited by SED
copy_with() {
	rm -rf "$T/c"
	mkdir -p "$T/c/enc4"
	sed "$1" "$M" >"$T/c/enc4/enc4.ptx"
	cmp -s "$M" "$T/c/enc4/enc4.ptx" && fail "'$1' changed nothing"
	return 0
}
line_of() { "$D4R" show "$M" --stmts "$1:$1" | awk '/^> s/ { sub(/^L/, "", $3); print $3 }'; }

# 1. phase 21 changed: its first mma's D pair swapped
l=$(line_of 13620)
copy_with "${l}s/{%r6934, %r6935}/{%r6935, %r6934}/"
for r in $R/phase-21.json $R/phase-21-f16.json; do
	expect_rc 2 "$D4R" recipe check --corpus "$T/c" "$r"
	expect_grep "stale recipe: the cut s13620\.\.s13639 .* does not match its guards" "$T/err"
	expect_grep "sha256: expected [0-9a-f]{64}" "$T/err"
done
expect_rc 2 "$D4R" splice enc4 --phase 21 --variant f16 --corpus "$T/c" -o "$T/out.ptx"
expect_rc 2 "$D4R" splice enc4 --phases 20-22 --variant f16 --corpus "$T/c" -o "$T/out.ptx"
expect_grep "phase-21-f16\.json: stale recipe" "$T/err"
[ ! -e "$T/out.ptx" ] || fail "a stale recipe was spliced"

# 2. a load phase 11's template issues again (s7857, C) reads other bytes
l=$(line_of 7857)
copy_with "${l}s/\[%rd2831+10560\]/[%rd2831+10564]/"
expect_rc 2 "$D4R" recipe check --corpus "$T/c" $R/phase-11-f16.json
expect_grep "stale recipe: the loads its template issues again \(guards\.reloads\) are not the module's" "$T/err"
expect_grep "first of them: s7857 \(line $l\)" "$T/err"
# (the recipe of phase 10, which does not load it, still splices)
expect_rc 0 "$D4R" recipe check --corpus "$T/c" $R/phase-10-f16.json

# 3. a store between that load and phase 11 (s7908 becomes one): the cut and
# the loads are the same text, but loading again is no longer safe
l=$(line_of 7908)
copy_with "${l}s/^.*\$/st.global.u32 [%rd2831+10560], %r3345;/"
expect_rc 2 "$D4R" recipe check --corpus "$T/c" $R/phase-11-f16.json
expect_grep "'guards\.reloads': loading s7857 .* again at the cut \(s8028\) is not safe: a store between the load and the cut may write its bytes" "$T/err"
expect_grep "at s7908 \(line $l\) 'st\.global\.u32" "$T/err"
# a phase whose template loads nothing across s7908 is not affected
expect_rc 0 "$D4R" recipe check --corpus "$T/c" $R/phase-12-f16.json

# 4. another module: the phase is there, its text is not
expect_rc 2 "$D4R" recipe check --module "$TOP/tests/golden/splice/small.ptx" --entry small_kernel $R/phase-02-f16.json
expect_grep "stale recipe: the cut s17\.\.s18 .* does not match its guards" "$T/err"
expect_grep "mma: +expected 24, found 2" "$T/err"
expect_rc 2 "$D4R" recipe check --module "$TOP/tests/golden/splice/small.ptx" --entry small_kernel $R/phase-21.json
expect_grep "phase-21.json: phase 21 does not exist: enc4 has 2 phases" "$T/err"

# 5. several at once: phase 2 loads its A at s7548, before phase 1; a phase-1
# template that writes shared memory would break that proof
mkdir -p "$T/ptx"
cp -r ptx/enc4 "$T/ptx/"
sed -i 's|^//! writes none$|//! writes shared|' "$T/ptx/enc4/phase-01-f16.ptx"
expect_rc 0 "$D4R" splice enc4 --phases 1-2 --variant f16 -o "$T/ok.ptx"
expect_rc 2 "$D4R" splice enc4 --phases 1-2 --variant f16 --ptx "$T/ptx" -o "$T/bad.ptx"
expect_grep "phase-02-f16\.json: its template loads s7548\.\. again at s7585, and the cut of .*phase-01-f16\.json \(s7554\.\.s7577\) in between has a template that writes memory" "$T/err"
[ ! -e "$T/bad.ptx" ] || fail "a refused selection was spliced"
exit 0
