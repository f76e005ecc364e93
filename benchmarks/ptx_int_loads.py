#!/usr/bin/env python3
"""How a kernel's vector loads come out in PTX, by vector width (static evidence).

A definition (an integer one: ``storage: uint8`` ...) is rendered, its vector technique
compiled by clang to PTX at each width VX (``h200_ptx.clang_ptx``: LLVM's NVPTX back end,
as NVIDIA's OpenCL compiler is LLVM-based, not the same one) and one interior work-item
traced (``h200_ptx.analyse``): its global loads and stores by the instruction's width,
and instructions per output. It answers one question before a GPU is at hand: is a
vector of small elements one load, or several?

    python3 benchmarks/ptx_int_loads.py examples/box_blur_u8.stencil.yaml \\
        [--size 8192x8192] [--vx 1,4,8,16] [--config WX=64,WY=4]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import h200_ptx

from gtune.description import load_kernel

ACCESS = re.compile(r"\b(ld|st)\.global(?:\.nc)?((?:\.v[24])?)\.(\w+)")


def accesses(ptx: str) -> dict[str, int]:
    """Static count of global loads and stores by form (``ld.v4.u8``: four bytes)."""
    return dict(Counter(f"{op}{vec}.{t}" for op, vec, t in ACCESS.findall(ptx)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("definition", type=Path)
    p.add_argument("--size", default="8192x8192")
    p.add_argument("--vx", default="1,4,8,16")
    p.add_argument("--config", default="WX=64,WY=4", help="the work-group and the like")
    p.add_argument("--clang", default="clang-15")
    args = p.parse_args(argv)
    kernel = load_kernel(args.definition)
    names = ["NX", "NY", "NZ"]
    sizes = dict(zip(names, (int(v) for v in args.size.split("x")), strict=False))
    kernel = kernel.with_sizes({k: v for k, v in sizes.items() if k in kernel.sizes})
    base = dict(kernel.default_config() or {})
    base.update({k: int(v) for k, v in (kv.split("=") for kv in args.config.split(",") if kv)})
    print(
        f"# {args.definition} at {args.size}: PTX by clang ({args.clang}), one interior work-item\n"
    )
    print("| VX | global accesses in the PTX (static) | loads / output | instructions / output |")
    print("| ---: | --- | ---: | ---: |")
    for vx in (int(v) for v in args.vx.split(",")):
        cfg = {**base, "VX": vx, "BX": vx, "LOCAL": 0, "STREAM": 0}
        cfg = {k: v for k, v in cfg.items() if k in base or k in ("VX", "BX")}
        ptx = h200_ptx.clang_ptx(kernel, cfg, args.clang)
        try:
            row = h200_ptx.analyse(kernel, cfg, ptx)
        except ZeroDivisionError:
            print(
                f"ptx_int_loads: VX={vx}: the grid's middle work-item writes nothing at "
                f"{args.size}; give a larger --size",
                file=sys.stderr,
            )
            return 2
        per = row["per_output"]
        loads = per.get("ld.global", 0.0) + per.get("ld.global.v4", 0.0)
        forms = ", ".join(f"{k} ×{n}" for k, n in sorted(accesses(ptx).items()))
        print(f"| {vx} | {forms} | {loads:.2f} | {row['instructions_per_output']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
