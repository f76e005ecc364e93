#!/usr/bin/env python3
"""Work per point per time step of the temporal-tile kernel, from PTX.

A multi-step definition (jacobi2d with ``--steps`` by default) is rendered from the
package's template or ``--template`` (a candidate: a ``stencil.cl`` or a ``.patch`` of
the package's, ``benchmarks/candidate.py``), each configuration compiled to PTX by clang
(``h200_ptx.clang_ptx``: LLVM's NVPTX back end, as NVIDIA's OpenCL compiler is, not the
same one; ``--device NVIDIA`` on the GPU host: NVIDIA's own, with ptxas's registers)
and one work-item of a work-group in the middle of the grid executed
(``h200_ptx.trace``: its tile lies inside the array, the fast path). Its dynamic counts
are divided by the points it owns times TB: per output point and time step, the halo
computed again included. Local-memory loads and stores, barriers, all instructions.

    python3 benchmarks/ptx_tile.py [--kernel stencils/jacobi2d.stencil.yaml] \\
        [--size 8192] [--steps 8] [--template X.patch] --config TB=4,WX=16,... [...]

``--configs FILE.yaml`` takes the kernel, the steps and the configurations of a
``temporal_configs.py`` file instead (``--prefix N=V,...`` laid under each of them).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import h200_ptx
from candidate import PatchError, read_variant
from template_ab import rendering_from

from gtune.commands._common import parse_config
from gtune.kernel import TunableKernel
from gtune.stencils.definition import load_definition
from gtune.stencils.render import definition_kernel_of

ROOT = Path(__file__).resolve().parents[1]
# clang has no OpenCL library: barrier() would be a call; NVIDIA's is one bar.sync
BARRIER = "#define barrier(flags) __nvvm_bar_sync(0)\n"
SHOWN = ("ld.shared", "st.shared", "bar", "float", "integer", "branch", "all")


def kernel_of(path: Path, size: int, steps: int, template: str | None) -> TunableKernel:
    """The definition at ``path`` with ``steps`` steps, ``size`` per axis."""
    d = dataclasses.replace(load_definition(path), steps=steps)
    sizes = {k: size for k in ("NX", "NY", "NZ")[: d.dims]}
    with rendering_from(template):
        kernel: TunableKernel = definition_kernel_of(d, sizes)
    return kernel


def compiled(
    kernel: TunableKernel, full: Mapping[str, int], clang: str, device: Any | None
) -> tuple[str, dict[str, int]]:
    """The PTX of ``kernel`` at ``full``, from clang or from the device's own compiler
    (NVIDIA's, whose program binary is PTX; then ptxas's registers and spills too)."""
    if device is not None:
        ptx, log = h200_ptx.device_ptx(kernel, full, device)
        return ptx, h200_ptx.ptxas_info(log)
    kept = h200_ptx.PRELUDE
    h200_ptx.PRELUDE = kept + BARRIER
    try:
        return h200_ptx.clang_ptx(kernel, full, clang), {}
    finally:
        h200_ptx.PRELUDE = kept


def counts(
    kernel: TunableKernel, cfg: Mapping[str, int], clang: str, device: Any | None = None
) -> dict[str, float]:
    """Dynamic counts of a middle work-item per output point and time step."""
    full = kernel.with_defaults(cfg)
    ptx, info = compiled(kernel, full, clang, device)
    prog = h200_ptx.parse(ptx)
    tid, ctaid, local, _ = h200_ptx.middle_item(kernel, full)
    c: Counter[str] = h200_ptx.trace(prog, tid, ctaid, local)
    bars = _barriers(prog, tid, ctaid, local)
    per = c["outputs"] * full.get("TB", 1)
    work = {k: v for k, v in c.items() if k not in ("outputs", "loads_before_use")}
    out = {k: work.get(k, 0) / per for k in SHOWN if k not in ("bar", "all")}
    out["bar"] = bars / per
    out["all"] = sum(work.values()) / per
    out["outputs"] = c["outputs"]
    out["shared_bytes"] = prog.shared_bytes
    out |= info
    return out


def _barriers(prog: Any, tid: Sequence[int], ctaid: Sequence[int], local: Sequence[int]) -> int:
    """The barriers the work-item passes (``trace`` counts them among ``other``)."""
    kept = h200_ptx.kind
    h200_ptx.kind = lambda op: "bar" if op.startswith("bar") else kept(op)
    try:
        return h200_ptx.trace(prog, tid, ctaid, [*local, 1, 1][:3])["bar"]
    finally:
        h200_ptx.kind = kept


def table(rows: Sequence[tuple[str, dict[str, float]]]) -> str:
    lines = [
        "| configuration | " + " | ".join(SHOWN) + " |",
        "|---|" + "---:|" * len(SHOWN),
    ]
    for name, c in rows:
        cells = [f"{c[k]:.2f}" if k != "bar" else f"{c[k]:.4f}" for k in SHOWN]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    regs = [
        f"- {name}: {c['registers']:.0f} registers, spills {c.get('spill_stores', 0):.0f} B"
        for name, c in rows
        if "registers" in c
    ]
    return "\n".join(lines + (["", *regs] if regs else []))


def from_file(path: Path, prefix: str) -> tuple[Path, int, list[str]]:
    """A ``temporal_configs.py`` file's kernel (a real stencil's name or a definition's
    path), steps and configurations, each as ``N=V,...`` after ``prefix``."""
    data = yaml.safe_load(path.read_text())
    name = str(data.get("kernel", "heat3d"))
    kernel = Path(name) if name.endswith(".yaml") else ROOT / "stencils" / f"{name}.stencil.yaml"
    head = [prefix] if prefix else []
    configs = [
        ",".join([*head, *(f"{k}={v}" for k, v in e["config"].items())]) for e in data["configs"]
    ]
    return kernel, int(data.get("steps", 8)), configs


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernel", type=Path, default=ROOT / "stencils" / "jacobi2d.stencil.yaml")
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--template", type=Path, help="a candidate stencil.cl or .patch")
    p.add_argument("--config", action="append", default=[], metavar="N=V,...")
    p.add_argument("--configs", type=Path, help="a temporal_configs.py file (YAML)")
    p.add_argument("--prefix", default="", metavar="N=V,...", help="under each of --configs")
    p.add_argument("--clang", default="clang-15")
    p.add_argument(
        "--device",
        help="an OpenCL device by name (NVIDIA's: its compiler's PTX and ptxas's registers); "
        "left out: clang",
    )
    args = p.parse_args(argv)
    if args.configs:
        args.kernel, args.steps, more = from_file(args.configs, args.prefix)
        args.config += more
    if not args.config:
        p.error("give --config or --configs")
    try:
        template = read_variant(args.template) if args.template else None
    except (OSError, PatchError) as exc:
        print(f"ptx_tile: {exc}", file=sys.stderr)
        return 2
    device = h200_ptx.cl_device(args.device) if args.device else None
    kernel = kernel_of(args.kernel, args.size, args.steps, template)
    rows = []
    for c in args.config:
        try:
            rows.append((c, counts(kernel, parse_config(c), args.clang, device)))
        except (h200_ptx.Unknown, RuntimeError, KeyError, ValueError, ZeroDivisionError) as exc:
            # a PTX the tracer cannot follow: the other configurations still count
            print(f"ptx_tile: {c}: not traced ({type(exc).__name__}: {exc})", file=sys.stderr)
    source = args.template or "the package's template"
    compiler = f"{device.name}'s PTX" if device is not None else "clang PTX"
    print(f"Per output point and time step ({args.kernel.name}, {source}, {compiler}):\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
