#!/usr/bin/env python3
"""ptx_gemm.py - the gemm facts of a PTX module's mma phases, derived from
the text alone, to cross-check d4r-splice (it neither links nor runs it).

usage: tests/checker/ptx_gemm.py [--gap N] FILE.ptx...     JSON on stdout

For every function (.entry or .func with a body) with mma statements:
its name, kind, statement count, mma count, and per phase (a maximal run
of mma statements with at most N other statements between two of them,
N = --gap, default 0, as `d4r-splice phases --gap N` means it):

  mma_stmt_range  [first, last] statement numbers (sN from 0 per function)
  mma             statements in the phase
  shape, K        the instruction shape (m16n8k16 ...) and its K
  k_chain_len     the longest chain, chains: the number of chains
  m_tiles         distinct A operand tuples, n_tiles: distinct B tuples
  k               K * k_chain_len, banded: m_tiles * n_tiles != mma
  forks           mma whose D is the C of more than one later mma (0 in
                  gemm code; said so that a tree is not taken for chains)

A chain follows C <- D by reaching definition inside the phase: mma j
continues mma i when every register of j's C operand was last written in
the phase by i and C_j is exactly D_i, whatever lies between them (other
tiles' k-steps interleaved, accumulation in place).  A wgmma has no C
operand: it reads its D unless scale-d is the immediate 0, in which case
it starts a chain.  Chains are the maximal paths (one per head when
nothing forks).

The text is read independently of the project's lexer: comments and
strings are stripped, `.loc` lines end at the end of the line, labels,
directives and braces are not statements.

Decisions
- Only the straight-line text of the phase is followed: chains do not
  cross phases or loops (that is a C kind, not a chain).
- Tuples compare as text (register names in order); PTX from nvcc, clang
  and Triton does not redefine an A or B register inside a run of mma.
"""
import json
import re
import sys

MMA_RE = re.compile(r"^(mma\.sync|mma\.sp|wmma\.mma|wgmma\.mma_async)")
SHAPE_RE = re.compile(r"\.m(\d+)n(\d+)k(\d+)")


def strip_comments(text):
    """Text with // and /* */ comments blanked (newlines kept), strings kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(kind, name, body text) of every function with a body."""
    res = []
    for m in re.finditer(r"\.(entry|func)\b", text):
        # a directive at top level: skip what is inside another body
        if res and m.start() < res[-1][3]:
            continue
        i = m.end()
        depth, j = 0, i
        # parameter lists and return list: up to the body '{' or a ';'
        while j < len(text):
            c = text[j]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif depth == 0 and c in ";{":
                break
            j += 1
        if j >= len(text) or text[j] == ";":
            continue
        head = text[i:j]
        names = re.findall(r"([A-Za-z_$][\w$]*)\s*\(", head)
        if m.group(1) == "entry":
            name = re.match(r"\s*([A-Za-z_$][\w$]*)", head).group(1)
        else:
            # .func (ret) name (params) or .func name (params) or .func name
            h = re.sub(r"^\s*\([^)]*\)", "", head)
            name = re.match(r"\s*([A-Za-z_$][\w$]*)", h).group(1)
        del names
        depth, k = 0, j
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        res.append((m.group(1), name, text[j + 1:k], k))
    return [(a, b, c) for a, b, c, _ in res]


LABEL_RE = re.compile(r"[A-Za-z_$%][\w$]*\s*:(?!:)")


def statements(body):
    """The statement texts of a body, in order (whitespace collapsed)."""
    out, i, n = [], 0, len(body)
    while i < n:
        c = body[i]
        if c.isspace() or c in "{}":
            i += 1
            continue
        if body.startswith(".loc", i) or body.startswith(".file", i):
            j = body.find("\n", i)
            i = n if j < 0 else j
            continue
        m = LABEL_RE.match(body, i)
        if m:
            i = m.end()
            continue
        j = i
        while j < n and body[j] != ";":
            if body[j] == '"':
                j = body.find('"', j + 1)
            j += 1
        s = " ".join(body[i:j].split())
        i = j + 1
        if not s.startswith("."):
            out.append(s)
    return out


def split_top(s):
    """Comma-separated operands at brace depth 0."""
    parts, depth, cur = [], 0, []
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def regs(op):
    """An operand as a tuple of register names."""
    op = op.strip()
    if op.startswith("{"):
        op = op[1:-1]
    return tuple(x.strip() for x in op.split(",") if x.strip())


def parse_mma(s):
    """(opcode, D, A, B, C or None, K, shape) of an mma statement text."""
    t = s
    if t.startswith("@"):
        t = t.split(None, 1)[1]
    opc, _, rest = t.partition(" ")
    ops = split_top(rest)
    sm = SHAPE_RE.search(opc)
    shape = sm.group(0)[1:] if sm else None
    K = int(sm.group(3)) if sm else None
    d, a, b = regs(ops[0]), regs(ops[1]), regs(ops[2])
    if opc.startswith("wgmma"):
        scale_d = ops[3].strip()
        c = None if scale_d == "0" else d
    else:
        c = regs(ops[3])
    return opc, d, a, b, c, K, shape


def phase_facts(stmts, idx):
    first, last = idx[0], idx[-1]
    mm = [parse_mma(stmts[i]) for i in idx]
    writer = {}
    pred = [None] * len(mm)
    succ = [[] for _ in mm]
    for j, (_, d, _, _, c, _, _) in enumerate(mm):
        if c is not None:
            ws = {writer.get(r) for r in c}
            if len(ws) == 1 and None not in ws:
                i = ws.pop()
                if mm[i][1] == c:
                    pred[j] = i
                    succ[i].append(j)
        for r in d:
            writer[r] = j
    depth = [0] * len(mm)
    for j in range(len(mm)):
        depth[j] = 1 if pred[j] is None else depth[pred[j]] + 1
    k_chain_len = max(depth)
    chains = sum(1 for j in range(len(mm)) if not succ[j])
    forks = sum(1 for j in range(len(mm)) if len(succ[j]) > 1)
    m_tiles = len({x[2] for x in mm})
    n_tiles = len({x[3] for x in mm})
    K = mm[0][5]
    return {
        "mma_stmt_range": [first, last],
        "mma": len(mm),
        "shape": mm[0][6],
        "m_tiles": m_tiles,
        "n_tiles": n_tiles,
        "k_chain_len": k_chain_len,
        "chains": chains,
        "k": K * k_chain_len if K else None,
        "banded": m_tiles * n_tiles != len(mm),
        "forks": forks,
    }


def module_facts(path, gap=0):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip_comments(f.read())
    fns = []
    for kind, name, body in functions(text):
        st = statements(body)
        is_mma = [bool(MMA_RE.match(s.split(None, 1)[1] if s.startswith("@") else s)) for s in st]
        if not any(is_mma):
            continue
        mmas = [i for i, m in enumerate(is_mma) if m]
        runs = [[mmas[0]]]
        for i in mmas[1:]:
            if i - runs[-1][-1] - 1 <= gap:
                runs[-1].append(i)
            else:
                runs.append([i])
        phases = [phase_facts(st, r) for r in runs]
        for n, p in enumerate(phases, 1):
            p["phase"] = n
        fns.append({"name": name, "kind": kind, "statements": len(st),
                    "mma": sum(is_mma), "phases": phases})
    return {"module": path, "functions": fns}


def main(argv):
    args, gap = argv[1:], 0
    if args[:1] == ["--gap"] and len(args) > 1:
        gap, args = int(args[1]), args[2:]
    if not args:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = [module_facts(p, gap) for p in args]
    json.dump(out if len(out) > 1 else out[0], sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
