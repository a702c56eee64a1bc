#!/usr/bin/env bash
# t1910-sass-probe-check: scripts/sass-probe-check's bookkeeping, without
# the CUDA toolkit's nvdisasm: stand-ins for ptxas and nvdisasm
# (tests/fixtures/profile) turn each PTX line of code after a .loc into one
# "SASS" instruction in nvdisasm's listing format, so every interval's count
# is the number of code lines between two reads of the kept module
# (counted here from the text), and nothing has moved: exit 0.  Then the
# stand-in sinks phase 1's first mma to the end of the kernel: phase 1 is
# flagged with 1 instruction after its end read, exit 1.  What ptxas really
# does is for scripts/gpu-profile on the GPU machine.
# The architecture compiled for is the device's (the stand-in driver says
# sm_90; the module's .target is made sm_89 here, as enc4's is), else, with
# no driver, the .target, said so; D4R_SASS_ARCH overrides both.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
command -v python3 >/dev/null || skip "no python3"
stand_in_driver
mkdir -p "$T/cuda/bin"
cp "$TOP/tests/fixtures/profile/fake-ptxas" "$T/cuda/bin/ptxas.py"
cp "$TOP/tests/fixtures/profile/fake-nvdisasm" "$T/cuda/bin/nvdisasm"
# the stand-in ptxas, logging the -arch it is given
printf '#!/bin/sh\nfor a; do case $a in -arch=*) echo "$a" >>"%s/arch.log";; esac; done\nexec python3 "%s/cuda/bin/ptxas.py" "$@"\n' \
	"$T" "$T" >"$T/cuda/bin/ptxas"
chmod +x "$T/cuda/bin/ptxas" "$T/cuda/bin/nvdisasm"
export CUDA_HOME="$T/cuda"
# the small three-phase kernel as a layer (the frame is not looked at)
mkdir -p "$T/repo/recipes/smoke" "$T/repo/corpus/smoke" "$T/repo/ptx"
sed 's/^\.target sm_90/.target sm_89/' "$TOP/tests/fixtures/bisect/mma3.ptx" >"$T/repo/corpus/smoke/smoke.ptx"
grep -q '^\.target sm_89' "$T/repo/corpus/smoke/smoke.ptx" || fail "no .target to change"
head -c 1024 /dev/zero >"$T/repo/corpus/smoke/oracle.frame"
sha=$(sha256sum "$T/repo/corpus/smoke/oracle.frame" | cut -d" " -f1)
cat >"$T/repo/recipes/smoke/layer.json" <<JSON
{
  "layer": "smoke", "module": "smoke/smoke.ptx", "entry": "pattern",
  "buffers": {"out": {"size": 1024, "init": {"kind": "zero"}}},
  "launches": [
    {"entry": "pattern", "grid": [4, 1, 1], "block": [256, 1, 1],
     "params": {"size": 12, "fields": [
       {"offset": 0, "kind": "buffer", "buffer": "out"},
       {"offset": 8, "kind": "u32", "value": 90}]}}
  ],
  "frame": [{"name": "out", "buffer": "out", "format": "u8", "width": 16, "height": 16, "channels": 4}],
  "oracle": {"path": "smoke/oracle.frame", "sha256": "$sha"}
}
JSON
cd "$T/repo"
"$D4R" recipe new smoke --phase 2 --template identity -o recipes/smoke/phase-02.json >/dev/null 2>&1 ||
	fail "recipe new"
expect_rc 0 "$D4R" profile smoke --phase 2 --keep "$T/k" --no-run
K="$T/k/original.probed.ptx"

# code lines between the reads of "phase N start" and "phase N end" (N = 1..3)
# and of the prologue, counted from the text
counts=$(python3 - "$K" "$T/k/original.points.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
names = {}
for l in open(sys.argv[2]):
    k, what = l.rstrip("\n").split(": ", 1)
    for part in what.split(" = "):
        names[part] = int(k.split()[1])
at = {}
for i, l in enumerate(lines):
    m = re.search(r"// d4r-splice probe 0 value (\d+): read", l)
    if m:
        at[int(m.group(1))] = i
def code(a, b):
    n = 0
    for l in lines[a + 1:b]:
        c = re.sub(r"//.*", "", l).strip()
        n += bool(c) and not c.startswith(".") and not c.endswith(":") and c not in ("{", "}")
    return n
out = [code(at[names["phase %d start" % p]], at[names["phase %d end" % p]]) for p in (1, 2, 3)]
out.append(code(at[names["kernel start (second read)"]], at[names["phase 1 start"]]))
print(*out)
PY
)
read -r p1 p2 p3 pro <<<"$counts"
[ "$p1" = 2 ] && [ "$p2" = 1 ] && [ "$p3" = 1 ] || fail "the mma lines between the reads: $counts"
expect_rc 0 "$TOP/scripts/sass-probe-check" "$T/k"
expect_grep "^== original \(pattern, sm_90 of the device\): [0-9]+ SASS instructions .*, 0 unattributed, 10 reads found of 10$" "$T/out"
[ "$(sort -u "$T/arch.log")" = "-arch=sm_90" ] || fail "ptxas was given $(sort -u "$T/arch.log" | tr '\n' ' ')"
expect_grep "^   phase 1 +$p1 +0 +0 *$" "$T/out"
expect_grep "^   phase 2 +$p2 +0 +0 *$" "$T/out"
expect_grep "^   kernel start to phase +$pro +0 +0 *$" "$T/out"
expect_no_grep "FLAG" "$T/out"
[ -s "$T/k/sass-probe-check.tsv" ] || fail "no sass-probe-check.tsv"

mma=$(grep -n $'^\tmma.sync' "$K" | head -1 | cut -d: -f1)
FAKE_MOVE=$mma expect_rc 1 "$TOP/scripts/sass-probe-check" "$T/k"
expect_grep "^   phase 1 +$p1 +0 +1 FLAG$" "$T/out"
expect_grep "^   phase 2 +$p2 +0 +0 *$" "$T/out"
grep -q $'^original\tphase 1\t2\t0\t1\tFLAG$' "$T/k/sass-probe-check.tsv" || fail "the tsv does not flag phase 1"

# no driver: the module's .target, said so; the override
rm -f "$T/arch.log"
D4R_LIBCUDA=/nonexistent/libcuda.so.1 expect_rc 0 "$TOP/scripts/sass-probe-check" "$T/k"
expect_grep "^== original \(pattern, sm_89 of the module's .target: no CUDA device \(cannot load /nonexistent/libcuda.so.1" "$T/out"
[ "$(sort -u "$T/arch.log")" = "-arch=sm_89" ] || fail "ptxas was given $(sort -u "$T/arch.log" | tr '\n' ' ')"
D4R_SASS_ARCH=sm_100a expect_rc 0 "$TOP/scripts/sass-probe-check" "$T/k"
expect_grep "^== spliced \(pattern, sm_100a as asked \(\\\$D4R_SASS_ARCH\)\)" "$T/out"
expect_rc 0 "$TOP/scripts/sass-probe-check" "$T/k" sm_86
expect_grep "^== original \(pattern, sm_86 as asked\)" "$T/out"
expect_rc 0 "$TOP/scripts/device-arch" "$T/k/original.probed.ptx"
expect_grep "^sm_90$" "$T/out"
D4R_SASS_ARCH=90 expect_rc 2 "$TOP/scripts/device-arch"
expect_grep "D4R_SASS_ARCH='90' is not sm_NN" "$T/err"

expect_rc 2 "$TOP/scripts/sass-probe-check"
expect_rc 2 "$TOP/scripts/sass-probe-check" "$T/nothing"
expect_grep "no \*.probed.ptx in" "$T/err"
