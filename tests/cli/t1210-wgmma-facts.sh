#!/usr/bin/env bash
# The facts of each wgmma.mma_async (`phases --json` key "wgmma", and
# `show --live`) on the three Triton sm_90 fixtures, against values read off
# the PTX by hand:
#
#   - shape and types: the opcode's components
#     (wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16);
#   - the immediates: the operands after scale-d as written ("%p1, 1, 1, 0, 1"
#     is imm-scale-a 1, imm-scale-b 1, trans-a 0, trans-b 1; the fp8 form
#     "%p1, 1, 1" has no transposes; A from {4 registers} leaves trans-a out);
#   - the descriptor fields: the decimal constant of the or.b64 / add.s64
#     that defines the descriptor, written in hex and cut at the bit
#     positions of the PTX ISA's "Matrix Descriptor Format" (start 0-13,
#     LBO 16-29, SBO 32-45, base offset 49-51, swizzle 62-63; the three
#     address fields in units of 16 bytes):
#       4611686293305294848  = 0x4000004000000000: SBO 0x40 x 16 = 1024, LBO 0,
#                              swizzle 1 (128B), start field 0
#       4611686293338849280  = 0x4000004002000000: LBO 0x200 x 16 = 8192,
#                              SBO 1024, 128B
#       4611686293305294850  = 0x4000004000000002: start field 2 = +32 bytes
#       4611686293338849408  = 0x4000004002000080: start field 0x80 = +2048
#       4611686293305295360  = 0x4000004000000200: start field 0x200 = +8192
#       -9223371899415822336 = 0x8000002000000000 (two's complement):
#                              swizzle 2 (64B), SBO 0x20 x 16 = 512, LBO 0
#   - the start address: the attention kernel's first descriptors come from
#     bfe.u32 %r80, %r74, 4, 14 with %r74 = mov.b32 global_smem (lines 155,
#     239), so A of s257 starts at global_smem+0 and A of s265 (+0x200) at
#     global_smem+8192; the matmuls' stage addresses are global_smem plus
#     a loop-carried stage offset (shl of a selp) that the address tracking
#     does not resolve: the symbol and the constant part (B at +49152,
#     add.s32 %r106, %r105, 49152, line 431) are known, the offset not;
#   - the bytes read: A of m64 rows, K-major, 128B swizzle, SBO 1024: 8 row
#     groups of 8 rows x 128 bytes at 1024-byte steps from the start's row,
#     [0, 8192) for s257 and s260 (+32 stays in the first 128-byte row),
#     [8192, 16384) for s265.
. "$D4R_TOP/tests/cli/lib.sh"
FIX="$TOP/tests/fixtures/foreign/triton"

for k in matmul-f16-sm90 matmul-fp8-sm90 attn-f16-sm90; do
	expect_rc 0 "$D4R" phases --json "$FIX/triton-$k.ptx"
	cp "$T/out" "$T/$k.json"
done
# the mma.sync kernels (sm_80, sm_89): every phase's "wgmma" is null
for k in matmul-f16-sm80 attn-f16-sm80 matmul-fp8-sm89; do
	expect_rc 0 "$D4R" phases --json "$FIX/triton-$k.ptx"
	cp "$T/out" "$T/$k.json"
done

python3 - "$T" <<'PY' || fail "wgmma facts differ from the values read off the PTX"
import json, sys
T = sys.argv[1]
def wg(k, phase):
    d = json.load(open("%s/%s.json" % (T, k)))
    return d["functions"][0]["phases"][phase - 1]["wgmma"]
bad = []
def eq(what, got, want):
    if got != want:
        bad.append("%s: got %r, want %r" % (what, got, want))
def desc(what, d, const, lbo, sbo, swz, start_add):
    eq(what + " known", d["known"], True)
    eq(what + " constant", d["constant"], const)
    eq(what + " lbo", d["lbo"], lbo)
    eq(what + " sbo", d["sbo"], sbo)
    eq(what + " swizzle", d["swizzle"], swz)
    eq(what + " start_add", d["start_add"], start_add)
    eq(what + " base_offset", d["base_offset"], 0)

# matmul f16: 8 phases of one m64n128k16 each
w = wg("matmul-f16-sm90", 1)
eq("mm16 p1 count", len(w), 1)
w = w[0]
eq("mm16 p1 stmt", (w["stmt"], w["line"]), (321, 441))
eq("mm16 p1 shape", (w["shape"], w["dtype"], w["atype"], w["btype"]), ("m64n128k16", "f32", "f16", "f16"))
eq("mm16 p1 a from", w["a"]["from"], "descriptor")
desc("mm16 p1 A", w["a"]["desc"], "0x4000004000000000", 0, 1024, "128B", 0)
desc("mm16 p1 B", w["b"], "0x4000004002000000", 8192, 1024, "128B", 0)
eq("mm16 p1 A reg", w["a"]["desc"]["reg"], "%rd53")
eq("mm16 p1 B reg", w["b"]["reg"], "%rd54")
# the stage base: global_smem + (stage << 14) (s310, shl.b32 %r104, %r280, 14;
# %r280 a selp round the loop) for A, + 49152 more for B (add.s32 %r106,
# %r105, 49152): the symbol and the constant part are known, the rest not
sa, sb = w["a"]["desc"]["start"], w["b"]["start"]
eq("mm16 p1 A start", (sa["known"], sa["symbol"], sa["variable"], sa["offset"], sa["constant_offset"], sa["variable_stmt"]),
   (True, "global_smem", True, None, 0, 310))
eq("mm16 p1 B start", (sb["known"], sb["symbol"], sb["variable"], sb["offset"], sb["constant_offset"], sb["variable_stmt"]),
   (True, "global_smem", True, None, 49152, 310))
eq("mm16 p1 range", w["a"]["desc"]["range"], {"known": False, "why": "the start address has a variable part"})
eq("mm16 p1 scale_d", w["scale_d"], {"kind": "predicate", "reg": "%p1", "negated": False})
eq("mm16 p1 imm", (w["imm_scale_a"], w["imm_scale_b"], w["trans_a"], w["trans_b"]), (1, 1, 0, 1))
eq("mm16 p1 d_regs", w["d_regs"], 64)
w = wg("matmul-f16-sm90", 2)[0]
desc("mm16 p2 A", w["a"]["desc"], "0x4000004000000002", 0, 1024, "128B", 32)
desc("mm16 p2 B", w["b"], "0x4000004002000080", 8192, 1024, "128B", 2048)
eq("mm16 p2 B start", w["b"]["start"]["constant_offset"], 49152 + 2048)
w = wg("matmul-f16-sm90", 5)[0]
desc("mm16 p5 A", w["a"]["desc"], "0x4000004000000200", 0, 1024, "128B", 8192)

# matmul fp8: m64n128k32 e4m3, no transposes
w = wg("matmul-fp8-sm90", 1)[0]
eq("mm8 p1 shape", (w["shape"], w["atype"], w["btype"]), ("m64n128k32", "e4m3", "e4m3"))
desc("mm8 p1 A", w["a"]["desc"], "0x8000002000000000", 0, 512, "64B", 0)
desc("mm8 p1 B", w["b"], "0x8000002000000000", 0, 512, "64B", 0)
eq("mm8 p1 imm", (w["imm_scale_a"], w["imm_scale_b"], w["trans_a"], w["trans_b"]), (1, 1, None, None))

# attention: phase 1 (s257) A at global_smem+0, scale-d the immediate 0
w = wg("attn-f16-sm90", 1)[0]
eq("attn p1 stmt", w["stmt"], 257)
eq("attn p1 scale_d", w["scale_d"], {"kind": "constant", "value": 0})
a = w["a"]["desc"]
desc("attn p1 A", a, "0x4000004000000000", 0, 1024, "128B", 0)
eq("attn p1 A start", (a["start"]["known"], a["start"]["symbol"], a["start"]["variable"], a["start"]["offset"]),
   (True, "global_smem", False, 0))
eq("attn p1 A range", (a["range"]["known"], a["range"]["lo"], a["range"]["hi"]), (True, 0, 8192))
eq("attn p1 imm", (w["trans_a"], w["trans_b"]), (0, 0))
w = wg("attn-f16-sm90", 2)[0]
eq("attn p2 A start", w["a"]["desc"]["start"]["offset"], 32)
eq("attn p2 A range", (w["a"]["desc"]["range"]["lo"], w["a"]["desc"]["range"]["hi"]), (0, 8192))
p4 = wg("attn-f16-sm90", 4)
eq("attn p4 stmts", [x["stmt"] for x in p4], [264, 265, 266, 267, 268])
a = p4[1]["a"]["desc"]
eq("attn s265 A start", a["start"]["offset"], 8192)
eq("attn s265 A range", (a["range"]["lo"], a["range"]["hi"]), (8192, 16384))
eq("attn s265 scale_d", p4[1]["scale_d"], {"kind": "constant", "value": 0})
# phase 5 (s742): A from 4 registers, B transposed
w = wg("attn-f16-sm90", 5)[0]
eq("attn p5 a", w["a"], {"from": "registers", "regs": 4})
eq("attn p5 imm", (w["imm_scale_a"], w["imm_scale_b"], w["trans_a"], w["trans_b"]), (1, 1, None, 1))
desc("attn p5 B", w["b"], "0x4000004000000000", 0, 1024, "128B", 0)

for k in ("matmul-f16-sm80", "attn-f16-sm80", "matmul-fp8-sm89"):
    d = json.load(open("%s/%s.json" % (T, k)))
    ph = d["functions"][0]["phases"]
    eq(k + " phases", len(ph) > 0, True)
    eq(k + " wgmma", set(repr(p["wgmma"]) for p in ph), {"None"})
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

# show --live says the same in words
expect_rc 0 "$D4R" show "$FIX/triton-attn-f16-sm90.ptx" --stmts 265:265 --live
expect_grep '^  s265 m64n64k16 f32\.f16\.f16, D 32 regs, A descriptor, scale-d 0, scale-a 1, scale-b 1, trans-a 0, trans-b 0, fence s255, commit s269$' "$T/out"
expect_grep '^    A descriptor %rd63 = s157 add 0x4000004000000200: lbo 0, sbo 1024, swizzle 128B, base offset 0$' "$T/out"
expect_grep '^      start global_smem\+8192; reads \[8192, 16384\)' "$T/out"
expect_grep '^    B descriptor %rd56 = s256 or 0x4000004000000000: .*$' "$T/out"
expect_rc 0 "$D4R" show "$FIX/triton-attn-f16-sm90.ptx" --stmts 265:265 --live --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); w=d["live"]["wgmma"]; assert len(w)==1 and w[0]["a"]["desc"]["start"]["offset"]==8192, w' "$T/out" ||
	fail "show --live --json: no wgmma facts"
exit 0
