#!/usr/bin/env bash
# t1901-extract-removes-only-its-own: `extract -o DIR` into a folder that
# holds other files removes only the module files an earlier extract wrote
# there (its index.json lists them) and this one did not write again, names
# each one it removes, and keeps everything else: the user's files, NNNN-*.ptx
# files no index lists (said so), an input of the command.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"

sample_ptx alpha >"$T/a.ptx"
sample_ptx beta >"$T/b.ptx"
sample_ptx gamma >"$T/c.ptx"
{ fatbin_ptx "$T/a.ptx" 80; fatbin_ptx "$T/b.ptx" 80; } >"$T/ab.fatbin"
fatbin_ptx "$T/c.ptx" 80 >"$T/c.fatbin"

# The first run: 0001-alpha.ptx, 0002-beta.ptx and the index.
expect_rc 0 "$D4R" extract "$T/ab.fatbin" -o "$T/o"
expect_no_grep "removed|kept" "$T/err"
# The user's own files in the folder, one of them named like ours.
echo notes >"$T/o/notes.txt"
sample_ptx mine >"$T/o/0042-mine.ptx"
cp "$T/o/0042-mine.ptx" "$T/mine.ptx"

# A rerun with one module, gamma: 0001-gamma.ptx is written; the earlier
# run's 0001-alpha.ptx and 0002-beta.ptx are removed, each by name; the
# user's files stay.
expect_rc 0 "$D4R" extract "$T/c.fatbin" -o "$T/o"
expect_grep "^extract: removed '$T/o/0001-alpha.ptx' \(an earlier extract wrote it; this one did not\)$" "$T/err"
expect_grep "^extract: removed '$T/o/0002-beta.ptx' \(an earlier extract wrote it; this one did not\)$" "$T/err"
[ "$(grep -c '^extract: removed' "$T/err")" -eq 2 ] || fail "removed other files: $(cat "$T/err")"
[ ! -e "$T/o/0001-alpha.ptx" ] || fail "the earlier run's 0001-alpha.ptx is still there"
expect_grep "^extract: kept 1 NNNN-\*\.ptx file in '$T/o' that no index.json lists" "$T/err"
[ ! -e "$T/o/0002-beta.ptx" ] || fail "the earlier run's 0002-beta.ptx is still there"
cmp -s "$T/o/0001-gamma.ptx" "$T/c.ptx" || fail "0001-gamma.ptx is not the new module"
[ "$(cat "$T/o/notes.txt")" = notes ] || fail "the user's notes.txt was touched"
cmp -s "$T/o/0042-mine.ptx" "$T/mine.ptx" || fail "the user's 0042-mine.ptx was removed or changed"
[ -f "$T/o/index.json" ] || fail "no index after the rerun"
no_temp_files "$T/o"
# The same input again: its file is written again and nothing is removed.
expect_rc 0 "$D4R" extract "$T/c.fatbin" -o "$T/o"
expect_no_grep "^extract: removed" "$T/err"
cmp -s "$T/o/0001-gamma.ptx" "$T/c.ptx" || fail "a rerun of the same input lost 0001-gamma.ptx"

# -q says nothing, and removes the same way.
{ fatbin_ptx "$T/a.ptx" 80; fatbin_ptx "$T/b.ptx" 80; } >"$T/ab2.fatbin"
expect_rc 0 "$D4R" extract -q "$T/ab2.fatbin" -o "$T/o"
expect_rc 0 "$D4R" extract -q "$T/c.fatbin" -o "$T/o"
[ ! -s "$T/err" ] || fail "-q printed: $(cat "$T/err")"
[ ! -e "$T/o/0002-beta.ptx" ] || fail "-q: the earlier run's 0002-beta.ptx is still there"

# Without an index (an interrupted run, or a folder we never wrote), nothing
# is removed: the files are not known to be ours.
expect_rc 0 "$D4R" extract -q "$T/ab.fatbin" -o "$T/p"
rm "$T/p/index.json"
expect_rc 0 "$D4R" extract "$T/c.fatbin" -o "$T/p"
expect_no_grep "^extract: removed" "$T/err"
[ -f "$T/p/0001-alpha.ptx" ] && [ -f "$T/p/0002-beta.ptx" ] || fail "a file no index lists was removed"
expect_grep "^extract: kept 2 NNNN-\*\.ptx files in '$T/p'" "$T/err"

# An index that lists files outside the folder, or not ours by name, does
# not make them removable.
expect_rc 0 "$D4R" extract -q "$T/ab.fatbin" -o "$T/q"
echo keep >"$T/outside.ptx"
python3 - "$T/q/index.json" <<'PY' || fail "cannot edit the index"
import json, sys
ix = json.load(open(sys.argv[1]))
ix["modules"] += [{"file": "../outside.ptx"}, {"file": "notes.txt"}]
json.dump(ix, open(sys.argv[1], "w"))
PY
echo notes >"$T/q/notes.txt"
expect_rc 0 "$D4R" extract "$T/c.fatbin" -o "$T/q"
[ -f "$T/outside.ptx" ] && [ -f "$T/q/notes.txt" ] || fail "a file the index named outside its rules was removed"

# An input of the command is never removed, even when the earlier index
# lists it.
expect_rc 0 "$D4R" extract -q "$T/ab.fatbin" -o "$T/r"
cp "$T/c.fatbin" "$T/r/0002-beta.ptx"    # the user put an input there
expect_rc 0 "$D4R" extract "$T/r/0002-beta.ptx" -o "$T/r"
[ -f "$T/r/0002-beta.ptx" ] || fail "the command's own input was removed"
# ... nor replaced by a module of the same name (the writer's own refusal:
# extract names its files as it goes, so there is no check before the work).
mkdir "$T/s"
fatbin_ptx "$T/a.ptx" 80 >"$T/s/0001-alpha.ptx"
cp "$T/s/0001-alpha.ptx" "$T/s.fatbin"
expect_rc 2 "$D4R" extract "$T/s/0001-alpha.ptx" -o "$T/s"
expect_grep "refusing to write '$T/s/0001-alpha.ptx': it is the input this command reads" "$T/err"
cmp -s "$T/s/0001-alpha.ptx" "$T/s.fatbin" || fail "the input was replaced"
exit 0
