#!/usr/bin/env bash
# The main job without a GPU: usage, unknown layers, missing and stale
# recipes fail before anything runs; a good recipe splices and then says
# there is no CUDA driver (exit 2) - on a machine without one.
. "$D4R_TOP/tests/cli/lib.sh"
cd "$TOP"
expect_rc 2 "$D4R" enc4
expect_grep "the main job needs --phase N" "$T/err"
expect_rc 2 "$D4R" nosuchlayer --phase 1
expect_grep "no layer 'nosuchlayer'" "$T/err"
expect_rc 2 "$D4R" enc4 --phase 63
expect_grep "phase 63 does not exist: enc4 has 62 phases" "$T/err"
expect_no_grep "recipe new" "$T/err"   # phase 63 does not exist: no recipe new can write it
expect_rc 2 "$D4R" enc4 --phase 8 --runs x
# a stale recipe: the guard's sha256 no longer matches the cut (its template,
# named under ptx/, is found from the current folder)
python3 - "$TOP/recipes/enc4/phase-08.json" "$T/stale.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["guards"]["sha256"] = "0" * 64
json.dump(r, open(sys.argv[2], "w"))
PY
expect_rc 2 "$D4R" enc4 --phase 8 --recipe "$T/stale.json" --corpus "$TOP/corpus"
expect_grep "stale recipe" "$T/err"
expect_grep "expected 0000000000000000" "$T/err"
# a good recipe kept outside the repository: the layer's manifest finds the corpus
python3 - "$T/stale.json" "$TOP/recipes/enc4/phase-08.json" "$T/good.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["guards"] = json.load(open(sys.argv[2]))["guards"]
json.dump(r, open(sys.argv[3], "w"))
PY
(unset D4R_CORPUS; "$D4R" splice enc4 --phase 8 --recipe "$T/good.json" -o "$T/good.ptx") >"$T/out" 2>"$T/err" ||
	{ cat "$T/err"; fail "a recipe outside the repository did not splice"; }
[ -s "$T/good.ptx" ] || fail "no spliced module from a recipe outside the repository"
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
	skip "a CUDA driver is installed here: the no-driver path is not testable"
fi
expect_rc 2 "$D4R" enc4 --phase 8
expect_grep "no CUDA driver" "$T/err"
expect_rc 2 "$D4R" check enc4
expect_grep "no CUDA driver" "$T/err"
