#!/usr/bin/env bash
# t0300-capture: `capture -- PROGRAM` on the GPU, for three programs.
#   1. tests/gpu/capture-matmul.py, its Triton f16 matmul (sm_90): captured
#      with its PTX from Triton's cache; the layer replays IDENTICAL (capture
#      requires it); the identity splice of every phase is IDENTICAL (check)
#      and a perturb DIFFERS: the first cut the perturb template accepts of a
#      phase, the phase with its epilogue, or the phase up to the next
#      wgmma.wait_group (the K loop is unrolled, so such a cut exists)
#   2. the same program's torch.matmul (cuBLAS: cubin only): captured
#      replay-only, and it replays IDENTICAL
#   3. corpus/enc4/harness.cu built with nvcc: its enc4_frame_kernel launch
#      captured (textures and surfaces behind its parameters); the captured
#      frame (the RGBA buffer the launch wrote) equals the first 235,520
#      bytes of corpus/enc4/oracle.frame, the layer's RGBA output
# Every part runs even when one before it fails; each says what it saw in
# $D4R_GPU_OUT/capture.txt.
. "$D4R_TOP/tests/cli/lib.sh"
OUTD=${D4R_GPU_OUT:-$T}
JOBS=${D4R_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
command -v nvidia-smi >/dev/null 2>&1 || skip "no GPU (nvidia-smi)"
W=$T/w
mkdir -p "$W"
export TRITON_CACHE_DIR=$W/triton-cache
sum=$OUTD/capture.txt
: >"$sum"
bad=0
say() { echo "$*" | tee -a "$sum"; }
no() { say "FAIL: $*"; bad=1; }
show() { sed 's/^/    /' "$1"; }

if python3 -c 'import torch, triton; assert torch.cuda.is_available()' 2>"$T/py.err"; then
	cp "$TOP/tests/gpu/capture-matmul.py" "$W/prog.py"
	# --- 1. Triton --------------------------------------------------------------------
	t0=$SECONDS
	"$D4R" capture --kernel '^matmul_kernel$' -o "$W/tri" -- python3 "$W/prog.py" >"$T/tri.out" 2>&1
	rc=$?
	show "$T/tri.out"
	say "triton: capture exit $rc in $((SECONDS - t0)) s"
	L=$W/tri/matmul_kernel
	[ $rc -eq 0 ] || no "triton: capture exited $rc"
	grep -q 'replay: IDENTICAL' "$T/tri.out" || no "triton: the replay is not IDENTICAL"
	grep -q 'PTX from .*triton-cache' "$T/tri.out" || no "triton: the PTX did not come from Triton's cache"
	cp -r "$L" "$OUTD/capture-triton-layer" 2>/dev/null
	if [ -f "$L/module.ptx" ] && [ $rc -eq 0 ]; then
		C=(--corpus "$W/tri")
		n=$("$D4R" phases "$L/module.ptx" | sed -n '1s/.*: \([0-9]*\) phases.*/\1/p')
		say "triton: $n phases"
		[ -n "$n" ] && [ "$n" -gt 0 ] || no "triton: no phases"
		mkdir -p "$W/r"
		for p in $(seq 1 "${n:-0}"); do
			"$D4R" recipe new "$L" "${C[@]}" --phase "$p" --template identity \
				-o "$W/r/id-$(printf %02d "$p").json" >/dev/null 2>"$T/gen.err" ||
				{ show "$T/gen.err"; no "triton: recipe new --phase $p"; }
		done
		"$D4R" check "$L" "${C[@]}" "$W/r"/id-*.json --jobs "$JOBS" >"$T/id.out" 2>&1
		rc=$?
		show "$T/id.out"
		ids=$(awk '$2 == "IDENTICAL"' "$T/id.out" | wc -l)
		say "triton: identity of $n phases: check exit $rc, $ids IDENTICAL lines"
		[ $rc -eq 0 ] && [ "$ids" -eq $((n + 1)) ] || no "triton: identity not IDENTICAL for every phase"
		# a perturb where one can be placed: a phase, else a phase up to the
		# wgmma.wait_group that completes it (a cut whose accumulators no wait
		# inside it completes is refused)
		"$D4R" grep "$L/module.ptx" 'wgmma\.wait_group' | sed -n 's/^[^:]*:s\([0-9]*\):.*/\1/p' >"$T/waits"
		cands=()
		while read -r p range; do
			cands+=("--phase $p" "--phase $p --cut phase+epilogue")
			a=${range%%-*}; a=${a#s}
			for w in $(awk -v a="$a" '$1 > a' "$T/waits"); do
				cands+=("--stmts $a:$w")
			done
		done < <("$D4R" phases "$L/module.ptx" | awk '$1 ~ /^[0-9]+$/ { print $1, $2 }')
		placed=
		for c in "${cands[@]}"; do
			# shellcheck disable=SC2086
			"$D4R" recipe new "$L" "${C[@]}" $c --template perturb -o "$W/r/pt.json" \
				--force >/dev/null 2>&1 || continue
			"$D4R" recipe check "$W/r/pt.json" "${C[@]}" >"$T/rc.out" 2>&1 || continue
			placed=$c
			break
		done
		if [ -n "$placed" ]; then
			"$D4R" check "$L" "${C[@]}" "$W/r/pt.json" >"$T/pt.out" 2>&1
			rc=$?
			show "$T/pt.out"
			say "triton: perturb $placed: check exit $rc"
			[ $rc -eq 1 ] && awk '$2 == "DIFFERS"' "$T/pt.out" | grep -q . ||
				no "triton: the perturb $placed is not DIFFERS"
		else
			show "$T/rc.out"
			no "triton: no perturb could be placed (tried ${cands[*]})"
		fi
	fi
	# --- 2. cuBLAS ----------------------------------------------------------------------
	t0=$SECONDS
	"$D4R" capture --kernel 'nvjet|gemm|Gemm|xmma|cutlass' -o "$W/blas" -- python3 "$W/prog.py" \
		>"$T/blas.out" 2>&1
	rc=$?
	show "$T/blas.out"
	say "cublas: capture exit $rc in $((SECONDS - t0)) s"
	[ $rc -eq 0 ] || no "cublas: capture exited $rc"
	grep -q 'replay-only' "$T/blas.out" || no "cublas: not replay-only"
	grep -q 'replay: IDENTICAL' "$T/blas.out" || no "cublas: the replay is not IDENTICAL"
	for c in "$W/blas"/*/capture.json; do [ -f "$c" ] && cp "$c" "$OUTD/capture-cublas.json"; done
else
	show "$T/py.err"
	no "no PyTorch with CUDA, or no Triton: parts 1 and 2 not run"
fi

# --- 3. enc4's harness ----------------------------------------------------------------
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [ -x "$NVCC" ]; then
	"$NVCC" -O2 -o "$W/harness" "$TOP/corpus/enc4/harness.cu" -lcuda >"$T/nvcc.out" 2>&1 ||
		{ show "$T/nvcc.out"; no "enc4: nvcc failed"; }
	t0=$SECONDS
	(cd "$W" && "$D4R" capture --kernel '^enc4_frame_kernel$' -o "$W/enc4" -- "$W/harness" \
		"$TOP/corpus/enc4/weights.bin" "$TOP/corpus/enc4/enc4.ptx") >"$T/enc4.out" 2>&1
	rc=$?
	show "$T/enc4.out"
	say "enc4: capture exit $rc in $((SECONDS - t0)) s"
	[ $rc -eq 0 ] || no "enc4: capture exited $rc"
	f=$W/enc4/enc4_frame_kernel/oracle.frame
	if [ -f "$f" ]; then
		head -c 235520 "$TOP/corpus/enc4/oracle.frame" >"$T/rgba.want"
		if cmp "$f" "$T/rgba.want"; then
			say "enc4: the captured frame equals oracle.frame's RGBA output (235520 bytes)"
		else
			no "enc4: the captured frame ($(stat -c %s "$f") bytes) differs from oracle.frame's RGBA output"
		fi
	else
		no "enc4: no captured frame"
	fi
	cp "$W/enc4/enc4_frame_kernel/capture.json" "$OUTD/capture-enc4.json" 2>/dev/null
else
	no "enc4: no nvcc"
fi
exit $bad
