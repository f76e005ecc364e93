#!/usr/bin/env python3
"""Two hybrid specs replayed on the H200's complete searches: does a new step pay?

    python3 benchmarks/predict/rows_step.py STORE.db OUT.md --before SPEC --after SPEC \\
        --step NAME --cases-from benchmarks/results/predict/h200-complete/close_calls.json

Each case (a kernel file, its size and a technique; ``--cases-from`` takes the cases of
a ``close_calls.py`` JSON, or give them as ``close_calls.py`` does) is replayed on the
labelling store's recorded measurements through the driver's own loop, as
``close_calls.py`` replays the shipped spec, once with each spec. A configuration the
store lacks is answered as *not run* (``ReplayEvaluator(unrecorded="fail")``): it costs
an evaluation, as it would on the device, but never becomes the best, so no time is
invented; the table says how many of each search's, and of the new step's (``--step``),
configurations were unrecorded. A search that asked for none is *exact*: the GPU would
have taken the same path (up to noise); otherwise the after spec's best is a lower
bound of what the GPU would give along that path.

Writes OUT.md (the table) and OUT.json (every search: best, its configuration,
evaluations, unrecorded, the best by round and the new step's candidates).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from close_calls import h200_limits, load_case

from gtune.device import DeviceLimits
from gtune.heuristics import SearchProblem, get_strategy
from gtune.heuristics.search import Seeded, drive, nearest_config
from gtune.measure import ReplayEvaluator, Result


def search(
    spec: str, space: Any, kernel: Any, results: Sequence[Result], step: str, store: Path
) -> dict[str, Any]:
    """One replayed search of ``spec``: its best, its length, what it asked for unrecorded,
    and what the step named ``step`` measured."""
    evaluator = ReplayEvaluator(results, source=str(store), unrecorded="fail")
    strategy = get_strategy("grouped", {"spec": spec})
    searcher: Any = strategy.searcher(
        space, SearchProblem.from_kernel(kernel), strategy.configure(None)
    )
    default = kernel.default_config() or {}
    start = nearest_config(space, default) if default else None
    if start is not None:
        searcher = Seeded(searcher, start)
    outcome = drive(searcher, evaluator, strategy="hybrid", space=space)
    best = outcome.best_result
    round_best: list[float] = []
    for r in sorted({s.round for s in outcome.steps if s.round >= 0}):
        known = [e.result.objective for e in outcome.trace if e.result.ok and e.round <= r]
        round_best.append(min(known) * 1e6 if known else math.nan)
    mine = [e for e in outcome.trace if e.step == step]
    return {
        "best_us": best.objective * 1e6 if best is not None else None,
        "best_config": dict(best.config) if best is not None else None,
        "evaluations": outcome.evaluations,
        "unrecorded": len(evaluator.unrecorded_calls),
        "round_best_us": round_best,
        "step_evaluations": len(mine),
        "step_unrecorded": sum(1 for e in mine if e.result.message == "not recorded"),
        "step_best_us": [
            min(
                (e.result.objective * 1e6 for e in mine if e.result.ok and e.round == r),
                default=None,
            )
            for r in sorted({e.round for e in mine})
        ],
    }


def case(
    store: Path, text: str, device: DeviceLimits, before: str, after: str, step: str
) -> dict[str, Any]:
    c = load_case(store, text, device)
    kernel, space, technique, results = c.kernel, c.space, c.technique, c.results
    return {
        "case": text,
        "recorded": len(results),
        "arrangements": arrangements(results) if technique == "vec" else None,
        "before": search(before, space, kernel, results, step, store),
        "after": search(after, space, kernel, results, step, store),
    }


ROWS = ("BY", "BZ", "CY", "CZ")


def arrangements(results: Sequence[Result]) -> dict[str, Any]:
    """The recorded configurations with whole rim vectors (RIM 1, not streaming) grouped
    by everything but their rows' arrangement (BY, BZ, CY, CZ) and the rows per
    work-item (BY*BZ*CY*CZ): in each group that recorded both a block-only arrangement
    (CY = CZ = 1) and one merging cyclically, the best cyclic time over the best
    block-only time (above 1: the blocks are faster)."""
    groups: dict[tuple[Any, ...], list[Result]] = {}
    for r in results:
        c = r.config
        if not r.ok or c.get("RIM", 0) != 1 or c.get("STREAM", 0) != 0:
            continue
        rows = math.prod(c.get(k, 1) for k in ROWS)
        key = (*sorted((k, v) for k, v in c.items() if k not in ROWS), rows)
        groups.setdefault(key, []).append(r)
    ratios: list[float] = []
    widest: list[Result] = []
    for rs in groups.values():
        block = [r.objective for r in rs if r.config.get("CY", 1) * r.config.get("CZ", 1) == 1]
        cyclic = [r.objective for r in rs if r.config.get("CY", 1) * r.config.get("CZ", 1) > 1]
        if block and cyclic:
            ratios.append(min(cyclic) / min(block))
            if len(rs) > len(widest):
                widest = sorted(rs, key=lambda r: r.objective)
    ratios.sort()
    return {
        "widest": [
            {"config": dict(r.config), "us": r.objective * 1e6} for r in widest
        ],  # the group with the most arrangements recorded, fastest first
        "groups": len(ratios),
        "block_faster": sum(1 for x in ratios if x > 1),
        "median": ratios[len(ratios) // 2] if ratios else None,
        "min": ratios[0] if ratios else None,
        "max": ratios[-1] if ratios else None,
    }


def _us(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


def row(c: dict[str, Any]) -> str:
    """The table row of one case."""
    b, a = c["before"], c["after"]
    ratio = a["best_us"] / b["best_us"] if a["best_us"] and b["best_us"] else math.nan
    return (
        f"| {c['case'].replace('benchmarks/predict/corpus/', '')} | {_us(b['best_us'])} | "
        f"{_us(a['best_us'])} | {ratio:.3f} | {b['evaluations']} → {a['evaluations']} | "
        f"{b['unrecorded']} / {a['unrecorded']} | "
        f"{a['step_evaluations']} ({a['step_unrecorded']}) |"
    )


def report(cases: Sequence[dict[str, Any]], step: str, command: str) -> str:
    lines = [
        f"# The `{step}` step replayed on the H200's complete searches",
        "",
        "Produced by (the store: the labelling store of the complete searches, as for "
        "close_calls.md: `collect_complete.sh`'s `labels.db.gz`, unzipped):",
        "",
        f"    {command}",
        "",
        "Times are the store's recorded medians (no device run). *unrecorded*: "
        "configurations the search asked for that the store lacks, answered as not run "
        "(an evaluation spent, never the best); *step*: the new step's evaluations and "
        "how many of them are unrecorded (their times are unknown, not zero).",
        "",
        "| case | best before (µs) | best after (µs) | after/before | evaluations before → after "
        "| unrecorded before / after | step: evaluations (unrecorded) |",
        "| --- | ---: | ---: | ---: | --- | --- | --- |",
    ]
    lines += [row(c) for c in cases]
    lines += [
        "",
        "## Rows per work-item arranged as blocks or cyclically, side by side in the store",
        "",
        "Recorded vec configurations with whole rim vectors (RIM 1), grouped by every "
        "parameter but BY, BZ, CY, CZ and by the rows per work-item BY·BZ·CY·CZ; in each "
        "group that holds both a block-only arrangement (CY = CZ = 1) and a cyclic one, "
        "the best cyclic time over the best block-only time (> 1: blocks faster).",
        "",
        "| case | groups | blocks faster | median | least | most |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in cases:
        g = c.get("arrangements")
        if not g or not g["groups"]:
            continue
        lines.append(
            f"| {c['case'].replace('benchmarks/predict/corpus/', '')} | {g['groups']} | "
            f"{g['block_faster']} | {g['median']:.3f} | {g['min']:.3f} | {g['max']:.3f} |"
        )
    for c in cases:
        g = c.get("arrangements")
        if not g or not g["widest"]:
            continue
        at = {k: v for k, v in g["widest"][0]["config"].items() if k not in ROWS}
        shown = ", ".join(f"{k} {v}" for k, v in at.items() if k not in ("LOCAL", "IMAGE"))
        lines += [
            "",
            f"{c['case'].replace('benchmarks/predict/corpus/', '')}: the most arrangements "
            f"recorded at one point ({shown}):",
            "",
            "| BY | BZ | CY | CZ | µs |",
            "| ---: | ---: | ---: | ---: | ---: |",
        ]
        for e in g["widest"]:
            cfg = e["config"]
            lines.append(f"| {' | '.join(str(cfg.get(k, 1)) for k in ROWS)} | {e['us']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("cases", nargs="*", help="KERNEL_FILE@NXxNY[xNZ]:TECHNIQUE")
    parser.add_argument("--cases-from", type=Path, help="a close_calls.py JSON: its cases")
    parser.add_argument("--before", required=True, help="spec before (shipped name or file)")
    parser.add_argument("--after", required=True, help="spec after (shipped name or file)")
    parser.add_argument("--step", required=True, help="the new step's name in --after")
    parser.add_argument("--device", type=Path, help="device limits (JSON)")
    args = parser.parse_intermixed_args(argv)
    texts = list(args.cases)
    if args.cases_from:
        texts += [c["case"] for c in json.loads(args.cases_from.read_text())]
    if not texts:
        parser.error("no cases: give them or --cases-from")
    device = (
        DeviceLimits.from_dict(json.loads(args.device.read_text()))
        if args.device
        else h200_limits()
    )
    cases = []
    for text in texts:
        cases.append(case(args.store, text, device, args.before, args.after, args.step))
        print(row(cases[-1]), flush=True)
    command = shlex.join(
        ["python3", "benchmarks/predict/rows_step.py", *(sys.argv[1:] if argv is None else argv)]
    )
    args.out.write_text(report(cases, args.step, command))
    args.out.with_suffix(".json").write_text(json.dumps(cases, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
