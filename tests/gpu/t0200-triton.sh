#!/usr/bin/env bash
# Triton kernels through manifests (tests/fixtures/foreign/triton): each of
# the six kernels (matmul and attention, f16 and fp8, code for sm_80, sm_89
# and sm_90) is launched with its file-initialised inputs; its frame is
# checked against the float64 reference computed by torch when the fixtures
# were generated (ref.f32.bin), elementwise within the tolerance its NAME.json
# states, by a checker here that does not use d4r-splice; that frame becomes
# the oracle; the identity splice of every phase is IDENTICAL; and the
# perturb of every phase is DIFFERS.
#
# The wgmma phases of the sm_90 kernels: perturb adds 1.0 to an accumulator
# of a wgmma.mma_async only after a wgmma.wait_group that completes its
# group on every path (the groups in flight, src/ana/groups.c), so a phase
# is perturbed through the cut `recipe new --phase N --through-wait` takes:
# from the phase through that wait, holding whole the loops between.  In
# the two matmuls the groups are committed in the loop body and completed
# only after the back edge (the next iteration's wait_group 1 leaves the
# newest group pending), so every phase's cut is the loop cut from the
# loop's first statement through the wait_group 0 after it:
#   matmul-f16-sm90  s303..s423 (header s303, back edge s406, wait s423)
#   matmul-fp8-sm90  s274..s357 (header s274, back edge s345, wait s357)
# and perturb adds its 1.0 after that wait_group 0.  attn-f16-sm90: phases
# 1-4 (in the loop body) reach the wait_group 0 at s276 in the body (cuts
# sF..s276), phases 5-8 the wait_group 0 after the loop at s798 (cut
# s244..s798, the loop s244..s797 whole); its phase 1 alone is refused
# (exit 2, the reason asserted).  For the two matmuls the refusal of a
# range that cuts the loop in two (from the first mma through the wait
# after the loop: the loop's header left out) is asserted as well.  Every
# cut's module is checked offline (ptxas, sm_90a) by tests/cli/t1970.
#
# What a pass prints, one summary line per kernel in $D4R_GPU_OUT/triton.txt
# (the figures after ';' are the frame against the reference; these are the
# ones the H200 gave on 2026-12-02, 02:30 UTC, for the frames, which no
# splice changes):
#   attn-f16-sm80      phases 17  identity 17/17 IDENTICAL, perturb 17/17 DIFFERS (--phase N); values 32768, outside tolerance 0, max |frame - ref| 6.64e-05, distinct 10536, atol 0.01 rtol 0.01
#   attn-f16-sm90      phases 8   identity 8/8 IDENTICAL, perturb 8/8 DIFFERS (--phase N --through-wait); values 32768, outside tolerance 0, max |frame - ref| 6.64e-05, distinct 10536, atol 0.01 rtol 0.01
#   matmul-f16-sm80    phases 1   identity 1/1 IDENTICAL, perturb 1/1 DIFFERS (--phase N); values 65536, outside tolerance 0, max |frame - ref| 0.00776, distinct 13388, atol 0.02 rtol 0.01
#   matmul-f16-sm90    phases 8   identity 8/8 IDENTICAL, perturb 8/8 DIFFERS (--phase N --through-wait); values 65536, outside tolerance 0, max |frame - ref| 0.00776, distinct 13388, atol 0.02 rtol 0.01
#   matmul-fp8-sm89    phases 1   identity 1/1 IDENTICAL, perturb 1/1 DIFFERS (--phase N); values 65536, outside tolerance 0, max |frame - ref| 0.00781, distinct 13186, atol 0.02 rtol 0.01
#   matmul-fp8-sm90    phases 4   identity 4/4 IDENTICAL, perturb 4/4 DIFFERS (--phase N --through-wait); values 65536, outside tolerance 0, max |frame - ref| 0.0218, distinct 12964, atol 0.02 rtol 0.01
# and, in the log, "matmul-f16-sm90: s321..s423 (the loop's header left
# out) refused as it must be (exit 2, the loop named)", the same for
# matmul-fp8-sm90 with s292..s357, and "attn-f16-sm90: the perturb of phase
# 1 alone, refused as it must be (exit 2, the reason above)".  This version
# has not run on the GPU yet: the run of 2026-12-02 was of the version
# before it (refusals asserted for the two sm_90 matmuls), which passed.
# A pass exits 0 (77 without a CUDA driver).
. "$D4R_TOP/tests/cli/lib.sh"
FIX="$TOP/tests/fixtures/foreign/triton"
OUTD=${D4R_GPU_OUT:-$T}
JOBS=${D4R_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
W="$T/w"
mkdir -p "$W/recipes"
cp -r "$FIX" "$W/corpus"
cd "$W" || exit 1

# kernel, then how each phase is perturbed:
#   phase          recipe new --phase N --template perturb
#   wait           recipe new --phase N --through-wait --template perturb
# then, optionally:
#   refuse:N       the perturb of phase N alone is refused (no completing
#                  wait in it)
#   loop:H:E:W     every phase's through-wait cut is sH..sW: the loop's
#                  header sH (its first statement), back edge sE, and the
#                  wgmma.wait_group 0 sW after it; the cut sM..sW from the
#                  first mma is refused, naming the header and back edge
kernels=(
	"attn-f16-sm80    phase"
	"attn-f16-sm90    wait     refuse:1"
	"matmul-f16-sm80  phase"
	"matmul-f16-sm90  wait     loop:303:406:423"
	"matmul-fp8-sm89  phase"
	"matmul-fp8-sm90  wait     loop:274:345:357"
)
# The reason perturb gives, word for word (src/splice/splice.c), for a
# wgmma.mma_async at sM with no completing wait in the cut sA..sB.
wgmma_reason() {
	printf 'perturb: s%s is a wgmma.mma_async, whose accumulators may not be touched until a wgmma.wait_group completes it (undefined in the PTX ISA; ptxas injects waits), and no wgmma.wait_group in the cut s%s..s%s does: cut through the wait to perturb it (recipe new --phase N --through-wait, or a statement range)' "$1" "$2" "$3"
}
# refused OUT REASON recipe-new-args... : `recipe new` checks what it writes
# as `recipe check` does, so a cut the tool cannot splice or perturb is
# refused there: exit 2, the reason on a line of its own, and no recipe
# written at OUT
refused() {
	local out=$1 reason=$2
	shift 2
	"$D4R" recipe new "$L" "${C[@]}" "$@" -o "$out" >"$T/gen.out" 2>"$T/gen.err"
	local rc=$?
	cat "$T/gen.err"
	[ $rc -eq 2 ] || fail "$L: recipe new $* exited $rc, expected 2 (refused)"
	grep -qxF "  $reason" "$T/gen.err" || fail "$L: recipe new $*: not refused with the reason expected: $reason"
	[ ! -e "$out" ] || fail "$L: recipe new $* wrote $out although it refused the cut"
}
first=1
summary="$OUTD/triton.txt"
: >"$summary"
for row in "${kernels[@]}"; do
	read -r k pcut extra <<<"$row"
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
	"$D4R" phases "$W/corpus/$L.ptx" >"$T/phases" || fail "$L: phases"
	n=$(sed -n '1s/.*: \([0-9]*\) phases.*/\1/p' "$T/phases")
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

	# a refused perturb of phase N alone (attn-f16-sm90: its first group is
	# completed only at s276, after phase 4)
	if [ -n "$extra" ] && [ "${extra%%:*}" = refuse ]; then
		p=${extra#refuse:}
		m=$(awk -v p="$p" '$1 == p { sub(/^s/, "", $2); sub(/-.*/, "", $2); print $2 }' "$T/phases")
		refused "$W/r-$k/pt-$p.json" "$(wgmma_reason "$m" "$m" "$m")" --phase "$p" --template perturb
		echo "$k: the perturb of phase $p alone, refused as it must be (exit 2, the reason above)"
	fi

	# the perturb of every phase
	how="--phase N"
	[ "$pcut" = wait ] && how="--phase N --through-wait"
	for p in $(seq 1 "$n"); do
		args=(--phase "$p" --template perturb)
		[ "$pcut" = wait ] && args+=(--through-wait)
		"$D4R" recipe new "$L" "${C[@]}" "${args[@]}" \
			-o "$W/r-$k/pt-$(printf %02d "$p").json" >/dev/null 2>"$T/gen.err" ||
			{ cat "$T/gen.err"; fail "$L: recipe new ${args[*]}"; }
		cat "$T/gen.err"
		if [ "${extra%%:*}" = loop ]; then
			IFS=: read -r _ head edge wait <<<"$extra"
			grep -q "^through: .*: cut s$head\.\.s$wait$" "$T/gen.err" ||
				fail "$L: phase $p: its through-wait cut is not the loop cut s$head..s$wait"
		fi
	done
	if [ "${extra%%:*}" = loop ]; then
		IFS=: read -r _ head edge wait <<<"$extra"
		"$D4R" show "$W/corpus/$L.ptx" --stmts "$edge:$edge" | grep -Eq "^> s$edge .* bra " ||
			fail "$L: s$edge is not the loop's back edge"
		"$D4R" show "$W/corpus/$L.ptx" --stmts "$wait:$wait" |
			grep -Eq "^> s$wait .* wgmma\.wait_group\.sync\.aligned 0;" ||
			fail "$L: s$wait is not the wgmma.wait_group 0 after the loop"
		m1=$(awk '$1 == 1 { sub(/^s/, "", $2); sub(/-.*/, "", $2); print $2 }' "$T/phases")
		refused "$W/r-$k/split.json" \
			"$W/r-$k/split.json: cut.stmts: the cut s$m1..s$wait cuts a loop in two: it holds s$m1 of the loop s$head..s$edge but not s$head" \
			--stmts "$m1:$wait" --template perturb
		echo "$k: s$m1..s$wait (the loop's header left out) refused as it must be (exit 2, the loop named)"
	fi
	"$D4R" check "$L" "${C[@]}" "$W/r-$k"/pt-[0-9]*.json --jobs "$JOBS" \
		--junit "$OUTD/triton-$k-perturb.xml" >"$T/pt.out" 2>"$T/pt.err"
	rc=$?
	cat "$T/pt.out" "$T/pt.err"
	[ $rc -eq 1 ] || fail "$L: perturb check exited $rc, expected 1 (DIFFERS)"
	diffs=$(awk '$2 == "DIFFERS"' "$T/pt.out" | wc -l)
	[ "$diffs" -eq "$n" ] || fail "$L: $diffs DIFFERS lines, expected $n (one per phase)"
	printf '%-18s phases %-3s identity %s/%s IDENTICAL, perturb %s/%s DIFFERS (%s); %s\n' "$k" "$n" \
		"$((ids - 1))" "$n" "$diffs" "$n" "$how" "$(cat "$T/ref.out")" | tee -a "$summary"
done
exit 0
