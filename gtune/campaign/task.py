"""What a campaign worker runs: one :class:`CampaignTask`, plain data in and out.

The function imports everything it needs itself (OpenCL is only touched by the
evaluator's own worker processes) and reports progress through Dask's event log when it
runs inside a Dask worker, so the client can show configurations per device as they are
measured. Its result is a plain dict: the summary the campaign report is built from.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Mapping
from typing import Any

from gtune.budget import Budget
from gtune.campaign.schedule import COMPILE_WORKERS_ENV, group_of
from gtune.campaign.spec import CampaignTask
from gtune.device import DeviceLimits
from gtune.tuning.events import ResultMeasured, SearchStarted, TuningEvent
from gtune.tuning.techniques import technique_for

PROGRESS_TOPIC = "gtune-progress"


def parse_budget(text: str | None) -> Budget | None:
    return Budget.parse(text, source="budget") if text else None


class _Events:
    """Progress as Dask events, at most a few per second."""

    def __init__(self, task: CampaignTask, device: str) -> None:
        self.task = task
        self.device = device
        self.done = 0
        self.measured = 0
        self.best_s = math.inf
        self.last = 0.0
        try:
            from distributed import get_worker

            self.worker: Any = get_worker()
        except (ImportError, ValueError):
            self.worker = None

    def emit(self, final: bool = False) -> None:
        now = time.monotonic()
        if self.worker is None or (not final and now - self.last < 0.5):
            return
        self.last = now
        self.worker.log_event(
            PROGRESS_TOPIC,
            {
                "task": self.task.key,
                "device": self.device,
                "configs": self.done,
                "measured": self.measured,
                "best_s": self.best_s if math.isfinite(self.best_s) else None,
                "final": final,
            },
        )

    def on_event(self, event: TuningEvent) -> None:
        if isinstance(event, SearchStarted):
            self.emit()
        elif isinstance(event, ResultMeasured):
            self.done += 1
            self.measured += int(event.fresh)
            self.best_s = min(self.best_s, event.best_s)
            self.emit()


class _Reuse:
    """What a worker process keeps between tasks: worker pools per device, stores per
    URL, and the session of the kernel it tuned last (space, evaluator, device data),
    so the next piece of that kernel starts nothing and a new kernel starts no process."""

    def __init__(self) -> None:
        self.pools: dict[str, Any] = {}
        self.stores: dict[str, Any] = {}
        self.session: Any = None
        self.session_key = ""

    def store(self, url: str | None) -> Any:
        from gtune.campaign.stores import open_campaign_store

        key = url or ""
        if key not in self.stores:
            self.stores[key] = open_campaign_store(url)
        return self.stores[key]

    def drop_session(self) -> None:
        if self.session is not None:
            with contextlib.suppress(Exception):
                self.session.close()
        self.session, self.session_key = None, ""


_REUSE = _Reuse()


def _compile_workers(task: CampaignTask) -> int | None:
    """The task's own setting, else this worker's share of the host's cores."""
    if task.compile_workers is not None:
        return task.compile_workers
    text = os.environ.get(COMPILE_WORKERS_ENV, "")
    return int(text) if text.isdigit() else None


def warm_worker(selector: str, compile_workers: int | None = None) -> dict[str, Any]:
    """Start this worker's OpenCL processes before its first task: the measure worker
    (its driver context) and its compile helpers (``compile_workers``, default this
    worker's ``GTUNE_COMPILE_WORKERS``), side by side, kept in the worker's pools for
    every task after (see :class:`_Reuse`). Returns when it started and ended, and
    the error if it could not (the tasks then start what they need themselves)."""
    from gtune.measure import select_device
    from gtune.measure.pool import pool_for, reuse_workers

    started = time.monotonic()
    started_at = time.time()
    out: dict[str, Any] = {"worker": _worker_address(), "selector": selector}
    try:
        bound = os.environ.get(BOUND_DEVICE)
        device = _bound_limits(bound) or select_device(bound or selector or None)
        text = os.environ.get(COMPILE_WORKERS_ENV, "")
        helpers = compile_workers
        if helpers is None:
            helpers = int(text) if text.isdigit() else default_helpers()
        with reuse_workers(_REUSE.pools):
            pool = pool_for(device)
            assert pool is not None  # inside reuse_workers
            pool.prestart(helpers)
        out.update(device=device.identity, helpers=helpers, error=None)
    except Exception as exc:  # a task that needs the device says what is wrong
        out.update(error=f"{type(exc).__name__}: {exc}")
    out.update(start_s=time.monotonic() - started, started_at=started_at, ended_at=time.time())
    return out


def default_helpers() -> int:
    """An evaluator's compile helpers when nothing sets them."""
    from gtune.measure.opencl_evaluator import default_compile_workers

    return default_compile_workers()


def execute_task(task_data: Mapping[str, Any], store_url: str | None) -> dict[str, Any]:
    """Tune one task on this machine; every result goes to the shared store first.

    ``task.confirm=False`` (one technique's search of a split task) skips the
    confirmation round. The process keeps the last kernel's session open for the next
    task of the same kernel (see :class:`_Reuse`).
    """
    from gtune.api import DEFAULT_CONFIRM, as_kernel, tune
    from gtune.description import load_kernel
    from gtune.measure import select_device
    from gtune.measure.pool import pool_key, reuse_workers
    from gtune.tuning import TuningSession

    task = CampaignTask.from_dict(task_data)
    started = time.monotonic()
    started_at = time.time()
    # a worker bound to one device (one of several identical GPUs, say) drives that one
    bound = os.environ.get(BOUND_DEVICE)
    device = _bound_limits(bound) or select_device(bound or task.device or None)
    events = _Events(task, device.identity)
    store = _REUSE.store(store_url)
    key = f"{group_of(task)}|{device.identity}|{store_url}"
    with reuse_workers(_REUSE.pools):
        if _REUSE.session_key != key:
            _REUSE.drop_session()
            if isinstance(task.kernel, str):
                kernel = load_kernel(task.kernel, dict(task.sizes) or None)
            else:
                kernel = as_kernel(task.kernel, dict(task.sizes))
            _REUSE.session = TuningSession(
                kernel,
                device,
                store=store,
                timeout_s=task.timeout_s,
                compile_workers=_compile_workers(task),
            )
            _REUSE.session_key = key
        try:
            report = tune(
                _REUSE.session.kernel,
                strategy=task.strategy,
                technique=technique_for(task.strategy, task.technique),
                budget=parse_budget(task.budget),
                strategy_options=dict(task.options),
                spec=task.spec,
                confirm=DEFAULT_CONFIRM if task.confirm else None,
                observer=events,
                session=_REUSE.session,
            )
        except BaseException:
            _REUSE.drop_session()  # a failed session is not reused
            raise
    events.emit(final=True)
    best = report.search_result
    pool = _REUSE.pools.get(pool_key(device))
    return {
        "task": task.to_dict(),
        "key": task.key,
        "label": task.label,
        "size": task.size_text,
        "strategy": task.strategy,
        "device": device.name,
        "device_identity": device.identity,
        "device_limits": device.to_dict(),
        # what was searched: a ledger entry of an edited kernel is not served again
        "kernel_identity": _REUSE.session.kernel.identity(),
        "best_s": report.search_s if best is not None and math.isfinite(report.search_s) else None,
        "best_config": dict(best.config) if best is not None else None,
        "technique": report.technique_choice,
        "evaluations": report.evaluations,
        "measured": report.measured,
        "reused": report.reused,
        "compile_s": report.compile_s,
        "run_s": report.run_s,
        "wall_s": time.monotonic() - started,
        # when it ran (seconds since the epoch): a campaign's span from first to last
        "started_at": started_at,
        "ended_at": time.time(),
        "time": report.time.to_dict(),
        "runs": [_run_summary(r.to_dict()) for r in report.runs],
        "gbs": report.gbs(report.search_s) if best is not None else None,
        "host": _host(),
        "worker": _worker_address(),
        # this worker process's OpenCL processes so far (all its tasks): measure
        # workers started for a task / handed a task running, compile workers, and
        # their summed wait for the host's build slots
        "pool": {
            "started": pool.started,
            "reused": pool.reused,
            "compile_workers": len(pool.compilers),
            "build_wait_s": pool.build_wait_s,
        }
        if pool is not None
        else None,
    }


BOUND_DEVICE = "GTUNE_WORKER_DEVICE"  # the device a worker process drives (P:D)
BOUND_LIMITS = "GTUNE_WORKER_DEVICE_LIMITS"  # its limits as the cluster listed them (JSON)


def _bound_limits(bound: str | None) -> DeviceLimits | None:
    """The bound device's limits as the local cluster listed them (None: not given, or
    not for ``bound``): the worker's first task then starts no device query of its own."""
    text = os.environ.get(BOUND_LIMITS, "")
    if not bound or not text:
        return None
    try:
        data = json.loads(text)
        limits = DeviceLimits.from_dict(data)
    except (ValueError, TypeError):
        return None
    return limits if data.get("selector") == bound else None


def _run_summary(run: Mapping[str, Any]) -> dict[str, Any]:
    """A technique's search without its trace (the store holds every result)."""
    outcome = run.get("outcome") or {}
    keep = ("best_s", "best_config", "evaluations", "stop_reason")
    return {
        **{k: v for k, v in run.items() if k != "outcome"},
        "outcome": {k: outcome.get(k) for k in keep} if outcome else None,
    }


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return ""


def _host() -> str:
    import socket

    return socket.gethostname()
