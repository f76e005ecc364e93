"""``gtune compare``: heuristics against expert and random search (seed 001 Table 3).

Every strategy tunes every kernel on one device; one evaluator per kernel serves all
strategies, and the result store serves a configuration one strategy measured to every
other (and to a later run of the same command, which so resumes where it stopped).
Then the strategies' best configurations of the kernel are re-measured side by side,
interleaved over a few rounds (:func:`gtune.tuning.confirm.side_by_side`): the table
ranks strategies by these times, not by times measured minutes apart in different
searches. ``--no-confirm`` ranks by the searches' own bests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from gtune.api import DEFAULT_CONFIRM, Campaign
from gtune.budget import Budget
from gtune.commands._common import open_store, parse_size, quiet_console
from gtune.commands.run import ctrl_c_cancels, parse_options
from gtune.comparison import ORACLE, compare_kernel
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.heuristics import available_strategies, get_strategy
from gtune.heuristics.strategies.generic import GenericStrategy
from gtune.kernel import TunableKernel
from gtune.outfiles import check_targets, write_text
from gtune.progress import ProgressBar
from gtune.report import (
    BASELINE,
    CompareCell,
    compare_csv,
    compare_markdown,
    compare_table,
    per_kernel_csv,
    per_kernel_markdown,
    speedups_png,
    strategy_rows,
)
from gtune.tuning import ALL, AUTO, CancelToken, ResultMeasured, TuningEvent
from gtune.tuning.strategy import GENERIC

HELP = "compare strategies (heuristics, expert, random, oracle) over kernels: Table 3"

EXIT_INCOMPLETE = 3


OUTPUTS = ("table.md", "table.csv", "per_kernel.csv", "speedups.png", "compare.json")
"""The files ``gtune compare`` writes into its ``--out`` folder."""


def _resuming(out: Path) -> bool:
    """Whether ``out`` holds a comparison stopped before its end (the same command goes
    on with it); a finished one's files are kept unless --force."""
    try:
        return json.loads((out / "compare.json").read_text()).get("complete") is False
    except (OSError, ValueError, AttributeError, RecursionError):
        return False


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernels", nargs="+", help="kernels (.cl with a description, or .yaml)")
    p.add_argument(
        "--strategies",
        default="hybrid,dims,opts,expert,random",
        metavar="S1,S2,...",
        help="strategies to compare; random is required (the baseline); oracle = hybrid "
        "over every technique (default hybrid,dims,opts,expert,random)",
    )
    p.add_argument(
        "--technique",
        default=AUTO,
        metavar="auto|NAME",
        help="auto: heuristics search the technique the load predictor picks (every "
        "technique, the oracle, when no model fits the device); all: heuristics try every "
        "technique; random and expert search the whole space; NAME: every strategy but "
        "oracle is restricted to that technique",
    )
    p.add_argument("--device", "-d", help="device: P:D index, identity or name substring")
    p.add_argument(
        "--size",
        metavar="NXxNYxNZ",
        help="problem size for every kernel (a 2D kernel takes the first two sizes)",
    )
    p.add_argument("--out", default="compare-out", metavar="DIR", help="output directory")
    p.add_argument(
        "--force", action="store_true", help="replace the tables and plots --out holds already"
    )
    p.add_argument(
        "--random-n", type=int, default=1000, metavar="N", help="random sample size (1000)"
    )
    p.add_argument(
        "--random-unpruned",
        action="store_true",
        help="draw random samples from the unpruned space as the paper did (illegal "
        "draws are recorded as pruned, not measured)",
    )
    p.add_argument(
        "--budget", metavar="N|Ns", help="budget of every strategy on every kernel (none)"
    )
    p.add_argument(
        "--runs",
        type=int,
        default=None,
        help="a fixed number of timed runs after the warm-up (default: adaptive, at least 3 "
        "and more until the median is known within 3 %%)",
    )
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds before a configuration is abandoned"
    )
    p.add_argument(
        "--max-minutes",
        type=float,
        metavar="M",
        help=f"stop cleanly after M minutes, writing the tables for the kernels completed "
        f"(exit status {EXIT_INCOMPLETE}; run again to continue)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="[STRATEGY:]KEY=VALUE",
        help="a strategy option (repeatable): random:n=200 for one strategy, or seed=3 for "
        "every strategy that has that option",
    )
    p.add_argument(
        "--no-confirm",
        action="store_true",
        help="rank strategies by their searches' own best times (default: each kernel's "
        f"winners are re-measured side by side, interleaved over {DEFAULT_CONFIRM.rounds} rounds)",
    )
    p.add_argument(
        "--compile-workers",
        type=int,
        metavar="N",
        help="compile processes per kernel (default: cores - 1, at most 16)",
    )


def parse_strategies(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    known = set(available_strategies()) | {ORACLE, GENERIC}
    for s in names:
        if s not in known:
            raise InputError(
                f"unknown strategy {s!r}; available: {', '.join(sorted(known))}",
                source="--strategies",
            )
    if len(set(names)) != len(names):
        raise InputError("a strategy is listed twice", source="--strategies")
    if BASELINE not in names:
        raise InputError(
            "speedups are over random sampling: include random in --strategies",
            source="--strategies",
        )
    return names


def kernel_names(kernels: Sequence[TunableKernel], paths: Sequence[str]) -> list[str]:
    """Short unique names: the file stem, or the path where stems clash."""
    stems = [Path(p).stem for p in paths]
    return [s if stems.count(s) == 1 else str(Path(p)) for s, p in zip(stems, paths, strict=True)]


def sized(kernel: TunableKernel, size: str | None) -> TunableKernel:
    """``--size`` for a mixed set: a 2D kernel takes the first two of ``256x256x256``."""
    if not size:
        return kernel
    if "=" in size or "x" not in size:
        sizes = parse_size(size, kernel)
    else:
        parts = size.split("x")[: len(kernel.sizes)]
        sizes = parse_size("x".join(parts), kernel)
    return kernel.with_sizes(sizes) if sizes else kernel


class _TimedBar(ProgressBar):
    """The progress bar; past the deadline it asks the run to stop (results are kept)."""

    def __init__(self, console: Console, deadline: float | None, token: CancelToken) -> None:
        super().__init__(console)
        self.deadline = deadline
        self.token = token

    def on_event(self, event: TuningEvent) -> None:
        super().on_event(event)
        if (
            isinstance(event, ResultMeasured)
            and self.deadline is not None
            and time.monotonic() > self.deadline
        ):
            self.token.cancel("time limit")


def strategy_options(
    texts: Sequence[str], strategies: Sequence[str], random_n: int, unpruned: bool
) -> dict[str, dict[str, Any]]:
    """Options per strategy: ``--random-n``/``--random-unpruned`` and every ``--option``."""
    options: dict[str, dict[str, Any]] = {s: {} for s in strategies}
    if "random" in options:
        options["random"].update({"n": random_n, "unpruned": unpruned})
    for item in texts:
        target, colon, rest = item.partition(":")
        if colon and "=" not in target:
            if target not in options:
                raise InputError(
                    f"--option names strategy {target!r}, which is not in --strategies",
                    source="--option",
                )
            options[target].update(parse_options([rest]))
            continue
        ((key, value),) = parse_options([item]).items()
        takers = [s for s in strategies if key in _plugin(s).options]
        if not takers:
            raise InputError(
                f"no strategy in --strategies has an option {key!r}", source="--option"
            )
        for s in takers:
            options[s][key] = value
    return options


def _plugin(strategy: str) -> Any:
    if strategy == GENERIC:
        return GenericStrategy()
    return get_strategy("hybrid" if strategy == ORACLE else strategy)


def run(args: argparse.Namespace) -> int:
    from gtune.measure import select_device

    strategies, options = _strategies(args)
    kernels = [sized(load_kernel(path), args.size) for path in args.kernels]
    names = kernel_names(kernels, args.kernels)
    device = select_device(args.device)
    out = _output_folder(args)
    deadline = time.monotonic() + 60 * args.max_minutes if args.max_minutes else None
    err, console = Console(stderr=True), Console()
    store = open_store(args)
    token = CancelToken()
    cells: list[CompareCell] = []
    reports: dict[str, dict[str, Any]] = {}
    confirmations: dict[str, dict[str, Any]] = {}
    done: list[str] = []
    stopped = ""
    started = time.monotonic()
    campaign = Campaign(
        store=store,
        runs=args.runs,
        timeout_s=args.timeout,
        compile_workers=args.compile_workers,
    )
    campaign.sessions.remember(device)
    try:
        with _TimedBar(quiet_console(args, err), deadline, token) as bar, ctrl_c_cancels(token):
            for kernel, path, name in zip(kernels, args.kernels, names, strict=True):
                if deadline is not None and time.monotonic() > deadline:
                    stopped = "time limit"
                    break
                one = compare_kernel(
                    campaign,
                    path,
                    device,
                    strategies,
                    sizes=kernel.sizes,
                    name=name,
                    technique=args.technique,
                    budget=args.budget or "none",  # none: as the paper, not the default
                    options=options,
                    confirm=None if args.no_confirm else DEFAULT_CONFIRM,
                    observer=bar,
                    cancel=token,
                )
                if not one.complete:
                    stopped = "time limit" if token.reason == "time limit" else "interrupted"
                    break
                if one.confirmation is not None:
                    confirmations[name] = one.confirmation.to_dict()
                reports[name] = {s: r.to_dict() for s, r in one.reports.items()}
                cells += one.cells
                done.append(name)
                _write(
                    out,
                    args,
                    device,
                    strategies,
                    names,
                    done,
                    cells,
                    reports,
                    started,
                    False,
                    confirmations,
                )
    finally:
        campaign.close()
        store.close()
    complete = len(done) == len(kernels)
    rows = _write(
        out, args, device, strategies, names, done, cells, reports, started, complete, confirmations
    )
    title = f"{len(done)} kernel(s) on {device.name}"
    console.print(compare_table(rows, title=title))
    console.print(f"tables, per-kernel results and speedups.png in {out}/", highlight=False)
    if not complete:
        why = "interrupted" if stopped == "interrupted" else f"stopped ({stopped or 'incomplete'})"
        print(
            f"gtune: {why} after {len(done)} of {len(kernels)} kernels; the tables cover "
            "those. Every result is in the result store: run the same command again to "
            "continue without re-measuring.",
            file=sys.stderr,
        )
        return 130 if stopped == "interrupted" else EXIT_INCOMPLETE
    return 0


def _strategies(args: argparse.Namespace) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The strategies compared and their options, the numeric flags checked."""
    strategies = parse_strategies(args.strategies)
    if args.random_n < 1:
        raise InputError(f"must be at least 1, got {args.random_n}", source="--random-n")
    if args.runs is not None and args.runs < 1:
        raise InputError(f"must be at least 1, got {args.runs}", source="--runs")
    if args.budget is not None:
        Budget.parse(args.budget)
    options = strategy_options(args.option, strategies, args.random_n, bool(args.random_unpruned))
    return strategies, options


def _output_folder(args: argparse.Namespace) -> Path:
    """``--out``, made; its files refused before any work unless ``--force`` or it holds
    an unfinished comparison (whose files are its own to rewrite)."""
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create: {exc.strerror}", source=out) from None
    if not _resuming(out):
        check_targets([out / name for name in OUTPUTS], force=args.force)
    return out


def _write(
    out: Path,
    args: argparse.Namespace,
    device: DeviceLimits,
    strategies: Sequence[str],
    names: Sequence[str],
    done: Sequence[str],
    cells: Sequence[CompareCell],
    reports: dict[str, dict[str, Any]],
    started: float,
    complete: bool,
    confirmations: dict[str, dict[str, Any]],
) -> list[Any]:
    """Write every output for the kernels completed so far (after each kernel)."""
    rows = strategy_rows(cells, strategies)
    notes = [
        f"device: {device.name}; kernels: {len(done)} of {len(names)}",
        f"technique: {args.technique} (heuristics: "
        + (
            "the load predictor's technique (every technique when no model fits); "
            "oracle: every technique, best kept"
            if args.technique == AUTO
            else "every technique, best kept"
            if args.technique == ALL
            else args.technique
        )
        + "; random and expert: "
        + ("the whole space" if args.technique in (AUTO, ALL) else args.technique)
        + ")",
        f"random: {args.random_n} configurations"
        + (" drawn from the unpruned space" if args.random_unpruned else " of the pruned space"),
        (
            "times: the searches' own best times (--no-confirm)"
            if args.no_confirm
            else f"times: each kernel's winning configurations re-measured side by side, "
            f"interleaved over {DEFAULT_CONFIRM.rounds} rounds (median of the pooled runs; "
            "per_kernel.csv keeps each search's own best as best_s)"
        ),
        "speedup: geometric mean over kernels of t_random / t_strategy; configs, compile s "
        "and run s: means per kernel over the configurations each strategy used "
        "(served by the store or measured); best count: kernels where the strategy's best "
        "time is the best of all strategies (ties count for each)",
    ]
    if args.budget:
        notes.append(f"budget per strategy and kernel: {args.budget}")
    notes += [f"{c.kernel} {c.strategy}: {c.remeasure_note}" for c in cells if c.remeasure_note]
    try:
        per_kernel = per_kernel_markdown(cells, strategies) if cells else ""
        # checked before the run (kept unless --force); rewritten as kernels finish
        write_text(
            out / "table.md",
            compare_markdown(rows, notes)
            + (f"\nPer kernel (configurations in parentheses):\n\n{per_kernel}" if cells else ""),
            force=True,
        )
        write_text(out / "table.csv", compare_csv(rows), force=True)
        write_text(out / "per_kernel.csv", per_kernel_csv(cells), force=True)
        if cells:
            speedups_png(cells, strategies, out / "speedups.png", title=device.name)
        data = {
            "device": device.name,
            "device_identity": device.identity,
            "strategies": list(strategies),
            "technique": args.technique,
            "random_n": args.random_n,
            "random_unpruned": bool(args.random_unpruned),
            "budget": args.budget,
            "runs": args.runs,
            "size": args.size,
            "kernels": list(names),
            "kernels_done": list(done),
            "complete": complete,
            "wall_s": time.monotonic() - started,
            "notes": notes,
            "rows": [r.to_dict() for r in rows],
            "cells": [c.to_dict() for c in cells],
            "reports": reports,
            "confirmations": confirmations,
        }
        write_text(out / "compare.json", json.dumps(data, indent=1, default=str) + "\n", force=True)
    except OSError as exc:
        raise InputError(f"cannot write results: {exc.strerror}", source=out) from None
    return rows
