#!/usr/bin/env python3
"""Which lifted corpus kernels are memory-bound on the H200: each winner's DRAM floor
against its compute floors and its measured time (static evidence, clang's PTX).

For each kernel of a ``lift_corpus.py`` result (its ``lifted_config`` at its ``size``):

* DRAM floor: ``bytes_moved`` / the copy's bandwidth at that size (``copy_gbs``);
* issue floor: PTX instructions per output × outputs / (132 SMs × 4 schedulers × 32
  lanes × 1.98 GHz);
* pipe floor: the busiest pipe's clocks per output per SM (``ptx_breakdown.pipes``'s
  rates, and float64 at 64 a clock) × outputs / (132 × 1.98 GHz);
* the measured time (``times_s.lifted``).

Memory-bound when the DRAM floor is at least ``--margin`` (2) times the larger
compute floor; compute-bound (issue or the pipe named) when a compute floor reaches
the DRAM floor; mixed between. The PTX is clang's (``ptx_breakdown.by_opcode``: one
interior work-item traced), with two corrections toward what NVIDIA's compiler makes:
a store conversion (``convert_T_sat_rte``, a call in clang's PTX, its parameters
passed by ``st.param``/``ld.param``) counted as one ``cvt`` a lane, and
``get_global_size`` given the launch's sizes (otherwise a call whose value the trace
does not know). The definitions are lifted on the device given (PoCL will do) into
``--definitions`` unless already there.

    python3 benchmarks/bound.py benchmarks/results/lift/h200-all/lift_corpus.json \\
        --definitions DEFS [--device pthread] [--kernels blur_u8 ...] [--margin 2] \\
        [--config blur_u8:WX=8,WY=4,...] [--json OUT.json]

``--config NAME:K=V,...`` traces NAME at that configuration instead of its winner
(for comparing with NVIDIA's own PTX counts of that configuration; the measured
columns are then left empty).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SMS = 132
CLOCK_HZ = 1.98e9
ISSUE_LANES = 4 * 32  # four schedulers a SM, one warp instruction a clock each
#: lanes a clock per SM on compute capability 9.0 (ptx_breakdown.RATES, and float64)
RATES = {"float": 128, "double": 64, "integer": 64, "conversion": 16}
STORE_CVT = "cvt.rni.sat.store.f32"  # NVIDIA's one conversion a stored lane


def nvidia_counts(counts: Mapping[str, int]) -> Counter[str]:
    """clang's executed opcodes with the store conversions' calls as NVIDIA compiles
    them: each call's returned vector (``ld.param.v4.b8`` ...: the only ``ld.param`` of
    a ``.b`` type once ``get_global_size`` is a constant) becomes one ``cvt`` a lane,
    its arguments' ``st.param`` go."""
    out: Counter[str] = Counter()
    for op, n in counts.items():
        parts = op.split(".")
        if parts[0] == "st" and "param" in parts:
            continue
        if parts[0] == "ld" and "param" in parts and parts[-1][0] == "b":
            lanes = next((int(p[1:]) for p in parts if p[:1] == "v" and p[1:].isdigit()), 1)
            out[STORE_CVT] += n * lanes
            continue
        out[op] += n
    return out


def pipe(op: str) -> str | None:
    """``ptx_breakdown.pipe``, with float64 arithmetic on its own pipe."""
    import ptx_breakdown

    p = ptx_breakdown.pipe(op)
    if p == "float" and op.split(".")[-1] == "f64":
        return "double"
    return p


def clocks(counts: Mapping[str, int], outputs: int) -> dict[str, float]:
    """Clocks per output per SM each pipe takes, and ``issue`` (all instructions)."""
    per: Counter[str] = Counter()
    for op, n in counts.items():
        p = pipe(op)
        if p is not None:
            per[p] += n
    out = {p: per[p] / outputs / rate for p, rate in RATES.items()}
    out["issue"] = sum(counts.values()) / outputs / ISSUE_LANES
    return out


def floors(
    pipe_clocks: Mapping[str, float], outputs: int, bytes_moved: float, copy_gbs: float
) -> dict[str, Any]:
    """Seconds: the DRAM floor, the issue floor, the busiest pipe's floor (and its name)
    for ``outputs`` outputs at ``pipe_clocks`` (clocks per output per SM)."""
    to_s = outputs / (SMS * CLOCK_HZ)
    busiest = max((p for p in pipe_clocks if p != "issue"), key=lambda p: pipe_clocks[p])
    return {
        "dram_s": bytes_moved / (copy_gbs * 1e9),
        "issue_s": pipe_clocks["issue"] * to_s,
        "pipe": busiest,
        "pipe_s": pipe_clocks[busiest] * to_s,
    }


def classify(f: Mapping[str, Any], margin: float) -> str:
    """``memory`` when the DRAM floor is at least ``margin`` times both compute
    floors; ``issue`` or the pipe's name when one reaches the DRAM floor; else
    ``mixed``."""
    compute = max(f["issue_s"], f["pipe_s"])
    if f["dram_s"] >= margin * compute:
        return "memory"
    if compute >= f["dram_s"]:
        return "issue" if f["issue_s"] >= f["pipe_s"] else str(f["pipe"])
    return "mixed"


def outputs_of(size: str) -> int:
    return math.prod(int(v) for v in size.split("x"))


GLOBAL_SIZE = "#define get_global_size(d) ((size_t)((d) == 0 ? {} : (d) == 1 ? {} : {}))\n"


def traced(definition: Path, size: str, cfg: Mapping[str, int], clang: str) -> Any:
    """clang's executed opcodes per output of the winner's middle work-item, as NVIDIA
    would count them (:func:`nvidia_counts`), and the outputs it writes."""
    import ptx_breakdown

    from gtune.description import load_kernel

    kernel = load_kernel(definition)
    sizes = dict(zip(("NX", "NY", "NZ"), (int(v) for v in size.split("x")), strict=False))
    kernel = kernel.with_sizes({k: v for k, v in sizes.items() if k in kernel.sizes})
    glob, _ = kernel.launch_sizes(kernel.with_defaults(dict(cfg)))
    dims = [*glob, 1, 1][:3]
    kernel = replace(kernel, source=GLOBAL_SIZE.format(*dims) + kernel.source)
    counts, outs = ptx_breakdown.by_opcode(kernel, dict(cfg), clang)
    return nvidia_counts(counts), outs


def lifted(name: str, defs: Path, device: str | None) -> Path:
    """The kernel's lifted definition in ``defs``, lifted there first if missing."""
    path = defs / f"{name}.stencil.yaml"
    if not path.exists():
        import lift_corpus
        import yaml

        from gtune.measure import select_device

        manifest = yaml.safe_load((lift_corpus.PLAIN / "manifest.yaml").read_text())["kernels"]
        defs.mkdir(parents=True, exist_ok=True)
        lift_corpus.lift_entry(manifest[name], select_device(device), path)
    return path


def us(s: float | None) -> str:
    return "" if s is None else f"{s * 1e6:.1f}"


def row(name: str, k: Mapping[str, Any], r: Mapping[str, Any]) -> str:
    f = r["floors"]
    measured = r.get("measured_s")
    compute = max(f["issue_s"], f["pipe_s"])
    cells = [
        name,
        f"{r['instructions_per_output']:.1f}",
        us(f["dram_s"]),
        us(f["issue_s"]),
        f"{us(f['pipe_s'])} ({f['pipe']})",
        us(f["dram_s"] + compute),
        us(measured),
        "" if measured is None else f"{100 * k['fraction_of_copy']:.1f} %",
        f"{f['dram_s'] / f['issue_s']:.2f}",
        f"{f['dram_s'] / compute:.2f}",
        "" if measured is None else f"{measured / max(f['dram_s'], compute):.2f}",
        f"**{r['class']}**" if r["class"] != "memory" else "memory",
    ]
    return "| " + " | ".join(cells) + " |"


HEAD = (
    "| kernel | PTX instr. / output | DRAM floor µs | issue floor µs | busiest pipe µs "
    "| floors' sum µs | measured µs | of copy | DRAM / issue | DRAM / compute "
    "| measured / max floor | bound |\n"
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("result", type=Path, help="a lift_corpus.json")
    p.add_argument("--definitions", type=Path, required=True)
    p.add_argument("--device", help="where to lift missing definitions (default: first GPU)")
    p.add_argument("--kernels", nargs="*")
    p.add_argument("--margin", type=float, default=2.0)
    p.add_argument("--config", action="append", default=[], help="NAME:K=V,... (repeatable)")
    p.add_argument("--clang", default="clang-15")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    data = json.loads(args.result.read_text())
    given = {}
    for text in args.config:
        name, _, cfg = text.partition(":")
        given[name] = {k: int(v) for k, v in (kv.split("=") for kv in cfg.split(",") if kv)}
    names = args.kernels or list(given) or list(data["kernels"])
    rows, out = [], {}
    for name in names:
        k = data["kernels"][name]
        cfg = given.get(name, k["lifted_config"])
        definition = lifted(name, args.definitions, args.device)
        counts, outs = traced(definition, k["size"], cfg, args.clang)
        pc = clocks(counts, outs)
        f = floors(pc, outputs_of(k["size"]), k["bytes_moved"], k["copy_gbs"])
        r: dict[str, Any] = {
            "config": cfg,
            "instructions_per_output": sum(counts.values()) / outs,
            "clocks_per_output_per_sm": pc,
            "floors": f,
            "class": classify(f, args.margin),
            "top_opcodes": {op: n / outs for op, n in counts.most_common(12)},
        }
        if name not in given:
            r["measured_s"] = k["times_s"]["lifted"]
        out[name] = r
        rows.append(row(name, k, r))
        print(f"bound: {name} {r['class']}", file=sys.stderr)
    print(HEAD)
    print("\n".join(rows))
    if args.json:
        args.json.write_text(json.dumps({"margin": args.margin, "kernels": out}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
