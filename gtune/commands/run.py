"""``gtune run``: tune a kernel on a device with a heuristic and report the best found."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from gtune.api import DEFAULT_CONFIRM, tune
from gtune.budget import Budget
from gtune.commands._common import (
    REMEASURE_HELP,
    STOP_SIGNALS,
    arm_exit_deadline,
    open_store,
    parse_remeasure,
    quiet_console,
    received_signals,
    writable_file,
)
from gtune.commands._plain import add_plain_arguments, note_lines, open_tunable
from gtune.commands._plain import is_plain as is_plain
from gtune.escape import terminal
from gtune.exceptions import InputError
from gtune.heuristics import load_spec, shipped_specs
from gtune.kernel import TunableKernel
from gtune.measure.stats import TimingPolicy
from gtune.outfiles import write_text
from gtune.processes import clear_stop, request_stop
from gtune.progress import ProgressBar
from gtune.report import (
    confirmation_table,
    convergence_png,
    run_summary_table,
    seconds_text,
    technique_table,
)
from gtune.tuning import (
    AUTO,
    CancelToken,
    TuningInterrupted,
    TuningReport,
)

if TYPE_CHECKING:
    from gtune.measure.lifting import OriginalComparison

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
        help="technique (global, vec, local, image, stream; temporal: time steps); auto: the load "
        "predictor's choice where a model fits the device (`gtune models`), else every "
        "technique; all: every technique, keeping the best (default auto)",
    )
    p.add_argument("--device", "-d", help="device: P:D index, identity or name substring")
    p.add_argument("--size", metavar="NXxNYxNZ", help="problem size, e.g. 256x256x256")
    p.add_argument(
        "--budget",
        metavar="N|Ns",
        help="configurations (500) or wall time (90s, 10m), shared by the techniques tried; "
        "none: no limit (default: none, or 90s when every technique is searched because no "
        "load-predictor model fits the device)",
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
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="write a convergence plot here: best time so far against evaluations and "
        "against seconds, one line per technique, the default as a dashed line",
    )
    p.add_argument(
        "--force", action="store_true", help="replace the --json and --plot files if they exist"
    )
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


def lifted_original(path: str, kernel: TunableKernel) -> tuple[Any, TunableKernel] | None:
    """For a lifted definition (one with ``original:``), the definition and its original
    kernel at the tuning size; None for anything else."""
    from gtune.stencils.definition import is_definition_path, load_definition

    if not is_definition_path(path):
        return None
    definition = load_definition(path)
    if definition.original is None:
        return None
    from gtune.commands._plain import original_kernel

    return definition, original_kernel(definition, kernel.sizes)


def run(args: argparse.Namespace) -> int:
    from gtune.measure import select_device

    kernel = open_tunable(args)
    lifted = lifted_original(args.kernel, kernel)
    strategy, spec = strategy_and_spec(args)
    budget = Budget.parse(args.budget) if args.budget is not None else None
    if spec is not None:  # every mistake in the spec shows before anything runs
        load_spec(spec).bind(kernel.parameter_names, kernel.sizes)
    if args.json:
        writable_file(args.json, "--json", force=args.force)
    if args.plot:
        writable_file(args.plot, "--plot", force=args.force)
    remeasure = parse_remeasure(args.remeasure)
    if args.runs is not None and args.runs < 1:
        raise InputError(f"must be at least 1, got {args.runs}", source="--runs")
    options = parse_options(args.option)
    device = select_device(args.device)
    err = Console(stderr=True)
    for line in note_lines(kernel):
        err.print(escape(terminal(line)), highlight=False)
    recorded: Path | None = None  # a lifted definition's original output
    with _workers_shared(lifted is not None):
        if lifted is not None:
            from gtune.measure.lifting import against_original
            from gtune.stencils.lift import original_output_file

            definition, original = lifted
            kernel = against_original(kernel, definition, original, device, timeout_s=args.timeout)
            recorded = original_output_file(kernel)
            err.print(
                f"reference: the output of the original kernel {original.name} "
                f"({escape(terminal(original.source_path))}) at its shipped launch",
                highlight=False,
            )
        tuning = {"strategy": strategy, "spec": spec, "budget": budget, "options": options}
        report = _tuned(args, kernel, device, tuning, remeasure, err, recorded)
        interrupted = report.interrupted
        comparison = None
        try:
            if lifted is not None and not interrupted and report.best_config is not None:
                comparison = _compared(args, kernel, lifted, report.best_config, device, err)
        finally:
            if recorded is not None:
                recorded.unlink(missing_ok=True)
    show(report, Console())
    if comparison is not None:
        show_original(comparison, Console())
    if args.json:
        write_json(report, Path(args.json), comparison)
    if args.plot:
        convergence_png(report, args.plot)
    if interrupted:
        if not received_signals:  # a stop signal is reported by the command line
            print(f"gtune: {RESUME_NOTE}", file=sys.stderr)
        return 130
    return 0 if report.best_result is not None else 1


def _workers_shared(shared: bool) -> contextlib.AbstractContextManager[Any]:
    """Where one run measures with several evaluators one after another (a lifted
    definition: the original's output, the tuning, the comparison with the original),
    they share the measuring worker (gtune.measure.pool): each after the first starts no
    interpreter and no driver context, about a second of a two-core machine each."""
    if not shared:
        return contextlib.nullcontext()
    from gtune.measure.pool import reuse_workers

    return reuse_workers()


def _tuned(
    args: argparse.Namespace,
    kernel: TunableKernel,
    device: Any,
    tuning: dict[str, Any],
    remeasure: Any,
    err: Console,
    recorded: Path | None,
) -> TuningReport:
    """The tuning, with its progress bar; Ctrl-C ends it with what it found. If it
    fails, a lifted definition's recorded original output goes with it."""
    store = open_store(args)
    token = CancelToken()
    try:
        with ProgressBar(quiet_console(args, err)) as bar, ctrl_c_cancels(token):
            try:
                return tune(
                    kernel,
                    device=device,
                    strategy=tuning["strategy"],
                    spec=tuning["spec"],
                    technique=args.technique,
                    budget=tuning["budget"],
                    store=store,
                    observer=bar,
                    cancel=token,
                    strategy_options=tuning["options"],
                    runs=args.runs,
                    timeout_s=args.timeout,
                    remeasure=remeasure,
                    confirm=None if args.no_confirm else DEFAULT_CONFIRM,
                )
            except TuningInterrupted as stop:
                return stop.report
    except BaseException:
        if recorded is not None:
            recorded.unlink(missing_ok=True)
        raise
    finally:
        store.close()


def _compared(
    args: argparse.Namespace,
    kernel: TunableKernel,
    lifted: tuple[Any, TunableKernel],
    best: dict[str, int],
    device: Any,
    err: Console,
) -> OriginalComparison | None:
    """The tuned kernel timed against the original at its shipped launch; None for an
    original that writes one plane per launch (its time is a loop of launches)."""
    from gtune.measure.lifting import compare_with_original, plane_of

    if plane_of(lifted[0], kernel.sizes) is not None:  # timed per plane: not compared
        err.print(
            "note: the original writes one plane per launch; its time (a loop of "
            "launches in your host code) is not compared here",
            highlight=False,
        )
        return None
    return compare_with_original(
        kernel,
        best,
        lifted[1],
        device,
        timing=TimingPolicy(args.runs, args.runs) if args.runs else None,
        timeout_s=args.timeout,
    )


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


def show_original(comparison: OriginalComparison, console: Console) -> None:
    c = comparison
    # its configuration (WX=8, WY=4); where it has none (--local 16,16), its sizes
    launch = ", ".join(f"{k}={v}" for k, v in c.original_config.items()) or c.original_launch
    console.print(
        f"original kernel {c.original} at its shipped launch{f' ({launch})' if launch else ''}: "
        f"{seconds_text(c.original_s)}; tuned: {seconds_text(c.tuned_s)}; speedup "
        f"{c.speedup:.2f}x over the original (measured alternately, {c.rounds} rounds)"
        + (
            ": the original is faster; keep it (the tuned kernel should not replace it)"
            if c.speedup < 1
            else ""
        ),
        highlight=False,
    )


def write_json(
    report: TuningReport, path: Path, comparison: OriginalComparison | None = None
) -> None:
    data = report.to_dict()
    if comparison is not None:
        data["original"] = comparison.to_dict()
    best = report.best_result
    data["unverified"] = best.extra.get("unverified") if best is not None else None
    # checked (and kept unless --force) before the run: the run's own file now
    write_text(path, json.dumps(data, indent=2) + "\n", force=True)
