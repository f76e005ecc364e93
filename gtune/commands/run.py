"""``gtune run``: tune a kernel on a device with a heuristic and report the best found."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
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

from gtune.api import tune
from gtune.commands._common import (
    REMEASURE_HELP,
    STOP_SIGNALS,
    arm_exit_deadline,
    open_store,
    parse_remeasure,
    received_signals,
    writable_file,
)
from gtune.commands._plain import add_plain_arguments, open_tunable
from gtune.commands._plain import is_plain as is_plain
from gtune.exceptions import InputError
from gtune.heuristics import Budget, load_spec, shipped_specs
from gtune.processes import clear_stop, request_stop
from gtune.report import confirmation_table, run_summary_table, seconds_text, technique_table
from gtune.tuning import (
    AUTO,
    BatchStarted,
    CancelToken,
    ConfirmStarted,
    ResultMeasured,
    SearchStarted,
    TaskStarted,
    TuningEvent,
    TuningInterrupted,
    TuningReport,
)

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
        help="data-loading technique (global, vec, local, image, stream); auto: the load "
        "predictor's choice where a model fits the device (`gtune models`), else every "
        "technique; all: every technique, keeping the best (default auto)",
    )
    p.add_argument("--device", "-d", help="device: P:D index, identity or name substring")
    p.add_argument("--size", metavar="NXxNYxNZ", help="problem size, e.g. 256x256x256")
    p.add_argument(
        "--budget",
        metavar="N|Ns",
        help="configurations (500) or wall time (90s, 10m), shared by the techniques tried",
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
    p.add_argument("--remeasure", metavar="STATUS,...", help=REMEASURE_HELP)
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a strategy option, e.g. --option repeat=1 (repeatable; lists: a;b;c)",
    )
    p.add_argument(
        "--no-confirm",
        action="store_true",
        help="skip the confirmation round (report the searches' best; the default is not measured)",
    )
    p.add_argument("--json", metavar="FILE", help="write the full report (with the trace) here")
    add_plain_arguments(p)


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


def parse_options(items: list[str], flag: str = "--option") -> dict[str, str]:
    """``KEY=VALUE`` texts (converted to the strategy's types by the library)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"bad {flag} {item!r}; expected KEY=VALUE", source=flag)
        out[key.strip()] = value.strip()
    return out


@contextlib.contextmanager
def ctrl_c_cancels(token: CancelToken) -> Iterator[None]:
    """Ctrl-C asks the run to stop after the configuration being measured; a second
    Ctrl-C stops at once (every result measured is in the store either way). SIGTERM
    and SIGHUP take the same path; the command line then exits with status 2."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if signum != signal.SIGINT:
            received_signals.append(signal.Signals(signum).name)
        if token.cancelled:
            # the second request: stop now, with cleanup given a bounded time
            arm_exit_deadline(130 if signum == signal.SIGINT else 2, "stopped")
            raise KeyboardInterrupt
        token.cancel("interrupted")
        request_stop()  # a hanging kernel or a looping reference is not waited for

    previous: dict[int, Any] = {}
    try:
        for s in (signal.SIGINT, *STOP_SIGNALS):
            previous[s] = signal.signal(s, handler)
    except ValueError:  # not the main thread: leave signals alone
        for number, old in previous.items():
            signal.signal(number, old)
        yield
        return
    try:
        yield
    finally:
        clear_stop()
        for number, old in previous.items():
            signal.signal(number, old)


class BarProgress:
    """A rich progress bar on stderr: the step, configurations done, ETA, best so far."""

    def __init__(self, console: Console, prefix: str = "") -> None:
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
        self.prefix = prefix
        self.whole_run = False
        self.fresh = 0
        self.reused = 0

    def __enter__(self) -> Self:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def on_event(self, event: TuningEvent) -> None:
        if isinstance(event, TaskStarted):
            self.prefix = event.label
        elif isinstance(event, SearchStarted):
            self.run_started(event.label, event.total)
        elif isinstance(event, BatchStarted):
            self.batch_started(event.step, event.size)
        elif isinstance(event, ResultMeasured):
            self.result(event.fresh, event.best_s)
        elif isinstance(event, ConfirmStarted):
            self.run_started(event.label, event.configs * event.rounds)
            self.batch_started(f"{event.configs} configurations x {event.rounds} rounds", 0)

    def run_started(self, label: str, total: int | None) -> None:
        if self.task is not None:
            self.progress.stop_task(self.task)
        self.label = escape(f"{self.prefix}: {label}" if self.prefix else label)
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

    def result(self, fresh: bool, best_s: float) -> None:
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
    remeasure = parse_remeasure(args.remeasure)
    if args.runs is not None and args.runs < 1:
        raise InputError(f"must be at least 1, got {args.runs}", source="--runs")
    options = parse_options(args.option)
    device = select_device(args.device)
    store = open_store(args)
    err = Console(stderr=True)
    token = CancelToken()
    for note in kernel.inferred:
        err.print(f"inferred: {escape(note)}", highlight=False)
    interrupted = False
    try:
        with BarProgress(err) as bar, ctrl_c_cancels(token):
            try:
                report = tune(
                    kernel,
                    device=device,
                    strategy=strategy,
                    spec=spec,
                    technique=args.technique,
                    budget=budget,
                    store=store,
                    observer=bar,
                    cancel=token,
                    strategy_options=options,
                    runs=args.runs,
                    timeout_s=args.timeout,
                    remeasure=remeasure,
                    **({"confirm": None} if args.no_confirm else {}),
                )
            except TuningInterrupted as stop:
                report = stop.report
            interrupted = report.interrupted
    finally:
        store.close()
    show(report, Console())
    if args.json:
        write_json(report, Path(args.json))
    if interrupted:
        if not received_signals:  # a stop signal is reported by the command line
            print(f"gtune: {RESUME_NOTE}", file=sys.stderr)
        return 130
    return 0 if report.best_result is not None else 1


def show(report: TuningReport, console: Console) -> None:
    console.print(run_summary_table(report))
    if len(report.runs) > 1:
        console.print(technique_table(report))
    if report.confirmation is not None and report.confirmation.entries:
        console.print(confirmation_table(report))
    for note in report.notes:
        console.print(f"note: {note}", highlight=False)
    best = report.best_result
    if best is not None and best.extra.get("unverified"):
        console.print(f"UNVERIFIED: {escape(str(best.extra['unverified']))}", highlight=False)


def write_json(report: TuningReport, path: Path) -> None:
    data = report.to_dict()
    best = report.best_result
    data["unverified"] = best.extra.get("unverified") if best is not None else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n")
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror}", source=path) from None
