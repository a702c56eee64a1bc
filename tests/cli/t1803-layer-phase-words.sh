#!/usr/bin/env bash
# t1803-layer-phase-words: every verb that takes a layer's phases says the
# same thing for the same mistake, before any GPU work:
#  - a phase the layer does not have: "phase 63 does not exist: enc4 has 62
#    phases" (never "cannot open recipes/enc4/phase-63.json", never a
#    `recipe new` that would fail too), --phase and --phases alike;
#  - a phase listed twice: "'1-62,8': 8 is listed twice (in '1-62' and '8')";
#  - --phase N with a --recipe that cuts another phase: an error in every
#    verb ("the recipe cuts phase 30, --phase says 8"), never a note;
#  - a phase the layer has, without a recipe: that recipe is missing, and
#    the `recipe new` the message gives writes one.
# The 62 is README's phase table's (and t1410's), not the program's.
. "$D4R_TOP/tests/cli/lib.sh"
mkdir -p "$T/repo"
cp -r "$TOP/recipes" "$TOP/ptx" "$TOP/corpus" "$T/repo/"
cd "$T/repo"
unset D4R_CORPUS
said() { # WANT CMD... : exit 2, stderr has WANT (a fixed string)
	local want=$1
	shift
	expect_rc 2 "$D4R" "$@"
	grep -qF -- "$want" "$T/err" || { cat "$T/err"; fail "'$*': no \"$want\""; }
	expect_no_grep "no CUDA driver|cannot open|write one with" "$T/err"
}
missing="phase 63 does not exist: enc4 has 62 phases"
said "$missing" enc4 --phase 63
said "$missing" enc4 --phase 63 --json
said "$missing" splice enc4 --phase 63
said "$missing" bisect enc4 --phase 63
said "$missing" profile enc4 --phase 63
said "$missing" profile enc4 --phase 63 --keep k --no-run
said "$missing" recipe new enc4 --phase 63 -o x.json
said "$missing" recipe new enc4 --phase 63 --native f16 -o x.json
far="phase 70 does not exist: enc4 has 62 phases"
said "$far" enc4 --phases 70-80
said "$far" splice enc4 --phases 70-80
said "$far" bisect enc4 --phases 70-80
said "$far" profile enc4 --phases 70-80
expect_rc 2 "$D4R" check enc4 --phases 70-80
expect_grep "^phases 70-80 +ERROR +$far" "$T/out"
# module verbs: the function is what has the phases
said "phase 99 does not exist: cuda_dldn_engine_swin_enc4_kernel has 62 phases" \
	show corpus/enc4/enc4.ptx --phase 99
said "grep: phase 63 does not exist: cuda_dldn_engine_swin_enc4_kernel has 62 phases" \
	grep corpus/enc4/enc4.ptx mma --phase 63
said "probe: --phases: phase 63 does not exist: cuda_dldn_engine_swin_enc4_kernel has 62 phases" \
	probe corpus/enc4/enc4.ptx --phases 60-63 -o p.ptx
[ -e p.ptx ] && fail "probe wrote p.ptx for a phase that does not exist"

twice="'1-62,8': 8 is listed twice (in '1-62' and '8')"
for v in "enc4" "splice enc4" "bisect enc4" "profile enc4" "probe corpus/enc4/enc4.ptx -o p.ptx"; do
	read -ra argv <<<"$v"
	said "$twice" "${argv[@]}" --phases 1-62,8
done
expect_rc 2 "$D4R" check enc4 --phases 1-62,8
grep -qF "ERROR      phase list $twice" "$T/out" || fail "check: no ERROR line for a phase twice: $(cat "$T/out")"
[ -e p.ptx ] && fail "probe wrote p.ptx for a list with a phase twice"

# --phase 8 with phase 30's recipe: one verdict, the error, everywhere
cp recipes/enc4/phase-30.json my-phase-30.json
other="my-phase-30.json: the recipe cuts phase 30, --phase says 8"
for v in "enc4" "splice enc4" "bisect enc4" "profile enc4"; do
	read -ra argv <<<"$v"
	said "$other" "${argv[@]}" --phase 8 --recipe my-phase-30.json
	expect_no_grep "note:" "$T/err"
done
[ -e enc4-phase-30.spliced.ptx ] && fail "splice wrote a module for a mismatched recipe"
# ... and the same recipe with its own phase is past that check
expect_rc 0 "$D4R" splice enc4 --phase 30 --recipe my-phase-30.json -o s.ptx -q

# A phase the layer has, with no recipe: the message's recipe new works.
rm recipes/enc4/phase-09.json ptx/enc4/phase-09.ptx
expect_rc 2 "$D4R" enc4 --phase 9
expect_grep "layer 'enc4' has no recipe for phase 9: 'recipes/enc4/phase-09.json' does not exist" "$T/err"
cmd=$(sed -n "s/.*(write one with '\(d4r-splice recipe new [^']*\)').*/\1/p" "$T/err")
[ "$cmd" = "d4r-splice recipe new enc4 --phase 9" ] || fail "no recipe new in: $(cat "$T/err")"
expect_rc 0 "$D4R" ${cmd#d4r-splice }
[ -f recipes/enc4/phase-09.json ] || fail "'$cmd' wrote no recipes/enc4/phase-09.json"
expect_rc 0 "$D4R" splice enc4 --phase 9 -o s9.ptx -q
exit 0
