#!/usr/bin/env python3
"""Static evidence for the H200's winning one-step configurations, from PTX.

Each configuration (by default ``benchmarks/results/h200-limit/configs.json``: the
fastest vec configurations, and the best global and stream one, of heat3d, box27,
laplacian4 at 512³ and jacobi2d at 8192², as the H200's complete searches measured
them) is rendered from the package's template (or ``--template X.cl``, a candidate) and
compiled to PTX by clang's OpenCL front end (``-target nvptx64-nvidia-nvcl -O3``; LLVM
as NVIDIA's OpenCL compiler is, not the same one; clang 15 knows no sm_90, so sm_86).
clang has no OpenCL builtins library: ``min``, ``max``, ``get_local_id`` and
``get_group_id`` are defined first as what NVIDIA's library makes of them (inline
selects and special registers), otherwise they would be calls.

The PTX is then *executed* for one work-item in the middle of the grid
(:func:`trace`: integer, predicate and address instructions evaluated, floating-point
and loaded values left unknown; no branch of these kernels depends on them), so the
counts are dynamic counts of an interior work-item, not static counts that mix in the
rim's paths: global loads by width, stores, integer and address instructions, float
instructions, branches, per output it writes. Registers: clang's PTX has virtual
registers only; ``live`` is the most 32-bit registers live at once in the PTX's own
order (a liveness pass over its control-flow graph; 64-bit ones count twice,
predicates not), an estimate of what ptxas allocates (it reorders, and its count is
what the driver reports). The launch geometry follows: work-groups against the 132
SMs, residency from threads, the live-register estimate and local memory, waves and
the last wave's fill, and the DRAM bytes in flight per SM (each resident work-item's
unique input of one iteration, if its loads are issued before their first use, as the
PTX shows) against Little's law at 4.8 TB/s.

    python3 benchmarks/h200_ptx.py OUT.md [--template X.cl] [--configs configs.json]
    python3 benchmarks/h200_ptx.py OUT.md --device NVIDIA --config KERNEL:N=V,... \
        [--option=-cl-nv-maxrregcount=32]
    python3 benchmarks/h200_ptx.py --extract STORE.db configs.json [--top 4]

``--extract`` writes the configurations file from a labelling store (the H200's
``labels.db``: ``benchmarks/results/predict/h200-complete/`` keeps its traces, whose
times carry no configurations).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from candidate import read_variant

from gtune.commands._common import parse_config
from gtune.description import load_kernel
from gtune.kernel import TunableKernel

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "benchmarks" / "results" / "h200-limit" / "configs.json"
KERNELS = {"heat3d": (512, 512, 512), "box27": (512, 512, 512), "laplacian4": (512, 512, 512)}
KERNELS_2D = {"jacobi2d": (8192, 8192)}
# vec blocks of more rows than the winners' (the fastest of each, VX 4): whether a
# candidate that needs fewer registers per row moves the optimum
PROBES = {
    "heat3d": [(2, 4)],
    "box27": [(4, 2)],
    "laplacian4": [(2, 2), (1, 4)],
    "jacobi2d": [(4, 1)],
}
SMS = 132
THREADS_PER_SM = 2048
BLOCKS_PER_SM = 32
REGS_PER_SM = 65536
SHARED_PER_SM = 228 * 1024
BANDWIDTH = 4.8e12  # B/s, the H200's HBM3e
PRELUDE = """\
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define get_local_id(d) ((size_t)((d) == 0 ? __nvvm_read_ptx_sreg_tid_x() \\
    : (d) == 1 ? __nvvm_read_ptx_sreg_tid_y() : __nvvm_read_ptx_sreg_tid_z()))
#define get_group_id(d) ((size_t)((d) == 0 ? __nvvm_read_ptx_sreg_ctaid_x() \\
    : (d) == 1 ? __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z()))
#define get_local_size(d) ((size_t)((d) == 0 ? __nvvm_read_ptx_sreg_ntid_x() \
    : (d) == 1 ? __nvvm_read_ptx_sreg_ntid_y() : __nvvm_read_ptx_sreg_ntid_z()))
#define get_global_id(d) (get_group_id(d) * get_local_size(d) + get_local_id(d))
"""
# vloadn / vstoren on private arrays (the 2D streaming kernel's row segments): lane moves
for _n in (2, 4, 8, 16):
    _lanes = [f"s{i:x}" for i in range(_n)]
    PRELUDE += (
        f"#define vstore{_n}(v, i, p) ("
        + ", ".join(f"(p)[{_n} * (i) + {j}] = (v).{c}" for j, c in enumerate(_lanes))
        + ")\n"
        + f"#define vload{_n}(i, p) ((float{_n})("
        + ", ".join(f"(p)[{_n} * (i) + {j}]" for j in range(_n))
        + "))\n"
    )


# -- configurations -----------------------------------------------------------------------
def extract(store: Path, top: int) -> dict[str, Any]:
    """The ``top`` fastest vec configurations of each kernel, the best global and stream
    one, and the fastest vec block of each ``PROBES`` shape, from a labelling store."""
    db = sqlite3.connect(store)
    out: dict[str, Any] = {"source": store.name, "kernels": {}}
    for name in [*KERNELS, *KERNELS_2D]:
        rows = db.execute(
            "select config, median_s from results where kernel_name = ? and status = 'ok' "
            "order by median_s",
            (name,),
        ).fetchall()
        picked: list[dict[str, Any]] = []
        seen: Counter[str] = Counter()
        for text, median in rows:
            cfg = json.loads(text)
            tech = technique(cfg)
            want = top if tech == "vec" else 1
            if tech in ("vec", "global", "stream") and seen[tech] < want:
                seen[tech] += 1
                picked.append({"technique": tech, "median_us": median * 1e6, "config": cfg})
        for by, bz in PROBES.get(name, []):
            probe = next(
                (
                    (median, cfg)
                    for cfg, median in ((json.loads(t), m) for t, m in rows)
                    if technique(cfg) == "vec"
                    and cfg.get("VX") == 4
                    and (cfg.get("BY", 1), cfg.get("BZ", 1)) == (by, bz)
                ),
                None,
            )
            if probe is not None:
                picked.append({"technique": "vec probe", "median_us": probe[0] * 1e6})
                picked[-1]["config"] = probe[1]
        out["kernels"][name] = picked
    return out


def given_configs(given: Sequence[str]) -> dict[str, Any]:
    """``KERNEL:N=V,...`` configurations in the configurations file's form (untimed)."""
    out: dict[str, Any] = {"source": "--config", "kernels": {}}
    for text in given:
        name, _, values = text.partition(":")
        cfg = parse_config(values)
        item = {"technique": technique(cfg), "median_us": None, "config": cfg}
        out["kernels"].setdefault(name, []).append(item)
    return out


def technique(cfg: Mapping[str, int]) -> str:
    if cfg.get("STREAM"):
        return "stream"
    if cfg.get("LOCAL"):
        return "local"
    if cfg.get("IMAGE"):
        return "image"
    return "vec" if cfg.get("VX", 1) > 1 else "global"


def kernel_for(name: str, work: Path, template: str | None) -> TunableKernel:
    """The real stencil ``name`` at the H200 sizes, from ``template`` or the package's."""
    import template_ab

    size = KERNELS.get(name) or KERNELS_2D[name]
    kernel = load_kernel(template_ab.render_real(name, work, template))
    sizes = dict(zip(("NX", "NY", "NZ"), size, strict=False))
    return kernel.with_sizes(sizes)


# -- PTX ------------------------------------------------------------------------------------
def compile_ptx(clang: str, source: str, defines: Sequence[str]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        cl, ptx = Path(tmp) / "k.cl", Path(tmp) / "k.ptx"
        cl.write_text(PRELUDE + source)
        cmd = [clang, "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl", "-O3", "-S"]
        cmd += ["-Xclang", "-target-cpu", "-Xclang", "sm_86"]
        cmd += ["-Xclang", "-finclude-default-header", "-o", str(ptx), str(cl), *defines]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        return ptx.read_text()


@dataclass
class Instr:
    guard: str | None  # "%p1" or "!%p1"
    op: str
    args: list[str]


@dataclass
class Program:
    code: list[Instr] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    shared_bytes: int = 0


INSTR = re.compile(r"^(@!?%\w+\s+)?([\w.]+)\s*(.*?);$")


def parse(ptx: str) -> Program:
    """The kernel's body: instructions and labels (call sequences' braces dropped)."""
    prog = Program()
    body = ptx[ptx.index(".entry") :]
    for m in re.finditer(r"^\s*\.shared[^\[\n]*\[(\d+)\]", ptx, re.M):
        prog.shared_bytes += int(m.group(1))
    for raw in body.splitlines()[1:]:
        line = raw.split("//")[0].strip()
        if not line or line in ("{", "}") or line.startswith((".reg", ".param", ".shared")):
            continue
        if line.endswith(":"):
            prog.labels[line[:-1]] = len(prog.code)
            continue
        mi = INSTR.match(line)
        if not mi:
            continue
        guard = mi.group(1).strip()[1:] if mi.group(1) else None
        args = [a.strip() for a in re.split(r",(?![^{]*\})", mi.group(3)) if a.strip()]
        prog.code.append(Instr(guard, mi.group(2), args))
    return prog


def kind(op: str) -> str:
    """An instruction's class in the tables."""
    head = op.split(".")[0]
    if op.startswith(("ld.global", "ld.param")):
        if op.startswith("ld.param"):
            return "other"
        return "ld.global.v4" if ".v4" in op else "ld.global.v2" if ".v2" in op else "ld.global"
    if op.startswith("st.global"):
        return "st.global.v4" if ".v4" in op else "st.global.v2" if ".v2" in op else "st.global"
    if op.startswith(("ld.shared", "st.shared")):
        return op[:9]
    if head in ("bra",):
        return "branch"
    if head in ("setp", "selp") and (".f32" in op or ".f64" in op):
        return "float"
    if re.search(r"\.(f32|f64)$", op) and head not in ("mov", "cvt", "ld", "st"):
        return "float"
    if head in ("setp", "selp", "and", "or", "xor", "not") and op.endswith("pred"):
        return "predicate"
    if head in ("mov", "ret", "bar", "exit", "cvta"):
        return "other"
    return "integer"


# -- executing one work-item ----------------------------------------------------------
WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64}


def bits(op: str) -> tuple[int, bool]:
    """The width and signedness of an integer operation's type suffix."""
    for part in reversed(op.split(".")):
        if part[:1] in ("s", "u", "b") and part[1:] in WIDTH:
            return WIDTH[part[1:]], part[:1] == "s"
    return 32, False


def signed(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


class Unknown(Exception):
    pass


def trace(
    prog: Program,
    tid: Sequence[int],
    ctaid: Sequence[int],
    ntid: Sequence[int],
    limit: int = 2_000_000,
    executed: set[int] | None = None,
) -> Counter[str]:
    """Execute the kernel for one work-item; the executed instructions by class, plus
    ``outputs`` (elements stored) and ``loads_before_use`` (global loads issued before
    the first floating-point instruction)."""
    regs: dict[str, int | None] = {}
    special = {f"%tid.{a}": tid[i] for i, a in enumerate("xyz")}
    special |= {f"%ctaid.{a}": ctaid[i] for i, a in enumerate("xyz")}
    special |= {f"%ntid.{a}": ntid[i] for i, a in enumerate("xyz")}
    params: dict[str, int] = {}

    def val(a: str) -> int | None:
        if a in special:
            return special[a]
        if a.startswith("%envreg"):  # NVIDIA's OpenCL: the global offset, 0 here
            return 0
        if a.startswith("%"):
            return regs.get(a)
        if a.startswith("0f") or a.startswith("0d"):
            return None
        try:
            return int(a, 0)
        except ValueError:
            return None

    counts: Counter[str] = Counter()
    pc, steps, first_float = 0, 0, False
    while pc < len(prog.code):
        steps += 1
        if steps > limit:
            raise RuntimeError("trace: step limit")
        ins = prog.code[pc]
        if executed is not None:
            executed.add(pc)
        pc += 1
        if ins.guard is not None:
            g = val(ins.guard.lstrip("!"))
            if g is None:
                raise Unknown(f"guard {ins.guard} unknown")
            if bool(g) == ins.guard.startswith("!"):
                continue
        op, a = ins.op, ins.args
        k = kind(op)
        counts[k] += 1
        if k == "float" and not first_float:
            first_float = True
            counts["loads_before_use"] = sum(
                counts[c] for c in ("ld.global", "ld.global.v2", "ld.global.v4")
            )
        if k.startswith("st.global"):
            n = len(a[1].strip("{}").split(",")) if a[1].startswith("{") else 1
            counts["outputs"] += n
        head = op.split(".")[0]
        if head == "bra":
            pc = prog.labels[a[0]]
            continue
        if head in ("ret", "exit"):
            break
        if head in ("st", "bar", "membar") or k.startswith("st."):
            continue
        if head == "ld":
            if op.startswith("ld.param"):
                params.setdefault(a[1], (len(params) + 1) << 40)
                regs[a[0]] = params[a[1]]
            else:
                for d in a[0].strip("{}").split(","):
                    regs[d.strip()] = None
            continue
        regs[a[0]] = evaluate(op, [val(x) for x in a[1:]])
    return counts


def evaluate(op: str, v: list[int | None]) -> int | None:
    """An integer or predicate instruction's result (None: a float or unknown)."""
    parts = op.split(".")
    head = parts[0]
    if any(p in ("f32", "f64", "f16") for p in parts[1:]) and head not in ("cvt", "setp"):
        return None
    if head == "selp":
        return None if v[2] is None else v[0] if v[2] else v[1]
    if head == "mov":
        return v[0] if parts[-1] != "pred" or v[0] is None else int(v[0] != 0)
    if head == "setp" and parts[-1][0] != "f" and None in v[:2]:
        raise Unknown(f"{op} on an unknown value")
    known = [t for t in v if t is not None]
    if len(known) < len(v):
        return None
    if head == "cvt":
        return convert(parts[-2], parts[-1], known[0])
    if head == "setp":
        return compare(parts, known)
    if parts[-1] == "pred":
        logic = {"and": lambda: known[0] & known[1], "or": lambda: known[0] | known[1]}
        logic |= {"xor": lambda: known[0] ^ known[1], "not": lambda: 1 - known[0]}
        return logic[head]() if head in logic else None
    return arithmetic(op, known)


def convert(dst: str, src: str, value: int) -> int | None:
    """cvt between integer types (None: to or from a float)."""
    if dst[0] == "f" or src[0] == "f":
        return None
    sw = WIDTH[src[1:]]
    x = signed(value, sw) if src[0] == "s" else value & ((1 << sw) - 1)
    return x & ((1 << WIDTH[dst[1:]]) - 1)


def compare(parts: Sequence[str], v: Sequence[int]) -> int | None:
    """setp on integers (None: on floats)."""
    t = parts[-1]
    if t[0] == "f":
        return None
    w = WIDTH[t[1:]]
    if t[0] == "s":
        x, y = signed(v[0], w), signed(v[1], w)
    else:
        x, y = v[0] & ((1 << w) - 1), v[1] & ((1 << w) - 1)
    cmp = parts[1]
    if cmp in ("lt", "lo"):
        return int(x < y)
    if cmp in ("le", "ls"):
        return int(x <= y)
    if cmp in ("gt", "hi"):
        return int(x > y)
    if cmp in ("ge", "hs"):
        return int(x >= y)
    return int(x == y) if cmp == "eq" else int(x != y)


def arithmetic(op: str, v: Sequence[int]) -> int | None:
    """An integer instruction's result, wrapped to its width (None: not modelled)."""
    parts = op.split(".")
    head = parts[0]
    w, s = bits(op)
    x = [signed(t, w) if s else t & ((1 << w) - 1) for t in v]
    wide = "wide" in parts
    ops: dict[str, Any] = {
        "add": lambda: x[0] + x[1],
        "sub": lambda: x[0] - x[1],
        "mul": lambda: (x[0] * x[1]) >> w if "hi" in parts else x[0] * x[1],
        "mad": lambda: x[0] * x[1] + (v[2] if wide else x[2]),
        "shl": lambda: x[0] << (v[1] & 0xFF),
        "shr": lambda: x[0] >> (v[1] & 0xFF),
        "and": lambda: x[0] & x[1],
        "or": lambda: x[0] | x[1],
        "xor": lambda: x[0] ^ x[1],
        "not": lambda: ~x[0],
        "neg": lambda: -x[0],
        "min": lambda: min(x[0], x[1]),
        "max": lambda: max(x[0], x[1]),
        "div": lambda: int(x[0] / x[1]),
        "rem": lambda: x[0] - int(x[0] / x[1]) * x[1],
        "abs": lambda: abs(x[0]),
    }
    if head not in ops:
        return None
    r = int(ops[head]())
    return r & ((1 << (2 * w if wide else w)) - 1)


# -- registers ------------------------------------------------------------------------------
REG = re.compile(r"%(rd|fd|rs|r|f|p)\d+")
REG_WEIGHT = {"rd": 2, "fd": 2, "rs": 1, "r": 1, "f": 1, "p": 0}


def defs_uses(ins: Instr) -> tuple[list[str], list[str]]:
    uses = [ins.guard.lstrip("!")] if ins.guard else []
    head = ins.op.split(".")[0]
    if head in ("st", "bra", "ret", "bar") or not ins.args:
        return [], uses + [m.group(0) for a in ins.args for m in REG.finditer(a)]
    dst = [m.group(0) for m in REG.finditer(ins.args[0])]
    return dst, uses + [m.group(0) for a in ins.args[1:] for m in REG.finditer(a)]


def live_registers(prog: Program, only: set[int] | None = None) -> int:
    """The most 32-bit registers live at once in the PTX's order (64-bit count twice,
    predicates not): a backward liveness pass over the control-flow graph; the most at
    the instructions ``only`` names (one work-item's path) if given."""
    starts = sorted(
        {0, *prog.labels.values()}
        | {i + 1 for i, ins in enumerate(prog.code) if ins.op.split(".")[0] in ("bra", "ret")}
    )
    starts = [s for s in starts if s < len(prog.code)]
    bounds = list(zip(starts, [*starts[1:], len(prog.code)], strict=True))
    index = {s: b for b, (s, _) in enumerate(bounds)}
    succ: list[list[int]] = []
    for b, (_, e) in enumerate(bounds):
        last = prog.code[e - 1]
        out = []
        if last.op.startswith("bra"):
            out.append(index[prog.labels[last.args[0]]])
            if last.guard and b + 1 < len(bounds):
                out.append(b + 1)
        elif last.op.split(".")[0] != "ret" and b + 1 < len(bounds):
            out.append(b + 1)
        succ.append(out)
    live_in: list[set[str]] = [set() for _ in bounds]
    changed = True
    while changed:
        changed = False
        for b in reversed(range(len(bounds))):
            live = set().union(*(live_in[t] for t in succ[b])) if succ[b] else set()
            s, e = bounds[b]
            for ins in reversed(prog.code[s:e]):
                d, u = defs_uses(ins)
                live -= set(d)
                live |= set(u)
            if live != live_in[b]:
                live_in[b], changed = live, True
    most = 0
    for b, (s, e) in enumerate(bounds):
        live = set().union(*(live_in[t] for t in succ[b])) if succ[b] else set()
        for i in reversed(range(s, e)):
            d, u = defs_uses(prog.code[i])
            live -= set(d)
            live |= set(u)
            if only is not None and i not in only:
                continue
            most = max(most, sum(REG_WEIGHT[r[1 : len(r.rstrip("0123456789"))]] for r in live))
    return most


def virtual_registers(ptx: str) -> int:
    return sum(
        int(n) * (2 if t in ("b64", "f64") else 0 if t == "pred" else 1)
        for t, n in re.findall(r"\.reg \.(\w+)\s+%\w+<(\d+)>", ptx)
    )


# -- the launch -----------------------------------------------------------------------------
def residency(threads: int, regs: int, shared: int) -> tuple[int, str]:
    """Work-groups resident per SM and what limits them (regs per thread rounded as the
    hardware allocates them: 256 per warp)."""
    warps = math.ceil(threads / 32)
    # ptxas allocates at most 255, and no more than lets one work-group of the required
    # size fit; it spills the rest
    cap = min(255, REGS_PER_SM // (warps * 32) // 8 * 8)
    spills = regs > cap
    per_warp = math.ceil(min(max(regs, 16), cap) * 32 / 256) * 256
    limits = {
        "blocks": BLOCKS_PER_SM,
        "threads": THREADS_PER_SM // (warps * 32),
        "registers": REGS_PER_SM // (per_warp * warps),
    }
    if shared:
        limits["local memory"] = SHARED_PER_SM // (shared + 1024)
    limit = min(limits, key=lambda k: limits[k])
    return limits[limit], limit + (", spills" if spills else "")


def clang_ptx(kernel: TunableKernel, cfg: Mapping[str, int], clang: str) -> str:
    """``kernel`` at ``cfg`` compiled to PTX by clang."""
    defines = [o for o in kernel.defines(kernel.with_defaults(cfg)) if o.startswith("-D")]
    return compile_ptx(clang, kernel.source, defines)


def device_ptx(kernel: TunableKernel, cfg: Mapping[str, int], device: Any) -> tuple[str, str]:
    """``kernel`` at ``cfg`` built by the device's own compiler: (its program binary as
    text, which NVIDIA's is PTX; the build log, with ptxas's registers and spills when
    the platform is NVIDIA's: ``-cl-nv-verbose``)."""
    import pyopencl as cl

    from gtune.measure._opencl import build_program

    options = kernel.defines(kernel.with_defaults(cfg))
    if "NVIDIA" in device.platform.name:
        options.append("-cl-nv-verbose")
    context = cl.Context([device])
    # as gtune's workers build: a register cap through the PTX (gtune.measure.regcap)
    program = build_program(cl.Program(context, kernel.source), context, device, options)
    log = str(program.get_build_info(device, cl.program_build_info.LOG))
    binary = program.get_info(cl.program_info.BINARIES)[0]
    return bytes(binary).decode("utf-8", errors="replace"), log


def ptxas_info(log: str) -> dict[str, int]:
    """Registers and spill bytes from an NVIDIA build log (empty: none said)."""
    out: dict[str, int] = {}
    for key, pattern in (
        ("registers", r"Used (\d+) registers"),
        ("spill_stores", r"(\d+) bytes spill stores"),
        ("spill_loads", r"(\d+) bytes spill loads"),
    ):
        m = re.search(pattern, log)
        if m:
            out[key] = int(m.group(1))
    return out


TERM = re.compile(r"\bT\((-?\d+), (-?\d+), (-?\d+),")


def block_input(kernel: TunableKernel, cfg: Mapping[str, int]) -> float | None:
    """Input elements one block of a work-group reads per output it writes, each vector
    (VX elements) counted once however many of the block's work-items and terms read it:
    what the L1 must fetch from L2 per output if it keeps a block's input (the halo's
    share), for the global and vec techniques (None for the others)."""
    full = kernel.with_defaults(cfg)
    if full.get("STREAM") or full.get("LOCAL") or full.get("IMAGE"):
        return None
    terms = [tuple(int(v) for v in m.groups()) for m in TERM.finditer(kernel.source)]
    vx = full.get("VX", 1)
    sx = full.get("WX", 1) * full.get("BX", 1)
    sy = full.get("WY", 1) * full.get("BY", 1)
    sz = full.get("WZ", 1) * full.get("BZ", 1)
    touched = {
        (z + dz, y + dy, (x + dx + lane) // vx)
        for z in range(sz)
        for y in range(sy)
        for x in range(0, sx, vx)
        for dx, dy, dz in terms
        for lane in (0, vx - 1)
    }
    return len(touched) * vx / (sx * sy * sz)


def middle_item(
    kernel: TunableKernel, full: Mapping[str, int]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """The launch's middle work-item, as :func:`trace` takes it: its ids in its group
    (``tid``), its group's ids (``ctaid``), the group's size in three dimensions, and
    the number of groups per dimension."""
    glob, local = kernel.launch_sizes(full)
    assert local is not None
    groups = [g // w for g, w in zip(glob, local, strict=True)]
    tid = [w // 2 for w in local] + [0] * (3 - len(local))
    ctaid = [g // 2 for g in groups] + [0] * (3 - len(groups))
    return tid, ctaid, [*local, 1, 1][:3], groups


def analyse(
    kernel: TunableKernel, cfg: Mapping[str, int], ptx: str, registers: int | None = None
) -> dict[str, Any]:
    """One configuration's row from its PTX: dynamic counts of an interior work-item per
    output, registers (``registers``, ptxas's, else the PTX's live estimate) and the
    launch."""
    full = kernel.with_defaults(cfg)
    prog = parse(ptx)
    tid, ctaid, local, groups = middle_item(kernel, full)
    path: set[int] = set()
    c = trace(prog, tid, ctaid, local, executed=path)
    outs = c["outputs"]
    threads = math.prod(local)
    live = live_registers(prog)
    resident, limit = residency(threads, registers or live, prog.shared_bytes)
    wgs = math.prod(groups)
    waves = wgs / (resident * SMS)
    merged = full.get("CX", 1) * full.get("CY", 1) * full.get("CZ", 1)
    per_iter = outs / (full.get("ZC", 1) if full.get("STREAM") else merged)
    instr = sum(v for k, v in c.items() if k not in ("outputs", "loads_before_use"))
    return {
        "config": dict(cfg),
        "outputs": outs,
        "counts": dict(c),
        "per_output": {k: v / outs for k, v in c.items() if k != "outputs"},
        "instructions_per_output": instr / outs,
        "registers": registers,
        "live_registers": live,
        "live_registers_path": live_registers(prog, path),
        "virtual_registers": virtual_registers(ptx),
        "shared_bytes": prog.shared_bytes,
        "threads": threads,
        "work_groups": wgs,
        "resident": resident,
        "resident_limit": limit,
        "waves": waves,
        "wave_efficiency": waves / math.ceil(waves),
        # each resident work-item's unique input of one iteration (float: every kernel
        # here), if all its loads are in flight at once
        "in_flight_bytes_per_sm": resident * threads * per_iter * 4,
        "iteration_outputs": per_iter,
        "block_input_per_output": block_input(kernel, cfg),
    }


# -- the table ------------------------------------------------------------------------------
COPY_GBS = 4243.0  # the H200's float4 copy at 512³ (4,221-4,265 GB/s, issue 49)


COUNTED: tuple[str, ...] = ("ld.global.v4", "ld.global", "st.global.v4", "st.global")
COUNTED += ("integer", "float", "predicate", "branch")


def shown(cfg: Mapping[str, int]) -> str:
    """A configuration without the switches that are off and the merges that are 1."""
    return " ".join(
        f"{k}={v}"
        for k, v in cfg.items()
        if not (k in ("IMAGE", "LOCAL", "STREAM", "RIM", "SEP") and v == 0)
        and not (k in ("CX", "CY", "CZ", "BY", "BZ", "ZC", "WZ") and v == 1)
    )


def table(rows: Sequence[dict[str, Any]]) -> str:
    """Two tables: the interior work-item's instructions per output; registers and the
    launch. A row whose PTX could not be traced shows its registers and why."""
    lines = [
        "| kernel | tech | configuration | µs (% copy) | ld.v4 | ld | st.v4 | st | int | "
        "float | pred | bra | all | loads before use |",
        "|---|---|---|" + "---:|" * 11,
    ]
    for r in rows:
        us = r["median_us"]  # None: a configuration not measured yet
        timed = (
            "—"
            if us is None
            else f"{us:.1f} ({r['bytes'] / (us * 1e-6) / 1e9 / COPY_GBS * 100:.1f})"
        )
        if "per_output" in r:
            cells = [f"{r['per_output'].get(k, 0):.2f}" for k in COUNTED]
            cells += [f"{r['instructions_per_output']:.2f}"]
            cells += [str(r["counts"].get("loads_before_use"))]
        else:
            cells = [""] * (len(COUNTED) + 1) + [f"not traced: {r.get('error', '')[:60]}"]
        lines.append(
            f"| {r['kernel']} | {r['technique']} | {shown(r['config'])} | "
            f"{timed} | " + " | ".join(cells) + " |"
        )
    lines += [
        "",
        "| kernel | tech | configuration | registers: ptxas (spilled B) or PTX live, kernel / "
        "path (virtual) | WG | WGs | resident WGs/SM (limit) | waves (efficiency) | "
        "KB in flight/SM | block input per output |",
        "|---|---|---|" + "---:|" * 7,
    ]
    for r in rows:
        ptxas = r.get("ptxas") or {}
        if "registers" in ptxas:
            regs = f"{ptxas['registers']} ({ptxas.get('spill_stores', 0)})"
        elif "live_registers" in r:
            regs = f"{r['live_registers']} / {r['live_registers_path']} ({r['virtual_registers']})"
        else:
            regs = "?"
        launch = ["", "", "", "", "", ""]
        if "threads" in r:
            fill = r["block_input_per_output"]
            launch = [
                str(r["threads"]),
                str(r["work_groups"]),
                f"{r['resident']} ({r['resident_limit']})",
                f"{r['waves']:.1f} ({r['wave_efficiency'] * 100:.0f} %)",
                f"{r['in_flight_bytes_per_sm'] / 1024:.1f}",
                "" if fill is None else f"{fill:.2f}",
            ]
        lines.append(
            f"| {r['kernel']} | {r['technique']} | {shown(r['config'])} | {regs} | "
            + " | ".join(launch)
            + " |"
        )
    return "\n".join(lines) + "\n"


def run(
    configs: Mapping[str, Any],
    template: str | None,
    clang: str,
    device: Any = None,
    emit: Callable[[list[dict[str, Any]], dict[str, str]], None] | None = None,
    techniques: Sequence[str] = (),
    options: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Every configuration's row (of ``techniques``, default all), and (device builds)
    each one's PTX by a file name; ``emit`` is given both after every row, so a time
    limit loses only the rows not reached. ``options``: compiler options a device build
    takes besides the kernel's own (clang's takes only the defines)."""
    rows: list[dict[str, Any]] = []
    ptxs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, picked in configs["kernels"].items():
            kernel = kernel_for(name, Path(tmp) / name, template)
            kernel = replace(kernel, build_options=kernel.build_options + tuple(options))
            for i, item in enumerate(picked):
                if techniques and item["technique"] not in techniques:
                    continue
                row: dict[str, Any] = {"kernel": name, "technique": item["technique"]}
                row |= {"median_us": item["median_us"], "bytes": kernel.bytes_moved()}
                if device is None:
                    row |= analyse(kernel, item["config"], clang_ptx(kernel, item["config"], clang))
                else:
                    ptx, log = device_ptx(kernel, item["config"], device)
                    ptxs[f"{name}-{i}.ptx"] = ptx
                    info = ptxas_info(log)
                    row |= {"config": item["config"], "ptxas": info}
                    try:
                        row |= analyse(kernel, item["config"], ptx, info.get("registers"))
                    except (Unknown, RuntimeError, KeyError, ValueError, IndexError) as e:
                        row["error"] = f"{type(e).__name__}: {e}"
                rows.append(row)
                if emit is not None:
                    emit(rows, ptxs)
    return rows, ptxs


def write(out: Path, rows: Sequence[dict[str, Any]], ptxs: Mapping[str, str]) -> None:
    """The table (Markdown), the rows (JSON beside it) and the PTX files (packed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table(rows))
    out.with_suffix(".json").write_text(json.dumps(list(rows), indent=1) + "\n")
    if ptxs:
        with tarfile.open(out.with_suffix(".ptx.tar.gz"), "w:gz") as tar:
            for fname, ptx in ptxs.items():
                data = ptx.encode()
                info = tarfile.TarInfo(fname)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def cl_device(selector: str) -> Any:
    """The first OpenCL device whose platform or device name contains ``selector``."""
    import pyopencl as cl

    for platform in cl.get_platforms():
        for dev in platform.get_devices():
            if selector.lower() in f"{platform.name} {dev.name}".lower():
                return dev
    raise SystemExit(f"h200_ptx: no OpenCL device matches {selector!r}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, nargs="?", help="the table (Markdown); JSON beside it")
    ap.add_argument("--configs", type=Path, default=CONFIGS)
    ap.add_argument("--template", type=Path, help="a candidate stencil.cl (default: the package's)")
    ap.add_argument("--clang", default=shutil.which("clang-15") or "clang")
    ap.add_argument("--extract", nargs=2, type=Path, metavar=("STORE", "CONFIGS"))
    ap.add_argument("--top", type=int, default=4, help="vec configurations per kernel (--extract)")
    ap.add_argument(
        "--device",
        help="build with this OpenCL device's compiler instead of clang (NVIDIA: its PTX, "
        "ptxas's registers and spills); the PTX files are packed beside OUT",
    )
    ap.add_argument(
        "--techniques",
        nargs="+",
        default=[],
        help="only the configurations of these techniques (vec, 'vec probe', global, stream)",
    )
    ap.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KERNEL:N=V,...",
        help="a configuration to analyse (repeatable): these instead of --configs' file",
    )
    ap.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="OPT",
        help="a compiler option the device builds take besides the kernel's own "
        "(repeatable; write it --option=-cl-..., e.g. NVIDIA's register cap)",
    )
    args = ap.parse_args(argv)
    if args.extract:
        store, dest = args.extract
        if not store.is_file():
            print(f"h200_ptx: {store}: no such store", file=sys.stderr)
            return 2
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(extract(store, args.top), indent=1) + "\n")
        return 0
    if args.config:
        configs = given_configs(args.config)
    elif args.configs.is_file():
        configs = json.loads(args.configs.read_text())
    else:
        print(f"h200_ptx: {args.configs}: no such configurations file", file=sys.stderr)
        return 2
    template = read_variant(args.template) if args.template else None
    device = cl_device(args.device) if args.device else None
    out = args.out

    def emit(rows: list[dict[str, Any]], ptxs: dict[str, str]) -> None:
        if out is not None:
            write(out, rows, ptxs)

    rows, _ = run(configs, template, args.clang, device, emit, args.techniques, args.option)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
