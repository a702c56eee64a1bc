#!/usr/bin/env bash
# t1801-options-two-spellings: every option that takes a value, in every
# verb's table (--list-verbs, --list-options) and the main job's, takes it
# as the next word and after '=' alike, the optional ones (--keep [DIR],
# --check [ptxas|none]) included: --list-parsed shows the same parse for
# `--opt VALUE` and `--opt=VALUE`, with VALUE the option's and not an
# argument.  The rule for an optional value (a choice, or a word that is not
# an option) and the message when it took a verb's argument.
. "$D4R_TOP/tests/cli/lib.sh"

# A value each option accepts, by the value's name in the table (a choice:
# the last one, never an optional option's default).
value_for() { # ARG CHOICES
	if [ "$2" != - ]; then
		echo "${2##*|}"
		return
	fi
	case $1 in
	N | K) echo 2 ;;
	LOG2) echo 8 ;;
	S) echo 5 ;;
	sm_XX) echo sm_90 ;;
	LIST) echo 1-2 ;;
	A:B) echo 1:2 ;;
	I/N) echo 1/2 ;;
	SIZE) echo 1M ;;
	SPEC) echo rgba:u8:4x4x4 ;;
	FILE.png) echo x.png ;;
	FILE.json) echo x.json ;;
	*) echo some-value ;;
	esac
}

expect_rc 0 "$D4R" --list-verbs
mapfile -t verbs <"$T/out"
verbs+=(LAYER)
checked=0 optional=0
for v in "${verbs[@]}"; do
	[ "$v" = LAYER ] && argv=(enc4) || read -ra argv <<<"$v"
	"$D4R" "${argv[@]}" --list-options >"$T/table" || fail "'$v --list-options' failed"
	while IFS=$'\t' read -r long short kind arg choices alias help; do
		[ "$kind" = none ] && continue
		val=$(value_for "$arg" "$choices")
		expect_rc 0 "$D4R" "${argv[@]}" "$long" "$val" --list-parsed
		cp "$T/out" "$T/spaced"
		expect_rc 0 "$D4R" "${argv[@]}" "$long=$val" --list-parsed
		cmp -s "$T/spaced" "$T/out" ||
			fail "'$v $long $val' parses otherwise than '$v $long=$val': $(cat "$T/spaced") / $(cat "$T/out")"
		grep -qxF "option	$long	$val" "$T/out" ||
			fail "'$v $long $val': the value is not the option's: $(cat "$T/out")"
		grep -qxF "argument	$val" "$T/out" && fail "'$v $long $val': '$val' became an argument"
		checked=$((checked + 1))
		[ "$kind" = optional ] && optional=$((optional + 1))
	done <"$T/table"
done
# Every table was read: the main job, splice, recipe check, probe and bisect
# have the optional ones (--keep, --check), many more the required ones.
[ $checked -ge 80 ] || fail "only $checked options with a value were checked"
[ $optional -ge 5 ] || fail "only $optional options with an optional value were checked"

# The optional value's rule: a choice or a non-option word is its value;
# anything else leaves the word where it was and the option its default.
expect_rc 0 "$D4R" recipe check --check x.json --list-parsed
printf 'option\t--check\tptxas\nargument\tx.json\n' | cmp -s - "$T/out" ||
	fail "'--check x.json' took x.json: $(cat "$T/out")"
expect_rc 0 "$D4R" enc4 --keep --json --phase 8 --list-parsed
grep -qxF "option	--keep	" "$T/out" || fail "'--keep --json' took --json: $(cat "$T/out")"
grep -qxF "option	--json	-" "$T/out" || fail "'--keep --json' lost --json"
# The main job's --keep DIR (once "unexpected argument 'out'") runs as far
# as this machine lets it: past the options, to the driver or its absence.
expect_rc 2 "$D4R" enc4 --phase 8 --keep "$T/out-dir" --runs 1
expect_no_grep "unexpected argument" "$T/err"
# A word an optional value took from a verb's arguments is named.
expect_rc 2 "$D4R" bisect --keep enc4 --phase 8
expect_grep "'enc4' was taken as the value of '--keep'" "$T/err"
exit 0
