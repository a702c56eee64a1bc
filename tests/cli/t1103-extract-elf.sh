#!/usr/bin/env bash
# extract: fatbins inside an ELF object, in a .nv_fatbin section and in an
# ordinary data section; the index names the section.  A corrupt container
# in .nv_fatbin is an error; the magic number alone in .rodata is not.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"
command -v objcopy >/dev/null && command -v cc >/dev/null || skip "needs cc and objcopy"

sample_ptx in_fatbin >"$T/a.ptx"
sample_ptx in_data >"$T/b.ptx"
fatbin_ptx "$T/a.ptx" 80 >"$T/a.fatbin"
fatbin_ptx "$T/b.ptx" 90 >"$T/b.fatbin"
# a stray magic number (wrong version) that must be passed over quietly
{ printf 'xxxx'; le $((0xBA55ED50)) 4; le 3 2; le 16 2; le 0 8; cat "$T/b.fatbin"; } >"$T/data.bin"
printf 'const char *hello = "hello";\n' >"$T/e.c"
cc -c "$T/e.c" -o "$T/e.o" || fail "cc failed"
objcopy --add-section .nv_fatbin="$T/a.fatbin" --set-section-flags .nv_fatbin=alloc,readonly \
	--add-section .mydata="$T/data.bin" --set-section-flags .mydata=alloc,readonly \
	"$T/e.o" "$T/k.o" || fail "objcopy failed"

expect_rc 0 "$D4R" extract "$T/k.o" -o "$T/o"
# (numbered in file order, which is objcopy's choice)
cmp "$T/a.ptx" "$T"/o/000[12]-in_fatbin.ptx || fail "module from .nv_fatbin differs"
cmp "$T/b.ptx" "$T"/o/000[12]-in_data.ptx || fail "module from .mydata differs"
python3 - "$T/o/index.json" <<'PY' || fail "index.json is wrong"
import json, sys
ix = json.load(open(sys.argv[1]))
m = ix["modules"]
assert {x["entries"][0]: x["section"] for x in m} == {"in_fatbin": ".nv_fatbin", "in_data": ".mydata"}, m
assert ix["inputs"][0]["format"] == "elf" and ix["totals"]["errors"] == 0
PY

# An ELF without fatbins: nothing to extract, not an error.
expect_rc 0 "$D4R" extract "$T/e.o" -o "$T/none"
[ "$(ls "$T/none")" = index.json ] || fail "extracted from nothing: $(ls "$T/none")"

# Corrupt the container inside .nv_fatbin (its entry header size).
off=$(python3 - "$T/k.o" <<'PY'
import sys
import struct
d = open(sys.argv[1], 'rb').read()
shoff, = struct.unpack_from('<Q', d, 0x28)
ent, num, stri = struct.unpack_from('<HHH', d, 0x3a)
sec = [struct.unpack_from('<IIQQQQ', d, shoff + i * ent) for i in range(num)]
names = sec[stri][4]
for name, _, _, _, off, _ in sec:
    if d[names + name:].split(b'\0')[0] == b'.nv_fatbin':
        print(off)
PY
)
cp "$T/k.o" "$T/bad.o"
patch_bytes "$T/bad.o" $((off + 16 + 4)) '\xff\xff\x00\x00'
expect_rc 2 "$D4R" extract "$T/bad.o" -o "$T/bad"
expect_grep "bad.o: offset $(printf 0x%x $((off + 16))): entry header size 65535 is impossible" "$T/err"
[ "$(ls "$T/bad")" = "$(printf '0001-in_data.ptx\nindex.json')" ] || fail "corrupt ELF: $(ls "$T/bad")"
expect_no_grep 'offset 0x[0-9a-f]+: unsupported container' "$T/err"

# Damaged section table: an error at the offset it claims (exit 2), and the
# magic scan still finds both containers.
cp "$T/k.o" "$T/noshdr.o"
patch_bytes "$T/noshdr.o" 40 '\xff\xff\xff\xff\xff\xff\x00\x00'
expect_rc 2 "$D4R" extract "$T/noshdr.o" -o "$T/scan"
expect_grep "noshdr.o: offset 0xffffffffffff: truncated: the section header table starts past the end of the file" "$T/err"
[ "$(ls "$T/scan" | grep -c '\.ptx$')" -eq 2 ] || fail "fallback scan: $(ls "$T/scan")"
exit 0
