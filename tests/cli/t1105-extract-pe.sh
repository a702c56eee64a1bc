#!/usr/bin/env bash
# extract: a Windows PE/COFF DLL with its fatbin in a .nv_fatb section (the
# file is built here: DOS stub, PE header, two section records).
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"
command -v python3 >/dev/null || skip "needs python3 to lay out the PE file"

sample_ptx dll_kernel >"$T/a.ptx"
fatbin_ptx "$T/a.ptx" 86 >"$T/a.fatbin"
python3 - "$T/a.fatbin" "$T/k.dll" <<'PY'
import struct, sys
fat = open(sys.argv[1], "rb").read()
dos = bytearray(0x80); dos[0:2] = b"MZ"; struct.pack_into("<I", dos, 0x3c, 0x80)
coff = b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, 2, 0, 0, 0, 0, 0x2022)
raw = 0x80 + len(coff) + 2 * 40
raw = (raw + 0x1ff) & ~0x1ff
def sec(name, size, off):
    return name.ljust(8, b"\0") + struct.pack("<IIIIIIHHI", size, 0x1000, size, off, 0, 0, 0, 0, 0x40000040)
hdr = bytes(dos) + coff + sec(b".text", 0, 0) + sec(b".nv_fatb", len(fat), raw)
open(sys.argv[2], "wb").write(hdr.ljust(raw, b"\0") + fat)
PY
expect_rc 0 "$D4R" extract "$T/k.dll" -o "$T/o"
cmp "$T/a.ptx" "$T/o/0001-dll_kernel.ptx" || fail "module from the DLL differs"
expect_grep '"format":[[:space:]]*"pe"' "$T/o/index.json"
expect_grep '"section":[[:space:]]*".nv_fatb"' "$T/o/index.json"
expect_grep '"arch":[[:space:]]*"sm_86"' "$T/o/index.json"
expect_grep '"container_offset":[[:space:]]*512' "$T/o/index.json"

# A section record pointing past the end: an error at the offset it claims
# (exit 2), and the magic scan finds the container anyway.
cp "$T/k.dll" "$T/bad.dll"
patch_bytes "$T/bad.dll" $((0x80 + 24 + 40 + 20)) '\x00\x00\x00\x70'
expect_rc 2 "$D4R" extract "$T/bad.dll" -o "$T/o2"
expect_grep "bad.dll: offset 0x70000000: truncated: section 2 '.nv_fatb' \\(0x[0-9a-f]+ bytes at 0x70000000\\) runs past the end of the file" "$T/err"
cmp "$T/a.ptx" "$T/o2/0001-dll_kernel.ptx" || fail "fallback scan of the DLL failed"
exit 0
