"""``gtune results``: list and export what the result store holds."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from typing import TextIO

from rich import box
from rich.console import Console
from rich.markup import escape as markup
from rich.table import Table

from gtune.commands._common import fmt_seconds, open_store, selected_rows, size_text
from gtune.escape import csv_cell, terminal
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
        "--wide",
        action="store_true",
        help="one column per tuned parameter, with the device and compile time (the "
        "table is wider than 80 columns)",
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
    console = Console()
    if args.wide:  # as wide as it takes: the terminal wraps it, a pager or file keeps it
        wide = wide_table(rows, store.location)
        unbounded = console.options.update_width(10_000)
        width = max(console.width, console.measure(wide, options=unbounded).maximum)
        Console(width=width).print(wide)
    else:
        console.print(table(rows, store.location))
    if args.best:
        for (device, kernel_id), default in defaults.items():
            shown = [r for r in rows if (r.device, base_id(r.kernel_id)) == (device, kernel_id)]
            if default is None or not shown or not default.result.ok:
                continue
            best = shown[0]
            line = (
                f"{_cell(best.kernel_name)} {size_text(best.problem)} on {_cell(device)}: "
                "the default "
                f"configuration took {fmt_seconds(default.result.median_s)} in the same "
                "confirmation round"
            )
            if best is not default and best.result.median_s > 0:
                ratio = default.result.median_s / best.result.median_s
                line += f" (the best is {ratio:.2f}x faster)"
            console.print(line, highlight=False)
    return 0


def _csv(text: str) -> object:
    """A CSV cell: text a spreadsheet never runs as a formula, control characters shown
    escaped (the CSV often goes to a terminal)."""
    return csv_cell(terminal(text))


def _cell(text: str) -> str:
    """A name or message from the store as table text: control characters shown
    escaped (no escape sequence reaches the terminal), brackets not read as markup."""
    return markup(terminal(text))


def table(rows: list[StoredRow], location: str) -> Table:
    """The results at 80 columns: the configuration as one column (``WX=64 WY=4``); the
    kernel, size and device in the title where every row shares them, the
    ``confirmed`` column only where a row was confirmed."""
    columns = {
        "kernel": [_cell(r.kernel_name) for r in rows],
        "size": [size_text(r.problem) for r in rows],
        "device": [_cell(r.device) for r in rows],
    }
    shared = {k: v[0] for k, v in columns.items() if rows and len(set(v)) == 1}
    title = f"{len(rows)} results in {_cell(location)}"
    if shared:
        title += ": " + " ".join(f"{'on ' if k == 'device' else ''}{v}" for k, v in shared.items())
    roles = [confirmed_role(r) for r in rows]
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    own = [k for k in columns if k not in shared]
    for k in own:
        t.add_column(k, overflow="fold")
    t.add_column("configuration", ratio=1, min_width=14)
    t.add_column("status", overflow="fold")
    t.add_column("median", justify="right", no_wrap=True, min_width=8)
    if any(roles):
        t.add_column("confirmed", overflow="fold", min_width=9)
    for i, r in enumerate(rows):
        res = r.result
        t.add_row(
            *(columns[k][i] for k in own),
            _cell(" ".join(f"{k}={v}" for k, v in res.config.items())),
            res.status.value,
            fmt_seconds(res.median_s),
            *([roles[i]] if any(roles) else []),
        )
    return t


def wide_table(rows: list[StoredRow], location: str) -> Table:
    """``--wide``: one column per tuned parameter (blank where a kernel has none), the
    device and the compile time."""
    params = list(dict.fromkeys(k for r in rows for k in r.result.config))
    t = Table(title=_cell(f"{len(rows)} results in {location}"), title_justify="left")
    for col in ("kernel", "size", "device", *params, "status", "compile", "median"):
        t.add_column(_cell(col), no_wrap=col in params)
    t.add_column("confirmed")
    for r in rows:
        res = r.result
        t.add_row(
            _cell(r.kernel_name),
            size_text(r.problem),
            _cell(r.device),
            *(str(res.config.get(p, "")) for p in params),
            res.status.value,
            fmt_seconds(res.compile_s),
            fmt_seconds(res.median_s),
            confirmed_role(r),
        )
    return t


CSV_FIXED = ("device", "kernel", "kernel_id", "size")
CSV_TAIL = ("status", "compile_s", "median_s", "times_s", "confirmed", "message")


def write_csv(rows: list[StoredRow], stream: TextIO) -> None:
    """One row per result, one column per tuned parameter (blank where a kernel has no
    such parameter), the size as ``NXxNYxNZ``. Text cells that a spreadsheet would read
    as a formula (``=``, ``+``, ``-``, ``@``) start with ``'`` (gtune.escape.csv_cell)."""
    params: dict[str, None] = {}
    for r in rows:
        params.update(dict.fromkeys(r.result.config))
    w = csv.writer(stream)
    w.writerow([_csv(c) for c in (*CSV_FIXED, *params, *CSV_TAIL)])
    for r in rows:
        res = r.result
        w.writerow(
            [
                _csv(r.device),
                _csv(r.kernel_name),
                _csv(base_id(r.kernel_id)),
                _csv(size_text(r.problem)),
                *(res.config.get(p, "") for p in params),
                res.status.value,
                f"{res.compile_s:.6f}",
                f"{res.median_s:.9g}" if res.times_s else "",
                " ".join(f"{t:.9g}" for t in res.times_s),
                confirmed_role(r),
                _csv(res.message[:200]),
            ]
        )
