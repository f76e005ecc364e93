"""The strategy contract (:class:`gtune.testing.StrategyContract`, shipped in the
package) on every strategy gtune registers: on the recording of heat3d (the template's
parameters, which the shipped specs and expert's limits name) and, for the strategies
that take any parameters, on the package's synthetic case."""

from __future__ import annotations

import pytest

from gtune.heuristics import available_strategies, get_strategy
from gtune.heuristics.strategies import Strategy
from gtune.testing import SearchCase, StrategyContract
from tests.heuristics.conftest import Recorded

ANY_PARAMETERS = ("exhaustive", "random", "generic")
# The paper's limits (WX >= 32) exclude every configuration of the 16-wide recording.
OPTIONS = {"expert": {"limits": "VX <= 2; WX >= 4"}}


class TestOnTheRecording(StrategyContract):
    @pytest.fixture(params=[n for n in available_strategies() if n != "first-n"])
    def strategy(self, request: pytest.FixtureRequest) -> Strategy:
        return get_strategy(request.param, OPTIONS.get(request.param))

    @pytest.fixture
    def case(self, recorded: Recorded) -> SearchCase:
        return SearchCase(recorded.space, list(recorded.by_key.values()), recorded.problem())


class TestOnTheSyntheticCase(StrategyContract):
    @pytest.fixture(params=ANY_PARAMETERS)
    def strategy(self, request: pytest.FixtureRequest) -> Strategy:
        return get_strategy(request.param)
