"""``gtune results``: list and export what the result store holds."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

from rich.console import Console
from rich.table import Table

from gtune.commands._common import fmt_seconds, open_store
from gtune.exceptions import InputError
from gtune.result import StoredRow

HELP = "list or export stored measurements"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel", "-k", help="kernel name or identity prefix")
    p.add_argument("--device", "-d", help="device identity (prefix)")
    p.add_argument("--format", "-f", choices=("table", "csv", "json"), default="table")
    p.add_argument(
        "--best", type=int, metavar="N", help="only the N fastest ok results per kernel/device"
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="every row ever stored (re-measurements too), not just the current results",
    )


def run(args: argparse.Namespace) -> int:
    if args.best is not None and args.best < 1:
        raise InputError(f"must be at least 1, got {args.best}", source="--best")
    try:
        return _run(args)
    except BrokenPipeError:
        # The reader went away (``gtune results | head``): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    store = open_store(args, readonly=True)
    try:
        rows = list(store.rows(device=args.device, kernel=args.kernel, history=args.history))
    finally:
        store.close()
    if args.best:
        groups: dict[tuple[str, str], list[StoredRow]] = {}
        for r in rows:
            if r.result.ok:
                groups.setdefault((r.device, r.kernel_id), []).append(r)
        rows = [
            r
            for g in groups.values()
            for r in sorted(g, key=lambda r: r.result.median_s)[: args.best]
        ]
    if args.format == "json":
        json.dump({"results": [r.to_dict() for r in rows]}, sys.stdout, indent=1)
        print()
        return 0
    if args.format == "csv":
        w = csv.writer(sys.stdout)
        w.writerow(
            [
                "device",
                "kernel",
                "kernel_id",
                "problem",
                "config",
                "status",
                "compile_s",
                "median_s",
                "times_s",
                "message",
            ]
        )
        for r in rows:
            res = r.result
            w.writerow(
                [
                    r.device,
                    r.kernel_name,
                    r.kernel_id,
                    json.dumps(dict(r.problem)),
                    json.dumps(dict(res.config)),
                    res.status.value,
                    f"{res.compile_s:.6f}",
                    f"{res.median_s:.9g}" if res.times_s else "",
                    " ".join(f"{t:.9g}" for t in res.times_s),
                    res.message[:200],
                ]
            )
        return 0
    t = Table(title=f"{len(rows)} results in {store.location}", title_justify="left")
    for col in ("kernel", "device", "configuration", "status", "compile", "median"):
        t.add_column(col)
    for r in rows:
        res = r.result
        t.add_row(
            r.kernel_name,
            r.device,
            " ".join(f"{k}={v}" for k, v in res.config.items()),
            res.status.value,
            fmt_seconds(res.compile_s),
            fmt_seconds(res.median_s),
        )
    Console().print(t)
    return 0
