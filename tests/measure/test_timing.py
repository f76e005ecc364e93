"""Adaptive timing on a real device (PoCL in CI): how many runs, what is kept, no
ordering bias, and where the time went."""

from __future__ import annotations

import math

import pytest

from gtune.description import load_kernel
from gtune.measure import OpenCLEvaluator, Status
from gtune.measure.stats import TimingPolicy, median_interval

pytestmark = pytest.mark.opencl

GOOD = {"WX": 8, "WY": 4, "WZ": 1}


def test_fixed_runs_are_exactly_that_many(data_dir):
    with OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), runs=4, compile_workers=0) as ev:
        r = ev.evaluate(GOOD)
    assert r.status is Status.OK, r.message
    assert len(r.times_s) == 4
    assert r.extra["timing"]["runs"] == 4


def test_adaptive_timing_stops_by_the_policy(data_dir):
    policy = TimingPolicy(min_runs=3, max_runs=9, max_seconds=5.0, precision=0.03)
    kernel = load_kernel(data_dir / "naive7.cl")
    with OpenCLEvaluator(kernel, timing=policy, compile_workers=0) as ev:
        results = [ev.evaluate(GOOD), ev.evaluate({"WX": 4, "WY": 4, "WZ": 1})]
        timed, unconverged = ev.timed, ev.unconverged
    for r in results:
        assert r.status is Status.OK, r.message
        timing = r.extra["timing"]
        assert timing["runs"] == len(r.times_s)
        assert 3 <= len(r.times_s) <= 9
        assert timing["converged"] == policy.converged(r.times_s)
        assert math.isfinite(timing["halfwidth"]) and timing["halfwidth"] >= 0
        # stopped as soon as the policy allowed, not later
        assert policy.enough(r.times_s)
        assert not policy.enough(r.times_s[:-1])
    assert timed == 2
    assert unconverged == sum(not r.extra["timing"]["converged"] for r in results)


def test_time_breakdown_is_reported(data_dir):
    with OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), runs=3, compile_workers=0) as ev:
        r = ev.evaluate(GOOD)
    assert r.status is Status.OK, r.message
    for key in ("warmup_s", "verify_s", "worker_s", "launch_compile_s"):
        assert r.extra[key] >= 0, key
    # the parts measured inside the worker fit inside the worker's own time
    parts = r.compile_s + r.run_s + r.extra["warmup_s"] + r.extra["verify_s"]
    assert parts <= r.extra["worker_s"] * 1.05 + 1e-3


def _first_and_later(kernel, policy):
    """The same configuration timed first, by a fresh evaluator, and again after each of
    five others: (the first's median interval, the later ones' intervals)."""
    with OpenCLEvaluator(kernel, timing=policy, compile_workers=0) as ev:
        first = ev.evaluate(GOOD)
        later = []
        for wx in (4, 16, 2, 32, 1):
            ev.evaluate({"WX": wx, "WY": 4, "WZ": 1})
            later.append(ev.evaluate(GOOD))
    assert first.ok and all(r.ok for r in later)
    return median_interval(first.times_s), [median_interval(r.times_s) for r in later]


def test_first_configuration_is_not_slower(data_dir):
    """The same configuration measured first and again after others: the first is not
    slower, its median's interval reaching down into those of the later ones (taken
    together, so that one burst of load from elsewhere on the machine does not decide).

    The machine is shared (CI runs two test processes on two cores), and a change of
    load during one attempt moves the later times against the first either way (a CI
    run saw the later ones halve when the other process let go of a core). So up to
    three attempts, each with a fresh evaluator and its own warm-up: what the warm-up
    prevents, a first configuration slower because it came first, would show in every
    attempt; a burst of load does not repeat three times over."""
    kernel = load_kernel(data_dir / "naive7.cl", sizes={"NX": 64, "NY": 64, "NZ": 32})
    policy = TimingPolicy(min_runs=15, max_runs=15, max_seconds=10.0)
    seen = []
    for _ in range(3):
        (lo1, _), intervals = _first_and_later(kernel, policy)
        hi2 = max(hi for _, hi in intervals)
        if lo1 <= hi2:
            return
        seen.append((lo1, hi2))
    raise AssertionError(f"the first configuration was slower in every attempt: {seen}")
