#!/usr/bin/env bash
# enc4: every native recipe (the 62 phases in the vendor's instruction and in
# exact f16 form: recipes/enc4/phase-NN.json, phase-NN-f16.json) splices into
# the committed stand-in and the spliced module passes ptxas -e ENTRY; so do
# the two whole-layer selections (--phases 1-62, and with --variant f16) and
# the identity of every phase spliced together.  ptxas takes 10-40 s on this
# kernel, so the recipes are checked --jobs at a time (one per CPU, or
# $D4R_PTXAS_JOBS); the time each part took is printed.
. "$D4R_TOP/tests/cli/lib.sh"
M="$D4R_TOP/corpus/enc4/enc4.ptx"
E=cuda_dldn_engine_swin_enc4_kernel
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -f "$M" ] || skip "no corpus/enc4/enc4.ptx"
[ -x "$PTXAS" ] || skip "no $PTXAS"
cd "$D4R_TOP" || exit 1
jobs=${D4R_PTXAS_JOBS:-$(nproc 2>/dev/null || echo 2)}
recipes=$(ls recipes/enc4/phase-*.json)
[ "$(echo "$recipes" | wc -l)" -eq 124 ] || fail "expected 124 enc4 recipes, found $(echo "$recipes" | wc -l)"

# the identity of every phase alone keeps the bytes outside its cut (the
# statement span from the parse, not the splicer's region), and all 62
# spliced together pass ptxas (one run)
expect_rc 0 "$D4R" splice --module "$M" --entry $E --every-phase
[ "$(grep -c '^ok ' "$T/out")" -eq 62 ] || fail "not 62 identity splices"
t0=$SECONDS
"$D4R" splice --module "$M" --entry $E --every-phase --together --check=ptxas >"$T/tog" 2>&1 || {
	cat "$T/tog"
	fail "identity of every phase: ptxas rejects it"
}
expect_grep "^ok +$E: 62 of 62 phases spliced together \(identity\), ptxas ok" "$T/tog"
echo "identity of 62 phases together, ptxas: $((SECONDS - t0)) s"

# the two whole layers, each one module, each one ptxas run
for v in "" f16; do
	t0=$SECONDS
	"$D4R" splice enc4 --phases 1-62 ${v:+--variant $v} --check=ptxas -o "$T/layer$v.ptx" >"$T/l" 2>&1 || {
		cat "$T/l"
		fail "--phases 1-62 ${v:+--variant $v}: ptxas rejects the module"
	}
	expect_grep "^ptxas: +-arch=sm_89 -e $E: ok" "$T/l"
	echo "phases 1-62 ${v:-(mma)} ${v}: spliced and ptxas in $((SECONDS - t0)) s"
done

# every recipe through ptxas, --jobs at a time
t0=$SECONDS
"$D4R" recipe check --ptxas --jobs "$jobs" $recipes >"$T/ptxas.out" 2>"$T/ptxas.err" || {
	grep '^FAIL' "$T/ptxas.out"
	head -c 4000 "$T/ptxas.err"
	fail "ptxas rejects a spliced recipe"
}
[ "$(grep -c '^ok .*ptxas ok' "$T/ptxas.out")" -eq 124 ] || fail "not 124 recipes through ptxas"
echo "124 recipes through ptxas, $jobs at a time: $((SECONDS - t0)) s"
exit 0
