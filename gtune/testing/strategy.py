"""The contract every strategy plugin keeps (:class:`gtune.heuristics.strategies.Strategy`).

Subclass :class:`StrategyContract` and provide a ``strategy`` fixture. The search runs
on :func:`synthetic_case` (two parameters, a smooth objective, replayed instantly);
a strategy written for particular parameters provides a ``case`` fixture instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from gtune.budget import Budget
from gtune.exceptions import InputError
from gtune.heuristics.search import SearchProblem
from gtune.heuristics.strategies.base import Strategy
from gtune.kernel import canonical_config
from gtune.measure.evaluator import ReplayEvaluator
from gtune.measure.result import Result, Status
from gtune.space.base import Space
from gtune.space.enumerated import EnumeratedSpace


@dataclass
class SearchCase:
    """What a strategy searches in the contract: the space (a fresh one per call, as a
    search may exclude configurations from it), the evaluator replaying every
    configuration of it (a fresh one per call), and the problem."""

    make_space: Callable[[], Space]
    results: list[Result]
    problem: SearchProblem

    def space(self) -> Space:
        return self.make_space()

    def evaluator(self) -> ReplayEvaluator:
        return ReplayEvaluator(self.results, source="contract case")


def synthetic_case() -> SearchCase:
    """WX in 1..64 and WY in 1..8 (powers of two), WX * WY <= 256; fastest at WX=16,
    WY=2; WX=64 with WY=8 fails to launch (a refused configuration)."""
    domains = {"WX": [1 << i for i in range(7)], "WY": [1 << i for i in range(4)]}
    rows = [[x, y] for x in domains["WX"] for y in domains["WY"] if x * y <= 256]
    results = []
    for x, y in rows:
        if (x, y) == (64, 4):
            results.append(
                Result({"WX": x, "WY": y}, Status.LAUNCH_FAILED, message="out of resources")
            )
            continue
        t = 1e-3 * (1 + abs(math.log2(x) - 4) + 0.5 * abs(math.log2(y) - 1))
        results.append(Result({"WX": x, "WY": y}, Status.OK, times_s=(t, t * 1.01, t * 0.99)))
    problem = SearchProblem(sizes={}, domains=domains, default={"WX": 1, "WY": 1})
    return SearchCase(
        lambda: EnumeratedSpace(["WX", "WY"], rows, domains=domains, env={}), results, problem
    )


class StrategyContract:
    """A strategy documents its options, refuses unknown ones, proposes only
    configurations of the space (or records others as pruned without measuring them),
    keeps to an evaluation budget, reports the best it measured, and is reproducible
    given the same options."""

    @pytest.fixture
    def case(self) -> SearchCase:
        return synthetic_case()

    def test_describes_itself_and_its_options(self, strategy: Strategy) -> None:
        assert strategy.name and strategy.doc
        for key, option in strategy.options.items():
            assert option.doc, f"option {key!r} has no doc"
        assert set(strategy.configure({})) == set(strategy.options)

    def test_unknown_option_is_refused(self, strategy: Strategy) -> None:
        with pytest.raises(InputError, match="no option"):
            strategy.configure({"no-such-option": 1})

    def test_searches_the_space_and_reports_the_best(
        self, strategy: Strategy, case: SearchCase
    ) -> None:
        evaluator = case.evaluator()
        outcome = strategy.tune(case.space(), evaluator, case.problem)
        space = {canonical_config(c) for c in case.space().enumerate()}
        assert evaluator.calls, "the strategy measured nothing"
        for config in evaluator.calls:
            assert canonical_config(config) in space, f"measured {config}, not in the space"
        for entry in outcome.trace:
            if canonical_config(entry.result.config) not in space:
                assert entry.result.status is Status.PRUNED
        ok = [e.result for e in outcome.trace if e.result.ok]
        assert ok and outcome.best_result is not None
        assert outcome.best_result.objective == min(r.objective for r in ok)

    def test_keeps_to_an_evaluation_budget(self, strategy: Strategy, case: SearchCase) -> None:
        outcome = strategy.tune(
            case.space(), case.evaluator(), case.problem, budget=Budget(evaluations=3)
        )
        assert 0 < outcome.evaluations <= 3

    def test_same_options_same_search(self, strategy: Strategy, case: SearchCase) -> None:
        first, second = case.evaluator(), case.evaluator()
        strategy.tune(case.space(), first, case.problem)
        strategy.tune(case.space(), second, case.problem)
        assert first.calls == second.calls


__all__ = ["SearchCase", "StrategyContract", "synthetic_case"]
