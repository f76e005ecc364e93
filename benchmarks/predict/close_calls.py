#!/usr/bin/env python3
"""How close each step of a recorded search decided: its best against its runner-up.

    python3 benchmarks/predict/close_calls.py STORE.db OUT.md \\
        stencils/box27.stencil.yaml@512x512x512:vec ... [--device DEVICE.json]

Each case (a kernel file, its size and a technique) is replayed on a labelling store's
recorded measurements (``benchmarks/predict/collect_complete.sh`` writes one) through
the driver's own loop, the hybrid spec from the kernel's default, as ``gtune run``
searches it; the recorded search is the same path, so every configuration it asks for
is answered (the table says if not). For every step, the step's best and its runner-up
and the configuration parameters they differ in: a step decided by less than the
measurement noise of one sitting to the next (0.3-1 % on the H200 at 300 us) is a coin
toss, and the search goes on from whichever won. Needs no device: the space is solved
for the limits in ``--device`` (default: the H200's, from the H100 file with the H200's
name and memory; both have 132 units, 1024 work-items and 48 KiB local memory).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.heuristics import SearchProblem, get_strategy
from gtune.heuristics.search import Seeded, TraceEntry, drive, nearest_config
from gtune.kernel import TunableKernel
from gtune.measure import ReplayEvaluator, Result
from gtune.space import solve_space
from gtune.space.build import technique_space
from gtune.store import open_store
from gtune.store.ranking import confirmation

ROOT = Path(__file__).resolve().parents[2]
H100 = ROOT / "benchmarks" / "replay" / "h100.device.json"
CLOSE = 0.005  # a step decided by less than this is within one sitting's noise


def h200_limits() -> DeviceLimits:
    data = json.loads(H100.read_text())
    data.update(name="NVIDIA H200", global_mem_size=150754820096, max_mem_alloc_size=37688705024)
    return DeviceLimits.from_dict(data)


def recorded(
    store_path: Path,
    name: str,
    sizes: dict[str, int],
    params: set[str],
    default: dict[str, int],
) -> list[Result]:
    """The store's results of the kernel labelled ``name`` (``gtune train``'s label: the
    kernel's name, or FILE_STEM:NAME for a file whose stem differs). A result recorded
    before the space gained a parameter takes the kernel's default value for it (the
    value the older template had implicitly: RIN 0), as ``spec_replay.py`` does."""
    store = open_store(store_path, readonly=True)
    found: list[Result] = []
    try:
        for r in store.rows():
            if r.kernel_name != name or dict(r.problem) != sizes or confirmation(r) is not None:
                continue
            config = dict(r.result.config)
            missing = params - set(config)
            if missing <= set(default) and set(config) <= params:
                config.update({k: default[k] for k in missing})
                found.append(dataclasses.replace(r.result, config=config))
    finally:
        store.close()
    return found


def steps_of(trace: Sequence[TraceEntry]) -> list[tuple[str, list[TraceEntry]]]:
    groups: list[tuple[str, list[TraceEntry]]] = []
    for e in trace:
        if groups and groups[-1][0] == e.step:
            groups[-1][1].append(e)
        else:
            groups.append((e.step, [e]))
    return groups


@dataclasses.dataclass
class Case:
    """A recorded search's case ``KERNEL_FILE@SIZE:TECHNIQUE``: the kernel at its size,
    the technique's space on ``device`` and the store's results of that kernel."""

    kernel: TunableKernel
    technique: str
    space: Any
    default: dict[str, int]
    results: list[Result]


def load_case(store: Path, text: str, device: DeviceLimits) -> Case:
    where, technique = text.rsplit(":", 1)
    path, size = where.split("@")
    sizes = dict(zip(("NX", "NY", "NZ"), (int(v) for v in size.split("x")), strict=False))
    sizes = {k: v for k, v in sizes.items() if not (k == "NZ" and v == 1)}
    kernel = load_kernel(ROOT / path, sizes)
    space = technique_space(solve_space(kernel, device).space, kernel, technique)
    stem = Path(path).name.split(".")[0]
    label = kernel.name if stem == kernel.name else f"{stem}:{kernel.name}"
    default = dict(kernel.default_config() or {})
    results = recorded(store, label, sizes, set(space.parameters), default)
    return Case(kernel, technique, space, default, results)


def case(store: Path, text: str, device: DeviceLimits) -> dict[str, Any]:
    c = load_case(store, text, device)
    kernel, space, default, results = c.kernel, c.space, c.default, c.results
    evaluator = ReplayEvaluator(results, source=str(store), unrecorded="fail")
    strategy = get_strategy("grouped", {"spec": "hybrid"})
    searcher: Any = strategy.searcher(
        space, SearchProblem.from_kernel(kernel), strategy.configure(None)
    )
    start = nearest_config(space, default) if default else None
    if start is not None:
        searcher = Seeded(searcher, start)
    outcome = drive(searcher, evaluator, strategy="hybrid", space=space)
    rows = []
    for step, entries in steps_of(outcome.trace):
        ok = sorted((e.result for e in entries if e.result.ok), key=lambda r: r.objective)
        if len(ok) < 2:
            continue
        a, b = ok[0], ok[1]
        rows.append(
            {
                "step": step,
                "candidates": len(entries),
                "best_us": a.objective * 1e6,
                "gap": b.objective / a.objective - 1.0,
                "differ": {
                    k: [a.config[k], b.config[k]] for k in a.config if a.config[k] != b.config[k]
                },
            }
        )
    best = outcome.best_result
    round_best: list[float] = []  # the best known at the end of each round
    for r in sorted({s.round for s in outcome.steps if s.round >= 0}):
        known = [e.result.objective for e in outcome.trace if e.result.ok and e.round <= r]
        round_best.append(min(known) * 1e6 if known else math.nan)
    return {
        "round_best_us": round_best,
        "case": text,
        "recorded": len(results),
        "evaluations": outcome.evaluations,
        "unrecorded": len(evaluator.unrecorded_calls),
        "best_us": best.objective * 1e6 if best is not None else None,
        "steps": rows,
    }


def report(cases: Sequence[dict[str, Any]]) -> str:
    lines = [
        "# Close calls in recorded complete searches (hybrid spec, replayed)",
        "",
        f"A step is *close* when its runner-up is within {CLOSE * 100:.1f} % of its best.",
        "",
        "| case | steps | close | best (µs) | unrecorded | best by round (µs) |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for c in cases:
        close = sum(1 for s in c["steps"] if s["gap"] < CLOSE)
        lines.append(
            f"| {c['case']} | {len(c['steps'])} | {close} | {c['best_us'] or math.nan:.1f} | "
            f"{c['unrecorded']} of {c['evaluations']} | "
            f"{', '.join(f'{b:.1f}' for b in c['round_best_us'])} |"
        )
    for c in cases:
        lines += ["", f"## {c['case']}", "", "| step | n | best (µs) | runner-up | differ in |"]
        lines.append("| --- | ---: | ---: | ---: | --- |")
        for s in c["steps"]:
            differ = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in s["differ"].items())
            mark = " **close**" if s["gap"] < CLOSE else ""
            lines.append(
                f"| {s['step']} | {s['candidates']} | {s['best_us']:.1f} | "
                f"+{s['gap'] * 100:.2f} %{mark} | {differ} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("cases", nargs="+", help="KERNEL_FILE@NXxNY[xNZ]:TECHNIQUE")
    parser.add_argument("--device", type=Path, help="device limits (JSON)")
    args = parser.parse_args(argv)
    device = (
        DeviceLimits.from_dict(json.loads(args.device.read_text()))
        if args.device
        else h200_limits()
    )
    cases = [case(args.store, text, device) for text in args.cases]
    args.out.write_text(report(cases))
    args.out.with_suffix(".json").write_text(json.dumps(cases, indent=1) + "\n")
    print(report(cases).split("\n\n## ")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
