#!/usr/bin/env python3
"""wgmma_sync_emulate.py - checks the operand fragments of a native
mma_sync template (d4r-splice recipe new --native mma_sync) against the
kernel's own shared-memory layout, on the CPU, without d4r-splice's code.

usage: wgmma_sync_emulate.py MODULE.ptx TEMPLATE.ptx RECIPE.json ROLES [EXPECT]
       wgmma_sync_emulate.py --accumulators MODULE.ptx CPARAM:ROWS:COLS

ROLES says what the kernel's global buffers are, as NAME=PARAM:ROWS:COLS:ORDER
items joined by ',' (e.g. A=matmul_kernel_param_0:256:256:mk,...): the
parameter whose pointer the buffer is, its shape (row-major f16), and what
its rows and columns are: mk (A: rows M, columns K), kn (B: rows K,
columns N) or nk (B: rows N, columns K).  The A role is named A, the B
role B.

How:
 1. The kernel is interpreted, every thread of one block (block 0), from
    its entry up to the recipe's cut: integer arithmetic exactly, loads
    from global memory as symbols (which buffer, which byte), anything
    else (floating point, wgmma) opaque.  Each cp.async and st.shared
    records which global element lands at which shared byte: the layout
    is the kernel's own (its cp.async addresses, its swizzle), not the
    PTX ISA's descriptor layouts.
 2. The template is interpreted for every thread with its formals bound to
    the registers the recipe names, as the registers hold them at the cut.
    ldmatrix gathers, per warp, the lanes' row addresses and gives each
    thread the shared elements the PTX ISA's ldmatrix defines (.trans
    included).
 3. Each mma.sync.m16n8k16 of the template: the A and B registers of
    every thread must hold, element for element, the A fragment (rows g,
    g+8 and k 2t, 2t+1, +8 of the warp's 16 rows) and the B fragment
    (k 2t, 2t+1, +8, column g of the 8-column block) of the PTX ISA's
    mma.m16n8k16 figures, for one m-tile, one k16 step and one 8-column
    block, each block once, the blocks in order: the same rows of A and
    the same k for all the warp's mma, the 16 consecutive rows 16w..16w+15
    for warp w.  A in registers is not loaded by the template and is not
    checked.
EXPECT (optional), ROW:K:COL: the first mma's A row origin ('-' for A in
registers), k origin and first column, which the first wgmma of the cut
must read (the caller knows them from the kernel's tiling).
Prints one line per mma checked and a summary; exits 1 on a mismatch.
"""
import json
import re
import sys

MASK = {32: 0xFFFFFFFF, 64: 0xFFFFFFFFFFFFFFFF, 16: 0xFFFF}


class Opaque:
    pass


OPQ = Opaque()


def strip(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def statements(body):
    """(label or None, text) per statement of a function body."""
    out = []
    for line in body.split("\n"):
        line = line.strip()
        if not line:
            continue
        m = re.match(r"^([$\w]+):$", line)
        if m:
            out.append(("label", m.group(1)))
            continue
        if line.startswith(".") or line in ("{", "}"):
            continue
        for part in line.split(";"):
            part = part.strip()
            if part and part not in ("{", "}"):
                out.append(("stmt", part))
    return out


def split_ops(s):
    """opcode, guard, operand list (top-level commas)."""
    guard = None
    m = re.match(r"^@(!?%\w+)\s+(.*)$", s)
    if m:
        guard, s = m.group(1), m.group(2)
    parts = s.split(None, 1)
    op = parts[0]
    rest = parts[1] if len(parts) > 1 else ""
    ops, depth, cur = [], 0, ""
    for c in rest:
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        if c == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        ops.append(cur.strip())
    return op, guard, ops


def intval(s):
    s = s.strip()
    neg = s.startswith("-")
    if neg:
        s = s[1:]
    if s.lower().startswith("0x"):
        v = int(s[2:].rstrip("Uu"), 16)
    else:
        v = int(s.rstrip("Uu"))
    return -v if neg else v


class Thread:
    def __init__(self, tid, params, symbols):
        self.r = {"%tid.x": tid, "%tid.y": 0, "%tid.z": 0, "%ntid.x": 128, "%ntid.y": 1,
                  "%ntid.z": 1, "%ctaid.x": 0, "%ctaid.y": 0, "%ctaid.z": 0,
                  "%laneid": tid % 32}
        self.params = params
        self.symbols = symbols

    def val(self, s):
        s = s.strip()
        if s in self.r:
            return self.r[s]
        if s in self.symbols:
            return self.symbols[s]
        if re.match(r"^-?(0[xX][0-9a-fA-F]+|\d+)[Uu]?$", s):
            return intval(s)
        if s.startswith("%"):
            return OPQ
        return OPQ


def addr_of(t, a):
    """[ %r + 4 ] -> value, or OPQ."""
    inner = a.strip()[1:-1].strip()
    m = re.match(r"^([%\w.]+)\s*(?:\+\s*(-?\w+))?$", inner)
    if not m:
        return OPQ
    base = t.val(m.group(1)) if m.group(1).startswith("%") else t.params.get(m.group(1), OPQ)
    if m.group(1) in t.symbols:
        base = t.symbols[m.group(1)]
    if base is OPQ or isinstance(base, tuple):
        if isinstance(base, tuple) and m.group(2):
            return (base[0], base[1] + intval(m.group(2)))
        return base
    return base + (intval(m.group(2)) if m.group(2) else 0)


def width(op):
    m = re.search(r"\.[busf](8|16|32|64)\b", op)
    return int(m.group(1)) if m else 32


def signed(v, bits):
    v &= MASK[bits]
    return v - (1 << bits) if v >> (bits - 1) else v


def arith(op, vals, bits):
    """Integer arithmetic of op on vals (ints or (buffer, byte) pointers)."""
    base = op.split(".")[0]
    if any(v is OPQ for v in vals):
        return OPQ
    ptr = [v for v in vals if isinstance(v, tuple)]
    if ptr:
        # pointer arithmetic: only add/sub/mov/cvt of one pointer and ints
        if base in ("add",) and len(ptr) == 1:
            p = ptr[0]
            return (p[0], p[1] + sum(v for v in vals if not isinstance(v, tuple)))
        if base in ("mov", "cvt", "cvta") and len(vals) == 1:
            return vals[0]
        if base == "mad" and ".wide" in op and isinstance(vals[2], tuple):
            return (vals[2][0], vals[2][1] + vals[0] * vals[1])
        return OPQ
    m = MASK.get(bits, MASK[32])
    if base == "cvt":
        ty = re.findall(r"\.([bsu])(8|16|32|64)", op)
        (dk, db), (sk, sb) = (ty[0][0], int(ty[0][1])), (ty[-1][0], int(ty[-1][1]))
        v = signed(vals[0], sb) if sk == "s" else vals[0] & MASK[sb]
        return v & MASK[db]
    if base == "mov" or base == "cvta":
        return vals[0] & m
    if base == "add":
        return (vals[0] + vals[1]) & m
    if base == "sub":
        return (vals[0] - vals[1]) & m
    if base == "mul":
        if ".wide" in op:
            return (vals[0] * vals[1]) & MASK[64]
        return (vals[0] * vals[1]) & m
    if base == "mad":
        if ".wide" in op:
            return (vals[0] * vals[1] + vals[2]) & MASK[64]
        return (vals[0] * vals[1] + vals[2]) & m
    if base == "shl":
        return (vals[0] << vals[1]) & m
    if base == "shr":
        if ".s" in op:
            return (signed(vals[0], bits) >> vals[1]) & m
        return (vals[0] & m) >> vals[1]
    if base == "and":
        return vals[0] & vals[1] & m
    if base == "or":
        return (vals[0] | vals[1]) & m
    if base == "xor":
        return (vals[0] ^ vals[1]) & m
    if base == "not":
        return ~vals[0] & m
    if base == "bfe":
        return (vals[0] >> vals[1]) & ((1 << vals[2]) - 1)
    return OPQ


def cmp(op, a, b):
    if a is OPQ or b is OPQ or isinstance(a, tuple) or isinstance(b, tuple):
        return OPQ
    bits = width(op)
    if ".s" in op:
        a, b = signed(a, bits), signed(b, bits)
    else:
        a, b = a & MASK[bits], b & MASK[bits]
    c = op.split(".")[1]
    return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b}[c]


class Machine:
    def __init__(self, ptx, roles):
        self.text = strip(open(ptx).read())
        m = re.search(r"\.entry\s+(\w+)\s*\((.*?)\)\s*(?:\.\w+[^{]*)?\{", self.text, re.S)
        self.entry = m.group(1)
        self.params = {}
        for name, (param, rows, cols, order) in roles.items():
            self.params[param] = (name, 0)
        body = self.text[m.end():]
        self.stmts = statements(body)
        self.labels = {s[1]: i for i, s in enumerate(self.stmts) if s[0] == "label"}
        # statement numbers as d4r-splice counts them (labels are not statements)
        self.sn = []
        k = 0
        for s in self.stmts:
            self.sn.append(k if s[0] == "stmt" else None)
            if s[0] == "stmt":
                k += 1
        self.smem = {}  # byte address -> (buffer, element index) or a D label
        self.gstores = {}  # (buffer, element index) -> what was stored there
        self.symbols = {}
        for sm in re.finditer(r"\.shared\s+(?:\.align\s+\d+\s+)?\.b8\s+(\w+)\[", self.text):
            self.symbols[sm.group(1)] = 0

    def run_to(self, threads, stop_sn):
        """All threads in lockstep from the entry to statement number
        stop_sn (not run), or to the end (stop_sn None).  The kernels'
        branches are uniform across the block (asserted); ldmatrix is
        executed per warp."""
        pc, steps = 0, 0
        while pc < len(self.stmts):
            steps += 1
            if steps > 100000:
                raise SystemExit("too many steps")
            kind, s = self.stmts[pc]
            if kind == "label":
                pc += 1
                continue
            if self.sn[pc] == stop_sn:
                return
            if s.split()[0].startswith("ldmatrix"):
                self.ldmatrix(threads, s)
                pc += 1
                continue
            targets = {self.step(t, s) for t in threads}
            if len(targets) != 1:
                raise SystemExit("a branch that is not uniform: " + s)
            nxt = targets.pop()
            if nxt == "ret":
                return
            pc = self.labels[nxt] if nxt else pc + 1
        if stop_sn is not None:
            raise SystemExit("statement s%d not reached" % stop_sn)

    def ldmatrix(self, threads, s):
        """ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 for each warp:
        each destination register gets two 2-byte shared values."""
        op, guard, ops = split_ops(s)
        trans = ".trans" in op
        dst = [x.strip() for x in ops[0].strip("{}").split(",")]
        for w in range(len(threads) // 32):
            lanes = threads[32 * w:32 * w + 32]
            addr = [addr_of(t, ops[1]) for t in lanes]
            for ti, t in enumerate(lanes):
                g, q = ti // 4, ti % 4
                for j, r in enumerate(dst):
                    if not trans:
                        a = addr[8 * j + g] + 4 * q
                        el = (self.smem.get(a), self.smem.get(a + 2))
                    else:
                        el = (self.smem.get(addr[8 * j + 2 * q] + 2 * g),
                              self.smem.get(addr[8 * j + 2 * q + 1] + 2 * g))
                    t.r[r] = ("h2", el[0], el[1])

    def step(self, t, s):
        op, guard, ops = split_ops(s)
        if guard:
            g = t.r.get(guard.lstrip("!"), OPQ)
            if g is OPQ:
                if op.startswith("bra"):
                    raise SystemExit("branch on an unknown predicate: " + s)
                for o in ops[:1]:
                    if o.startswith("%"):
                        t.r[o] = OPQ
                return None
            if (not g) ^ guard.startswith("!"):
                return None
        base = op.split(".")[0]
        if base == "bra":
            return ops[0]
        if base == "ld" and ".param" in op:
            name = ops[1].strip("[] ")
            t.r[ops[0]] = t.params.get(name, OPQ)
            return None
        if base == "ld" and ".global" in op:
            a = addr_of(t, ops[1])
            regs = [x.strip() for x in ops[0].strip("{}").split(",")]
            eb = 4 if (".b32" in op or ".u32" in op) else 2 if ".b16" in op else 4
            for i, r in enumerate(regs):
                t.r[r] = ("ld", a[0], a[1] + i * eb) if isinstance(a, tuple) else OPQ
            return None
        if base == "st" and ".shared" in op:
            a = addr_of(t, ops[0])
            regs = [x.strip() for x in ops[1].strip("{}").split(",")]
            for i, r in enumerate(regs):
                v = t.r.get(r, OPQ)
                for h in range(2):
                    if not isinstance(a, int):
                        continue
                    if isinstance(v, tuple) and v[0] == "ld":
                        self.smem[a + 4 * i + 2 * h] = (v[1], (v[2] + 2 * h) // 2)
                    elif isinstance(v, tuple) and v[0] == "h2":
                        self.smem[a + 4 * i + 2 * h] = v[1 + h]
                    else:
                        self.smem.pop(a + 4 * i + 2 * h, None)
            return None
        if base == "st" and ".global" in op:
            a = addr_of(t, ops[0])
            regs = [x.strip() for x in ops[1].strip("{}").split(",")]
            for i, r in enumerate(regs):
                v = t.r.get(r, OPQ)
                if isinstance(a, tuple) and isinstance(v, tuple) and v[0] == "h2":
                    for h in range(2):
                        self.gstores[(a[0], (a[1] + 4 * i + 2 * h) // 2)] = v[1 + h]
            return None
        if op.startswith("cvt.rn.f16x2.f32"):
            # d = {cvt(a) in the high half, cvt(b) in the low half}
            t.r[ops[0]] = ("h2", t.r.get(ops[2], OPQ), t.r.get(ops[1], OPQ))
            return None
        if op.startswith("wgmma.mma_async"):
            regs = [x.strip() for x in ops[0].strip("{}").split(",")]
            for i, r in enumerate(regs):
                t.r[r] = ("D", t.r["%tid.x"], i, regs[0])
            return None
        if base == "ret":
            return "ret"
        if op.startswith("cp.async.cg.shared.global") or op.startswith("cp.async.ca.shared.global"):
            d = addr_of(t, ops[0])
            src = addr_of(t, ops[1])
            n = intval(ops[2])
            size = t.val(ops[3]) if len(ops) > 3 else n
            if isinstance(d, int) and isinstance(src, tuple):
                for b in range(0, n, 2):
                    if size is OPQ or b < size:
                        self.smem[d + b] = (src[0], (src[1] + b) // 2)
                    else:
                        self.smem[d + b] = ("zero", 0)
            return None
        if base == "setp":
            t.r[ops[0]] = cmp(op, t.val(ops[1]), t.val(ops[2]))
            return None
        if base == "selp":
            p = t.r.get(ops[3], OPQ)
            t.r[ops[0]] = OPQ if p is OPQ else (t.val(ops[1]) if p else t.val(ops[2]))
            return None
        if base == "mov" and ops and ops[0].startswith("%") and len(ops) == 2:
            if ".pred" in op:
                v = t.val(ops[1])
                t.r[ops[0]] = OPQ if v is OPQ else bool(v)
                return None
            t.r[ops[0]] = t.val(ops[1])
            return None
        if base in ("add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "not",
                    "bfe", "cvt", "cvta") and ops and ops[0].startswith("%") and "{" not in ops[0]:
            if any(x in op for x in (".f32", ".f16", ".f64", ".rn", ".bf16", "f16x2")):
                t.r[ops[0]] = OPQ
                return None
            t.r[ops[0]] = arith(op, [t.val(x) for x in ops[1:]], width(op))
            return None
        # anything else: its destination registers become opaque
        if ops:
            for r in re.findall(r"%\w+", ops[0]):
                if base not in ("st", "cp", "bar", "wgmma", "fence", "red", "atom"):
                    t.r[r] = OPQ
        return None


def accumulators(ptx, cspec):
    """The kernel run to its end: which accumulator register of which
    thread each element of the output C holds (through the epilogue's
    cvt, st.shared, ldmatrix and st.global), against the wgmma D fragment
    the mma_sync form assumes: register i of thread (warp w, lane 4g + q)
    is row 16w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2q + i % 2 of the
    m64 tile."""
    param, rows, cols = cspec.split(":")
    rows, cols = int(rows), int(cols)
    mach = Machine(ptx, {"C": (param, rows, cols, "mn")})
    threads = [Thread(i, mach.params, mach.symbols) for i in range(128)]
    mach.run_to(threads, None)
    origin, bad, n = {}, [], 0
    for (buf, idx), lab in mach.gstores.items():
        if buf != "C":
            continue
        if not (isinstance(lab, tuple) and lab[0] == "D"):
            bad.append("C element %d holds %r, not an accumulator" % (idx, lab))
            continue
        _, tid, i, tile = lab
        row, col = divmod(idx, cols)
        w, lane = tid // 32, tid % 32
        g, q = lane // 4, lane % 4
        r0 = row - (16 * w + g + 8 * ((i // 2) % 2))
        c0 = col - (8 * (i // 4) + 2 * q + i % 2)
        origin.setdefault(tile, set()).add((r0, c0))
        n += 1
    for tile, o in sorted(origin.items()):
        if len(o) != 1:
            bad.append("tile %s: the accumulators are not the fragment of one m64 tile: "
                       "%d origins, e.g. %s" % (tile, len(o), sorted(o)[:4]))
        else:
            print("D tile %s: the kernel stores its register i of each thread at "
                  "rows %d + 16w + g + 8((i/2)%%2), columns %d + 8(i/4) + 2q + i%%2" % (
                      (tile,) + next(iter(o))))
    if not n:
        bad.append("no accumulator reaches the output")
    if bad:
        print("\n".join(sorted(set(bad))[:20]))
        print("MISMATCH")
        sys.exit(1)
    print("ok: %d output elements, each the accumulator register the fragment says" % n)


def main():
    if sys.argv[1] == "--accumulators":
        accumulators(sys.argv[2], sys.argv[3])
        return
    ptx, tpl, recipe_path, roles_arg = sys.argv[1:5]
    expect = sys.argv[5].split(":") if len(sys.argv) > 5 else None
    roles = {}
    for item in roles_arg.split(","):
        name, spec = item.split("=")
        param, rows, cols, order = spec.split(":")
        roles[name] = (param, int(rows), int(cols), order)
    recipe = json.load(open(recipe_path))
    mach = Machine(ptx, roles)
    bufname = {name: name for name in roles}
    first = None
    # the cut's first statement from the recipe's anchors: find it by text
    want = recipe["guards"]["first"].strip("^$").replace("\\", "")
    for i, (k, s) in enumerate(mach.stmts):
        if k == "stmt" and re.sub(r"\s+", " ", s) + ";" == want:
            first = mach.sn[i]
            break
    if first is None:
        raise SystemExit("the recipe's first statement is not in the module")
    threads = [Thread(i, mach.params, mach.symbols) for i in range(128)]
    mach.run_to(threads, first)

    # the template, formals replaced by the registers the recipe binds
    ttext = strip(open(tpl).read())
    bind = recipe["bind"]

    def formal(mm):
        name, idx = mm.group(1), mm.group(2)
        v = bind[name]
        return v[int(idx)] if idx is not None else v

    ttext = re.sub(r"%\{(\w+)(?:\[(\d+)\])?\}", formal, ttext)
    body = [s for k, s in statements(ttext) if k == "stmt"]
    # per thread: interpret, ldmatrix deferred to a per-warp gather
    frags = {}  # thread -> list of (mma index, {reg: [elements]})
    # interpret all threads statement by statement (ldmatrix needs the warp)
    bad, nmma = [], 0
    regs_el = [dict() for _ in threads]  # register -> list of 2 elements (f16 pair)
    mma_seen = []
    mma_d = []
    # the cut's wgmma statements, in order, and their D tuples
    wg_d = []
    for i, (k, st) in enumerate(mach.stmts):
        if k != "stmt" or mach.sn[i] < first:
            continue
        if not st.startswith("wgmma.mma_async"):
            break
        wg_d.append([x.strip() for x in split_ops(st)[2][0].strip("{}").split(",")])
    for s in body:
        op, guard, ops = split_ops(s)
        if op.startswith("ldmatrix"):
            trans = ".trans" in op
            dst = [x.strip() for x in ops[0].strip("{}").split(",")]
            for w in range(4):
                lanes = threads[32 * w:32 * w + 32]
                addr = [addr_of(t, ops[1]) for t in lanes]
                for ti, t in enumerate(lanes):
                    g, q = ti // 4, ti % 4
                    for j, r in enumerate(dst):
                        if not trans:
                            a = addr[8 * j + g] + 4 * q
                            el = [mach.smem.get(a), mach.smem.get(a + 2)]
                        else:
                            el = [mach.smem.get(addr[8 * j + 2 * q] + 2 * g),
                                  mach.smem.get(addr[8 * j + 2 * q + 1] + 2 * g)]
                        regs_el[32 * w + ti][r] = el
            continue
        if op.startswith("mma.sync.aligned.m16n8k16"):
            a = [x.strip() for x in ops[1].strip("{}").split(",")]
            b = [x.strip() for x in ops[2].strip("{}").split(",")]
            mma_seen.append((a, b))
            mma_d.append([x.strip() for x in ops[0].strip("{}").split(",")])
            for t in threads:
                e = regs_el[t.r["%tid.x"]]
                frags.setdefault(t.r["%tid.x"], []).append(
                    ([e.get(x) for x in a], [e.get(x) for x in b]))
            continue
        for t in threads:
            mach.step(t, s)
    # the check: per warp, one A tile (16 rows, 16 k) and B blocks in order
    nm = len(mma_seen)
    a_loaded = all(frags[0][i][0][0] is not None for i in range(nm))
    lines = []
    for i in range(nm):
        arow = acol = None
        rows_w = {}
        kset, ncols = set(), []
        for tid in range(128):
            w, lane = tid // 32, tid % 32
            g, q = lane // 4, lane % 4
            A, B = frags[tid][i]
            # B: b0 = (k 2q, 2q+1; n g), b1 = (k 2q+8, 2q+9; n g)
            for r, dk in ((0, 0), (1, 8)):
                for h in range(2):
                    el = B[r][h]
                    if el is None or el[0] not in roles:
                        bad.append("mma %d thread %d: B register %d holds %r" % (i, tid, r, el))
                        continue
                    _, rows, cols, order = roles[el[0]]
                    kk, n = divmod(el[1], cols)
                    if order == "nk":
                        n, kk = kk, n
                    kset.add(("B", el[0], kk - (2 * q + dk + h)))
                    ncols.append((n - g))
            if a_loaded:
                # a0 (g, 2q..), a1 (g+8, 2q..), a2 (g, 2q+8..), a3 (g+8, 2q+8..)
                for r, (dr, dk) in enumerate(((0, 0), (8, 0), (0, 8), (8, 8))):
                    for h in range(2):
                        el = A[r][h]
                        if el is None or el[0] not in roles:
                            bad.append("mma %d thread %d: A register %d holds %r" % (i, tid, r, el))
                            continue
                        _, rows, cols, order = roles[el[0]]
                        row, k = divmod(el[1], cols)
                        rows_w.setdefault(w, set()).add(row - (g + dr))
                        kset.add(("A", el[0], k - (2 * q + dk + h)))
        # one k16 step for A and B: their k origins agree
        ks = {(x[0], x[2]) for x in kset}
        korig = {x[1] for x in ks}
        if len(korig) != 1:
            bad.append("mma %d: the A and B elements are not one k16 step: %s" % (i, sorted(ks)[:6]))
        if len(set(ncols)) != 1:
            bad.append("mma %d: B is not one 8-column block: origins %s" % (i, sorted(set(ncols))[:6]))
        if a_loaded:
            origin = {w: sorted(v) for w, v in rows_w.items()}
            if any(len(v) != 1 for v in origin.values()):
                bad.append("mma %d: a warp's A rows are not one 16-row tile: %s" % (i, origin))
            else:
                o = [origin[w][0] for w in range(4)]
                if any(o[w] != o[0] + 16 * w for w in range(4)):
                    bad.append("mma %d: warps' rows do not follow 16w: %s" % (i, o))
                arow = o[0]
        lines.append((i, arow, sorted(korig)[0] if len(korig) == 1 else None,
                      ncols[0] if len(set(ncols)) == 1 else None))
    # blocks in order within each group of N/8 mma sharing A registers
    for i, arow, k0, n0 in lines:
        print("mma %d: A rows %s, k %s, B columns %s" % (
            i, "%d.." % arow if arow is not None else "(registers)", k0, n0))
    # runs of column blocks 8 apart: one per wgmma, all alike (the same first
    # column and length)
    runs, ns = [], [n0 for (i, arow, k0, n0) in lines]
    for n0 in ns:
        if runs and None not in (n0, runs[-1][-1]) and n0 == runs[-1][-1] + 8:
            runs[-1].append(n0)
        else:
            runs.append([n0])
    if None in ns or len({(r[0], len(r)) for r in runs}) != 1:
        bad.append("the column blocks are not runs of 8-column blocks alike: %s" % ns)
    # the D of mma j of wgmma r is registers 4j..4j+3 of wgmma r's D, and
    # its B is column block j: with the fragment the kernel's epilogue
    # shows (--accumulators), each result lands where the wgmma's would
    if not wg_d or sum(len(d) // 4 for d in wg_d) != len(mma_d):
        bad.append("%d mma.sync for wgmma D tuples of %s registers" % (
            len(mma_d), [len(d) for d in wg_d]))
    else:
        m = 0
        for r, d in enumerate(wg_d):
            for j in range(len(d) // 4):
                if mma_d[m] != d[4 * j:4 * j + 4]:
                    bad.append("mma %d (wgmma %d, block %d) writes %s, not D registers %d..%d %s" % (
                        m, r, j, mma_d[m], 4 * j, 4 * j + 3, d[4 * j:4 * j + 4]))
                n0 = lines[m][3]
                if n0 is None or n0 != lines[m - j][3] + 8 * j:
                    bad.append("mma %d (wgmma %d, block %d) reads B columns %s" % (m, r, j, n0))
                m += 1
    if expect and lines:
        i, arow, k0, n0 = lines[0]
        got = ["-" if arow is None else str(arow), str(k0), str(n0)]
        if got != expect:
            bad.append("the first mma reads A rows %s, k %s, columns %s; expected %s" % (
                got[0], got[1], got[2], ":".join(expect)))
    if bad:
        print("\n".join(sorted(set(bad))[:20]))
        print("MISMATCH: %d problems" % len(set(bad)))
        sys.exit(1)
    print("ok: %d mma.sync, %d threads, every A and B fragment is the kernel's own data" % (nm, 128))


if __name__ == "__main__":
    main()
