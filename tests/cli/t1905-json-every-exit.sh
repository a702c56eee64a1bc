#!/usr/bin/env bash
# t1905-json-every-exit: with --json, the main job prints exactly one JSON
# object on stdout on every exit path, errors included ({"status": "error",
# "message": ...}), and its "exit" is the exit status; run --json does the
# same for its errors.  Without a driver, and with the stand-in one.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
smoke_layer "$T/repo"
cd "$T/repo"

# one_json RC STATUS MESSAGE-PATTERN COMMAND...: exit RC, stdout is one JSON
# object whose status is STATUS, exit is RC and message matches the pattern
# ("" when it must have none)
one_json() {
	local rc=$1 status=$2 pat=$3
	shift 3
	expect_rc "$rc" "$@"
	python3 - "$T/out" "$rc" "$status" "$pat" <<'PY' || { cat "$T/out" "$T/err"; fail "'$*': not one JSON object as expected"; }
import json, re, sys
text = open(sys.argv[1]).read()
j, end = json.JSONDecoder().raw_decode(text)
assert text[end:].strip() == "", "more than one JSON object: %r" % text[end:]
rc, status, pat = int(sys.argv[2]), sys.argv[3], sys.argv[4]
assert j["status"] == status, (j["status"], status)
if "exit" in j:
    assert j["exit"] == rc, (j["exit"], rc)
if pat:
    assert re.search(pat, j["message"]), (pat, j["message"])
else:
    assert "message" not in j, j["message"]
PY
}

export D4R_LIBCUDA=/nonexistent/libcuda.so.1
job() { "$D4R" "$@" --json; }
one_json 2 error "^unknown option '--bogus'$" job smoke --phase 1 --bogus
one_json 2 error "phase" "$D4R" smoke --json --phase x
one_json 2 error "unexpected argument 'extra'" job smoke extra --phase 1
one_json 2 error "needs --phase N" job smoke
one_json 2 error "no layer 'nosuch'" job nosuch --phase 1
one_json 2 error "phase 9 does not exist: smoke has 1 phase" job smoke --phase 9
python3 - recipes/smoke/phase-01.json "$T/stale.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["guards"]["sha256"] = "0" * 64
json.dump(r, open(sys.argv[2], "w"))
PY
one_json 2 error "stale recipe" job smoke --phase 1 --recipe "$T/stale.json"
one_json 2 error "^refusing to write" job smoke --phase 1 --diff-image corpus/smoke/oracle.frame
one_json 2 error "^--oracle: cannot open" job smoke --phase 1 --oracle "$T/none"
one_json 2 error "^no CUDA driver: /nonexistent/libcuda.so.1" job smoke --phase 1
# the human form is on stderr all the same
expect_grep "^d4r-splice: no CUDA driver" "$T/err"

# run --json: its errors too
one_json 2 error "no layer 'nosuch'" "$D4R" run nosuch --json
one_json 2 error "cannot open 'missing.ptx'" "$D4R" run smoke --module missing.ptx --json
one_json 2 error "^refusing to write" "$D4R" run smoke --frame corpus/smoke/oracle.frame --json
one_json 2 error "^no CUDA driver" "$D4R" run smoke --json

# With the stand-in driver: the verdicts, a fault, a stale oracle.
stand_in_driver
one_json 0 ok "" job smoke --phase 1 --runs 0
one_json 1 ok "" job smoke --phase 1 --recipe recipes/smoke/mark.json --runs 0
sed 's|// mock: off-by-one|// mock: illegal|' ptx/smoke/mark.ptx >ptx/smoke/fault.ptx
sed 's|smoke/mark.ptx|smoke/fault.ptx|' recipes/smoke/mark.json >recipes/smoke/fault.json
one_json 2 fault "^spliced: .*CUDA_ERROR_ILLEGAL_ADDRESS" job smoke --phase 1 --recipe recipes/smoke/fault.json --runs 0
smoke_oracle "$T/repo" 91
one_json 2 error "stale oracle" job smoke --phase 1 --runs 0
exit 0
