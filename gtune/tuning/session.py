"""A kernel on a device: what is expensive to make, made once and shared.

A :class:`TuningSession` holds a kernel's solved space and its evaluator (worker
processes, problem data on the device), so several strategies and techniques tuned one
after another share them, and a result measured once is served from the store to every
later search. The evaluator starts on the first configuration the store cannot serve,
or, for a fresh tuning, while the space is solved (:meth:`TuningSession.start_early`).
"""

from __future__ import annotations

import contextvars
import inspect
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel, canonical_config
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
    so a run answered entirely from the store starts no worker and uploads no data.

    :meth:`start` makes it ahead, in a thread of its own, while the caller does other
    work (solves the space); the first use then waits for it. Start-up time counts
    only what a use waited."""

    def __init__(self, make: Callable[[], Evaluator]) -> None:
        self._make = make
        self._inner: Evaluator | None = None
        self._made_s = 0.0  # seconds spent waiting for evaluators to be made
        self._closed_s = 0.0  # compile workers started by evaluators closed since
        self._thread: threading.Thread | None = None
        self._made: list[Evaluator] = []  # what the thread made
        self._failed: list[BaseException] = []  # or why it could not

    @property
    def started(self) -> bool:
        return self._inner is not None or self._thread is not None

    def start(self) -> None:
        """Make the evaluator now, in a thread (workers started off the main thread
        watch their parent themselves: gtune.processes.spawn_worker)."""
        if self.started:
            return

        def make() -> None:
            try:
                self._made.append(self._make())
            except BaseException as exc:  # handed to the first use, raised there
                self._failed.append(exc)

        # in this context: what it holds (the worker pools of gtune.measure.pool) is
        # what the evaluator made here would have seen
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(make,), name="gtune-evaluator-start", daemon=True
        )
        self._thread.start()

    def _join(self) -> Evaluator | None:
        """The evaluator the thread made (None if none was started); its error raised.
        A Ctrl-C while waiting leaves the thread to :meth:`close`."""
        if self._thread is None:
            return None
        self._thread.join()
        self._thread = None
        if self._failed:
            raise self._failed.pop()
        return self._made.pop()

    def _get(self) -> Evaluator:
        if self._inner is None:
            t0 = time.monotonic()
            early = self._join()
            self._inner = early if early is not None else self._make()
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
        if self._thread is not None:  # made ahead and never used: waited for, closed
            self._thread.join()
            self._thread = None
            self._failed.clear()  # its error belonged to a use that never came
            self._inner = self._made.pop() if self._made else None
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

    def start_early(self) -> bool:
        """Start the evaluator (workers, problem data, reference) in a thread while the
        caller solves the space, when the space is still to be solved and the run will
        measure: the store holds no result of the kernel's default configuration on
        this device, which every fresh tuning measures first (a run the store answers
        keeps starting nothing). Whether it started."""
        if self._space is not None or self._raw.started:
            return False
        default = self.kernel.default_config()
        if default is not None:
            key = canonical_config(default)
            if self.store.latest(self.device.identity, self.kernel.identity(), [key]):
                return False
        self._raw.start()
        return True

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
