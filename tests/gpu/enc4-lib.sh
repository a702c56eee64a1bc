# enc4-lib.sh - sourced by the enc4 GPU tests: recipe generation helpers.
# Needs lib.sh first.  $OUTD: where figures and reports go ($D4R_GPU_OUT).
OUTD=${D4R_GPU_OUT:-$T}
JOBS=${D4R_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
export D4R_CORPUS=${D4R_CORPUS:-$TOP/corpus}
"$D4R" run enc4 --runs 0 >"$T/probe.out" 2>&1
grep -q 'no CUDA driver' "$T/probe.out" && skip "no CUDA driver"

# gen_builtin DIR TEMPLATE CUT : one recipe per phase of enc4 (62), built-in
# template identity|perturb, cut phase|phase+epilogue
gen_builtin() {
	local dir=$1 tpl=$2 cut=$3 n
	mkdir -p "$dir"
	for n in $(seq 1 62); do
		"$D4R" recipe new enc4 --phase "$n" --cut "$cut" --template identity \
			-o "$dir/$tpl-$(printf %02d "$n").json" >/dev/null 2>"$T/gen.err" ||
			{ cat "$T/gen.err"; fail "recipe new enc4 --phase $n"; }
	done
	if [ "$tpl" != identity ]; then
		python3 - "$dir" "$tpl" <<'PY'
import glob, json, sys
for p in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(p)); d["template"] = sys.argv[2]; json.dump(d, open(p, "w"), indent=1)
PY
	fi
}

# count WORD FILE : lines of `check` output whose verdict is WORD
count() { awk -v w="$1" '$2 == w' "$2" | wc -l; }
