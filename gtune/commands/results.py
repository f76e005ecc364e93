"""``gtune results``: list and export what the result store holds."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from typing import TextIO

from rich.console import Console
from rich.table import Table

from gtune.commands._common import fmt_seconds, open_store, selected_rows, size_text
from gtune.exceptions import InputError
from gtune.result import StoredRow
from gtune.store.ranking import base_id, best_rows, confirmed_default, confirmed_role, groups

HELP = "list or export stored measurements"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kernel",
        "-k",
        help="kernel: its file name (heat3d), full name, function name or identity prefix",
    )
    p.add_argument("--device", "-d", help="device identity (prefix)")
    p.add_argument("--format", "-f", choices=("table", "csv", "json"), default="table")
    p.add_argument(
        "--best",
        type=int,
        metavar="N",
        help="only the N best ok results per kernel, size and device (the configurations "
        "the latest confirmation round measured first, its best on top: what `gtune run` "
        "reported)",
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
        rows = selected_rows(store, kernel=args.kernel, device=args.device, history=args.history)
    finally:
        store.close()
    defaults = {g: confirmed_default(rs) for g, rs in groups(rows).items()}
    if args.best:
        rows = best_rows(rows, args.best)
        if not rows:
            raise InputError("none of the selected results ran correctly", source=store.location)
    if args.format == "json":
        out = []
        for r in rows:
            data = r.to_dict()
            data["size"] = size_text(r.problem)
            data["confirmed"] = confirmed_role(r)
            out.append(data)
        json.dump({"results": out}, sys.stdout, indent=1)
        print()
        return 0
    if args.format == "csv":
        write_csv(rows, sys.stdout)
        return 0
    t = Table(title=f"{len(rows)} results in {store.location}", title_justify="left")
    for col in ("kernel", "size", "device", "configuration", "status", "compile", "median"):
        t.add_column(col)
    t.add_column("confirmed")
    for r in rows:
        res = r.result
        t.add_row(
            r.kernel_name,
            size_text(r.problem),
            r.device,
            " ".join(f"{k}={v}" for k, v in res.config.items()),
            res.status.value,
            fmt_seconds(res.compile_s),
            fmt_seconds(res.median_s),
            confirmed_role(r),
        )
    Console().print(t)
    if args.best:
        for (device, kernel_id), default in defaults.items():
            shown = [r for r in rows if (r.device, base_id(r.kernel_id)) == (device, kernel_id)]
            if default is None or not shown or not default.result.ok:
                continue
            best = shown[0]
            line = (
                f"{best.kernel_name} {size_text(best.problem)} on {device}: the default "
                f"configuration took {fmt_seconds(default.result.median_s)} in the same "
                "confirmation round"
            )
            if best is not default and best.result.median_s > 0:
                ratio = default.result.median_s / best.result.median_s
                line += f" (the best is {ratio:.2f}x faster)"
            Console().print(line, highlight=False)
    return 0


CSV_FIXED = ("device", "kernel", "kernel_id", "size")
CSV_TAIL = ("status", "compile_s", "median_s", "times_s", "confirmed", "message")


def write_csv(rows: list[StoredRow], stream: TextIO) -> None:
    """One row per result, one column per tuned parameter (blank where a kernel has no
    such parameter), the size as ``NXxNYxNZ``."""
    params: dict[str, None] = {}
    for r in rows:
        params.update(dict.fromkeys(r.result.config))
    w = csv.writer(stream)
    w.writerow([*CSV_FIXED, *params, *CSV_TAIL])
    for r in rows:
        res = r.result
        w.writerow(
            [
                r.device,
                r.kernel_name,
                base_id(r.kernel_id),
                size_text(r.problem),
                *(res.config.get(p, "") for p in params),
                res.status.value,
                f"{res.compile_s:.6f}",
                f"{res.median_s:.9g}" if res.times_s else "",
                " ".join(f"{t:.9g}" for t in res.times_s),
                confirmed_role(r),
                res.message[:200],
            ]
        )
