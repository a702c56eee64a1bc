#!/usr/bin/env bash
# enc4: the replay module of every recipe (124: the 62 phases, native mma and
# f16) is generated offline and passes ptxas, for sm_90 (the H200) and for the
# module's own .target; the state plan replays every one of them (nothing
# refused).  The modules are written first (fast: no JIT, a few hundred
# statements each), then ptxas runs $D4R_PTXAS_JOBS (default 2) at a time,
# through the tool (its ptxas cache serves a second run).
. "$D4R_TOP/tests/cli/lib.sh"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -f "$D4R_TOP/corpus/enc4/enc4.ptx" ] || skip "no corpus/enc4/enc4.ptx"
[ -x "$PTXAS" ] || skip "no $PTXAS"
cd "$D4R_TOP" || exit 1
jobs=${D4R_PTXAS_JOBS:-2}
recipes=$(ls recipes/enc4/phase-*.json)
[ "$(echo "$recipes" | wc -l)" -eq 124 ] || fail "expected 124 enc4 recipes, found $(echo "$recipes" | wc -l)"
t0=$SECONDS
n=0
for r in $recipes; do
	b=$(basename "$r" .json)
	"$D4R" replay enc4 --recipe "$r" --emit "$T/$b.ptx" >"$T/$b.log" 2>&1 || {
		cat "$T/$b.log"
		fail "$b: no replay module"
	}
	grep -q "^\.visible \.entry __d4r_replay_original(" "$T/$b.ptx" || fail "$b: no original entry"
	grep -q "^\.visible \.entry __d4r_replay_spliced(" "$T/$b.ptx" || fail "$b: no spliced entry"
	n=$((n + 1))
done
[ $n -eq 124 ] || fail "$n replay modules, not 124"
echo "124 replay modules written in $((SECONDS - t0)) s"
t0=$SECONDS
target=$(sed -n 's/^\.target \([a-z0-9_]*\).*/\1/p' corpus/enc4/enc4.ptx | head -n 1)
[ -n "$target" ] || fail "no .target in enc4.ptx"
# through the tool's own ptxas check (replay --emit --check=ptxas), so a
# second run takes the answers from the ptxas cache; every verdict line is
# read, and a module the tool does not say "ok" of fails the test
for arch in sm_90 "$target"; do
	echo "$recipes" | xargs -P "$jobs" -I{} sh -c \
		'b=$(basename "$2" .json); "$0" replay enc4 --recipe "$2" --emit "$3/$b.$1.ptx" --check=ptxas --arch "$1" >"$3/$b.$1.err" 2>&1; echo "$? $b"' \
		"$D4R" "$arch" {} "$T" >"$T/verdicts.$arch"
	[ "$(wc -l <"$T/verdicts.$arch")" -eq 124 ] || fail "not 124 ptxas verdicts for $arch"
	bad=$(awk '$1 != 0 { print $2 }' "$T/verdicts.$arch")
	for b in $(ls "$T"/phase-*."$arch".err | xargs -n1 basename | sed "s/\.$arch\.err$//"); do
		grep -Eq "^ptxas: +-arch=$arch: ok( \(cached\))?$" "$T/$b.$arch.err" || bad="$bad $b"
		cmp -s "$T/$b.ptx" "$T/$b.$arch.ptx" || fail "$b: the module written with --check=ptxas is not the one written without"
	done
	if [ -n "$bad" ]; then
		for b in $bad; do echo "REJECTED $b $arch"; done
		head -c 3000 "$T/$(echo $bad | cut -d' ' -f1).$arch.err"
		fail "ptxas -arch=$arch rejects replay modules"
	fi
done
echo "248 ptxas runs (sm_90, $target), $jobs at a time: $((SECONDS - t0)) s"
exit 0
