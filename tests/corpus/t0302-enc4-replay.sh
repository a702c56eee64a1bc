#!/usr/bin/env bash
# enc4: the replay module of every recipe (124: the 62 phases, native mma and
# f16) is generated offline and passes ptxas, for sm_90 (the H200) and for the
# module's own .target; the state plan replays every one of them (nothing
# refused).  The modules are written (fast: no JIT, a few hundred
# statements each) and checked by ptxas $D4R_PTXAS_JOBS (default 2) at a
# time, through the tool (its ptxas cache serves a second run).
. "$D4R_TOP/tests/cli/lib.sh"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -f "$D4R_TOP/corpus/enc4/enc4.ptx" ] || skip "no corpus/enc4/enc4.ptx"
[ -x "$PTXAS" ] || skip "no $PTXAS"
cd "$D4R_TOP" || exit 1
jobs=${D4R_PTXAS_JOBS:-2}
recipes=$(ls recipes/enc4/phase-*.json)
[ "$(echo "$recipes" | wc -l)" -eq 124 ] || fail "expected 124 enc4 recipes, found $(echo "$recipes" | wc -l)"
t0=$SECONDS
target=$(sed -n 's/^\.target \([a-z0-9_]*\).*/\1/p' corpus/enc4/enc4.ptx | head -n 1)
[ -n "$target" ] || fail "no .target in enc4.ptx"
# Each recipe's replay module, written by the tool and checked by its own
# ptxas run (replay --emit --check=ptxas), once for sm_90 and once for the
# module's target, so a second run takes the answers from the ptxas cache;
# every verdict line is read, and a module the tool does not say "ok" of
# fails the test.  The two modules of a recipe are the same text (the
# target is ptxas's, not the module's).
for arch in sm_90 "$target"; do
	echo "$recipes" | xargs -P "$jobs" -I{} sh -c \
		'b=$(basename "$2" .json); "$0" replay enc4 --recipe "$2" --emit "$3/$b.$1.ptx" --check=ptxas --arch "$1" >"$3/$b.$1.err" 2>&1; echo "$? $b"' \
		"$D4R" "$arch" {} "$T" >"$T/verdicts.$arch"
	[ "$(wc -l <"$T/verdicts.$arch")" -eq 124 ] || fail "not 124 replay modules for $arch"
	bad=$(awk '$1 != 0 { print $2 }' "$T/verdicts.$arch")
	for r in $recipes; do
		b=$(basename "$r" .json)
		grep -Eq "^ptxas: +-arch=$arch: ok( \(cached\))?$" "$T/$b.$arch.err" || bad="$bad $b"
	done
	if [ -n "$bad" ]; then
		for b in $bad; do echo "REJECTED $b $arch"; done
		head -c 3000 "$T/$(echo $bad | cut -d' ' -f1).$arch.err"
		fail "no replay module, or ptxas -arch=$arch rejects it"
	fi
done
for r in $recipes; do
	b=$(basename "$r" .json)
	grep -q "^\.visible \.entry __d4r_replay_original(" "$T/$b.sm_90.ptx" || fail "$b: no original entry"
	grep -q "^\.visible \.entry __d4r_replay_spliced(" "$T/$b.sm_90.ptx" || fail "$b: no spliced entry"
	cmp -s "$T/$b.sm_90.ptx" "$T/$b.$target.ptx" || fail "$b: the replay module differs with the ptxas target"
done
echo "248 ptxas runs (sm_90, $target), $jobs at a time: $((SECONDS - t0)) s"
exit 0
