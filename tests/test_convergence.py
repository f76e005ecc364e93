"""Best-so-far traces, the calculated random baseline and the score (pure maths)."""

from __future__ import annotations

import itertools
import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.convergence import RandomBaseline, Trace, expected_best_of, score, summary

times = st.lists(
    st.one_of(st.floats(1e-6, 1e-2, allow_nan=False), st.just(math.inf)), min_size=1, max_size=7
)


@given(times, st.integers(1, 8))
@settings(max_examples=200, deadline=None)
def test_expected_best_matches_enumerating_every_draw(values: list[float], k: int) -> None:
    kk = min(k, len(values))
    draws = [min(c) for c in itertools.combinations(values, kk)]
    brute = math.inf if any(math.isinf(d) for d in draws) else statistics.fmean(draws)
    got = expected_best_of(values, k)
    if math.isinf(brute):
        assert math.isinf(got)
    else:
        assert got == pytest.approx(brute, rel=1e-9)


@given(times, st.integers(1, 4))
@settings(max_examples=200, deadline=None)
def test_with_replacement_matches_enumerating_every_draw(values: list[float], k: int) -> None:
    draws = [min(c) for c in itertools.product(values, repeat=k)]
    brute = math.inf if any(math.isinf(d) for d in draws) else statistics.fmean(draws)
    got = expected_best_of(values, k, replace=True)
    if math.isinf(brute):
        assert math.isinf(got)
    else:
        assert got == pytest.approx(brute, rel=1e-9)


def test_a_sample_baseline_never_claims_the_sample_best_as_certain() -> None:
    sample = [float(v) for v in range(1, 61)]
    assert RandomBaseline(sample, 1.0, whole_space=True).after_evaluations(60) == 1.0
    assert RandomBaseline(sample, 1.0).after_evaluations(60) > 1.0


@given(st.lists(st.floats(1e-6, 1.0, allow_nan=False), min_size=2, max_size=60))
def test_expected_best_falls_with_more_draws_from_mean_to_minimum(values: list[float]) -> None:
    series = [expected_best_of(values, k) for k in range(1, len(values) + 1)]
    assert series[0] == pytest.approx(statistics.fmean(values))
    assert series[-1] == pytest.approx(min(values))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(series))


def test_large_samples_stay_finite_and_exact_at_the_ends() -> None:
    values = [1.0 + i / 1000 for i in range(5000)]
    assert expected_best_of(values, 1) == pytest.approx(statistics.fmean(values))
    assert expected_best_of(values, 5000) == 1.0
    # the minimum rank of k draws from 1..N has mean (N + 1) / (k + 1)
    assert expected_best_of(values, 100) == pytest.approx(1.0 + (5001 / 101 - 1) / 1000)


def _trace(name: str, points: list[tuple[float, float]]) -> Trace:
    t = Trace(name)
    for s, v in points:
        t.add(s, v, {"X": int(s * 10)})
    return t


def test_trace_targets_and_round_trip() -> None:
    t = _trace("a", [(0.5, 3.0), (1.0, math.inf), (1.5, 2.0), (2.0, 1.0)])
    assert [b for _, _, b in t.best_so_far()] == [3.0, 3.0, 2.0, 1.0]
    assert t.evaluations_to(2.0) == 3 and t.seconds_to(2.0) == 1.5
    assert t.evaluations_to(0.5) is None and t.seconds_to(0.5) is None
    assert t.best_at(1.2) == 3.0 and t.best_after_evaluations(0) == math.inf
    assert t.best_config == {"X": 20}
    back = Trace.from_dict(t.to_dict())
    assert back.best_so_far() == t.best_so_far() and back.best_config == t.best_config


def test_bad_observations_are_refused() -> None:
    with pytest.raises(ValueError):
        Trace("x").add(-1.0, 1.0)
    with pytest.raises(ValueError):
        Trace("x").add(1.0, math.nan)
    with pytest.raises(ValueError):
        RandomBaseline([], 1.0)


def test_score_is_one_for_the_optimum_and_zero_for_the_baseline() -> None:
    sample = [float(v) for v in range(1, 101)]
    base = RandomBaseline(sample, seconds_per_evaluation=1.0, whole_space=True)
    perfect = _trace("perfect", [(0.0, 1.0)] + [(float(s), 5.0) for s in range(1, 50)])
    assert score(perfect, base, 1.0, 50.0) == pytest.approx(1.0)
    # a tracer that always has exactly the baseline's expected best
    same = Trace("same")
    for s in range(1, 51):
        same.add(float(s), base.after_evaluations(s))
    assert score(same, base, 1.0, 50.0) == pytest.approx(0.0, abs=1e-9)
    assert score(same, base, 1.0, 50.0, axis="evaluations", points=50) == pytest.approx(
        0.0, abs=1e-9
    )
    worse = _trace("worse", [(float(s), 100.0) for s in range(1, 51)])
    assert score(worse, base, 1.0, 50.0) < 0


def test_a_tuner_with_nothing_yet_counts_as_one_random_draw() -> None:
    base = RandomBaseline([1.0, 2.0, 3.0], seconds_per_evaluation=10.0, whole_space=True)
    late = _trace("late", [(25.0, 1.0)])
    # before 25 s: credited with the mean (2.0) while the baseline expects 2.0 then 1.33
    got = score(late, base, 1.0, 30.0, points=3)
    b20 = base.after_evaluations(2)
    assert got == pytest.approx(((2 - 2) / 1 + (b20 - max(2.0, b20)) / (b20 - 1) + 0) / 2)


def test_summary_reports_targets_against_the_best_known() -> None:
    sample = [float(v) for v in range(10, 30)]
    rand = _trace("random", [(float(i + 1), v) for i, v in enumerate(sample)])
    fast = _trace("fast", [(1.0, 12.0), (2.0, 10.0), (3.0, 9.5)])
    rows = {r["tuner"]: r for r in summary([rand, fast], RandomBaseline.from_trace(rand))}
    assert rows["fast"]["best_s"] == 9.5
    assert rows["fast"]["evaluations_to_target"] == 2  # 10.0 <= 9.5 / 0.95
    assert rows["random"]["evaluations_to_target"] == 1
    assert rows["fast"]["score_time"] > rows["random"]["score_time"]
