#!/usr/bin/env bash
# t1602-run-bad-manifest: a manifest with a mistake is refused with the
# file and the JSON path of the mistake (exit 2), before any GPU work.
. "$D4R_TOP/tests/cli/lib.sh"
mkdir -p "$T/repo/recipes/t" "$T/repo/corpus"
cd "$T/repo"
write() {
	cat >recipes/t/layer.json <<JSON
{"layer": "t", "module": "t/t.ptx", "entry": "k",
 "buffers": {"o": {"size": 64, "init": {"kind": "zero"}}},
 "launches": [{"entry": "k", "grid": [1,1,1], "block": [32,1,1],
   "params": {"size": 8, "fields": [$1]}}],
 "frame": [{"name": "o", "buffer": "o"}]}
JSON
}
write '{"offset": 4, "kind": "buffer", "buffer": "o"}'
expect_rc 2 "$D4R" run t
expect_grep "^d4r-splice: recipes/t/layer.json: launches\[0\].params.fields\[0\]: offset 4 \+ 8 exceeds the 8-byte block" "$T/err"
write '{"offset": 0, "kind": "buffer", "buffer": "out"}'
expect_rc 2 "$D4R" run t
expect_grep "fields\[0\].buffer: no buffer named 'out' in \"buffers\"" "$T/err"
write '{"offset": 0, "kind": "buffer", "bufer": "o"}'
expect_rc 2 "$D4R" run t
expect_grep "fields\[0\]: unknown key 'bufer'" "$T/err"
printf '{"layer": "t",\n "module": 3}\n' >recipes/t/layer.json
expect_rc 2 "$D4R" run t
expect_grep "recipes/t/layer.json: module: expected a string, found a number" "$T/err"
printf '{"layer": "t",\n "module": "x" "y"}\n' >recipes/t/layer.json
expect_rc 2 "$D4R" run t
expect_grep "recipes/t/layer.json:2:[0-9]+: invalid JSON" "$T/err"
# Text after the document, and a key given twice anywhere in it.
write '{"offset": 0, "kind": "buffer", "buffer": "o"}'
echo '{}' >>recipes/t/layer.json
expect_rc 2 "$D4R" run t
expect_grep "^d4r-splice: recipes/t/layer.json:6:1: text after the JSON document$" "$T/err"
write '{"offset": 0, "kind": "buffer", "buffer": "o", "buffer": "o"}'
expect_rc 2 "$D4R" run t
expect_grep "^d4r-splice: recipes/t/layer.json: launches\[0\].params.fields\[0\]: key 'buffer' given twice$" "$T/err"
# No corpus anywhere: said when the module is needed.
write '{"offset": 0, "kind": "buffer", "buffer": "o"}'
rmdir corpus
expect_rc 2 "$D4R" run t
expect_grep "no corpus folder: give --corpus DIR or set \\\$D4R_CORPUS" "$T/err"
expect_rc 2 "$D4R" run t --corpus "$T/nowhere"
expect_grep "corpus folder '$T/nowhere' \(--corpus\) is not a folder" "$T/err"
