#!/usr/bin/env bash
# The identity splice on real vendor code: every mma phase of every entry of
# the toolkit's sm_80/sm_86/sm_89/sm_90 modules that hold mma statements is
# cut out and spliced back through the whole machinery (liveness, fresh
# names, the { } scope, the emitter), and every byte outside the cut must
# stay the input's (`splice --every-phase` checks it in memory against the
# cut's statement span from its parse of the input, not against the region
# the splicer reports).
# ptxas -e ENTRY must accept the spliced module.  ptxas costs 1-30 s per run
# on these kernels, so all the phases of every entry of a module are spliced
# into one module (`--every-phase --together`: a splice adds no statement, so
# the phases keep their statement numbers) and ptxas runs once per module,
# -e naming every spliced entry (each entry compiled as alone, the module
# read once, not once per entry); every module by default, or the smallest N
# of each architecture with D4R_T0300_PTXAS_MODULES=N; one module per CPU at
# a time.  ptxas's answers are cached (splice, --no-cache), so a second run
# costs no ptxas run.
. "$D4R_TOP/tests/cli/lib.sh"
dir=$("$D4R_TOP/scripts/toolkit-corpus")
rc=$?
[ $rc -eq 77 ] && skip "$dir"
[ $rc -eq 0 ] || fail "scripts/toolkit-corpus failed"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
N=${D4R_T0300_PTXAS_MODULES:-all}
jobs=$(nproc 2>/dev/null || echo 2)

# modules holding mma, with their target and size
grep -l -E '^[[:space:]]*(@!?%[A-Za-z0-9_]+[[:space:]]+)?(mma\.sync|mma\.sp|wmma\.mma|wgmma\.mma_async)' \
	"$dir"/*.ptx >"$T/mma.txt" 2>/dev/null
while IFS= read -r f; do
	t=$(grep -m1 '^\.target' "$f" | awk '{print $2}' | tr -d ',')
	case $t in
	sm_80 | sm_86 | sm_89 | sm_90 | sm_90a) echo "$t $(stat -c %s "$f") $f" ;;
	esac
done <"$T/mma.txt" | sort -k1,1 -k2,2n >"$T/modules.txt"
nmod=$(wc -l <"$T/modules.txt")
[ "$nmod" -gt 0 ] || skip "no sm_80/86/89/90 module with mma in $dir"

# 1. every phase of every module: splice, bytes outside unchanged
cut -d' ' -f3- "$T/modules.txt" |
	xargs -d '\n' -P"$jobs" -I{} sh -c '"$1" splice --module "$2" --every-phase >"$3/$(basename "$2").log" 2>&1 || echo "$2" >>"$3/failed"' \
		sh "$D4R" {} "$T"
cat "$T"/*.log | grep -E '^FAIL' | head -20
[ ! -f "$T/failed" ] || fail "identity splice failed in $(wc -l <"$T/failed") module(s)"
nsplice=$(cat "$T"/*.log | grep -c '^ok ')
[ "$nsplice" -gt 0 ] || fail "no phase was spliced"
echo "identity: $nsplice phases of $nmod modules spliced, bytes outside each cut unchanged"
rm -f "$T"/*.log

# 2. ptxas on every phase of the smallest N modules of each architecture
[ -x "$PTXAS" ] || skip "skip: no $PTXAS, so no ptxas run on the spliced modules (the identity part passed)"
if [ "$N" = all ]; then
	cut -d' ' -f3- "$T/modules.txt" >"$T/ptxas.txt"
else
	awk -v n="$N" '{ if (++seen[$1] <= n) { $1 = ""; $2 = ""; sub(/^  /, ""); print } }' \
		"$T/modules.txt" >"$T/ptxas.txt"
fi
t0=$SECONDS
xargs -d '\n' -P"$jobs" -I{} sh -c '"$1" splice --module "$2" --every-phase --together --check=ptxas >"$3/$(basename "$2").log" 2>&1 || echo "$2" >>"$3/pfailed"' \
	sh "$D4R" {} "$T" <"$T/ptxas.txt"
cat "$T"/*.log | grep -E '^FAIL' | head -20
[ ! -f "$T/pfailed" ] || fail "ptxas rejected identity splices in $(wc -l <"$T/pfailed") module(s)"
# a line per entry, with the verdict of its module's one ptxas run
ok='^ok .*: [0-9]* of [0-9]* phases spliced together .*, ptxas (ok|accepts it with [0-9]* messages)'
ne=$(cat "$T"/*.log | grep -Ec "$ok")
np=$(cat "$T"/*.log | grep -E "$ok" | sed 's/^ok .*: \([0-9]*\) of [0-9]* phases spliced together.*/\1/' | awk '{s += $1} END {print s + 0}')
[ "$ne" -gt 0 ] || fail "no entry accepted by ptxas"
echo "ptxas: $ne entries of $(wc -l <"$T/ptxas.txt") modules ($N per architecture), $np phases spliced, accepted by ptxas -e, one run per module: $((SECONDS - t0)) s"
exit 0
