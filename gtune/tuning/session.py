"""A kernel on a device: what is expensive to make, made once and shared.

A :class:`TuningSession` holds a kernel's solved space and its evaluator (worker
processes, problem data on the device), so several strategies and techniques tuned one
after another share them, and a result measured once is served from the store to every
later search. The evaluator starts on the first configuration the store cannot serve.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.measure.evaluator import Evaluator, StoredEvaluator
from gtune.measure.result import Result, Status
from gtune.space import EnumeratedSpace, solve_space
from gtune.store import ResultStore, open_store

EvaluatorFactory = Callable[[TunableKernel, DeviceLimits], Evaluator]


def build_space(
    kernel: TunableKernel, device: DeviceLimits, store: ResultStore | None = None
) -> EnumeratedSpace:
    """The kernel's pruned space on ``device`` (solved once, then cached on disk)."""
    return solve_space(kernel, device, store=store).space


class _Lazy:
    """Creates the real evaluator on the first configuration the store cannot serve,
    so a run answered entirely from the store starts no worker and uploads no data."""

    def __init__(self, make: Callable[[], Evaluator]) -> None:
        self._make = make
        self._inner: Evaluator | None = None
        self._made_s = 0.0  # seconds spent making evaluators
        self._closed_s = 0.0  # compile workers started by evaluators closed since

    def _get(self) -> Evaluator:
        if self._inner is None:
            t0 = time.monotonic()
            self._inner = self._make()
            self._made_s += time.monotonic() - t0
        return self._inner

    @property
    def startup_s(self) -> float:
        """Seconds spent starting evaluators, their compile workers (started on the first
        batch that builds ahead) included."""
        current = getattr(self._inner, "compilers_start_s", 0.0) if self._inner else 0.0
        return self._made_s + self._closed_s + float(current)

    def evaluate(self, config: Mapping[str, int]) -> Result:
        return self._get().evaluate(config)

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        if configs:
            yield from self._get().evaluate_batch(configs)

    def close(self) -> None:
        if self._inner is not None:
            self._closed_s += float(getattr(self._inner, "compilers_start_s", 0.0))
            self._inner.close()
            self._inner = None


class TuningSession:
    """A kernel on a device: its space and its evaluator, made once, shared by searches.

    ``evaluator`` puts the store in front of the measurements; ``raw`` measures without
    the store (the confirmation round re-measures on purpose). ``listener`` is told
    every result of ``evaluator`` with a flag saying whether it was measured now.
    ``close()`` stops the workers (and closes the store if the session opened it).
    """

    def __init__(
        self,
        kernel: TunableKernel,
        device: DeviceLimits,
        *,
        store: ResultStore | None = None,
        runs: int | None = None,
        timeout_s: float = 60.0,
        compile_workers: int | None = None,
        evaluator_factory: EvaluatorFactory | None = None,
        space: EnumeratedSpace | None = None,
        timing: Any = None,
        remeasure: Iterable[Status] = frozenset(),
    ) -> None:
        if runs is not None and runs < 1:
            raise InputError(f"runs must be at least 1, got {runs}", source="runs")
        if timeout_s <= 0:
            raise InputError(f"timeout must be positive, got {timeout_s:g}", source="timeout")
        self.kernel = kernel
        self.device = device
        self._own_store = store is None
        self.store: ResultStore = store if store is not None else open_store("sqlite://")
        self.remeasure = frozenset(remeasure)
        self.runs = runs
        self.timeout_s = timeout_s
        self.compile_workers = compile_workers
        self.timing = timing
        self._factory = evaluator_factory
        self._space: EnumeratedSpace | None = space
        self._raw = _Lazy(self._make_inner)
        self._evaluator: StoredEvaluator | None = None
        self.listener: Callable[[Result, bool], None] | None = None
        self.space_s = 0.0  # seconds spent solving the space (0 when it was given)

    @property
    def space(self) -> EnumeratedSpace:
        if self._space is None:
            t0 = time.monotonic()
            self._space = build_space(self.kernel, self.device, self.store)
            self.space_s = time.monotonic() - t0
        return self._space

    @property
    def startup_s(self) -> float:
        """Seconds spent so far starting the evaluator (workers, data on the device)."""
        return self._raw.startup_s

    @property
    def store_s(self) -> float:
        """Seconds spent so far reading and writing the store (0 before the evaluator)."""
        return self._evaluator.store_s if self._evaluator is not None else 0.0

    @property
    def raw(self) -> Evaluator:
        """The measurements themselves, with no store in front (started on first use)."""
        return self._raw

    @property
    def evaluator(self) -> StoredEvaluator:
        if self._evaluator is None:
            self._evaluator = StoredEvaluator(
                self._raw,
                self.store,
                device=self.device.identity,
                kernel_id=self.kernel.identity(),
                kernel_name=self.kernel.store_name,
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

        extra: dict[str, Any] = {}
        if self.timing is not None and "timing" in inspect.signature(OpenCLEvaluator).parameters:
            extra["timing"] = self.timing
        evaluator: Evaluator = OpenCLEvaluator(
            self.kernel,
            self.device,
            runs=self.runs,
            timeout_s=self.timeout_s,
            compile_workers=self.compile_workers,
            **extra,
        )
        return evaluator

    def _dispatch(self, result: Result, fresh: bool) -> None:
        if self.listener is not None:
            self.listener(result, fresh)

    def counts(self) -> tuple[int, int]:
        """(measured now, served by the store) so far; zero before the evaluator exists."""
        if self._evaluator is None:
            return 0, 0
        return self._evaluator.measured, self._evaluator.reused

    def close(self) -> None:
        self._raw.close()
        self._evaluator = None
        if self._own_store:
            self.store.close()

    def __enter__(self) -> TuningSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["EvaluatorFactory", "TuningSession", "build_space"]
