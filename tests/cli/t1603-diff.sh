#!/usr/bin/env bash
# t1603-diff: frames on disk: identical (0), different (1, with where and
# by how much), errors (2); --layout, --layer, --json, --diff-image.
. "$D4R_TOP/tests/cli/lib.sh"
cd "$T"
printf 'AAAAAAAAAAAAAAAA' >a
printf 'AAAAAAAAAAAAAABA' >b
printf 'AAAA' >short
expect_rc 0 "$D4R" diff a a
expect_grep "^frames are identical$" "$T/out"
expect_rc 1 "$D4R" diff a b
expect_grep "^frames differ: 1 byte$" "$T/out"
expect_grep "^first difference at byte 14" "$T/out"
expect_rc 1 "$D4R" diff a b --layout img:u8:2x2x4
expect_grep "first difference at byte 14 \(output 'img' byte 14, pixel \(1, 1\) channel 2\)" "$T/out"
expect_grep "img: 1 bytes, 1 u8 elements differ; max \|a-b\| 1 at element 14" "$T/out"
expect_rc 1 "$D4R" diff a b --layout head:bytes:8,tail:u16:2x2
expect_grep "output 'tail' byte 6, pixel \(1, 1\) channel 0" "$T/out"
expect_rc 1 "$D4R" diff a b --layout img:u8:2x2x4 --json
python3 - "$T/out" <<'PY' || fail "diff --json: not the document expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok" and d["exit"] == 1, d
assert d["identical"] is False and d["differing_bytes"] == 1, d
s = json.dumps(d)
assert '"x": 1, "y": 1, "channel": 2' in s, s
PY
expect_rc 1 "$D4R" diff a b --layout img:u8:2x2x4 --diff-image d.png
[ "$(head -c 4 d.png | od -An -c | tr -d ' ')" = "211PNG" ] || fail "no PNG written"
expect_rc 0 "$D4R" diff a a --layout img:u8:2x2x4 --diff-image same.png
[ -s same.png ] || fail "no PNG for identical frames"
# Errors.
expect_rc 2 "$D4R" diff a
expect_grep "^usage: d4r-splice diff" "$T/err"
expect_rc 2 "$D4R" diff a missing
expect_grep "cannot open 'missing'" "$T/err"
expect_rc 2 "$D4R" diff a short --layout img:u8:2x2x4
expect_grep "'short' is 4 bytes; the layout describes 16" "$T/err"
expect_rc 1 "$D4R" diff a short
expect_grep "and their sizes differ" "$T/out"
expect_rc 2 "$D4R" diff a b --layout img:u9:2x2x4
expect_grep "unknown format 'u9'" "$T/err"
expect_rc 2 "$D4R" diff a b --layout img:u8:2x2x4 --layer x
expect_grep "option '--layer' cannot be used with '--layout'" "$T/err"
expect_rc 2 "$D4R" diff a b --diff-image d2.png
expect_grep "option '--diff-image' needs '--layer' or '--layout'" "$T/err"
# The layout from a layer's manifest.
mkdir -p recipes/t
cat >recipes/t/layer.json <<'JSON'
{"layer": "t", "module": "t/t.ptx", "entry": "k",
 "buffers": {"o": {"size": 16, "init": {"kind": "zero"}}},
 "launches": [{"entry": "k", "grid": [1,1,1], "block": [32,1,1],
   "params": {"size": 8, "fields": [{"offset": 0, "kind": "buffer", "buffer": "o"}]}}],
 "frame": [{"name": "half", "buffer": "o", "format": "f16", "width": 4, "height": 2}]}
JSON
expect_rc 1 "$D4R" diff a b --layer t
expect_grep "output 'half' byte 14, pixel \(3, 1\) channel 0" "$T/out"
expect_grep "half: 1 bytes, 1 f16 elements differ" "$T/out"
