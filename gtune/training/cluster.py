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
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from gtune.campaign.runner import SchedulerTls, read_done, run_tasks, stale_entries
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
    labelled,
    needs_row,
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
        self.identities: dict[str, str] = {}  # kernel name -> its identity now
        self.again: set[str] = set()  # kernels whose row of another version is replaced

    def on_event(self, event: TuningEvent) -> None:
        """The campaign's observer: each finished piece's runs are added."""
        if not isinstance(event, TaskFinished):
            return
        if event.summary is None or event.label not in self.wanted:
            return
        self.add(event.label, event.summary)

    def add(self, label: str, summary: Mapping[str, Any], *, earlier: bool = False) -> None:
        """A finished search's summary; ``earlier``: an earlier call's, from the ledger
        (its measurements and time are that call's, not counted again)."""
        item, traits, n = self.wanted[label]
        if not earlier:
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
            identity=self.identities.get(label, ""),
        )
        if not any(math.isfinite(s) for s in row.times.values()):
            self.run.skipped.append((item.name, "no technique produced a valid configuration"))
        else:
            self.run.dataset = self.run.dataset.merged([row])
            self.run.dataset.write_csv(self.dataset_path)
            if label in self.again:
                self.run.relabelled.append(item.name)
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
    relabel_changed: bool = False,
) -> TrainingRun:
    """Label ``kernels`` on the workers driving ``selector`` (see the module's docs).

    ``device`` is the device the dataset is for (its identity keys the rows);
    ``budget`` is each technique's search (a count, or wall time such as ``90s``);
    ``deepen``: once every kernel is labelled, the close calls are searched deeper, a
    second round of pieces (:class:`~gtune.training.train.Deepen`); ``order``: the
    longest searches first (the least time for all of them) or the cheapest kernels'
    (the most rows before a time limit; :data:`gtune.campaign.schedule.ORDERS`);
    ``relabel_changed``: as :func:`gtune.training.train.collect`'s.
    """
    dataset = Dataset.read_csv(dataset_path) if dataset_path.exists() else Dataset([])
    have = labelled(dataset, device.identity, heuristic)
    run = TrainingRun(dataset)
    wanted: dict[str, tuple[TrainingKernel, StencilTraits, int]] = {}
    tasks: list[CampaignTask] = []
    pieces = _Pieces(selector, heuristic, compile_workers, work_dir, store_url, cancel)
    pieces.scheduler, pieces.tls, pieces.workers_per_device = scheduler, tls, workers_per_device
    pieces.order = order
    identities: dict[str, str] = {}  # the kernels' identities now
    again: set[str] = set()  # kernels with a row of another version, labelled again
    for item in kernels:
        old = have.get(item.name)
        labelable = needs_row(item, old, techniques, relabel_changed, run)
        if labelable is None:
            continue
        kernel, traits, searched = labelable
        if old is not None:
            again.add(item.name)
        identities[item.name] = kernel.identity()
        wanted[item.name] = (item, traits, len(searched))
        tasks += pieces.of(item, searched, budget)
    if tasks:
        rows = _Rows(wanted, heuristic, dataset_path, run, progress, len(wanted))
        rows.identities, rows.again = identities, again
        pieces.run(tasks, rows, wanted, again)
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
        again: Collection[str] = (),
    ) -> None:
        """Run ``tasks``; a search an earlier call finished is served from the ledger
        unless it searched another version of its kernel (its entry records another
        identity: :func:`~gtune.campaign.runner.stale_entries`; or none, for a kernel in
        ``again``, whose row is of another version)."""
        done = read_done(self.work_dir / "tasks.jsonl")  # searches an earlier call finished
        redo = stale_entries(tasks, done) | {
            t.key
            for t in tasks
            if t.label in again and t.key in done and not done[t.key].get("kernel_identity")
        }
        for task in tasks:
            if task.key in done and task.key not in redo:
                rows.add(task.label, done[task.key], earlier=True)
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
            redo=redo,
        )
        for failed, why in result.failed:
            rows.run.skipped.append(
                (failed.label, f"technique {failed.technique}: {why.splitlines()[0]}")
            )


__all__ = ["collect_on_cluster"]
