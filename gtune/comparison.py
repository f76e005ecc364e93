"""Strategies compared on one kernel (seed 001 Table 3), as a library call.

:func:`compare_kernel` runs every strategy on one kernel and device through a
:class:`~gtune.api.Campaign` (one session, so one evaluator and the store serve every
strategy: a configuration one strategy measured is served to the others), then
re-measures the strategies' winning configurations side by side
(:func:`gtune.tuning.confirm.side_by_side`): a search's best is the luckiest of many
measurements taken minutes apart, and the table ranks by times taken together.
``gtune compare`` and the benchmarks call it kernel after kernel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gtune.api import DEFAULT_CONFIRM, Campaign, TuningTask, as_kernel
from gtune.device import DeviceLimits
from gtune.kernel import TunableKernel
from gtune.measure.evaluator import Evaluator
from gtune.report import CompareCell, compare_cell
from gtune.tuning import AUTO, CancelToken, Observer, ResultMeasured, TuningReport
from gtune.tuning.confirm import Confirmation, ConfirmPolicy, side_by_side
from gtune.tuning.events import ConfirmStarted, TaskStarted
from gtune.tuning.techniques import BASELINES, ORACLE, technique_for


@dataclass
class KernelComparison:
    """One kernel's row of cells, the strategies' reports and the side-by-side round.

    ``complete`` is False when the run was cancelled (by the token) before the end; the
    cells are then not to be reported, but every measurement is in the store.
    """

    name: str
    cells: list[CompareCell] = field(default_factory=list)
    reports: dict[str, TuningReport] = field(default_factory=dict)
    confirmation: Confirmation | None = None
    complete: bool = False


def compare_kernel(
    campaign: Campaign,
    kernel: TunableKernel | str | Path,
    device: DeviceLimits,
    strategies: Sequence[str],
    *,
    sizes: Mapping[str, int] | None = None,
    name: str | None = None,
    technique: str = AUTO,
    budget: str | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    confirm: ConfirmPolicy | None = DEFAULT_CONFIRM,
    observer: Observer | None = None,
    cancel: CancelToken | None = None,
) -> KernelComparison:
    """Tune ``kernel`` with each of ``strategies`` (``oracle``: the hybrid over every
    technique), then re-measure the winners side by side (``confirm=None``: rank by the
    searches' own bests). ``options`` maps a strategy to its options."""
    k = as_kernel(kernel, sizes)
    where = k.description_path or k.source_path
    label = name or (Path(where).stem if where else k.name)
    source = str(kernel) if isinstance(kernel, str | Path) else k.to_dict()
    campaign.sessions.remember(device)
    tasks = [
        TuningTask(
            kernel=source,
            sizes=tuple(k.sizes.items()),
            device=device.selector,
            strategy="hybrid" if s == ORACLE else s,
            technique=technique_for(s, technique),
            budget=budget,
            options=tuple(((options or {}).get(s) or {}).items()),
            confirm=False,
            label=f"{label} {s}",
        )
        for s in strategies
    ]
    out = KernelComparison(label)
    try:
        result = campaign.run(tasks, observer=observer, cancel=cancel)
        if not result.complete:
            return out
        out.reports = {s: r for s, (_, r) in zip(strategies, result.reports, strict=True)}
        out.cells = [compare_cell(label, s, out.reports[s]) for s in strategies]
        if confirm is not None:
            session = campaign.sessions.session(k, device)
            out.confirmation, out.cells = _remeasure(
                label, out.reports, out.cells, session.raw, confirm, observer, cancel
            )
            if cancel is not None and cancel.cancelled:
                return out
        out.complete = True
        return out
    finally:
        campaign.sessions.close()  # this kernel's workers are no longer needed


def _remeasure(
    label: str,
    reports: Mapping[str, TuningReport],
    cells: list[CompareCell],
    evaluator: Evaluator,
    policy: ConfirmPolicy,
    observer: Observer | None,
    cancel: CancelToken | None,
) -> tuple[Confirmation, list[CompareCell]]:
    """Re-measure the winners side by side; the cells with ``remeasured_s`` set (or,
    when a winner failed now, ``remeasure_note`` saying so)."""
    winners = {s: r.search_result for s, r in reports.items()}

    def started(n: int) -> None:
        if observer is not None and n:
            observer.on_event(TaskStarted(label, 0, 1))
            observer.on_event(ConfirmStarted(n, policy.rounds, "winners re-measured side by side"))

    outcome, entries = side_by_side(
        winners,
        evaluator,
        policy,
        cancel=cancel,
        on_start=started,
        on_measured=(
            None
            if observer is None
            else lambda r: observer.on_event(ResultMeasured(r, True, math.inf))
        ),
    )
    out = []
    for c in cells:
        entry = entries.get(c.strategy)
        if entry is None:
            out.append(c)
        elif entry.ok:
            out.append(replace(c, remeasured_s=entry.median_s))
        else:
            first = entry.message.strip().splitlines()[0][:160] if entry.message.strip() else ""
            note = (
                f"its best configuration failed when re-measured ({entry.status.value}"
                + (f": {first}" if first else "")
                + "); ranked by its search time"
            )
            out.append(replace(c, remeasure_note=note))
    return outcome, out


__all__ = ["BASELINES", "ORACLE", "KernelComparison", "compare_kernel", "technique_for"]
