#!/usr/bin/env bash
# t1601-run-no-driver: without a CUDA driver, run validates the layer and
# the module, then says clearly that there is no driver (exit 2).
. "$D4R_TOP/tests/cli/lib.sh"
mkdir -p "$T/repo/recipes/t" "$T/repo/corpus/t"
cat >"$T/repo/corpus/t/t.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
	ret;
}
.visible .entry other()
{
	ret;
}
PTX
cat >"$T/repo/recipes/t/layer.json" <<'JSON'
{"layer": "t", "module": "t/t.ptx", "entry": "k",
 "buffers": {"o": {"size": 64, "init": {"kind": "zero"}}},
 "launches": [{"entry": "k", "grid": [1,1,1], "block": [32,1,1],
   "params": {"size": 8, "fields": [{"offset": 0, "kind": "buffer", "buffer": "o"}]}}],
 "frame": [{"name": "o", "buffer": "o"}]}
JSON
cd "$T/repo"
# A driver that is not there (the same path the GPU machine takes when
# libcuda.so.1 is missing).
D4R_LIBCUDA=/nonexistent/libcuda.so.1 expect_rc 2 "$D4R" run t
expect_grep "^d4r-splice: no CUDA driver: /nonexistent/libcuda.so.1" "$T/err"
# Found from a sub-folder, and by path.
mkdir -p sub && cd sub
D4R_LIBCUDA=/nonexistent/libcuda.so.1 expect_rc 2 "$D4R" run t
expect_grep "no CUDA driver" "$T/err"
D4R_LIBCUDA=/nonexistent/libcuda.so.1 expect_rc 2 "$D4R" run ../recipes/t/layer.json --json
expect_grep "no CUDA driver" "$T/err"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["layer"]=="t" and d["status"]=="error" and d["exit"]==2 and d["message"].startswith("no CUDA driver: /nonexistent/libcuda.so.1"), d' "$T/out" ||
	fail "run --json: not the error document"
cd ..
# This machine's own answer, when it has no libcuda.so.1.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	expect_rc 2 "$D4R" run t
	expect_grep "^d4r-splice: no CUDA driver: libcuda.so.1: " "$T/err"
fi
# Errors in the layer come first, driver or not.
D4R_LIBCUDA=/nonexistent/libcuda.so.1 expect_rc 2 "$D4R" run t --module missing.ptx
expect_grep "cannot open 'missing.ptx'" "$T/err"
sed 's/"entry": "k", "grid"/"entry": "nope", "grid"/' recipes/t/layer.json >recipes/t/l2.json
mkdir -p recipes/t2 && sed 's/"layer": "t"/"layer": "t2"/' recipes/t/l2.json >recipes/t2/layer.json
D4R_LIBCUDA=/nonexistent/libcuda.so.1 expect_rc 2 "$D4R" run t2
expect_grep "no entry 'nope' in the module" "$T/err"
