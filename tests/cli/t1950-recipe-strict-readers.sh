#!/usr/bin/env bash
# Readers are strict: a guard that does not compile is an invalid recipe
# (PCRE2's message and offset), never a stale one, for `recipe check` and
# `splice` alike; NUL bytes in a recipe or a manifest are errors with their
# offset; a recipe's module and template stay inside the corpus and ptx/
# folders, while paths given on the command line are the user's own.
. "$D4R_TOP/tests/cli/lib.sh"
G="$D4R_TOP/tests/golden/splice"
mkdir -p "$T/repo/recipes/small" "$T/repo/ptx/small" "$T/repo/corpus/small"
cp "$G/small.ptx" "$T/repo/corpus/small/small.ptx"
cp "$G/adds.tpl.ptx" "$T/repo/ptx/small/adds.ptx"
cd "$T/repo" || exit 1
expect_rc 0 "$D4R" recipe new small --phase 1 --module corpus/small/small.ptx \
	--entry small_kernel --template identity -o recipes/small/good.json
# edit KEY=JSON... : recipes/small/good.json with the members changed -> stdout
edit() {
	python3 - recipes/small/good.json "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    d = r
    *path, last = k.split(".")
    for p in path:
        d = d[p]
    d[last] = json.loads(v)
print(json.dumps(r))
PY
}
edit 'module="small/small.ptx"' >recipes/small/good2.json
mv recipes/small/good2.json recipes/small/good.json
expect_rc 0 "$D4R" recipe check recipes/small/good.json
expect_grep '^ok ' "$T/out"

# a guard that does not compile: invalid, not stale, in both verbs
edit 'guards.first="^mma(\\.sync"' >recipes/small/badre.json
msg="recipes/small/badre.json: guards.first: invalid recipe: the regular expression '\\^mma\\(\\\\.sync' does not compile: missing closing parenthesis \\(at offset 11\\)"
expect_rc 2 "$D4R" recipe check recipes/small/badre.json
expect_grep "$msg" "$T/err"
expect_no_grep "stale" "$T/err"
expect_rc 2 "$D4R" splice --recipe recipes/small/badre.json -o "$T/x.ptx"
expect_grep "^d4r-splice: $msg\$" "$T/err"
expect_no_grep "stale" "$T/err"
[ ! -e "$T/x.ptx" ] || fail "an invalid recipe wrote an output"
# ... said when the recipe is read, before the module is looked at: a cut
# that does not exist and a module that is not there do not hide it
edit 'guards.first="^mma(\\.sync"' 'cut={"phase": 99}' 'module="small/nowhere.ptx"' \
	>recipes/small/badre2.json
expect_rc 2 "$D4R" recipe check recipes/small/badre2.json
expect_grep "badre2.json: guards.first: invalid recipe: the regular expression" "$T/err"
# ... while an anchor that compiles and does not match is stale
edit 'guards.last="^nomatch"' >recipes/small/stale.json
expect_rc 2 "$D4R" recipe check recipes/small/stale.json
expect_grep "stale recipe" "$T/err"
expect_grep "last: +expected /\\^nomatch/" "$T/err"

# NUL bytes: in a value, and after the document
printf '{"cut": {"phase": 1}, "template": "ident\0ity"}' >recipes/small/nul.json
expect_rc 2 "$D4R" recipe check recipes/small/nul.json
expect_grep "recipes/small/nul.json:1:41: NUL byte at offset 40" "$T/err"
{ cat recipes/small/good.json; printf '\0{"x": 1}'; } >recipes/small/nul2.json
off=$(stat -c %s recipes/small/good.json)
expect_rc 2 "$D4R" recipe check recipes/small/nul2.json
expect_grep "recipes/small/nul2.json:[0-9]+:[0-9]+: NUL byte at offset $off " "$T/err"
edit 'guards.first="^mma\u0000junk"' >recipes/small/nul3.json
expect_rc 2 "$D4R" recipe check recipes/small/nul3.json
expect_grep "nul3.json:1:[0-9]+: '\\\\u0000' at offset [0-9]+: a NUL cannot be held in a value" "$T/err"
# ... and in a layer manifest
printf '{"layer": "small", "module": "small/small.ptx"\0}' >recipes/small/layer.json
expect_rc 2 "$D4R" run small
expect_grep "recipes/small/layer.json:1:47: NUL byte at offset 46" "$T/err"
rm recipes/small/layer.json

# a recipe's module inside the corpus folder ...
for m in /etc/passwd ../corpus/small/small.ptx small/../../x.ptx; do
	edit "module=\"$m\"" >recipes/small/mod.json
	expect_rc 2 "$D4R" recipe check recipes/small/mod.json
	expect_grep "recipes/small/mod.json: module: '$m' is not inside the corpus folder" "$T/err"
done
edit 'module="small/small.ptx"' >recipes/small/mod.json
expect_rc 0 "$D4R" recipe check recipes/small/mod.json
# ... unless the user names the module: --module is taken as it is
edit 'module="small/small.ptx"' >recipes/small/mod.json
cp corpus/small/small.ptx "$T/elsewhere.ptx"
expect_rc 0 "$D4R" recipe check recipes/small/mod.json --module "$T/elsewhere.ptx"
expect_rc 0 "$D4R" recipe check recipes/small/mod.json --module "../repo/corpus/small/small.ptx"

# a template inside ptx/ (or the recipe's own folder) ...
cp "$G/adds.tpl.ptx" recipes/small/adds.ptx
cp "$G/adds.tpl.ptx" "$T/outside.ptx"
bind='{"x": ["%r12", "%r13", "%r14", "%r15"], "y": ["%r16", "%r17"]}'
for t in "$T/outside.ptx" ../outside.ptx ./../../outside.ptx small/../../outside.ptx; do
	edit "template=\"$t\"" "bind=$bind" >recipes/small/tpl.json
	expect_rc 2 "$D4R" recipe check recipes/small/tpl.json
	expect_grep "recipes/small/tpl.json: template: '$t' is not inside the ptx/ folder or the recipe's folder" "$T/err"
	expect_rc 2 "$D4R" splice --recipe recipes/small/tpl.json -o "$T/x.ptx"
	expect_grep "template: '$t' is not inside" "$T/err"
done
# ... named under ptx/, in the recipe's folder (./), or under --ptx DIR (a
# command-line path, taken as it is): s12..s13 are epilogue 1's two adds
edit 'template="small/adds.ptx"' "bind=$bind" 'cut={"stmts": [12, 13]}' >recipes/small/tpl.json
expect_rc 2 "$D4R" recipe check recipes/small/tpl.json
sha=$(sed -n 's/^ *found *\([0-9a-f]\{64\}\)$/\1/p' "$T/err")
[ ${#sha} -eq 64 ] || fail "no sha256 in the stale message"
for t in small/adds.ptx ./adds.ptx; do
	edit "template=\"$t\"" "bind=$bind" 'cut={"stmts": [12, 13]}' \
		"guards={\"sha256\": \"$sha\"}" >recipes/small/tpl.json
	expect_rc 0 "$D4R" recipe check recipes/small/tpl.json
done
mkdir -p "$T/other/small"
{ echo "// the other one"; cat "$G/adds.tpl.ptx"; } >"$T/other/small/adds.ptx"
edit 'template="small/adds.ptx"' "bind=$bind" 'cut={"stmts": [12, 13]}' \
	"guards={\"sha256\": \"$sha\"}" >recipes/small/tpl.json
expect_rc 0 "$D4R" splice --recipe recipes/small/tpl.json --ptx "$T/other" -o "$T/o.ptx"
expect_grep "^// the other one" "$T/o.ptx"
# recipe new writes the template it names under ptx/: the same rule, at once
expect_rc 2 "$D4R" recipe new small --phase 1 --module corpus/small/small.ptx \
	--entry small_kernel --template ../escape.ptx -o recipes/small/new.json
expect_grep "template '../escape.ptx': not inside the ptx/ folder" "$T/err"
[ ! -e escape.ptx ] && [ ! -e recipes/small/new.json ] || fail "recipe new wrote outside ptx/"
exit 0
