"""``gtune split``: one kernel across several devices at once (seed 002 §2.2)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from gtune.commands._common import open_kernel, open_store
from gtune.outfiles import check_target
from gtune.split import BALANCES, split_kernel
from gtune.split.report import format_report
from gtune.split.tuned import SOURCES

HELP = "split a kernel across devices in proportion to their tuned speeds, run it, verify it"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", help="kernel.cl with its description beside it")
    p.add_argument("--size", metavar="NXxNYxNZ", help="problem size, e.g. 256x256x256")
    p.add_argument(
        "--devices",
        metavar="SEL,SEL",
        help="devices (P:D, identity or name; SEL@K/N for part K of N equal sub-devices; "
        "a device named twice gets two contexts); default every device",
    )
    p.add_argument("--dim", choices=("x", "y", "z"), help="split dimension (default outermost)")
    p.add_argument("--halo", type=int, help="stencil radius along the split dimension")
    p.add_argument(
        "--configs",
        choices=SOURCES,
        default="auto",
        help="each device's configuration: from the store, tuned now, auto (store, else "
        "tune; default) or the description's default",
    )
    p.add_argument("--budget", type=int, default=60, help="evaluations when tuning (default 60)")
    p.add_argument(
        "--balance",
        choices=BALANCES,
        default="kernel",
        help="split factors from kernel times (the paper; default) or end-to-end times",
    )
    p.add_argument("--runs", type=int, default=5, help="timed runs per measurement (default 5)")
    p.add_argument("--force", action="store_true", help="run the split even if it cannot win")
    p.add_argument("--sweep", action="store_true", help="also time split factors around it")
    p.add_argument("--sweep-points", type=int, default=9, help="sweep points (default 9)")
    p.add_argument("--plot", metavar="PNG", help="sweep plot file (default KERNEL-split.png)")
    p.add_argument(
        "--overwrite", action="store_true", help="replace the sweep plot file if it exists"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    plot_path = args.plot or Path(args.kernel).with_suffix("").name + "-split.png"
    if args.sweep:  # before the split runs (--force here means run a split that cannot win)
        check_target(plot_path, force=args.overwrite, flag="--overwrite")
    kernel = open_kernel(args.kernel, args.size)
    store = open_store(args)
    stages = logging.getLogger("gtune.split")  # each stage shows unless --quiet
    before = stages.level
    if not getattr(args, "quiet", False):
        stages.setLevel(min(logging.INFO, logging.getLogger("gtune").getEffectiveLevel()))
    try:
        report = split_kernel(
            kernel,
            args.devices,
            dim=args.dim,
            halo=args.halo,
            source=args.configs,
            store=store,
            budget=args.budget,
            balance=args.balance,
            runs=args.runs,
            force=args.force,
            sweep=args.sweep,
            sweep_points=args.sweep_points,
        )
    finally:
        stages.setLevel(before)
        store.close()
    plot = None
    if report.sweep:
        plot = report.plot_sweep(plot_path)
    if args.json:
        data = report.to_dict()
        data["plot"] = str(plot) if plot else None
        print(json.dumps(data, indent=2))
    else:
        print("\n".join(format_report(report)))
        if plot is not None:
            print(f"  sweep plot: {plot}")
    return 0
