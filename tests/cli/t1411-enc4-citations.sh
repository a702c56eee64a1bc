#!/usr/bin/env bash
# Every statement number and PTX line that seed 002 cites is, in the stand-in,
# what the seed says it is:
#   s1033          ld.param.v2.u16 of the two u16 block-origin offsets at param+80
#   s7547          sets to 0 the C register of phases 1 and 2, at PTX line 11871
#   lines 11883-12044  the 24 mma of phase 1; their A operands name the
#                  registers loaded from the arena at offsets 0, 2560, ..., 12800
#   s7908          the first of E10's 80 e4m3 packs (cvt.rn.satfinite.e4m3x2.f16x2)
#   s8028-s8040    phase 11's mma of m-tile 0 and m-tile 1 (n-tile 0): their C
#                  bias pairs are 512 bytes apart (10560, 11072)
#   s19817         the plane arena, param_0+80-32 (+48), the base of E60's plane
#                  scatter
#   s20051-s20215  E60's 20 st.shared.u32 of the staging, the first and the last
#   s20242-s21030  the 80 ld.shared.u32 that phase 61 reads as its A, at
#                  arena + (idx2 << 2) + {0, 1024, ..., 7168}
#   s21037         the small output buffer, param_0+80-24 (+56), the base of
#                  E60's store of the statistics
# Each is checked twice: with d4r-splice's own show, grep and phases output,
# and with a plain scan of the PTX text (one statement per line ending in ';'
# inside the entry's braces, numbered from 0) that shares no code with it.
# The seed's register numbers (%r11676, %r11754, ...) are nvcc's business and
# not compared.
. "$D4R_TOP/tests/cli/lib.sh"
M=$TOP/corpus/enc4/enc4.ptx
E=cuda_dldn_engine_swin_enc4_kernel
[ -f "$M" ] || fail "no $M"
command -v python3 >/dev/null || skip "python3 not found"

# ---- through d4r-splice ------------------------------------------------------
show() { "$D4R" show "$M" --entry $E --stmts "$1" >"$T/show" 2>&1 || { cat "$T/show"; fail "show --stmts $1"; }; }
# line LABEL N : the shown line of sN ("> sN LNNN text")
sline() { grep -E "^> s$1 +L" "$T/show" || fail "show has no s$1"; }

show 1033:1033
sline 1033 | grep -Eq '^> s1033 +L[0-9]+ +ld\.param\.v2\.u16 \{%rs[0-9]+, %rs[0-9]+\}, \[cuda_dldn_engine_swin_enc4_kernel_param_0\+80\];$' ||
	fail "s1033 is not the ld.param.v2.u16 of +80: $(sline 1033)"

show 7547:7547
z=$(sline 7547 | sed -nE 's/^> s7547 +L11871 +mov\.b32 (%r[0-9]+), 0;$/\1/p')
[ -n "$z" ] || fail "s7547 at line 11871 is not mov.b32 %r, 0: $(sline 7547)"
expect_rc 0 "$D4R" phases "$M" --entry $E --json
cp "$T/out" "$T/phases.json"
"$D4R" show "$M" --entry $E --phase 1 >"$T/p1" 2>&1 || fail "show --phase 1"
"$D4R" show "$M" --entry $E --phase 2 >"$T/p2" 2>&1 || fail "show --phase 2"
"$D4R" show "$M" --entry $E --phase 61 >"$T/p61" 2>&1 || fail "show --phase 61"
"$D4R" grep "$M" 'ld\.shared\.v4\.u32' --entry $E >"$T/ldsv4" 2>&1 || fail "grep ld.shared.v4"
python3 - "$T" "$z" <<'PY' || fail "the citations differ from seed 002 (d4r-splice's view)"
import json, re, sys
T, z = sys.argv[1:3]
ph = json.load(open(T + "/phases.json"))["functions"][0]["phases"]
bad = []
def want(what, ok):
    if not ok:
        bad.append(what)
def shown(path):
    out = []
    for l in open(path):
        m = re.match(r"^> s(\d+) +L(\d+) +(.*)$", l.rstrip("\n"))
        if m:
            out.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return out
MMA = re.compile(r"^mma\.sync\S* \{(%r\d+), (%r\d+)\}, \{([^}]*)\}, \{([^}]*)\}, \{([^}]*)\};$")
# phases 1 and 2: C is the zero register of s7547, the tool's evidence says so
for n, path in ((1, T + "/p1"), (2, T + "/p2")):
    want("phase %d: c_operand zero from s7547" % n,
         ph[n - 1]["c_operand"]["kind"] == "zero" and ph[n - 1]["c_operand"].get("evidence_stmt") == 7547)
    for s, line, text in shown(path):
        m = MMA.match(text)
        want("phase %d s%d: C is {%s, %s}" % (n, s, z, z), m and m.group(5) == "%s, %s" % (z, z))
# phase 1 at lines 11883-12044, 24 mma; 6 distinct A tuples from ld.shared.v4 at 2560*t
p1 = shown(T + "/p1")
want("phase 1: 24 mma at lines 11883 + 7k", [l for _, l, _ in p1] == [11883 + 7 * k for k in range(24)])
want("phase 1: s7554-s7577", [s for s, _, _ in p1] == list(range(7554, 7578)))
atup = []
for _, _, text in p1:
    a = MMA.match(text).group(3)
    if a not in atup:
        atup.append(a)
loads = {}
for l in open(T + "/ldsv4"):
    m = re.search(r":s(\d+):(\d+): *ld\.shared\.v4\.u32 \{([^}]*)\}, \[(%r\d+)(?:\+(\d+))?\];", l)
    if m:
        loads[m.group(3)] = (int(m.group(1)), m.group(4), int(m.group(5) or 0))
offs = [loads[a][2] if a in loads and loads[a][0] < 7554 else None for a in atup]
bases = {loads[a][1] for a in atup if a in loads}
want("phase 1: A tuples loaded at arena offsets 0..12800 from one base, got %s" % offs,
     offs == [2560 * t for t in range(6)] and len(bases) == 1)
want("phase 1: the tool's arena_byte_offsets",
     ph[0]["a_source"].get("arena_byte_offsets") == [2560 * t for t in range(6)])
# E10 and s7908
want("phase 10's epilogue is s7857-s8027", ph[9]["gemm"]["epilogue_stmt_range"] == [7857, 8027])
want("phase 11's A is converted from phase 9",
     ph[10]["a_source"]["kind"] == "converted" and ph[10]["a_source"].get("from_phase") == 9)
ev = ph[9]["epilogue"]["evidence"].get("e4m3_requantise", [])
want("E10's e4m3 packs: 80, from s7908 (got %d, first %s)" % (len(ev), ev[:1]),
     len(ev) == 80 and ev[0] == 7908 and all(7908 <= s <= 8027 for s in ev))
# phase 61's A: 80 registers, loaded at s20242-s21030
a61 = set()
for _, _, text in shown(T + "/p61"):
    a61.update(MMA.match(text).group(3).split(", "))
want("phase 61: 80 A registers", len(a61) == 80)
open(T + "/a61", "w").write("\n".join(sorted(a61)) + "\n")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

show 7908:7908
sline 7908 | grep -Eq '^> s7908 +L[0-9]+ +cvt\.rn\.satfinite\.e4m3x2\.f16x2 %rs[0-9]+, %r[0-9]+;$' ||
	fail "s7908 is not an e4m3 pack: $(sline 7908)"

# s8028 and s8040: phase 11, m-tile 0 / 1 of n-tile 0; their C from 10560 / 11072
show 8028:8040
for s in 8028 8040; do
	sline $s | grep -Eq '^> s'$s' +L[0-9]+ +mma\.sync\.aligned\.m16n8k32' || fail "s$s is not an mma: $(sline $s)"
done
a0=$(sline 8028 | sed -nE 's/.*\}, \{([^}]*)\}, \{[^}]*\}, \{[^}]*\};$/\1/p')
a1=$(sline 8040 | sed -nE 's/.*\}, \{([^}]*)\}, \{[^}]*\}, \{[^}]*\};$/\1/p')
[ -n "$a0" ] && [ "$a0" != "$a1" ] || fail "s8028 and s8040 have the same A (not two m-tiles)"
# the C registers' loads: their byte offsets (the register's place in a vector load adds 4 each)
coff() {  # STMT -> the two byte offsets of its C registers
	local c r
	c=$(sline "$1" | sed -nE 's/.*\{(%r[0-9]+), (%r[0-9]+)\};$/\1 \2/p')
	for r in $c; do
		"$D4R" grep "$M" "^ld\\.global[.a-z0-9]*u32 .*[{ ]${r}[,}]" --entry $E >"$T/g" 2>&1 ||
			"$D4R" grep "$M" "^ld\\.global[.a-z0-9]*u32 ${r}," --entry $E >"$T/g" 2>&1 || fail "no load of $r"
		python3 - "$T/g" "$r" <<'PY'
import re, sys
l = open(sys.argv[1]).readline()
m = re.search(r"u32 (\{[^}]*\}|%r\d+), \[%rd\d+\+(\d+)\];", l)
regs = m.group(1).strip("{}").split(", ")
print(int(m.group(2)) + 4 * regs.index(sys.argv[2]))
PY
	done
}
[ "$(coff 8028 | tr '\n' ' ')" = "10560 10564 " ] || fail "s8028's C is not the bias pair at 10560: $(coff 8028)"
[ "$(coff 8040 | tr '\n' ' ')" = "11072 11076 " ] || fail "s8040's C is not the bias pair at 11072: $(coff 8040)"

show 19817:19817
sline 19817 | grep -Eq '^> s19817 +L[0-9]+ +ld\.param\.u64 %rd[0-9]+, \[cuda_dldn_engine_swin_enc4_kernel_param_0\+48\];$' ||
	fail "s19817 is not the ld.param.u64 of +48 (80 - 32): $(sline 19817)"
show 21037:21037
sline 21037 | grep -Eq '^> s21037 +L[0-9]+ +ld\.param\.u64 %rd[0-9]+, \[cuda_dldn_engine_swin_enc4_kernel_param_0\+56\];$' ||
	fail "s21037 is not the ld.param.u64 of +56 (80 - 24): $(sline 21037)"

# E60's staging and phase 61's reads
show 19757:21137
grep -E '^> s[0-9]+ ' "$T/show" | awk '$4 == "st.shared.u32" { print substr($2, 2) }' >"$T/sts"
[ "$(wc -l <"$T/sts")" -eq 20 ] || fail "E60 has $(wc -l <"$T/sts") st.shared.u32, seed 002 says 20"
[ "$(head -n1 "$T/sts")" = 20051 ] && [ "$(tail -n1 "$T/sts")" = 20215 ] ||
	fail "E60's staging stores run s$(head -n1 "$T/sts")-s$(tail -n1 "$T/sts"), not s20051-s20215"
grep -E '^> s[0-9]+ ' "$T/show" | awk '$4 == "ld.shared.u32"' >"$T/lds"
[ "$(wc -l <"$T/lds")" -eq 80 ] || fail "E60 has $(wc -l <"$T/lds") ld.shared.u32, seed 002 says 80"
[ "$(head -n1 "$T/lds" | awk '{print $2}')" = s20242 ] && [ "$(tail -n1 "$T/lds" | awk '{print $2}')" = s21030 ] ||
	fail "E60's ld.shared.u32 do not run s20242-s21030"
sed -nE 's/.* ld\.shared\.u32 (%r[0-9]+), \[%r[0-9]+(\+[0-9]+)?\];$/\1/p' "$T/lds" | sort >"$T/ldregs"
cmp -s "$T/ldregs" "$T/a61" || fail "the 80 ld.shared.u32 of s20242-s21030 are not phase 61's A registers"
sed -nE 's/.* ld\.shared\.u32 %r[0-9]+, \[%r[0-9]+\+?([0-9]*)\];$/\1/p' "$T/lds" | sort -un | tr '\n' ' ' >"$T/offs"
[ "$(cat "$T/offs")" = "0 1024 2048 3072 4096 5120 6144 7168 " ] ||
	[ "$(cat "$T/offs")" = " 1024 2048 3072 4096 5120 6144 7168 " ] ||
	fail "phase 61's A offsets are not {0, 1024, ..., 7168}: $(cat "$T/offs")"

# ---- a plain scan of the text -----------------------------------------------
python3 - "$M" <<'PY' || fail "the citations differ from seed 002 (plain scan of the PTX)"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith(".visible .entry cuda_dldn_engine_swin_enc4_kernel("))
open_ = next(i for i in range(start, len(lines)) if lines[i].strip() == "{")
close = next(i for i in range(open_ + 1, len(lines)) if lines[i].strip() == "}")
st = []                                   # (line number, text)
for i in range(open_ + 1, close):
    t = lines[i].split("//")[0].strip()
    if not t or t.startswith(".") or t.endswith(":"):
        continue
    if not t.endswith(";") or t.count(";") != 1:
        sys.exit("line %d: not one statement per line: %r" % (i + 1, t))
    st.append((i + 1, t[:-1]))
bad = []
def want(what, ok):
    if not ok:
        bad.append(what)
op = lambda k: st[k][1].split()[0]
want("s21668 is ret and the last statement", len(st) == 21669 and st[21668][1] == "ret")
P = "cuda_dldn_engine_swin_enc4_kernel_param_0"
want("s1033: ld.param.v2.u16 of +80", re.fullmatch(r"ld\.param\.v2\.u16 \{%rs\d+, %rs\d+\}, \[" + P + r"\+80\]", st[1033][1]))
m = re.fullmatch(r"mov\.b32 (%r\d+), 0", st[7547][1])
want("s7547 at line 11871: mov.b32 %r, 0", m and st[7547][0] == 11871)
z = m.group(1) if m else "?"
mma = [k for k in range(len(st)) if op(k).startswith("mma.")]
want("1386 mma", len(mma) == 1386)
p1 = list(range(7554, 7578))
want("phase 1: s7554-s7577 are mma at lines 11883 + 7k",
     all(op(k).startswith("mma.") for k in p1) and [st[k][0] for k in p1] == [11883 + 7 * j for j in range(24)]
     and not op(7553).startswith("mma.") and not op(7578).startswith("mma."))
def operands(k):
    return re.findall(r"\{([^}]*)\}", st[k][1])
for k in list(range(7554, 7578)) + list(range(7585, 7609)):
    want("s%d: C {%s, %s}" % (k, z, z), operands(k)[3] == "%s, %s" % (z, z))
def dest(t):
    """registers a statement writes: its first operand (none for stores)"""
    if t.startswith(("st.", "sust.", "bar.", "ret")) or " " not in t:
        return []
    args = t.split(None, 1)[1]
    d = args[1:args.index("}")] if args.startswith("{") else args.split(",")[0]
    return re.findall(r"%\w+", d)
def last_def(reg, before):
    for k in range(before - 1, -1, -1):
        if reg in dest(st[k][1]):
            return k
    return None
atup = []
for k in p1:
    a = operands(k)[1]
    if a not in atup:
        atup.append(a)
offs = []
for a in atup:
    d = last_def(a.split(", ")[0], 7554)
    m = re.fullmatch(r"ld\.shared\.v4\.u32 \{" + re.escape(a) + r"\}, \[(%r\d+)(?:\+(\d+))?\]", st[d][1]) if d is not None else None
    offs.append((m.group(1), int(m.group(2) or 0)) if m else None)
want("phase 1's A: ld.shared.v4.u32 at one base + 0..12800: %s" % offs,
     None not in offs and len({o[0] for o in offs}) == 1 and [o[1] for o in offs] == [2560 * t for t in range(6)])
# E10 = s7857-s8027; its e4m3 packs
e10 = [k for k in range(7857, 8028) if op(k).startswith("cvt.rn.satfinite.e4m3x2")]
want("E10: 80 e4m3 packs from s7908 to s8027, the first at s7908",
     len(e10) == 80 and e10[0] == 7908 and op(7908) == "cvt.rn.satfinite.e4m3x2.f16x2"
     and op(7856).startswith("mma.") and op(8028).startswith("mma."))
# s8028 / s8040: C bias pairs 512 bytes apart
def c_bytes(k):
    out = []
    for r in operands(k)[3].split(", "):
        d = last_def(r, k)
        m = re.fullmatch(r"ld\.global\S*u32 (\{[^}]*\}|%r\d+), \[%rd\d+\+(\d+)\]", st[d][1]) if d is not None else None
        if not m:
            return None
        out.append(int(m.group(2)) + 4 * m.group(1).strip("{}").split(", ").index(r))
    return out
want("s8028..s8075 are phase 11", all(op(k).startswith("mma.") for k in range(8028, 8076)) and not op(8076).startswith("mma."))
want("s8028's C from 10560, s8040's from 11072: %s %s" % (c_bytes(8028), c_bytes(8040)),
     c_bytes(8028) == [10560, 10564] and c_bytes(8040) == [11072, 11076] and operands(8028)[1] != operands(8040)[1])
# s19817 / s21037 and what E60 does with them
def follows(k, pattern, upto):
    """the pointer loaded at s<k> becomes (cvta, adds) the address of a statement matching pattern before upto"""
    regs = {st[k][1].split()[1].rstrip(",")}
    for j in range(k + 1, upto):
        t = st[j][1]
        args = t.split(None, 1)[1] if " " in t else ""
        srcs = set(re.findall(r"%rd\d+", args))
        if re.match(pattern, t) and srcs & regs:
            return True
        if t.startswith(("cvta.", "add.s64", "mov.b64", "mov.u64")) and srcs & regs:
            regs.add(args.split(",")[0].strip())
    return False
want("s19817: ld.param.u64 of +48, the base of E60's st.global.v4",
     re.fullmatch(r"ld\.param\.u64 %rd\d+, \[" + P + r"\+48\]", st[19817][1]) and follows(19817, r"st\.global\.v4", 21138))
want("s21037: ld.param.u64 of +56, the base of E60's st.global.f32",
     re.fullmatch(r"ld\.param\.u64 %rd\d+, \[" + P + r"\+56\]", st[21037][1]) and follows(21037, r"st\.global\.f32", 21138))
sts = [k for k in range(19757, 21138) if op(k) == "st.shared.u32"]
want("E60: 20 st.shared.u32, s20051 to s20215: %s" % sts[:1], len(sts) == 20 and sts[0] == 20051 and sts[-1] == 20215)
lds = [k for k in range(19757, 21138) if op(k) == "ld.shared.u32"]
want("E60: 80 ld.shared.u32, s20242 to s21030", len(lds) == 80 and lds[0] == 20242 and lds[-1] == 21030)
a61 = set()
for k in range(21138, 21218):
    a61.update(operands(k)[1].split(", "))
got = set()
offs = set()
for k in lds:
    m = re.fullmatch(r"ld\.shared\.u32 (%r\d+), \[%r\d+(?:\+(\d+))?\]", st[k][1])
    got.add(m.group(1))
    offs.add(int(m.group(2) or 0))
want("the 80 ld.shared.u32 are phase 61's A", got == a61 and len(a61) == 80)
want("their offsets are {0, 1024, ..., 7168}", offs == set(range(0, 8192, 1024)))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
exit 0
