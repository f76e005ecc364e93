"""``gtune train``: label kernels with their best technique and fit a load predictor."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from rich.console import Console

from gtune.budget import Budget
from gtune.campaign.schedule import ORDERS
from gtune.commands._common import (
    add_scheduler_tls_arguments,
    cancelled_by_ctrl_c,
    open_store,
    scheduler_tls,
    unencrypted_scheduler_note,
)
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.loadpredict.dataset import Dataset, TrainingRow
from gtune.loadpredict.models import CARD_SUFFIX, user_model_dir
from gtune.measure import select_device
from gtune.outfiles import check_targets, write_text
from gtune.store import default_url
from gtune.training.train import (
    DEEPEN_MARGIN,
    Deepen,
    Progress,
    TrainingKernel,
    TrainingRun,
    collect,
    fit_model,
    kernels_from_paths,
    model_name,
    suite_kernels,
    time_line,
)
from gtune.training.validation import CrossValidation

HELP = "train a load predictor: run a heuristic once per technique on each kernel, fit a forest"

EXIT_INCOMPLETE = 3


def _installed(name: str) -> list[Path]:
    """The files ``--install`` writes for the model ``name``."""
    return [user_model_dir() / f"{name}.csv", user_model_dir() / f"{name}{CARD_SUFFIX}"]


def _kernel_arguments(p: argparse.ArgumentParser) -> None:
    """Which kernels are labelled, at which sizes, and how their rows are named."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--suite", choices=["garvey104"], help="the synthetic suite (plus real stencils)"
    )
    src.add_argument(
        "--kernel-files", nargs="+", metavar="FILE", help="your own kernels (with descriptions)"
    )
    p.add_argument(
        "--kernels",
        metavar="PAT,...",
        help="only these suite kernels (names or shell patterns, e.g. 'star_3d*,heat3d')",
    )
    p.add_argument("--no-real", action="store_true", help="leave out the real stencils")
    p.add_argument(
        "--sizes",
        metavar="NXxNYxNZ,...",
        default="256x256x256",
        help="problem sizes; each kernel is labelled at each (default 256x256x256)",
    )
    p.add_argument(
        "--size-in-name",
        action="store_true",
        help="name each suite kernel KERNEL@NXxNYxNZ even when one size is given (as "
        "several sizes do): a dataset grown one size per call keeps a row per size "
        "(without it, one size names the kernel alone, as 256x256x256 rows are named)",
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    _kernel_arguments(p)
    p.add_argument("--heuristic", default="hybrid", help="heuristic to run (default hybrid)")
    p.add_argument(
        "--techniques",
        metavar="T,...",
        help="search only these data-loading techniques (default: every one a kernel has); "
        "the others are never predicted",
    )
    p.add_argument("--device", "-d", help="device: P:D index, identity or name substring")
    p.add_argument("--out", default="gtune-model", metavar="DIR", help="dataset and model card")
    p.add_argument("--name", help="model name (default: device and heuristic)")
    p.add_argument(
        "--budget", metavar="N|Ns", help="budget of each technique's search (default none)"
    )
    p.add_argument(
        "--deepen",
        type=int,
        metavar="N",
        help="search close calls deeper: once every kernel is labelled, a kernel whose two "
        "fastest techniques lie within --deepen-margin has those two searched to N "
        "configurations each (the first searches' from the store); needs a --budget "
        "count below N; rows labelled earlier are deepened too",
    )
    p.add_argument(
        "--deepen-margin",
        type=float,
        default=DEEPEN_MARGIN,
        metavar="F",
        help=f"a close call: the runner-up less than F slower (default {DEEPEN_MARGIN}, "
        f"{DEEPEN_MARGIN * 100:.0f} per cent)",
    )
    p.add_argument(
        "--max-minutes",
        type=float,
        metavar="M",
        help=f"stop after M minutes (exit {EXIT_INCOMPLETE}); the same command continues",
    )
    p.add_argument(
        "--order",
        choices=ORDERS,
        help="which kernels are labelled first: cheapest (the cheapest kernels first, each "
        "kernel's searches together: the most rows before --max-minutes; its default) or "
        "longest (a campaign's longest searches first, the least time for all; the "
        "default without --max-minutes)",
    )
    p.add_argument(
        "--relabel-changed",
        action="store_true",
        help="label again the kernels whose row is of another version of them (the "
        "template, the generator or the description changed the kernel's identity since, "
        "or the row predates identities); the new row replaces the old",
    )
    p.add_argument("--compile-workers", type=int, metavar="N", help="compile processes")
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="label on the workers of this Dask scheduler (tcp://HOST:PORT or "
        "tls://HOST:PORT with --tls-*; see docs/campaigns.md), each technique's search a "
        "task of its own",
    )
    add_scheduler_tls_arguments(p)
    p.add_argument(
        "--workers-per-device",
        type=int,
        metavar="N",
        help="label on a local Dask cluster: N workers per device the --device selector "
        "names (every GPU it matches), each technique's search a task of its own; 0: as "
        "many as a campaign starts by default (2 per GPU when the cores allow)",
    )
    p.add_argument(
        "--install",
        action="store_true",
        help=f"also install the model for gtune run ({user_model_dir()})",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="--install: replace an installed model of the same name",
    )
    p.add_argument("--json", action="store_true", help="print the cross-validation as JSON")


def _order(args: argparse.Namespace) -> str:
    """``--order``, by default the cheapest kernels first under a time limit."""
    if args.order:
        return str(args.order)
    return "cheapest" if args.max_minutes else "longest"


def _sizes(text: str) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for part in filter(None, (t.strip() for t in text.split(","))):
        if not re.fullmatch(r"[1-9]\d{0,5}x[1-9]\d{0,5}x[1-9]\d{0,5}", part):
            raise InputError(f"bad size {part!r}; expected e.g. 256x256x256", source="--sizes")
        a, b, c = (int(v) for v in part.split("x"))
        out.append((a, b, c))
    if not out:
        raise InputError("give at least one size", source="--sizes")
    return out


def _techniques(text: str | None, kernels: list[TrainingKernel]) -> list[str]:
    """``--techniques``: names some kernel has, at least two of them."""
    if text is None:
        return []
    names = [t.strip() for t in text.split(",") if t.strip()]
    known: set[str] = set()
    for k in kernels:
        known.update(load_kernel(k.path, k.sizes).techniques)
    unknown = [t for t in names if t not in known]
    if unknown:
        raise InputError(
            f"unknown technique {unknown[0]!r}; the kernels have: {', '.join(sorted(known))}",
            source="--techniques",
        )
    if len(set(names)) < 2:
        raise InputError("name at least two techniques to choose between", source="--techniques")
    return list(dict.fromkeys(names))


def _budget(text: str | None) -> Budget | None:
    return Budget.parse(text) if text else None


def _label_search(text: str | None) -> dict[str, str]:
    """What a model card records of how its labels were searched (``--budget``)."""
    budget = _budget(text)
    if budget is None or budget.unlimited:
        return {"search": "complete"}
    return {"search": "budget", "budget": str(text)}


def _deepen(args: argparse.Namespace, budget: Budget | None) -> Deepen | None:
    """``--deepen N`` / ``--deepen-margin F``, checked against ``--budget``."""
    if args.deepen is None:
        return None
    if not 0.0 < args.deepen_margin <= 10.0:
        raise InputError("must be above 0 and at most 10", source="--deepen-margin")
    if args.deepen < 2:
        raise InputError("must be at least 2 configurations", source="--deepen")
    first = budget.evaluations if budget is not None else None
    if first is None or budget is None or budget.seconds or budget.wall_seconds:
        raise InputError(
            "searches close calls deeper than the first searches: give --budget as a "
            "count of configurations below it",
            source="--deepen",
        )
    if first >= args.deepen:
        raise InputError(
            f"must exceed --budget ({first}): the first searches went that deep already",
            source="--deepen",
        )
    return Deepen(args.deepen, args.deepen_margin)


def _collect_on_cluster(
    args: argparse.Namespace,
    kernels: list[TrainingKernel],
    device: DeviceLimits,
    dataset_file: str,
    techniques: list[str],
    progress: Progress,
) -> TrainingRun:
    """The collection as campaign pieces on Dask workers (gtune.training.cluster)."""

    from gtune.campaign import CancelToken
    from gtune.training.cluster import collect_on_cluster

    out = Path(args.out)
    url = args.db or default_url()
    if "://" not in url:
        url = str(Path(url).resolve())
    tls = scheduler_tls(args)
    note = unencrypted_scheduler_note(args.scheduler)
    if note:
        print(note, file=sys.stderr)
    token = CancelToken()
    timer = None
    if args.max_minutes:  # stop handing out searches; the same command continues
        import threading

        timer = threading.Timer(args.max_minutes * 60, token.cancel)
        timer.daemon = True
        timer.start()
    try:
        with cancelled_by_ctrl_c(token):
            return collect_on_cluster(
                kernels,
                device,
                selector=args.device or device.selector,
                heuristic=args.heuristic,
                store_url=url,
                dataset_path=out / dataset_file,
                work_dir=out / "collect",
                budget=args.budget,
                techniques=techniques,
                compile_workers=args.compile_workers,
                scheduler=args.scheduler,
                tls=tls,
                workers_per_device=args.workers_per_device or None,  # 0: the default
                progress=progress,
                cancel=token,
                deepen=_deepen(args, _budget(args.budget)),
                order=_order(args),
                relabel_changed=args.relabel_changed,
            )
    finally:
        if timer is not None:
            timer.cancel()


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    sizes = _sizes(args.sizes)
    budget = _budget(args.budget)
    if args.max_minutes is not None and not (
        args.max_minutes > 0 and math.isfinite(args.max_minutes)
    ):
        raise InputError("must be a positive number of minutes", source="--max-minutes")
    deepen = _deepen(args, budget)
    scheduler_tls(args)  # certificates without a scheduler, or half a pair: refused now
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory", source=f"--out {out}")
    out.mkdir(parents=True, exist_ok=True)
    device = select_device(args.device)
    store = open_store(args)
    kernels = _training_kernels(args, out, sizes)
    techniques = _techniques(args.techniques, kernels)
    name = args.name or model_name(device.name, args.heuristic)
    dataset_file = f"{name}.csv"
    if args.install:  # an installed model of this name is kept unless --force: say so now
        check_targets(_installed(name), force=args.force)
    console.print(
        f"labelling {len(kernels)} kernels with {args.heuristic} on {device.name} "
        f"(each technique searched; results in the store, so this resumes)"
    )
    progress = _progress_printer(console)
    distributed = args.scheduler is not None or args.workers_per_device is not None
    if args.workers_per_device is not None and not 0 <= args.workers_per_device <= 64:
        raise InputError("must be between 0 and 64", source="--workers-per-device")
    try:
        if distributed:
            result = _collect_on_cluster(args, kernels, device, dataset_file, techniques, progress)
        else:
            result = collect(
                kernels,
                device,
                heuristic=args.heuristic,
                store=store,
                dataset_path=out / dataset_file,
                budget=budget,
                max_seconds=args.max_minutes * 60 if args.max_minutes else None,
                compile_workers=args.compile_workers,
                progress=progress,
                techniques=techniques,
                deepen=deepen,
                order=_order(args),
                relabel_changed=args.relabel_changed,
            )
    finally:
        store.close()
    dataset = _collected(console, result, args)
    card, cv = fit_model(
        dataset,
        name=name,
        heuristic=args.heuristic,
        device=device,
        out_dir=out,
        dataset_file=dataset_file,
        sizes=[f"{a}x{b}x{c}" for a, b, c in sizes],
        labels=_label_search(args.budget),
    )
    _show_fit(console, args, out, name, cv)
    console.print(f"model card: {card.path}; dataset: {out / dataset_file}")
    if args.install:
        target = user_model_dir()
        write_text(target / dataset_file, (out / dataset_file).read_text(), force=args.force)
        card.write(target, force=args.force)
        console.print(f"installed into {target}")
    if not result.complete:
        console.print(
            f"stopped at the time limit with {len(result.left)} kernels left; run the "
            "same command again to continue"
        )
        return EXIT_INCOMPLETE
    return 0


def _training_kernels(
    args: argparse.Namespace, out: Path, sizes: list[tuple[int, int, int]]
) -> list[TrainingKernel]:
    """The suite's kernels (generated under ``out/kernels``) or the files given."""
    if args.suite:
        return suite_kernels(
            out / "kernels",
            sizes,
            names=[k for k in (args.kernels or "").split(",") if k.strip()] or None,
            real=not args.no_real,
            suite=args.suite,
            size_in_name=args.size_in_name,
        )
    return kernels_from_paths(args.kernel_files, sizes if args.sizes else [])


def _progress_printer(
    console: Console,
) -> Progress:
    """One line per labelled kernel: each technique's time and the best."""

    def progress(i: int, n: int, item: TrainingKernel, row: TrainingRow | None) -> None:
        if row is None:
            return
        deeper = f", searched deeper ({row.deepened} each)" if row.deepened else ""
        times = ", ".join(
            f"{t} {s * 1e6:.1f} µs" if math.isfinite(s) else f"{t} -"
            for t, s in sorted(row.times.items())
        )
        label = row.label if any(math.isfinite(s) for s in row.times.values()) else "none"
        console.print(f"[{i}/{n}] {item.name}: best {label} ({times}){deeper}")

    return progress


def _collected(console: Console, result: TrainingRun, args: argparse.Namespace) -> Dataset:
    """What the labelling skipped and relabelled, and its dataset (refused if empty)."""
    for kernel, why in result.skipped:
        console.print(f"skipped {kernel}: {why}")
    if result.relabelled:
        console.print(
            f"labelled again ({len(result.relabelled)}: the kernel changed since its row): "
            + ", ".join(result.relabelled)
        )
    if result.measured:
        console.print(time_line(result))
    dataset = result.dataset if len(result.dataset) else Dataset([])
    if not len(dataset):
        if args.max_minutes and (result.measured or not result.skipped):
            # a campaign longer than its limit: nothing lost, the next call continues
            kept = (
                f"the {result.measured} configurations measured are kept in the store, and "
                "the same command continues from them"
                if result.measured
                else "no configuration had finished (the workers were still starting); "
                "give it more minutes"
            )
            raise InputError(
                f"the time limit ended before any kernel had every technique searched; {kept}",
                source="--max-minutes",
            )
        raise InputError("no kernel was labelled; nothing to train on", source="--kernels")
    return dataset


def _show_fit(
    console: Console, args: argparse.Namespace, out: Path, name: str, cv: CrossValidation | None
) -> None:
    """The cross-validation written beside the model, and summed up."""
    if cv is None:
        return
    write_text(out / f"{name}.cv.json", json.dumps(cv.to_dict(), indent=2) + "\n", force=True)
    if args.json:
        json.dump(cv.to_dict(), sys.stdout, indent=2)
        print()
    console.print(
        f"leave-one-out over {len(cv.predictions)} kernels: absolute accuracy "
        f"{cv.absolute:.2f}, penalty-weighted {cv.penalty_weighted:.3f} "
        f"({cv.majority} wins {cv.majority_share:.0%} of kernels; always answering it "
        f"scores {cv.majority_penalty_weighted:.3f})"
    )
