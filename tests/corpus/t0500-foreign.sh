#!/usr/bin/env bash
# The foreign-PTX corpus (tests/fixtures/foreign: nvcc, clang, Triton and
# hand-written modules; scripts/gen-foreign, scripts/gen-foreign-triton):
#
#  1. every module round-trips byte for byte, and ptxas -arch=<its .target>
#     accepts it (when ptxas is here);
#  2. `phases --json` at gap 0 and at the corpus gap agrees with the
#     independent checker (tests/checker/ptx_gemm.py: phases, statement
#     ranges, mma, m_tiles, n_tiles, k_chain_len, chains, k, banded), and
#     every mma statement is in a phase, .func bodies included;
#  3. the facts of expected.json (written by hand from the kernels' source):
#     gemm fields, A kinds (and the opcodes A comes through), C kinds (and a
#     loop-carried accumulator's entry kind and space), B addresses (base
#     parameter, offsets and tid.x stride exactly, or unresolved), and with
#     `show --live` the live-in / live-out counts; the checker must agree
#     with expected.json on the gemm fields too, so a wrong expectation
#     fails as well;
#  4. `splice --every-phase` with identity and perturb over every module:
#     no failure, every phase spliced or named as skipped, and a run that
#     splices nothing exits 2; when ptxas is here, the phases spliced
#     together (--together --check=ptxas: one ptxas run a module, not one a
#     phase) and every one of them accepted;
#  5. perturb on a wgmma phase, cut alone and with its epilogue, never
#     touches an accumulator between wgmma.mma_async and its
#     wgmma.wait_group: the splice refuses saying why, or the add follows a
#     wait and ptxas on the spliced module injects no wait and warns nothing.
#
# Every wrong fact is printed as one line: module, function, phase, fact,
# expected, found.
. "$D4R_TOP/tests/cli/lib.sh"
FX="$TOP/tests/fixtures/foreign"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -f "$FX/expected.json" ] || fail "no $FX/expected.json"
if [ ! -x "$PTXAS" ]; then
	skip_part "no $PTXAS, so the modules and splices were not given to ptxas"
	PTXAS=
fi
python3 - "$D4R" "$FX" "$TOP/tests/checker/ptx_gemm.py" "$T" "$PTXAS" <<'PY' || exit 1
import json, os, re, subprocess, sys

d4r, fx, checker, tmp, ptxas = sys.argv[1:6]
exp = json.load(open(os.path.join(fx, "expected.json")))
GAP = exp["gap"]
GEMM = ["mma", "m_tiles", "n_tiles", "k_chain_len", "chains", "k", "banded"]
wrong, checked = [], 0


def bad(mod, fn, ph, fact, want, got):
    wrong.append((mod, fn, ph, fact, want, got))


def run(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True)


def target(path):
    for line in open(path, errors="replace"):
        m = re.match(r"\s*\.target\s+(\w+)", line)
        if m:
            return m.group(1)


mods = sorted(os.path.relpath(os.path.join(r, f), fx) for r, _, fs in os.walk(fx)
              for f in fs if f.endswith(".ptx"))
assert len(mods) >= 25, "only %d modules in %s" % (len(mods), fx)
missing = sorted(set(exp["modules"]) - set(mods))
assert not missing, "expected.json names modules that are not there: %s" % missing
unlisted = sorted(set(mods) - set(exp["modules"]))
assert not unlisted, "modules without expectations: %s" % unlisted

# 1. round trip and ptxas
for m in mods:
    p = os.path.join(fx, m)
    r = run(d4r, "roundtrip", p)
    checked += 1
    if r.returncode != 0:
        bad(m, "-", "-", "roundtrip", "exit 0", "exit %d: %s" % (r.returncode, r.stderr.strip().splitlines()[0] if r.stderr.strip() else ""))
    if ptxas:
        r = run(ptxas, "-arch=" + target(p), p, "-o", os.devnull)
        assert r.returncode == 0, "ptxas rejects %s: %s" % (m, r.stderr)


def tool_phases(p, gap):
    r = run(d4r, "phases", p, "--json", "--gap", str(gap))
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[0] if r.stderr.strip() else "exit %d" % r.returncode
    return json.loads(r.stdout), None


def check_facts(p, gap):
    r = run(sys.executable, checker, "--gap", str(gap), p)
    assert r.returncode == 0, "checker failed on %s: %s" % (p, r.stderr)
    return json.loads(r.stdout)


def fn_match(name, key):
    return re.search(key[3:], name) if key.startswith("re:") else name == key


# 2. the tool against the checker, gap 0 and the corpus gap
tool_at, chk_at = {}, {}
for m in mods:
    p = os.path.join(fx, m)
    for gap in (0, GAP):
        t, err = tool_phases(p, gap)
        c = check_facts(p, gap)
        tool_at[(m, gap)], chk_at[(m, gap)] = t, c
        checked += 1
        if t is None:
            bad(m, "-", "-", "phases --gap %d" % gap, "exit 0", err)
            continue
        tf = {f["name"]: f for f in t["functions"]}
        for cf in c["functions"]:
            f = tf.get(cf["name"])
            short = cf["name"][:40]
            checked += 1
            if f is None:
                bad(m, short, "-", "function with mma (gap %d)" % gap, "%d mma" % cf["mma"], "absent")
                continue
            inph = sum(x["gemm"]["mma"] for x in f["phases"])
            if inph != cf["mma"]:
                bad(m, short, "-", "mma in phases (gap %d)" % gap, cf["mma"], inph)
            if len(f["phases"]) != len(cf["phases"]):
                bad(m, short, "-", "phases (gap %d)" % gap, len(cf["phases"]), len(f["phases"]))
                continue
            for cp, tp in zip(cf["phases"], f["phases"]):
                g = tp["gemm"]
                for k in ["mma_stmt_range"] + GEMM:
                    checked += 1
                    if g.get(k) != cp[k]:
                        bad(m, short, cp["phase"], "%s (gap %d, checker)" % (k, gap), cp[k], g.get(k))

# 3. expected.json: gemm facts, kinds, addresses, live counts
def kernel_map(spec):
    ks = spec["kernels"]
    return {k: k for k in ks} if isinstance(ks, list) else ks


for m, spec in sorted(exp["modules"].items()):
    p = os.path.join(fx, m)
    t, c = tool_at[(m, GAP)], chk_at[(m, GAP)]
    facts = spec.get("facts")
    for fkey, kname in kernel_map(spec).items():
        want = exp["kernels"][kname]["phases"]
        cf = [f for f in c["functions"] if fn_match(f["name"], fkey)]
        assert len(cf) == 1, "%s: checker finds %d functions for '%s'" % (m, len(cf), fkey)
        fname = cf[0]["name"]
        short = fname[:40]
        # the expectation itself against the checker
        assert len(cf[0]["phases"]) == len(want), \
            "%s %s: expected.json has %d phases, the checker finds %d at gap %d" % (m, short, len(want), len(cf[0]["phases"]), GAP)
        for i, (w, cp) in enumerate(zip(want, cf[0]["phases"]), 1):
            for k in GEMM + ["shape"]:
                assert w[k] == cp[k], "%s %s phase %d: expected.json says %s %s, the checker %s" % (m, short, i, k, w[k], cp[k])
        if spec.get("func_kind"):
            checked += 1
            if cf[0]["kind"] != spec["func_kind"]:
                bad(m, short, "-", "function kind", spec["func_kind"], cf[0]["kind"])
        if t is None:
            continue
        tf = [f for f in t["functions"] if f["name"] == fname]
        if not tf or len(tf[0]["phases"]) != len(want):
            continue  # already reported against the checker
        for i, (w, tp) in enumerate(zip(want, tf[0]["phases"]), 1):
            g, a, cop = tp["gemm"], tp["a_source"], tp["c_operand"]
            for k in (facts or GEMM + ["shape", "a_source", "c_operand", "b_address", "live_in", "live_out"]):
                if k not in w:
                    continue
                checked += 1
                if k in GEMM or k == "shape":
                    if g.get(k) != w[k]:
                        bad(m, short, i, k, w[k], g.get(k))
                elif k == "a_source":
                    got = a.get("kind")
                    stems = [t.split(".")[0] for t in a.get("through", [])]
                    if got != w[k]["kind"]:
                        bad(m, short, i, "A kind", w[k]["kind"], got)
                    elif "from_phase" in w[k] and a.get("from_phase") != w[k]["from_phase"]:
                        bad(m, short, i, "A from_phase", w[k]["from_phase"], a.get("from_phase"))
                    elif "through" in w[k] and not set(w[k]["through"]) <= set(stems):
                        bad(m, short, i, "A through", w[k]["through"], a.get("through"))
                elif k == "c_operand":
                    wk = w[k]
                    desc = wk["kind"] + ("(entry %s)" % wk["entry"] if "entry" in wk else "")
                    got = cop.get("kind")
                    gdesc = str(got) + ("(entry %s)" % cop.get("entry") if "entry" in cop else "")
                    if got != wk["kind"] or ("entry" in wk and cop.get("entry") != wk["entry"]):
                        bad(m, short, i, "C kind", desc, gdesc)
                    elif "space" in wk and cop.get("space") != wk["space"]:
                        bad(m, short, i, "C space", wk["space"], cop.get("space"))
                    elif "entry_space" in wk and cop.get("entry_space") != wk["entry_space"]:
                        bad(m, short, i, "C entry space", wk["entry_space"], cop.get("entry_space"))
                elif k == "b_address":
                    # resolved exactly (the base parameter, the offsets and
                    # the tid.x stride) or unresolved (null)
                    wb = g.get("weight_bytes")
                    ok = wb is None or (wb == w[k]["offsets"] and
                                        g.get("weight_stride") == {"%tid.x": w[k]["tid_stride"]} and
                                        str(g.get("weight_base", "")).endswith("_param_%d" % w[k]["param"]))
                    if not ok:
                        bad(m, short, i, "B bytes", "param_%d + %d*tid.x + %s, or unresolved"
                            % (w[k]["param"], w[k]["tid_stride"], w[k]["offsets"]),
                            "%s weight_bytes %s, weight_stride %s" % (g.get("weight_base"), wb, g.get("weight_stride")))
                elif k in ("live_in", "live_out"):
                    r = run(d4r, "show", p, "--entry", fname, "--phase", str(i), "--live", "--gap", str(GAP))
                    mm = re.search(r"^%s \((\d+)\)" % k.replace("_", "-"), r.stdout, re.M)
                    got = int(mm.group(1)) if mm else "exit %d" % r.returncode
                    if got != w[k]:
                        bad(m, short, i, k.replace("_", "-"), w[k], got)
    for sc in spec.get("stmt_checks", []):
        r = run(d4r, "show", p, "--entry", sc["entry"], "--stmts", "%d:%d" % tuple(sc["stmts"]), "--live")
        mm = re.search(r"^live-in \((\d+)\)", r.stdout, re.M)
        got = int(mm.group(1)) if mm else "exit %d" % r.returncode
        checked += 1
        if got != sc["live_in"]:
            bad(m, sc["entry"], "s%d-s%d" % tuple(sc["stmts"]), "live-in", sc["live_in"], got)

# 4. identity and perturb into every phase
for m in mods:
    p = os.path.join(fx, m)
    c = chk_at[(m, 0)]
    nph = sum(len(f["phases"]) for f in c["functions"])
    for tpl in ("identity", "perturb"):
        # each phase alone, in memory (bytes outside the cut kept)
        r = run(d4r, "splice", "--module", p, "--every-phase", "--template", tpl)
        out = r.stdout + r.stderr
        ok = len(re.findall(r"^ok ", out, re.M))
        skipped = len(re.findall(r"^skip", out, re.M))
        fails = [l for l in out.splitlines() if l.startswith("FAIL")]
        checked += 1
        if fails:
            bad(m, "-", "-", "splice %s" % tpl, "no FAIL", fails[0][:150])
        elif ok + skipped != nph:
            bad(m, "-", "-", "splice %s: phases spliced or named skipped" % tpl, nph,
                "%d spliced, %d skipped, exit %d" % (ok, skipped, r.returncode))
        elif ok == 0 and r.returncode != 2:
            bad(m, "-", "-", "splice %s that splices nothing" % tpl, "exit 2", "exit %d" % r.returncode)
        elif ok > 0 and r.returncode != 0:
            bad(m, "-", "-", "splice %s" % tpl, "exit 0", "exit %d" % r.returncode)
        if not ptxas or ok == 0:
            continue
        # ptxas: every phase of the module spliced together, one run (the
        # same proof as a run per phase: each region is in the module,
        # which ptxas compiles entry by entry), instead of 214 runs a template
        r = run(d4r, "splice", "--module", p, "--every-phase", "--together", "--template", tpl,
                "--check=ptxas")
        out = r.stdout + r.stderr
        fails = [l for l in out.splitlines() if l.startswith("FAIL")]
        together = sum(int(x) for x in re.findall(r"^ok +.*: (\d+) of \d+ phases spliced together .*, ptxas (?:ok|accepts)", out, re.M))
        checked += 1
        if fails or r.returncode != 0:
            bad(m, "-", "-", "splice %s --together --check=ptxas" % tpl, "exit 0, no FAIL",
                "exit %d: %s" % (r.returncode, (fails or [""])[0][:150]))
        elif together != ok:
            bad(m, "-", "-", "splice %s --together: phases through ptxas" % tpl, ok, together)

# 5. perturb and wgmma's asynchronous accumulators
for m, spec in sorted(exp["modules"].items()):
    if not spec.get("wgmma"):
        continue
    p = os.path.join(fx, m)
    t = tool_at[(m, 0)]
    if t is None:
        continue
    for f in t["functions"]:
        for ph, cut in [(ph, cut) for ph in f["phases"] for cut in ("phase", "phase+epilogue")]:
            rec = os.path.join(tmp, "r.json")
            outp = os.path.join(tmp, "p.ptx")
            for x in (rec, outp):
                if os.path.exists(x):
                    os.remove(x)
            r = run(d4r, "recipe", "new", "foreign", "--module", p, "--entry", f["name"],
                    "--phase", str(ph["phase"]), "--cut", cut, "--template", "perturb", "-o", rec)
            if r.returncode == 0:
                r = run(d4r, "splice", "--module", p, "--entry", f["name"], "--recipe", rec, "-o", outp)
            checked += 1
            if r.returncode != 0:
                if not re.search(r"wgmma|wait_group|async", r.stdout + r.stderr):
                    bad(m, f["name"], ph["phase"], "perturb refusal (%s)" % cut, "a reason naming wgmma", (r.stdout + r.stderr).strip()[:150])
                continue
            # the add lands after the wait, on its line
            pl = [l for l in open(outp) if "d4r-splice: perturb" in l]
            if len(pl) != 1 or not re.search(r"wgmma\.wait_group.*;.*add\.", pl[0]):
                bad(m, f["name"], ph["phase"], "perturb after the wait (%s)" % cut,
                    "one add after a wgmma.wait_group", pl[0].strip()[:150] if pl else "none")
            if ptxas:
                rp = run(ptxas, "-arch=" + target(outp), outp, "-o", os.devnull)
                msgs = [l for l in (rp.stdout + rp.stderr).splitlines() if re.search(r"inject|serializ|warning", l)]
                if rp.returncode != 0 or msgs:
                    bad(m, f["name"], ph["phase"], "perturb between wgmma and its wait",
                        "after the wait, or refused", (msgs[0] if msgs else "ptxas exit %d" % rp.returncode)[:150])

for w in wrong:
    print("WRONG  %s | %s | p%s | %s | expected: %s | found: %s" % tuple(str(x) for x in w))
print("foreign corpus: %d modules, %d facts checked, %d wrong" % (len(mods), checked, len(wrong)))
sys.exit(1 if wrong else 0)
PY
test_done
