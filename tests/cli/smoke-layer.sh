# smoke-layer.sh - sourced by the tests/cli/t19NN scripts that run the main
# job, run and check end to end without a GPU.
#
#   stand_in_driver      builds the CPU stand-in for libcuda.so.1 of
#                        tests/unit/test_gpu_launch.c into $T/libcuda-mock.so
#                        and exports D4R_LIBCUDA (skips the test when it
#                        cannot be built)
#   capture_program OUT  builds tests/capture/stand-in-program.c (a program
#                        that loads a module and launches it through the
#                        stand-in driver, calling capture's tap where CUPTI
#                        would) into OUT, with the sanitizer of a sanitizer
#                        build's libd4r-capture.so ($D4R_BUILD)
#   smoke_layer DIR      a repository in DIR: layer "smoke" (recipes/smoke/
#                        layer.json), its module corpus/smoke/smoke.ptx with one
#                        mma phase in entry "pattern", the oracle frame the
#                        stand-in's "pattern" kernel makes, and two recipes:
#                        phase-01.json (the built-in identity: IDENTICAL) and
#                        mark.json (a template with the stand-in's
#                        "// mock: off-by-one" marker: byte 700 DIFFERS)
#   smoke_oracle DIR K   rewrites the oracle as the kernel would make it with
#                        k = K (90 is the launch's own) and the manifest's
#                        sha256 with it: K != 90 is a stale oracle
#   enc4_zero_layer DIR  a repository in DIR whose layer enc4 is the real one
#                        (its manifest, module, weights, templates, fixtures:
#                        links into $TOP) but for the oracle, the all-zero
#                        frame the stand-in makes of enc4 (it runs no PTX), so
#                        a whole-module check of enc4 can pass on the stand-in
#
# The oracle is computed here from the stand-in's rule (byte i = 7 i + k),
# not by the tool.

stand_in_driver() {
	local cc=${CC:-cc} inc=${CUDA_HOME:-/usr/local/cuda}/include
	command -v "$cc" >/dev/null || skip "no C compiler to build the stand-in driver"
	[ -f "$inc/cuda.h" ] || skip "no cuda.h in $inc to build the stand-in driver"
	sed -n '/MOCK-BEGIN/,/MOCK-END/p' "$TOP/tests/unit/test_gpu_launch.c" >"$T/mock.c"
	"$cc" -std=c11 -D_GNU_SOURCE -shared -fPIC -DD4R_MOCK_SO -I"$inc" -I"$TOP/tests" -I"$TOP/tests/unit" \
		-o "$T/libcuda-mock.so" "$T/mock.c" || fail "cannot build the stand-in driver"
	export D4R_LIBCUDA="$T/libcuda-mock.so" XDG_CACHE_HOME="$T/cache"
}

capture_program() {
	local out=$1 san= inc=${CUDA_HOME:-/usr/local/cuda}/include
	# A sanitizer build's library (make asan) runs only in a program that
	# loads the sanitizer's runtime first: build the program with it too.
	# The program stands for a user's, whose leaks are not ours (it keeps
	# its module loaded to the end): leak checks stay on for d4r-splice.
	if ldd "$D4R_BUILD/libd4r-capture.so" 2>/dev/null | grep -q libasan; then
		printf 'const char *__asan_default_options(void) { return "detect_leaks=0"; }\n' \
			>"$out.noleak.c"
		san="-fsanitize=address,undefined $out.noleak.c"
	fi
	"${CC:-cc}" $san -std=c11 -D_GNU_SOURCE -I"$TOP/src" -I"$inc" -o "$out" \
		"$TOP/tests/capture/stand-in-program.c" -ldl || fail "cannot build the stand-in program"
}

smoke_oracle() {
	local dir=$1 k=$2 sha
	python3 -c '
import sys
k = int(sys.argv[2])
open(sys.argv[1], "wb").write(bytes(((i * 7 + k) & 255) for i in range(1024)))
' "$dir/corpus/smoke/oracle.frame" "$k" || fail "cannot write the oracle"
	sha=$(sha256sum "$dir/corpus/smoke/oracle.frame" | cut -d" " -f1)
	sed -i "s/\"sha256\": \"[0-9a-f]*\"/\"sha256\": \"$sha\"/" "$dir/recipes/smoke/layer.json"
}

enc4_zero_layer() {
	local dir=$1 f sha
	mkdir -p "$dir/recipes/enc4" "$dir/corpus/enc4" "$dir/tests" || fail "cannot make $dir"
	for f in "$TOP"/corpus/enc4/*; do
		[ "${f##*/}" = oracle.frame ] || ln -s "$f" "$dir/corpus/enc4/" || fail "cannot link $f"
	done
	ln -s "$TOP/ptx" "$dir/ptx" && ln -s "$TOP/tests/fixtures" "$dir/tests/fixtures" ||
		fail "cannot link ptx and tests/fixtures into $dir"
	cp "$TOP"/recipes/enc4/*.json "$dir/recipes/enc4/" || fail "cannot copy enc4's recipes"
	head -c 341184 /dev/zero >"$dir/corpus/enc4/oracle.frame"
	sha=$(sha256sum "$dir/corpus/enc4/oracle.frame" | cut -d" " -f1)
	sed -i "s/\"sha256\": \"[0-9a-f]*\"}/\"sha256\": \"$sha\"}/" "$dir/recipes/enc4/layer.json"
	grep -q "$sha" "$dir/recipes/enc4/layer.json" || fail "enc4_zero_layer: the oracle's sha256 is not in the manifest"
}

# smoke_manifest DIR : DIR/recipes/smoke/layer.json, one launch of `pattern`
# (4 blocks of 256 threads: 32 warps) over a 1024-byte output, module
# corpus/smoke/smoke.ptx; its oracle's sha256 is filled in by smoke_oracle
smoke_manifest() {
	mkdir -p "$1/recipes/smoke"
	cat >"$1/recipes/smoke/layer.json" <<'JSON'
{
  "layer": "smoke", "module": "smoke/smoke.ptx", "entry": "pattern",
  "buffers": {"out": {"size": 1024, "init": {"kind": "fill", "byte": 255}}},
  "launches": [
    {"entry": "pattern", "grid": [4, 1, 1], "block": [256, 1, 1],
     "params": {"size": 12, "fields": [
       {"offset": 0, "kind": "buffer", "buffer": "out"},
       {"offset": 8, "kind": "u32", "value": 90}]}}
  ],
  "frame": [{"name": "out", "buffer": "out", "format": "u8", "width": 16, "height": 16, "channels": 4}],
  "oracle": {"path": "smoke/oracle.frame", "sha256": "0"}
}
JSON
}

smoke_layer() {
	local dir=$1
	command -v python3 >/dev/null || skip "no python3 to build the oracle frame"
	mkdir -p "$dir/recipes/smoke" "$dir/corpus/smoke" "$dir/ptx/smoke"
	cat >"$dir/corpus/smoke/smoke.ptx" <<'PTX'
.version 8.0
.target sm_90
.address_size 64

.visible .entry pattern(
	.param .u64 out,
	.param .u32 k
)
{
	.reg .b32 %r<8>;
	.reg .f32 %f<8>;
	mov.b32 %r1, 0;
	mov.b32 %r2, 0;
	mov.b32 %r3, 0;
	mov.b32 %r4, 0;
	mov.b32 %r5, 0;
	mov.b32 %r6, 0;
	mov.f32 %f1, 0f00000000;
	mov.f32 %f2, 0f00000000;
	mov.f32 %f3, 0f00000000;
	mov.f32 %f4, 0f00000000;
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f1, %f2, %f3, %f4};
	ret;
}
PTX
	smoke_manifest "$dir"
	smoke_oracle "$dir" 90
	(cd "$dir" && "$D4R" recipe new smoke --phase 1 --template identity &&
		"$D4R" recipe new smoke --phase 1 --template smoke/mark.ptx -o recipes/smoke/mark.json) \
		>/dev/null 2>&1 || fail "cannot write the smoke recipes"
	echo '// mock: off-by-one' >>"$dir/ptx/smoke/mark.ptx"
}
