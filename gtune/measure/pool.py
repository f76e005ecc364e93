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
        #: Seconds spent starting worker processes, and how many were started / reused.
        self.started = 0
        self.reused = 0

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


def pool_for(device: DeviceLimits) -> WorkerPool | None:
    """The pool evaluators on ``device`` share here (None outside :func:`reuse_workers`)."""
    pools = _POOLS.get()
    if pools is None:
        return None
    key = device.identity or device.name
    if key not in pools:
        pools[key] = WorkerPool(device)
    return pools[key]


@contextlib.contextmanager
def reuse_workers(pools: dict[str, WorkerPool] | None = None) -> Iterator[dict[str, WorkerPool]]:
    """Evaluators made inside share worker processes per device; closed on exit unless
    ``pools`` was given (a long-lived process keeps its own, see gtune.campaign.task)."""
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


__all__ = ["WARM_S", "WorkerPool", "pool_for", "reuse_workers", "reusing_workers"]
