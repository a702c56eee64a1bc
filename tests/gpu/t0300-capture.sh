#!/usr/bin/env bash
# t0300-capture: `capture -- PROGRAM` on the GPU, for five programs.
#   1. tests/gpu/capture-matmul.py, its Triton f16 matmul (sm_90): captured
#      with its PTX from Triton's cache; the layer replays IDENTICAL (capture
#      requires it); the identity splice of every phase is IDENTICAL (check)
#      and a perturb DIFFERS: the first cut the perturb template accepts of a
#      phase, the phase with its epilogue, or the phase up to the next
#      wgmma.wait_group (the K loop is unrolled, so such a cut exists)
#   2. the same program's torch.matmul (cuBLAS: cubin only): captured
#      replay-only, and it replays IDENTICAL
#   3. corpus/enc4/harness.cu built with nvcc:
#      a. its enc4_frame_kernel launch captured (textures and surfaces
#         behind its parameters); the captured frame (the RGBA buffer the
#         launch wrote) equals the first 235,520 bytes of
#         corpus/enc4/oracle.frame, the layer's RGBA output
#      b. its cuda_dldn_engine_swin_enc4_kernel launch captured with
#         `--ptx-from corpus/enc4`: the layer has enc4.ptx as its module, so
#         it is spliceable: `phases` finds the 62 phases, and the identity
#         splice of phase 8 and of phase 61 is IDENTICAL (check); what the
#         launch wrote into the three surfaces and the stats buffer equals
#         those parts of corpus/enc4/oracle.frame (the frame kernel after it
#         only reads them)
#   4. tests/gpu/capture-table.c, a kernel that reaches its buffers only
#      through a table of device pointers (capture-table.cu, nvcc -ptx):
#      capture follows the table, asks for the recorded addresses, and the
#      replay at them (cuMemAddressReserve, cuMemCreate, cuMemMap) is
#      IDENTICAL; the oracle is the kernel's rule (dst = 2 src + row)
#      computed here, and a second `run` of the layer in a new process gets
#      the addresses again; a copy asking for an address no driver gives
#      is refused by `run`, naming the buffer; and the same program with its
#      launch captured into a CUDA graph (cuStreamBeginCapture, then
#      cuGraphLaunch twice): nothing is captured, and capture says why
#   5. tests/gpu/capture-coop.c, a kernel with a grid-wide barrier
#      (capture-coop.cu: cooperative groups' grid.sync(), which traps in an
#      ordinary launch) launched with cuLaunchCooperativeKernel: the layer
#      replays it as a cooperative launch (cuLaunchKernelEx with the
#      cooperative attribute) IDENTICAL; the oracle is the block sums and
#      the total, computed here
# The lines the parts must print (TMP is the test's folder, TOP the tree):
#   3b: captured cuda_dldn_engine_swin_enc4_kernel launch 1 (cuLaunchKernel):
#         TMP/w/enc4k/cuda_dldn_engine_swin_enc4_kernel, 3 buffers,
#         N-byte frame, PTX from TOP/corpus/enc4/enc4.ptx
#       (one line; N the bytes of what the launch wrote, its sum checked
#       against capture.json)
#         replay: IDENTICAL to the program's output (oracle SHA256)
#       enc4 kernel: frame N bytes, compared with oracle.frame: [small]
#         surf0 surf1 surf2, 0 differ
#       cuda_dldn_engine_swin_enc4_kernel: 62 phases, 1386 mma statements, ...
#       id-08.json ... IDENTICAL, id-61.json ... IDENTICAL,
#       3 identical, 0 differ, 0 errors
#   4:  d4r-splice: capture: address-space randomisation off for PROGRAM (its
#         device addresses high, where a replay can have them)
#       capture-table: 1024 values right
#       captured table_scale launch 1 (cuLaunchKernel): TMP/w/tab/table_scale,
#         6 buffers, 4096-byte frame, PTX from TMP/w/tab-ptx/capture-table.ptx
#         8 pointers inside the buffers: the layer replays at the recorded addresses
#         replay: IDENTICAL to the program's output (oracle SHA256)
#       (then `run`, six times, each:)   oracle: matches
#       (`run` of a copy whose a0 must be at 0xfff0000000000000: exit 2)
#         buffer 'a0' must be at 0xfff0000000000000 (a captured layer whose
#         buffers point into each other): no device address is that high
#   4, graph (exit 2):
#       capture-table: 1024 values right (through a CUDA graph, launched twice)
#       d4r-splice: capture: not captured: table_scale #1: launched into a CUDA
#         graph being captured (it does not run now; kernels inside graphs are
#         not captured)
#       d4r-splice: capture: PROGRAM launched CUDA graphs (cuGraphLaunch): the
#         kernels inside them are not seen, and not captured
#       d4r-splice: capture: nothing captured (1 launch refused, said above)
#   5:  capture-coop: total 97831 in every block
#       captured grid_total launch 1 (cuLaunchCooperativeKernel):
#         TMP/w/coop/grid_total, 3 buffers, 2048-byte frame, PTX from
#         TMP/w/coop-ptx/capture-coop.ptx
#         launch attributes, replayed: {"cooperative": 1}
#         replay: IDENTICAL to the program's output (oracle SHA256)
#     A driver that will not map memory at the recorded address makes part 4
#     print "replay: ERROR table_scale: ... buffer 'a0' must be at 0x...
#     (a captured layer whose buffers point into each other): ..." instead.
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
	# --- 3b. enc4's own kernel, its PTX from --ptx-from: a spliceable layer ------------
	t0=$SECONDS
	(cd "$W" && "$D4R" capture --kernel '^cuda_dldn_engine_swin_enc4_kernel$' \
		--ptx-from "$TOP/corpus/enc4" -o "$W/enc4k" -- "$W/harness" \
		"$TOP/corpus/enc4/weights.bin" "$TOP/corpus/enc4/enc4.ptx") >"$T/enc4k.out" 2>&1
	rc=$?
	show "$T/enc4k.out"
	say "enc4 kernel: capture exit $rc in $((SECONDS - t0)) s"
	K=$W/enc4k/cuda_dldn_engine_swin_enc4_kernel
	[ $rc -eq 0 ] || no "enc4 kernel: capture exited $rc"
	grep -Eq "^captured cuda_dldn_engine_swin_enc4_kernel launch 1 \(cuLaunchKernel\): .*/enc4k/cuda_dldn_engine_swin_enc4_kernel, 3 buffers, [0-9]+-byte frame, PTX from $TOP/corpus/enc4/enc4.ptx\$" "$T/enc4k.out" ||
		no "enc4 kernel: not captured with its PTX from --ptx-from corpus/enc4"
	grep -Eq '^  replay: IDENTICAL to the program.s output \(oracle [0-9a-f]{64}\)$' "$T/enc4k.out" ||
		no "enc4 kernel: the replay is not IDENTICAL"
	cp "$K/capture.json" "$OUTD/capture-enc4-kernel.json" 2>/dev/null
	if [ -f "$K/module.ptx" ] && [ -f "$K/oracle.frame" ]; then
		cmp -s "$K/module.ptx" "$TOP/corpus/enc4/enc4.ptx" || no "enc4 kernel: module.ptx is not enc4.ptx"
		# the parts of the captured frame that oracle.frame also holds
		python3 - "$K" "$TOP/corpus/enc4/oracle.frame" >"$T/overlap.out" 2>&1 <<'PY'
import json, sys
cap = json.load(open(sys.argv[1] + "/capture.json"))
frame = open(sys.argv[1] + "/oracle.frame", "rb").read()
oracle = open(sys.argv[2], "rb").read()
# oracle.frame: rgba 235520, surf0 29440, surf1 29440, surf2 7360, small 39424
parts = {"surf0": (235520, 29440), "surf1": (264960, 29440), "surf2": (294400, 7360),
         "small": (301760, 39424)}
at, seen, bad = 0, [], 0
sizes = {b["buffer"]: b["size"] for b in cap["buffers"]}
for b in cap["buffers"]:
    if b["written"]:
        name = "small" if b["size"] == 39424 else None
        if name:
            o, n = parts[name]
            seen.append(name)
            bad += frame[at:at + n] != oracle[o:o + n]
        at += b["size"]
# arrays: t0 the texture, t1-t3 the surfaces in parameter order (surf0-2)
for a in cap["arrays"]:
    if a["written"]:
        name = "surf%d" % (int(a["array"][1:]) - 1)
        o, n = parts[name]
        seen.append(name)
        bad += frame[at:at + n] != oracle[o:o + n]
        at += n
print("enc4 kernel: frame %d bytes, compared with oracle.frame: %s, %d differ"
      % (len(frame), " ".join(seen), bad))
sys.exit(0 if at == len(frame) and not bad and {"surf0", "surf1", "surf2"} <= set(seen) else 1)
PY
		r=$?
		show "$T/overlap.out"
		[ $r -eq 0 ] || no "enc4 kernel: the captured frame does not equal oracle.frame where they overlap"
		"$D4R" phases "$K/module.ptx" >"$T/k.phases" 2>&1
		sed -n 1p "$T/k.phases" | tee -a "$sum"
		grep -q '^cuda_dldn_engine_swin_enc4_kernel: 62 phases, 1386 mma statements' "$T/k.phases" ||
			no "enc4 kernel: phases of the captured layer is not enc4's 62"
		mkdir -p "$W/rk"
		for p in 8 61; do
			"$D4R" recipe new "$K" --corpus "$W/enc4k" --phase $p --template identity \
				-o "$W/rk/id-$(printf %02d $p).json" >/dev/null 2>"$T/gen.err" ||
				{ show "$T/gen.err"; no "enc4 kernel: recipe new --phase $p"; }
		done
		"$D4R" check "$K" --corpus "$W/enc4k" "$W/rk"/id-*.json --jobs "$JOBS" >"$T/kid.out" 2>&1
		rc=$?
		show "$T/kid.out"
		ids=$(awk '$2 == "IDENTICAL"' "$T/kid.out" | wc -l)
		say "enc4 kernel: identity of phases 8 and 61: check exit $rc, $ids IDENTICAL lines"
		[ $rc -eq 0 ] && [ "$ids" -eq 3 ] || no "enc4 kernel: the identity splices are not IDENTICAL"
	fi
else
	no "enc4: no nvcc"
fi

# --- 4. pointers inside a buffer: a replay at the recorded addresses --------------------
if [ -x "$NVCC" ]; then
	mkdir -p "$W/tab-ptx"
	"$NVCC" -ptx -arch=sm_90 -o "$W/tab-ptx/capture-table.ptx" "$TOP/tests/gpu/capture-table.cu" \
		>"$T/nvcc-tab.out" 2>&1 &&
		"$NVCC" -o "$W/capture-table" "$TOP/tests/gpu/capture-table.c" -lcuda >>"$T/nvcc-tab.out" 2>&1 ||
		{ show "$T/nvcc-tab.out"; no "table: nvcc failed"; }
	t0=$SECONDS
	"$D4R" capture --ptx-from "$W/tab-ptx" -o "$W/tab" -- "$W/capture-table" \
		"$W/tab-ptx/capture-table.ptx" >"$T/tab.out" 2>&1
	rc=$?
	show "$T/tab.out"
	say "table: capture exit $rc in $((SECONDS - t0)) s"
	[ $rc -eq 0 ] || no "table: capture exited $rc"
	grep -q '^d4r-splice: capture: address-space randomisation off for PROGRAM (its device addresses high, where a replay can have them)$' "$T/tab.out" ||
		no "table: capture did not run PROGRAM with address-space randomisation off"
	for want in '^capture-table: 1024 values right$' \
		"^captured table_scale launch 1 \\(cuLaunchKernel\\): $W/tab/table_scale, 6 buffers, 4096-byte frame, PTX from $W/tab-ptx/capture-table.ptx\$" \
		'^  8 pointers inside the buffers: the layer replays at the recorded addresses$' \
		'^  replay: IDENTICAL to the program.s output \(oracle [0-9a-f]{64}\)$'; do
		grep -Eq "$want" "$T/tab.out" || no "table: no line '$want'"
	done
	B=$W/tab/table_scale
	cp "$B/layer.json" "$OUTD/capture-table-layer.json" 2>/dev/null
	[ "$(grep -c '"address": "0x' "$B/layer.json" 2>/dev/null)" = 6 ] ||
		no "table: not every buffer of the layer has its recorded address"
	python3 -c 'import struct, sys; open(sys.argv[1], "wb").write(b"".join(struct.pack("<f", 2.0 * (256 * r + c) + r) for r in range(4) for c in range(256)))' "$T/tab.want"
	if cmp -s "$B/oracle.frame" "$T/tab.want"; then
		say "table: the oracle is the kernel's rule (4096 bytes)"
	else
		no "table: the oracle is not dst = 2 src + row"
	fi
	# each run a process of its own, its libraries and the driver's start
	# where chance puts them: every one must have the recorded addresses
	# (one whose own stack lies in the chunks is refused saying so: allowed
	# once)
	stack=0
	for i in 1 2 3 4 5 6; do
		"$D4R" run "$B" --corpus "$W/tab" >"$T/tabrun.out" 2>&1
		rc=$?
		[ $i -gt 1 ] || show "$T/tabrun.out"
		say "table: run $i: exit $rc"
		if [ $rc -eq 2 ] && [ $stack -eq 0 ] && grep -q 'holds \[stack\] at' "$T/tabrun.out"; then
			stack=1
			show "$T/tabrun.out"
			continue
		fi
		[ $rc -eq 0 ] && grep -q '^  oracle: matches$' "$T/tabrun.out" ||
			{ show "$T/tabrun.out"; no "table: run $i at the recorded addresses does not match the oracle"; }
	done
	# an address the driver cannot give (past the 57 bits of a virtual
	# address): run says so, naming the buffer
	rm -rf "$W/tabbad" && cp -r "$W/tab" "$W/tabbad"
	sed -i '0,/"address": "0x[0-9a-f]*"/s//"address": "0xfff0000000000000"/' \
		"$W/tabbad/table_scale/layer.json" 2>/dev/null
	"$D4R" run "$W/tabbad/table_scale" --corpus "$W/tabbad" >"$T/tabbad.out" 2>&1
	rc=$?
	show "$T/tabbad.out"
	say "table: run with an address that cannot be had: exit $rc"
	[ $rc -eq 2 ] && grep -q "buffer 'a0' must be at 0xfff0000000000000 (a captured layer whose buffers point into each other): " "$T/tabbad.out" ||
		no "table: run does not say that buffer a0 cannot be at 0xfff0000000000000"
	# the launch inside a CUDA graph: refused, and the graph launches said once
	"$D4R" capture --ptx-from "$W/tab-ptx" -o "$W/tabg" -- "$W/capture-table" \
		"$W/tab-ptx/capture-table.ptx" graph >"$T/tabg.out" 2>&1
	rc=$?
	show "$T/tabg.out"
	say "table in a graph: capture exit $rc"
	[ $rc -eq 2 ] || no "table in a graph: capture exited $rc, not 2"
	for want in '^capture-table: 1024 values right \(through a CUDA graph, launched twice\)$' \
		'^d4r-splice: capture: not captured: table_scale #1: launched into a CUDA graph being captured \(it does not run now; kernels inside graphs are not captured\)$' \
		'^d4r-splice: capture: PROGRAM launched CUDA graphs \(cuGraphLaunch\): the kernels inside them are not seen, and not captured$' \
		'^d4r-splice: capture: nothing captured \(1 launch refused, said above\)$'; do
		grep -Eq "$want" "$T/tabg.out" || no "table in a graph: no line '$want'"
	done
	[ ! -e "$W/tabg/table_scale" ] || no "table in a graph: a layer was written"
else
	no "table: no nvcc"
fi

# --- 5. a cooperative launch: replayed as one --------------------------------------------
if [ -x "$NVCC" ]; then
	mkdir -p "$W/coop-ptx"
	"$NVCC" -ptx -arch=sm_90 -o "$W/coop-ptx/capture-coop.ptx" "$TOP/tests/gpu/capture-coop.cu" \
		>"$T/nvcc-coop.out" 2>&1 &&
		"$NVCC" -o "$W/capture-coop" "$TOP/tests/gpu/capture-coop.c" -lcuda >>"$T/nvcc-coop.out" 2>&1 ||
		{ show "$T/nvcc-coop.out"; no "coop: nvcc failed"; }
	t0=$SECONDS
	"$D4R" capture --ptx-from "$W/coop-ptx" -o "$W/coop" -- "$W/capture-coop" \
		"$W/coop-ptx/capture-coop.ptx" >"$T/coop.out" 2>&1
	rc=$?
	show "$T/coop.out"
	say "coop: capture exit $rc in $((SECONDS - t0)) s"
	[ $rc -eq 0 ] || no "coop: capture exited $rc"
	for want in '^capture-coop: total 97831 in every block$' \
		"^captured grid_total launch 1 \\(cuLaunchCooperativeKernel\\): $W/coop/grid_total, 3 buffers, 2048-byte frame, PTX from $W/coop-ptx/capture-coop.ptx\$" \
		'^  launch attributes, replayed: \{"cooperative": 1\}$' \
		'^  replay: IDENTICAL to the program.s output \(oracle [0-9a-f]{64}\)$'; do
		grep -Eq "$want" "$T/coop.out" || no "coop: no line '$want'"
	done
	C5=$W/coop/grid_total
	grep -q '"attributes": {"cooperative": 1}' "$C5/layer.json" 2>/dev/null ||
		no "coop: the layer's launch is not cooperative"
	python3 -c '
import struct, sys
v = [i % 97 for i in range(2048)]
part = [sum(v[256 * b:256 * b + 256]) for b in range(8)]
pad = b"\xff" * (1024 - 32)
open(sys.argv[1], "wb").write(struct.pack("<8i", *part) + pad + struct.pack("<8i", *[sum(v)] * 8) + pad)
' "$T/coop.want"
	if cmp -s "$C5/oracle.frame" "$T/coop.want"; then
		say "coop: the oracle is the block sums and the total (2048 bytes)"
	else
		no "coop: the oracle is not the block sums and the total"
	fi
else
	no "coop: no nvcc"
fi
exit $bad
