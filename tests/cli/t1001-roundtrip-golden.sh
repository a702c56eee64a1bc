#!/usr/bin/env bash
# roundtrip: golden files under tests/golden/roundtrip/.
#   NAME.ptx + NAME.stats  must round-trip (exit 0) and print those --stats
#                          (the parse_ms column is blanked: it is a timing)
#   bad-NAME.ptx + .err    must fail with exit 2 and exactly that message
# Regenerate after an intended change with D4R_REGEN=1 (then review the diff).
. "$D4R_TOP/tests/cli/lib.sh"
dir="$TOP/tests/golden/roundtrip"
cd "$dir" || fail "no $dir"
n=0
for f in *.ptx; do
	name=${f%.ptx}
	case $name in
	bad-*)
		"$D4R" roundtrip "$f" >"$T/out" 2>"$T/err"
		rc=$?
		[ "${D4R_REGEN:-}" = 1 ] && cp "$T/err" "$name.err"
		[ $rc -eq 2 ] || { cat "$T/err"; fail "$f: exit $rc, expected 2"; }
		[ -s "$T/out" ] && fail "$f: printed on stdout"
		diff -u "$name.err" "$T/err" || fail "$f: message differs from $name.err"
		;;
	*)
		expect_rc 0 "$D4R" roundtrip --stats "$f"
		awk '{ $6 = ""; print }' "$T/out" >"$T/stats"
		[ "${D4R_REGEN:-}" = 1 ] && cp "$T/stats" "$name.stats"
		diff -u "$name.stats" "$T/stats" || fail "$f: --stats differ from $name.stats"
		expect_grep ' identical$' "$T/out"
		# --no-verify takes the same path minus the self-check
		expect_rc 0 "$D4R" roundtrip --no-verify "$f"
		;;
	esac
	n=$((n + 1))
done
[ $n -ge 10 ] || fail "only $n golden files"
# All good files at once: one invocation, exit 0.
expect_rc 0 "$D4R" roundtrip $(ls [!b]*.ptx)
exit 0
