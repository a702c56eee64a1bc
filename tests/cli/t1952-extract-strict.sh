#!/usr/bin/env bash
# extract: a truncated or malformed ELF/PE is an error naming the offset
# ("FILE: offset 0x...: truncated ..."), and what the file still holds is
# extracted; each kind of error is printed at most 20 times, then counted
# ("... and N more like it"), and the index holds as few, with exact totals.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/cli/extract-fixtures.sh"

# 8 MiB of fatbin container headers (version 1, header 16, size 0xffffffff):
# every one claims more than the file holds
python3 - "$T/magic.fatbin" <<'PY'
import struct, sys
open(sys.argv[1], "wb").write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0xFFFFFFFF) * (1 << 19))
PY
headers=$((1 << 19))
expect_rc 2 "$D4R" extract "$T/magic.fatbin" -o "$T/m"
lines=$(wc -l <"$T/err")
[ "$lines" -le 200 ] || fail "$lines lines of errors for one file"
python3 - "$T/err" "$T/m/index.json" "$headers" <<'PY' || fail "error counts are wrong"
import collections, json, os, re, sys
err, index, headers = sys.argv[1], sys.argv[2], int(sys.argv[3])
shown = collections.Counter()
more = {}
for line in open(err):
    m = re.match(r"d4r-splice: .*magic\.fatbin: (.*)$", line.rstrip("\n"))
    if not m:
        continue
    msg = m.group(1)
    h = re.match(r"\.\.\. and ([0-9,]+) more like it \(the first of them: (.*)\)$", msg)
    kind = lambda s: re.sub(r"0x[0-9a-f]+|[0-9]+", "#", s)
    if h:
        more[kind(h.group(2))] = int(h.group(1).replace(",", ""))
    else:
        shown[kind(msg)] += 1
assert shown and all(n <= 20 for n in shown.values()), shown
assert all(shown[k] == 20 for k in more), (shown, more)
# every header is a container whose size runs past the end: one error each
k = "offset #: container size # runs past the end of the file (# bytes left)"
assert shown[k] + more.get(k, 0) == headers, (shown[k], more.get(k))
total = sum(shown.values()) + sum(more.values())
ix = json.load(open(index))
assert ix["totals"]["errors"] == total, (ix["totals"]["errors"], total)
assert ix["inputs"][0]["errors"] == total
assert ix["totals"]["containers"] == headers
assert len(ix["errors"]) == sum(shown.values()) + len(more), len(ix["errors"])
assert os.path.getsize(index) < 100000, os.path.getsize(index)
PY

# two inputs: the limit is per input, and the next input starts afresh
cp "$T/magic.fatbin" "$T/magic2.fatbin"
expect_rc 2 "$D4R" extract "$T/magic.fatbin" "$T/magic2.fatbin" --list
[ "$(grep -c 'magic2.fatbin: offset 0x[0-9a-f]*: container size' "$T/err")" -eq 20 ] ||
	fail "the second input's errors were not shown afresh"

# an ELF cut short: the section table (written last) is gone, a PT_LOAD
# segment runs past the end; the container before the cut is extracted
command -v objcopy >/dev/null && command -v cc >/dev/null || skip "needs cc and objcopy"
sample_ptx cut_elf >"$T/a.ptx"
fatbin_ptx "$T/a.ptx" 80 >"$T/a.fatbin"
printf 'const char *hello = "hello";\n' >"$T/e.c"
cc -shared -fPIC "$T/e.c" -o "$T/e.so" || fail "cc failed"
objcopy --add-section .nv_fatbin="$T/a.fatbin" --set-section-flags .nv_fatbin=alloc,readonly \
	"$T/e.so" "$T/k.so" 2>/dev/null || fail "objcopy failed"
expect_rc 0 "$D4R" extract "$T/k.so" -o "$T/whole"
fat_off=$(python3 - "$T/k.so" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
def sec(i):
    return struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize)
strtab = sec(shstrndx)[4]
for i in range(shnum):
    name, typ, flags, addr, off, size = sec(i)
    if b[strtab + name:].split(b"\0")[0] == b".nv_fatbin":
        print(off + size)
PY
)
size=$(stat -c %s "$T/k.so")
[ -n "$fat_off" ] && [ "$fat_off" -lt "$size" ] || fail "no .nv_fatbin in the test object"
head -c "$fat_off" "$T/k.so" >"$T/cut.so"
expect_rc 2 "$D4R" extract "$T/cut.so" -o "$T/cut"
expect_grep "cut.so: offset 0x[0-9a-f]+: truncated: the section header table starts past the end of the file \\($(printf 0x%x "$fat_off") bytes\\)" "$T/err"
cmp "$T/a.ptx" "$T/cut/0001-cut_elf.ptx" || fail "the container before the cut was not extracted"
# cut inside the container: its own error too
head -c $((fat_off - 40)) "$T/k.so" >"$T/cut2.so"
expect_rc 2 "$D4R" extract "$T/cut2.so" -o "$T/cut2"
expect_grep "cut2.so: offset 0x[0-9a-f]+: truncated: " "$T/err"
expect_grep "cut2.so: offset 0x[0-9a-f]+: (container size|entry payload size) 0x[0-9a-f]+ runs past the end" "$T/err"

# a 2 MB prefix of a toolkit library: truncated, said so, exit 2
lib=$(ls "$(toolkit_lib64)"/libcusparse.so.* 2>/dev/null | head -n 1)
[ -n "$lib" ] || skip "no libcusparse under $(toolkit_lib64)"
head -c $((2 << 20)) "$lib" >"$T/prefix.so"
expect_rc 2 "$D4R" extract "$T/prefix.so" -o "$T/p"
expect_grep "prefix.so: offset 0x[0-9a-f]+: truncated: segment 0 \\(PT_LOAD, 0x[0-9a-f]+ bytes at 0x0\\) runs past the end of the file \\(0x200000 bytes\\)" "$T/err"
expect_grep "prefix.so: offset 0x[0-9a-f]+: truncated: the section header table starts past the end of the file \\(0x200000 bytes\\)" "$T/err"
exit 0
