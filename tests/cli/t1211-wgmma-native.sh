#!/usr/bin/env bash
# Native forms of the wgmma phases of the three Triton sm_90 fixtures
# (`recipe new --native mma|mma_sync`), every phase:
#   - mma: each wgmma.mma_async written again from its facts; spliced, the
#     statement is the vendor's own, character for character once the
#     blanks after commas are taken out (the expected text is the fixture's
#     line, not the tool's);
#   - mma_sync (the f16 kernels; refused for e4m3, with the reason): the
#     counts the form must have, from each wgmma's shape read off the PTX:
#     N/8 mma.sync.m16n8k16 per wgmma (m64n128k16: 16, m64n64k16: 8), one
#     ldmatrix.x4 for A when A comes from a descriptor, N/16 ldmatrix.x4
#     for B, .trans exactly when trans-b is 1 (the matmul's B and the
#     attention's second product), one wgmma.commit_group + wait_group 0
#     before and one wgmma.fence after;
#   - both forms of every phase pass `recipe check --check=ptxas` (sm_90a);
#   - the mma form of every phase of a kernel, spliced at once, assembles
#     (ptxas, sm_90a) to the vendor's machine code: the kernel's .text
#     section of the cubin byte for byte (read from the ELF here).
# And the refusals: --native f16 on a wgmma phase, --native mma_sync on an
# mma.sync phase.
. "$D4R_TOP/tests/cli/lib.sh"
FIX="$TOP/tests/fixtures/foreign/triton"
W="$T/w"
mkdir -p "$W/recipes" "$W/ptx"
cp -r "$FIX" "$W/corpus"
cd "$W" || exit 1
C=(--corpus "$W/corpus")
nows() { tr -d ' \t'; }

for k in matmul-f16-sm90 attn-f16-sm90 matmul-fp8-sm90; do
	L=triton-$k
	cp -r "$W/corpus/$L" "$W/recipes/$L"
	"$D4R" phases "$W/corpus/$L.ptx" >"$T/phases" || fail "$L: phases"
	n=$(sed -n '1s/.*: \([0-9]*\) phases.*/\1/p' "$T/phases")
	[ "$n" -gt 0 ] || fail "$L: no phases"
	for p in $(seq 1 "$n"); do
		pp=$(printf %02d "$p")
		expect_rc 0 "$D4R" recipe new "$L" "${C[@]}" --phase "$p" --native mma
		# the spliced statements are the vendor's
		expect_rc 0 "$D4R" splice "$L" "${C[@]}" --phase "$p" -o "$T/sp.ptx"
		read -r a b < <(awk -v p="$p" '$1 == p { sub(/^s/, "", $2); split($2, r, "-s"); print r[1], r[2] }' "$T/phases")
		"$D4R" show "$W/corpus/$L.ptx" --stmts "$a:$b" | sed -n 's/^> s[0-9]* *L[0-9]* *//p' | nows >"$T/want"
		grep -E '^\s*wgmma\.mma_async' "$T/sp.ptx" | nows >"$T/got.all"
		grep -Fxf "$T/want" "$T/got.all" >"$T/got" || true
		cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" | head -5; fail "$L phase $p: the mma form's wgmma statements are not the vendor's"; }
		if [ "$k" = matmul-fp8-sm90 ]; then
			expect_rc 2 "$D4R" recipe new "$L" "${C[@]}" --phase "$p" --native mma_sync
			expect_grep "is m64n128k32\.f32\.e4m3\.e4m3: the mma_sync form is exact for f16 inputs with f32 accumulation only" "$T/err"
			[ ! -e "recipes/$L/phase-$pp-mma_sync.json" ] || fail "$L: a refused recipe was written"
			continue
		fi
		expect_rc 0 "$D4R" recipe new "$L" "${C[@]}" --phase "$p" --native mma_sync
	done
done

# the mma_sync forms' shape, per phase: mma.sync, ldmatrix (A + B), .trans, wgmma
# statements (N/8 per wgmma; 1 + N/16 ldmatrix with A by descriptor, N/16 with A
# in registers)
count() { grep -cE "^\s*$1" "$2" || true; }
check_sync() { # LAYER PHASE MMA LDMATRIX TRANS
	local t="ptx/$1/phase-$(printf %02d "$2")-mma_sync.ptx"
	[ -f "$t" ] || fail "$t not written"
	local got
	got="$(count 'mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32' "$t") $(count 'ldmatrix' "$t") $(count 'ldmatrix\.sync\.aligned\.m8n8\.x4\.trans' "$t") $(count 'wgmma\.mma_async' "$t") $(count 'wgmma\.commit_group' "$t") $(count 'wgmma\.wait_group\.sync\.aligned 0' "$t") $(count 'wgmma\.fence' "$t")"
	[ "$got" = "$3 $4 $5 0 1 1 1" ] || fail "$t: mma/ldmatrix/trans/wgmma/commit/wait/fence counts '$got', expected '$3 $4 $5 0 1 1 1'"
}
for p in 1 2 3 4 5 6 7 8; do
	check_sync triton-matmul-f16-sm90 "$p" 16 9 8 # m64n128k16, B MN-major
done
for p in 1 2 3; do
	check_sync triton-attn-f16-sm90 "$p" 8 5 0 # m64n64k16, B K-major
done
check_sync triton-attn-f16-sm90 4 40 25 0     # 5 wgmma
for p in 5 6 7; do
	check_sync triton-attn-f16-sm90 "$p" 8 4 4 # A in registers, B MN-major
done
check_sync triton-attn-f16-sm90 8 40 20 20

# every native recipe through ptxas (sm_90a, the fixtures' .target)
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ]; then
	expect_rc 0 "$D4R" recipe check recipes/triton-*/phase-*.json "${C[@]}" --check=ptxas --no-cache
	nrec=$(ls recipes/triton-*/phase-*.json | wc -l)
	[ "$nrec" -eq 36 ] || fail "$nrec native recipes, expected 36 (20 phases in the mma form, 16 f16 phases in the mma_sync form)"
	[ "$(grep -c 'ptxas ok' "$T/out")" -eq 36 ] || fail "not every native recipe is ptxas ok"
	# the mma form of every phase at once assembles to the vendor's own
	# machine code: the .text section of the kernel, byte for byte
	for k in matmul-f16-sm90 attn-f16-sm90 matmul-fp8-sm90; do
		L=triton-$k
		n=$(ls recipes/$L/phase-??.json | wc -l)
		expect_rc 0 "$D4R" splice "$L" "${C[@]}" --phases "1-$n" -o "$T/$k.mma.ptx"
		"${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" -arch=sm_90a "$W/corpus/$L.ptx" -o "$T/o.cubin" || fail "$L: ptxas"
		"${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" -arch=sm_90a "$T/$k.mma.ptx" -o "$T/m.cubin" || fail "$L: ptxas on the mma form"
		python3 - "$T/o.cubin" "$T/m.cubin" <<'PY' || fail "$L: the mma form's machine code is not the vendor's"
import struct, sys
def text(p):
    b = open(p, "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    ent, num, stri = struct.unpack_from("<HHH", b, 0x3a)
    hs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * ent) for i in range(num)]
    so = hs[stri][4]
    name = lambda h: b[so + h[0]:b.index(b"\0", so + h[0])].decode()
    t = [h for h in hs if name(h).startswith(".text.")]
    assert len(t) == 1, [name(h) for h in t]
    return name(t[0]), b[t[0][4]:t[0][4] + t[0][5]]
(na, a), (nb, b) = text(sys.argv[1]), text(sys.argv[2])
print("%s: %d bytes, the mma form's %d: %s" % (na, len(a), len(b), "identical" if (na, a) == (nb, b) else "DIFFER"))
sys.exit(0 if (na, a) == (nb, b) and len(a) > 0 else 1)
PY
	done
else
	skip_part "no ptxas: the native recipes were not assembled"
fi

# refusals
expect_rc 2 "$D4R" recipe new triton-matmul-f16-sm90 "${C[@]}" --phase 1 --native f16
expect_grep 'phase 1 holds wgmma\.mma_async: the f16 form is the form of an e4m3 mma\.sync phase' "$T/err"
cp -r "$W/corpus/triton-matmul-f16-sm80" "$W/recipes/"
expect_rc 2 "$D4R" recipe new triton-matmul-f16-sm80 "${C[@]}" --phase 1 --native mma_sync
expect_grep 'phase 1 holds no wgmma\.mma_async: the mma_sync form is the mma\.sync form of a wgmma phase' "$T/err"
[ ! -e recipes/triton-matmul-f16-sm80/phase-01-mma_sync.json ] || fail "a refused recipe was written"
test_done
