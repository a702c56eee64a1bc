#!/usr/bin/env python3
"""docs-run.py - runs the documentation's commands (tests/cli/docs-commands.txt).

    docs-run.py TOP MODE    MODE: fast (and slow, as their `run:`; with
                            D4R_DOCS_SLOW=1 as written) or gpu

Run in the scratch folder the caller made (t2001-docs-run.sh,
t0111-docs-gpu.sh), with d4r-splice on PATH.  Checks first that the
stanzas and the commands of README.md's code blocks and the man page's
EXAMPLES are the same set, then runs those of MODE and checks their exit
status and output.  Prints one line per command (with its seconds);
exits 1 at the first that fails.
"""
import json
import os
import re
import subprocess
import sys
import time


def readme_commands(path):
    out, inblock = [], False
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("```"):
            inblock = not inblock
            continue
        if not inblock:
            continue
        c = line[2:] if line.startswith("$ ") else line
        if not c.startswith("d4r-splice "):
            continue
        while c.endswith("\\") and i < len(lines):
            c = c[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        out.append(re.sub(r"\s+#\s.*$", "", c).rstrip())
    return out


def man_commands(path):
    text = open(path).read()
    ex = text.split(".SH EXAMPLES", 1)[1].split(".EX", 1)[1].split(".EE", 1)[0]
    return [l.replace("\\-", "-").replace("\\e", "\\")
            for l in ex.splitlines() if l.startswith("d4r-splice ")]


def stanzas(path):
    out, cur = [], None
    for line in open(path).read().splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                out.append(cur)
            cur = None
            continue
        key, _, val = line.partition(":")
        cur = cur or {"setup": []}
        if key == "setup":
            cur["setup"].append(val.strip())
        else:
            cur[key] = val.strip()
    return out


def json_mismatch(want, text):
    """Where the JSON document that text is (nothing else but white space
    around it) departs from want: each key of an object in want must be in
    the document's object with an equal value (objects compared the same
    way, anything else equal as JSON values).  None when it does not."""
    try:
        doc, end = json.JSONDecoder().raw_decode(text.lstrip())
    except ValueError as ex:
        return "not a JSON document (%s)" % ex
    if text.lstrip()[end:].strip():
        return "more than one JSON document: %r" % text.lstrip()[end:][:80]

    def walk(w, d, path):
        if isinstance(w, dict):
            if not isinstance(d, dict):
                return "%s: %s, expected an object" % (path or ".", json.dumps(d))
            for k, v in w.items():
                if k not in d:
                    return "%s: no key \"%s\"" % (path or ".", k)
                r = walk(v, d[k], "%s.%s" % (path, k))
                if r:
                    return r
            return None
        num = (int, float)
        same = (w == d and (type(w) is type(d) or (isinstance(w, num) and isinstance(d, num)
                                                   and bool not in (type(w), type(d)))))
        return None if same else "%s: %s, expected %s" % (path, json.dumps(d), json.dumps(w))

    return walk(want, doc, "")


def main():
    top, mode = sys.argv[1], sys.argv[2]
    docs = set(readme_commands(os.path.join(top, "README.md")))
    docs |= set(man_commands(os.path.join(top, "man/d4r-splice.1")))
    table = stanzas(os.path.join(top, "tests/cli/docs-commands.txt"))
    have = {s["cmd"] for s in table}
    for c in sorted(docs - have):
        print("FAIL: documented, not in docs-commands.txt: %s" % c)
    for c in sorted(have - docs):
        print("FAIL: in docs-commands.txt, not in the documentation: %s" % c)
    if docs != have:
        return 1
    slow = os.environ.get("D4R_DOCS_SLOW") == "1"
    ran = 0
    for s in table:
        m = s["mode"]
        if (mode == "gpu") != (m == "gpu"):
            continue
        cmd = s["cmd"] if (m == "slow" and slow) or "run" not in s else s["run"]
        for c in s["setup"]:
            r = subprocess.run(["bash", "-c", c], capture_output=True, text=True)
            if r.returncode:
                print("FAIL: setup '%s': exit %d\n%s" % (c, r.returncode, r.stderr))
                return 1
        t0 = time.monotonic()
        r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
        dt = time.monotonic() - t0
        out = r.stdout + r.stderr
        if r.returncode != int(s["rc"]):
            print("FAIL: '%s': exit %d, expected %s\n%s" % (cmd, r.returncode, s["rc"],
                                                             out[-2000:]))
            return 1
        if "out" in s and not re.search(s["out"], out, re.M):
            print("FAIL: '%s': no match for '%s' in\n%s" % (cmd, s["out"], out[-2000:]))
            return 1
        if "json" in s:
            why = json_mismatch(json.loads(s["json"]), r.stdout)
            if why:
                print("FAIL: '%s': its JSON is not %s: %s\n%s" % (cmd, s["json"], why,
                                                                 out[-2000:]))
                return 1
        print("ok    %s  (%.1f s)" % (cmd, dt))
        ran += 1
    print("%d commands run" % ran)
    return 0 if ran else 1


if __name__ == "__main__":
    sys.exit(main())
