#!/usr/bin/env bash
# Native wgmma phases on the GPU (tests/fixtures/foreign/triton, the three
# sm_90 kernels): for every phase, `recipe new --native mma` (each
# wgmma.mma_async written again from its facts, the same descriptors) and,
# for the two f16 kernels, `--native mma_sync` (the exact mma.sync form:
# m16n8k16 per warp through the descriptors' layout and swizzle); each
# recipe IDENTICAL to the oracle (`check`), then each form on the whole
# layer in one module (`--phases 1-N [--variant mma_sync]`, the main job:
# IDENTICAL, and the two kernel times measured alternating in one process,
# 100 runs).  The fp8 kernel has the mma form only (mma_sync is exact for
# f16 and refuses e4m3; asserted on the CPU by tests/cli/t1211).
#
# The oracle is each kernel's own frame, as in t0200 (which also checks the
# frame against the float64 reference).
#
# Expected output, the summary ($D4R_GPU_OUT/wgmma-native.txt), exactly
# these lines (the times go to wgmma-native-times.txt, not asserted):
#   matmul-f16-sm90 mma: 8/8 phases IDENTICAL, layer IDENTICAL
#   matmul-f16-sm90 mma_sync: 8/8 phases IDENTICAL, layer IDENTICAL
#   attn-f16-sm90 mma: 8/8 phases IDENTICAL, layer IDENTICAL
#   attn-f16-sm90 mma_sync: 8/8 phases IDENTICAL, layer IDENTICAL
#   matmul-fp8-sm90 mma: 4/4 phases IDENTICAL, layer IDENTICAL
# The test goes on after a kernel that differs (so that every line is
# seen) and fails at the end.
. "$D4R_TOP/tests/cli/lib.sh"
FIX="$TOP/tests/fixtures/foreign/triton"
OUTD=${D4R_GPU_OUT:-$T}
JOBS=${D4R_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
W="$T/w"
mkdir -p "$W/recipes" "$W/ptx"
cp -r "$FIX" "$W/corpus"
cd "$W" || exit 1
C=(--corpus "$W/corpus")
summary="$OUTD/wgmma-native.txt"
times="$OUTD/wgmma-native-times.txt"
: >"$summary"
: >"$times"
bad=0
first=1
for row in "matmul-f16-sm90 mma mma_sync" "attn-f16-sm90 mma mma_sync" "matmul-fp8-sm90 mma"; do
	read -r k forms <<<"$row"
	L=triton-$k
	cp -r "$W/corpus/$L" "$W/recipes/$L"
	"$D4R" run "$L" "${C[@]}" --frame "$W/$k.frame" >"$T/run.out" 2>&1
	rc=$?
	if [ $first = 1 ] && grep -q 'no CUDA driver' "$T/run.out"; then
		skip "no CUDA driver"
	fi
	first=0
	cat "$T/run.out"
	[ $rc -eq 0 ] || fail "$L: run exited $rc"
	sha=$(sha256sum "$W/$k.frame" | cut -d' ' -f1)
	cp "$W/$k.frame" "$W/corpus/$L.oracle.frame"
	python3 - "$W/recipes/$L/layer.json" "$L.oracle.frame" "$sha" <<'PY' || fail "$L: oracle"
import json, sys
p = sys.argv[1]; d = json.load(open(p))
d["oracle"] = {"path": sys.argv[2], "sha256": sys.argv[3]}
json.dump(d, open(p, "w"), indent=1)
PY
	"$D4R" phases "$W/corpus/$L.ptx" >"$T/phases" || fail "$L: phases"
	n=$(sed -n '1s/.*: \([0-9]*\) phases.*/\1/p' "$T/phases")
	for form in $forms; do
		recs=()
		for p in $(seq 1 "$n"); do
			"$D4R" recipe new "$L" "${C[@]}" --phase "$p" --native "$form" \
				>/dev/null 2>"$T/gen.err" || { cat "$T/gen.err"; fail "$L: recipe new --phase $p --native $form"; }
			if [ "$form" = mma ]; then
				recs+=("recipes/$L/phase-$(printf %02d "$p").json")
			else
				recs+=("recipes/$L/phase-$(printf %02d "$p")-$form.json")
			fi
		done
		"$D4R" check "$L" "${C[@]}" "${recs[@]}" --runs 20 --jobs "$JOBS" \
			--junit "$OUTD/wgmma-$k-$form.xml" >"$T/ck.out" 2>"$T/ck.err"
		rc=$?
		cat "$T/ck.out" "$T/ck.err"
		cp "$T/ck.out" "$OUTD/wgmma-$k-$form-check.txt"
		# the original's own line is IDENTICAL too: the recipes' are the rest
		nid=$(awk '$2 == "IDENTICAL"' "$T/ck.out" | wc -l)
		nid=$((nid - 1))
		[ $rc -eq 0 ] || { echo "$L $form: check exited $rc"; bad=1; }
		variant=()
		[ "$form" = mma ] || variant=(--variant "$form")
		"$D4R" "$L" "${C[@]}" --phases "1-$n" "${variant[@]}" --runs 100 >"$T/job.out" 2>&1
		jrc=$?
		cat "$T/job.out"
		cp "$T/job.out" "$OUTD/wgmma-$k-$form-layer.txt"
		if [ $jrc -eq 0 ] && head -1 "$T/job.out" | grep -q ': IDENTICAL'; then
			lv=IDENTICAL
		elif [ $jrc -eq 1 ]; then
			lv=DIFFERS
			bad=1
		else
			lv="ERROR (exit $jrc)"
			bad=1
		fi
		[ "$nid" -eq "$n" ] || bad=1
		echo "$k $form: $nid/$n phases IDENTICAL, layer $lv" | tee -a "$summary"
		{
			echo "$k $form (--phases 1-$n${variant[*]:+ ${variant[*]}}, 100 runs):"
			grep -E '^  (original|spliced|ratio|compiled) |^ {12}spliced ' "$T/job.out"
		} >>"$times"
	done
done
cat "$times"
cat >"$T/want" <<'EOF'
matmul-f16-sm90 mma: 8/8 phases IDENTICAL, layer IDENTICAL
matmul-f16-sm90 mma_sync: 8/8 phases IDENTICAL, layer IDENTICAL
attn-f16-sm90 mma: 8/8 phases IDENTICAL, layer IDENTICAL
attn-f16-sm90 mma_sync: 8/8 phases IDENTICAL, layer IDENTICAL
matmul-fp8-sm90 mma: 4/4 phases IDENTICAL, layer IDENTICAL
EOF
cmp -s "$T/want" "$summary" || { diff "$T/want" "$summary"; fail "the summary is not the expected one"; }
[ $bad -eq 0 ] || fail "a native wgmma recipe is not IDENTICAL"
exit 0
