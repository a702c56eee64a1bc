#!/usr/bin/env bash
# t1907-bisect-stand-in: `bisect` from end to end without a GPU, against
# the CPU stand-in for libcuda.so.1 of tests/unit/test_gpu_launch.c (built
# here into a shared library, named by $D4R_LIBCUDA).  The stand-in runs no
# PTX: for a module with probes it stores, for every warp and lane, a value
# made from the register's name, the warp and the lane (a hash, recomputed
# here in Python, so the values bisect prints are checked against the
# warp and lane it names), and "// mock: probe-flip REG WARP LANE" in a
# module flips bit 0 of that one value.  So this shows what bisect does
# with what comes back - the spliced module (one recipe, several, a file),
# the points carried over to it, the first difference, the spread, the
# frames, the size window, --json, the refusals - not what a GPU computes
# (tests/gpu/t0108 does that).
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
command -v python3 >/dev/null || skip "no python3"
stand_in_driver

# value REG WARP LANE: what the stand-in stores (its probe_value), as 0x%08x
value() {
	python3 - "$@" <<'PY'
import sys
reg, w, l = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
M = 0xffffffff
h = 2166136261
for c in reg.encode():
    h = ((h ^ c) * 16777619) & M
h ^= ((w * 0x9e3779b1) & M) ^ ((l * 0x85ebca77) & M)
h ^= h >> 15
h = (h * 0x2c1b3c6d) & M
h ^= h >> 12
print("0x%08x" % (h & ~0x40004000 & M))
PY
}

# a layer of one launch of `pattern` (4 blocks of 256 threads: 32 warps),
# its module the three-phase kernel, its oracle the stand-in's pattern
mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke" "$T/repo/ptx"
cp "$TOP/tests/fixtures/bisect/mma3.ptx" "$T/repo/corpus/smoke/smoke.ptx"
smoke_manifest "$T/repo"
smoke_oracle "$T/repo" 90
sha=$(sha256sum "$T/repo/corpus/smoke/oracle.frame" | cut -d" " -f1)
cd "$T/repo"
R=recipes/smoke
"$D4R" recipe new smoke --phase 1 --template identity -o $R/phase-01.json >/dev/null 2>&1 ||
	fail "recipe new smoke --phase 1"
"$D4R" recipe new smoke --phase 2 --template identity -o $R/phase-02.json >/dev/null 2>&1 ||
	fail "recipe new smoke --phase 2"
# phase 2 as a template that re-emits it, and tells the stand-in to flip bit 0
# of %r16 (phase 2's D) in warp 13 (block 1, its warp 5), lane 5
"$D4R" recipe new smoke --phase 2 --template smoke/flip.ptx -o $R/flip.json >/dev/null 2>&1 ||
	fail "recipe new smoke --phase 2 (file template)"
sed -i 's|^//! in|// mock: probe-flip %r16 13 5\n//! in|;t' ptx/smoke/flip.ptx
grep -q 'mock: probe-flip' ptx/smoke/flip.ptx || fail "no flip marker in the template"

# 1. the identity of phase 2: nothing differs, exit 0
expect_rc 0 "$D4R" bisect smoke --phase 2
expect_grep "^smoke bisect \(recipe $R/phase-02.json\): IDENTICAL \(no probe differs, spliced frame = oracle\)$" "$T/out"
expect_grep "^  cut       s19-s19 \(phase 2\), recipe $R/phase-02.json, template identity$" "$T/out"
expect_grep "^  probes    3 records \(phase-end, live-out registers\), 8 registers per lane, 1.0 KB per warp x 32 warps = 32.0 KB per module$" "$T/out"
expect_grep "^  original  instrumented frame = oracle \(the probes do not change what they observe\)$" "$T/out"
expect_grep "^  probes    all 3 records identical$" "$T/out"
expect_grep "^  frame     spliced frame = oracle \(sha256 ${sha:0:16}\)$" "$T/out"
expect_grep "^  seconds   prepare [0-9.]+, JIT [0-9.]+ original( cached)? \|\| [0-9.]+ spliced( cached)? \(side by side\), .*total [0-9.]+ \(longer JIT \+ 2 s = [0-9.]+: met\)$" "$T/out"
expect_grep "^  device    Stand-in H200 \(sm_90, driver 13000\)$" "$T/out"

# 2. one wrong bit at phase 2's end: named there, 1 ulp, exit 1
expect_rc 1 "$D4R" bisect smoke --recipe $R/flip.json
# README's and the man page's sample of this run are what it prints
python3 "$TOP/tests/cli/docs-run.py" "$TOP" sample \
	"d4r-splice bisect smoke --recipe recipes/smoke/flip.json" "$T/out" ||
	fail "the documentation's bisect sample is not what bisect prints"
a=$(value %r16 13 5)
b=$(printf '0x%08x' $((a ^ 1)))
expect_grep "^smoke bisect \(recipe $R/flip.json\): DIFFERS at phase 2 end \(cut s19-s19\)$" "$T/out"
expect_grep "^  cut       s19-s19 \(phase 2\), recipe $R/flip.json, template ptx/smoke/flip.ptx$" "$T/out"
expect_grep "^  first     phase 2 end \(cut s19-s19\) \(after s19, line 41; spliced s19\): block \(1,0,0\) warp 5 lane 5 register %r16 \(f16x2\)$" "$T/out"
expect_grep "^            original $a \(" "$T/out"
expect_grep "^            spliced  $b \(" "$T/out"
expect_grep "^            distance 1 ulp \(low half\)$" "$T/out"
expect_grep "^  before    1 record identical \(phase 1\)$" "$T/out"
expect_grep "^            phase 2 end \(cut s19-s19\) +1 +2048 +1 ulp$" "$T/out"
expect_grep "^            phase 3 end +0 +4096 +-$" "$T/out"
expect_grep "^  frame     spliced frame = oracle" "$T/out"
# the first value of the first warp: the dump's indexing, checked against the hash
expect_rc 1 "$D4R" bisect smoke --recipe $R/flip.json --json
python3 - "$T/out" "$(value %r16 13 5)" <<'PY' || fail "bad --json output"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "DIFFERS" and j["exit"] == 1, j
f = j["first"]
assert f["point"] == "phase 2 end (cut s19-s19)" and f["phase"] == 2, f
assert f["block"] == [1, 0, 0] and f["warp"] == 5 and f["lane"] == 5, f
assert f["register"] == "%r16" and f["type"] == "f16x2" and f["distance"] == 1, f
assert f["half"] == "low" and f["original"].startswith(sys.argv[2]), f
recs = j["records"]
assert [r["point"] for r in recs] == ["phase 1 end", "phase 2 end (cut s19-s19)", "phase 3 end"], recs
assert [r["differ"] for r in recs] == [0, 1, 0] and recs[2]["values"] == 32 * 32 * 4, recs
assert j["original"]["oracle"] == "matches" and j["spliced"]["frame_identical"] is True, j
p = j["probes"]
assert p["records"] == 3 and p["bytes_per_warp"] == 1024 and p["warps"] == 32, p
assert p["dump_bytes"] == 32768 and not p["windowed"], p
assert j["cuts"] == [{"recipe": "recipes/smoke/flip.json", "template": "ptx/smoke/flip.ptx",
                      "phase": 2, "first": 19, "last": 19}], j["cuts"]
assert j["seconds"]["side_by_side"] is True and j["device"] == "Stand-in H200", j
PY

# 3. a spliced module from a file, wrong in one value and in one frame byte
sed 's|^.version 8.0|// mock: probe-flip %r13 30 31\n// mock: off-by-one\n.version 8.0|' \
	corpus/smoke/smoke.ptx >"$T/wrong.ptx"
expect_rc 1 "$D4R" bisect smoke --module "$T/wrong.ptx" --serial
expect_grep "^smoke bisect \(module $T/wrong.ptx\): DIFFERS at phase 1 end$" "$T/out"
expect_grep "^  first     phase 1 end \(after s15, line 37; spliced s15\): block \(3,0,0\) warp 6 lane 31 register %r13 \(f16x2\)$" "$T/out"
expect_grep "^            original $(value %r13 30 31) \(" "$T/out"
expect_grep "^  frame     spliced frame DIFFERS from the oracle$" "$T/out"
expect_grep "^            first difference at byte 700 \(output 'out' byte 700, pixel \(15, 10\) channel 0\)$" "$T/out"
expect_grep "\(one after the other\)" "$T/out"
expect_no_grep "^  cut " "$T/out"
# the window: phase 3 alone sees no difference, the frame does
expect_rc 1 "$D4R" bisect smoke --module "$T/wrong.ptx" --window 3
expect_grep "^smoke bisect \(module $T/wrong.ptx\): DIFFERS: no probe differs, the frame does$" "$T/out"
expect_grep "^  probes    1 records \(phase-end" "$T/out"

# a point a probe cannot go to (phase 1's last mma shares its line in the
# spliced module) is left out of both, and said
awk '/^\tmma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 \{%r13/ { printf "%s ", $0; next } { print }' \
	corpus/smoke/smoke.ptx >"$T/joined.ptx"
grep -q '{%r11, %r12}; 	add.rn.f16x2' "$T/joined.ptx" || fail "the joined line is not there"
expect_rc 0 "$D4R" bisect smoke --module "$T/joined.ptx"
expect_grep "^            1 points left out: a probe cannot go there \(the first: probe: phase 1 end: code follows s15 on its line \(line 37\): a probe would have to split the line\)$" "$T/out"
expect_grep "^  probes    all 2 records identical$" "$T/out"

# 4. several recipes in one module: phase 1's identity, phase 2's flip
cp $R/flip.json $R/phase-02.json
expect_rc 1 "$D4R" bisect smoke --phases 1-2 --keep="$T/keep"
expect_grep "^smoke bisect \(recipes of phases 1-2\): DIFFERS at phase 2 end \(cut s19-s19\)$" "$T/out"
expect_grep "^  cut       s14-s15 \(phase 1\), recipe $R/phase-01.json, template identity$" "$T/out"
expect_grep "^  cut       s19-s19 \(phase 2\), recipe $R/phase-02.json, template ptx/smoke/flip.ptx$" "$T/out"
expect_grep "^  first     phase 2 end \(cut s19-s19\) .*block \(1,0,0\) warp 5 lane 5 register %r16" "$T/out"
for f in spliced.ptx original.probed.ptx spliced.probed.ptx original.frame spliced.frame \
	original.dump spliced.dump; do
	[ -s "$T/keep/$f" ] || fail "--keep: no $f"
done
[ "$(stat -c %s "$T/keep/spliced.dump")" -eq 32768 ] || fail "--keep: the dump is not 32 KB"
grep -c '// d4r-splice: begin' "$T/keep/spliced.ptx" | grep -qx 2 || fail "not two cuts spliced"

# 5. the size limit: the first record fits in 10K, the others are left out
expect_rc 0 "$D4R" bisect smoke --phase 1 --dump-limit 10K
expect_grep "^  window    phases 1 only: the dump of all 3 records would take 32.0 KB, over the limit of 10.0 KB \(--dump-limit\); the rest: --window 2-3$" "$T/out"
expect_grep "^  probes    1 records" "$T/out"

# 6. refusals: exit 2, said why
head -c 1024 /dev/zero >"$T/zero.frame"
expect_rc 2 "$D4R" bisect smoke --phase 1 --oracle "$T/zero.frame"
expect_grep "^smoke bisect \(recipe $R/phase-01.json\): ERROR \(the instrumented original's frame differs from the oracle" "$T/out"
expect_grep "^  original  instrumented frame DIFFERS from the oracle$" "$T/out"
# no device memory to spare: the limit is what the device has
D4R_MOCK_FREE_KB=0 expect_rc 2 "$D4R" bisect smoke --phase 1
expect_grep "the first probe record alone needs 8.0 KB, over the limit of 0 bytes \(half of what the device's free 0 bytes of 80.0 GB leaves\)" "$T/err"
D4R_MOCK_FREE_KB=524330 expect_rc 0 "$D4R" bisect smoke --phase 1
expect_grep "^  window    phases 1-2 only: .* over the limit of 20.0 KB \(half of what the device's free 512.0 MB of 80.0 GB leaves\); the rest: --window 3$" "$T/out"
expect_rc 2 "$D4R" bisect smoke
expect_grep "name the spliced module: --phase N, --recipe FILE, --phases LIST or --module FILE" "$T/err"
expect_rc 2 "$D4R" bisect smoke --module "$T/wrong.ptx" --phase 2
expect_grep "option '--phase' cannot be used with '--module'" "$T/err"
expect_rc 2 "$D4R" bisect smoke --phases 2-3
expect_grep "layer 'smoke' has no recipe for phase 3: '.*phase-03.json' does not exist" "$T/err"
expect_rc 2 "$D4R" bisect smoke --phase 1 --window 4
expect_grep "window: phase 4 does not exist: [a-z]+ has 3 phases" "$T/err"
expect_rc 2 "$D4R" bisect smoke --phase 1 --dump-limit 10X
expect_grep "option '--dump-limit': '10X' is not a size" "$T/err"
unset D4R_LIBCUDA
expect_rc 2 env D4R_LIBCUDA=/nonexistent/libcuda.so.1 "$D4R" bisect smoke --phase 1
expect_grep "no CUDA driver" "$T/err"
export D4R_LIBCUDA="$T/libcuda-mock.so"

# 7. enc4: the recipe of tests/gpu/t0108 (phase 3 and one flipped bit; the
# stand-in flips it too), on the layer's own manifest; the stand-in's frame
# is all zeros
head -c 341184 /dev/zero >"$T/enc4-zero.frame"
cd "$TOP"
expect_rc 1 "$D4R" bisect enc4 --recipe tests/fixtures/bisect/enc4-phase-03-flip.json \
	--oracle "$T/enc4-zero.frame"
expect_grep "^enc4 bisect \(recipe tests/fixtures/bisect/enc4-phase-03-flip.json\): DIFFERS at phase 3 end \(cut s7616-s7639\)$" "$T/out"
expect_grep "^  probes    62 records \(phase-end, live-out registers\), 1900 registers per lane, 237.5 KB per warp x 308 warps = 71.4 MB per module$" "$T/out"
expect_grep "^  first     phase 3 end \(cut s7616-s7639\) \(after s7639, line 12416; spliced s7648\): block \(5,3,0\) warp 2 lane 17 register %r2175 \(f16x2\)$" "$T/out"
expect_grep "^            distance 1 ulp \(low half\)$" "$T/out"
expect_grep "^  before    2 records identical \(phases 1-2\)$" "$T/out"
expect_grep "^            phase 62 end +0 +39424 +-$" "$T/out"
