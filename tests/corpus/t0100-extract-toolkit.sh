#!/usr/bin/env bash
# extract: every PTX module of the CUDA toolkit's libraries.  The extracted
# entries must be exactly the ones an independent walk finds: a Python
# script here scans each whole library for the container magic (no section
# tables), walks the entries and lists every PTX entry's offset; per library
# the index's written + skipped entries must be that list, entry for entry.
# Every written module must be on disk with the size and sha256 the index
# states, all distinct; every skipped one must equal the module it names.
#
# The extraction checked is scripts/toolkit-corpus's (D4R_CORPUS_CACHE, else
# build/toolkit-corpus), which the other corpus tests read: made again
# whenever the extractor's sources or the libraries changed, so what is
# checked is what this extractor writes, and a fresh clone extracts once,
# not once here and once for the rest.  D4R_T0100_FRESH=1 extracts into a
# temporary folder instead.
. "$D4R_TOP/tests/cli/lib.sh"
lib64=$(toolkit_lib64)
command -v python3 >/dev/null || fail "python3 is needed for the independent count"

if [ -z "${D4R_T0100_FRESH:-}" ]; then
	t0=$SECONDS
	out=$("$TOP/scripts/toolkit-corpus")
	rc=$?
	[ $rc -eq 77 ] && skip "$out"
	[ $rc -eq 0 ] || fail "scripts/toolkit-corpus failed ($rc)"
	echo "scripts/toolkit-corpus: $out ($((SECONDS - t0)) s, extraction included when it was made)"
else
	libs=()
	if [ -d "$lib64" ]; then
		while IFS= read -r f; do libs+=("$f"); done < <(
			for f in "$lib64"/*.so*; do [ -f "$f" ] && realpath "$f"; done | sort -u)
	fi
	[ ${#libs[@]} -gt 0 ] || skip "no CUDA toolkit libraries under $lib64"
	out=$T/corpus
	t0=$(date +%s.%N)
	expect_rc 0 "$D4R" extract "${libs[@]}" -o "$out"
	t1=$(date +%s.%N)
	cat "$T/err"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "extract took %.1f s\n", b - a }'
fi

python3 - "$out" <<'PY' || fail "extraction does not match the independent count"
import hashlib, json, mmap, os, struct, sys
out = sys.argv[1]
ix = json.load(open(os.path.join(out, "index.json")))
assert ix["totals"]["errors"] == 0, ix["errors"][:5]

def ptx_entries(path):
    """Offsets of PTX entries, walking every container found by the magic."""
    found = []
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return found
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        magic = struct.pack("<I", 0xBA55ED50)
        pos = m.find(magic)
        while pos >= 0:
            if pos + 16 <= len(m):
                _, ver, hs, size = struct.unpack_from("<IHHQ", m, pos)
                end = pos + 16 + size
                if ver == 1 and hs == 16 and end <= len(m):
                    e = pos + 16
                    while e + 16 <= end:
                        kind, _, ehs, psz = struct.unpack_from("<HHIQ", m, e)
                        assert ehs >= 64 and e + ehs + psz <= end, (path, hex(e))
                        if kind == 1:
                            found.append(e)
                        e += ehs + psz
                    assert e == end, (path, hex(e), hex(end))
                    pos = m.find(magic, end)
                    continue
            pos = m.find(magic, pos + 1)
        m.close()
    return found

by_source = {}
for rec in ix["modules"] + ix["skipped"]:
    by_source.setdefault(rec["source"], []).append(rec["entry_offset"])
total = 0
print("%-45s %8s %8s %8s" % ("library", "ptx", "written", "skipped"))
for inp in ix["inputs"]:
    want = ptx_entries(inp["path"])
    got = sorted(by_source.get(inp["path"], []))
    assert got == want, (inp["path"], len(got), len(want))
    assert inp["ptx_entries"] == len(want) == inp["written"] + inp["skipped"], inp
    total += len(want)
    if want:
        print("%-45s %8d %8d %8d" % (os.path.basename(inp["path"]), len(want),
                                      inp["written"], inp["skipped"]))
assert total == ix["totals"]["ptx_entries"]

digests = {}
for m in ix["modules"]:
    p = os.path.join(out, m["file"])
    h = hashlib.sha256()
    n = 0
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
            n += len(chunk)
    assert n == m["size"] and h.hexdigest() == m["sha256"], m["file"]
    assert m["sha256"] not in digests, (m["file"], digests.get(m["sha256"]))
    digests[m["sha256"]] = m["file"]
for s in ix["skipped"]:
    assert digests.get(s["sha256"]) == s["duplicate_of"], s
files = sorted(f for f in os.listdir(out) if f.endswith(".ptx"))
assert files == sorted(digests.values()), (len(files), len(digests))
print("total: %d PTX entries, %d modules (%.1f MiB), %d duplicates"
      % (total, len(ix["modules"]), sum(m["size"] for m in ix["modules"]) / 2**20,
         len(ix["skipped"])))
PY
exit 0
