"""``gtune campaign``: many kernels × sizes × devices × strategies on Dask workers."""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from gtune.campaign import (
    CampaignSpec,
    CancelToken,
    load_campaign,
    run_campaign,
)
from gtune.campaign.report import write_report
from gtune.campaign.spec import parse_campaign
from gtune.commands._common import (
    add_scheduler_tls_arguments,
    cancelled_by_ctrl_c,
    scheduler_tls,
    unencrypted_scheduler_note,
)
from gtune.exceptions import InputError
from gtune.tuning.events import CampaignStarted, TaskFinished, TaskProgress, TuningEvent

CTRL_C_EXIT = 2
"""A campaign stopped by Ctrl-C exits 2 (docs/campaigns.md), however early it came."""
HELP = "run a campaign (kernels x sizes x devices x strategies) on Dask workers, shared store"

EXIT_INCOMPLETE = 3


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="campaign file (YAML; see docs/campaigns.md)")
    p.add_argument("--kernels", metavar="K1,K2", help="kernel files (instead of a file)")
    p.add_argument(
        "--suite", metavar="NAME[:PAT,...]", help="a generated suite, e.g. garvey104:star_3d*"
    )
    p.add_argument("--sizes", metavar="S1,S2", help="problem sizes, e.g. 256x256x256,512x512x64")
    p.add_argument(
        "--devices", metavar="D1,D2", help="device selectors (P:D, identity or name part)"
    )
    p.add_argument("--strategies", metavar="S1,S2", help="strategies (default hybrid)")
    p.add_argument("--technique", help="data-loading technique (default auto)")
    p.add_argument("--budget", metavar="N|Ns", help="budget of every task")
    p.add_argument("--out", metavar="DIR", help="campaign folder (default: campaign-NAME)")
    p.add_argument("--store", metavar="URL", help="shared result store (default DIR/campaign.db)")
    p.add_argument(
        "--scheduler", metavar="ADDR", help="an existing Dask scheduler, tcp://HOST:PORT"
    )
    add_scheduler_tls_arguments(p)
    p.add_argument(
        "--dashboard",
        action="store_true",
        help="serve the Dask dashboard of the local cluster on 127.0.0.1:8787",
    )
    p.add_argument(
        "--workers-per-device",
        type=int,
        metavar="N",
        help="local worker processes per device (default: 2 per GPU when the cores allow, "
        "1 per CPU device); they share the device, never timing on it at once",
    )
    p.add_argument("--force", action="store_true", help="run finished tasks again")


def _list(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def _spec(args: argparse.Namespace) -> CampaignSpec:
    flags = {
        "kernels": args.kernels,
        "suite": args.suite,
        "sizes": args.sizes,
        "devices": args.devices,
        "strategies": args.strategies,
        "technique": args.technique,
        "budget": args.budget,
    }
    if args.file:
        spec = load_campaign(args.file)
        overrides: dict[str, Any] = {}
        if args.sizes:
            overrides["sizes"] = tuple(_list(args.sizes))
        if args.devices:
            overrides["devices"] = tuple(_list(args.devices))
        if args.strategies:
            overrides["strategies"] = tuple(_list(args.strategies))
        if args.technique:
            overrides["technique"] = args.technique
        if args.budget:
            overrides["budget"] = args.budget
        if args.kernels or args.suite:
            raise InputError(
                "give kernels in the campaign file or as flags, not both", source="--kernels"
            )
        if overrides:
            from dataclasses import replace

            spec = replace(spec, **overrides)
        return spec
    if not (args.kernels or args.suite):
        raise InputError("give a campaign file, or --kernels / --suite", source="gtune campaign")
    raw: dict[str, Any] = {"name": "campaign", "kernels": []}
    raw["kernels"] += _list(args.kernels)
    if args.suite:
        name, _, pats = args.suite.partition(":")
        raw["kernels"].append({"suite": name, "names": _list(pats)} if pats else {"suite": name})
    for key in ("sizes", "devices", "strategies"):
        if flags[key]:
            raw[key] = _list(flags[key])
    if args.technique:
        raw["technique"] = args.technique
    if args.budget:
        raw["budget"] = args.budget
    return parse_campaign(raw, source="command line", base_dir=Path.cwd())


class _Display:
    """Tasks and configurations per device, with an ETA from the finished tasks."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.total = 0
        self.done = 0
        self.started_at = time.monotonic()
        self.configs: dict[str, dict[str, int]] = {}
        self.last_line = 0.0

    def on_event(self, event: TuningEvent) -> None:
        if isinstance(event, CampaignStarted):
            self.started(event)
        elif isinstance(event, TaskProgress):
            self.progress(event)
        elif isinstance(event, TaskFinished):
            self.finished(event)

    def started(self, event: CampaignStarted) -> None:
        self.total = event.total
        self.done = event.skipped
        self.started_at = time.monotonic()
        self.console.print(
            f"campaign: {event.total} tasks on {len(event.devices)} device(s); "
            f"{event.skipped} already finished"
        )

    def progress(self, event: TaskProgress) -> None:
        self.configs.setdefault(event.device, {})[event.task] = event.configs
        now = time.monotonic()
        if now - self.last_line > 5.0:
            self.last_line = now
            per_dev = ", ".join(f"{d}: {sum(v.values())} configs" for d, v in self.configs.items())
            self.console.print(f"  {self.done}/{self.total} tasks; {per_dev}; {self._eta()}")

    def _eta(self) -> str:
        elapsed = time.monotonic() - self.started_at
        finished_now = max(0, self.done)
        if finished_now == 0 or self.done >= self.total:
            return "ETA -"
        rate = elapsed / finished_now
        return f"ETA {rate * (self.total - self.done):.0f} s"

    def finished(self, event: TaskFinished) -> None:
        self.done += 1
        what = f"{event.label}@{event.size} {event.strategy} on {event.device or 'default'}"
        summary = event.summary
        if summary is None:
            self.console.print(f"[{self.done}/{self.total}] {what}: FAILED: {event.error}")
            return
        best = summary.get("best_s")
        best_txt = (
            f"{best * 1e6:.1f} µs" if isinstance(best, float) and math.isfinite(best) else "-"
        )
        self.console.print(
            f"[{self.done}/{self.total}] {what}: best {best_txt}, "
            f"{summary.get('evaluations')} configs ({summary.get('measured')} measured)"
            + time_split(summary.get("time"))
        )


def time_split(t: Any) -> str:
    """``; 12.0 s: compile 3.1, run 2.0, ...`` from a summary's time breakdown."""
    if not isinstance(t, dict) or not t.get("wall_s"):
        return ""
    parts = ("compile", "run", "verify", "space", "startup", "store", "wait", "other")
    split = ", ".join(f"{k} {float(t.get(k + '_s') or 0.0):.1f}" for k in parts)
    return f"; {float(t['wall_s']):.1f} s: {split}"


def throughput(result: Any) -> str:
    """Configurations measured per second of the campaign, and per device worker."""
    import json

    rows = list(result.summaries)
    pieces = result.out_dir / "pieces.jsonl"
    if pieces.exists():
        rows += [json.loads(line) for line in pieces.read_text().splitlines() if line.strip()]
    measured = sum(int(r.get("measured") or 0) for r in rows)
    if not measured or result.wall_s <= 0:
        return ""
    workers = {str(r.get("worker") or r.get("host")) for r in rows}
    busy = sum(float(r.get("wall_s") or 0.0) for r in rows)
    start = float(getattr(result, "start_s", 0.0) or 0.0)
    searching = result.wall_s - start
    if start <= 0 or searching <= 0:
        return (
            f"{measured} configurations measured in {result.wall_s:.0f} s: "
            f"{measured / result.wall_s:.1f}/s on {len(workers)} worker(s), "
            f"{measured / busy if busy else 0:.1f}/s per busy worker"
        )
    return (
        f"{measured} configurations measured in {result.wall_s:.0f} s "
        f"({start:.0f} s starting the workers): {measured / searching:.1f}/s of searching "
        f"on {len(workers)} worker(s), {measured / busy if busy else 0:.1f}/s per busy worker"
    )


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    spec = _spec(args)
    if args.workers_per_device is not None and not 1 <= args.workers_per_device <= 64:
        raise InputError("must be between 1 and 64", source="--workers-per-device")
    out = Path(args.out or f"campaign-{spec.name}")
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory", source=f"--out {out}")
    tls = scheduler_tls(args)
    note = unencrypted_scheduler_note(args.scheduler)
    if note:
        console.print(note)
    token = CancelToken()
    with cancelled_by_ctrl_c(token):
        result = run_campaign(
            spec,
            out,
            scheduler=args.scheduler,
            store=args.store or args.db,
            workers_per_device=args.workers_per_device,
            force=args.force,
            observer=_Display(console),
            cancel=token,
            tls=tls,
            dashboard=args.dashboard,
        )
    paths = write_report(result.summaries, out, f"campaign {spec.name}")
    table = Table(title=f"campaign {spec.name}")
    for col in ("kernel", "size", "device", "strategy", "best", "configs", "measured"):
        table.add_column(col)
    for s in sorted(
        result.summaries, key=lambda s: (s["label"], s["size"], s["device"], s["strategy"])
    ):
        best = s.get("best_s")
        table.add_row(
            str(s["label"]),
            str(s["size"]),
            str(s["device"]),
            str(s["strategy"]),
            f"{best * 1e6:.1f} µs" if isinstance(best, float) else "-",
            str(s.get("evaluations")),
            str(s.get("measured")),
        )
    Console().print(table)
    console.print(f"report: {', '.join(str(p) for p in paths)}")
    rate = throughput(result)
    if rate:
        console.print(rate)
    for task, why in result.failed:
        console.print(f"failed: {task.label}@{task.size_text} {task.strategy}: {why}")
    if result.cancelled:
        console.print(
            "interrupted: finished tasks and every measured result are kept; run again to resume"
        )
        return 2
    if result.failed:
        return EXIT_INCOMPLETE
    return 0
