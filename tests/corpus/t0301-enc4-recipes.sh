#!/usr/bin/env bash
# enc4: every native recipe (the 62 phases in the vendor's instruction and in
# exact f16 form: recipes/enc4/phase-NN.json, phase-NN-f16.json) splices into
# the committed stand-in, passes every check of the tool, and the spliced
# module passes ptxas -e ENTRY; so do the two whole-layer selections
# (--phases 1-62, and with --variant f16) and the identity of every phase
# spliced together.
#
# ptxas takes 10-40 s on this kernel, so it runs three times, not 127: on
# the identity of the 62 phases together, and on each variant's 62 recipes
# spliced into one module (`splice enc4 --phases 1-62 [--variant f16]`).
# Why that proves each recipe's own module ptxas-clean:
#   - each recipe is spliced alone (`splice enc4 --phase N`), and its module
#     M is checked here, byte for byte, to be the original O with one region
#     in place of the recipe's cut: M's bytes before the region are O's, and
#     those after it are O's after the cut (so the cut is what O has between);
#   - the variant's together-module T holds, for every recipe, a region for
#     the same statement range that is M's region byte for byte, but for
#     the fresh-register prefix (%spl0_ in M, %splK_ in T: a renaming of
#     names that occur nowhere else), and T with each region put back to
#     its cut is O byte for byte: T is O with exactly those 62 edits;
#   - so every statement of M is either a statement of O (ptxas accepts O:
#     tests/cli/t1401, every entry, sm_89 and sm_90) or one of the region's,
#     which ptxas accepted in T in the same function, in the same { } scope
#     with the same declarations (a region declares its own registers in
#     its scope; outside it M and T declare what O does).  What ptxas
#     rejects is a statement against its operands' declarations and types;
#     the whole-kernel limits (registers, shared memory) are lower in M than
#     in T, which carries every region's at once.
# When a together-module fails ptxas, its variant's recipes go through
# ptxas one by one (`recipe check --ptxas`) to name the recipe.  Each
# recipe still goes through every other check alone (`recipe check`
# without --ptxas: the guards, the template against its header, the cut
# interface, the splice).  ptxas's answers are cached (a second run costs
# no ptxas run); the time each part took is printed.
. "$D4R_TOP/tests/cli/lib.sh"
M="$D4R_TOP/corpus/enc4/enc4.ptx"
E=cuda_dldn_engine_swin_enc4_kernel
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
[ -f "$M" ] || skip "no corpus/enc4/enc4.ptx"
[ -x "$PTXAS" ] || skip "no $PTXAS"
command -v python3 >/dev/null || skip "no python3"
cd "$D4R_TOP" || exit 1
jobs=${D4R_PTXAS_JOBS:-$(nproc 2>/dev/null || echo 2)}
recipes=$(ls recipes/enc4/phase-*.json)
[ "$(echo "$recipes" | wc -l)" -eq 124 ] || fail "expected 124 enc4 recipes, found $(echo "$recipes" | wc -l)"

# the identity of every phase alone keeps the bytes outside its cut (the
# statement span from the parse, not the splicer's region)
expect_rc 0 "$D4R" splice --module "$M" --entry $E --every-phase
[ "$(grep -c '^ok ' "$T/out")" -eq 62 ] || fail "not 62 identity splices"

# the three ptxas runs at once: all 62 identities together, and each
# variant's 62 recipes in one module
t0=$SECONDS
"$D4R" splice --module "$M" --entry $E --every-phase --together --check=ptxas >"$T/tog" 2>&1 &
p0=$!
"$D4R" splice enc4 --phases 1-62 --check=ptxas -o "$T/layer.ptx" >"$T/l" 2>&1 &
p1=$!
"$D4R" splice enc4 --phases 1-62 --variant f16 --check=ptxas -o "$T/layerf16.ptx" >"$T/lf16" 2>&1 &
p2=$!
wait $p0 || { cat "$T/tog"; fail "identity of every phase: ptxas rejects it"; }
expect_grep "^ok +$E: 62 of 62 phases spliced together \(identity\), ptxas ok" "$T/tog"
rej=()
wait $p1 || rej+=("")
wait $p2 || rej+=(f16)
echo "ptxas on the identity together and on phases 1-62 of both variants: $((SECONDS - t0)) s"
for v in "${rej[@]}"; do
	# name the recipe: that variant's recipes through ptxas one by one
	cat "$T/l$v"
	sel=$(echo "$recipes" | if [ -n "$v" ]; then grep -- "-$v\.json$"; else grep -E 'phase-[0-9]+\.json$'; fi)
	"$D4R" recipe check --ptxas --jobs "$jobs" $sel >"$T/one.out" 2>"$T/one.err"
	grep '^FAIL' "$T/one.out"
	head -c 4000 "$T/one.err"
	fail "--phases 1-62 ${v:+--variant $v}: ptxas rejects the module"
done
for v in "" f16; do
	expect_grep "^ptxas: +-arch=sm_89 -e $E: ok" "$T/l$v"
done

# every recipe alone, through every check but ptxas
t0=$SECONDS
"$D4R" recipe check --jobs "$jobs" $recipes >"$T/rc.out" 2>"$T/rc.err" || {
	grep '^FAIL' "$T/rc.out"
	head -c 4000 "$T/rc.err"
	fail "a recipe fails its checks"
}
[ "$(grep -c '^ok ' "$T/rc.out")" -eq 124 ] || fail "not 124 recipes checked"
echo "124 recipes checked alone (no ptxas): $((SECONDS - t0)) s"

# each recipe's own module against the together-module of its variant
t0=$SECONDS
python3 - "$D4R" "$M" "$T" "$jobs" $recipes <<'PY' || fail "a recipe's splice is not the together-module's"
import concurrent.futures as cf, os, re, subprocess, sys
d4r, orig_path, tmp, jobs, recipes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
orig = open(orig_path, "rb").read()
BEGIN = re.compile(rb"\{\t// d4r-splice: begin (\S+) for s(\d+)\.\.s(\d+) \(fresh prefix %spl\d+_\)\n")
END = b"}\t// d4r-splice: end"

def regions(text):
    """(first, last) -> (start, end, the region with its prefix as %spl#_)"""
    out = {}
    for m in BEGIN.finditer(text):
        e = text.index(END, m.end()) + len(END)
        key = (int(m.group(2)), int(m.group(3)))
        assert key not in out, "two regions for s%d..s%d" % key
        out[key] = (m.start(), e, re.sub(rb"%spl\d+_", b"%spl#_", text[m.start():e]))
    return out

together = {v: open(os.path.join(tmp, "layer%s.ptx" % v), "rb").read() for v in ("", "f16")}
treg = {v: regions(t) for v, t in together.items()}
for v, r in treg.items():
    assert len(r) == 62, "%d regions in the --variant '%s' module" % (len(r), v)

def one(path):
    m = re.search(r"phase-(\d+)(-f16)?\.json$", path)
    v = "f16" if m.group(2) else ""
    cmd = [d4r, "splice", "enc4", "--phase", str(int(m.group(1))), "-q", "-o", "-"]
    if v:
        cmd += ["--variant", v]
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode:
        return path, v, None, "splice exit %d: %s" % (r.returncode, r.stderr[:300])
    text = r.stdout
    reg = regions(text)
    if len(reg) != 1:
        return path, v, None, "%d regions in its module" % len(reg)
    (key, (s, e, norm)), = reg.items()
    tail = len(text) - e
    if text[:s] != orig[:s] or text[e:] != orig[len(orig) - tail:]:
        return path, v, None, "bytes outside its region are not the original's"
    if treg[v].get(key, (0, 0, None))[2] != norm:
        return path, v, None, "its region for s%d..s%d is not the together-module's" % key
    return path, v, (key, orig[s:len(orig) - tail]), None

bad, cuts = [], {"": {}, "f16": {}}
with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
    for path, v, cut, err in ex.map(one, recipes):
        if err:
            bad.append("%s: %s" % (path, err))
        else:
            cuts[v][cut[0]] = cut[1]
for b in bad[:20]:
    print("FAIL", b)
if bad:
    sys.exit(1)
# the together-module with each region put back to its cut is the original
for v, t in together.items():
    assert set(cuts[v]) == set(treg[v]), "--variant '%s': the recipes' cuts are not the module's regions" % v
    out, at = [], 0
    for key in sorted(treg[v], key=lambda k: treg[v][k][0]):
        s, e, _ = treg[v][key]
        out += [t[at:s], cuts[v][key]]
        at = e
    out.append(t[at:])
    assert b"".join(out) == orig, "--variant '%s': outside its 62 regions the module is not the original" % v
print("124 recipes: each one's module is the original with one region, and that region is its variant's together-module's (ptxas ok)")
PY
echo "124 recipes' modules against the together-modules: $((SECONDS - t0)) s"
exit 0
