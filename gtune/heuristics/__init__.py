"""Search: heuristic specs, the grouped engine and baseline strategies.

Public API: :func:`tune` (run a strategy by name), :func:`get_strategy` /
:func:`available_strategies` / :func:`register_strategy` (the plugin registry),
:func:`load_spec` / :func:`parse_spec` / :func:`shipped_specs` (spec files),
:class:`GroupedSearch` and :func:`drive` (the ask/tell loop for callers that evaluate
batches themselves), and the data they exchange: :class:`SearchProblem`,
:class:`Budget` (defined in ``gtune/budget.py``), :class:`Batch`,
:class:`TuningOutcome`, :class:`TraceEntry`, :class:`StepSummary`. Nothing here imports
OpenCL or the result store.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gtune.budget import Budget
from gtune.heuristics.grouped import GroupedSearch
from gtune.heuristics.search import (
    Batch,
    ProgressHook,
    Searcher,
    SearchProblem,
    Seeded,
    StepSummary,
    TraceEntry,
    TuningOutcome,
    drive,
    nearest_config,
)
from gtune.heuristics.spec import (
    BoundSpec,
    HeuristicSpec,
    load_spec,
    parse_spec,
    shipped_specs,
)
from gtune.heuristics.strategies import (
    Option,
    Strategy,
    available_strategies,
    get_strategy,
    register_strategy,
)
from gtune.measure.evaluator import Evaluator
from gtune.space.base import Space


def tune(
    strategy: str | Strategy,
    space: Space,
    evaluator: Evaluator,
    problem: SearchProblem,
    *,
    budget: Budget | None = None,
    options: Mapping[str, Any] | None = None,
    on_result: ProgressHook | None = None,
) -> TuningOutcome:
    """Search ``space`` with the named strategy (or a :class:`Strategy` instance)."""
    plugin = get_strategy(strategy) if isinstance(strategy, str) else strategy
    return plugin.tune(
        space, evaluator, problem, budget=budget, options=options, on_result=on_result
    )


__all__ = [
    "Batch",
    "BoundSpec",
    "Budget",
    "GroupedSearch",
    "HeuristicSpec",
    "Option",
    "ProgressHook",
    "SearchProblem",
    "Searcher",
    "Seeded",
    "StepSummary",
    "Strategy",
    "TraceEntry",
    "TuningOutcome",
    "available_strategies",
    "drive",
    "get_strategy",
    "load_spec",
    "nearest_config",
    "parse_spec",
    "register_strategy",
    "shipped_specs",
    "tune",
]
