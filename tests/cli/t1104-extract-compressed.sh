#!/usr/bin/env bash
# extract: the toolkit's fatbinary writes the same PTX stored, zstd- and
# LZ4-compressed; all three decompress to one text (two are duplicates), and
# nvcc's shared library embeds it in .nv_fatbin.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"
cuda=${CUDA_HOME:-/usr/local/cuda}
fb=$cuda/bin/fatbinary
[ -x "$fb" ] || skip "no CUDA toolkit fatbinary at $fb"

sample_ptx squeeze >"$T/k.ptx"
for mode in none default speed; do
	"$fb" --64 --create="$T/k_$mode.fatbin" --compress-mode=$mode \
		--image3=kind=ptx,sm=80,file="$T/k.ptx" || fail "fatbinary --compress-mode=$mode failed"
done
cat "$T/k_none.fatbin" "$T/k_default.fatbin" "$T/k_speed.fatbin" >"$T/k3.fatbin"
expect_rc 0 "$D4R" extract "$T/k3.fatbin" -o "$T/o"
python3 - "$T/o/index.json" <<'PY' || fail "index.json is wrong"
import json, sys
ix = json.load(open(sys.argv[1]))
m, s = ix["modules"], ix["skipped"]
assert len(m) == 1 and len(s) == 2, (m, s)
assert [m[0]["compression"]] + [x["compression"] for x in s] == ["none", "zstd", "lz4"], (m, s)
assert all(x["sha256"] == m[0]["sha256"] and x["size"] == m[0]["size"] for x in s)
assert m[0]["entries"] == ["squeeze", "squeeze_second"], m[0]
PY
# fatbinary minifies PTX (indentation, comments); compare the words.
words() { sed 's#//.*##' "$1" | tr -s ' \t\n' '\n\n\n' | grep -v '^$'; }
diff <(words "$T/k.ptx") <(words "$T/o/0001-squeeze.ptx") >/dev/null ||
	fail "extracted PTX is not the input PTX"

nvcc=$cuda/bin/nvcc
[ -x "$nvcc" ] || skip "skip: no $nvcc, so no extraction from a library nvcc builds (the rest passed)"
printf '__global__ void kern_lib(float *a) { a[threadIdx.x] *= 2.0f; }\n' >"$T/k.cu"
"$nvcc" -shared -Xcompiler -fPIC -gencode arch=compute_80,code=compute_80 \
	"$T/k.cu" -o "$T/k.so" 2>"$T/nvcc.err" || { cat "$T/nvcc.err"; fail "nvcc failed"; }
expect_rc 0 "$D4R" extract "$T/k.so" -o "$T/so"
[ -f "$T/so/0001-_Z8kern_libPf.ptx" ] || fail "nothing from nvcc's library: $(ls "$T/so")"
expect_grep '^\.target sm_80' "$T/so/0001-_Z8kern_libPf.ptx"
expect_grep '"section":[[:space:]]*".nv_fatbin"' "$T/so/index.json"
exit 0
