#!/usr/bin/env bash
# t1909-profile-stand-in: `profile` from end to end without a GPU, against
# the CPU stand-in for libcuda.so.1 of tests/unit/test_gpu_launch.c (built
# here, named by $D4R_LIBCUDA).  The stand-in runs no PTX: each per-warp
# store of a clock read stores the read's line in the module times
# 2 + warp % 3, the %globaltimer read 1000 x the warp; a module with probes
# reports 40 registers (else 32) and times 0.26 ms (else 0.25: a 4%
# overhead); "// mock: spill" in a module gives it 64 bytes of local memory
# and a spill line in its JIT log; "// mock: kernel/probed MS REGS STACK
# STORES LOADS" replays the figures of a real run (section 5).  So the figures printed are recomputed
# here from the kept module's line numbers: for a span of d lines over the
# 32 warps of the layer (11 x 2d, 11 x 3d, 10 x 4d) the median is 3d, p10
# (rank 4) 2d and p90 (rank 29) 4d.  This shows what profile does with what
# comes back, not what a GPU measures (scripts/gpu-profile does that).
# The main job and check print the same compiler figures from the JIT's
# verbose log, which the stand-in writes when asked for it.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
command -v python3 >/dev/null || skip "no python3"
stand_in_driver

# the layer of t1907: one launch of `pattern`, 4 blocks of 256 threads
mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke" "$T/repo/ptx"
cp "$TOP/tests/fixtures/bisect/mma3.ptx" "$T/repo/corpus/smoke/smoke.ptx"
smoke_manifest "$T/repo"
smoke_oracle "$T/repo" 90
cd "$T/repo"
R=recipes/smoke
"$D4R" recipe new smoke --phase 2 --template identity -o $R/phase-02.json >/dev/null 2>&1 ||
	fail "recipe new smoke --phase 2"

# expected FILE POINTS : "NAME MEDIAN P10 P90" per phase and epilogue, from the lines
expected() {
	python3 - "$1" "$2" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
line = {}
for i, l in enumerate(lines):
    m = re.search(r"// d4r-splice probe 0 value (\d+): read", l)
    if m:
        line[int(m.group(1))] = i + 1
at = {}
for l in open(sys.argv[2]):
    k, what = l.rstrip("\n").split(": ", 1)
    for part in what.split(" = "):
        at[part] = line[int(k.split()[1])]
for p in (1, 2, 3):
    d = at["phase %d end" % p] - at["phase %d start" % p]
    print("phase", p, 3 * d, 2 * d, 4 * d)
    d = at["epilogue %d end" % p] - at["phase %d end" % p]
    print("epilogue", p, 3 * d, 2 * d, 4 * d)
d = at["kernel end"] - at["kernel start"]
print("kernel", 0, 3 * d, 2 * d, 4 * d)
PY
}

# 1. the identity of phase 2: every figure recomputed, the overhead over target
expect_rc 0 "$D4R" profile smoke --phase 2 --no-sampling --keep "$T/k" --chart "$T/c.png"
cp "$T/out" "$T/prof.txt"
# README's sample of this run is what it prints (d4r-splice profile smoke --phase 2 --no-sampling)
python3 "$TOP/tests/cli/docs-run.py" "$TOP" sample "d4r-splice profile smoke --phase 2 --no-sampling" "$T/out" ||
	fail "the documentation's profile sample is not what profile prints"
expect_grep "^smoke profile \(recipe $R/phase-02.json\): 32 warps in 4 blocks, 3 phases timed$" "$T/out"
expect_grep "^  kernel    original 0.2500 ms, probed 0.2600 ms: overhead \+4.0%$" "$T/out"
expect_grep "^            spliced  0.2500 ms, probed 0.2600 ms: overhead \+4.0% \(medians of 20 runs\)$" "$T/out"
expect_grep "^            OVERHEAD ABOVE THE 3% TARGET" "$T/out"
# the stand-in's probed build has 40 registers to the plain build's 32
expect_grep "^  CHANGED   original: the probes changed the compiled kernel: registers 32 -> 40, 4% slower; the cycles below are of the probed kernel$" "$T/out"
expect_grep "^  CHANGED   spliced: the probes changed the compiled kernel: registers 32 -> 40, 4% slower; " "$T/out"
expect_grep "^  probes    10 clock reads, window all \(every phase\)$" "$T/out"
# back-to-back reads on adjacent lines: 1 line x 2 in warp 0; blocks 8 warps apart
expect_grep "^  clock     %clock64 \(low 32 bits\), resolution 2 cycles .*; blocks start over 24.0 us \(%globaltimer\)$" "$T/out"
expect_grep "^  note      probes can change the scheduling around them" "$T/out"
expect_grep "^  compiled  original         32 registers, 0 B local, 0 B shared$" "$T/out"
expect_grep "^            spliced probed   40 registers, 0 B local, 0 B shared$" "$T/out"
expect_no_grep "SPILLS" "$T/out"
expect_grep "^  frame     spliced frame = the original's$" "$T/out"
expected "$T/k/original.probed.ptx" "$T/k/original.points.txt" >"$T/exp-o"
expected "$T/k/spliced.probed.ptx" "$T/k/spliced.points.txt" >"$T/exp-s"
[ "$(wc -l <"$T/exp-o")" -eq 7 ] || fail "expected figures: $(cat "$T/exp-o")"
while read -r kind p med p10 p90 && read -r _ _ smed sp10 sp90 <&3; do
	name="$kind $p"
	[ "$kind" = kernel ] && name=kernel
	ratio=$(python3 -c "print('%.2fx' % ($smed / $med))")
	expect_grep "^  $(printf '%-12s' "$name") $med \[$p10, $p90\] +[0-9.]+% $smed \[$sp10, $sp90\] +[0-9.]+% $ratio$" "$T/prof.txt"
done <"$T/exp-o" 3<"$T/exp-s"
# the chart is a PNG
head -c 8 "$T/c.png" | od -An -c | grep -q 'P   N   G' || fail "--chart: not a PNG"

# 2. --json: the same figures, and the share of the kernel
expect_rc 0 "$D4R" profile smoke --phase 2 --json
python3 - "$T/out" "$T/exp-o" <<'PY' || fail "bad --json output"
import json, sys
j = json.load(open(sys.argv[1]))
exp = [l.split() for l in open(sys.argv[2])]
assert j["warps"] == 32 and j["blocks"] == 4, j
assert j["overhead_percent"]["met"] is False and abs(j["overhead_percent"]["original"] - 4.0) < 1e-3, j
assert j["clock"]["resolution_cycles"] == 2 and j["clock"]["block_start_spread_ns"] == 24000, j
assert j["compiled"]["original"]["registers"] == 32 and j["compiled"]["spliced_probed"]["registers"] == 40
assert j["compiled"]["spliced_spills_where_original_does_not"] is False
ph = {p["phase"]: p for p in j["phases"]}
for kind, p, med, p10, p90 in exp:
    if kind == "kernel":
        s = j["kernel_cycles"]["original"]
    else:
        s = ph[int(p)]["original"][kind]
    assert (s["median"], s["p10"], s["p90"]) == (float(med), float(p10), float(p90)), (kind, p, s)
# shares: mean over the kernel's mean; phases and epilogues are within the kernel
tot = sum(ph[p]["original"][k]["share"] for p in ph for k in ("phase", "epilogue"))
assert 0 < tot <= 1.0 + 1e-9, tot
PY

# 3. a spliced module that spills where the original does not is flagged
sed 's|^.version 8.0|// mock: spill\n.version 8.0|' corpus/smoke/smoke.ptx >"$T/spill.ptx"
expect_rc 0 "$D4R" profile smoke --module "$T/spill.ptx" --window 1
expect_grep "^smoke profile \(module $T/spill.ptx\): 32 warps in 4 blocks, 1 phases timed$" "$T/out"
expect_grep "^            spliced          32 registers, 64 B local, 0 B shared$" "$T/out"
expect_grep "^  spills    spliced: 64 bytes stack frame, 64 bytes spill stores, 60 bytes spill loads$" "$T/out"
expect_grep "^  SPILLS    the spliced kernel spills where the original does not$" "$T/out"
expect_no_grep "^  phase 2 " "$T/out"

# the main job and check say the same from the JIT's verbose log: a template
# that tells the stand-in its module spills
"$D4R" recipe new smoke --phase 2 --template smoke/spill.ptx -o $R/spill.json >/dev/null 2>&1 ||
	fail "recipe new smoke --phase 2 (file template)"
sed -i 's|^//! in|// mock: spill\n//! in|;t' ptx/smoke/spill.ptx
grep -q 'mock: spill' ptx/smoke/spill.ptx || fail "no spill marker in the template"
expect_rc 0 "$D4R" smoke --recipe $R/spill.json
expect_grep "^  compiled  original 32 registers, 0 B stack, 0 B shared, no spills$" "$T/out"
expect_grep "^            spliced  32 registers, 64 B stack, 0 B shared, spills 64 B stored / 60 B loaded  SPILLS where the original does not$" "$T/out"
expect_rc 0 "$D4R" smoke --recipe $R/spill.json --json
python3 - "$T/out" <<'PY' || fail "bad --json compiled"
import json, sys
c = json.load(open(sys.argv[1]))["compiled"]
assert c["original"]["known"] and c["original"]["spill_store_bytes"] == 0, c
assert c["spliced"]["stack_bytes"] == 64 and c["spliced"]["spill_load_bytes"] == 60, c
assert c["spliced_spills_where_original_does_not"] is True, c
PY
expect_rc 0 "$D4R" smoke --phase 2
expect_no_grep "SPILLS" "$T/out"
expect_rc 0 "$D4R" check smoke $R/spill.json $R/phase-02.json
expect_grep "^spill.json +IDENTICAL .*  32 regs, 64 B stack, SPILLS where the original does not$" "$T/out"
expect_grep "^phase-02.json +IDENTICAL .*  32 regs, 0 B stack$" "$T/out"

# 4. refusals
expect_rc 2 "$D4R" profile smoke
expect_grep "name the spliced module: --phase N, --recipe FILE, --phases LIST or --module FILE" "$T/err"
expect_rc 2 "$D4R" profile smoke --phase 2 --no-run
expect_grep "option '--no-run' needs '--keep DIR'" "$T/err"
expect_rc 2 "$D4R" profile smoke --phase 2 --window 4
expect_grep "window: phase 4 does not exist: [a-z]+ has 3 phases" "$T/err"
expect_rc 2 "$D4R" profile smoke --phase 3
expect_grep "layer 'smoke' has no recipe for phase 3" "$T/err"
expect_rc 2 env D4R_LIBCUDA=/nonexistent/libcuda.so.1 "$D4R" profile smoke --phase 2 --json
expect_grep "no CUDA driver" "$T/err"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["status"] == "error", j' "$T/out" ||
	fail "--json on an error is not one JSON object"

# 5. the figures of the H200 (gpu-logs/2026-12-01/part4/profile/f16.txt:
# enc4 against its f16 layer) replayed by the stand-in: the probed kernels
# ran 22.6% and 5.8% faster, with fewer spills.  Not "within the target":
# the overhead is judged on its absolute value, and the changed compile is
# said first, with the figures.
sed 's|^.version 8.0|// mock: kernel 0.2895 255 928 2688 2668\n// mock: probed 0.2728 255 1016 1272 1272\n.version 8.0|' \
	corpus/smoke/smoke.ptx >"$T/f16.ptx"
sed -i 's|^.version 8.0|// mock: kernel 0.3449 255 1184 3120 3172\n// mock: probed 0.2669 255 1144 1724 1716\n.version 8.0|' \
	corpus/smoke/smoke.ptx
expect_rc 0 "$D4R" profile smoke --module "$T/f16.ptx"
cp "$T/out" "$T/f16.txt"
sed -n 2,3p "$T/out" >"$T/first"
expect_grep "^  CHANGED   original: the probes changed the compiled kernel: local memory 1184 -> 1144 B, spill stores 3120 -> 1724 B, spill loads 3172 -> 1716 B, 23% faster; the cycles below are of the probed kernel$" "$T/first"
expect_grep "^  CHANGED   spliced: the probes changed the compiled kernel: local memory 928 -> 1016 B, spill stores 2688 -> 1272 B, spill loads 2668 -> 1272 B, 6% faster; the cycles below are of the probed kernel$" "$T/first"
expect_grep "^  probes    10 clock reads, window all \(every phase\)$" "$T/out"
expect_grep "^  kernel    original 0.3449 ms, probed 0.2669 ms: overhead -22.6%$" "$T/out"
expect_grep "^            spliced  0.2895 ms, probed 0.2728 ms: overhead -5.8% \(medians of 20 runs\)$" "$T/out"
expect_grep "^            PROBED KERNEL FASTER BY MORE THAN 3%: the figures below are of a kernel the probes changed" "$T/out"
expect_no_grep "within the" "$T/out"
expect_no_grep "OVERHEAD ABOVE" "$T/out"
expect_rc 0 "$D4R" profile smoke --module "$T/f16.ptx" --json
python3 - "$T/out" <<'PY' || fail "bad --json for the H200's figures"
import json, sys
j = json.load(open(sys.argv[1]))
ov = j["overhead_percent"]
assert ov["met"] is False and ov["window"] == "all" and ov["reads"] == 10, ov
assert abs(ov["original"] + 22.6) < 0.05 and abs(ov["spliced"] + 5.8) < 0.05, ov
c = j["probes_changed_code"]
assert c["original"]["changed"] and c["spliced"]["changed"], c
f = c["original"]["figures"]
assert f == {"local_bytes": {"plain": 1184, "probed": 1144},
             "spill_store_bytes": {"plain": 3120, "probed": 1724},
             "spill_load_bytes": {"plain": 3172, "probed": 1716}}, f
assert c["spliced"]["figures"]["spill_store_bytes"] == {"plain": 2688, "probed": 1272}, c
assert c["original"]["note"].startswith("the probes changed the compiled kernel: local memory 1184 -> 1144 B"), c
assert c["original"]["note"].endswith("23% faster; the cycles below are of the probed kernel"), c
PY

# phase 8 with --window 7-9 on the H200 (phase-08-window.txt): 16.9%
# faster, still not the kernel; the window and its reads are named
sed -i -e 's|^// mock: kernel .*|// mock: kernel 0.3432 255 1184 3120 3172|' \
	-e 's|^// mock: probed .*|// mock: probed 0.2853 255 968 2492 2684|' corpus/smoke/smoke.ptx
expect_rc 0 "$D4R" profile smoke --phase 2 --window 2 --keep "$T/kw"
reads=$(grep -c "// d4r-splice probe 0 value [0-9]*: read" "$T/kw/original.probed.ptx")
[ "$reads" -gt 0 ] && [ "$reads" -lt 10 ] || fail "--window 2: $reads reads"
expect_grep "^  CHANGED   original: the probes changed the compiled kernel: local memory 1184 -> 968 B, spill stores 3120 -> 2492 B, spill loads 3172 -> 2684 B, 17% faster" "$T/out"
expect_grep "^  probes    $reads clock reads, window 2$" "$T/out"
expect_grep "^  kernel    original 0.3432 ms, probed 0.2853 ms: overhead -16.9%$" "$T/out"
expect_grep "^            PROBED KERNEL FASTER BY MORE THAN 3%" "$T/out"
expect_rc 0 "$D4R" profile smoke --phase 2 --window 2 --json
python3 -c '
import json, sys
ov = json.load(open(sys.argv[1]))["overhead_percent"]
assert ov["window"] == "2" and ov["reads"] == int(sys.argv[2]) and ov["met"] is False, ov
' "$T/out" "$reads" || fail "--window in --json"

# a probed kernel 1.4% faster with the same compile: within the target, and
# nothing said to have changed
sed -i 's|^// mock: probed .*|// mock: probed 0.3384 255 1184 3120 3172|' corpus/smoke/smoke.ptx
expect_rc 0 "$D4R" profile smoke --phase 2
expect_grep "^  kernel    original 0.3432 ms, probed 0.3384 ms: overhead -1.4%$" "$T/out"
expect_grep "^            overhead within the 3% target \(either way\)$" "$T/out"
expect_no_grep "CHANGED|PROBED KERNEL FASTER" "$T/out"
