#!/usr/bin/env bash
# extract: bad inputs give "FILE: offset 0xOFF: what is wrong" and exit 2;
# the good inputs and the good parts of bad ones are still extracted; no
# temporary or partial file is left, and the index is written last.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"

sample_ptx first >"$T/a.ptx"
sample_ptx second >"$T/b.ptx"
fatbin_ptx "$T/a.ptx" 80 >"$T/a.fatbin"
fatbin_ptx "$T/b.ptx" 80 >"$T/b.fatbin"
cat "$T/a.fatbin" "$T/b.fatbin" >"$T/ab.fatbin"
size_a=$(wc -c <"$T/a.fatbin")
size_ab=$(wc -c <"$T/ab.fatbin")
hex() { printf '0x%x' "$1"; }

# Not a binary.
printf 'just some text\n' >"$T/notes.txt"
expect_rc 2 "$D4R" extract "$T/notes.txt" -o "$T/o1"
expect_grep "notes.txt: offset 0x0: not an ELF, PE/COFF or fatbin file" "$T/err"

# Empty.
: >"$T/empty"
expect_rc 2 "$D4R" extract "$T/empty" -o "$T/o2"
expect_grep "empty: offset 0x0: empty file" "$T/err"

# Garbage, with and without a stray magic number in it.
head -c 8192 /dev/urandom | tr -d '\120' >"$T/garbage"
expect_rc 2 "$D4R" extract "$T/garbage" -o "$T/o3"
expect_grep "garbage: offset 0x0: not an ELF" "$T/err"
{ head -c 100 /dev/zero; le $((0xBA55ED50)) 4; le 7 2; le 99 2; head -c 64 /dev/zero; } >"$T/stray"
expect_rc 2 "$D4R" extract "$T/stray" -o "$T/o3b"
expect_grep "stray: offset 0x0: not an ELF" "$T/err"

# A raw fatbin whose second container is truncated: the first is extracted.
head -c $((size_ab - 24)) "$T/ab.fatbin" >"$T/trunc.fatbin"
expect_rc 2 "$D4R" extract "$T/trunc.fatbin" -o "$T/o4"
expect_grep "trunc.fatbin: offset $(hex "$size_a"): container size 0x[0-9a-f]+ runs past the end of the file" "$T/err"
expect_grep "trunc.fatbin: offset $(hex $((size_a + 16))): entry payload size 0x[0-9a-f]+ runs past the end of the container" "$T/err"
[ "$(ls "$T/o4")" = "$(printf '0001-first.ptx\nindex.json')" ] || fail "truncated: $(ls "$T/o4")"
cmp "$T/a.ptx" "$T/o4/0001-first.ptx" || fail "first module damaged"
expect_grep '"errors":[[:space:]]*2' "$T/o4/index.json"
no_temp_files "$T/o4"

# Truncated inside the container header.
head -c $((size_a + 10)) "$T/ab.fatbin" >"$T/trunc2.fatbin"
expect_rc 2 "$D4R" extract "$T/trunc2.fatbin" -o "$T/o4b"
expect_grep "trunc2.fatbin: offset $(hex "$size_a"): truncated container header \\(10 of 16 bytes\\)" "$T/err"
[ -f "$T/o4b/0001-first.ptx" ] || fail "first module not extracted"

# The first container's size field lies (too big): reported at offset 0,
# and both modules are still found.
cp "$T/ab.fatbin" "$T/lie.fatbin"
patch_bytes "$T/lie.fatbin" 8 '\x00\x00\x00\x00\x00\x01\x00\x00'
expect_rc 2 "$D4R" extract "$T/lie.fatbin" -o "$T/o5"
expect_grep "lie.fatbin: offset 0x0: container size 0x10000000000 runs past the end of the file" "$T/err"
[ "$(ls "$T/o5" | grep -c '\.ptx$')" -eq 2 ] || fail "lying container size: $(ls "$T/o5")"

# The first entry's payload size lies: an error at the entry, and the
# second container is still extracted.
cp "$T/ab.fatbin" "$T/lie2.fatbin"
patch_bytes "$T/lie2.fatbin" 24 '\xff\xff\xff\x7f'
expect_rc 2 "$D4R" extract "$T/lie2.fatbin" -o "$T/o6"
expect_grep "lie2.fatbin: offset 0x10: entry payload size 0x7fffffff runs past the end of the container at 0x0" "$T/err"
[ "$(ls "$T/o6")" = "$(printf '0001-second.ptx\nindex.json')" ] || fail "lying entry size: $(ls "$T/o6")"

# The entry header size lies.
cp "$T/ab.fatbin" "$T/lie3.fatbin"
patch_bytes "$T/lie3.fatbin" 20 '\x08\x00\x00\x00'
expect_rc 2 "$D4R" extract "$T/lie3.fatbin" -o "$T/o7"
expect_grep "lie3.fatbin: offset 0x10: entry header size 8 is impossible" "$T/err"

# Compressed flags on a payload that is not compressed.
cp "$T/a.fatbin" "$T/zflag.fatbin"
patch_bytes "$T/zflag.fatbin" $((16 + 40)) '\x11\x80'
patch_bytes "$T/zflag.fatbin" $((16 + 16)) '\x10'
expect_rc 2 "$D4R" extract "$T/zflag.fatbin" -o "$T/o8"
expect_grep "zflag.fatbin: offset 0x10: entry says zstd but the payload is not a zstd frame" "$T/err"
cp "$T/a.fatbin" "$T/lflag.fatbin"
patch_bytes "$T/lflag.fatbin" $((16 + 40)) '\x11\x20'
patch_bytes "$T/lflag.fatbin" $((16 + 16)) '\x10'
patch_bytes "$T/lflag.fatbin" $((16 + 56)) '\x00\x10'
expect_rc 2 "$D4R" extract "$T/lflag.fatbin" -o "$T/o9"
expect_grep "lflag.fatbin: offset 0x10: (corrupt LZ4 payload|LZ4 payload holds)" "$T/err"

# Junk after the last container of a raw fatbin.
{ cat "$T/a.fatbin"; printf 'JUNKJUNK'; } >"$T/tail.fatbin"
expect_rc 2 "$D4R" extract "$T/tail.fatbin" -o "$T/o10"
expect_grep "tail.fatbin: offset $(hex "$size_a"): expected a fatbin container \\(magic 0xba55ed50\\), found 0x4b4e554a" "$T/err"
[ -f "$T/o10/0001-first.ptx" ] || fail "module before the junk not extracted"

# Good and bad inputs in one run: every error reported, the good input
# extracted, the index lists the errors, nothing partial is left.
expect_rc 2 "$D4R" extract "$T/empty" "$T/b.fatbin" "$T/notes.txt" "$T/lie2.fatbin" -o "$T/all"
expect_grep "empty: offset 0x0: empty file" "$T/err"
expect_grep "notes.txt: offset 0x0: not an ELF" "$T/err"
expect_grep "lie2.fatbin: offset 0x10: entry payload size" "$T/err"
[ "$(ls "$T/all")" = "$(printf '0001-second.ptx\nindex.json')" ] || fail "mixed run: $(ls "$T/all")"
python3 - "$T/all/index.json" <<'PY' || fail "index.json of the mixed run is wrong"
import json, sys
ix = json.load(open(sys.argv[1]))
assert ix["totals"]["errors"] == 3, ix["totals"]
assert len(ix["errors"]) == 3 and all(": offset 0x" in e for e in ix["errors"]), ix["errors"]
ins = {i["path"].rsplit("/", 1)[1]: i for i in ix["inputs"]}
assert ins["b.fatbin"]["written"] == 1 and ins["lie2.fatbin"]["skipped"] == 1, ins
assert ins["notes.txt"]["format"] == "unknown" and ins["notes.txt"]["errors"] == 1
PY
for d in "$T"/o* "$T/all"; do no_temp_files "$d"; done
exit 0
