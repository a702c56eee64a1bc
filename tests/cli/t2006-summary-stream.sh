#!/usr/bin/env bash
# t2006-summary-stream: one stream for each kind of line, in every verb
# (d4r-splice(1), OUTPUTS): results - tables, matches, verdicts, per-recipe
# lines - on standard output; the summary of a verb that writes a file
# (splice, recipe new, probe, extract: what it cut, where it wrote) on
# standard error, with or without --json, so that standard output can carry
# the file itself (-o -) or the one JSON document.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/extract-fixtures.sh"
mkdir -p "$T/repo"
cp -r "$TOP/recipes" "$TOP/ptx" "$TOP/corpus" "$T/repo/"
cd "$T/repo"
M=corpus/enc4/enc4.ptx
summary() { # PATTERN CMD... : exit 0, nothing on stdout, PATTERN on stderr
	local want=$1
	shift
	expect_rc 0 "$D4R" "$@"
	[ -s "$T/out" ] && fail "'$*' wrote to standard output: $(head -3 "$T/out")"
	expect_grep "$want" "$T/err"
}
summary '^wrote: +s\.ptx \(' splice enc4 --phase 8 -o s.ptx
summary '^recipe: +wrote my\.json' recipe new enc4 --phase 8 --template ./my.ptx -o my.json
summary '^wrote: +p\.ptx \(' probe "$M" --phases 8 -o p.ptx
printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n' >k.ptx
fatbin_ptx k.ptx 90 >k.fatbin
summary '^extract: 1 PTX entries' extract k.fatbin -o x
# with --json: the document alone on stdout, the summary where it was
expect_rc 0 "$D4R" splice enc4 --phase 8 -o s2.ptx --json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" || fail "splice --json: stdout is not one document"
expect_grep '^wrote: +s2\.ptx \(' "$T/err"
expect_rc 0 "$D4R" recipe new enc4 --phase 8 --template ./my2.ptx -o my2.json --json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/out" || fail "recipe new --json: stdout is not one document"
expect_grep '^recipe: +wrote my2\.json' "$T/err"
# -o -: the module on stdout, the summary still on stderr
expect_rc 0 "$D4R" splice enc4 --phase 8 -o -
head -c 200 "$T/out" | grep -q '^\.version\|^//' || fail "splice -o -: no module on stdout"
expect_grep '^cut: +s7771\.\.s7794' "$T/err"
# -q: no summary
expect_rc 0 "$D4R" splice enc4 --phase 8 -o s3.ptx -q
[ -s "$T/err" ] && fail "splice -q wrote to stderr: $(cat "$T/err")"
# results: standard output, nothing on standard error
for c in "phases $M" "show $M --phase 8" "grep $M mma.sync --phase 8 -c" "report $M" \
	"recipe check recipes/enc4/phase-08.json" "roundtrip --stats k.ptx" "diff k.ptx k.ptx"; do
	read -ra argv <<<"$c"
	expect_rc 0 "$D4R" "${argv[@]}"
	[ -s "$T/out" ] || fail "'$c' printed no result on standard output"
	[ -s "$T/err" ] && fail "'$c' wrote to standard error: $(head -3 "$T/err")"
done
exit 0
