"""The confirmation round weighs every round the same (issue 26, Table 3 at scale).

On one H100 a burst of interference slowed the third of three rounds; the timing rule
took 25 runs there and 3 in each quiet round, and the pooled median (79 µs) came from
the disturbed round while the search and the two quiet rounds said 52 µs. The fixture
holds those recorded times, split into rounds.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.kernel import canonical_config
from gtune.measure import OpenCLEvaluator, select_device
from gtune.measure.evaluator import EvaluatorBase
from gtune.measure.stats import faster_beyond_noise
from gtune.result import Result, Status
from gtune.tuning.confirm import (
    Confirmation,
    ConfirmedConfig,
    ConfirmPolicy,
    confirm,
    side_by_side,
)
from tests.conftest import DATA, ROOT

RECORD = json.loads((DATA / "confirm_h100_dense_1d_y_r4.json").read_text())


class RoundsEvaluator(EvaluatorBase):
    """Answers each configuration with its next round of recorded times; past the
    recording, its quiet rounds again (the device quiet once more)."""

    def __init__(self, entries: list[dict[str, Any]], quiet: dict[str, list[list[float]]]):
        self.rounds = {canonical_config(e["config"]): list(e["rounds_s"]) for e in entries}
        self.quiet = quiet
        self.calls = 0

    def evaluate(self, config: Mapping[str, int]) -> Result:
        self.calls += 1
        key = canonical_config(config)
        left = self.rounds[key]
        times = left.pop(0) if left else self.quiet[key][self.calls % len(self.quiet[key])]
        return Result(dict(config), Status.OK, 0.0, tuple(times))


def _quiet_rounds(entry: dict[str, Any]) -> list[list[float]]:
    """The rounds whose median lies within 5 % of the entry's fastest round median."""
    meds = [statistics.median(r) for r in entry["rounds_s"]]
    return [r for r, m in zip(entry["rounds_s"], meds, strict=True) if m <= 1.05 * min(meds)]


def _candidates() -> list[Result]:
    return [Result(dict(e["config"]), Status.OK, 0.0, (e["search_s"],)) for e in RECORD["entries"]]


def _evaluator() -> RoundsEvaluator:
    entries = RECORD["entries"]
    quiet = {canonical_config(e["config"]): _quiet_rounds(e) for e in entries}
    return RoundsEvaluator(entries, quiet)


def test_the_fixture_holds_a_round_that_outvotes_the_quiet_ones() -> None:
    first = RECORD["entries"][0]
    pooled = statistics.median([t for r in first["rounds_s"] for t in r])
    assert pooled == pytest.approx(first["pooled_median_s"])
    assert pooled > 1.3 * first["search_s"]
    sizes = [len(r) for r in first["rounds_s"]]
    assert max(sizes) > 3 * min(sizes), "the disturbed round took many more runs"


def test_a_disturbed_round_does_not_outvote_the_quiet_ones() -> None:
    policy = ConfirmPolicy(candidates=3, rounds=3, extra_rounds=0)
    out = confirm(_candidates(), None, _evaluator(), policy)
    assert out.rounds_done == 3
    for entry, rec in zip(out.entries, RECORD["entries"], strict=True):
        assert entry.round_sizes == [len(r) for r in rec["rounds_s"]]
        quiet = [t for r in _quiet_rounds(rec) for t in r]
        assert min(quiet) <= entry.median_s <= max(quiet)
        lo, hi = entry.interval(policy.confidence)
        assert lo <= entry.median_s <= hi
        # the sample takes as many runs from each round
        assert len(entry.sample) == len(entry.round_sizes) * min(entry.round_sizes)
        assert entry.result().median_s == pytest.approx(entry.median_s)
    # the best is the configuration with the fastest quiet rounds, not the one the
    # disturbed round spared
    fastest = min(
        RECORD["entries"],
        key=lambda e: statistics.median([statistics.median(r) for r in _quiet_rounds(e)]),
    )
    assert out.best is not None and out.best.config == fastest["config"]


def test_rounds_that_disagree_get_more_rounds() -> None:
    policy = ConfirmPolicy(candidates=3, rounds=3)
    out = confirm(_candidates(), None, _evaluator(), policy)
    assert out.rounds_done == policy.rounds + policy.extra_rounds
    assert any("rounds disagreed" in n for n in out.notes)
    first = out.entries[0]
    assert len(first.round_sizes) == 5
    # three of five rounds quiet: the median of the round medians is a quiet one
    quiet = [statistics.median(r) for r in _quiet_rounds(RECORD["entries"][0])]
    assert statistics.median(first.round_medians_s) <= max(quiet)
    assert first.median_s <= 1.05 * min(quiet)


def test_rounds_that_agree_get_no_more() -> None:
    quiet_only = [{**e, "rounds_s": (_quiet_rounds(e) * 3)[:3]} for e in RECORD["entries"]]
    ev = RoundsEvaluator(
        quiet_only, {canonical_config(e["config"]): e["rounds_s"] for e in quiet_only}
    )
    out = confirm(_candidates(), None, ev, ConfirmPolicy(candidates=3, rounds=3))
    assert out.rounds_done == 3 and not out.notes
    assert all(e.spread <= 0.05 for e in out.entries)


def test_more_rounds_only_where_the_time_left_holds_them() -> None:
    left = [9 + 3]  # room for the three rounds and one more of three configurations

    def room() -> int:
        return left[0]

    class Counting(RoundsEvaluator):
        def evaluate(self, config: Mapping[str, int]) -> Result:
            left[0] -= 1
            return super().evaluate(config)

    base = _evaluator()
    ev = Counting(RECORD["entries"], base.quiet)
    out = confirm(_candidates(), None, ev, ConfirmPolicy(candidates=3, rounds=3), room=room)
    assert out.rounds_done == 4
    assert any("no time for more rounds" in n for n in out.notes)


def test_entries_without_rounds_use_every_time() -> None:
    e = ConfirmedConfig({"WX": 1}, times_s=[3.0, 1.0, 2.0])
    assert e.sample == [3.0, 1.0, 2.0] and e.median_s == 2.0 and e.spread == 0.0
    e = ConfirmedConfig(
        {"WX": 1}, times_s=[1.0, 1.1, 5.0, 5.0, 5.0, 5.0, 1.2], round_sizes=[2, 4, 1]
    )
    assert e.by_round() == [[1.0, 1.1], [5.0, 5.0, 5.0, 5.0], [1.2]]
    assert e.sample == [1.0, 5.0, 1.2] and e.median_s == 1.2
    assert e.to_dict(0.95)["round_sizes"] == [2, 4, 1]


# each round's slowdown by other work on the machine: the burst rounds slow both
# configurations of the round alike
LOADS = [1.0, 3.0, 1.0, 2.5, 1.0, 4.0, 1.2, 1.5, 3.0]


def _loaded(per_run_s: float, loads: list[float], *, default: bool = False) -> ConfirmedConfig:
    """Three runs a round at ``per_run_s`` times each round's load."""
    times = [per_run_s * load * f for load in loads for f in (0.98, 1.0, 1.02)]
    return ConfirmedConfig(
        {"WX": 1 if default else 8}, is_default=default, times_s=times,
        round_sizes=[3] * len(loads), rounds=len(loads),
    )  # fmt: skip


def test_a_speedup_in_every_round_is_significant_though_bursts_blur_the_pools() -> None:
    best, default = _loaded(1.0, LOADS), _loaded(1.75, LOADS, default=True)
    c = Confirmation([default, best], confidence=0.95, rounds_done=len(LOADS))
    # pooled, the burst rounds of the best reach into the default's quiet ones
    assert not faster_beyond_noise(best.sample, default.sample, 0.95)
    assert c.round_speedups == pytest.approx([1.75] * len(LOADS))
    assert c.significant and c.coverage >= 0.95
    interval = c.speedup_interval
    assert interval is not None and interval[0] == pytest.approx(1.75)
    assert "1.75x faster than the default" in c.verdict


def test_a_speedup_in_half_the_rounds_is_not() -> None:
    best = _loaded(1.0, LOADS)
    # the default as fast as the best in four of the nine rounds
    default_loads = [load * (1.75 if i % 2 == 0 else 0.9) for i, load in enumerate(LOADS)]
    default = _loaded(1.0, default_loads, default=True)
    c = Confirmation([default, best], confidence=0.95, rounds_done=len(LOADS))
    speedups = c.round_speedups
    assert speedups is not None and sum(s > 1.0 for s in speedups) == 5
    assert not c.significant and "no significant speedup" in c.verdict


def test_too_few_rounds_to_pair_leave_the_pooled_intervals_to_decide() -> None:
    loads = LOADS[:5]  # five rounds: 94 % at most from their ratios
    best, default = _loaded(1.0, loads), _loaded(1.75, loads, default=True)
    c = Confirmation([default, best], confidence=0.95, rounds_done=len(loads))
    assert c.round_speedups is None
    assert c.significant == faster_beyond_noise(best.sample, default.sample, 0.95)


@given(
    loads=st.lists(st.floats(0.5, 5.0), min_size=6, max_size=20),
    speedup=st.floats(1.01, 3.0),
)
def test_a_best_faster_in_every_round_is_significant(loads: list[float], speedup: float) -> None:
    best, default = _loaded(1.0, loads), _loaded(speedup, loads, default=True)
    c = Confirmation([default, best], confidence=0.95, rounds_done=len(loads))
    assert c.significant
    interval = c.speedup_interval
    assert interval is not None and interval[0] > 1.0


@given(loads=st.lists(st.floats(0.5, 5.0), min_size=6, max_size=20), flip=st.data())
def test_a_best_slower_in_half_the_rounds_never_is(loads: list[float], flip: st.DataObject) -> None:
    n = len(loads)
    slower = set(flip.draw(st.lists(st.integers(0, n - 1), min_size=n // 2, unique=True)))
    default_loads = [load * (0.8 if i in slower else 1.5) for i, load in enumerate(loads)]
    best, default = _loaded(1.0, loads), _loaded(1.0, default_loads, default=True)
    c = Confirmation([default, best], confidence=0.95, rounds_done=n)
    assert not c.significant


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [({"extra_rounds": -1}, "extra confirmation rounds"), ({"agreement": 0.0}, "agreement")],
)
def test_policy_refuses_bad_values(kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        ConfirmPolicy(**kwargs)


@pytest.mark.opencl
def test_side_by_side_on_pocl_keeps_its_rounds(tmp_path: Path) -> None:
    kernel = load_kernel(ROOT / "stencils" / "heat3d.cl", {"NX": 16, "NY": 8, "NZ": 8})
    default = kernel.default_config()
    assert default is not None
    other = dict(default)
    other["WX"] = 1 if default["WX"] != 1 else 2
    policy = ConfirmPolicy(rounds=3)
    with OpenCLEvaluator(kernel, select_device(None), compile_workers=0) as ev:
        winners = {
            "a": Result(dict(default), Status.OK, 0.0, (1.0,)),
            "b": Result(other, Status.OK, 0.0, (1.0,)),
        }
        out, mine = side_by_side(winners, ev, policy)
    assert out.rounds_done >= policy.rounds
    assert out.rounds_done <= policy.rounds + policy.extra_rounds
    for entry in mine.values():
        assert entry.ok, entry.message
        assert len(entry.round_sizes) == out.rounds_done
        assert sum(entry.round_sizes) == len(entry.times_s)
        assert min(entry.times_s) <= entry.median_s <= max(entry.times_s)
        spread_ok = entry.spread <= policy.agreement
        assert spread_ok or out.rounds_done == policy.rounds + policy.extra_rounds
