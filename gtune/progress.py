"""Showing a tuning run as it goes: the command line's progress bar, for library users.

:class:`ProgressBar` is an :class:`~gtune.tuning.Observer` (the one progress interface:
it is told the run's events), so it is passed where any observer goes::

    import gtune

    report = gtune.tune("stencils/heat3d.cl", observer=gtune.ProgressBar())

It draws on standard error with rich: the search and its step, configurations done
(of the total where known), elapsed and remaining time, and the best time so far. It
starts at the first event and stops at the end of the run, or may be used as a context
manager that spans several runs (a campaign). Narrow terminals keep the counts and the
best time readable: the step is shortened first, the bar and the remaining time go.
"""

from __future__ import annotations

import math
from typing import Any, Self

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column

from gtune.report import seconds_text
from gtune.tuning.events import (
    BatchStarted,
    ConfirmStarted,
    ResultMeasured,
    RunFinished,
    RunStarted,
    SearchStarted,
    TaskStarted,
    TuningEvent,
)

WIDE = 100
"""Terminals at least this wide also show the bar and the remaining time."""


def _columns(width: int) -> list[str | ProgressColumn]:
    """The columns for a terminal ``width`` wide: the description gets what is left."""
    cols: list[str | ProgressColumn] = [
        TextColumn(
            "{task.description}",
            table_column=Column(no_wrap=True, overflow="ellipsis", min_width=12, ratio=1),
        )
    ]
    if width >= WIDE:
        cols.append(BarColumn(bar_width=20))
    cols += [MofNCompleteColumn(), TimeElapsedColumn()]
    if width >= WIDE:
        cols.append(TimeRemainingColumn())
    cols.append(TextColumn("{task.fields[best]}", table_column=Column(no_wrap=True)))
    return cols


class ProgressBar:
    """A progress display on standard error, told every event of a run.

    ``console``: where to draw (default: standard error); ``prefix``: a label put before
    each search's name (a campaign's task label replaces it as tasks start).
    """

    def __init__(self, console: Console | None = None, prefix: str = "") -> None:
        self.console = console if console is not None else Console(stderr=True)
        self.progress = Progress(
            *_columns(self.console.width), console=self.console, transient=False, expand=True
        )
        self.task: TaskID | None = None
        self.label = ""
        self.prefix = prefix
        self.whole_run = False
        self.fresh = 0
        self.reused = 0
        self._live = False
        self._held = False  # entered as a context manager: stays live across runs

    def __enter__(self) -> Self:
        self._held = True
        self._start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._held = False
        self._stop()

    def _start(self) -> None:
        if not self._live:
            self.progress.start()
            self._live = True

    def _stop(self) -> None:
        if self._live:
            self.progress.stop()
            self._live = False

    def on_event(self, event: TuningEvent) -> None:
        if isinstance(event, TaskStarted):
            self.prefix = event.label
        elif isinstance(event, RunStarted):
            self._start()
        elif isinstance(event, SearchStarted):
            self.run_started(event.label, event.total)
        elif isinstance(event, BatchStarted):
            self.batch_started(event.step, event.size)
        elif isinstance(event, ResultMeasured):
            self.result(event.fresh, event.best_s)
        elif isinstance(event, ConfirmStarted):
            self.run_started(event.label, event.configs * event.rounds)
            self.batch_started(f"{event.configs} configurations x {event.rounds} rounds", 0)
        elif isinstance(event, RunFinished) and not self._held:
            self._stop()

    def run_started(self, label: str, total: int | None) -> None:
        self._start()
        if self.task is not None:
            self.progress.stop_task(self.task)
        self.label = escape(f"{self.prefix}: {label}" if self.prefix else label)
        self.whole_run = total is not None
        self.task = self.progress.add_task(self.label, total=total, best="")

    def batch_started(self, step: str, size: int) -> None:
        if self.task is None:
            return
        desc = f"{self.label} · {escape(step)}"
        if self.whole_run:
            self.progress.update(self.task, description=desc)
        else:  # no total known in advance: the bar (and its ETA) covers the step
            self.progress.reset(self.task, total=size, description=desc)

    def result(self, fresh: bool, best_s: float) -> None:
        if fresh:
            self.fresh += 1
        else:
            self.reused += 1
        if self.task is None:
            return
        best = f"best {seconds_text(best_s)}" if math.isfinite(best_s) else ""
        store = f" ({self.reused} stored)" if self.reused else ""
        self.progress.update(self.task, advance=1, best=best + store)
        task = next((t for t in self.progress.tasks if t.id == self.task), None)
        if task is not None and task.total is not None and task.completed > task.total:
            # more than foreseen (the confirmation's extra rounds): never "15/12"
            self.progress.update(self.task, total=task.completed)


__all__ = ["ProgressBar"]
