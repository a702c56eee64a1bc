#!/usr/bin/env bash
# t2005-install: `make install PREFIX=P` puts the program in P/bin, recipes/,
# ptx/ and corpus/ in P/share/d4r-splice, where the installed program finds
# them from any folder, and a bash completion generated from the option
# tables in P/share/bash-completion/completions; the program copied alone
# finds no layer.  `make uninstall` removes it all.
. "$D4R_TOP/tests/cli/lib.sh"
command -v make >/dev/null || skip "no make"
P=$T/prefix
make -s -C "$TOP" install PREFIX="$P" BUILD="${D4R_BUILD:-build}" >"$T/make.out" 2>&1 ||
	{ cat "$T/make.out"; fail "make install"; }
for f in bin/d4r-splice share/man/man1/d4r-splice.1 share/bash-completion/completions/d4r-splice \
	share/d4r-splice/recipes/enc4/layer.json share/d4r-splice/recipes/enc4/phase-08.json \
	share/d4r-splice/ptx/enc4/phase-08.ptx share/d4r-splice/corpus/enc4/enc4.ptx; do
	[ -f "$P/$f" ] || fail "make install did not write $f"
done
cmp -s "$TOP/recipes/enc4/phase-08.json" "$P/share/d4r-splice/recipes/enc4/phase-08.json" ||
	fail "the installed recipe is not the repository's"

# From a folder with no recipes/ above it: the installed data is found.
mkdir -p "$T/elsewhere" && cd "$T/elsewhere"
expect_rc 0 "$P/bin/d4r-splice" splice enc4 --phase 8 -o out.ptx
expect_grep "template: +ptx/enc4/phase-08\.ptx" "$T/err"
"$D4R" splice enc4 --phase 8 -q -o "$T/want.ptx" 2>/dev/null ||
	(cd "$TOP" && "$D4R" splice enc4 --phase 8 -q -o "$T/want.ptx") || fail "splice in the repository"
cmp -s out.ptx "$T/want.ptx" || fail "the installed program splices other bytes"
expect_rc 0 "$P/bin/d4r-splice" recipe check "$P/share/d4r-splice/recipes/enc4/phase-08.json"
expect_grep "^ok    .*phase-08.json: s7771\.\.s7794 \(24 mma\)" "$T/out"
# the program alone, not installed, finds no layer here
mkdir -p "$T/alone/bin" && cp "$P/bin/d4r-splice" "$T/alone/bin/"
expect_rc 2 "$T/alone/bin/d4r-splice" splice enc4 --phase 8 -o out2.ptx
expect_grep "layer 'enc4': no recipes/enc4 folder" "$T/err"

# The completion: the verbs, a verb's options and an option's choices.
bash -c '
. "$1"
t() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _d4r_splice; echo "${COMPREPLY[*]}"; }
[ "$(t d4r-splice ph)" = phases ] || { echo "verbs: $(t d4r-splice ph)"; exit 1; }
[ "$(t d4r-splice recipe "")" = "new check best" ] || { echo "recipe: $(t d4r-splice recipe "")"; exit 1; }
[ "$(t d4r-splice check enc4 --sha)" = --shard ] || { echo "check: $(t d4r-splice check enc4 --sha)"; exit 1; }
[ "$(t d4r-splice probe --at "")" = "phase-end epilogue-end" ] || { echo "--at: $(t d4r-splice probe --at "")"; exit 1; }
[ "$(t d4r-splice splice --check=p)" = --check=ptxas ] || { echo "--check=: $(t d4r-splice splice --check=p)"; exit 1; }
[ "$(t d4r-splice enc4 --pha)" = "--phase --phases" ] || { echo "job: $(t d4r-splice enc4 --pha)"; exit 1; }
PATH=$2:$PATH
[ "$(t d4r-splice en)" = enc4 ] || { echo "layers: $(t d4r-splice en)"; exit 1; }
' _ "$P/share/bash-completion/completions/d4r-splice" "$P/bin" || fail "the bash completion"
# every verb the program lists is completed (recipe through its sub-verbs)
"$D4R" --list-verbs | grep -vx recipe >"$T/verbs"
while read -r v; do
	grep -q "^	\"$v\")" "$P/share/bash-completion/completions/d4r-splice" ||
		fail "the completion has no options for '$v'"
done <"$T/verbs"
[ "$(wc -l <"$T/verbs")" -ge 14 ] || fail "too few verbs listed: $(cat "$T/verbs")"

make -s -C "$TOP" uninstall PREFIX="$P" >/dev/null 2>&1 || fail "make uninstall"
left=$(find "$P" -type f | head -3)
[ -z "$left" ] || fail "make uninstall left $left"
exit 0
