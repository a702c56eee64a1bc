#!/usr/bin/env bash
# t1400: the committed enc4 stand-in has the descriptor's shape.  gen-enc4
# --shape parses corpus/enc4/enc4.ptx, derives every phase's gemm fields with
# the design.md definitions (m_tiles, n_tiles, k, k_chain_len, mma, chains,
# banded, weight_bytes, c_source_bytes, A and C kinds) and compares them with
# corpus/enc4/descriptor.json; checks the layout (every statement range and
# cited statement of seed 002, the line of s7547 and of phase 1's mma); and
# checks that every statement of the enc4 kernel reaches a store.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 not found"
expect_rc 0 python3 "$TOP/scripts/gen-enc4" --shape
expect_grep '^entry cuda_dldn_engine_swin_enc4_kernel: [0-9]+ statements, 62 phases, 1386 mma$' "$T/out"
expect_grep '^ok: 62 of 62 phases match the descriptor$' "$T/out"
expect_grep '^ok: layout: .* s7547 \(line 11871\), phase 1 at lines 11883-12044, .* last statement s21667 are seed 002.s$' "$T/out"
expect_grep '^ok: liveness: every one of the 21669 statements of cuda_dldn_engine_swin_enc4_kernel reaches a store' "$T/out"
expect_no_grep 'MISMATCH' "$T/out"
# spot checks against the seed: phase 1, 11, 12, 61, 62 (statement and line of the first mma)
expect_grep '^1 +s7554 +11883 +6 +4 +32 +1 +24 +24 false +320-844 +\[\] +shared +zero ok' "$T/out"
expect_grep '^11 +s8028 .* 4 +12 +32 +1 +48 +48 false +null +10560\.\.22348/96 converted:9 +loaded ok' "$T/out"
expect_grep '^12 .* 12 +12 +96 +3 +48 +16 true +null +\[\] +converted:11 +zero ok' "$T/out"
expect_grep '^61 +s21138 .* 20 +80 +640 +20 +80 +4 true +428544-448524 +530944\.\.530992/4 shared +loaded ok' "$T/out"
expect_grep '^62 .* 5 +10 +160 +5 +10 +2 true +531264-533324 +533824\.\.533840/2 converted:61 +loaded ok' "$T/out"
# the other entries are there, prepass first
grep -o '^\.visible \.entry [A-Za-z0-9_]*' "$TOP/corpus/enc4/enc4.ptx" >"$T/entries"
printf '%s\n' '.visible .entry enc4_prepass_kernel' \
	'.visible .entry cuda_dldn_engine_swin_enc4_kernel' '.visible .entry enc4_frame_kernel' >"$T/want"
cmp -s "$T/entries" "$T/want" || { cat "$T/entries"; fail "entries or their order differ"; }
# a 144-byte struct parameter, straight-line enc4 body (no branch)
expect_grep '^\.param \.align 8 \.b8 cuda_dldn_engine_swin_enc4_kernel_param_0\[144\]' "$TOP/corpus/enc4/enc4.ptx"
awk '/^\.visible \.entry cuda_dldn_engine_swin_enc4_kernel/,/^\.visible \.entry enc4_frame_kernel/' \
	"$TOP/corpus/enc4/enc4.ptx" >"$T/enc4"
expect_no_grep '(^|[[:space:]])bra(\.uni)?[[:space:]]' "$T/enc4"
expect_grep 'ld\.param\.v2\.u32 .*_param_0\];' "$T/enc4"
expect_grep 'ld\.param\.v2\.u16 .*_param_0\+80\];' "$T/enc4"
for op in 'cvt\.rn\.satfinite\.e4m3x2\.f16x2' 'ex2\.approx' 'rcp\.approx' 'rsqrt\.approx' \
	'max\.f32' 'st\.shared' 'ld\.shared' 'st\.global' 'sust\.b\.2d' 'tex\.2d' 'shfl\.sync' 'prmt' \
	'min\.f16x2' 'fma\.rn\.f16x2' 'bar\.sync'; do
	expect_grep "$op" "$T/enc4"
done
exit 0
