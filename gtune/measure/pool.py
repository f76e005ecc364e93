"""Worker processes kept across evaluators: no start cost per kernel.

An :class:`~gtune.measure.OpenCLEvaluator` starts a measure worker (a fresh interpreter
that imports pyopencl and creates a driver context) and its compile workers (one
context each). Tuning many kernels one after another -- a campaign worker, a
load-predictor collection -- would pay that for every kernel. Inside
``with reuse_workers():`` evaluators on the same device share one :class:`WorkerPool`:
compile workers only ever hold a device (each build sends its source), so they serve
every kernel; the measure worker is handed the next kernel's set-up (its data, its
reference) instead of being started again, and the device stays warm between kernels.

One evaluator uses a pool at a time (the thread that tunes); this module never imports
pyopencl.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from gtune.device import DeviceLimits
from gtune.processes import scratch_dir

if TYPE_CHECKING:
    from gtune.measure.opencl_evaluator import Worker

WARM_S = 2.0  # a device used this recently needs no warm-up before the next kernel


class WorkerPool:
    """The worker processes of one device, lent to one evaluator at a time."""

    def __init__(self, device: DeviceLimits) -> None:
        self.device = device
        self._tmp = scratch_dir("pool")  # removed by a successor if this process is killed
        self.dir = Path(self._tmp.name)
        # the driver's compile cache (see OpenCLEvaluator) lives as long as the workers
        (self.dir / "driver-cache").mkdir()
        self.env = {
            "CUDA_CACHE_DISABLE": "0",
            "CUDA_CACHE_PATH": str(self.dir / "driver-cache"),
        }
        #: Compile workers; an evaluator appends to this list when it needs more.
        self.compilers: list[Worker] = []
        self._measure: Worker | None = None
        self._last_used = 0.0
        #: Measure workers started for a kernel, and those handed a kernel running.
        self.started = 0
        self.reused = 0
        #: Seconds its compile workers waited for the host's build slots, all kernels.
        self.build_wait_s = 0.0

    def take_measure(self) -> Worker | None:
        """The idle measure worker (still running), or None: start a new one."""
        w, self._measure = self._measure, None
        if w is not None and w.process is not None and w.process.poll() is None:
            self.reused += 1
            return w
        if w is not None:
            w.kill()
        self.started += 1
        return None

    def give_back(self, measure: Worker) -> None:
        """An evaluator is done with ``measure``; keep it for the next kernel."""
        if self._measure is not None and self._measure is not measure:
            self._measure.stop()
        self._measure = measure
        self._last_used = time.monotonic()

    def prestart(self, compile_workers: int, timeout_s: float = 60.0) -> float:
        """Start the measure worker (its driver context) and ``compile_workers`` compile
        workers now, side by side, before any kernel needs them; the seconds it took.

        The measure worker starts as a compile worker does (a context on the device,
        no kernel); the first evaluator hands it its kernel. A campaign worker calls
        this before its first task, so no search pays for starting processes."""
        from gtune.measure.opencl_evaluator import Worker, WorkerDied, WorkerTimeout

        began = time.monotonic()
        measure_alone = "CPU" in self.device.type.upper()
        setup = {
            "device": self.device.to_dict(),
            "build_lock_s": max(1.0, timeout_s / 4) if measure_alone else None,
        }
        starting: list[Worker] = []
        if self._measure is None:
            self._measure = Worker("measure", ("compiler", dict(setup)), self.env)
            self._measure.log_path = self.dir / "measure.log"
            starting.append(self._measure)
        while len(self.compilers) < compile_workers:
            w = Worker("compile", ("compiler", dict(setup)), self.env)
            w.log_path = self.dir / f"compile-{len(self.compilers)}.log"
            self.compilers.append(w)
            starting.append(w)
        for w in starting:
            w.launch()
        failed: list[str] = []
        for w in starting:
            try:
                w.receive(max(timeout_s, 120.0))
            except (WorkerTimeout, WorkerDied) as exc:
                w.kill()  # started again by the evaluator that needs it
                failed.append(str(exc) or "it did not answer")
        if failed:
            from gtune.exceptions import EnvironmentProblem

            raise EnvironmentProblem(
                f"cannot start {len(failed)} worker(s) on {self.device.name}: {failed[0]}"
            )
        self._last_used = 0.0  # started, not warm: the first kernel warms the device up
        return time.monotonic() - began

    @property
    def warm(self) -> bool:
        """Whether the device ran a kernel moments ago (no warm-up needed)."""
        return self._measure is not None and time.monotonic() - self._last_used < WARM_S

    def close(self) -> None:
        for w in self.compilers:
            w.stop()
        self.compilers.clear()
        if self._measure is not None:
            self._measure.stop()
            self._measure = None
        self._tmp.cleanup()


_POOLS: contextvars.ContextVar[dict[str, WorkerPool] | None] = contextvars.ContextVar(
    "gtune_worker_pools", default=None
)


def pool_key(device: DeviceLimits) -> str:
    """A device's pool: its identity and its index (identical GPUs share an identity)."""
    return f"{device.identity or device.name}@{device.selector}"


def pool_for(device: DeviceLimits) -> WorkerPool | None:
    """The pool evaluators on ``device`` share here (None outside :func:`reuse_workers`)."""
    pools = _POOLS.get()
    if pools is None:
        return None
    key = pool_key(device)
    if key not in pools:
        pools[key] = WorkerPool(device)
    return pools[key]


@contextlib.contextmanager
def reuse_workers(pools: dict[str, WorkerPool] | None = None) -> Iterator[dict[str, WorkerPool]]:
    """Evaluators made inside share worker processes per device; closed on exit unless
    ``pools`` was given (a long-lived process keeps its own, see gtune.campaign.task).
    Inside another ``reuse_workers`` and without ``pools``, the outer block's pools
    serve (a command run by a program that keeps its workers: they stay open)."""
    if pools is None:
        pools = _POOLS.get()  # an outer block's, or None
    own = pools is None
    mine: dict[str, WorkerPool] = {} if pools is None else pools
    token = _POOLS.set(mine)
    try:
        yield mine
    finally:
        _POOLS.reset(token)
        if own:
            for p in mine.values():
                p.close()
            mine.clear()


P = ParamSpec("P")
R = TypeVar("R")


def reusing_workers(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` runs inside :func:`reuse_workers` (kernels it tunes share workers)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with reuse_workers():
            return fn(*args, **kwargs)

    return wrapper


__all__ = ["WARM_S", "WorkerPool", "pool_for", "pool_key", "reuse_workers", "reusing_workers"]
