"""Online tuning: sizes and devices with no tuned result, tuned in the background.

One daemon thread per :class:`OnlineTuner` takes jobs (a device and a problem size)
one at a time and runs :func:`gtune.tune` on each: the measuring worker processes of
any tuning run (each configuration compiled, timed and verified there, away from the
application's process), a budget in configurations or seconds, results written to the
result store as they are measured (the store ``gtune run`` uses, so a later run or
export finds them), and the confirmation round at the end. The application is never
made to wait: a job only reports its answer through a callback, and the caller decides
whether to switch (:mod:`gtune.runtime.kernel`).

At exit (``atexit``, or :meth:`OnlineTuner.close`) the running search is asked to stop
after the configuration it is measuring and is given ``shutdown_s`` seconds; what was
measured is already in the store. The thread is a daemon, so an application that exits
without closing is not held up, and the worker processes end with their parent.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from gtune.budget import Budget
from gtune.device import DeviceLimits
from gtune.exceptions import GtuneError
from gtune.kernel import TunableKernel
from gtune.tuning.events import CancelToken
from gtune.tuning.report import TuningReport

LOG = logging.getLogger("gtune.runtime")


class Done(Protocol):
    """Told the report (None on failure) and a message, in the tuner's thread;
    ``stopped``: the job never ran, because the application was closing."""

    def __call__(
        self, report: TuningReport | None, message: str, *, stopped: bool = False
    ) -> None: ...


@dataclass(frozen=True)
class Job:
    device: DeviceLimits
    sizes: Mapping[str, int]
    done: Done
    baseline: Mapping[str, int] | None = None  # what the application runs meanwhile


def with_baseline(kernel: TunableKernel, baseline: Mapping[str, int]) -> TunableKernel:
    """``kernel`` whose parameter defaults are ``baseline``: the searches start from it
    and the confirmation round measures it where it measures the default. The kernel's
    identity (its store key) is unchanged: the description it was read from is. A kernel
    verified against one of its own configurations (``reference: config``, completed
    by the defaults) keeps its defaults, so that its reference stays what it was."""
    if kernel.reference.kind == "config":
        return kernel
    parameters = tuple(
        replace(p, default=int(baseline[p.name])) if p.name in baseline else p
        for p in kernel.parameters
    )
    return replace(kernel, parameters=parameters)


class OnlineTuner:
    """Tunes (device, size) pairs in a background thread, one at a time."""

    def __init__(
        self,
        kernel: TunableKernel,
        budget: Budget,
        store: str | Path,
        *,
        shutdown_s: float = 5.0,
        tune_options: Mapping[str, object] | None = None,
    ) -> None:
        self.kernel = kernel
        self.budget = budget
        self.store = store
        self.shutdown_s = shutdown_s
        self.tune_options = dict(tune_options or {})
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._cancel = CancelToken()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(
        self,
        device: DeviceLimits,
        sizes: Mapping[str, int],
        done: Done,
        *,
        baseline: Mapping[str, int] | None = None,
    ) -> None:
        """Queue a job; returns at once. ``baseline``: the configuration the application
        runs meanwhile, if not the default (see :func:`with_baseline`)."""
        job = Job(device, dict(sizes), done, baseline)
        with self._lock:
            closed = self._cancel.cancelled
            if not closed:
                self._start()
                self._jobs.put(job)
        if closed:  # answered at once, never queued (and outside the lock)
            try:
                _not_started(job, self._cancel.reason)
            except Exception:  # the callback's failure must not reach the application
                LOG.exception("online tuning: the answer could not be handled")

    def _start(self) -> None:
        """The tuner's thread, started on the first job (the lock held)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name="gtune-online-tuning", daemon=True
            )
            self._thread.start()
            atexit.register(self.close)

    def close(self, timeout: float | None = None) -> None:
        """Stop after the configuration being measured; wait up to ``timeout`` seconds
        (default ``shutdown_s``) for the search to write it."""
        with self._lock:
            self._cancel.cancel("the application is closing")
            thread = self._thread
            self._jobs.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.shutdown_s if timeout is None else timeout)
        atexit.unregister(self.close)

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                if self._cancel.cancelled:
                    _not_started(job, self._cancel.reason)
                else:
                    self._run(job)
            except Exception:  # the callback's failure must not end the thread
                LOG.exception("online tuning: the answer could not be handled")
            finally:
                self._jobs.task_done()

    def _run(self, job: Job) -> None:
        from gtune.api import tune

        where = "x".join(str(v) for v in job.sizes.values())
        LOG.info(
            "online tuning %s at %s on %s started", self.kernel.store_name, where, job.device.name
        )
        try:
            kernel = self.kernel.with_sizes(job.sizes)
            if job.baseline is not None:
                kernel = with_baseline(kernel, job.baseline)
            report = tune(
                kernel,
                device=job.device,
                budget=self.budget,
                store=self.store,
                cancel=self._cancel,
                **self.tune_options,  # type: ignore[arg-type]
            )
        except GtuneError as exc:
            message = f"online tuning at {where} failed: {exc.render()}"
            LOG.warning("%s", message)
            job.done(None, message)
            return
        except Exception as exc:  # a background failure must never reach the application
            message = f"online tuning at {where} failed: {exc!r}"
            LOG.exception("%s", message)
            job.done(None, message)
            return
        message = f"online tuning at {where} finished: {report.measured} configurations measured"
        job.done(report, message)


def _not_started(job: Job, why: str) -> None:
    where = "x".join(str(v) for v in job.sizes.values())
    job.done(None, f"online tuning at {where} not started: {why}", stopped=True)


__all__ = ["Done", "Job", "OnlineTuner", "with_baseline"]
