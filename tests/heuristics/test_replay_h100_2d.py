"""The hybrid spec on 2D arrays at a small budget, replayed on recorded H100 measurements.

``tests/data/recording_h100_2d_8192.json`` holds every configuration the H100 run of
benchmarks/lift_corpus.py measured for two lifted 2D kernels at 8192x8192 (jacobi2d,
blur_clamp; global technique, budget 300) and the technique's valid configurations on
the H100's limits. A configuration the recording lacks is answered as not run: it costs
an evaluation, as on the device, and can never be the best (``unrecorded="fail"``).
benchmarks/spec_replay.py runs the same replay over every recorded kernel, 2D and 3D.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gtune.budget import Budget
from gtune.heuristics import SearchProblem, get_strategy
from gtune.heuristics.search import Seeded, TuningOutcome, drive
from gtune.measure import ReplayEvaluator, Result
from gtune.space import EnumeratedSpace

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "data" / "recording_h100_2d_8192.json"
BEFORE = ROOT / "benchmarks" / "compare" / "specs" / "hybrid-before-2d.yaml"
KERNELS = ["jacobi2d", "blur_clamp"]
SMALL = 60


@dataclass
class Recorded2D:
    space: EnumeratedSpace
    sizes: dict[str, int]
    default: dict[str, int]
    results: list[Result]

    @property
    def best_s(self) -> float:
        return min(r.objective for r in self.results)


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    if not RECORDING.exists():
        pytest.fail(f"{RECORDING} is missing; see benchmarks/spec_replay.py --export")
    loaded: dict[str, Any] = json.loads(RECORDING.read_text())
    return loaded


def recorded(data: dict[str, Any], kernel: str) -> Recorded2D:
    params = data["space"]["parameters"]
    space = EnumeratedSpace(params, data["space"]["rows"], env=data["sizes"])
    entry = data["kernels"][kernel]
    results = [Result.from_dict(r) for r in entry["results"]]
    return Recorded2D(space, dict(data["sizes"]), dict(entry["default"]), results)


def replay(spec: str, case: Recorded2D, budget: int | None) -> tuple[TuningOutcome, int]:
    """The search as ``gtune run`` drives it: the default measured first, the spec's
    search started from it. Returns the outcome and how many asked were unrecorded."""
    evaluator = ReplayEvaluator(case.results, source=str(RECORDING), unrecorded="fail")
    strategy = get_strategy("grouped", {"spec": spec})
    problem = SearchProblem(sizes=case.sizes, default=case.default)
    inner = strategy.searcher(case.space, problem, strategy.configure(None))
    searcher = Seeded(inner, case.default)
    outcome = drive(
        searcher,
        evaluator,
        strategy=spec,
        budget=None if budget is None else Budget(evaluations=budget),
        space=case.space,
    )
    return outcome, len(evaluator.unrecorded_calls)


@pytest.mark.parametrize("kernel", KERNELS)
def test_small_budget_reaches_the_recorded_best(data: dict[str, Any], kernel: str) -> None:
    case = recorded(data, kernel)
    outcome, unrecorded = replay("hybrid", case, SMALL)
    assert outcome.evaluations == SMALL
    # the replay answers what it asks: otherwise this test would say nothing
    assert unrecorded <= SMALL // 10
    assert case.best_s / outcome.best_s >= 0.95


@pytest.mark.parametrize("kernel", KERNELS)
def test_x_and_y_are_both_tuned_within_a_small_budget(data: dict[str, Any], kernel: str) -> None:
    """Merging in y (rows reused) matters on 2D arrays as much as the x tile: a budget of
    60 must reach the y group, not end inside an x group of whole-row merges."""
    outcome, _ = replay("hybrid", recorded(data, kernel), SMALL)
    measured = [s.step for s in outcome.steps if s.evaluated]
    assert "x" in measured and "y" in measured
    before, _ = replay(str(BEFORE), recorded(data, kernel), SMALL)
    assert "y" not in [s.step for s in before.steps if s.evaluated]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("budget", [SMALL, None])
def test_bounds_are_never_worse_than_before(
    data: dict[str, Any], kernel: str, budget: int | None
) -> None:
    case = recorded(data, kernel)
    after, _ = replay("hybrid", case, budget)
    before, _ = replay(str(BEFORE), case, budget)
    assert after.best_s <= before.best_s
    if budget is None:  # and the default budget ends sooner
        assert after.evaluations < before.evaluations
