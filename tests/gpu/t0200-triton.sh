#!/usr/bin/env bash
# Triton kernels through manifests (tests/fixtures/foreign/triton): each of
# the six kernels (matmul and attention, f16 and fp8, code for sm_80, sm_89
# and sm_90) is launched with its file-initialised inputs; its frame is
# checked against the float64 reference computed by torch when the fixtures
# were generated (ref.f32.bin), elementwise within the tolerance its NAME.json
# states, by a checker here that does not use d4r-splice; that frame becomes
# the oracle; the identity splice of every phase is IDENTICAL, and a perturb
# of one phase is DIFFERS.
#
# The wgmma phases of the sm_90 kernels: perturb refuses a cut whose
# accumulators no wgmma.wait_group inside it completes.  The attention
# kernel's first group is completed by a wait_group 0 in straight-line code
# (s276), so the range from its phase 4 to that wait is perturbed.  The
# matmul kernels wait for their last group only after the loop's back edge,
# so no straight-line cut through a phase can be perturbed: the refusal is
# checked, and the frame check's sensitivity is shown on the accumulators'
# first use after the loop (the cvt that packs two of them).
. "$D4R_TOP/tests/cli/lib.sh"
FIX="$TOP/tests/fixtures/foreign/triton"
OUTD=${D4R_GPU_OUT:-$T}
JOBS=${D4R_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
W="$T/w"
mkdir -p "$W/recipes"
cp -r "$FIX" "$W/corpus"
cd "$W" || exit 1

# kernel  perturb cut (phase N, or s A:B)  expected refusal of phase 1
kernels=(
	"attn-f16-sm80    phase:1"
	"attn-f16-sm90    stmts:264:276  refuse"
	"matmul-f16-sm80  phase:1"
	"matmul-f16-sm90  stmts:451:451  refuse"
	"matmul-fp8-sm89  phase:1"
	"matmul-fp8-sm90  stmts:380:380  refuse"
)
first=1
summary="$OUTD/triton.txt"
: >"$summary"
for row in "${kernels[@]}"; do
	read -r k pcut refuse <<<"$row"
	L="triton-$k"
	cp -r "$W/corpus/$L" "$W/recipes/$L"
	C=(--corpus "$W/corpus")
	"$D4R" run "$L" "${C[@]}" --frame "$W/$k.frame" --runs 10 >"$T/run.out" 2>&1
	rc=$?
	if [ $first = 1 ] && grep -q 'no CUDA driver' "$T/run.out"; then
		skip "no CUDA driver"
	fi
	first=0
	cat "$T/run.out"
	[ $rc -eq 0 ] || fail "$L: run exited $rc"

	# the frame against the reference, within the stated tolerance
	python3 - "$W/$k.frame" "$W/corpus/$L.json" "$W/corpus" >"$T/ref.out" 2>&1 <<'PY' ||
import json, math, struct, sys
frame, desc, root = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
out, ref = desc["output"], desc["reference"]
tol = ref["tolerance"]
raw = open(frame, "rb").read()
if len(raw) != out["bytes"]:
    sys.exit("frame has %d bytes, the output %d" % (len(raw), out["bytes"]))
if out["dtype"] != "f16":
    sys.exit("output dtype %s: the checker reads f16" % out["dtype"])
got = struct.unpack("<%de" % (len(raw) // 2), raw)
rb = open(root + "/" + ref["f32"], "rb").read()
want = struct.unpack("<%df" % (len(rb) // 4), rb)
if len(got) != len(want):
    sys.exit("%d values in the frame, %d in the reference" % (len(got), len(want)))
bad = worst = 0
for g, w in zip(got, want):
    err = abs(g - w)
    if not math.isfinite(g) or err > tol["atol"] + tol["rtol"] * abs(w):
        bad += 1
    worst = max(worst, err if math.isfinite(err) else float("inf"))
distinct = len(set(got))
print("values %d, outside tolerance %d, max |frame - ref| %.3g, distinct %d, "
      "atol %g rtol %g" % (len(got), bad, worst, distinct, tol["atol"], tol["rtol"]))
sys.exit(1 if bad or distinct < 2 else 0)
PY
		{ cat "$T/ref.out"; fail "$L: the frame is not the reference within tolerance"; }
	cat "$T/ref.out"

	# the frame becomes the oracle
	sha=$(sha256sum "$W/$k.frame" | cut -d' ' -f1)
	cp "$W/$k.frame" "$W/corpus/$L.oracle.frame"
	python3 - "$W/recipes/$L/layer.json" "$L.oracle.frame" "$sha" <<'PY' || fail "$L: oracle"
import json, sys
p = sys.argv[1]; d = json.load(open(p))
d["oracle"] = {"path": sys.argv[2], "sha256": sys.argv[3]}
json.dump(d, open(p, "w"), indent=1)
PY

	# identity of every phase
	n=$("$D4R" phases "$W/corpus/$L.ptx" | sed -n '1s/.*: \([0-9]*\) phases.*/\1/p')
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "$L: no phases"
	mkdir -p "$W/r-$k"
	for p in $(seq 1 "$n"); do
		"$D4R" recipe new "$L" "${C[@]}" --phase "$p" --template identity \
			-o "$W/r-$k/id-$(printf %02d "$p").json" >/dev/null 2>"$T/gen.err" ||
			{ cat "$T/gen.err"; fail "$L: recipe new --phase $p"; }
	done
	"$D4R" check "$L" "${C[@]}" "$W/r-$k"/id-*.json --jobs "$JOBS" \
		--junit "$OUTD/triton-$k-identity.xml" >"$T/id.out" 2>"$T/id.err"
	rc=$?
	cat "$T/id.out" "$T/id.err"
	[ $rc -eq 0 ] || fail "$L: identity check exited $rc"
	ids=$(awk '$2 == "IDENTICAL"' "$T/id.out" | wc -l)
	[ "$ids" -eq $((n + 1)) ] || fail "$L: $ids IDENTICAL lines, expected $((n + 1)) ($n phases + the original)"

	# perturb: one phase (or the range that completes it) differs
	if [ "$refuse" = refuse ]; then
		# recipe new checks what it writes as recipe check does: refused, nothing written
		expect_rc 2 "$D4R" recipe new "$L" "${C[@]}" --phase 1 --template perturb -o "$W/r-$k/pt-01.json"
		expect_grep 'no wgmma.wait_group in the cut' "$T/err"
		[ ! -e "$W/r-$k/pt-01.json" ] || fail "$L: recipe new wrote a perturb recipe recipe check rejects"
	fi
	case $pcut in
	phase:*)
		"$D4R" recipe new "$L" "${C[@]}" --phase "${pcut#phase:}" --template perturb \
			-o "$W/r-$k/pt.json" >/dev/null 2>"$T/gen.err" ;;
	stmts:*)
		"$D4R" recipe new "$L" "${C[@]}" --stmts "${pcut#stmts:}" --template perturb \
			-o "$W/r-$k/pt.json" >/dev/null 2>"$T/gen.err" ;;
	esac || { cat "$T/gen.err"; fail "$L: recipe new perturb $pcut"; }
	"$D4R" check "$L" "${C[@]}" "$W/r-$k/pt.json" --junit "$OUTD/triton-$k-perturb.xml" \
		>"$T/pt.out" 2>"$T/pt.err"
	rc=$?
	cat "$T/pt.out" "$T/pt.err"
	[ $rc -eq 1 ] || fail "$L: perturb check exited $rc, expected 1 (DIFFERS)"
	awk '$2 == "DIFFERS"' "$T/pt.out" | grep -q . || fail "$L: perturb $pcut is not DIFFERS"
	printf '%-18s phases %-3s identity %s/%s IDENTICAL, perturb %s DIFFERS; %s\n' "$k" "$n" \
		"$((ids - 1))" "$n" "$pcut" "$(cat "$T/ref.out")" | tee -a "$summary"
done
exit 0
