#!/usr/bin/env bash
# t1802-verb-typos: a mistyped verb, sub-verb or option is named as what it
# is, with the word it was meant to be: "unknown verb 'splcie' (did you
# mean 'splice'?)" rather than the main job's "unexpected argument 'enc4'
# after the layer 'splcie'"; "unknown sub-verb 'nwe'" rather than recipe's
# "unknown option '--phase'".  A layer of a verb-like name is still a layer.
. "$D4R_TOP/tests/cli/lib.sh"
cd "$TOP"
typo() { # WANT CMD...
	local want=$1
	shift
	expect_rc 2 "$D4R" "$@"
	grep -qF -- "$want" "$T/err" || { cat "$T/err"; fail "'$*': no \"$want\""; }
}
typo "unknown verb 'splcie' (did you mean 'splice'?)" splcie enc4 --phase 8
typo "unknown verb 'phase' (did you mean 'phases'?)" phase corpus/enc4/enc4.ptx
typo "unknown verb 'shwo' (did you mean 'show'?)" shwo corpus/enc4/enc4.ptx --phase 8
typo "unknown verb 'recpie' (did you mean 'recipe'?)" recpie new enc4 --phase 8
typo "unknown verb 'bisekt' (did you mean 'bisect'?)" bisekt enc4 --phase 8
expect_no_grep "after the layer" "$T/err"
typo "recipe: unknown sub-verb 'nwe' (did you mean 'new'?)" recipe nwe enc4 --phase 8
expect_no_grep "unknown option" "$T/err"
typo "recipe: unknown sub-verb 'chekc' (did you mean 'check'?)" recipe chekc x.json
typo "recipe: unknown sub-verb 'frobnicate' (the sub-verbs are new, check or best)" recipe frobnicate
typo "unknown option '--phse' (did you mean '--phase'?)" enc4 --phse 8
typo "unknown option '--recipie' (did you mean '--recipe'?)" splice enc4 --recipie x.json
# --json: the error document says the same
expect_rc 2 "$D4R" splcie enc4 --phase 8 --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]=="error" and d["exit"]==2 and "did you mean '"'"'splice'"'"'" in d["message"], d' "$T/out" ||
	fail "splcie --json: no error document naming the verb"
# A word far from every verb stays the main job's: no such layer.
typo "no layer 'frobnicate'" frobnicate --phase 8
# A layer named like a typo of a verb is a layer: the main job runs it.
mkdir -p "$T/repo/recipes/splcie"
cp recipes/enc4/layer.json "$T/repo/recipes/splcie/layer.json"
cd "$T/repo"
expect_rc 2 "$D4R" splcie --phase 8
expect_no_grep "unknown verb" "$T/err"
exit 0
