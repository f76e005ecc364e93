"""The library API: :func:`tune` one kernel, or run a :class:`Campaign` of many.

What ``gtune run`` and ``gtune compare`` do, without the command line::

    import gtune

    report = gtune.tune("stencils/heat3d.cl", sizes={"NX": 128, "NY": 128, "NZ": 128},
                        budget="60s", store="results.db")
    print(report.best_config, report.best_s, report.speedup, report.significant)

A campaign is a list of plain-data :class:`TuningTask` records (kernel path or
description, sizes, device selector, strategy, technique, budget) run one after
another in this process by :func:`run_task`, sharing one store and one session per
kernel and device; the same records can be shipped to other processes or machines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtune.budget import Budget
from gtune.description import from_dict, load_kernel
from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.heuristics import HeuristicSpec
from gtune.kernel import TunableKernel
from gtune.measure.result import Status
from gtune.measure.stats import TimingPolicy
from gtune.store import ResultStore, open_store
from gtune.tuning.confirm import ConfirmPolicy
from gtune.tuning.driver import run_tuning
from gtune.tuning.events import CancelToken, Observer, TaskStarted
from gtune.tuning.report import TuningReport
from gtune.tuning.session import EvaluatorFactory, TuningSession
from gtune.tuning.techniques import AUTO, TechniquePolicy

DEFAULT_CONFIRM = ConfirmPolicy()


def as_budget(budget: Budget | str | int | None) -> Budget | None:
    """A budget from a :class:`Budget`, a text (``"500"``, ``"90s"``) or a count."""
    if budget is None or isinstance(budget, Budget):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, int | str):
        raise InputError(f"a budget is a Budget, a count or a text like '90s', got {budget!r}")
    return Budget.parse(str(budget), source="budget")


def as_device(device: DeviceLimits | str | None) -> DeviceLimits:
    """A device from its limits, or a selector (``P:D``, identity, name substring)."""
    if isinstance(device, DeviceLimits):
        return device
    from gtune.measure import select_device

    return select_device(device)


def as_kernel(
    kernel: TunableKernel | str | Path | Mapping[str, Any], sizes: Mapping[str, int] | None = None
) -> TunableKernel:
    """A kernel from itself, a path (with its description) or ``TunableKernel.to_dict()``."""
    if isinstance(kernel, TunableKernel):
        k = kernel
    elif isinstance(kernel, str | Path):
        k = load_kernel(kernel)
    elif isinstance(kernel, Mapping):
        k = from_dict(kernel)
    else:
        raise InputError(f"a kernel is a path, a description or a TunableKernel, got {kernel!r}")
    return k.with_sizes(sizes) if sizes else k


def tune(
    kernel: TunableKernel | str | Path | Mapping[str, Any],
    *,
    device: DeviceLimits | str | None = None,
    strategy: str = "hybrid",
    technique: str | TechniquePolicy = AUTO,
    budget: Budget | str | int | None = None,
    store: ResultStore | str | Path | None = None,
    observer: Observer | None = None,
    cancel: CancelToken | None = None,
    strategy_options: Mapping[str, Any] | None = None,
    timing: TimingPolicy | None = None,
    sizes: Mapping[str, int] | None = None,
    spec: str | Path | HeuristicSpec | None = None,
    confirm: ConfirmPolicy | None = DEFAULT_CONFIRM,
    runs: int | None = None,
    timeout_s: float = 60.0,
    compile_workers: int | None = None,
    session: TuningSession | None = None,
    evaluator_factory: EvaluatorFactory | None = None,
    remeasure: Iterable[Status] = frozenset(),
    seed_default: bool = True,
) -> TuningReport:
    """Tune one kernel on one device and return what was found.

    ``kernel``: a :class:`TunableKernel`, a path to ``kernel.cl`` (with its description
    beside it) or a description dict; ``sizes`` overrides its problem size. ``device``:
    limits or a selector (default: the first GPU). ``strategy``: a strategy name
    (``hybrid``, the default, adapts to kernels whose parameters are not the template's);
    ``spec`` runs a spec file instead. ``technique``: ``auto``, ``all``, ``whole``, a
    technique name or a :class:`~gtune.tuning.TechniquePolicy`. ``budget``: covers the
    whole run (evaluations, or wall time such as ``"90s"``). ``store``: a result store or
    a path or URL; the default is the command line's (``$GTUNE_DB``, else
    ``./gtune-results.db``), so the library and ``gtune run`` share what they measured,
    and ``"sqlite://"`` keeps the results in memory. ``observer`` (e.g.
    :class:`gtune.ProgressBar`) is told every event; ``cancel`` stops the
    run after the configuration being measured. ``confirm``: the confirmation round
    (None: the searches' best is the answer and the default is not measured).
    ``seed_default``: each search first measures the kernel's default configuration
    and the grouped searches start from it (False: from the spec's start values).
    ``session`` reuses a kernel's space and evaluator across calls (left open).
    """
    the_budget = as_budget(budget)
    if session is not None:
        return run_tuning(
            session,
            strategy=strategy,
            spec=spec,
            technique=technique,
            budget=the_budget,
            options=strategy_options,
            confirm_policy=confirm,
            observer=observer,
            cancel=cancel,
            seed_default=seed_default,
        )
    k = as_kernel(kernel, sizes)
    dev = as_device(device)
    own_store = store is None or isinstance(store, str | Path)
    the_store = open_store(store) if store is None or isinstance(store, str | Path) else store
    try:
        with TuningSession(
            k,
            dev,
            store=the_store,
            runs=runs,
            timeout_s=timeout_s,
            compile_workers=compile_workers,
            evaluator_factory=evaluator_factory,
            timing=timing,
            remeasure=remeasure,
        ) as sess:
            return run_tuning(
                sess,
                strategy=strategy,
                spec=spec,
                technique=technique,
                budget=the_budget,
                options=strategy_options,
                confirm_policy=confirm,
                observer=observer,
                cancel=cancel,
                seed_default=seed_default,
            )
    finally:
        if own_store and the_store is not None:
            the_store.close()


# -------------------------------------------------------------------------------------
# Campaigns


@dataclass(frozen=True)
class TuningTask:
    """One kernel × size × device × strategy: plain data, serialisable to JSON.

    ``kernel`` is a path (with its description beside it) or the dict of
    ``TunableKernel.to_dict()``; ``device`` a selector (None: the first GPU);
    ``budget`` a text (``"500"``, ``"90s"``); ``options`` the strategy's options.
    """

    kernel: str | Mapping[str, Any]
    sizes: tuple[tuple[str, int], ...] = ()
    device: str | None = None
    strategy: str = "hybrid"
    technique: str = AUTO
    budget: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    spec: str | None = None
    confirm: bool = True
    label: str = ""

    @property
    def name(self) -> str:
        """A short label for displays."""
        if self.label:
            return self.label
        if isinstance(self.kernel, str):
            name = Path(self.kernel).stem
        else:
            where = self.kernel.get("description_path") or self.kernel.get("source_path")
            name = Path(str(where)).stem if where else "kernel"
        size = "x".join(str(v) for _, v in self.sizes)
        return " ".join(filter(None, [name, size, self.strategy, self.device or ""]))

    @property
    def size_text(self) -> str:
        """The problem size as ``64x64x64``; "default" for the kernel's own."""
        return "x".join(str(v) for _, v in self.sizes) if self.sizes else "default"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel if isinstance(self.kernel, str) else dict(self.kernel),
            "sizes": dict(self.sizes),
            "device": self.device,
            "strategy": self.strategy,
            "technique": self.technique,
            "budget": self.budget,
            "options": dict(self.options),
            "spec": self.spec,
            "confirm": self.confirm,
            "label": self.label,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TuningTask:
        kernel = data["kernel"]
        return cls(
            kernel=kernel if isinstance(kernel, str) else dict(kernel),
            sizes=tuple((str(k), int(v)) for k, v in dict(data.get("sizes") or {}).items()),
            device=data.get("device"),
            strategy=str(data.get("strategy") or "hybrid"),
            technique=str(data.get("technique") or AUTO),
            budget=data.get("budget"),
            options=tuple(dict(data.get("options") or {}).items()),
            spec=data.get("spec"),
            confirm=bool(data.get("confirm", True)),
            label=str(data.get("label") or ""),
        )


@dataclass
class Sessions:
    """Open sessions by (kernel, device), and devices by selector, for reuse."""

    store: ResultStore | None = None
    runs: int | None = None
    timeout_s: float = 60.0
    compile_workers: int | None = None
    timing: TimingPolicy | None = None
    evaluator_factory: EvaluatorFactory | None = None
    _sessions: dict[tuple[str, str], TuningSession] = field(default_factory=dict)
    _devices: dict[str | None, DeviceLimits] = field(default_factory=dict)

    def remember(self, device: DeviceLimits) -> None:
        """Serve ``device`` for its selector without asking OpenCL again."""
        self._devices[device.selector] = device

    def device(self, selector: str | None) -> DeviceLimits:
        if selector not in self._devices:
            self._devices[selector] = as_device(selector)
        return self._devices[selector]

    def session(self, kernel: TunableKernel, device: DeviceLimits) -> TuningSession:
        key = (kernel.identity(), device.identity)
        if key not in self._sessions:
            self._sessions[key] = TuningSession(
                kernel,
                device,
                store=self.store,
                runs=self.runs,
                timeout_s=self.timeout_s,
                compile_workers=self.compile_workers,
                evaluator_factory=self.evaluator_factory,
                timing=self.timing,
            )
        return self._sessions[key]

    def release(self, kernel: TunableKernel, device: DeviceLimits) -> None:
        """Close one kernel's session (its workers) when no task needs it any more."""
        s = self._sessions.pop((kernel.identity(), device.identity), None)
        if s is not None:
            s.close()

    def close(self) -> None:
        for s in self._sessions.values():
            s.close()
        self._sessions.clear()


def run_task(
    task: TuningTask,
    store: ResultStore | None,
    observer: Observer | None = None,
    cancel: CancelToken | None = None,
    *,
    sessions: Sessions | None = None,
) -> TuningReport:
    """Run one task; with ``sessions``, reuse (and keep open) its kernel's session."""
    kernel = as_kernel(task.kernel, dict(task.sizes))
    pool = sessions if sessions is not None else Sessions(store=store)
    try:
        device = pool.device(task.device)
        return run_tuning(
            pool.session(kernel, device),
            strategy=task.strategy,
            spec=task.spec,
            technique=task.technique,
            budget=as_budget(task.budget),
            options=dict(task.options),
            confirm_policy=DEFAULT_CONFIRM if task.confirm else None,
            observer=observer,
            cancel=cancel,
        )
    finally:
        if sessions is None:
            pool.close()


def _size_items(
    size: Mapping[str, int] | str | None, names: Sequence[str]
) -> tuple[tuple[str, int], ...]:
    """A grid size as the task's (name, value) pairs for a kernel with size ``names``."""
    if size is None:
        return ()
    if isinstance(size, str):
        parts = size.split("x")
        if not all(p.isascii() and p.isdigit() for p in parts):
            raise InputError(f"bad size {size!r}; expected e.g. 256x256x256", source="sizes")
        return tuple(zip(names, (int(p) for p in parts), strict=False))
    return tuple(size.items())


def check_tasks(tasks: Iterable[TuningTask]) -> None:
    """Every mistake in ``tasks`` that can be found without a device, before any runs:
    the kernel and its sizes, the strategy with its options or spec, the technique and
    the budget. Raises :class:`~gtune.exceptions.InputError` naming the task."""
    from gtune.tuning.strategy import resolve_strategy
    from gtune.tuning.techniques import ALL, WHOLE, techniques_to_run

    kernels: dict[str, TunableKernel] = {}
    for task in tasks:
        try:
            key = task.kernel if isinstance(task.kernel, str) else repr(task.kernel)
            if key not in kernels:
                kernels[key] = as_kernel(task.kernel)
            kernel = kernels[key].with_sizes(dict(task.sizes)) if task.sizes else kernels[key]
            resolve_strategy(kernel, task.strategy, task.spec, dict(task.options))
            if task.technique not in (AUTO, ALL, WHOLE):
                techniques_to_run(kernel, task.technique)
            as_budget(task.budget)
        except InputError as exc:
            raise type(exc)(
                f"task {task.name}: {exc.message}", source=exc.source, hint=exc.hint
            ) from None


@dataclass
class CampaignResult:
    """What running a campaign gave, tasks in order; ``complete`` unless it was
    cancelled or a task failed.

    In this process (:class:`Campaign`): ``reports``, each task with its report. On Dask
    (:func:`gtune.campaign.run_campaign`): ``summaries`` (one plain dict per finished
    task, earlier runs' included), ``failed`` (tasks with why), ``skipped`` (finished by
    an earlier run), ``out_dir`` (the campaign's folder), ``wall_s`` and ``start_s``.
    """

    reports: list[tuple[TuningTask, TuningReport]] = field(default_factory=list)
    cancelled: bool = False
    summaries: list[dict[str, Any]] = field(default_factory=list)
    failed: list[tuple[TuningTask, str]] = field(default_factory=list)
    skipped: int = 0
    out_dir: Path | None = None
    wall_s: float = 0.0
    #: Seconds before the first piece: the cluster's start and its workers' OpenCL
    #: processes (Dask only; part of ``wall_s``).
    start_s: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.failed and not self.cancelled


class Campaign:
    """Many tuning tasks run one after another in this process, sharing a store.

    Consecutive tasks on the same kernel and device share one session (the space is
    solved once, the workers started once) and every result measured by one task is
    served from the store to the others. Build the tasks yourself or with
    :meth:`grid`; call :meth:`run` (as often as you like) and :meth:`close` at the end.
    ``store``: as for :func:`tune` (default: the command line's store).
    """

    def __init__(
        self,
        tasks: Iterable[TuningTask] = (),
        *,
        store: ResultStore | str | Path | None = None,
        runs: int | None = None,
        timeout_s: float = 60.0,
        compile_workers: int | None = None,
        timing: TimingPolicy | None = None,
        evaluator_factory: EvaluatorFactory | None = None,
    ) -> None:
        self.tasks = list(tasks)
        self._own_store = store is None or isinstance(store, str | Path)
        self.store: ResultStore = (
            open_store(store) if store is None or isinstance(store, str | Path) else store
        )
        self.sessions = Sessions(
            store=self.store,
            runs=runs,
            timeout_s=timeout_s,
            compile_workers=compile_workers,
            timing=timing,
            evaluator_factory=evaluator_factory,
        )

    @staticmethod
    def grid(
        kernels: Sequence[str | Mapping[str, Any]],
        *,
        sizes: Sequence[Mapping[str, int] | str | None] = (None,),
        devices: Sequence[str | None] = (None,),
        strategies: Sequence[str] = ("hybrid",),
        technique: str = AUTO,
        budget: str | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        confirm: bool = True,
    ) -> list[TuningTask]:
        """Every kernel × size × device × strategy (kernel-major, so sessions are shared).

        A size is a mapping (``{"NX": 256, "NY": 64}``, names the kernel must have) or a
        text such as ``"256x256x256"`` that fills each kernel's sizes in order, so one
        text serves 2D and 3D kernels alike (a 2D kernel takes the first two), as in
        ``gtune campaign``. ``options`` maps a strategy name to its options. Every task
        is checked before this returns (kernel, size, strategy and options, technique,
        budget), so a mistake is reported before anything is measured.
        """
        tasks: list[TuningTask] = []
        for kernel in kernels:
            names = list(as_kernel(kernel).sizes)
            for size in sizes:
                for device in devices:
                    for strategy in strategies:
                        tasks.append(
                            TuningTask(
                                kernel=kernel,
                                sizes=_size_items(size, names),
                                device=device,
                                strategy=strategy,
                                technique=technique,
                                budget=budget,
                                options=tuple(((options or {}).get(strategy) or {}).items()),
                                confirm=confirm,
                            )
                        )
        check_tasks(tasks)
        return tasks

    def run(
        self,
        tasks: Iterable[TuningTask] | None = None,
        *,
        observer: Observer | None = None,
        cancel: CancelToken | None = None,
    ) -> CampaignResult:
        """Run ``tasks`` (default: the campaign's) in order until done or cancelled."""
        todo = list(self.tasks if tasks is None else tasks)
        check_tasks(todo)
        done: list[tuple[TuningTask, TuningReport]] = []
        for i, task in enumerate(todo):
            if cancel is not None and cancel.cancelled:
                return CampaignResult(done, cancelled=True)
            if observer is not None:
                observer.on_event(TaskStarted(task.name, i, len(todo)))
            report = run_task(task, self.store, observer, cancel, sessions=self.sessions)
            if report.interrupted:
                return CampaignResult(done, cancelled=True)
            done.append((task, report))
        return CampaignResult(done)

    def close(self) -> None:
        self.sessions.close()
        if self._own_store:
            self.store.close()

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "Campaign",
    "CampaignResult",
    "Sessions",
    "TuningTask",
    "as_budget",
    "as_device",
    "as_kernel",
    "check_tasks",
    "run_task",
    "tune",
]
