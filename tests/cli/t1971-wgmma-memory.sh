#!/usr/bin/env bash
# t1971-wgmma-memory: a wgmma.mma_async loads shared memory through its
# matrix descriptors (A's when A is not in registers, B's always), and the
# memory facts of a cut count it so: shared loads in `show --live` and in
# `recipe new`'s interface, and a read/write dependency between it and a
# store that writes its bytes (earlier in the cut, after it, or later in a
# loop the cut holds, through the back edge).  The bytes are the range
# wgmma.c derives, widened where the symbol's .align does not meet the
# swizzle premise; the whole symbol when the start resolves only in part;
# the whole of shared memory when the descriptor does not decode.
#
# Expected values by hand, from the PTX ISA's "Matrix Descriptor Format"
# and "Shared Memory Matrix Layout":
#  - the constant 0x4000004000000000 (4611686293305294848) is swizzle 1
#    (128B, bits 62-63), SBO 0x40 x 16 = 1024 (bits 32-45), LBO 0, start
#    field 0; with K-major 128B swizzle row r lies at (r/8) x SBO +
#    (r%8) x 128, 128 bytes wide;
#  - A (m64: rows 0..63) from tile+0: rows at 0 .. 7x1024+7x128 = 8064,
#    so [0, 8192); B (n8: rows 0..7) from tile+8192: [8192, 9216);
#  - tile declared .align 1024 (>= 128): the rows are exact.  Declared
#    .align 16 (< 128): a byte's 16-byte chunk may lie in either 128-byte
#    row around it, so each side widens by 128: A [-128, 8320), B [8064,
#    9344).
. "$D4R_TOP/tests/cli/lib.sh"
FIX="$TOP/tests/fixtures/foreign/triton"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
cd "$T" || exit 1

# s0 ld.param q; s1 %r1 = tile; s2 %r9 = other; s3 st tile+9212 (4 bytes,
# B's last row); s4 st tile+9216 (the first byte past B); s5 st other+0;
# s6-s8 A's descriptor (tile+0); s9-s12 B's (tile+8192); s18 the wgmma.
cat >base.ptx <<'EOF'
.version 8.0
.target sm_90a
.address_size 64

.shared .align 1024 .b8 tile[16384];
.shared .align 16 .b8 other[256];

.visible .entry k(.param .u64 p, .param .u32 q, .param .u64 d)
{
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	.reg .f32 %f<8>;

	ld.param.u32 %r5, [q];
	mov.u32 %r1, tile;
	mov.u32 %r9, other;
	st.shared.b32 [%r1+9212], %r9;
	st.shared.b32 [%r1+9216], %r9;
	st.shared.b32 [%r9], %r1;
	bfe.u32 %r2, %r1, 4, 14;
	cvt.u64.u32 %rd1, %r2;
	or.b64 %rd2, %rd1, 4611686293305294848;
	add.s32 %r3, %r1, 8192;
	bfe.u32 %r4, %r3, 4, 14;
	cvt.u64.u32 %rd3, %r4;
	or.b64 %rd4, %rd3, 4611686293305294848;
	mov.f32 %f1, 0f00000000;
	mov.f32 %f2, 0f00000000;
	mov.f32 %f3, 0f00000000;
	mov.f32 %f4, 0f00000000;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd4, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	ld.param.u64 %rd5, [p];
	st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};
	ret;
}
EOF
# a16: tile .align 16; sym: B's start is tile + a parameter (resolves only
# in part: somewhere in tile); shm: B's descriptor is a parameter (does not
# decode: somewhere in shared memory)
sed 's/^\.shared \.align 1024 \.b8 tile/.shared .align 16 .b8 tile/' base.ptx >a16.ptx
sed 's/add\.s32 %r3, %r1, 8192;/add.s32 %r3, %r1, %r5;/' base.ptx >sym.ptx
sed 's/or\.b64 %rd4, %rd3, 4611686293305294848;/ld.param.u64 %rd4, [d];/' base.ptx >shm.ptx
for f in base a16 sym shm; do
	cmp -s base.ptx $f.ptx && [ $f != base ] && fail "$f.ptx: the sed changed nothing"
	if [ -x "$PTXAS" ]; then
		"$PTXAS" -arch=sm_90a $f.ptx -o /dev/null 2>"$T/ptxas.err" || fail "ptxas rejects $f.ptx: $(cat "$T/ptxas.err")"
	fi
done

# live MODULE A:B : show --live of the range into $T/out
live() { expect_rc 0 "$D4R" show "$1" --entry k --stmts "$2" --live; }
earlier='^s18 wgmma\.mma_async reads shared memory that s%s st\.shared writes earlier in the cut \(through B.s descriptor: %s\)$'
# shared_loads N : the memory line counts N shared loads
shared_loads() { expect_grep "^memory effects: .*shared loads $1," "$T/out"; }
no_rw() { expect_grep '^read/write dependencies: none$' "$T/out"; }

# exact rows: s3 (tile+9212) is in B, s4 (tile+9216) and s5 (other) are not
live base.ptx 3:20
shared_loads 1
expect_grep "$(printf "$earlier" 3 'tile\[8192, 9216\)')" "$T/out"
live base.ptx 4:20
shared_loads 1
no_rw
# the store before the cut that the wgmma after it reads
live base.ptx 1:3
expect_grep '^s3 st\.shared may be read by s18 wgmma\.mma_async after the cut \(shared\) \(through B.s descriptor: tile\[8192, 9216\)\)$' "$T/out"
live base.ptx 4:4
no_rw

# .align 16: widened by 128, so tile+9216 is read too; other still apart
live a16.ptx 4:20
expect_grep "$(printf "$earlier" 4 'tile\[8064, 9344\)')" "$T/out"
live a16.ptx 5:20
no_rw
expect_rc 0 "$D4R" show a16.ptx --entry k --stmts 18:18 --live --json
python3 - "$T/out" <<'PY' || fail "a16: the wgmma is not one shared load in --json"
import json, sys
m = json.load(open(sys.argv[1]))["live"]["memory"]
sys.exit(0 if m["loads"] == {"shared": 1} and m["stores"] == {} else 1)
PY

# the start resolves only in part: all of tile (s4), not other (s5)
live sym.ptx 4:20
expect_grep "$(printf "$earlier" 4 'somewhere in tile: the start address has a variable part')" "$T/out"
live sym.ptx 5:20
no_rw
# the descriptor does not decode: all of shared memory (other too)
live shm.ptx 5:20
expect_grep "$(printf "$earlier" 5 'somewhere in shared memory: the descriptor is not or\.b64 / add\.s64 of a start field and a constant, nor mov\.b64 of a constant')" "$T/out"

# ---- a template file's body against the wgmma after the cut ---------------
# the cut s5 (st.shared [other], %r1): a body that stores to shared memory
# may write what s18 (line 32), the first shared load after the cut, reads;
# with the wgmma not a load nothing after the cut reads shared memory
mkdir -p repo/recipes/w repo/ptx/w repo/corpus/w
cp base.ptx repo/corpus/w/base.ptx
cat >repo/ptx/w/t.ptx <<'EOF'
//! in  .b32 a
//! in  .b32 v
//! reads none
//! writes shared
	st.shared.b32 [%{a}], %{v};
EOF
wrecipe() {
	printf '{"module": "w/base.ptx", "entry": "k", "cut": {"stmts": [5, 5]}, "template": "w/t.ptx",
 "bind": {"a": "%%r9", "v": "%%r1"}, "guards": {"sha256": "%s"}}\n' "$1" >repo/recipes/w/r.json
}
wrecipe "$(printf '%064d' 0)"
cd repo || exit 1
expect_rc 2 "$D4R" recipe check recipes/w/r.json
sha=$(sed -n 's/^ *found *\([0-9a-f]\{64\}\)$/\1/p' "$T/err")
[ ${#sha} -eq 64 ] || fail "no sha256 in the stale message"
cd .. && wrecipe "$sha" && cd repo || exit 1
expect_rc 2 "$D4R" recipe check recipes/w/r.json
expect_grep "READ/WRITE DEPENDENCIES: cut invalid: s5\\.\\.s5" "$T/err"
expect_grep "ptx/w/t.ptx:5 stores to shared memory, which may be read after the cut by s18 \\(line 32\\) 'wgmma\\.mma_async" "$T/err"
cd .. || exit 1

# ---- through a loop's back edge ------------------------------------------
# s14..s22 the loop: the wgmma at s15 reads B [8192, 9216); s18 writes
# other+0, s19 tile+8704 (in B) after it, read by the next iteration
cat >loop.ptx <<'EOF'
.version 8.0
.target sm_90a
.address_size 64

.shared .align 1024 .b8 tile[16384];
.shared .align 16 .b8 other[256];

.visible .entry k(.param .u64 p)
{
	.reg .pred %p<2>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	.reg .f32 %f<8>;

	mov.u32 %r1, tile;
	mov.u32 %r9, other;
	mov.u32 %r6, 0;
	bfe.u32 %r2, %r1, 4, 14;
	cvt.u64.u32 %rd1, %r2;
	or.b64 %rd2, %rd1, 4611686293305294848;
	add.s32 %r3, %r1, 8192;
	bfe.u32 %r4, %r3, 4, 14;
	cvt.u64.u32 %rd3, %r4;
	or.b64 %rd4, %rd3, 4611686293305294848;
	mov.f32 %f1, 0f00000000;
	mov.f32 %f2, 0f00000000;
	mov.f32 %f3, 0f00000000;
	mov.f32 %f4, 0f00000000;
$L_loop:
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd4, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	st.shared.b32 [%r9], %r6;
	st.shared.b32 [%r1+8704], %r6;
	add.s32 %r6, %r6, 1;
	setp.lt.s32 %p1, %r6, 4;
	@%p1 bra $L_loop;
	ld.param.u64 %rd5, [p];
	st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};
	ret;
}
EOF
[ -x "$PTXAS" ] && { "$PTXAS" -arch=sm_90a loop.ptx -o /dev/null || fail "ptxas rejects loop.ptx"; }
live loop.ptx 13:22
shared_loads 1
expect_grep '^s15 wgmma\.mma_async reads shared memory that s19 st\.shared writes in the iteration before \(the loop.s back edge s22\) \(through B.s descriptor: tile\[8192, 9216\)\)$' "$T/out"
# the same store past B (tile+9216): apart
sed '/st\.shared\.b32 \[%r1+8704\]/s/8704/9216/' loop.ptx >loop2.ptx
cmp -s loop.ptx loop2.ptx && fail "loop2.ptx: the sed changed nothing"
live loop2.ptx 13:22
no_rw

# ---- the Triton sm_90 fixtures ---------------------------------------------
ATTN="$FIX/triton-attn-f16-sm90.ptx"
F16="$FIX/triton-matmul-f16-sm90.ptx"
# attention: s97..s104 (lines 157-164) store the Q tile at %r75 + k x 2048
# (%r75 = global_smem + a thread term); s257 (line 351), the first wgmma,
# reads A from global_smem+0 (0x4000004000000000, m64: [0, 8192), .align
# 16: widened to [-128, 8320)) -- the first load after the cut that reads
# them
expect_rc 0 "$D4R" show "$ATTN" --stmts 97:104 --live
expect_grep '^s97 st\.shared may be read by s257 wgmma\.mma_async after the cut \(shared\) \(through A.s descriptor: global_smem\[-128, 8320\)\)$' "$T/out"
# s97..s257 holds the cp.async of the K tile (s125..s148, lines 192-232):
# the wgmma reads what the last of them (s148, line 232) may write
expect_rc 0 "$D4R" show "$ATTN" --stmts 97:257 --live
expect_grep '^s257 wgmma\.mma_async reads shared memory that s148 cp\.async writes earlier in the cut$' "$T/out"
# s150..s268 (the fence.proxy.async through phase 4): the eight
# wgmma.mma_async of lines 351-376 are its loads, and it stores nothing
expect_rc 0 "$D4R" show "$ATTN" --stmts 150:268 --live
expect_grep '^memory effects: shared loads 8, barriers 2,$' "$T/out"
no_rw
# recipe new: phase 4 (s264..s268, five wgmma) loads shared five times
expect_rc 0 "$D4R" recipe new --module "$ATTN" --entry attn_kernel --phase 4 --template identity -o p4.json
python3 - p4.json <<'PY' || fail "phase 4's interface memory is not five shared loads"
import json, sys
m = json.load(open(sys.argv[1]))["interface"]["memory"]
sys.exit(0 if m["loads"] == {"shared": 5} and not m["rw_dependency"] else 1)
PY
# matmul: the loop cut s303..s423; its eight wgmma (lines 441-472) read
# the stage the cp.async of the body (s369, line 512, the first) fills for
# a later iteration: a dependency through the back edge s406 (line 582)
expect_rc 0 "$D4R" show "$F16" --stmts 303:423 --live
expect_grep '^memory effects: global loads 16, shared loads 8, shared stores 16, barriers 2,$' "$T/out"
expect_grep '^s321 wgmma\.mma_async reads shared memory that s369 cp\.async writes in the iteration before \(the loop.s back edge s406\)$' "$T/out"
test_done
