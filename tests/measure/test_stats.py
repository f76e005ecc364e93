"""Order-statistic intervals of the median and the stopping rule for timing."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gtune.measure.stats import (
    TimingPolicy,
    faster_beyond_noise,
    median_interval,
    relative_halfwidth,
)

times = st.lists(st.floats(min_value=1e-6, max_value=1.0), min_size=1, max_size=60)


@given(times)
def test_interval_contains_the_median_and_lies_in_the_range(xs: list[float]) -> None:
    lo, hi = median_interval(xs)
    assert min(xs) <= lo <= statistics.median(xs) <= hi <= max(xs)


@given(times, st.floats(min_value=0.5, max_value=0.99))
def test_higher_confidence_never_narrows_the_interval(xs: list[float], c: float) -> None:
    lo, hi = median_interval(xs, c)
    lo2, hi2 = median_interval(xs, min(0.999, c + 0.009))
    assert lo2 <= lo and hi <= hi2


def test_coverage_is_at_least_the_confidence() -> None:
    # Empirical coverage over skewed (log-normal) samples with a known median of 1.
    rng = random.Random(7)
    hits = 0
    trials = 2000
    for _ in range(trials):
        xs = [rng.lognormvariate(0.0, 0.5) for _ in range(15)]
        lo, hi = median_interval(xs, 0.9)
        hits += lo <= 1.0 <= hi
    assert hits / trials >= 0.88


def test_three_agreeing_runs_are_enough_and_a_wide_spread_is_not() -> None:
    policy = TimingPolicy(min_runs=3, precision=0.03, max_seconds=10.0)
    assert policy.enough([1.00e-3, 1.01e-3, 1.02e-3])
    spread = [4.64e-3, 2.73e-3, 4.81e-3]
    assert not policy.enough(spread)
    assert not policy.converged(spread)
    assert relative_halfwidth(spread) > 0.2


def test_caps_stop_timing_without_claiming_convergence() -> None:
    policy = TimingPolicy(min_runs=3, max_runs=5, max_seconds=10.0)
    noisy = [1.0, 2.0, 1.0, 2.0, 1.0]
    assert policy.enough(noisy)
    assert not policy.converged(noisy)
    assert TimingPolicy(max_seconds=0.5).enough([0.3, 0.1, 0.2])


def test_policy_rejects_nonsense() -> None:
    for bad in (
        {"min_runs": 0},
        {"min_runs": 5, "max_runs": 3},
        {"precision": math.nan},
        {"max_seconds": -1.0},
        {"confidence": 1.0},
    ):
        with pytest.raises(ValueError):
            TimingPolicy(**bad)  # type: ignore[arg-type]


def test_faster_beyond_noise_needs_separated_intervals() -> None:
    fast = [1.0, 1.01, 0.99, 1.0, 1.02, 1.0]
    slow = [2.0, 2.02, 1.99, 2.0, 2.01, 2.0]
    overlapping = [0.9, 1.5, 1.1, 1.3, 0.95, 1.2]
    assert faster_beyond_noise(fast, slow)
    assert not faster_beyond_noise(slow, fast)
    assert not faster_beyond_noise(fast, overlapping)
    assert not faster_beyond_noise([], slow)


@pytest.mark.parametrize("n", [1023, 1024, 1025, 5000])
def test_many_runs_give_an_interval_not_an_overflow(n: int) -> None:
    rng = random.Random(n)
    xs = [1.0 + rng.random() for _ in range(n)]
    lo, hi = median_interval(xs)
    assert lo <= statistics.median(xs) <= hi
    assert hi - lo < 0.2  # thousands of runs pin the median down
    assert TimingPolicy(n, n).enough(xs)
    assert math.isfinite(relative_halfwidth(xs))


def test_the_order_statistics_match_the_binomial_sums() -> None:
    """The running sum agrees with the direct one where floats suffice."""
    from gtune.measure.stats import _binom_cdf_half

    for n in (5, 17, 60):
        xs = list(range(n))
        lo, _ = median_interval(xs)
        k = lo + 1  # 1-based rank of the lower end
        assert 1.0 - 2.0 * _binom_cdf_half(k - 1, n) >= 0.95 or k == 1
        assert k == n // 2 or 1.0 - 2.0 * _binom_cdf_half(k, n) < 0.95


def test_interval_coverage_is_what_the_runs_give():
    from gtune.measure.stats import interval_coverage

    assert interval_coverage(3, 0.95) == pytest.approx(0.75)  # min-max of three runs
    assert interval_coverage(5, 0.95) == pytest.approx(1 - 2 / 32)
    assert interval_coverage(6, 0.95) == pytest.approx(1 - 2 / 64)  # still min-max, enough
    assert interval_coverage(30, 0.95) >= 0.95
    assert interval_coverage(0, 0.95) == 0.0
