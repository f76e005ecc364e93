#!/usr/bin/env python3
"""Hybrid specs replayed on the union of several recorded runs' measurements.

Every run under ``benchmarks/results/h200-limit/`` keeps its store as
``measurements.csv.gz`` (``gtune --db STORE results --format csv``). This merges the
rows of one kernel at one size from ``--measurements`` files (a configuration measured
in several runs gets the median of each run's first ok median, the one its search saw,
not the winners' re-measurements after it; one ok anywhere makes it ok), then runs
each spec of ``--specs`` as ``gtune run`` runs it on one technique (budget none, no
confirmation round), every configuration answered from the union by
:class:`gtune.measure.ReplayEvaluator` with ``unrecorded="fail"``: a configuration no
run measured costs an evaluation and never becomes the best, so no time is invented.
A spec that asked for one is **inconclusive** past it; ``bound`` is the best recorded
time up to the step that first asked for one (a device run asks the same until then,
and its best only gets faster).

This is a replay of recorded measurements, not a GPU run: it says where a spec change
would lead on what the runs saw, and which configurations a device run must measure to
decide.

    python3 benchmarks/compare/replay_runs.py OUT --kernel box27 --size 512x512x512 \\
        --technique vec --specs hybrid,benchmarks/compare/specs/hybrid-rows-step.yaml \\
        --measurements benchmarks/results/h200-limit/*/*/measurements.csv.gz

``--each`` replays each file on its own as well: a run replayed by the spec it ran
retraces itself (every configuration it asks is its own), and a spec change that asks
for more is answered from the other runs where this one lacks it (their median; other
sittings' times, so a small bias).

Writes ``OUT/replay_runs.md`` and ``OUT/replay_runs.json``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from loo_table3 import replay_hybrid

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.kernel import TunableKernel, canonical_config
from gtune.result import Result, Status
from gtune.space import solve_space

# the H200's OpenCL limits that shape a space (the H100's: DESIGN.md; NVIDIA's driver
# reports the same for both), as the H200's runs reported them in their model cards
H200 = {
    "platform": "NVIDIA CUDA",
    "name": "NVIDIA H200",
    "vendor": "NVIDIA Corporation",
    "type": "GPU",
    "driver_version": "580.159.04",
    "opencl_version": "OpenCL 3.0 CUDA",
    "opencl_c_version": "OpenCL C 1.2",
    "compute_units": 132,
    "max_work_group_size": 1024,
    "max_work_item_sizes": (1024, 1024, 64),
    "local_mem_size": 48 * 1024,
    "local_mem_type": "local",
    "max_mem_alloc_size": 35 * 2**30,
    "global_mem_size": 140 * 2**30,
    "max_clock_mhz": 1980,
    "image_support": True,
    "image2d_max": (32768, 32768),
    "image3d_max": (16384, 16384, 16384),
    "preferred_vector_width_float": 1,
    "native_vector_width_float": 1,
}
_FIXED = {"device", "kernel", "kernel_id", "size", "status", "compile_s", "median_s"}
_FIXED |= {"times_s", "confirmed", "message"}


def merged(paths: Sequence[Path], kernel: str, size: str) -> tuple[list[Result], int]:
    """The union of the files' rows of ``kernel`` at ``size``: one result a
    configuration (the median over the files of each one's first ok median, else its
    first status), and how many rows it came from."""
    oks: dict[str, list[float]] = {}
    first: dict[str, tuple[dict[str, int], Status]] = {}
    rows = 0
    for path in paths:
        seen: set[str] = set()  # a run's first ok row of a configuration: what its search saw
        with gzip.open(path, "rt", newline="") as fh:
            for row in csv.DictReader(fh):
                if row["kernel"].split(":")[0] != kernel or row["size"] != size:
                    continue
                rows += 1
                config = {k: int(v) for k, v in row.items() if k not in _FIXED and v != ""}
                key = canonical_config(config)
                first.setdefault(key, (config, Status(row["status"])))
                if row["status"] == Status.OK.value and row["median_s"] and key not in seen:
                    seen.add(key)
                    oks.setdefault(key, []).append(float(row["median_s"]))
    out = []
    for key, (config, status) in first.items():
        if key in oks:
            out.append(Result(config, Status.OK, times_s=(statistics.median(oks[key]),)))
        else:
            out.append(Result(config, status))
    return out, rows


def filled(own: Sequence[Result], others: Sequence[Result]) -> list[Result]:
    """``own`` (one run's results), and ``others``' for the configurations it lacks."""
    have = {canonical_config(r.config) for r in own}
    return [*own, *(r for r in others if canonical_config(r.config) not in have)]


def _cell(config: Mapping[str, int] | None, kernel: TunableKernel) -> str:
    if not config:
        return "—"
    default = kernel.default_config() or {}
    return " ".join(f"{k} {v}" for k, v in config.items() if default.get(k) != v)


def _table(title: str, replays: Sequence[Mapping[str, Any]], kernel: TunableKernel) -> list[str]:
    lines = [
        title,
        "",
        "| spec | end | time | configurations | unrecorded asked | bound (µs) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in replays:
        best = f"{r['best_s'] * 1e6:.1f} µs" if r["best_s"] else "—"
        bound = f"{r['bound_s'] * 1e6:.1f}" if r["bound_s"] else "—"
        lines.append(
            f"| {Path(r['spec']).stem} | `{_cell(r['best_config'], kernel)}` | {best} | "
            f"{r['configs']} | {r['unrecorded']} | {bound} |"
        )
    return [*lines, ""]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--kernel", required=True, help="a shipped stencil's name (box27, ...)")
    ap.add_argument("--size", default="512x512x512")
    ap.add_argument("--technique", default="vec")
    ap.add_argument("--specs", default="hybrid", help="comma-separated spec names or paths")
    ap.add_argument("--measurements", nargs="+", type=Path, required=True)
    ap.add_argument(
        "--each",
        action="store_true",
        help="also replay on each file's own results, the others' union filling its gaps",
    )
    args = ap.parse_args(argv)
    missing = [str(p) for p in args.measurements if not p.is_file()]
    if missing:
        print(f"replay_runs: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    results, rows = merged(args.measurements, args.kernel, args.size)
    if not results:
        print(f"replay_runs: no row of {args.kernel} at {args.size}", file=sys.stderr)
        return 2
    kernel = load_kernel(Path(__file__).resolve().parents[2] / "stencils" / f"{args.kernel}.cl")
    extents = [int(v) for v in args.size.split("x")]
    kernel = kernel.with_sizes(dict(zip(kernel.sizes, extents, strict=False)))
    device = DeviceLimits(**H200)  # type: ignore[arg-type]
    space = solve_space(kernel, device).space
    specs = [s for s in args.specs.split(",") if s]

    def replay_all(on: Sequence[Result]) -> list[dict[str, Any]]:
        out = []
        for spec in specs:
            named = None if spec == "hybrid" else spec
            replay = replay_hybrid(kernel, device, on, [args.technique], space=space, spec=named)
            out.append({"spec": spec, **replay.to_dict()})
        return out

    union = replay_all(results)
    lines = _table(
        f"# {args.kernel} {args.size}, {args.technique}: specs replayed on {len(results)} "
        f"configurations ({rows} rows of {len(args.measurements)} runs)",
        union,
        kernel,
    )
    each: dict[str, list[dict[str, Any]]] = {}
    for path in args.measurements if args.each else []:
        own, _ = merged([path], args.kernel, args.size)
        if not own:
            continue
        others, _ = merged([p for p in args.measurements if p != path], args.kernel, args.size)
        each[str(path)] = replay_all(filled(own, others))
        lines += _table(
            f"## {path} ({len(own)} configurations, gaps from the others)", each[str(path)], kernel
        )
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {
        "kernel": args.kernel,
        "size": args.size,
        "technique": args.technique,
        "files": [str(p) for p in args.measurements],
        "rows": rows,
        "configurations": len(results),
        "replays": union,
        "each": each,
    }
    (args.out / "replay_runs.json").write_text(json.dumps(summary, indent=1) + "\n")
    (args.out / "replay_runs.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
