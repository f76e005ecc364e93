"""Collecting training data on Dask workers: one GPU, several, or several hosts.

The same labelling as :func:`gtune.training.train.collect` -- each kernel's heuristic
run once per technique, the winner its label -- but every technique's search is a
campaign piece (:mod:`gtune.campaign.schedule`): streamed to whichever worker is free,
longest first (its configurations times its technique's build cost on its stencil),
each worker keeping its kernel's session for that kernel's next piece.
With a time limit, ``order="cheapest"`` runs the cheapest kernels' searches first,
each kernel's together, so that the limit leaves the most rows (the next call goes on
with the dearer ones).
The results land in the shared store and each finished search in the collection's
ledger (``tasks.jsonl`` in ``work_dir``), so a collection cut short continues where it
stopped; a kernel's row is written to the dataset once all its techniques are in.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gtune.campaign.runner import SchedulerTls, read_done, run_tasks
from gtune.campaign.schedule import seconds_per_config
from gtune.campaign.spec import CampaignTask
from gtune.device import DeviceLimits
from gtune.loadpredict.dataset import Dataset, TrainingRow, deepened_row, row_from_runs
from gtune.loadpredict.features import DeviceTraits, StencilTraits
from gtune.training.train import (
    Deepen,
    Progress,
    TrainingKernel,
    TrainingRun,
    labelable_kernel,
)
from gtune.tuning.events import CancelToken, TaskFinished, TuningEvent


class _Rows:
    """Builds a kernel's row as soon as its last technique's search is in."""

    def __init__(
        self,
        wanted: Mapping[str, tuple[TrainingKernel, StencilTraits, int]],
        heuristic: str,
        dataset_path: Path,
        run: TrainingRun,
        progress: Progress | None,
        total: int,
        deeper: tuple[Mapping[str, TrainingRow], int] | None = None,
    ) -> None:
        self.wanted = wanted
        # searching close calls deeper: the rows they refine, the evaluations each
        self.deeper = deeper
        self.heuristic = heuristic
        self.dataset_path = dataset_path
        self.run = run
        self.on_row = progress
        self.total = total
        self.runs: dict[str, list[dict[str, Any]]] = {}
        self.device: dict[str, Any] = {}
        self.labelled = 0

    def on_event(self, event: TuningEvent) -> None:
        """The campaign's observer: each finished piece's runs are added."""
        if not isinstance(event, TaskFinished):
            return
        if event.summary is None or event.label not in self.wanted:
            return
        self.add(event.label, event.summary)

    def add(self, label: str, summary: Mapping[str, Any]) -> None:
        item, traits, n = self.wanted[label]
        self.run.add_time(summary.get("time") or {}, int(summary.get("measured") or 0))
        self.runs.setdefault(label, []).extend(summary.get("runs") or [])
        self.device = dict(summary.get("device_limits") or self.device)
        if len(self.runs[label]) < n:
            return
        if self.deeper is not None:
            base, evaluations = self.deeper
            row = deepened_row(base[label], self.runs[label], evaluations)
            self.run.dataset = self.run.dataset.merged([row])
            self.run.dataset.write_csv(self.dataset_path)
            self.run.deepened.append(item.name)
            self.labelled += 1
            if self.on_row is not None:
                self.on_row(self.labelled, self.total, item, row)
            return
        limits = DeviceLimits.from_dict(self.device)
        row = row_from_runs(
            item.name,
            limits.identity,
            self.heuristic,
            traits,
            self.runs[label],
            DeviceTraits.of(limits),
        )
        if not any(math.isfinite(s) for s in row.times.values()):
            self.run.skipped.append((item.name, "no technique produced a valid configuration"))
        else:
            self.run.dataset = self.run.dataset.merged([row])
            self.run.dataset.write_csv(self.dataset_path)
        self.run.done.append(item.name)
        self.labelled += 1
        if self.on_row is not None:
            self.on_row(self.labelled, self.total, item, row)


def collect_on_cluster(
    kernels: Sequence[TrainingKernel],
    device: DeviceLimits,
    *,
    selector: str,
    heuristic: str,
    store_url: str,
    dataset_path: Path,
    work_dir: Path,
    budget: str | None = None,
    techniques: Sequence[str] = (),
    compile_workers: int | None = None,
    scheduler: str | None = None,
    tls: SchedulerTls | None = None,
    workers_per_device: int | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    deepen: Deepen | None = None,
    order: str = "longest",
) -> TrainingRun:
    """Label ``kernels`` on the workers driving ``selector`` (see the module's docs).

    ``device`` is the device the dataset is for (its identity keys the rows);
    ``budget`` is each technique's search (a count, or wall time such as ``90s``);
    ``deepen``: once every kernel is labelled, the close calls are searched deeper, a
    second round of pieces (:class:`~gtune.training.train.Deepen`); ``order``: the
    longest searches first (the least time for all of them) or the cheapest kernels'
    (the most rows before a time limit; :data:`gtune.campaign.schedule.ORDERS`).
    """
    dataset = Dataset.read_csv(dataset_path) if dataset_path.exists() else Dataset([])
    have = {(r.kernel, r.device, r.heuristic) for r in dataset.rows}
    run = TrainingRun(dataset)
    wanted: dict[str, tuple[TrainingKernel, StencilTraits, int]] = {}
    tasks: list[CampaignTask] = []
    pieces = _Pieces(selector, heuristic, compile_workers, work_dir, store_url, cancel)
    pieces.scheduler, pieces.tls, pieces.workers_per_device = scheduler, tls, workers_per_device
    pieces.order = order
    for item in kernels:
        if (item.name, device.identity, heuristic) in have:
            run.done.append(item.name)
            continue
        labelable = labelable_kernel(item, techniques)
        if isinstance(labelable, str):
            run.skipped.append((item.name, labelable))
            continue
        _, traits, searched = labelable
        wanted[item.name] = (item, traits, len(searched))
        tasks += pieces.of(item, searched, budget)
    if tasks:
        rows = _Rows(wanted, heuristic, dataset_path, run, progress, len(wanted))
        pieces.run(tasks, rows, wanted)
        run.left = [name for name in wanted if name not in run.done]
    if deepen is None or run.left or (cancel is not None and cancel.cancelled):
        return run
    calls = deepen.calls(run.dataset, kernels, device.identity, heuristic)
    if not calls:
        return run
    deeper = {item.name: (item, old.traits, len(pair)) for item, old, pair in calls}
    tasks = [t for item, _, pair in calls for t in pieces.of(item, pair, str(deepen.evaluations))]
    base = {item.name: old for item, old, _ in calls}
    rows = _Rows(
        deeper, heuristic, dataset_path, run, progress, len(calls), (base, deepen.evaluations)
    )
    pieces.run(tasks, rows, deeper)
    run.left = [name for name in deeper if name not in run.deepened]
    return run


class _Pieces:
    """Runs a round of pieces on the workers: those an earlier call finished are read
    from the ledger, the rest streamed, longest first."""

    def __init__(
        self,
        selector: str,
        heuristic: str,
        compile_workers: int | None,
        work_dir: Path,
        store_url: str,
        cancel: CancelToken | None,
    ) -> None:
        self.selector = selector
        self.heuristic = heuristic
        self.compile_workers = compile_workers
        self.work_dir = work_dir
        self.store_url = store_url
        self.cancel = cancel
        # where the pieces run: a local cluster, or the workers of a scheduler
        self.scheduler: str | None = None
        self.tls: SchedulerTls | None = None
        self.workers_per_device: int | None = None
        self.order = "longest"

    def of(
        self, item: TrainingKernel, techniques: Sequence[str], budget: str | None
    ) -> list[CampaignTask]:
        """A piece per technique: its search of ``item`` within ``budget``."""
        return [
            CampaignTask(
                kernel=str(Path(item.path).resolve()),
                label=item.name,
                sizes=tuple(item.sizes.items()),
                device=self.selector,
                strategy=self.heuristic,
                technique=name,
                budget=budget,
                compile_workers=self.compile_workers,
                confirm=False,  # one technique's search, no confirmation round
            )
            for name in techniques
        ]

    def run(
        self,
        tasks: list[CampaignTask],
        rows: _Rows,
        wanted: Mapping[str, tuple[TrainingKernel, StencilTraits, int]],
    ) -> None:
        done = read_done(self.work_dir / "tasks.jsonl")  # searches an earlier call finished
        for task in tasks:
            if task.key in done:
                rows.add(task.label, done[task.key])
        result = run_tasks(
            tasks,
            self.work_dir,
            store_url=self.store_url,
            scheduler=self.scheduler,
            tls=self.tls,
            workers_per_device=self.workers_per_device,
            observer=rows,
            cancel=self.cancel,
            # the order pieces go in: each kernel's traits are known here already
            rate_of=lambda t: seconds_per_config(t.technique, wanted[t.label][1]),
            order=self.order,
        )
        for failed, why in result.failed:
            rows.run.skipped.append(
                (failed.label, f"technique {failed.technique}: {why.splitlines()[0]}")
            )


__all__ = ["collect_on_cluster"]
