#!/usr/bin/env bash
# t1970-loop-cut: cuts that hold a loop, offline, on the Triton sm_90
# matmuls (tests/fixtures/foreign/triton).  Their wgmma groups are committed
# in the loop body and completed only after the back edge (the wait_group 1
# of the next iteration leaves the newest group pending, so it is the
# wait_group 0 after the loop that completes it), so a cut that reaches a
# completing wait holds the whole loop.  Asserted here:
#  - the cut interface of the loop cut against sets read off the PTX by
#    hand (below, with the lines they come from);
#  - recipe new --phase N --through-wait cuts every phase from the loop's
#    first statement through that wait_group 0;
#  - perturb of each such cut puts its add after the wait_group 0 (not
#    after the in-loop wait_group 1), and the perturbed and identity
#    modules are ptxas-clean (ptxas -arch=sm_90a, the modules' .target);
#  - a range that cuts the loop in two is refused (exit 2), naming the
#    loop's header and back edge as FILE:LINE:COL, and nothing is written;
#  - the groups in flight of phases --json, against the commit/wait
#    structure read off the PTX;
#  - a load fed through the back edge by a later store of the loop is a
#    read/write dependency of a cut that holds the loop.
. "$D4R_TOP/tests/cli/lib.sh"
FIX="$TOP/tests/fixtures/foreign/triton"
F16="$FIX/triton-matmul-f16-sm90.ptx"
FP8="$FIX/triton-matmul-fp8-sm90.ptx"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
cd "$T" || exit 1

# ---- the loop, as the PTX of matmul-f16-sm90 has it ----------------------
# line 418 '$L__BB0_1:' the header's label, s303 (line 419) its first
# statement; s406 (line 582) '@%p5 bra $L__BB0_1;' the back edge; s346
# (line 483) wgmma.wait_group 1 inside the loop; s423 (line 619)
# wgmma.wait_group 0 after it.
expect_rc 0 "$D4R" show "$F16" --stmts 303:423
expect_grep '^> s303 +L419 +add\.s32 %r279, %r279, 64;$' "$T/out"
expect_grep '^> s406 +L582 +@%p5 bra \$L__BB0_1;$' "$T/out"
expect_grep '^> s346 +L483 +wgmma\.wait_group\.sync\.aligned 1;$' "$T/out"
expect_grep '^> s423 +L619 +wgmma\.wait_group\.sync\.aligned 0;$' "$T/out"

# ---- the interface of the loop cut s303..s423 ----------------------------
# live-in, by hand from the PTX (145 registers):
#   %r279 %r280 %r281  loop counter and stage indices: set before the loop
#                      (lines 288-290), read at s303, s305, s361, redefined
#                      in the body and carried round the back edge
#   %r282-%r409        the 128 accumulators: zeroed before the loop (line
#                      287 and the movs of lines 291-417), read as C by the
#                      eight wgmma.mma_async of the body, carried round
#   %r71 %r12 %r13     shared-memory base and offsets (lines 111, 110, 153)
#   %rd108 %rd109      the global pointers (lines 286, 278), advanced at
#                      s403/s404 and carried round
#   %r1 %r4-%r11       row/column terms (lines 38-51) read after the loop,
#                      s407-s421, still inside the cut
# live-out (136): the 128 accumulators (read after the wait by the cvt of
# s451 onwards) and %r178 %r180 ... %r192 (the shl of s408-s422, read by
# the mad.wide of s426-s433).  %r279-%r281 are not: nothing after the loop
# reads them.
expect_rc 0 "$D4R" show "$F16" --stmts 303:423 --live --json
python3 - "$T/out" <<'PY' || fail "the loop cut's interface is not the one read off the PTX"
import json, sys
live = json.load(open(sys.argv[1]))["live"]
acc = ["%%r%d" % i for i in range(282, 410)]
want_in = set(["%r279", "%r280", "%r281", "%r71", "%r12", "%r13", "%rd108", "%rd109",
               "%r1"] + ["%%r%d" % i for i in range(4, 12)] + acc)
want_out = set(acc + ["%%r%d" % i for i in range(178, 193, 2)])
got_in = [r["reg"] for r in live["live_in"]]
got_out = [r["reg"] for r in live["live_out"]]
ok = True
for name, got, want in (("live-in", got_in, want_in), ("live-out", got_out, want_out)):
    if len(got) != len(set(got)) or set(got) != want:
        print("%s: missing %s, extra %s" % (name, sorted(want - set(got)), sorted(set(got) - want)))
        ok = False
print("live-in %d, live-out %d" % (len(got_in), len(got_out)))
sys.exit(0 if ok and len(want_in) == 145 and len(want_out) == 136 else 1)
PY

# ---- recipe new --phase N --through-wait -----------------------------------
# through_wait MODULE PHASE TEMPLATE OUT: the cut written, as "A:B"
through_wait() {
	expect_rc 0 "$D4R" recipe new --module "$1" --entry matmul_kernel --phase "$2" \
		--through-wait --template "$3" -o "$4"
	python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cut"]["stmts"]; print("%d:%d" % tuple(c))' "$4"
}
# matmul-fp8-sm90: header label line 357 (s274 line 359), back edge s345
# (line 467), wait_group 1 s307 (line 406) inside, wait_group 0 s357 (line
# 491) after the loop
expect_rc 0 "$D4R" show "$FP8" --stmts 274:357
expect_grep '^> s274 +L359 ' "$T/out"
expect_grep '^> s345 +L467 +@%p5 bra \$L__BB0_1;$' "$T/out"
expect_grep '^> s357 +L491 +wgmma\.wait_group\.sync\.aligned 0;$' "$T/out"
for row in "$F16 8 303:423 %r282" "$FP8 4 274:357 %r248"; do
	read -r mod n want d <<<"$row"
	k=$(basename "$mod" .ptx)
	for p in $(seq 1 "$n"); do
		for tpl in identity perturb; do
			got=$(through_wait "$mod" "$p" "$tpl" "$k-$p-$tpl.json")
			[ "$got" = "$want" ] || fail "$k phase $p --through-wait: cut $got, expected $want"
		done
	done
	expect_grep "^through: +phase $n .*completed by s${want#*:} .*holds the loop s${want%%:*}\.\." "$T/err"
	# perturb after the wait_group 0 after the loop: the accumulator of the
	# cut's first mma, then a wgmma.fence; nowhere else
	expect_rc 0 "$D4R" splice --module "$mod" --recipe "$k-1-perturb.json" -o "$k.perturb.ptx"
	expect_grep "^	wgmma\.wait_group\.sync\.aligned 0; add\.f32 $d, $d, 0f3F800000; wgmma\.fence\.sync\.aligned;  // d4r-splice: perturb" "$k.perturb.ptx"
	[ "$(grep -c 'add\.f32 .*0f3F800000' "$k.perturb.ptx")" = 1 ] || fail "$k: perturb added more than once"
	expect_no_grep 'wait_group\.sync\.aligned 1; add' "$k.perturb.ptx"
	if [ -x "$PTXAS" ]; then
		for tpl in identity perturb; do
			expect_rc 0 "$D4R" recipe check "$k-1-$tpl.json" --module "$mod" --ptxas --no-cache
			expect_grep "^ok .*: s${want%%:*}\.\.s${want#*:} \([0-9]+ mma\), $tpl, .*ptxas ok$" "$T/out"
		done
	else
		skip_part "no ptxas at $PTXAS"
	fi
done

# --through-wait on a phase that is not wgmma, and with --cut
expect_rc 2 "$D4R" recipe new --module "$FIX/triton-matmul-f16-sm80.ptx" --entry matmul_kernel \
	--phase 1 --through-wait --template perturb -o sm80.json
expect_grep "is not a wgmma phase: its mma complete as they issue" "$T/err"
[ ! -e sm80.json ] || fail "a recipe written for a refused --through-wait"
expect_rc 2 "$D4R" recipe new --module "$F16" --entry matmul_kernel --phase 1 --through-wait \
	--cut phase+epilogue --template perturb -o x.json

# ---- a range that cuts the loop in two -------------------------------------
# s321..s423: from the first mma (inside the loop) past the back edge
expect_rc 2 "$D4R" recipe new --module "$F16" --entry matmul_kernel --stmts 321:423 \
	--template identity -o split.json
cat >want.err <<EOF
  split.json: cut.stmts: the cut s321..s423 cuts a loop in two: it holds s321 of the loop s303..s406 but not s303
  $F16:418:1: the loop's header '\$L__BB0_1', first statement s303 'add.s32 %r279, %r279, 64;'
  $F16:582:2: the loop's back edge s406 '@%p5 bra \$L__BB0_1;'
EOF
grep -F -f want.err "$T/err" >got.err
cmp -s want.err got.err || { diff want.err got.err; cat "$T/err"; fail "the split is not refused as expected"; }
[ ! -e split.json ] || fail "recipe new wrote a recipe for a cut that splits a loop"
# the same through splice, from a recipe: the loop's end cut off (s300..s350
# holds s303..s350 of the loop, not its back edge s406)
# (its guard: the sha256 of the cut's statements as show prints them, one a line)
expect_rc 0 "$D4R" show "$F16" --stmts 300:350 --json
python3 - "$T/out" >half.json <<'PY'
import hashlib, json, sys
sts = json.load(open(sys.argv[1]))["statements"]
sha = hashlib.sha256("\n".join(s["text"] for s in sts).encode()).hexdigest()
print(json.dumps({"entry": "matmul_kernel", "cut": {"stmts": [300, 350]},
                  "template": "identity", "guards": {"sha256": sha}}))
PY
expect_rc 2 "$D4R" splice --module "$F16" --recipe half.json -o half.ptx
expect_grep '^d4r-splice: .*half\.json: cut\.stmts: the cut s300\.\.s350 cuts a loop in two: it holds s303 of the loop s303\.\.s406 but not s406$' "$T/err"
expect_grep ":582:2: the loop's back edge s406 " "$T/err"
[ ! -e half.ptx ] || fail "splice wrote a module for a cut that splits a loop"
# a range inside the loop body is not a split: phase 1 alone
expect_rc 0 "$D4R" recipe new --module "$F16" --entry matmul_kernel --phase 1 --template identity -o inside.json

# ---- groups in flight (phases --json) ------------------------------------
# matmul-f16-sm90 phase 1 (s321), read off the PTX: s317 wgmma.fence, the
# eight mma s321..s338 (uncommitted until) s339 commit_group, s346
# wait_group 1, the back edge, s423 wait_group 0.  Committed groups in
# flight: 0 on the first iteration and 1 on later ones (the wait_group 1
# leaves one) up to the commit, 1-2 after it, 1 after the wait_group 1, 0
# after the wait_group 0, where phase 1's group is complete.
expect_rc 0 "$D4R" phases "$F16" --json
python3 - "$T/out" <<'PY' || fail "groups in flight of matmul-f16-sm90 phase 1"
import json, sys
ph = json.load(open(sys.argv[1]))["functions"][0]["phases"][0]
g = ph["groups_in_flight"]
assert g["completed_at"] == 423 and g["completed_line"] == 619, g
assert g["through_wait_cut"] == [303, 423], g["through_wait_cut"]
assert g["loops"] == [{"header": 303, "back_edge": 406}], g["loops"]
got = [(s["stmt"], s["op"], s["in_flight"], s["uncommitted"], s["groups"]) for s in g["statements"]]
want = [(317, "fence", [0, 1], "no", "pending")]
want += [(i, "mma_async", [0, 1], "yes", "uncommitted") for i in (321, 324, 327, 330, 332, 334, 336, 338)]
want += [(339, "commit_group", [1, 2], "no", "pending"), (346, "wait_group", [1, 1], "no", "pending"),
         (423, "wait_group", [0, 0], "no", "complete")]
assert got == want, "\n%s\n%s" % (got, want)
PY
expect_rc 0 "$D4R" phases "$FIX/triton-matmul-f16-sm80.ptx" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [p["groups_in_flight"] for p in d["functions"][0]["phases"]] == [None]' "$T/out" ||
	fail "an mma.sync phase has groups in flight"

# ---- a loop of several blocks -----------------------------------------------
# The Triton loops are one block each (a block that branches to itself);
# this one has three: the header s2-s4, s5 (skipped when s2 loads 0), and
# s6-s9 with the back edge s9 (line 20).  s2 loads buf, s6 stores it: in a
# cut holding the loop, the load reads what the store wrote in the
# iteration before.
cat >loop.ptx <<'EOF'
.version 8.0
.target sm_80
.address_size 64
.shared .align 4 .b8 buf[256];
.visible .entry k(.param .u64 p)
{
	.reg .b32 %r<8>;
	.reg .pred %p<3>;
	mov.u32 %r1, 0;
	mov.u32 %r5, 7;
$L_loop:
	ld.shared.u32 %r2, [buf];
	setp.eq.u32 %p2, %r2, 0;
	@%p2 bra $L_skip;
	add.s32 %r2, %r2, %r5;
$L_skip:
	st.shared.u32 [buf], %r2;
	add.s32 %r1, %r1, 1;
	setp.lt.u32 %p1, %r1, 8;
	@%p1 bra $L_loop;
	ret;
}
EOF
expect_rc 0 "$D4R" show loop.ptx --entry k --stmts 2:9 --live
expect_grep '^READ/WRITE DEPENDENCIES: cut invalid$' "$T/out"
expect_grep "^s2 ld\.shared reads shared memory that s6 st\.shared writes in the iteration before \(the loop's back edge s9\)$" "$T/out"
# live-in: %r5 (s1, read at s5) and %r1 (s0, read at s7, carried round);
# %r2 and the predicates are defined in the body before they are read;
# nothing is read after the loop (ret)
expect_grep '^live-in \(2\): ' "$T/out"
expect_grep '^  %r5 +\.b32 +first use s5 ' "$T/out"
expect_grep '^  %r1 +\.b32 +first use s7 ' "$T/out"
expect_grep '^live-out \(0\): ' "$T/out"
# the body alone, in statement order, holds no such pair
expect_rc 0 "$D4R" show loop.ptx --entry k --stmts 2:6 --live
expect_grep '^read/write dependencies: none$' "$T/out"
# s0..s5 holds the header and not the back edge: refused
expect_rc 2 "$D4R" recipe new --module loop.ptx --entry k --stmts 0:5 --template identity -o x.json
expect_grep '^  x\.json: cut\.stmts: the cut s0\.\.s5 cuts a loop in two: it holds s2 of the loop s2\.\.s9 but not s9$' "$T/err"
expect_grep "^  loop\.ptx:11:1: the loop's header '\\\$L_loop', first statement s2 'ld\.shared\.u32 %r2, \[buf\];'$" "$T/err"
expect_grep "^  loop\.ptx:20:2: the loop's back edge s9 '@%p1 bra \\\$L_loop;'$" "$T/err"
# s5..s6 lies inside the body (a block the branch at s4 skips): not a split
expect_rc 0 "$D4R" recipe new --module loop.ptx --entry k --stmts 5:6 --template identity -o y.json
test_done
