"""Every valid configuration: the ground truth on small spaces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from gtune.heuristics.search import Searcher, SearchProblem
from gtune.heuristics.strategies.base import BATCH_OPTION, ListSearcher, Option, Strategy
from gtune.space.base import Space


class ExhaustiveStrategy(Strategy):
    """Measure the whole (pruned) space in its deterministic order."""

    name: ClassVar[str] = "exhaustive"
    seeded: ClassVar[bool] = False  # measures every configuration, the default among them
    doc: ClassVar[str] = "every valid configuration of the space"
    options: ClassVar[Mapping[str, Option]] = {"batch": BATCH_OPTION}

    def searcher(
        self, space: Space, problem: SearchProblem, options: Mapping[str, Any]
    ) -> Searcher:
        return ListSearcher(list(space.enumerate()), "exhaustive", options["batch"])
