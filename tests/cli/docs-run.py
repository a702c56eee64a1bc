#!/usr/bin/env python3
"""docs-run.py - runs the documentation's commands (tests/cli/docs-commands.txt)
and holds the documentation's sample outputs to what the commands print.

    docs-run.py TOP MODE    MODE: fast (and slow, as their `run:`; with
                            D4R_DOCS_SLOW=1 as written) or gpu
    docs-run.py TOP sample KEY FILE
                            the samples of KEY against FILE, the output of a
                            run a test made (mode test stanzas: t1907's
                            stand-in bisect)

A sample is a code block of README.md (or an .EX block of the man page)
that shows what a command prints: one whose first line is `$ d4r-splice
...` (the rest is its output), or one right after a marker naming its
command, `<!-- sample: KEY -->` in README, `.\" sample: KEY` in the man
page.  KEY is a stanza's `cmd:`.  The sample is compared with the output of
that stanza's run (fast and slow stanzas, here), with the recorded output of
the GPU machine its `log:` names (gpu stanzas, here; t0111 compares the live
run on the GPU), or with the output a test hands in (test stanzas, `by:`).
The comparison (sample_matches): each line of the sample is a line of the
output, in order, from the first; a line `...` alone stands for any number of
lines, `...` inside a line for any text, and the output may go on after the
sample ends.  Figures that vary are masked on both sides: every decimal
number with a point (times, ratios, sizes in KB), and the folder an absolute
path to corpus/, recipes/ or ptx/ starts with.

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


def man_unescape(l):
    return (l.replace("\\-", "-").replace("\\e", "\\").replace("\\(aq", "'")
             .replace("\\(dq", '"').replace("\\&", ""))


def samples(top):
    """[(key, [lines], where)] of README.md and the man page"""
    out = []
    lines = open(os.path.join(top, "README.md")).read().splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        block = lines[i + 1:j]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        m = re.match(r"<!-- sample: (.*) -->$", lines[k]) if k >= 0 else None
        if m:
            out.append((m.group(1), block, "README.md:%d" % (i + 1)))
        elif block and block[0].startswith("$ d4r-splice ") and len(block) > 1:
            out.append((block[0][2:], block[1:], "README.md:%d" % (i + 1)))
        i = j + 1
    lines = open(os.path.join(top, "man/d4r-splice.1")).read().splitlines()
    for i, l in enumerate(lines):
        if l != ".EX":
            continue
        j = i + 1
        while lines[j] != ".EE":
            j += 1
        block = [man_unescape(b) for b in lines[i + 1:j]]
        key = None
        for k in range(i - 1, max(i - 4, -1), -1):
            m = re.match(r'\.\\" sample: (.*)$', lines[k])
            if m:
                key = man_unescape(m.group(1))
                break
            if not lines[k].startswith("."):
                break
        if key:
            out.append((key, block, "man/d4r-splice.1:%d" % (i + 1)))
        elif block and block[0].startswith("$ d4r-splice ") and len(block) > 1:
            out.append((block[0][2:], block[1:], "man/d4r-splice.1:%d" % (i + 1)))
    return out


def mask(s):
    s = re.sub(r"/\S*?/(corpus|recipes|ptx)/", r"\1/", s)
    s = re.sub(r"\d+\.\d+", "#", s)
    return s.rstrip()


def sample_matches(block, output):
    """'' when the sample is the output (module docstring), else why not"""
    out = [mask(l) for l in output.splitlines()]
    at, skip = 0, False
    for b in block:
        if b.strip() == "...":
            skip = True
            continue
        want = re.compile(".*".join(re.escape(p) for p in mask(b).split("...")))
        k = at
        while k < len(out) and not want.fullmatch(out[k]):
            if not skip:
                break
            k += 1
        if k >= len(out) or not want.fullmatch(out[k]):
            near = out[at] if at < len(out) else "(the output ended)"
            return "the sample's line\n    %s\nis not %s; the output has\n    %s" % (
                b, "in the output after that" if skip else "the next line", near)
        at, skip = k + 1, False
    return ""


def check_samples(key, table_samples, output, what, say=True):
    bad = 0
    for k, block, where in table_samples:
        if k != key:
            continue
        why = sample_matches(block, output)
        if why:
            if say:
                print("FAIL: %s: the sample of '%s' is not what %s prints:\n  %s" % (
                    where, key, what, why))
            bad += 1
        elif say:
            print("ok    %s: sample of '%s' = %s" % (where, key, what))
    return bad


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
    smp = samples(top)
    if mode == "sample":
        key, path = sys.argv[3], sys.argv[4]
        if key not in {k for k, _, _ in smp}:
            print("FAIL: no sample of '%s' in the documentation" % key)
            return 1
        return 1 if check_samples(key, smp, open(path).read(), path) else 0
    # the comparison itself first: a stale sample must fail, a fresh one pass
    if (check_samples("k", [("k", ["stale"], "")], "fresh\n", "", False) != 1 or
            check_samples("k", [("k", ["a 1.5 ms", "...", "c ..."], "")],
                          "a 2.0 ms\nb\nc d\n", "", False) != 0):
        print("FAIL: the sample comparison does not tell a stale sample from a fresh one")
        return 1
    docs = set(readme_commands(os.path.join(top, "README.md")))
    docs |= set(man_commands(os.path.join(top, "man/d4r-splice.1")))
    docs |= {k for k, _, _ in smp}
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
    bad = 0
    for s in table:
        m = s["mode"]
        # here, without the GPU: a gpu stanza's samples against its recorded
        # run; a test stanza's test must hand its output in
        if mode != "gpu" and m == "gpu" and "log" in s:
            bad += check_samples(s["cmd"], smp, open(os.path.join(top, s["log"])).read(),
                                 s["log"] + " (recorded on the GPU)")
        if mode != "gpu" and m == "test":
            by = open(os.path.join(top, s["by"])).read()
            key = s["cmd"][len("d4r-splice "):] if s["cmd"].startswith("d4r-splice ") else s["cmd"]
            if key not in by or "docs-run.py" not in by:
                print("FAIL: %s does not check the sample of '%s'" % (s["by"], s["cmd"]))
                bad += 1
            continue
        if m == "test":
            continue
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
        bad += check_samples(s["cmd"], smp, out, "'%s'" % cmd)
        ran += 1
    print("%d commands run" % ran)
    return 0 if ran and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
