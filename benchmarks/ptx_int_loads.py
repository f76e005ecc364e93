#!/usr/bin/env python3
"""How a kernel's vector loads come out in PTX, by vector width (static evidence).

A definition (an integer one: ``storage: uint8`` ...) is rendered, its vector technique
compiled by clang to PTX at each width VX (``h200_ptx.clang_ptx``: LLVM's NVPTX back end,
as NVIDIA's OpenCL compiler is LLVM-based, not the same one) and one interior work-item
traced (``h200_ptx.analyse``): its global loads and stores by the instruction's width,
and instructions per output. It answers one question before a GPU is at hand: is a
vector of small elements one load, or several? Loads per output count every width
(scalar, v2, v4) alike. clang has no OpenCL library here: each ``convert_`` would be a
call whose body is not in the PTX, and a vector converted whole is loaded whole.
``--bodies`` gives the integer-to-float ones (``convert_float16`` of a ``uchar16``
...) bodies, lane by lane casts (``CONVERSIONS``: one ``cvt.rn.f32`` a lane), so their
instructions are counted and the compiler sees which lanes are used, as NVIDIA's
compiler does with its library; the stores' (``convert_uchar4_sat_rte`` ...) stay
calls. The last column counts the calls in the PTX (static).

    python3 benchmarks/ptx_int_loads.py examples/box_blur_u8.stencil.yaml \\
        [--size 8192x8192] [--vx 1,4,8,16] [--config WX=64,WY=4] [--device NVIDIA] \\
        [--template benchmarks/candidates/X.patch] [--bodies]

``--device NVIDIA`` builds with NVIDIA's own OpenCL compiler instead (on the GPU host:
its program binary is PTX, ``h200_ptx.device_ptx``), which is what decides; ptxas's
register count goes into the residency then. Another platform's binary is no PTX:
refused.

``--template`` renders the definition from a candidate template instead of the
package's: a whole ``stencil.cl``, or a ``.patch`` of the package's
(``benchmarks/candidate.py``); the table's heading names it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import h200_ptx
from candidate import PatchError, read_variant
from template_ab import rendering_from

from gtune.description import load_kernel

INTEGERS = ("uchar", "char", "ushort", "short", "uint", "int")


def _conversion(src: str, n: int) -> str:
    """``convert_floatN`` of an ``srcN`` (n 1: the scalar), lane by lane casts."""
    suffix = "" if n == 1 else str(n)
    lanes = ["x"] if n == 1 else [f"x.s{i:x}" for i in range(n)]
    body = ", ".join(f"(float){lane}" for lane in lanes)
    value = body if n == 1 else f"(float{suffix})({body})"
    return (
        f"float{suffix} __attribute__((overloadable)) convert_float{suffix}"
        f"({src}{suffix} x) {{ return {value}; }}\n"
    )


#: Bodies for the integer-to-float conversions (the OpenCL library's, which clang lacks).
CONVERSIONS = "".join(_conversion(t, n) for t in INTEGERS for n in (1, 2, 4, 8, 16))
ACCESS = re.compile(r"\b(ld|st)\.global(?:\.nc)?((?:\.v[24])?)\.(\w+)")
CALL = re.compile(r"^\s*call(?:\.uni)?\b", re.M)


def accesses(ptx: str) -> dict[str, int]:
    """Static count of global loads and stores by form (``ld.v4.u8``: four bytes)."""
    return dict(Counter(f"{op}{vec}.{t}" for op, vec, t in ACCESS.findall(ptx)))


TO_FLOAT = re.compile(r"^cvt\.\w+\.f(32|64)\.[su](8|16|32|64)$")


def analysed(kernel: Any, cfg: dict[str, int], ptx: str, registers: int | None) -> Any:
    """``h200_ptx.analyse``'s row, with the integer-to-float conversions (``cvt.rn.f32.u32``
    ...) traced as their own class, ``cvt.to_float`` (else they count as integer ones;
    on NVIDIA's GPUs they issue at a quarter or less of the rate of a float add)."""
    kind = h200_ptx.kind

    def with_conversions(op: str) -> str:
        return "cvt.to_float" if TO_FLOAT.match(op) else kind(op)

    h200_ptx.kind = with_conversions
    try:
        return h200_ptx.analyse(kernel, cfg, ptx, registers)
    finally:
        h200_ptx.kind = kind


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("definition", type=Path)
    p.add_argument("--size", default="8192x8192")
    p.add_argument("--vx", default="1,4,8,16")
    p.add_argument("--config", default="WX=64,WY=4", help="the work-group and the like")
    p.add_argument("--clang", default="clang-15")
    p.add_argument("--device", help="build with this OpenCL device's compiler (NVIDIA's)")
    p.add_argument(
        "--bodies",
        action="store_true",
        help="clang: give the integer-to-float convert_ functions bodies (CONVERSIONS)",
    )
    p.add_argument(
        "--template",
        type=Path,
        help="a candidate stencil.cl, or a .patch of the package's (default: the package's)",
    )
    args = p.parse_args(argv)
    try:
        template = read_variant(args.template) if args.template else None
    except (OSError, PatchError) as exc:
        print(f"ptx_int_loads: {exc}", file=sys.stderr)
        return 2
    device = h200_ptx.cl_device(args.device) if args.device else None
    if device is not None and "NVIDIA" not in device.platform.name:
        print(
            f"ptx_int_loads: {device.name} ({device.platform.name}): its program binary "
            "is not PTX; give an NVIDIA device, or none for clang",
            file=sys.stderr,
        )
        return 2
    with rendering_from(template):
        kernel = load_kernel(args.definition)
    names = ["NX", "NY", "NZ"]
    sizes = dict(zip(names, (int(v) for v in args.size.split("x")), strict=False))
    kernel = kernel.with_sizes({k: v for k, v in sizes.items() if k in kernel.sizes})
    base = dict(kernel.default_config() or {})
    base.update({k: int(v) for k, v in (kv.split("=") for kv in args.config.split(",") if kv)})
    compiler = f"{device.name}'s driver" if device is not None else f"clang ({args.clang})"
    source = f"template {args.template}" if args.template else "the package's template"
    print(f"# {args.definition} at {args.size} ({source}): PTX by {compiler}, ", end="")
    print("one interior work-item\n")
    print(
        "| VX | global accesses in the PTX (static) | loads / output | instructions / output "
        "| int-to-float cvt / output | calls (static) |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for vx in (int(v) for v in args.vx.split(",")):
        cfg = {**base, "VX": vx, "BX": vx, "LOCAL": 0, "STREAM": 0}
        cfg = {k: v for k, v in cfg.items() if k in base or k in ("VX", "BX")}
        registers = None
        if device is None:
            source = (CONVERSIONS if args.bodies else "") + kernel.source
            ptx = h200_ptx.clang_ptx(replace(kernel, source=source), cfg, args.clang)
        else:
            ptx, log = h200_ptx.device_ptx(kernel, cfg, device)
            registers = h200_ptx.ptxas_info(log).get("registers")
        try:
            row = analysed(kernel, cfg, ptx, registers)
        except ZeroDivisionError:
            print(
                f"ptx_int_loads: VX={vx}: the grid's middle work-item writes nothing at "
                f"{args.size}; give a larger --size",
                file=sys.stderr,
            )
            return 2
        per = row["per_output"]
        loads = sum(per.get(k, 0.0) for k in ("ld.global", "ld.global.v2", "ld.global.v4"))
        forms = ", ".join(f"{k} ×{n}" for k, n in sorted(accesses(ptx).items()))
        calls = len(CALL.findall(ptx))
        cvt = per.get("cvt.to_float", 0.0)
        ins = row["instructions_per_output"]
        print(f"| {vx} | {forms} | {loads:.2f} | {ins:.1f} | {cvt:.2f} | {calls} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
