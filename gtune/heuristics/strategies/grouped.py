"""Grouped heuristics driven by a spec file (seed 001 §6.2, §7.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from gtune.budget import Budget
from gtune.heuristics.grouped import GroupedSearch
from gtune.heuristics.search import Searcher, SearchProblem
from gtune.heuristics.spec import HeuristicSpec, load_spec
from gtune.heuristics.strategies.base import MAX_REPEAT_OPTION, Option, Strategy
from gtune.space.base import Space


class GroupedStrategy(Strategy):
    """Tune groups of parameters one step at a time, as a spec file says."""

    name: ClassVar[str] = "grouped"
    doc: ClassVar[str] = (
        "grouped heuristic from a spec file: each step tunes a group of parameters "
        "exhaustively with the others fixed at the best so far"
    )
    options: ClassVar[Mapping[str, Option]] = {
        "spec": Option(
            "hybrid",
            "shipped spec name (hybrid, dims, opts, hybrid-restricted, ...) or spec file path",
            (str, HeuristicSpec),
        ),
        "repeat": Option(
            None,
            "extra rounds over the steps (seed 001's n); default: the spec's",
            (int, type(None)),
            bounds=(0, MAX_REPEAT_OPTION),
        ),
        "seed": Option(None, "seed for sample(); default: the spec's", (int, type(None))),
    }

    def __init__(self, preset: str | None = None) -> None:
        self.preset = preset
        if preset is not None:
            self.name = preset  # type: ignore[misc]
            self.doc = f"grouped heuristic from the shipped spec {preset!r}"  # type: ignore[misc]

    def configure(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        opts = super().configure(given)
        if self.preset is not None and "spec" not in {**self.bound, **(given or {})}:
            opts["spec"] = self.preset
        return opts

    def load(self, options: Mapping[str, Any]) -> HeuristicSpec:
        spec = options["spec"]
        return spec if isinstance(spec, HeuristicSpec) else load_spec(spec)

    def searcher(
        self, space: Space, problem: SearchProblem, options: Mapping[str, Any]
    ) -> Searcher:
        spec = self.load(options)
        bound = spec.bind(space.parameters, problem.sizes)
        repeat = options["repeat"]
        if repeat is not None and repeat < 0:
            from gtune.exceptions import InputError

            raise InputError(f"option 'repeat' must be at least 0, got {repeat}")
        return GroupedSearch(
            bound,
            space,
            problem,
            seed=options["seed"],
            rounds=None if repeat is None else 1 + repeat,
        )

    def default_budget(self, options: Mapping[str, Any]) -> Budget | None:
        return self.load(options).budget
