#!/usr/bin/env bash
# t1911-profile-instrument: the modules `d4r-splice profile` would run,
# written without a GPU (--keep DIR --no-run), checked on their own terms:
# deleting the lines the probe layer inserts (the record's { } block, the
# symbol's two lines, the reads' lines and their .reg lines, each marked
# "d4r-splice probe") gives back the original's bytes and the spliced
# module's bytes exactly; every "phase N start" read is followed by an mma
# line and every "phase N end" read preceded by one (the read points
# against the text, not against the plan); the reads in the text are the
# points the plan lists; ptxas -arch=<.target> -e ENTRY accepts the
# instrumented original (skipped, exit 77, when there is no ptxas).
. "$D4R_TOP/tests/cli/lib.sh"
PTXAS="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
ENC4="$TOP/corpus/enc4/enc4.ptx"
ENTRY=cuda_dldn_engine_swin_enc4_kernel
command -v python3 >/dev/null || skip "no python3"

# strip IN : IN without the lines the probe layer inserted
strip() {
	awk '
	/^\{\t\/\/ d4r-splice probe [0-9]+:/ { inrec = 1 }
	inrec { if ($0 ~ /^\}\t\/\/ d4r-splice probe end$/) inrec = 0; next }
	/^\/\/ d4r-splice probe: dump / { sym = 1; next }
	sym { sym = 0; if ($0 ~ /^\.visible \.global \.align 8 \.u64 __d4r_probe_dump/) next }
	/\t\/\/ d4r-splice probe [0-9]+ value [0-9]+: read/ { next }
	/\t\/\/ d4r-splice probe: reads$/ { next }
	{ print }' "$1"
}

cd "$TOP"
expect_rc 0 "$D4R" profile enc4 --phase 8 --keep "$T/k" --no-run
expect_grep "^enc4 profile \(recipe recipes/enc4/phase-08.json\): modules and read points written to $T/k/ \(not run\)$" "$T/out"
for f in spliced.ptx original.probed.ptx spliced.probed.ptx original.points.txt spliced.points.txt; do
	[ -s "$T/k/$f" ] || fail "--keep: no $f"
done
strip "$T/k/original.probed.ptx" >"$T/o.ptx"
cmp "$T/o.ptx" "$ENC4" || fail "the instrumented original less the probe's lines is not the original"
strip "$T/k/spliced.probed.ptx" >"$T/s.ptx"
cmp "$T/s.ptx" "$T/k/spliced.ptx" || fail "the instrumented spliced module less the probe's lines is not the spliced module"
# the strip is not vacuous: the instrumented modules differ from their inputs
! cmp -s "$T/k/original.probed.ptx" "$ENC4" || fail "nothing was inserted"

# reads against the text: the kernel's three at its start, phase 1's start,
# 62 phase ends, 61 epilogue ends that are the next phase's starts, and the
# kernel's end, which is the last epilogue's: 128
python3 - "$T/k/original.probed.ptx" "$T/k/original.points.txt" "$T/k/spliced.probed.ptx" \
	"$T/k/spliced.points.txt" <<'PY' || fail "read points"
import re, sys
def check(ptx, points, cut_phase):
    lines = open(ptx).read().split("\n")
    names = {}
    for l in open(points):
        k, what = l.rstrip("\n").split(": ", 1)
        names[int(k.split()[1])] = what
    reads = {}
    for i, l in enumerate(lines):
        m = re.search(r"// d4r-splice probe 0 value (\d+): read", l)
        if m:
            reads[int(m.group(1))] = i
    assert sorted(reads) == sorted(names), (ptx, len(reads), len(names))
    assert len(names) == 3 + 1 + 62 + 61 + 1, len(names)
    def code(i, step):
        # the nearest line of code that is not a probe's
        i += step
        while "d4r-splice probe" in lines[i] or not lines[i].strip() or lines[i].lstrip().startswith("//"):
            i += step
        return lines[i]
    seen = 0
    for k, what in names.items():
        for part in what.split(" = "):
            m = re.fullmatch(r"phase (\d+) (start|end)", part)
            if not m:
                continue
            seen += 1
            p, where = int(m.group(1)), m.group(2)
            nb = code(reads[k], 1 if where == "start" else -1)
            if p == cut_phase and where == "start":
                # the spliced phase starts where the splice's region does
                assert nb.startswith("{\t// d4r-splice: begin "), (p, where, nb[:60])
            else:
                assert nb.lstrip().startswith("mma"), (ptx, p, where, nb[:60])
    assert seen == 124, seen
    assert names[3] == "epilogue 62 end = kernel end", names[3]
    assert names[1] == "kernel start" and names[2] == "kernel start (second read)", names
check(sys.argv[1], sys.argv[2], 0)
check(sys.argv[3], sys.argv[4], 8)
PY

# ptxas accepts the instrumented original
[ -x "$PTXAS" ] || skip "no ptxas at $PTXAS: the instrumented module was not compiled"
arch=$(grep -m1 '^\.target' "$ENC4" | awk '{print $2}' | tr -d ',')
"$PTXAS" -arch="$arch" -e $ENTRY "$T/k/original.probed.ptx" -o /dev/null 2>"$T/ptxas.err" ||
	{ head -20 "$T/ptxas.err"; fail "ptxas -arch=$arch -e $ENTRY rejects the instrumented original"; }
true
