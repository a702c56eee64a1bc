#!/usr/bin/env bash
# t0501-probe-toolkit: `d4r-splice probe` on real vendor code with mma of
# several kinds (f16 and bf16 m16n8k16, f64 m8n8k4, wmma): the smallest
# module of each kind among the CUDA toolkit's, whose .target ptxas knows,
# instrumented after every phase (live-out registers) and after every
# epilogue (every register the range defines).  Every line of the module is
# still a line of the output, in order (a script of its own compares them),
# and ptxas -arch=<target> -e ENTRY accepts the result (probe's own
# --check=ptxas, whose answers are cached: a second run pays no ptxas run).
. "$D4R_TOP/tests/cli/lib.sh"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
command -v python3 >/dev/null || skip "no python3"
[ -x "$PTXAS" ] || skip "no ptxas at $PTXAS"
dir=$("$D4R_TOP/scripts/toolkit-corpus")
rc=$?
[ $rc -eq 77 ] && skip "$dir"
[ $rc -eq 0 ] || fail "scripts/toolkit-corpus failed"

kept() {
	python3 - "$1" "$2" <<'PY'
import sys
a = open(sys.argv[1], "rb").read().split(b"\n")
b = open(sys.argv[2], "rb").read().split(b"\n")
j = 0
for i, line in enumerate(a):
    while j < len(b) and b[j] != line:
        j += 1
    if j == len(b):
        sys.exit("line %d of %s is not in %s: %r" % (i + 1, sys.argv[1], sys.argv[2], line[:80]))
    j += 1
PY
}

# ptxas_ok MODULE ENTRY : probe's --check=ptxas accepted what it wrote
ptxas_ok() {
	local arch
	arch=$(grep -m1 '^\.target' "$1" | awk '{print $2}' | tr -d ',')
	expect_grep "^ptxas: +-arch=$arch -e $2: ok" "$T/err"
}

# the modules with mma, once
grep -l -E '^[[:space:]]*(mma\.sync|wmma\.mma)' "$dir"/*.ptx >"$T/mma.txt" 2>/dev/null
[ -s "$T/mma.txt" ] || skip "no module with mma in $dir"

kinds=('mma\.sync\.aligned\.m16n8k16\.row\.col\.f16\.f16\.f16\.f16'
	'mma\.sync\.aligned\.m8n8k4\.row\.col\.f64'
	'wmma\.mma\.sync'
	'mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16')
done_any=0
for k in "${kinds[@]}"; do
	f=$(xargs -d '\n' grep -l -E "^[[:space:]]*$k" <"$T/mma.txt" 2>/dev/null | while read -r m; do
		t=$(grep -m1 '^\.target' "$m" | awk '{print $2}' | tr -d ',')
		case $t in sm_80 | sm_86 | sm_89 | sm_90 | sm_100 | sm_120) echo "$(stat -c %s "$m") $m" ;; esac
	done | sort -n | head -1 | cut -d' ' -f2-)
	[ -n "$f" ] || continue
	e=$("$D4R" phases "$f" | grep -E '^[^ ].*: [1-9][0-9]* phases' | head -1 | cut -d: -f1)
	[ -n "$e" ] || fail "no entry with phases in $f"
	expect_rc 0 "$D4R" probe "$f" --entry "$e" -o "$T/t.ptx" --check=ptxas
	ptxas_ok "$f" "$e"
	kept "$f" "$T/t.ptx" >/dev/null || fail "probe changed a line of $f"
	expect_rc 0 "$D4R" probe "$f" --entry "$e" --at epilogue-end --registers all -o "$T/t.ptx" \
		--check=ptxas
	ptxas_ok "$f" "$e"
	kept "$f" "$T/t.ptx" >/dev/null || fail "probe changed a line of $f (epilogues)"
	echo "toolkit: $(basename "$f" | cut -c1-60) (${e:0:40}...): probed, ptxas ok"
	done_any=1
done
[ $done_any -eq 1 ] || fail "no toolkit module with mma of the kinds looked for"
