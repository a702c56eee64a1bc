#!/usr/bin/env bash
# extract: a raw fatbin with several containers; names, numbering, index
# fields, deduplication, --list, --arch, a rerun into the same folder.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"

sample_ptx alpha >"$T/a.ptx"
sample_ptx 'beta$x' >"$T/b.ptx"
{ fatbin_ptx "$T/a.ptx" 80; fatbin_ptx "$T/b.ptx" 90; fatbin_ptx "$T/a.ptx" 90; } >"$T/m.fatbin"

expect_rc 0 "$D4R" extract -q "$T/m.fatbin" -o "$T/o"
[ ! -s "$T/err" ] || fail "-q printed: $(cat "$T/err")"
[ -f "$T/o/0001-alpha.ptx" ] || fail "no 0001-alpha.ptx: $(ls "$T/o")"
[ -f "$T/o/0002-beta_x.ptx" ] || fail "no sanitised 0002-beta_x.ptx: $(ls "$T/o")"
cmp "$T/a.ptx" "$T/o/0001-alpha.ptx" || fail "module text differs from the input PTX"
cmp "$T/b.ptx" "$T/o/0002-beta_x.ptx" || fail "module text differs from the input PTX"
[ "$(ls "$T/o" | wc -l)" -eq 3 ] || fail "expected 2 modules and an index: $(ls "$T/o")"
no_temp_files "$T/o"

python3 - "$T/o/index.json" "$T/a.ptx" <<'PY' || fail "index.json is wrong"
import json, sys, hashlib
ix = json.load(open(sys.argv[1]))
a = open(sys.argv[2], 'rb').read()
m = ix["modules"]
assert [x["file"] for x in m] == ["0001-alpha.ptx", "0002-beta_x.ptx"], m
assert m[0]["container_offset"] == 0 and m[0]["entry_offset"] == 16, m[0]
assert m[0]["arch"] == "sm_80" and m[1]["arch"] == "sm_90"
assert m[0]["ptx_version"] == "9.0" and m[0]["compression"] == "none"
assert m[0]["size"] == len(a) and m[0]["sha256"] == hashlib.sha256(a).hexdigest()
assert m[0]["entries"] == ["alpha", "alpha_second"], m[0]["entries"]
assert m[1]["entries"] == ["beta$x", "beta$x_second"], m[1]["entries"]
s = ix["skipped"]
assert len(s) == 1 and s[0]["duplicate_of"] == "0001-alpha.ptx" and s[0]["arch"] == "sm_90"
assert s[0]["container_offset"] > m[1]["container_offset"]
t = ix["totals"]
assert (t["ptx_entries"], t["written"], t["skipped"], t["errors"], t["containers"]) == (3, 2, 1, 0, 3), t
assert ix["inputs"][0]["format"] == "fatbin"
PY

# --list: every entry, nothing written.
expect_rc 0 "$D4R" extract --list "$T/m.fatbin"
[ "$(wc -l <"$T/out")" -eq 3 ] || fail "--list printed $(wc -l <"$T/out") lines, expected 3"
expect_grep $'\t0x0\t0x10\tsm_80\t9.0\tnone\t[0-9]+\t[0-9a-f]{16}\talpha\tnew$' "$T/out"
expect_grep $'\tsm_90\t.*\talpha\t0001-alpha.ptx$' "$T/out"

# --arch keeps one architecture.
expect_rc 0 "$D4R" extract --arch sm_90 "$T/m.fatbin" -o "$T/o90"
[ "$(ls "$T/o90" | grep -c '\.ptx$')" -eq 2 ] || fail "--arch sm_90: $(ls "$T/o90")"
expect_grep '"filtered":[[:space:]]*1' "$T/o90/index.json"

# A rerun with fewer modules removes the stale ones and rewrites the index.
sample_ptx gamma >"$T/c.ptx"
fatbin_ptx "$T/c.ptx" 80 >"$T/c.fatbin"
expect_rc 0 "$D4R" extract "$T/c.fatbin" -o "$T/o"
[ "$(ls "$T/o")" = "$(printf '0001-gamma.ptx\nindex.json')" ] || fail "rerun left: $(ls "$T/o")"
expect_grep 'extract: 1 PTX entries in 1 containers of 1 files: 1 modules written' "$T/err"
exit 0
