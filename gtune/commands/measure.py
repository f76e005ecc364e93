"""``gtune measure``: measure one configuration of a kernel, for real, and store it."""

from __future__ import annotations

import argparse
import itertools
import json

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from gtune.commands._common import (
    REMEASURE_HELP,
    fmt_seconds,
    open_store,
    parse_config,
    parse_remeasure,
)
from gtune.commands._plain import add_plain_arguments, note_lines, open_tunable
from gtune.device import DeviceLimits
from gtune.exceptions import BuildError, ExpressionError, InputError
from gtune.kernel import TunableKernel
from gtune.measure import Status, StoredEvaluator
from gtune.measure.result import Result

HELP = "measure one configuration of a kernel (default: the description's defaults)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "kernel", help="kernel.cl (with kernel.yaml beside it, or a plain .cl) or kernel.yaml"
    )
    p.add_argument("--config", "-c", default="", help="parameter values, e.g. WX=32,WY=4,WZ=1")
    p.add_argument("--size", help="problem size, e.g. 256x256x256 or NX=256,NY=64")
    p.add_argument("--device", "-d", help="device: P:D index, identity or name substring")
    p.add_argument("--runs", type=int, default=3, help="timed runs after one warm-up (default 3)")
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds before a configuration is abandoned"
    )
    p.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="NAME=V1,V2,...",
        help="measure every combination of these values (repeatable); results go to the store",
    )
    p.add_argument("--remeasure", metavar="STATUS,...", help=REMEASURE_HELP)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_plain_arguments(p)


def run(args: argparse.Namespace) -> int:
    from gtune.measure import OpenCLEvaluator, select_device

    kernel = open_tunable(args)
    remeasure = parse_remeasure(args.remeasure)
    config = kernel.default_config() or {}
    if not config and kernel.reference.kind == "config" and kernel.inferred:
        config = dict(kernel.reference.config)  # a plain kernel's first configuration
    for line in note_lines(kernel):
        Console(stderr=True).print(escape(line), highlight=False)
    config.update(parse_config(args.config))
    missing = [p for p in kernel.parameter_names if p not in config]
    if missing:
        raise InputError(
            f"no value for {', '.join(missing)}: give --config or defaults in the description",
            source=kernel.label,
        )
    unknown = sorted(set(config) - set(kernel.parameter_names))
    if unknown:
        raise InputError(
            f"unknown parameter {unknown[0]!r}; the kernel has {', '.join(kernel.parameter_names)}",
            source="--config",
        )
    configs = _sweep_configs(args, kernel, config) if args.sweep else [config]
    outside = list(dict.fromkeys(v for c in configs for v in kernel.outside_domain(c)))
    if outside:
        shown = ", ".join(outside[:8]) + (
            f" and {len(outside) - 8} more" if len(outside) > 8 else ""
        )
        raise InputError(
            f"outside the parameter's domain in {kernel.label}: {shown}",
            source="--sweep" if args.sweep else "--config",
            hint="`gtune space` lists the values each parameter may take",
        )
    _note_outside_space(kernel, configs)
    device = select_device(args.device)
    if args.sweep:
        return _sweep(args, kernel, configs, device, remeasure)
    store = open_store(args)
    inner = OpenCLEvaluator(
        kernel, device, runs=args.runs, timeout_s=args.timeout, compile_workers=0
    )
    evaluator = StoredEvaluator(
        inner,
        store,
        device=device.identity,
        kernel_id=kernel.identity(),
        kernel_name=kernel.store_name,
        problem=kernel.sizes,
        remeasure=remeasure,
        timeout_s=args.timeout,
    )
    try:
        reused = evaluator.known(config) is not None
        result = evaluator.evaluate(config)
    finally:
        evaluator.close()
        store.close()
    if result.status is Status.BUILD_FAILED:
        raise BuildError(
            f"kernel {kernel.name} does not compile with {config}",
            source=kernel.source_path or kernel.label,
            log=result.message,
        )
    if args.json:
        data = result.to_dict()
        data.update(device=device.identity, kernel=kernel.name, from_store=reused)
        print(json.dumps(data, indent=2))
        return 0 if result.ok else 1
    t = Table(title=f"{kernel.name} on {device.name}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("problem", " ".join(f"{k}={v}" for k, v in kernel.sizes.items()))
    t.add_row("configuration", " ".join(f"{k}={v}" for k, v in config.items()))
    t.add_row("status", result.status.value + ("  (from the result store)" if reused else ""))
    if result.message:
        t.add_row("message", result.message[:500])
    if result.extra.get("verification"):
        t.add_row("verification", escape(str(result.extra["verification"])))
    if result.extra.get("unverified"):
        t.add_row("UNVERIFIED", escape(str(result.extra["unverified"])))
    t.add_row("compile", fmt_seconds(result.compile_s))
    if result.times_s:
        if kernel.steps is not None:
            n = kernel.launches(config)
            t.add_row("time steps", f"{kernel.step_count} in {n} launch{'es' if n > 1 else ''}")
        per_step = " per step" if kernel.steps is not None else ""
        t.add_row("run (median)", fmt_seconds(result.median_s) + per_step)
        t.add_row("runs", ", ".join(fmt_seconds(x) for x in result.times_s))
        gbs = kernel.bytes_moved() / result.median_s / 1e9
        t.add_row(
            "bandwidth", f"{gbs:.1f} GB/s (if every array is read or written whole once{per_step})"
        )
        if kernel.flops_per_point:
            t.add_row(
                "compute",
                f"{kernel.flops_per_point * kernel.points() / result.median_s / 1e9:.1f} GFLOP/s",
            )
    Console().print(t)
    return 0 if result.ok else 1


def _note_outside_space(kernel: TunableKernel, configs: list[dict[str, int]]) -> None:
    """A note for each constraint of the kernel's description that a configuration
    asked for fails: measured anyway (measure takes what it is given; a search never
    proposes it), but the user learns why a search would not, and that its build or its
    results may fail for that reason."""
    failing: list[str] = []
    for config in configs:
        env = kernel.env(config)
        for c in kernel.constraints:
            try:
                ok = bool(c.evaluate(env))
            except (InputError, ExpressionError, KeyError, ZeroDivisionError):
                continue  # one the space reports where it solves
            if not ok and c.text not in failing:
                failing.append(c.text)
    if failing:
        shown = ", ".join(f"`{t}`" for t in failing[:4]) + (" ..." if len(failing) > 4 else "")
        Console(stderr=True).print(
            escape(
                f"note: {kernel.label}: outside the tuning space (the description's "
                f"constraint {shown} fails); measured as asked"
            ),
            highlight=False,
        )


def _sweep_configs(
    args: argparse.Namespace, kernel: TunableKernel, base: dict[str, int]
) -> list[dict[str, int]]:
    """The Cartesian product ``--sweep`` asks for, over ``base``."""
    axes: dict[str, list[int]] = {}
    for item in args.sweep:
        name, _, values = item.partition("=")
        if name not in kernel.parameter_names:
            raise InputError(f"unknown parameter {name!r}", source="--sweep")
        try:
            axes[name] = [int(v) for v in values.split(",") if v]
        except ValueError:
            raise InputError(
                f"bad values in {item!r}; expected NAME=1,2,4", source="--sweep"
            ) from None
    return [
        {**base, **dict(zip(axes, combo, strict=True))}
        for combo in itertools.product(*axes.values())
    ]


def _sweep(
    args: argparse.Namespace,
    kernel: TunableKernel,
    configs: list[dict[str, int]],
    device: DeviceLimits,
    remeasure: frozenset[Status],
) -> int:
    """Measure a Cartesian product of values, resumably, with progress."""
    from gtune.measure import OpenCLEvaluator

    store = open_store(args)
    inner = OpenCLEvaluator(kernel, device, runs=args.runs, timeout_s=args.timeout)
    counts: dict[str, int] = {}
    best: Result | None = None
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[best]}"),
        console=Console(stderr=True),
    ) as progress:
        task = progress.add_task("sweep", total=len(configs), best="")

        def seen(result: Result, fresh: bool) -> None:
            nonlocal best
            counts[result.status.value] = counts.get(result.status.value, 0) + 1
            if result.ok and (best is None or result.median_s < best.median_s):
                best = result
            progress.update(
                task, advance=1, best=f"best {fmt_seconds(best.median_s)}" if best else ""
            )

        evaluator = StoredEvaluator(
            inner,
            store,
            device=device.identity,
            kernel_id=kernel.identity(),
            kernel_name=kernel.store_name,
            problem=kernel.sizes,
            on_result=seen,
            remeasure=remeasure,
            timeout_s=args.timeout,
        )
        try:
            for _ in evaluator.evaluate_batch(configs):
                pass
        finally:
            evaluator.close()
            store.close()
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(
        f"{len(configs)} configurations ({evaluator.measured} measured now, "
        f"{evaluator.reused} from the store): {summary}"
    )
    if best is not None:
        setting = " ".join(f"{k}={v}" for k, v in best.config.items())
        print(f"best: {setting}  {fmt_seconds(best.median_s)}")
    return 0
