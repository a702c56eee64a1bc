#!/usr/bin/env bash
# t1904-precheck-before-driver: what can be checked without a GPU is checked
# before the driver is touched, and reported as it is, not hidden behind "no
# CUDA driver": init files exist and fit their buffers, recipe files named on
# the command line exist, every launch entry is in the module (the message
# names the manifest and the JSON path), the oracle is present.  Run with a
# driver that is not there, and with this machine's own when it has none.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
smoke_layer "$T/repo"
cd "$T/repo"
export D4R_LIBCUDA=/nonexistent/libcuda.so.1
before_driver() {   # PATTERN COMMAND...: exit 2 with PATTERN, the driver never reached
	local pat=$1
	shift
	expect_rc 2 "$@"
	expect_grep "$pat" "$T/err"
	expect_no_grep "no CUDA driver" "$T/err"
}
# variant NAME SED: layer NAME, the smoke manifest edited by SED
variant() {
	mkdir -p "recipes/$1"
	sed "s/\"layer\": \"smoke\"/\"layer\": \"$1\"/; $2" recipes/smoke/layer.json >"recipes/$1/layer.json"
	cp recipes/smoke/phase-01.json "recipes/$1/"
}
every_verb() {   # LAYER PATTERN: the main job, run and check
	before_driver "$2" "$D4R" "$1" --phase 1
	before_driver "$2" "$D4R" run "$1"
	before_driver "$2" "$D4R" check "$1"
}

# An init file that is not there, and one larger than its buffer.
variant init 's|"init": {"kind": "fill", "byte": 255}|"init": {"kind": "file", "path": "smoke/init.bin"}|'
every_verb init "recipes/init/layer.json: buffers.out.init.path: cannot open '.*/corpus/smoke/init.bin': No such file or directory"
head -c 2000 /dev/zero >corpus/smoke/init.bin
every_verb init "recipes/init/layer.json: buffers.out.init.path: '.*/corpus/smoke/init.bin' holds 2000 bytes, more than the 1024 it fills"
# ... and one that fits: then the driver is what is missing
head -c 1000 /dev/zero >corpus/smoke/init.bin
expect_rc 2 "$D4R" init --phase 1
expect_grep "no CUDA driver" "$T/err"

# A launch entry the module does not have: the manifest and the JSON path.
variant noentry 's|{"entry": "pattern", "grid"|{"entry": "nope", "grid"|'
every_verb noentry "^d4r-splice: recipes/noentry/layer.json: launches\[0\].entry: no entry 'nope' in the module '.*/corpus/smoke/smoke.ptx'$"

# The oracle (t1903 says more).
mv corpus/smoke/oracle.frame "$T/o.frame"
every_verb smoke "oracle.path: cannot open '.*/corpus/smoke/oracle.frame'"
mv "$T/o.frame" corpus/smoke/oracle.frame

# Recipes named on the command line must exist.
before_driver "^d4r-splice: check: recipe 'recipes/smoke/nope.json' does not exist$" \
	"$D4R" check smoke recipes/smoke/phase-01.json recipes/smoke/nope.json
before_driver "cannot open 'nope.json'" "$D4R" smoke --recipe nope.json
# A recipe that does not splice is reported as it is, then the driver.
python3 - recipes/smoke/phase-01.json "$T/stale.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["guards"]["sha256"] = "0" * 64
json.dump(r, open(sys.argv[2], "w"))
PY
expect_rc 2 "$D4R" check smoke "$T/stale.json" recipes/smoke/phase-01.json
expect_grep "^stale.json +ERROR +.*stale recipe" "$T/out"
expect_grep "no CUDA driver" "$T/err"

# --keep's folder is the job's to create: a folder that does not exist yet
# passes the checks before the driver (the job makes it), one under a file
# does not
mkdir -p "$T/keepcwd"
(cd "$T/keepcwd" && "$D4R" enc4 --phase 8 --keep) >"$T/out" 2>"$T/err"
grep -q "there is no folder" "$T/err" && fail "--keep: its own folder refused as missing: $(cat "$T/err")"
expect_grep "no CUDA driver" "$T/err"
(cd "$T/keepcwd" && "$D4R" enc4 --phase 8 --keep "$T/keepcwd/new/dir") >"$T/out" 2>"$T/err"
expect_grep "no CUDA driver" "$T/err"
: >"$T/afile"
expect_rc 2 "$D4R" enc4 --phase 8 --keep "$T/afile/sub"
expect_grep "is not a folder" "$T/err"

# This machine's own answer, when it has no driver: the same order.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	unset D4R_LIBCUDA
	every_verb noentry "launches\[0\].entry: no entry 'nope'"
	expect_rc 2 "$D4R" smoke --phase 1
	expect_grep "^d4r-splice: no CUDA driver: libcuda.so.1: " "$T/err"
fi
exit 0
