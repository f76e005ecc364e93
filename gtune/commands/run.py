"""``gtune run``: tune a kernel on a device with a heuristic and report the best found."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Self

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from gtune.commands._common import open_store, parse_size, writable_file
from gtune.exceptions import InputError
from gtune.heuristics import Budget, load_spec, shipped_specs
from gtune.kernel import TunableKernel, load_kernel
from gtune.measure.result import Result
from gtune.report import run_summary_table, seconds_text, technique_table
from gtune.tuning import AUTO, TuningInterrupted, TuningReport, tune_kernel

HELP = "tune a kernel with a heuristic spec (every result goes to the store; resumable)"

RESUME_NOTE = (
    "interrupted; every result measured so far is in the result store "
    "(run the same command again to resume without re-measuring)"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", help="kernel.cl (with kernel.yaml beside it, or a plain .cl)")
    p.add_argument(
        "--spec",
        metavar="NAME|FILE",
        help=f"heuristic spec: shipped ({', '.join(shipped_specs())}) or a YAML file",
    )
    p.add_argument(
        "--strategy",
        metavar="NAME",
        help="search strategy (default hybrid): a shipped spec name, expert, random, exhaustive",
    )
    p.add_argument(
        "--technique",
        default=AUTO,
        metavar="auto|all|NAME",
        help="data-loading technique (global, vec, local, image, ...); auto and all try each "
        "and keep the best (default auto)",
    )
    p.add_argument("--device", "-d", help="device: P:D index, identity or name substring")
    p.add_argument("--size", metavar="NXxNYxNZ", help="problem size, e.g. 256x256x256")
    p.add_argument(
        "--budget",
        metavar="N|Ns",
        help="configurations (500) or wall time (90s, 10m), shared by the techniques tried",
    )
    p.add_argument("--runs", type=int, default=3, help="timed runs after one warm-up (default 3)")
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds before a configuration is abandoned"
    )
    p.add_argument("--json", metavar="FILE", help="write the full report (with the trace) here")
    plain = p.add_argument_group("plain kernels (a .cl with no description beside it)")
    plain.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2,...",
        help="a compile-time macro to tune, with its values (repeatable)",
    )
    plain.add_argument(
        "--global",
        dest="global_size",
        metavar="EXPR,...",
        help="global size per dimension, e.g. NX,NY/ROWS (default: the problem size)",
    )
    plain.add_argument(
        "--scalar",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value (or expression) of a scalar kernel argument (repeatable)",
    )
    plain.add_argument("--kernel-name", help="the __kernel function, when the file has several")


def is_plain(path: str) -> bool:
    """A ``.cl`` with no description beside it is tuned from the command line's facts."""
    p = Path(path)
    return p.suffix == ".cl" and not any(p.with_suffix(s).exists() for s in (".yaml", ".yml"))


def open_tunable(args: argparse.Namespace) -> TunableKernel:
    """The kernel: from its description, or inferred for a plain ``.cl``."""
    plain_opts = [
        name
        for name, given in (
            ("--param", args.param),
            ("--global", args.global_size),
            ("--scalar", args.scalar),
            ("--kernel-name", args.kernel_name),
        )
        if given
    ]
    if not Path(args.kernel).exists():
        raise InputError("file not found", source=args.kernel)
    if not is_plain(args.kernel):
        if plain_opts:
            raise InputError(
                f"{plain_opts[0]} applies only to a plain .cl without a description; "
                "this kernel has one (edit it instead)",
                source=args.kernel,
            )
        kernel = load_kernel(args.kernel)
        sizes = parse_size(args.size, kernel)
        return kernel.with_sizes(sizes) if sizes else kernel
    from gtune.plain import plain_kernel

    if not args.size:
        raise InputError(
            "a plain kernel (no description beside it) needs the problem size: "
            "give --size, e.g. --size 1024x1024",
            source=args.kernel,
        )
    sizes = parse_size(args.size) or {}
    return plain_kernel(
        args.kernel,
        sizes=list(sizes.values()),
        kernel_name=args.kernel_name,
        params=_params(args.param),
        global_size=[g.strip() for g in args.global_size.split(",")] if args.global_size else None,
        scalars=_pairs(args.scalar, "--scalar"),
    )


def _params(items: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        try:
            parsed = [int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            parsed = []
        if not sep or not name.strip().isidentifier() or not parsed:
            raise InputError(f"bad --param {item!r}; expected NAME=1,2,4", source="--param")
        out[name.strip()] = parsed
    return out


def _pairs(items: list[str], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip():
            raise InputError(f"bad {option} {item!r}; expected NAME=VALUE", source=option)
        out[name.strip()] = value.strip()
    return out


def strategy_and_spec(args: argparse.Namespace) -> tuple[str, str | None]:
    """``--spec`` runs the grouped strategy on that spec; ``--strategy`` names any."""
    if args.spec and args.strategy and args.strategy not in ("grouped", "hybrid"):
        raise InputError(
            f"--spec runs a grouped heuristic; it cannot be combined with --strategy "
            f"{args.strategy}",
            source="--spec",
        )
    if args.spec:
        return "grouped", args.spec
    return args.strategy or "hybrid", None


class BarProgress:
    """A rich progress bar on stderr: the step, configurations done, ETA, best so far."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[best]}"),
            console=console,
            transient=False,
        )
        self.task: TaskID | None = None
        self.label = ""
        self.whole_run = False
        self.fresh = 0
        self.reused = 0

    def __enter__(self) -> Self:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def run_started(self, label: str, total: int | None) -> None:
        if self.task is not None:
            self.progress.stop_task(self.task)
        self.label = escape(label)
        self.whole_run = total is not None
        self.task = self.progress.add_task(self.label, total=total, best="")

    def batch_started(self, step: str, size: int) -> None:
        if self.task is None:
            return
        desc = f"{self.label} · {escape(step)}"
        if self.whole_run:
            self.progress.update(self.task, description=desc)
        else:  # no total known in advance: the bar (and its ETA) covers the step
            self.progress.reset(self.task, total=size, description=desc)

    def result(self, result: Result, fresh: bool, best_s: float) -> None:
        if fresh:
            self.fresh += 1
        else:
            self.reused += 1
        if self.task is None:
            return
        best = f"best {seconds_text(best_s)}" if math.isfinite(best_s) else ""
        store = f"  ({self.reused} from store)" if self.reused else ""
        self.progress.update(self.task, advance=1, best=best + store)


def run(args: argparse.Namespace) -> int:
    from gtune.measure import select_device

    kernel = open_tunable(args)
    strategy, spec = strategy_and_spec(args)
    budget = Budget.parse(args.budget) if args.budget is not None else None
    if spec is not None:  # every mistake in the spec shows before anything runs
        load_spec(spec).bind(kernel.parameter_names, kernel.sizes)
    if args.json:
        writable_file(args.json, "--json")
    if args.runs < 1:
        raise InputError(f"must be at least 1, got {args.runs}", source="--runs")
    device = select_device(args.device)
    store = open_store(args)
    err = Console(stderr=True)
    interrupted = False
    try:
        with BarProgress(err) as bar:
            try:
                report = tune_kernel(
                    kernel,
                    device,
                    strategy=strategy,
                    spec_path=spec,
                    technique=args.technique,
                    budget=budget,
                    store=store,
                    runs=args.runs,
                    timeout_s=args.timeout,
                    progress=bar,
                )
            except TuningInterrupted as stop:
                report, interrupted = stop.report, True
    finally:
        store.close()
    show(report, Console())
    if args.json:
        write_json(report, Path(args.json))
    if interrupted:
        print(f"gtune: {RESUME_NOTE}", file=sys.stderr)
        return 130
    return 0 if report.best_result is not None else 1


def show(report: TuningReport, console: Console) -> None:
    console.print(run_summary_table(report))
    if len(report.runs) > 1:
        console.print(technique_table(report))
    for note in report.notes:
        console.print(f"note: {note}", highlight=False)


def write_json(report: TuningReport, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror}", source=path) from None
