"""The ask/tell loop every strategy runs on, and what a search hands back.

A :class:`Searcher` proposes batches of configurations and is told their results; it
never measures anything itself. :func:`drive` evaluates the batches through an
:class:`~gtune.measure.evaluator.Evaluator` (whole batches, so a real evaluator can
compile in parallel), serves repeats from the search's own history, enforces the
budget and records the trace. Something else (a CPU/GPU splitter, a pool of devices)
can drive a searcher the same way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gtune.budget import Budget
from gtune.kernel import Config, TunableKernel, canonical_config, domain_values
from gtune.measure.evaluator import Evaluator
from gtune.measure.result import Result
from gtune.space.base import Space


@dataclass(frozen=True)
class SearchProblem:
    """What a strategy may know about the problem besides the space: the problem
    sizes (for spec expressions), unpruned domains (for sampling the unpruned space)
    and the kernel's default configuration (a neutral starting point)."""

    sizes: Mapping[str, int]
    domains: Mapping[str, Sequence[int]] = field(default_factory=dict)
    default: Mapping[str, int] | None = None

    @classmethod
    def from_kernel(cls, kernel: TunableKernel) -> SearchProblem:
        return cls(
            sizes=dict(kernel.sizes),
            domains=domain_values(kernel),
            default=kernel.default_config(),
        )


@dataclass(frozen=True)
class Batch:
    """Configurations to evaluate together, labelled with the step they belong to.

    ``known`` holds results the searcher settled without measuring (a configuration
    outside the space sampled on purpose, recorded as pruned); ``note`` explains an
    empty batch.
    """

    configs: Sequence[Config]
    step: str
    round: int = 0
    known: Mapping[int, Result] = field(default_factory=dict)
    note: str = ""


class Searcher(Protocol):
    """Proposes batches; is told every result of the last batch, in order."""

    def ask(self) -> Batch | None:
        """The next batch, or None when the search is over."""
        ...

    def tell(self, results: Sequence[Result]) -> None:
        """Results of the last batch (fewer than asked if the budget ran out)."""
        ...

    @property
    def notes(self) -> list[str]:
        """What the searcher wants the user to know (skipped steps, early stop)."""
        ...

    def expected_evaluations(self) -> int | None:
        """How many configurations it will propose in all, if known in advance."""
        ...


@dataclass(frozen=True)
class TraceEntry:
    """One configuration measured (or recorded as pruned) by the search."""

    index: int
    config: Config
    result: Result
    step: str
    round: int
    elapsed_s: float = 0.0  # seconds from the start of the search until it was recorded

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "step": self.step,
            "round": self.round,
            "elapsed_s": self.elapsed_s,
            **self.result.to_dict(),
        }


@dataclass(frozen=True)
class StepSummary:
    """One batch: how many points it had, how many were new, where the best stood."""

    step: str
    round: int
    candidates: int
    evaluated: int
    reused: int
    best_config: Config | None
    best_s: float
    improved: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "round": self.round,
            "candidates": self.candidates,
            "evaluated": self.evaluated,
            "reused": self.reused,
            "best_config": self.best_config,
            "best_s": self.best_s if math.isfinite(self.best_s) else None,
            "improved": self.improved,
            "note": self.note,
        }


@dataclass
class TuningOutcome:
    """Everything a search did: the best found, what it cost, the trace in order."""

    strategy: str
    best_config: Config | None
    best_result: Result | None
    trace: list[TraceEntry]
    steps: list[StepSummary]
    notes: list[str]
    stop_reason: str
    wall_s: float

    @property
    def evaluations(self) -> int:
        """Distinct configurations measured (seed 001's "configs compiled")."""
        return sum(1 for e in self.trace if e.result.status.value != "pruned")

    @property
    def pruned(self) -> int:
        """Configurations recorded as illegal without running them."""
        return sum(1 for e in self.trace if e.result.status.value == "pruned")

    @property
    def failed(self) -> int:
        return sum(1 for e in self.trace if not e.result.ok)

    @property
    def compile_s(self) -> float:
        return sum(e.result.compile_s for e in self.trace)

    @property
    def run_s(self) -> float:
        return sum(e.result.run_s for e in self.trace)

    @property
    def best_s(self) -> float:
        return self.best_result.median_s if self.best_result is not None else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "best_config": self.best_config,
            "best_s": self.best_s if math.isfinite(self.best_s) else None,
            "best_result": self.best_result.to_dict() if self.best_result else None,
            "evaluations": self.evaluations,
            "pruned": self.pruned,
            "failed": self.failed,
            "compile_s": self.compile_s,
            "run_s": self.run_s,
            "wall_s": self.wall_s,
            "stop_reason": self.stop_reason,
            "notes": list(self.notes),
            "steps": [s.to_dict() for s in self.steps],
            "trace": [e.to_dict() for e in self.trace],
        }


ProgressHook = Callable[[TraceEntry, Result | None], None]

SEED_STEP = "default"
"""The step name of the seed batch: the kernel's default configuration, measured first."""


class Seeded:
    """A searcher that first measures one configuration (the kernel's default, so no
    search reports a best slower than the untouched kernel), then runs ``inner``.

    A searcher with a ``start_from(config, result)`` method is told the seed's result
    before its first batch: the grouped search starts from the default when it ran.
    """

    def __init__(self, inner: Searcher, config: Mapping[str, int]) -> None:
        self.inner = inner
        self.config: Config = dict(config)
        self._state = "fresh"  # -> "seeding" -> "inner"

    @property
    def notes(self) -> list[str]:
        return self.inner.notes

    def expected_evaluations(self) -> int | None:
        n = self.inner.expected_evaluations()
        return None if n is None else n + 1

    def first_step_size(self) -> int | None:
        """The inner searcher's first group, where it knows it (see :class:`GroupedSearch`)."""
        size = getattr(self.inner, "first_step_size", None)
        return size() if callable(size) else None

    def ask(self) -> Batch | None:
        if self._state == "fresh":
            self._state = "seeding"
            return Batch([dict(self.config)], SEED_STEP, 0)
        return self.inner.ask()

    def tell(self, results: Sequence[Result]) -> None:
        if self._state == "seeding":
            self._state = "inner"
            start_from = getattr(self.inner, "start_from", None)
            if results and callable(start_from):
                start_from(self.config, results[0])
            return
        self.inner.tell(results)


def nearest_config(space: Space, config: Mapping[str, int]) -> Config | None:
    """The valid configuration of ``space`` that differs from ``config`` in the fewest
    parameters (``config`` itself when valid); None for an empty space."""
    if space.is_valid(config) is None:
        return {p: int(config[p]) for p in space.parameters}
    import numpy as np

    params = list(space.parameters)
    rows = getattr(space, "array", None)  # an enumerated space's valid rows
    if not isinstance(rows, np.ndarray):
        rows = np.array([[c[p] for p in params] for c in space.enumerate()], dtype=np.int64)
    if rows.size == 0:
        return None
    target = np.array([config.get(p, -1) for p in params])
    i = int(np.argmin((rows != target).sum(axis=1)))
    return {p: int(v) for p, v in zip(params, rows[i], strict=True)}


class _Spent:
    """Budget accounting for one search."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.evaluations = 0
        self.seconds = 0.0
        self.started = time.monotonic()

    def add(self, result: Result) -> None:
        self.evaluations += 1
        self.seconds += result.compile_s + result.run_s

    def remaining_evaluations(self) -> int | None:
        if self.budget.evaluations is None:
            return None
        return max(0, self.budget.evaluations - self.evaluations)

    def exhausted(self) -> str:
        """Why the budget is used up, or "" if it is not."""
        b = self.budget
        if b.evaluations is not None and self.evaluations >= b.evaluations:
            return f"budget of {b.evaluations} evaluations used"
        if b.seconds is not None and self.seconds >= b.seconds:
            return f"budget of {b.seconds:g} s of compile and run time used"
        if b.wall_seconds is not None and time.monotonic() - self.started >= b.wall_seconds:
            return f"budget of {b.wall_seconds:g} s of wall time used"
        return ""


def drive(
    searcher: Searcher,
    evaluator: Evaluator,
    *,
    strategy: str,
    budget: Budget | None = None,
    space: Space | None = None,
    on_result: ProgressHook | None = None,
    stop: Callable[[], str] | None = None,
    room: Callable[[], int | None] | None = None,
    on_batch: Callable[[Batch, int], None] | None = None,
) -> TuningOutcome:
    """Run ``searcher`` to completion (or until the budget is spent).

    Each distinct configuration is measured at most once per search; a repeat is
    served from the history and costs nothing. Configurations the driver refuses at
    run time are fed back to ``space`` so later steps do not propose them again.
    ``stop()`` (checked before each batch and after each configuration) returns why the
    search must stop now, or ""; ``room()`` says how many more configurations fit in
    the time left (None: no limit), and batches are cut to it. ``on_batch`` is told
    each batch and how many of its configurations go to the evaluator.
    """
    run = _Run(_Spent(budget or Budget()), evaluator, space, on_result, stop)
    stop_reason = "search finished"
    while True:
        reason = run.why_stop()
        if reason:
            stop_reason = reason
            break
        batch = searcher.ask()
        if batch is None:
            break
        before = run.best
        results, todo, reused = run.sort(batch)
        evaluated, cut = run.measure_within(batch, todo, results, room, on_batch)
        # A configuration repeated inside the batch gets the result measured above.
        for i, config in enumerate(batch.configs):
            if results[i] is None:
                results[i] = run.history.get(canonical_config(config))
        told = _prefix(results)
        run.steps.append(run.summary(batch, evaluated, reused, before))
        searcher.tell(told)
        if len(told) < len(batch.configs):
            stop_reason = run.why_stop() or cut or "stopped"
            break
    best = run.best
    return TuningOutcome(
        strategy=strategy,
        best_config=dict(best.config) if best else None,
        best_result=best,
        trace=run.trace,
        steps=run.steps,
        notes=list(searcher.notes),
        stop_reason=stop_reason,
        wall_s=time.monotonic() - run.started,
    )


class _Run:
    """What :func:`drive` keeps over a search: the history, the trace, the best so far,
    the budget spent; and its steps for each batch."""

    def __init__(
        self,
        spent: _Spent,
        evaluator: Evaluator,
        space: Space | None,
        on_result: ProgressHook | None,
        stop: Callable[[], str] | None,
    ) -> None:
        self.spent = spent
        self.evaluator = evaluator
        self.space = space
        self.on_result = on_result
        self.stop = stop
        self.started = time.monotonic()
        self.history: dict[str, Result] = {}
        self.trace: list[TraceEntry] = []
        self.steps: list[StepSummary] = []
        self.best: Result | None = None

    def record(self, config: Config, result: Result, batch: Batch) -> None:
        entry = TraceEntry(
            len(self.trace),
            dict(config),
            result,
            batch.step,
            batch.round,
            time.monotonic() - self.started,
        )
        self.trace.append(entry)
        self.history[canonical_config(config)] = result
        if result.ok and (self.best is None or result.objective < self.best.objective):
            self.best = result
        if result.status.is_refusal and self.space is not None:
            self.space.exclude(config, f"{result.status.value}: {result.message}".strip(": "))
        if self.on_result is not None:
            self.on_result(entry, self.best)

    def why_stop(self) -> str:
        return self.spent.exhausted() or (self.stop() if self.stop is not None else "")

    def sort(self, batch: Batch) -> tuple[list[Result | None], list[int], int]:
        """The batch's results known already (from the history or the searcher), the
        indices left to measure (each configuration once), and how many were reused."""
        results: list[Result | None] = [None] * len(batch.configs)
        todo: list[int] = []
        reused = 0
        queued: set[str] = set()
        for i, config in enumerate(batch.configs):
            key = canonical_config(config)
            if key in self.history:
                results[i] = self.history[key]
                reused += 1
            elif i in batch.known:
                results[i] = batch.known[i]
                self.record(config, batch.known[i], batch)
            elif key not in queued:
                todo.append(i)
                queued.add(key)
        return results, todo, reused

    def limit(
        self, batch: Batch, todo: list[int], room: Callable[[], int | None] | None
    ) -> tuple[list[int], str]:
        """``todo`` cut to the evaluations left and the time left, and why it was cut
        by the time ("" if not)."""
        left = self.spent.remaining_evaluations()
        if left is not None and len(todo) > left:
            todo = todo[:left]
        fits = room() if room is not None and todo else None
        cut = ""
        if fits is not None:
            keep = _within_room(self.evaluator, [batch.configs[i] for i in todo], fits)
            if keep < len(todo):
                cut = (
                    "the time left has no room for another configuration"
                    if keep == 0
                    else f"the time left had room for {keep} of the step's {len(todo)} "
                    "configurations"
                )
                todo = todo[:keep]
        return todo, cut

    def measure_within(
        self,
        batch: Batch,
        todo: list[int],
        results: list[Result | None],
        room: Callable[[], int | None] | None,
        on_batch: Callable[[Batch, int], None] | None,
    ) -> tuple[int, str]:
        """Measure ``todo`` in parts that fit the time left: a part cut by ``room()`` is
        measured, then the room is asked again (its pace now better known: the first
        configurations of a search carry its start-up) and the rest goes on while it
        fits. Returns how many were measured and why the batch was cut ("" if not)."""
        evaluated, cut = 0, ""
        while todo:
            part, cut = self.limit(batch, todo, room)
            if not part:
                break
            if on_batch is not None:
                on_batch(batch, len(part))
            done = self.measure(batch, part, results)
            evaluated += done
            if not cut or done < len(part) or self.why_stop():
                break
            todo = todo[len(part) :]
        return evaluated, cut

    def measure(self, batch: Batch, todo: list[int], results: list[Result | None]) -> int:
        """Measure ``todo``, recording each result as it comes, until told to stop;
        returns how many were measured."""
        evaluated = 0
        measured = _evaluate(self.evaluator, [batch.configs[i] for i in todo])
        try:
            for i, result in zip(todo, measured, strict=False):
                self.spent.add(result)
                self.record(batch.configs[i], result, batch)
                results[i] = result
                evaluated += 1
                if self.why_stop():
                    break
        finally:
            measured.close()
        return evaluated

    def summary(
        self, batch: Batch, evaluated: int, reused: int, before: Result | None
    ) -> StepSummary:
        best = self.best
        return StepSummary(
            step=batch.step,
            round=batch.round,
            candidates=len(batch.configs),
            evaluated=evaluated,
            reused=reused,
            best_config=dict(best.config) if best else None,
            best_s=best.objective if best else math.inf,
            improved=best is not before,
            note=batch.note,
        )


def _within_room(evaluator: Evaluator, configs: Sequence[Config], fits: int) -> int:
    """How many of ``configs`` (a prefix) to hand out when ``fits`` more measurements fit
    in the time left: those the evaluator serves from a result store (its ``known``) cost
    nothing and do not count, so a resumed search replays what it measured before."""
    known = getattr(evaluator, "known", None)
    if not callable(known):
        return min(len(configs), fits)
    measured = 0
    for n, config in enumerate(configs):
        if known(config) is None:
            if measured >= fits:
                return n
            measured += 1
    return len(configs)


def _evaluate(evaluator: Evaluator, configs: Sequence[Config]) -> Generator[Result, None, None]:
    """The evaluator's batch, closed early (pending compilations dropped) if we stop."""
    if not configs:
        return
    results = evaluator.evaluate_batch(configs)
    try:
        yield from results
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


def _prefix(results: Sequence[Result | None]) -> list[Result]:
    out: list[Result] = []
    for r in results:
        if r is None:
            break
        out.append(r)
    return out
