#!/usr/bin/env bash
# t1209-ptxas-cache: ptxas's answers are cached in
# $XDG_CACHE_HOME/d4r-splice/ptxas, one file per key, and an answer from
# there is said to be one ("ok (cached)", "cached": true).  ptxas here is a
# wrapper in a CUDA_HOME of the test's own that counts its runs and then
# runs the real one, so "from the cache" is seen as "ptxas did not run",
# not taken from the tool's word: the same module and arguments are a hit;
# another byte, another --arch, a rebuilt ptxas (its modification time)
# and --no-cache are real runs; a rejection is kept too, its message still
# mapped to the template line; probe and roundtrip --check=ptxas use it too.
. "$D4R_TOP/tests/cli/lib.sh"
REAL="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -x "$REAL" ] || skip "no ptxas at $REAL"
G="$TOP/tests/golden/splice"
cp "$G/small.ptx" "$G/native1.tpl.ptx" "$G/native-phase1.recipe.json" "$T/"
cd "$T" || exit 1
mkdir -p cuda/bin
printf '#!/bin/sh\necho run >>"%s/runs"\nexec "%s" "$@"\n' "$T" "$REAL" >cuda/bin/ptxas
chmod +x cuda/bin/ptxas
export CUDA_HOME=$T/cuda XDG_CACHE_HOME=$T/xdg
C=$T/xdg/d4r-splice/ptxas
runs() { [ -f "$T/runs" ] && wc -l <"$T/runs" || echo 0; }
entries() { ls "$C" 2>/dev/null | wc -l; }
S=("$D4R" splice --corpus . --recipe native-phase1.recipe.json -o out.ptx --check=ptxas)

# a miss: ptxas runs, its answer is kept under its key
expect_rc 0 "${S[@]}" --json
[ "$(runs)" -eq 1 ] || fail "ptxas ran $(runs) times, expected 1"
python3 - "$T/out" "$C" <<'PY' || fail "the first --json: not a real run, or not kept under its key"
import json, os, sys
p = json.load(open(sys.argv[1]))["ptxas"]
assert p["accepted"] is True and p["cached"] is False, p
assert len(p["cache_key"]) == 64, p
assert os.listdir(sys.argv[2]) == [p["cache_key"]], os.listdir(sys.argv[2])
PY
# the same again: from the cache, and said so
expect_rc 0 "${S[@]}"
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: ok \(cached\)$' "$T/err"
[ "$(runs)" -eq 1 ] || fail "ptxas ran on a cached answer"
expect_rc 0 "${S[@]}" --json
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["ptxas"]; assert p["cached"] is True and p["accepted"] is True, p' "$T/out" ||
	fail "--json of a cached answer"
expect_rc 0 "$D4R" recipe check --corpus . --ptxas native-phase1.recipe.json
expect_grep '^ok +native-phase1.recipe.json: .*, ptxas ok \(cached\)$' "$T/out"
expect_rc 0 "$D4R" recipe check --corpus . --ptxas native-phase1.recipe.json --json
python3 -c 'import json,sys; r,=json.load(open(sys.argv[1]))["recipes"]; assert r["ptxas"]["accepted"] is True and r["ptxas"]["cached"] is True, r' "$T/out" ||
	fail "recipe check --json of a cached answer"
[ "$(runs)" -eq 1 ] || fail "ptxas ran on a cached answer (recipe check)"

# --no-cache: a real run, nothing written
expect_rc 0 "${S[@]}" --no-cache
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: ok$' "$T/err"
[ "$(runs)" -eq 2 ] || fail "--no-cache did not run ptxas"
[ "$(entries)" -eq 1 ] || fail "--no-cache wrote an entry"
expect_rc 0 "$D4R" recipe check --corpus . --ptxas --no-cache native-phase1.recipe.json
expect_grep '^ok +native-phase1.recipe.json: .*, ptxas ok$' "$T/out"
[ "$(runs)" -eq 3 ] || fail "recipe check --no-cache did not run ptxas"
expect_rc 2 "$D4R" recipe check --corpus . --no-cache native-phase1.recipe.json
expect_grep "option '--no-cache' needs '--check=ptxas'" "$T/err"

# another target, another byte of the module, another ptxas: real runs
expect_rc 0 "${S[@]}" --arch sm_90
expect_grep '^ptxas: +-arch=sm_90 -e small_kernel: ok$' "$T/err"
[ "$(runs)" -eq 4 ] || fail "another --arch was taken from the cache"
printf '\n// another byte\n' >>small.ptx
expect_rc 0 "${S[@]}"
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: ok$' "$T/err"
[ "$(runs)" -eq 5 ] || fail "another module was taken from the cache"
touch -d '2001-01-01' cuda/bin/ptxas
expect_rc 0 "${S[@]}"
expect_grep '^ptxas: +-arch=sm_89 -e small_kernel: ok$' "$T/err"
[ "$(runs)" -eq 6 ] || fail "the answer of another ptxas binary was taken"
[ "$(entries)" -eq 4 ] || fail "$(entries) entries, expected 4 (sm_89, sm_90, the changed module, the rebuilt ptxas)"

# a rejection is kept, and its message still names the template's line
sed -i '14s/^\tmma\.sync\.aligned\.m16n8k32/\tmma.sync.aligned.m16n8k33/' native1.tpl.ptx
for want in '' ' \(cached\)'; do
	expect_rc 2 "${S[@]}"
	expect_grep "^ptxas: +-arch=sm_89 -e small_kernel: REJECTED$want\$" "$T/err"
	expect_grep 'template \./native1\.tpl\.ptx:14[;:]' "$T/err"
done
[ "$(runs)" -eq 7 ] || fail "ptxas ran $(runs) times, expected 7 (the rejection once)"

# probe --check=ptxas uses the cache too
expect_rc 0 "$D4R" probe small.ptx -o p.ptx --check=ptxas
expect_grep '^ptxas: .*: ok$' "$T/err"
expect_rc 0 "$D4R" probe small.ptx -o p.ptx --check=ptxas
expect_grep '^ptxas: .*: ok \(cached\)$' "$T/err"
[ "$(runs)" -eq 8 ] || fail "probe: ptxas ran $(runs) times, expected 8"
# roundtrip --check=ptxas too: the module as it is, every entry
expect_rc 0 "$D4R" roundtrip --check=ptxas small.ptx
expect_grep '^ptxas: +-arch=sm_89 small.ptx: ok$' "$T/out"
expect_rc 0 "$D4R" roundtrip --check=ptxas small.ptx
expect_grep '^ptxas: +-arch=sm_89 small.ptx: ok \(cached\)$' "$T/out"
[ "$(runs)" -eq 9 ] || fail "roundtrip: ptxas ran $(runs) times, expected 9"
# no file but the entries in the cache folder (written whole, renamed)
ls "$C" | grep -Eqv '^[0-9a-f]{64}$' && fail "not an entry in the cache folder: $(ls "$C")"
exit 0
