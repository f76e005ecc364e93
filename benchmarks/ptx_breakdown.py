#!/usr/bin/env python3
"""Where a kernel's instructions per output go, by PTX opcode (static evidence).

``ptx_int_loads.py`` gives a configuration's instructions per output as one number and
its classes; this lists them by opcode (``fma.rn.f32``, ``cvt.rn.f32.u32``, ``bfe.u32``
...), each executed instruction of one interior work-item divided by the outputs it
writes, the way ``h200_ptx.analyse`` traces it, and the issue slots they take by pipe
at compute capability 9.0's rates a clock per SM (CUDA's throughput table: float32
add, multiply, fma 128; 32-bit integer arithmetic, shifts and logic 64; conversions to
or from float 16; one instruction a clock per scheduler, 128 lanes in all): the largest
is the pipe that bounds the arithmetic, in clocks per output per SM. PTX is not SASS:
ptxas fuses integer chains (``lop3``, ``iadd3``, ``lea``, ``shf``, ``prmt``) and drops
``mov.b32`` bit casts, so the integer column is an upper bound. PTX by clang's NVPTX back end
(``h200_ptx.clang_ptx``; the integer-to-float ``convert_`` functions given lane by lane
bodies as ``ptx_int_loads.py --bodies`` gives them). clang has no OpenCL library: the
results' ``convert_T_sat_rte`` stay calls, counted as ``call`` (NVIDIA's compiler makes
each lane one ``cvt.rni.sat``), so the table shows the integer-to-float work, the
arithmetic, the loads and the addressing, and leaves out the stores' conversions.
``--device NVIDIA`` (on the GPU host) traces NVIDIA's own PTX instead (its OpenCL
compiler's program binary, ``h200_ptx.device_ptx``) and names ptxas's registers.

    python3 benchmarks/ptx_breakdown.py DEF.stencil.yaml --config WX=8,WY=4,VX=16,BX=16,CX=2 \\
        [--size 8192x8192] [--template benchmarks/candidates/X.patch] [--top 20] \\
        [--device NVIDIA]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import h200_ptx
from candidate import PatchError, read_variant
from ptx_int_loads import CONVERSIONS
from template_ab import rendering_from

from gtune.description import load_kernel
from gtune.exceptions import GtuneError


def by_opcode(
    kernel: Any, cfg: dict[str, int], clang: str, ptx: str | None = None
) -> tuple[Counter[str], int]:
    """Executed instructions of the middle work-item by opcode, and the outputs it
    writes (of ``ptx``, or clang's PTX of the kernel)."""
    full = kernel.with_defaults(cfg)
    if ptx is None:
        ptx = h200_ptx.clang_ptx(replace(kernel, source=CONVERSIONS + kernel.source), cfg, clang)
    prog = h200_ptx.parse(ptx)
    tid, ctaid, local, _ = h200_ptx.middle_item(kernel, full)
    kind = h200_ptx.kind
    h200_ptx.kind = lambda op: op  # every opcode its own class
    try:
        c = h200_ptx.trace(prog, tid, ctaid, local)
    finally:
        h200_ptx.kind = kind
    outs = c.pop("outputs")
    c.pop("loads_before_use", None)
    return c, outs


#: lanes a clock per SM on compute capability 9.0, by pipe
RATES = {"float": 128, "integer": 64, "conversion": 16, "issue": 128}
NOT_ARITHMETIC = ("mov", "ld", "st", "bra", "ret", "exit", "bar", "call")


def pipe(op: str) -> str | None:
    """An opcode's pipe: float, integer, conversion (int to or from float), or None
    (moves, loads, stores, branches, calls)."""
    head = op.split(".")[0]
    if head in NOT_ARITHMETIC:
        return None
    parts = op.split(".")
    if head == "cvt":
        return "conversion" if any(p in ("f32", "f64", "f16") for p in parts) else "integer"
    return "float" if parts[-1] in ("f32", "f64") else "integer"


def pipes(counts: Counter[str], outs: int) -> dict[str, float]:
    """Clocks per output per SM each pipe takes (and the issue slots of all)."""
    per: Counter[str] = Counter()
    for op, n in counts.items():
        p = pipe(op)
        if p is not None:
            per[p] += n
    per["issue"] = sum(counts.values())
    return {p: per[p] / outs / rate for p, rate in RATES.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("definition", type=Path)
    p.add_argument("--config", required=True, help="N=V,... (VX, BX, the work-group ...)")
    p.add_argument("--size", default="8192x8192")
    p.add_argument("--clang", default="clang-15")
    p.add_argument("--template", type=Path, help="a candidate stencil.cl or .patch")
    p.add_argument("--top", type=int, default=30, help="the most frequent opcodes shown")
    p.add_argument("--device", help="trace this OpenCL device's PTX (NVIDIA's) instead of clang's")
    args = p.parse_args(argv)
    try:
        template = read_variant(args.template) if args.template else None
    except (OSError, PatchError) as exc:
        print(f"ptx_breakdown: {exc}", file=sys.stderr)
        return 2
    try:
        with rendering_from(template):
            kernel = load_kernel(args.definition)
        dims = (int(v) for v in args.size.split("x"))
        sizes = dict(zip(("NX", "NY", "NZ"), dims, strict=False))
        kernel = kernel.with_sizes({k: v for k, v in sizes.items() if k in kernel.sizes})
        cfg = dict(kernel.default_config() or {})
        cfg.update({k: int(v) for k, v in (kv.split("=") for kv in args.config.split(",") if kv)})
    except (OSError, GtuneError, ValueError) as exc:
        said = str(exc) if str(args.definition) in str(exc) else f"{args.definition}: {exc}"
        print(f"ptx_breakdown: {said}", file=sys.stderr)
        return 2
    ptx, compiler, registers = None, "clang PTX", ""
    if args.device:
        device = h200_ptx.cl_device(args.device)
        if "NVIDIA" not in device.platform.name:
            print(f"ptx_breakdown: {device.name}: its program binary is not PTX", file=sys.stderr)
            return 2
        ptx, log = h200_ptx.device_ptx(kernel, cfg, device)
        compiler = f"{device.name}'s PTX"
        regs = h200_ptx.ptxas_info(log).get("registers")
        registers = f"ptxas: {regs} registers\n\n" if regs is not None else ""
    try:
        counts, outs = by_opcode(kernel, cfg, args.clang, ptx)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"ptx_breakdown: {args.definition}: clang failed: {exc}", file=sys.stderr)
        return 2
    if not outs:
        print(f"ptx_breakdown: the middle work-item writes nothing at {args.size}", file=sys.stderr)
        return 2
    total = sum(counts.values())
    source = f"template {args.template}" if args.template else "the package's template"
    print(f"# {args.definition.name} at {args.size}, {args.config} ({source}): {compiler}\n")
    print(f"{registers}{outs} outputs, {total / outs:.2f} instructions / output\n")
    clocks = pipes(counts, outs)
    bound = max(clocks, key=lambda p: clocks[p])
    shown = ", ".join(f"{p} {c:.3f}" for p, c in clocks.items())
    print(f"clocks / output / SM by pipe: {shown}; bound: {bound}\n")
    print("| opcode | per output |\n| --- | ---: |")
    for op, n in counts.most_common(args.top):
        print(f"| `{op}` | {n / outs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
