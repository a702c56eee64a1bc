#!/usr/bin/env bash
# t2000-json-every-verb: every verb that prints results takes --json and
# prints one JSON document that parses, has "status" and "exit" (equal to
# the exit status), and has every key the man page's JSON OUTPUT section
# lists for it (and for the objects in its arrays), and no key the list
# does not have: both ways, at every path the list names ("[key]": a key
# there only sometimes).  The section's list of
# verbs is the one below.  Where a verb also prints lines, the JSON carries
# the same statements and lines; an error of each verb is an error document.
# GPU verbs run on the stand-in driver.
. "$D4R_TOP/tests/cli/lib.sh"
. "$TOP/tests/cli/smoke-layer.sh"
. "$TOP/tests/cli/extract-fixtures.sh"
smoke_layer "$T/repo"
stand_in_driver
cd "$T/repo"
M=corpus/smoke/smoke.ptx

# The keys the man page lists, as "VERB<TAB>PATH<TAB>KEY..." lines.
python3 - "$TOP/man/d4r-splice.1" >"$T/keys" <<'PY' || fail "cannot read the man page's JSON keys"
import re, sys
text = open(sys.argv[1]).read()
block = text.split('.\\" json-keys-begin', 1)[1].split("\n", 1)[1]
block = block.split('.\\" json-keys-end', 1)[0]
lines = [l.replace("\\-", "-") for l in block.splitlines()
         if l and not l.startswith((".EX", ".EE", '.\\"'))]
entries = []  # [verb, path, keys]
verb = None
for l in lines:
    ind = len(l) - len(l.lstrip(" "))
    body = l.strip()
    if ind >= 4:                      # continuation of the entry above
        entries[-1][2] += body.split()
        continue
    head, _, keys = body.partition(":")
    if ind == 0:
        verb, path = head, ""
    else:
        path = head
    entries.append([verb, path, keys.split()])
for v, p, k in entries:
    print("%s\t%s\t%s" % (v, p, " ".join(k)))
PY
want="phases show grep report roundtrip extract recipe new recipe check recipe best splice probe diff run check bisect profile replay capture job"
have=$(cut -f1 "$T/keys" | uniq | tr '\n' ' ' | sed 's/ $//')
[ "$have" = "$want" ] || fail "the man page lists JSON keys for '$have', expected '$want'"

# json VERB RC COMMAND...: the command exits RC; stdout is one JSON object
# with status and exit = RC and the man page's keys for VERB
json() {
	local verb=$1 rc=$2
	shift 2
	expect_rc "$rc" "$@"
	python3 - "$T/out" "$T/keys" "$verb" "$rc" <<'PY' || { cat "$T/err"; fail "'$*': its --json document"; }
import json, sys
text = open(sys.argv[1]).read()
doc, end = json.JSONDecoder().raw_decode(text)
assert text[end:].strip() == "", "more than one document: %r" % text[end:][:80]
verb, rc = sys.argv[3], int(sys.argv[4])
assert isinstance(doc, dict), doc
assert doc["exit"] == rc, (doc["exit"], rc)
assert doc["status"] in ("ok", "error", "fault", "hang"), doc["status"]
assert (doc["status"] == "ok") == (rc != 2), (doc["status"], rc)

def nodes(o, path):
    """the objects at path ("functions[].phases[]", "live", "")"""
    out = [o]
    for part in [p for p in path.split(".") if p]:
        arr = part.endswith("[]")
        name = part[:-2] if arr else part
        nxt = []
        for x in out:
            v = x.get(name)
            if arr:
                assert isinstance(v, list), (path, name, v)
                nxt += v
            elif v is not None:
                nxt.append(v)
        out = nxt
    return out

# Both ways: every key listed (but a [key], there only sometimes) is
# printed, and every key printed at a listed path is listed.
# A key whose objects have a list of their own (live, functions[]) is
# listed by that list.
checked, problems = 0, []
entries = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
paths = [p for v, p, k in entries if v == verb]
for v, path, keys in entries:
    if v != verb:
        continue
    objs = nodes(doc, path)
    # objects of a key there only sometimes ([replay]) may be absent
    parent, _, last = path.rpartition(".")
    sometimes = any(v2 == verb and p2 == parent and "[%s]" % last.rstrip("[]") in k2.split()
                    for v2, p2, k2 in entries)
    if not objs and sometimes:
        continue
    assert objs, "%s: nothing at '%s' to check" % (verb, path)
    always = [k for k in keys.split() if not k.startswith("[")]
    listed = set(k.strip("[]") for k in keys.split())
    pre = path + "." if path else ""
    listed |= {q[len(pre):].split(".")[0].rstrip("[]") for q in paths
               if q.startswith(pre) and q != path}
    if not path:
        listed |= {"status", "exit"}
    for o in objs:
        for k in always:
            if k not in o:
                problems.append("'%s' has no key '%s': %s" % (path or "the document", k, sorted(o)))
            checked += 1
        extra = sorted(set(o) - listed)
        if extra:
            problems.append("'%s' prints %s, which the man page's JSON OUTPUT does not list" % (
                path or "the document", extra))
assert not problems, "%s: %s" % (verb, "; ".join(sorted(set(problems))))
assert checked, verb
PY
}

# error VERB COMMAND...: exit 2 and one error document with a message
error() {
	local verb=$1
	shift
	expect_rc 2 "$@"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "error" and d["exit"] == 2 and d["message"], d
' "$T/out" || { cat "$T/out"; fail "'$*': not one error document"; }
}

json phases 0 "$D4R" phases "$M" --json
json show 0 "$D4R" show "$M" --phase 1 --live --json
cp "$T/out" "$T/show.json"
json grep 0 "$D4R" grep "$M" 'mma|ret' --json
cp "$T/out" "$T/grep.json"
json report 0 "$D4R" report "$M" --json
json roundtrip 0 "$D4R" roundtrip "$M" --json
fatbin_ptx "$M" 90 >"$T/m.fatbin"
json extract 0 "$D4R" extract --list "$T/m.fatbin" --json
json "recipe new" 0 "$D4R" recipe new smoke --phase 1 --template identity -o "$T/new.json" --json
cp "$T/out" "$T/new.json.out"
json "recipe check" 0 "$D4R" recipe check recipes/smoke/phase-01.json --json
json splice 0 "$D4R" splice smoke --phase 1 -o "$T/s.ptx" --json
cp "$T/out" "$T/splice.json"
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ]; then
	json splice 0 "$D4R" splice smoke --phase 1 -o "$T/s.ptx" --json --check=ptxas
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["ptxas"]; assert p["accepted"] is True and p["arch"] == "sm_90" and p["cached"] in (True, False) and len(p["cache_key"]) == 64, p' "$T/out" ||
		fail "splice --json --check=ptxas: its ptxas"
fi
# --every-phase: the run's document (the man page's text lists its keys)
expect_rc 0 "$D4R" splice --module "$M" --every-phase --json
python3 - "$T/out" <<'PY' || fail "splice --every-phase --json"
import json, sys
d = json.load(open(sys.argv[1]))
for k in "status exit module bytes parse_ms template splices failed skipped splice_mean_ms splice_max_ms phases".split():
    assert k in d, k
assert (d["splices"], d["failed"], d["skipped"]) == (1, 0, 0), d
p, = d["phases"]
for k in "function phase stmt_range result message mma live_in live_out renamed splice_ms ptxas".split():
    assert k in p, k
assert (p["function"], p["phase"], p["stmt_range"], p["result"]) == ("pattern", 1, [10, 10], "ok"), p
PY
expect_rc 0 "$D4R" splice --module "$M" --every-phase --together --json
python3 - "$T/out" <<'PY' || fail "splice --every-phase --together --json"
import json, sys
d = json.load(open(sys.argv[1]))
for k in "status exit module template together splices failed skipped seconds functions".split():
    assert k in d, k
f, = d["functions"]
for k in "function phases spliced skipped result ptxas message cuts".split():
    assert k in f, k
assert (f["function"], f["phases"], f["spliced"], f["result"]) == ("pattern", 1, 1, "ok"), f
assert f["cuts"] == [{"phase": 1, "stmt_range": [10, 10], "result": "ok", "message": None}], f["cuts"]
PY
# --phases: the cuts
expect_rc 0 "$D4R" splice smoke --phases 1 -o "$T/ph.ptx" --json
python3 - "$T/out" <<'PY' || fail "splice --phases --json"
import json, sys
d = json.load(open(sys.argv[1]))
for k in "status exit layer phases variant module entry cuts mma output bytes ptxas".split():
    assert k in d, k
c, = d["cuts"]
assert (c["recipe"], c["stmt_range"], c["mma"]) == ("recipes/smoke/phase-01.json", [10, 10], 1), c
assert d["layer"] == "smoke" and d["phases"] == "1" and d["variant"] is None, d
PY
json probe 0 "$D4R" probe "$M" -o "$T/p.ptx" --json
json diff 0 "$D4R" diff corpus/smoke/oracle.frame corpus/smoke/oracle.frame --layer smoke --json
json run 0 "$D4R" run smoke --runs 0 --json
json check 1 "$D4R" check smoke --json
cp "$T/out" "$T/check.json"
# check --replay: how each recipe was decided (replay's first difference:
# the lowbit fixture, DIFFERS in replay, its frame IDENTICAL on the stand-in)
enc4_zero_layer "$T/e4"
cd "$T/e4"
json check 0 "$D4R" check enc4 --replay recipes/enc4/phase-08.json \
	tests/fixtures/bisect/enc4-phase-09-lowbit.json --json
cd "$T/repo"
json bisect 0 "$D4R" bisect smoke --phase 1 --json
json profile 0 "$D4R" profile smoke --phase 1 --runs 1 --json
json replay 0 "$D4R" replay smoke --phase 1 --plan --json
# capture on the stand-in: tests/capture/stand-in-program.c calls the tap
# where CUPTI would (t1920); its printing goes to stderr, not the document
capture_program "$T/capprog"
"${CC:-cc}" -shared -fPIC -o "$T/libcupti-stand-in.so" -x c /dev/null || fail "cannot build the CUPTI stand-in"
export D4R_LIBCUPTI=$T/libcupti-stand-in.so
json capture 0 "$D4R" capture --json -o "$T/capj" -- "$T/capprog" "$M" attrs
python3 - "$T/out" <<'PY' || fail "capture --json: the layer"
import json, sys
d = json.load(open(sys.argv[1]))
l, = d["layers"]
assert (l["layer"], l["verdict"], l["frame_bytes"], l["api"]) == ("pattern", "IDENTICAL", 1024, "cuLaunchKernelEx"), l
assert l["attributes"] == {"priority": 3, "cooperative": 1, "cluster_scheduling_policy_preference": 1}, l
assert d["kernels_launched"] == ["pattern"] and d["refused"] == [], d
assert (l["ptx"], l["source_file"], l["replay_only"]) == ("image", None, False), l
assert l["module"].endswith("/capj/pattern/module.ptx"), l["module"]
PY
json capture 1 "$D4R" capture --json -o "$T/capr" -- "$T/capprog" "$M" racy
json job 0 "$D4R" smoke --phase 1 --runs 0 --json
cp "$T/out" "$T/job.json"
# One name for one file: the layer's module, found through the repository,
# is the same relative path in every verb (never absolute in one and as
# typed in another), and so are the recipe and the oracle.
python3 - "$T" <<'PY' || fail "the verbs name the layer's files differently"
import json, sys
t = sys.argv[1]
docs = {n: json.load(open("%s/%s" % (t, f))) for n, f in
        (("splice", "splice.json"), ("recipe new", "new.json.out"), ("job", "job.json"), ("show", "show.json"))}
for n, d in docs.items():
    assert d["module"] == "corpus/smoke/smoke.ptx", (n, d["module"])
assert docs["splice"]["recipe"] == docs["job"]["recipe"] == "recipes/smoke/phase-01.json", docs["job"]["recipe"]
assert docs["job"]["oracle"] == "corpus/smoke/oracle.frame", docs["job"]["oracle"]
c = docs["recipe new"]["cut"]
assert c == {"stmt_range": [10, 10], "line_range": [22, 22], "mma": 1}, c
PY
# the best-of layer of a one-phase ranking, proven by check's document
echo '{"layer": "smoke", "ranking": [{"phase": 1, "variants": [{"variant": "mma", "ratio": 1.0}]}]}' >"$T/rank.json"
json "recipe best" 0 "$D4R" recipe best smoke --ranking "$T/rank.json" --proof "$T/check.json" --json
rm -f recipes/smoke/phase-01-best.json

# The JSON says what the lines say.
expect_rc 0 "$D4R" grep "$M" 'mma|ret'
python3 - "$T/grep.json" "$T/out" <<'PY' || fail "grep --json and grep's lines differ"
import json, sys
d = json.load(open(sys.argv[1]))
lines = [l for l in open(sys.argv[2]).read().splitlines() if l]
got = ["%s:s%d:%d: %s" % (f["name"], m["stmt"], m["line"], m["text"])
       for f in d["functions"] for m in f["matches"]]
assert got == lines, (got, lines)
assert d["count"] == len(lines) == 2, d["count"]
PY
# the smoke module's one mma is s10, on line 22 (smoke-layer.sh's text)
python3 - "$T/show.json" <<'PY' || fail "show --json: the phase"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stmt_range"] == [10, 10], d["stmt_range"]
st = [s for s in d["statements"] if s["in_range"]]
assert [(s["stmt"], s["line"]) for s in st] == [(10, 22)], st
assert st[0]["text"].startswith("mma.sync.aligned.m16n8k16"), st[0]["text"]
PY
# smoke-layer.sh: phase-01.json is identical, mark.json differs
python3 - "$T/check.json" <<'PY' || fail "check --json: the verdicts"
import json, sys
d = json.load(open(sys.argv[1]))
v = {i["name"]: i["verdict"] for i in d["items"]}
assert v == {"(original)": "identical", "mark.json": "differs", "phase-01.json": "identical"}, v
assert (d["identical"], d["differ"], d["errors"]) == (2, 1, 0), d
assert d["shard"] is None and d["recipes_in_layer"] == 2, d
PY

# Every verb's errors are error documents.
error phases "$D4R" phases missing.ptx --json
error show "$D4R" show missing.ptx --phase 1 --json
error grep "$D4R" grep "$M" '(' --json
error report "$D4R" report missing.ptx --json
error roundtrip "$D4R" roundtrip missing.ptx --json
error extract "$D4R" extract --list missing.bin --json
error "recipe new" "$D4R" recipe new nosuch --phase 1 --json
error "recipe check" "$D4R" recipe check missing.json --json
error splice "$D4R" splice smoke --phase 9 --json
error probe "$D4R" probe missing.ptx -o "$T/p2.ptx" --json
error diff "$D4R" diff missing.frame corpus/smoke/oracle.frame --json
error run "$D4R" run nosuch --json
error check "$D4R" check nosuch --json
error bisect "$D4R" bisect nosuch --phase 1 --json
error profile "$D4R" profile nosuch --phase 1 --json
error capture "$D4R" capture --json -o "$T/capf" -- "$T/capprog" "$M" fail
error capture "$D4R" capture --json -o "$T/capf" -- "$T/capprog" "$M" event
error job "$D4R" nosuch --phase 1 --json
error show "$D4R" show "$M" --phase 1 --bogus --json
# One document: no --json with results of their own on stdout.
error splice "$D4R" splice smoke --phase 1 -o - --json
error "recipe new" "$D4R" recipe new smoke --phase 1 --template identity -o - --json
error probe "$D4R" probe "$M" -o - --json
exit 0
