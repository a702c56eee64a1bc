#!/usr/bin/env bash
# The main job, `d4r-splice enc4 --phase 8`: byte-identical verdict with both
# timings, cold (empty compiled-image cache) and warm; wall times recorded,
# and the JSON form for the split of the time.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
export XDG_CACHE_HOME=$T/cache
for run in cold warm; do
	t0=$(date +%s%N)
	"$D4R" enc4 --phase 8 >"$T/$run.txt" 2>&1
	rc=$?
	t1=$(date +%s%N)
	echo "$run wall: $(( (t1 - t0) / 1000000 )) ms" >>"$T/$run.txt"
	cat "$T/$run.txt"
	cp "$T/$run.txt" "$OUTD/phase8-$run.txt"
	[ $rc -eq 0 ] || fail "$run: exit $rc"
	grep -q '^enc4 phase 8: IDENTICAL' "$T/$run.txt" || fail "$run: not identical"
done
"$D4R" enc4 --phase 8 --json >"$T/warm.json" 2>&1 || fail "--json: exit $?"
cat "$T/warm.json"
cp "$T/warm.json" "$OUTD/phase8-warm.json"
