#!/usr/bin/env bash
# enc4 on the GPU: the module runs, two runs give identical frames, the frame
# is finite and not constant, and it is the committed oracle (sha256 equal).
# With D4R_INSTALL_ORACLE=1 (bootstrap of a new stand-in), a frame that is
# deterministic and sane becomes the oracle: written to corpus/enc4 and
# recipes/enc4/layer.json of this checkout and to $D4R_GPU_OUT.
. "$D4R_TOP/tests/cli/lib.sh"
L=$TOP/recipes/enc4/layer.json
out=${D4R_GPU_OUT:-$T}
"$D4R" run enc4 --frame "$T/a.frame" --runs 0 >"$T/a.out" 2>&1
rc_a=$?
"$D4R" run enc4 --frame "$T/b.frame" --runs 0 >"$T/b.out" 2>&1
rc_b=$?
cat "$T/a.out"
grep -q 'no CUDA driver' "$T/a.out" && skip "no CUDA driver"
[ -s "$T/a.frame" ] && [ -s "$T/b.frame" ] || fail "no frame (exit $rc_a, $rc_b)"
cmp "$T/a.frame" "$T/b.frame" || fail "two runs gave different frames"
python3 "$TOP/scripts/frame-stats" "$T/a.frame" "$L" || fail "the frame has non-finite values or a constant output"
sha=$(sha256sum "$T/a.frame" | cut -d' ' -f1)
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["oracle"]["sha256"])' "$L")
echo "frame sha256 $sha ($(stat -c %s "$T/a.frame") bytes); manifest oracle $want"
if [ "$sha" = "$want" ]; then
	[ $rc_a -eq 0 ] || fail "run says the frame differs from the oracle (exit $rc_a)"
	cmp "$T/a.frame" "$TOP/corpus/enc4/oracle.frame" || fail "the committed oracle file differs"
	echo "oracle reproduced"
	exit 0
fi
if [ "${D4R_INSTALL_ORACLE:-0}" = 1 ]; then
	cp "$T/a.frame" "$TOP/corpus/enc4/oracle.frame"
	cp "$T/a.frame" "$out/oracle.frame"
	python3 - "$L" "$sha" <<'PY'
import re, sys
p, sha = sys.argv[1], sys.argv[2]
s = open(p).read()
s = re.sub(r'("oracle":\s*\{"path":\s*"[^"]*",\s*"sha256":\s*")[^"]*(")', r"\g<1>" + sha + r"\g<2>", s)
open(p, "w").write(s)
PY
	cp "$L" "$out/layer.json"
	echo "installed as the oracle: $sha"
	exit 0
fi
fail "the frame is not the oracle ($sha, manifest says $want)"
