"""What a campaign worker runs: one :class:`CampaignTask`, plain data in and out.

The function imports everything it needs itself (OpenCL is only touched by the
evaluator's own worker processes) and reports progress through Dask's event log when it
runs inside a Dask worker, so the client can show configurations per device as they are
measured. Its result is a plain dict: the summary the campaign report is built from.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from typing import Any

from gtune.campaign.spec import CampaignTask
from gtune.heuristics import Budget
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


def execute_task(task_data: Mapping[str, Any], store_url: str | None) -> dict[str, Any]:
    """Tune one task on this machine; every result goes to the shared store first."""
    from gtune.api import DEFAULT_CONFIRM, as_kernel, tune
    from gtune.campaign.stores import open_campaign_store
    from gtune.kernel import load_kernel
    from gtune.measure import select_device

    task = CampaignTask.from_dict(task_data)
    started = time.monotonic()
    if isinstance(task.kernel, str):
        kernel = load_kernel(task.kernel, dict(task.sizes) or None)
    else:
        kernel = as_kernel(task.kernel, dict(task.sizes))
    # a worker bound to one device (one of several identical GPUs, say) drives that one
    bound = os.environ.get("GTUNE_WORKER_DEVICE")
    device = select_device(bound or task.device or None)
    events = _Events(task, device.identity)
    store = open_campaign_store(store_url)
    try:
        report = tune(
            kernel,
            device=device,
            strategy=task.strategy,
            technique=technique_for(task.strategy, task.technique),
            budget=parse_budget(task.budget),
            store=store,
            timeout_s=task.timeout_s,
            compile_workers=task.compile_workers,
            strategy_options=dict(task.options),
            spec=task.spec,
            confirm=DEFAULT_CONFIRM if task.confirm else None,
            observer=events,
        )
    finally:
        store.close()
    events.emit(final=True)
    best = report.search_result
    return {
        "task": task.to_dict(),
        "key": task.key,
        "label": task.label,
        "size": task.size_text,
        "strategy": task.strategy,
        "device": device.name,
        "device_identity": device.identity,
        "best_s": report.search_s if best is not None and math.isfinite(report.search_s) else None,
        "best_config": dict(best.config) if best is not None else None,
        "technique": report.technique_choice,
        "evaluations": report.evaluations,
        "measured": report.measured,
        "reused": report.reused,
        "compile_s": report.compile_s,
        "run_s": report.run_s,
        "wall_s": time.monotonic() - started,
        "gbs": report.gbs(report.search_s) if best is not None else None,
        "host": _host(),
    }


def _host() -> str:
    import socket

    return socket.gethostname()
