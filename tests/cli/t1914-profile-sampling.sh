#!/usr/bin/env bash
# t1914-profile-sampling: `profile`'s PC sampling where it cannot be had,
# through the stand-in driver of t1909 (no device: CUPTI's PC sampling
# needs a real one).  Without libcupti the default profile says why in one
# line and gives the probes' figures; --sampling makes it an error (exit 2)
# before any module runs; with the toolkit's libcupti, CUPTI refuses the
# stand-in's context and --sampling says so; --no-sampling is the probes
# alone.  The sampled figures (samples -> statements -> phases) are tested
# offline in tests/unit/test_sample.c; the GPU run is scripts/gpu-sampling.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
command -v python3 >/dev/null || skip "no python3"
stand_in_driver
mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke" "$T/repo/ptx"
cp "$TOP/tests/fixtures/bisect/mma3.ptx" "$T/repo/corpus/smoke/smoke.ptx"
smoke_manifest "$T/repo"
smoke_oracle "$T/repo" 90
cd "$T/repo"
"$D4R" recipe new smoke --phase 2 --template identity -o recipes/smoke/phase-02.json >/dev/null 2>&1 ||
	fail "recipe new smoke --phase 2"
nocupti="D4R_LIBCUPTI=$T/no/libcupti.so"

# 1. no libcupti, the default: one line of why, the probes' profile whole
expect_rc 0 env $nocupti "$D4R" profile smoke --phase 2
expect_grep "^smoke profile \(recipe recipes/smoke/phase-02.json\): 32 warps in 4 blocks, 3 phases timed$" "$T/out"
expect_grep "^  sampling  not taken: no CUPTI library \(libcupti.so.13\): $T/no/libcupti.so: .*; the probes' figures above are all there is$" "$T/out"
expect_grep "^  kernel       111 \[74, 148\] " "$T/out"
# the line comes after the probes' table, before the device line
python3 - "$T/out" <<'PY' || fail "the sampling line is not after the probes' table"
import sys
l = open(sys.argv[1]).read().split("\n")
k = [i for i, x in enumerate(l) if x.startswith("  kernel       ")][0]
s = [i for i, x in enumerate(l) if x.startswith("  sampling  ")][0]
d = [i for i, x in enumerate(l) if x.startswith("  device    ")][0]
assert k < s < d, (k, s, d)
PY
expect_rc 0 env $nocupti "$D4R" profile smoke --phase 2 --json
python3 - "$T/out" <<'PY' || fail "sampling in --json, no libcupti"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["sampling"]
assert s["taken"] is False and s["why"].startswith("no CUPTI library (libcupti.so.13): "), s
assert sorted(s) == ["taken", "why"], s
assert j["status"] == "ok" and j["phases"], j
PY

# 2. --sampling without libcupti: an error, and no module run
expect_rc 2 env $nocupti "$D4R" profile smoke --phase 2 --sampling
expect_grep "^d4r-splice: profile: --sampling: no CUPTI library \(libcupti.so.13\): $T/no/libcupti.so" "$T/err"
[ -s "$T/out" ] && fail "--sampling printed a profile: $(cat "$T/out")"
expect_rc 2 env $nocupti "$D4R" profile smoke --phase 2 --sampling --json
python3 - "$T/out" <<'PY' || fail "--sampling --json error document"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "error" and j["exit"] == 2, j
assert j["message"].startswith("--sampling: no CUPTI library"), j
PY

# 3. --no-sampling: nothing said of sampling; --json says it was left out
expect_rc 0 "$D4R" profile smoke --phase 2 --no-sampling
expect_no_grep "sampling" "$T/out"
expect_rc 0 "$D4R" profile smoke --phase 2 --no-sampling --json
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
assert s == {"taken": False, "why": "--no-sampling"}, s
' "$T/out" || fail "--no-sampling --json"

# 4. the toolkit's libcupti and the stand-in's context: CUPTI refuses it
rc=0
"$D4R" profile smoke --phase 2 --sass >/dev/null 2>"$T/sass.err" || rc=$?
if grep -q "no CUPTI library" "$T/sass.err"; then
	echo "no libcupti here: part 4 left out"
else
	expect_rc 2 "$D4R" profile smoke --phase 2 --sampling
	expect_grep "^d4r-splice: profile: --sampling: original \(lines\): PC sampling: cuptiPCSamplingEnable: CUPTI_ERROR_[A-Z_]+ \([0-9]+\)$" "$T/err"
	expect_rc 0 "$D4R" profile smoke --phase 2
	expect_grep "^  sampling  not taken: original \(lines\): PC sampling: cuptiPCSamplingEnable: " "$T/out"
fi

# 5. what goes together and what does not
expect_rc 2 "$D4R" profile smoke --phase 2 --sampling --no-sampling
expect_grep "'--sampling'.*'--no-sampling'|'--no-sampling'.*'--sampling'" "$T/err"
expect_rc 2 "$D4R" profile smoke --phase 2 --sampling --sass
expect_rc 2 "$D4R" profile smoke --phase 2 --no-sampling --sampling-period 9
expect_rc 2 "$D4R" profile smoke --phase 2 --sampling-period 4
expect_grep "sampling-period" "$T/err"
expect_rc 2 "$D4R" profile smoke --phases 1-3 --variant mma,f16 --sampling
expect_grep "'--sampling' takes one variant" "$T/err"
exit 0
