"""Tune one kernel on one device: space, technique choice, search, default, report.

:func:`tune_kernel` is what ``gtune run`` and ``gtune compare`` call; it takes plain
parameters (no command-line arguments) and returns a :class:`TuningReport`. A
:class:`TuningSession` holds what is expensive to make for a kernel -- its solved space
and its OpenCL evaluator (worker processes, problem data on the device) -- so that
several strategies and techniques tuned one after another share them, and a result
measured once is served from the store to every later search.

Technique choice: there is no trained load predictor yet, so ``technique="auto"`` runs
the strategy once per data-loading technique of the kernel and keeps the best (the
paper's oracle, seed 001 §8.1) and says so in the report's notes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gtune.device import DeviceLimits
from gtune.exceptions import InputError, UnsatisfiableSpace
from gtune.heuristics import (
    Budget,
    HeuristicSpec,
    Searcher,
    SearchProblem,
    TraceEntry,
    TuningOutcome,
    drive,
    get_strategy,
    load_spec,
)
from gtune.heuristics.strategies import Strategy
from gtune.kernel import Config, TunableKernel
from gtune.measure.evaluator import Evaluator, StoredEvaluator
from gtune.measure.result import Result, Status
from gtune.space import EnumeratedSpace, solve_space, technique_space
from gtune.store import ResultStore, SQLiteStore

AUTO = "auto"
ALL = "all"
WHOLE = "whole"
NO_PREDICTOR_NOTE = "no load predictor for this device yet: tried every technique (oracle)"


class TuningProgress(Protocol):
    """What a display is told while a kernel is tuned (all calls from one thread)."""

    def run_started(self, label: str, total: int | None) -> None:
        """A search starts (one per technique); ``total`` configurations if known."""

    def batch_started(self, step: str, size: int) -> None:
        """The search hands ``size`` configurations of ``step`` to the evaluator."""

    def result(self, result: Result, fresh: bool, best_s: float) -> None:
        """One configuration done (``fresh``: measured now, else from the store)."""


class _Silent:
    def run_started(self, label: str, total: int | None) -> None:
        return None

    def batch_started(self, step: str, size: int) -> None:
        return None

    def result(self, result: Result, fresh: bool, best_s: float) -> None:
        return None


# -------------------------------------------------------------------------------------
# Report data


@dataclass
class TechniqueRun:
    """One search: a strategy on the space restricted to one technique (or all of it)."""

    technique: str | None  # None: the whole space
    space_size: int
    outcome: TuningOutcome | None  # None: skipped (see note)
    measured: int = 0  # configurations measured now
    reused: int = 0  # configurations served by the result store
    note: str = ""
    best_technique: str | None = None  # the technique the best configuration uses

    @property
    def best_s(self) -> float:
        return self.outcome.best_s if self.outcome is not None else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "technique": self.technique,
            "space_size": self.space_size,
            "measured": self.measured,
            "reused": self.reused,
            "note": self.note,
            "best_technique": self.best_technique,
            "outcome": self.outcome.to_dict() if self.outcome is not None else None,
        }


@dataclass
class TuningReport:
    """Everything :func:`tune_kernel` found and what it cost.

    ``search_*`` is what the searches found (what ``compare`` ranks strategies by);
    ``best_*`` is the best configuration known, which is the default configuration when
    that beat every configuration the searches measured.
    """

    kernel: str
    kernel_label: str
    sizes: dict[str, int]
    device: str
    device_identity: str
    strategy: str
    technique: str  # as requested: auto, all, a name, or "" for kernels without any
    runs: list[TechniqueRun]
    bytes_moved: int
    points: int
    flops_per_point: float
    space_size: int
    default_config: Config | None = None
    default_result: Result | None = None
    default_note: str = ""
    best_from_default: bool = False
    measured: int = 0
    reused: int = 0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False
    parameters: list[str] = field(default_factory=list)  # the description's order

    def ordered(self, config: Mapping[str, int] | None) -> Config | None:
        """``config`` in the description's parameter order (the store sorts names)."""
        if config is None:
            return None
        first = [p for p in self.parameters if p in config]
        return {**{p: config[p] for p in first}, **config}

    # -- the searches ---------------------------------------------------------------
    @property
    def search_run(self) -> TechniqueRun | None:
        """The run whose best configuration is the fastest (None if nothing ran ok)."""
        ok = [r for r in self.runs if math.isfinite(r.best_s)]
        return min(ok, key=lambda r: r.best_s) if ok else None

    @property
    def search_result(self) -> Result | None:
        run = self.search_run
        return run.outcome.best_result if run is not None and run.outcome is not None else None

    @property
    def search_s(self) -> float:
        r = self.search_result
        return r.median_s if r is not None else math.inf

    @property
    def technique_choice(self) -> str | None:
        """The technique of the best configuration the searches found."""
        run = self.search_run
        return run.best_technique if run is not None else None

    @property
    def evaluations(self) -> int:
        """Configurations the searches used (measured now or served by the store)."""
        return sum(r.outcome.evaluations for r in self.runs if r.outcome is not None)

    @property
    def compile_s(self) -> float:
        """Compile seconds of every configuration the searches used (seed 001 Table 3)."""
        return sum(r.outcome.compile_s for r in self.runs if r.outcome is not None)

    @property
    def run_s(self) -> float:
        """Device seconds of every timed run of the configurations the searches used."""
        return sum(r.outcome.run_s for r in self.runs if r.outcome is not None)

    # -- the answer -------------------------------------------------------------------
    @property
    def best_result(self) -> Result | None:
        if self.best_from_default:
            return self.default_result
        return self.search_result

    @property
    def best_config(self) -> Config | None:
        r = self.best_result
        return self.ordered(r.config) if r is not None else None

    @property
    def best_s(self) -> float:
        r = self.best_result
        return r.median_s if r is not None else math.inf

    @property
    def default_s(self) -> float:
        r = self.default_result
        return r.median_s if r is not None and r.ok else math.inf

    @property
    def speedup(self) -> float | None:
        """Default time over best time; None when either is unknown."""
        if math.isfinite(self.best_s) and math.isfinite(self.default_s):
            return self.default_s / self.best_s
        return None

    def gbs(self, seconds: float | None = None) -> float | None:
        """Bandwidth in GB/s: every array read or written once, over the time."""
        t = self.best_s if seconds is None else seconds
        return self.bytes_moved / t / 1e9 if math.isfinite(t) and t > 0 else None

    def gflops(self, seconds: float | None = None) -> float | None:
        t = self.best_s if seconds is None else seconds
        if not self.flops_per_point or not math.isfinite(t) or t <= 0:
            return None
        return self.flops_per_point * self.points / t / 1e9

    def to_dict(self) -> dict[str, Any]:
        def finite(x: float | None) -> float | None:
            return x if x is not None and math.isfinite(x) else None

        return {
            "kernel": self.kernel,
            "kernel_label": self.kernel_label,
            "sizes": dict(self.sizes),
            "device": self.device,
            "device_identity": self.device_identity,
            "strategy": self.strategy,
            "technique": self.technique,
            "technique_choice": self.technique_choice,
            "space_size": self.space_size,
            "best_config": self.best_config,
            "best_s": finite(self.best_s),
            "best_from_default": self.best_from_default,
            "gbs": self.gbs(),
            "gflops": self.gflops(),
            "default_config": self.ordered(self.default_config),
            "default_s": finite(self.default_s),
            "default_result": self.default_result.to_dict() if self.default_result else None,
            "default_note": self.default_note,
            "speedup_over_default": self.speedup,
            "search_best_s": finite(self.search_s),
            "evaluations": self.evaluations,
            "measured": self.measured,
            "reused": self.reused,
            "compile_s": self.compile_s,
            "run_s": self.run_s,
            "wall_s": self.wall_s,
            "bytes_moved": self.bytes_moved,
            "points": self.points,
            "flops_per_point": self.flops_per_point,
            "notes": list(self.notes),
            "interrupted": self.interrupted,
            "runs": [r.to_dict() for r in self.runs],
        }


class TuningInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`tune_kernel`; ``report`` holds what was found until then."""

    def __init__(self, report: TuningReport) -> None:
        super().__init__("tuning interrupted")
        self.report = report


# -------------------------------------------------------------------------------------
# The session: one kernel, one device, shared by every search


def build_space(
    kernel: TunableKernel, device: DeviceLimits, store: ResultStore | None = None
) -> EnumeratedSpace:
    """The kernel's pruned space on ``device`` (solved once, then cached on disk),
    without the configurations the device refused before (read from ``store``)."""
    return solve_space(kernel, device, store=store).space


class _Lazy:
    """Creates the real evaluator on the first configuration the store cannot serve,
    so a run answered entirely from the store starts no worker and uploads no data."""

    def __init__(self, make: Callable[[], Evaluator]) -> None:
        self._make = make
        self._inner: Evaluator | None = None

    def _get(self) -> Evaluator:
        if self._inner is None:
            self._inner = self._make()
        return self._inner

    def evaluate(self, config: Mapping[str, int]) -> Result:
        return self._get().evaluate(config)

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        if configs:
            yield from self._get().evaluate_batch(configs)

    def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
            self._inner = None


class TuningSession:
    """A kernel on a device: its space and its evaluator, made once, shared by searches.

    The evaluator is created on first use, so errors in a spec or a technique name are
    reported before any worker process starts. ``close()`` stops the workers.
    """

    def __init__(
        self,
        kernel: TunableKernel,
        device: DeviceLimits,
        *,
        store: ResultStore | None = None,
        runs: int = 3,
        timeout_s: float = 60.0,
        compile_workers: int | None = None,
        evaluator_factory: Callable[[TunableKernel, DeviceLimits], Evaluator] | None = None,
        remeasure: Iterable[Status] = frozenset(),
    ) -> None:
        if runs < 1:
            raise InputError(f"runs must be at least 1, got {runs}", source="runs")
        if timeout_s <= 0:
            raise InputError(f"timeout must be positive, got {timeout_s:g}", source="timeout")
        self.kernel = kernel
        self.device = device
        self._own_store = store is None
        self.store: ResultStore = store if store is not None else SQLiteStore(":memory:")
        self.remeasure = frozenset(remeasure)
        self.runs = runs
        self.timeout_s = timeout_s
        self.compile_workers = compile_workers
        self._factory = evaluator_factory
        self._space: EnumeratedSpace | None = None
        self._evaluator: StoredEvaluator | None = None
        self.listener: Callable[[Result, bool], None] | None = None

    @property
    def space(self) -> EnumeratedSpace:
        if self._space is None:
            self._space = build_space(self.kernel, self.device, self.store)
        return self._space

    @property
    def evaluator(self) -> StoredEvaluator:
        if self._evaluator is None:
            self._evaluator = StoredEvaluator(
                _Lazy(self._make_inner),
                self.store,
                device=self.device.identity,
                kernel_id=self.kernel.identity(),
                kernel_name=self.kernel.name,
                problem=self.kernel.sizes,
                on_result=self._dispatch,
                remeasure=self.remeasure,
                timeout_s=self.timeout_s,
            )
        return self._evaluator

    def _make_inner(self) -> Evaluator:
        if self._factory is not None:
            return self._factory(self.kernel, self.device)
        from gtune.measure import OpenCLEvaluator

        return OpenCLEvaluator(
            self.kernel,
            self.device,
            runs=self.runs,
            timeout_s=self.timeout_s,
            compile_workers=self.compile_workers,
        )

    def _dispatch(self, result: Result, fresh: bool) -> None:
        if self.listener is not None:
            self.listener(result, fresh)

    def counts(self) -> tuple[int, int]:
        """(measured now, served by the store) so far; zero before the evaluator exists."""
        if self._evaluator is None:
            return 0, 0
        return self._evaluator.measured, self._evaluator.reused

    def close(self) -> None:
        if self._evaluator is not None:
            self._evaluator.close()
            self._evaluator = None
        if self._own_store:
            self.store.close()

    def __enter__(self) -> TuningSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -------------------------------------------------------------------------------------
# Tuning


@dataclass
class _Plan:
    technique: str | None
    space: EnumeratedSpace
    searcher: Searcher | None
    note: str = ""


class _Observed:
    """Evaluator wrapper that tells the display when a batch starts (for its ETA)."""

    def __init__(self, inner: Evaluator, progress: TuningProgress, step: Callable[[], str]) -> None:
        self.inner = inner
        self.progress = progress
        self.step = step

    def evaluate(self, config: Mapping[str, int]) -> Result:
        self.progress.batch_started(self.step(), 1)
        return self.inner.evaluate(config)

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Any:
        self.progress.batch_started(self.step(), len(configs))
        return self.inner.evaluate_batch(configs)

    def close(self) -> None:
        return None


def techniques_to_run(kernel: TunableKernel, technique: str) -> list[str | None]:
    """The techniques a request means: every one for auto/all, none (one search over
    the whole space) for ``whole``, else the one named."""
    names = list(kernel.techniques)
    if technique == WHOLE:
        return [None]
    if technique in (AUTO, ALL):
        return list(names) if names else [None]
    if not names:
        raise InputError(
            f"technique {technique!r} asked for, but the kernel defines no data-loading "
            "techniques; use --technique auto",
            source=kernel.label,
        )
    if technique not in kernel.techniques:
        raise InputError(
            f"unknown technique {technique!r}; the kernel defines: {', '.join(names)} "
            "(or auto, all, whole)",
            source="--technique",
        )
    return [technique]


def technique_of(kernel: TunableKernel, config: Mapping[str, int] | None) -> str | None:
    """The first technique of the description whose constraints ``config`` meets."""
    if config is None:
        return None
    env = kernel.env(config)
    for name, rules in kernel.techniques.items():
        if all(bool(rule.evaluate(env)) for rule in rules):
            return name
    return None


def _strategy(
    strategy: str, spec_path: str | Path | None, options: Mapping[str, Any] | None
) -> tuple[Strategy, dict[str, Any], str]:
    """The strategy plugin, its checked options and the name shown in reports."""
    opts = dict(options or {})
    if spec_path is not None:
        if strategy not in ("hybrid", "grouped"):
            raise InputError(
                f"a spec file runs with the grouped strategy, not {strategy!r}",
                source=str(spec_path),
            )
        spec: HeuristicSpec = load_spec(spec_path)
        plugin = get_strategy("grouped")
        opts["spec"] = spec
        return plugin, plugin.configure(opts), spec.name
    plugin = get_strategy(strategy)
    return plugin, plugin.configure(opts), strategy


def _share(
    budget: Budget | None, runs_left: int, spent_evals: int, spent_s: float
) -> Budget | None:
    """This run's part of a budget shared by the remaining technique runs."""
    if budget is None:
        return None
    evaluations = seconds = wall = None
    if budget.evaluations is not None:
        left = max(0, budget.evaluations - spent_evals)
        evaluations = max(1, left // runs_left) if left else 0
    if budget.seconds is not None:
        seconds = max(0.0, budget.seconds - spent_s) / runs_left
    if budget.wall_seconds is not None:
        wall = budget.wall_seconds / runs_left  # refreshed by the caller as time passes
    return Budget(evaluations=evaluations, seconds=seconds, wall_seconds=wall)


def tune_kernel(
    kernel: TunableKernel,
    device: DeviceLimits,
    *,
    strategy: str = "hybrid",
    spec_path: str | Path | None = None,
    technique: str = AUTO,
    budget: Budget | None = None,
    store: ResultStore | None = None,
    runs: int = 3,
    timeout_s: float = 60.0,
    compile_workers: int | None = None,
    progress: TuningProgress | None = None,
    options: Mapping[str, Any] | None = None,
    session: TuningSession | None = None,
    measure_default: bool = True,
    remeasure: Iterable[Status] = frozenset(),
) -> TuningReport:
    """Tune ``kernel`` on ``device`` with a strategy and return what was found.

    ``technique``: ``auto`` (no predictor yet: every technique, keep the best), ``all``
    (the same, reported as such), or one technique name. ``budget`` is shared by the
    technique runs: each gets an equal part of what the earlier ones left. Pass a
    ``session`` to reuse a kernel's space and evaluator across calls (it is then left
    open); otherwise one is made from ``store``, ``runs``, ``timeout_s`` and
    ``compile_workers`` and closed at the end. Ctrl-C raises :class:`TuningInterrupted`
    carrying the partial report; every result measured is already in the store.
    """
    started = time.monotonic()
    show: TuningProgress = progress if progress is not None else _Silent()
    own = session is None
    sess = session or TuningSession(
        kernel,
        device,
        store=store,
        runs=runs,
        timeout_s=timeout_s,
        compile_workers=compile_workers,
        remeasure=remeasure,
    )
    try:
        return _tune(
            sess, strategy, spec_path, technique, budget, options, show, measure_default, started
        )
    finally:
        if own:
            sess.close()


def _tune(
    sess: TuningSession,
    strategy: str,
    spec_path: str | Path | None,
    technique: str,
    budget: Budget | None,
    options: Mapping[str, Any] | None,
    show: TuningProgress,
    measure_default: bool,
    started: float,
) -> TuningReport:
    kernel, device = sess.kernel, sess.device
    plugin, opts, label = _strategy(strategy, spec_path, options)
    wanted = techniques_to_run(kernel, technique)
    space = sess.space
    problem = SearchProblem.from_kernel(kernel)

    # Everything that can be wrong with the request is found before anything runs.
    plans: list[_Plan] = []
    for name in wanted:
        sub = space if name is None else technique_space(space, kernel, name)
        if sub.size() == 0:
            plans.append(_Plan(name, sub, None, "no valid configuration on this device"))
            continue
        plans.append(_Plan(name, sub, plugin.searcher(sub, problem, opts)))
    if all(p.searcher is None for p in plans):
        raise UnsatisfiableSpace(
            f"technique {wanted[0]} has no valid configuration on {device.name}",
            source=kernel.label,
        )

    report = TuningReport(
        kernel=kernel.name,
        kernel_label=kernel.label,
        sizes=dict(kernel.sizes),
        device=device.name,
        device_identity=device.identity,
        strategy=label,
        technique=technique if kernel.techniques else "",
        runs=[],
        bytes_moved=kernel.bytes_moved(),
        points=kernel.points(),
        flops_per_point=kernel.flops_per_point,
        space_size=space.size(),
        parameters=list(kernel.parameter_names),
    )
    if technique == AUTO and kernel.techniques and len(kernel.techniques) > 1:
        report.notes.append(NO_PREDICTOR_NOTE)
    if budget is None:
        budget = plugin.default_budget(opts)

    measured0, reused0 = sess.counts()
    trace: list[TraceEntry] = []
    current: dict[str, Any] = {"step": "", "best": math.inf}

    def listen(result: Result, fresh: bool) -> None:
        if result.ok and result.median_s < current["best"]:
            current["best"] = result.median_s
        show.result(result, fresh, current["best"])

    sess.listener = listen
    run: TechniqueRun | None = None
    try:
        evaluator = sess.evaluator
        if measure_default:
            _measure_default(sess, report, show)
            current["best"] = math.inf  # best-so-far shows the searches' own progress
        spent_evals, spent_s = 0, 0.0
        to_go = sum(1 for p in plans if p.searcher is not None)
        for plan in plans:
            if plan.searcher is None:
                report.runs.append(TechniqueRun(plan.technique, 0, None, note=plan.note))
                report.notes.append(f"technique {plan.technique}: {plan.note}; skipped")
                continue
            part = _share(budget, to_go, spent_evals, spent_s)
            if part is not None and budget is not None and budget.wall_seconds is not None:
                left = budget.wall_seconds - (time.monotonic() - started)
                part = Budget(part.evaluations, part.seconds, max(0.0, left) / to_go)
            to_go -= 1
            total = plan.searcher.expected_evaluations()
            if part is not None and part.evaluations is not None:
                total = part.evaluations if total is None else min(total, part.evaluations)
            run_label = label if plan.technique is None else f"{label} [{plan.technique}]"
            show.run_started(run_label, total)
            trace.clear()
            m0, r0 = sess.counts()
            run = TechniqueRun(plan.technique, plan.space.size(), None)

            def step_name() -> str:
                return str(current["step"])

            def on_entry(entry: TraceEntry, best: Result | None) -> None:
                trace.append(entry)

            observed = _Observed(evaluator, show, step_name)
            outcome = drive(
                _Labelled(plan.searcher, current),
                observed,
                strategy=label,
                budget=part,
                space=plan.space,
                on_result=on_entry,
            )
            m1, r1 = sess.counts()
            run.outcome, run.measured, run.reused = outcome, m1 - m0, r1 - r0
            run.best_technique = plan.technique or technique_of(kernel, outcome.best_config)
            report.runs.append(run)
            run = None
            spent_evals += outcome.evaluations
            spent_s += outcome.compile_s + outcome.run_s
            for note in outcome.notes:
                where = f"technique {plan.technique}: " if plan.technique else ""
                report.notes.append(where + note)
            if outcome.stop_reason != "search finished":
                where = f"technique {plan.technique}: " if plan.technique else ""
                report.notes.append(where + outcome.stop_reason)
    except KeyboardInterrupt:
        if run is not None:
            run.outcome = _partial(label, trace, time.monotonic() - started)
            m1, r1 = sess.counts()
            run.measured, run.reused = m1 - m0, r1 - r0
            run.note = "interrupted"
            run.best_technique = run.technique or technique_of(kernel, run.outcome.best_config)
            report.runs.append(run)
        report.interrupted = True
        _finish(report, sess, measured0, reused0, started)
        raise TuningInterrupted(report) from None
    finally:
        sess.listener = None
    _finish(report, sess, measured0, reused0, started)
    return report


class _Labelled:
    """Searcher wrapper that records the step of each batch, for the display."""

    def __init__(self, inner: Searcher, current: dict[str, Any]) -> None:
        self.inner = inner
        self.current = current

    def ask(self) -> Any:
        batch = self.inner.ask()
        if batch is not None:
            self.current["step"] = batch.step
        return batch

    def tell(self, results: Sequence[Result]) -> None:
        self.inner.tell(results)

    @property
    def notes(self) -> list[str]:
        return self.inner.notes

    def expected_evaluations(self) -> int | None:
        return self.inner.expected_evaluations()


def _measure_default(sess: TuningSession, report: TuningReport, show: TuningProgress) -> None:
    """Measure the description's default configuration: the yardstick for speedups."""
    kernel = sess.kernel
    default = kernel.default_config()
    if default is None:
        report.default_note = "the description gives no default configuration"
        return
    report.default_config = dict(default)
    violation = sess.space.is_valid(default)
    if violation is not None:
        report.default_note = f"the default configuration is not valid on this device: {violation}"
        return
    show.run_started("default configuration", 1)
    show.batch_started("default", 1)
    result = sess.evaluator.evaluate(default)
    report.default_result = result
    if not result.ok:
        report.default_note = f"the default configuration did not run: {result.status.value}" + (
            f" ({result.message.splitlines()[0][:200]})" if result.message.strip() else ""
        )


def _partial(label: str, trace: list[TraceEntry], wall_s: float) -> TuningOutcome:
    best: Result | None = None
    for e in trace:
        if e.result.ok and (best is None or e.result.median_s < best.median_s):
            best = e.result
    return TuningOutcome(
        strategy=label,
        best_config=dict(best.config) if best else None,
        best_result=best,
        trace=list(trace),
        steps=[],
        notes=[],
        stop_reason="interrupted",
        wall_s=wall_s,
    )


def _finish(
    report: TuningReport, sess: TuningSession, measured0: int, reused0: int, started: float
) -> None:
    m, r = sess.counts()
    report.measured, report.reused = m - measured0, r - reused0
    report.wall_s = time.monotonic() - started
    d = report.default_result
    if d is not None and d.ok and d.median_s < report.search_s:
        report.best_from_default = True
        report.notes.append(
            "the default configuration was faster than every configuration the search "
            "measured; it is reported as the best"
        )
    if report.search_result is None and not report.interrupted:
        failed: dict[str, int] = {}
        for run in report.runs:
            if run.outcome is not None:
                for e in run.outcome.trace:
                    failed[e.result.status.value] = failed.get(e.result.status.value, 0) + 1
        what = ", ".join(f"{n} {s}" for s, n in sorted(failed.items())) or "nothing measured"
        report.notes.append(f"no configuration ran correctly ({what})")


__all__ = [
    "ALL",
    "AUTO",
    "NO_PREDICTOR_NOTE",
    "WHOLE",
    "TechniqueRun",
    "TuningInterrupted",
    "TuningProgress",
    "TuningReport",
    "TuningSession",
    "build_space",
    "technique_of",
    "techniques_to_run",
    "tune_kernel",
]
