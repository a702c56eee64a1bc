#!/usr/bin/env bash
# scripts/toolkit-corpus: the extraction is reused while the libraries and
# the extractor are the same, and redone when the extractor's sources change
# (or, with no sources beside the script, when the binary does).  A stand-in
# toolkit: one "library" that is a fatbin container holding a small PTX
# module, in a tree with a copy of the script and of the sources its key
# reads, so the test can change them.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"
top=$T/top
mkdir -p "$top/scripts" "$top/src/cmd" "$top/src/ptx" "$T/cuda/lib64" || exit 1
cp "$TOP/scripts/toolkit-corpus" "$top/scripts/"
cp -r "$TOP/src/bin" "$TOP/src/base" "$top/src/"
cp "$TOP/src/cmd/extract.c" "$top/src/cmd/"
cp "$TOP/src/ptx/lex.c" "$TOP/src/ptx/lex.h" "$top/src/ptx/"
sample_ptx cached >"$T/k.ptx"
fatbin_ptx "$T/k.ptx" 80 >"$T/cuda/lib64/libfake.so.1"
cache=$T/cache

# corpus : runs the script; its stdout in $T/dir; the index's mtime in $T/when
corpus() {
	CUDA_HOME=$T/cuda D4R_CORPUS_CACHE=$cache "$top/scripts/toolkit-corpus" >"$T/dir" 2>"$T/log" ||
		{ cat "$T/log"; fail "toolkit-corpus failed"; }
	[ "$(cat "$T/dir")" = "$cache" ] || fail "toolkit-corpus printed '$(cat "$T/dir")', not $cache"
	stat -c %y "$cache/index.json" >"$T/when"
}

corpus
ls "$cache"/*.ptx >/dev/null 2>&1 || fail "nothing extracted: $(ls "$cache")"
expect_grep '^sources [0-9a-f]{64}$' "$cache/extractor.txt"
cp "$T/when" "$T/when1"
key1=$(cat "$cache/extractor.txt")
sleep 1.1

# nothing changed: reused
corpus
cmp -s "$T/when" "$T/when1" || fail "the extraction was redone with nothing changed"

# the extractor's sources change: redone, with a new key
echo '/* changed */' >>"$top/src/bin/fatbin.c"
corpus
cmp -s "$T/when" "$T/when1" && fail "the extractor changed and the extraction was reused"
[ "$(cat "$cache/extractor.txt")" != "$key1" ] || fail "the key did not change with the sources"
cp "$T/when" "$T/when2"
sleep 1.1
corpus
cmp -s "$T/when" "$T/when2" || fail "redone twice for one change"

# no sources beside the script: keyed by the binary
rm -rf "$top/src"
sleep 1.1
corpus
cmp -s "$T/when" "$T/when2" && fail "the key changed to the binary's and the extraction was reused"
expect_grep "^binary $(sha256sum <"$D4R" | cut -d' ' -f1)\$" "$cache/extractor.txt"
exit 0
