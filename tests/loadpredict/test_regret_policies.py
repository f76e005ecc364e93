"""benchmarks/predict/regret.py's scout policies on made-up traces: the scout as the
driver ran it before (a share of the first choice's length) against a share of the
runner-up's own, estimated from training kernels."""

from __future__ import annotations

import math
from pathlib import Path

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
regret = load_script(ROOT / "benchmarks" / "predict" / "regret.py")


def trace(times: list[float]) -> object:
    return regret.Trace(times, [1.0] * len(times))


def kernel() -> dict[str, object]:
    """vec: 100 configurations, from 1.6 to its best 1.0; stream: 25, from 1.6 to 1.2
    (vec wins; at 20 % of each one's search vec leads, 1.48 against 1.53)."""
    vec = [1.6 - 0.6 * i / 99 for i in range(100)]
    stream = [1.6 - 0.4 * i / 24 for i in range(25)]
    return {"vec": trace(vec), "stream": trace(stream)}


def fold(traces: list[dict[str, object]]) -> object:
    f = object.__new__(regret.Fold)  # the lengths and gains only: no forest
    f.traces = traces
    return f


def test_a_share_of_the_first_choices_length_scouts_most_of_the_runner_up() -> None:
    tr = kernel()
    best, cost, what = regret.hedge_first_length(tr, "vec", "stream", 0.2)
    # 20 stream configurations (of 25) against vec's first 20: stream "leads", and is
    # searched to its end for nothing
    assert what == "vec+stream" and math.isclose(best, 1.0) and cost == 125


def test_a_share_of_the_runner_ups_own_length_compares_equal_progress() -> None:
    tr = kernel()
    f = fold([kernel(), kernel()])
    assert math.isclose(f.length_ratio("vec", "stream"), 0.25)
    best, cost, what = regret.hedge_estimated(tr, "vec", "stream", 0.2, f, least=1)
    # 5 stream configurations (20 % of its 25) against vec's first 20: vec leads
    assert what == "vec+stream[5]" and math.isclose(best, 1.0) and cost == 105
    # as gtune run scouts: never fewer than SCOUT_MIN (60, more than stream's 25: its
    # whole search, which leads vec's first 20 and is "continued" at no further cost)
    assert regret.SCOUT_MIN == 60
    best, cost, what = regret.hedge_estimated(tr, "vec", "stream", 0.2, f)
    assert what == "vec+stream" and math.isclose(best, 1.0) and cost == 125
    # at 10 (1.45 after 10, against vec's 1.485 after 20) stream leads too
    best, cost, what = regret.hedge_estimated(tr, "vec", "stream", 0.2, f, least=10)
    assert what == "vec+stream" and cost == 125
    # what stream still gains after 20 % of its search, as the training kernels show
    assert math.isclose(f.gain("stream", 0.2), 1.2 / (1.6 - 0.4 * 4 / 24))


def test_the_runner_ups_own_length_needs_nothing_of_the_first_choices_end() -> None:
    """``even-own``: the scout's length from the runner-up's own training searches (their
    median), so it is the same however long the first choice's search turns out."""
    f = fold([kernel(), kernel(), {"vec": trace([1.0] * 10), "stream": trace([1.0] * 75)}])
    short = {"vec": trace([1.6 - 0.6 * i / 39 for i in range(40)]), "stream": kernel()["stream"]}
    # stream's training lengths 25, 25, 75: median 25, 20 % of it 5
    for tr in (kernel(), short):
        best, cost, what = regret.hedge_own_length(tr, "vec", "stream", 0.2, f, least=1)
        assert what == "vec+stream[5]" and math.isclose(best, 1.0)
        assert cost == len(tr["vec"].times) + 5
    # with the floor, as gtune run would scout it: 60, more than stream's 25: its whole
    # search, which leads vec's first 20 % and is "continued" at no further cost
    best, cost, what = regret.hedge_own_length(kernel(), "vec", "stream", 0.2, f)
    assert what == "vec+stream" and cost == 125
