#!/usr/bin/env python3
"""Does NVIDIA's OpenCL compiler take a register cap, and in which spelling?

Builds one configuration of a real stencil (``h200_ptx.py``'s kernels and sizes) with
NVIDIA's compiler once per option given (and once with none), each with
``-cl-nv-verbose``, two ways: the option handed to the driver as it is, and the way
gtune's workers build (``gtune.measure.regcap``: a register cap applied through the
PTX). Writes ptxas's registers and spills and the build logs: a cap that is taken shows
as fewer registers (or spills), one that is not as the same count as without it.

    python3 benchmarks/nv_regcap.py OUT.md --device NVIDIA \
        --config laplacian4:BX=4,BZ=2,CZ=4,RIM=1,RIN=1,VX=4,WX=32,WY=16 \
        --option=-cl-nv-maxrregcount=32 --option="-cl-nv-maxrregcount 32"
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import h200_ptx


def probe(config: str, options: Sequence[str], device: Any) -> list[str]:
    """Markdown lines: one row per option (none first), ptxas's registers and spills
    when the driver builds with the option as given, and when gtune builds with it
    (gtune.measure.regcap: the cap through the PTX); then each build log."""
    import pyopencl as cl

    from gtune.measure._opencl import build_program

    name, _, values = config.partition(":")
    cfg = h200_ptx.parse_config(values)
    rows = [
        "| option | driver: registers (spilled B) | gtune: registers (spilled B) |",
        "|---|---:|---:|",
    ]
    logs: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        kernel = h200_ptx.kernel_for(name, Path(tmp) / name, None)
        base = [*kernel.defines(kernel.with_defaults(cfg)), "-cl-nv-verbose"]
        for option in ["", *options]:
            opts = base + option.split()
            cells = []
            for way in ("driver", "gtune"):
                context = cl.Context([device])
                program = cl.Program(context, kernel.source)
                try:
                    if way == "driver":
                        program.build(options=opts, devices=[device])
                    else:
                        program = build_program(program, context, device, opts)
                    log = str(program.get_build_info(device, cl.program_build_info.LOG))
                except (cl.Error, ValueError) as e:  # the build failed: the option refused
                    log = f"build failed: {e}"
                info = h200_ptx.ptxas_info(log)
                spilled = info.get("spill_stores", 0) + info.get("spill_loads", 0)
                cells.append(f"{info['registers']} ({spilled})" if "registers" in info else "—")
                logs += ["", f"### `{option or '(none)'}`, {way}", "", "```", log.strip(), "```"]
            rows.append(f"| `{option or '(none)'}` | " + " | ".join(cells) + " |")
    return [f"# Register cap on {name} ({values})", "", *rows, "", "## Build logs", *logs]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--device", default="NVIDIA")
    ap.add_argument("--config", required=True, metavar="KERNEL:N=V,...")
    ap.add_argument("--option", action="append", default=[], metavar="OPT")
    args = ap.parse_args(argv)
    device = h200_ptx.cl_device(args.device)
    text = "\n".join(probe(args.config, args.option, device)) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
