#!/usr/bin/env bash
# phases on every PTX module of the CUDA toolkit: the output is valid JSON
# for all of them, and in every function the mma statements inside phases
# are all of its mma statements (counted independently of the phase
# locator, by `grep -c` over the statement text).
. "$D4R_TOP/tests/cli/lib.sh"
corpus=$("$TOP/scripts/toolkit-corpus") || { [ $? -eq 77 ] && skip "$corpus"; fail "no toolkit corpus"; }
python3 - "$corpus" "$D4R" <<'PY' || fail "phases on the toolkit corpus"
import concurrent.futures as cf, glob, json, os, re, subprocess, sys
corpus, d4r = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(corpus, "*.ptx")))
assert len(files) > 100, f"only {len(files)} modules in {corpus}"
mma_re = re.compile(rb"mma\.sync|mma\.sp|wmma\.mma|wgmma\.mma_async")
pattern = r"^(@!?\S+ )?(mma\.|wmma\.mma|wgmma\.mma_async)"

def check(f):
    r = subprocess.run([d4r, "phases", f, "--json"], capture_output=True)
    if r.returncode != 0:
        return f, "exit %d: %s" % (r.returncode, r.stderr[:300].decode(errors="replace")), 0
    try:
        d = json.loads(r.stdout)
    except ValueError as e:
        return f, "not JSON: %s" % e, 0
    in_phases = {fn["name"]: sum(p["gemm"]["mma"] for p in fn["phases"]) for fn in d["functions"]}
    with open(f, "rb") as fh:
        has_mma = mma_re.search(fh.read()) is not None
    if not has_mma:
        return f, None if not in_phases else "phases where there is no mma", 0
    g = subprocess.run([d4r, "grep", f, "-c", pattern], capture_output=True, text=True)
    counted = {}
    for line in g.stdout.splitlines():
        name, _, n = line.rpartition(": ")
        if int(n):
            counted[name] = int(n)
    if counted != in_phases:
        diff = {k: (in_phases.get(k), counted.get(k)) for k in set(counted) | set(in_phases)
                if in_phases.get(k) != counted.get(k)}
        return f, "in phases vs counted: %s" % list(diff.items())[:3], 0
    return f, None, sum(counted.values())

bad, n_mma_files, total = [], 0, 0
with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
    for f, err, n in ex.map(check, files):
        if err:
            bad.append((os.path.basename(f), err))
        elif n:
            n_mma_files += 1
            total += n
for b in bad[:20]:
    print("BAD", *b)
print(f"phases on {len(files)} modules: {n_mma_files} with mma statements, {total} mma, all inside phases; {len(bad)} bad")
sys.exit(1 if bad else 0)
PY
