#!/usr/bin/env bash
# enc4: the replay module of every recipe (124: the 62 phases, native mma and
# f16) is generated offline and passes ptxas, for sm_90 (the H200) and for the
# module's own .target; the state plan replays every one of them (nothing
# refused).  The modules are written first (fast: no JIT, a few hundred
# statements each), then ptxas runs $D4R_PTXAS_JOBS (default 2) at a time.
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
for arch in sm_90 "$target"; do
	ls "$T"/phase-*.ptx | xargs -P "$jobs" -I{} sh -c \
		'"$0" -arch="$1" "$2" -o /dev/null 2>"$2.$1.err" || echo "REJECTED $2 $1"' \
		"$PTXAS" "$arch" {} >"$T/rejected.$arch"
	if [ -s "$T/rejected.$arch" ]; then
		cat "$T/rejected.$arch"
		head -c 3000 "$(ls "$T"/*."$arch".err | head -n 1)"
		fail "ptxas -arch=$arch rejects replay modules"
	fi
done
echo "248 ptxas runs (sm_90, $target), $jobs at a time: $((SECONDS - t0)) s"
exit 0
