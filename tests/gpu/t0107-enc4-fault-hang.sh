#!/usr/bin/env bash
# A spliced kernel that faults, and one that never ends: reported as FAULT
# and HANG (exit 2), no crash, and the original's result still stands.
. "$D4R_TOP/tests/cli/lib.sh"
. "$D4R_TOP/tests/gpu/enc4-lib.sh"
mkdir -p "$T/f"
"$D4R" recipe new enc4 --phase 8 --template fault.ptx --ptx "$T/f" -o "$T/f/fault.json" >/dev/null 2>&1 ||
	fail "recipe new"
python3 - "$T/f" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/fault.json"))
t = open(d + "/fault.ptx").read()
fault = t.replace("//! writes none", "//! writes global").replace("//! barriers 0\n",
    "//! barriers 0\n\t.reg .b64 %bad;\n\tmov.u64 %bad, 8;\n\tst.global.u32 [%bad], 1;\t// address 8 is not mapped\n", 1)
hang = t.replace("//! barriers 0\n",
    "//! barriers 0\n\t.reg .pred %spin;\n\tsetp.ne.u32 %spin, %{c[0]}, 12345;\n$Lspin:\n"
    "\tnanosleep.u32 1000;\t// a side effect, so the loop is not optimised away\n"
    "\t@%spin bra $Lspin;\t// loops forever\n", 1)
open(d + "/fault.ptx", "w").write(fault)
open(d + "/hang.ptx", "w").write(hang)
for name in ("fault", "hang"):
    r["template"] = "./%s.ptx" % name
    json.dump(r, open("%s/%s.json" % (d, name), "w"), indent=1)
PY
"$D4R" enc4 --phase 8 --recipe "$T/f/fault.json" --force --runs 0 --json >"$T/fault.json" 2>"$T/fault.err"
rc=$?
cat "$T/fault.json" "$T/fault.err"
[ $rc -eq 2 ] || fail "fault: exit $rc, expected 2"
python3 - "$T/fault.json" <<'PY' || fail "fault not reported as such"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "FAULT", d["verdict"]
assert d["spliced"]["status"] == "fault", d["spliced"]
assert d["original"]["status"] == "ok" and d["original"]["identical"] is True, d["original"]
PY
t0=$(date +%s)
"$D4R" enc4 --phase 8 --recipe "$T/f/hang.json" --runs 0 --timeout 15 --json >"$T/hang.json" 2>"$T/hang.err"
rc=$?
cat "$T/hang.json" "$T/hang.err"
echo "hang reported after $(( $(date +%s) - t0 )) s"
[ $rc -eq 2 ] || fail "hang: exit $rc, expected 2"
python3 - "$T/hang.json" <<'PY' || fail "hang not reported as such"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "HANG", d["verdict"]
assert d["original"]["status"] == "ok" and d["original"]["identical"] is True, d["original"]
PY
cp "$T/fault.json" "$OUTD/fault.json"
cp "$T/hang.json" "$OUTD/hang.json"
