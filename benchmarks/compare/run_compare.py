"""Table 3 on this machine: heuristics against expert and random search on garvey104 kernels.

Generates the paper's 104 synthetic kernels (``gtune stencils generate --suite
garvey104``) into a temporary directory, picks ``--kernels`` of them spread over
patterns, dimensionalities and radii (deterministically), and compares strategies on
them through the library (``gtune.comparison.compare_kernel``, as ``gtune compare``
does) at 256³ with the strategies hybrid, dims, opts, expert and random, the heuristics
choosing the technique as ``gtune compare --technique auto`` does; each kernel's
winners are re-measured side by side and the tables rank by those times::

    python benchmarks/compare/run_compare.py OUTDIR [--device 0:0] [--kernels 12] \
        [--kernel NAME ...] [--random-n 1000] [--max-minutes 8] [--no-confirm]

Everything lands in OUTDIR: ``results.db`` (the result store), ``table/`` (the tables,
``per_kernel.csv``, ``speedups.png``, ``compare.json``) and ``runs.jsonl`` (one line
per invocation: settings, kernels, exit status, wall time). The run stops cleanly after
``--max-minutes`` with the tables for the kernels completed (exit status 3); running the
same command again continues without re-measuring anything.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

STRATEGIES = "hybrid,dims,opts,expert,random"


def pick(names: list[str], n: int) -> list[str]:
    """``n`` kernels spread over patterns (round robin), and within a pattern evenly
    over its kernels sorted by dimensionality, radius and orientation."""
    by_pattern: dict[str, list[str]] = defaultdict(list)
    for name in sorted(names):
        by_pattern[name.split("_")[0]].append(name)

    def key(name: str) -> tuple[str, int, str]:
        _, dims, orient, radius = name.split("_")
        return dims, int(radius.lstrip("r")), orient

    patterns = sorted(by_pattern)
    counts = dict.fromkeys(patterns, 0)
    for i in range(min(n, len(names))):
        while True:
            p = patterns[i % len(patterns)]
            if counts[p] < len(by_pattern[p]):
                counts[p] += 1
                break
            i += 1
    chosen: list[str] = []
    for p in patterns:
        members = sorted(by_pattern[p], key=key)
        k = counts[p]
        chosen += [members[int((j + 0.5) * len(members) / k)] for j in range(k)]
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--device", help="OpenCL device (default: the first GPU)")
    parser.add_argument("--kernels", type=int, default=12, help="how many kernels (12)")
    parser.add_argument(
        "--kernel",
        action="append",
        default=[],
        metavar="NAME",
        help="a garvey104 kernel by name (repeatable); replaces the automatic choice",
    )
    parser.add_argument("--size", default="256x256x256", help="problem size (256x256x256)")
    parser.add_argument(
        "--random-n", type=int, default=1000, help="random sample size (1000, the paper's)"
    )
    parser.add_argument("--strategies", default=STRATEGIES, help=f"default {STRATEGIES}")
    parser.add_argument(
        "--max-minutes", type=float, default=8.0, help="stop cleanly after this long (8)"
    )
    parser.add_argument("--budget", help="budget per strategy and kernel (none)")
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="rank by the searches' own bests (default: each kernel's winners are "
        "re-measured side by side)",
    )
    args = parser.parse_args(argv)

    # Honest compile times: no driver cache reused across runs (NVIDIA's is private to
    # each evaluator already).
    os.environ.setdefault("POCL_KERNEL_CACHE", "0")
    return run(args)


def run(args: argparse.Namespace) -> int:
    """Generate the suite, tune it through the library and write the tables."""
    import threading

    from gtune import Campaign, CancelToken
    from gtune.api import DEFAULT_CONFIRM
    from gtune.comparison import compare_kernel
    from gtune.exceptions import GtuneError
    from gtune.measure import select_device
    from gtune.report import (
        compare_csv,
        compare_markdown,
        per_kernel_csv,
        per_kernel_markdown,
        speedups_png,
        strategy_rows,
    )
    from gtune.stencils.generate import generate, parse_size, suite

    started = time.monotonic()
    out: Path = args.outdir
    out.mkdir(parents=True, exist_ok=True)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    token = CancelToken()
    timer = threading.Timer(60 * args.max_minutes, token.cancel, args=("time limit",))
    timer.daemon = True
    cells = []
    confirmations: dict[str, object] = {}
    done: list[str] = []
    status = 0
    with tempfile.TemporaryDirectory(prefix="garvey104-") as tmp:
        try:
            generate(suite("garvey104"), Path(tmp), size=parse_size(args.size))
            device = select_device(args.device)
        except GtuneError as exc:
            print(f"error: {exc.render()}", file=sys.stderr)
            return 2
        names = sorted(p.stem for p in Path(tmp).glob("*.yaml"))
        unknown = sorted(set(args.kernel) - set(names))
        if unknown:
            print(f"unknown kernel {unknown[0]!r}; garvey104 has e.g. {names[0]}", file=sys.stderr)
            return 2
        chosen = list(args.kernel) or pick(names, args.kernels)
        print(f"kernels ({len(chosen)}): {', '.join(chosen)}", flush=True)
        generated_s = time.monotonic() - started
        timer.start()
        with Campaign(store=out / "results.db") as campaign:
            campaign.sessions.remember(device)
            for name in chosen:
                one = compare_kernel(
                    campaign,
                    Path(tmp) / f"{name}.cl",
                    device,
                    strategies,
                    name=name,
                    budget=args.budget,
                    options={"random": {"n": args.random_n}},
                    confirm=None if args.no_confirm else DEFAULT_CONFIRM,
                    cancel=token,
                )
                if not one.complete:
                    status = 3
                    break
                cells += one.cells
                confirmations[name] = one.confirmation.to_dict() if one.confirmation else None
                done.append(name)
                print(f"done: {name} ({len(done)}/{len(chosen)})", flush=True)
        timer.cancel()
    table = out / "table"
    table.mkdir(exist_ok=True)
    rows = strategy_rows(cells, strategies)
    notes = [f"device: {device.name}; kernels: {len(done)} of {len(chosen)}"]
    per_kernel = per_kernel_markdown(cells, strategies) if cells else ""
    (table / "table.md").write_text(compare_markdown(rows, notes) + "\n" + per_kernel)
    (table / "table.csv").write_text(compare_csv(rows))
    (table / "per_kernel.csv").write_text(per_kernel_csv(cells))
    if cells:
        speedups_png(cells, strategies, table / "speedups.png", title=device.name)
    (table / "compare.json").write_text(
        json.dumps(
            {
                "rows": [r.to_dict() for r in rows],
                "cells": [c.to_dict() for c in cells],
                "confirmations": confirmations,
            }
        )
    )
    record = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": sys.version.split()[0],
        "device": args.device,
        "size": args.size,
        "kernels": chosen,
        "strategies": args.strategies,
        "technique": "auto (oracle over every technique for the heuristics)",
        "random_n": args.random_n,
        "budget": args.budget,
        "remeasured_side_by_side": not args.no_confirm,
        "max_minutes": args.max_minutes,
        "exit_status": status,
        "complete": status == 0,
        "generate_s": round(generated_s, 2),
        "wall_s": round(time.monotonic() - started, 2),
    }
    with open(out / "runs.jsonl", "a") as fh:
        fh.write(json.dumps(record) + "\n")
    print(json.dumps(record, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
