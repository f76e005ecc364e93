"""A spec's ``converge``: more rounds for a search still gaining, on real recorded timings.

The recording (heat3d at 16x4x4 on PoCL, every valid configuration) is replayed; a
spec whose one step moves a parameter by at most a factor 2 walks one power of two per
round, so it is still gaining when its rounds run out: the case ``converge`` is for.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from gtune.exceptions import InputError
from gtune.heuristics import HeuristicSpec, TuningOutcome, load_spec, parse_spec, tune

from .conftest import Recorded

WALK = """
repeat: 0
start: {WX: 1, WY: 1, WZ: 1}
steps:
  - {name: walk x, tune: {WX: 'best.WX:best.WX*2:*2'}}
  - {name: walk y, tune: {WY: 'best.WY:best.WY*2:*2'}}
"""


def walk(converge: str = "") -> HeuristicSpec:
    return parse_spec(yaml.safe_load(WALK + converge), "walk.yaml")


def run(recorded: Recorded, spec: HeuristicSpec | str) -> TuningOutcome:
    options: dict[str, Any] = {"spec": spec}
    return tune(
        "grouped", recorded.space("global"), recorded.replay(), recorded.problem(), options=options
    )


def best_by_round(outcome: TuningOutcome) -> list[float]:
    """The best time known at the end of each round the search ran (from its steps),
    from the trace (a round that measured nothing new keeps the best before it)."""
    rounds = sorted({s.round for s in outcome.steps if s.round >= 0})
    ends: list[float] = []
    for r in rounds:
        known = [e.result.objective for e in outcome.trace if e.result.ok and e.round <= r]
        ends.append(min(known))
    return ends


def first_known(outcome: TuningOutcome) -> float:
    return next(e.result.objective for e in outcome.trace if e.result.ok)


def test_a_round_is_added_only_after_a_round_that_gained(recorded: Recorded) -> None:
    gain = 0.01
    outcome = run(recorded, walk(f"converge: {{gain: {gain}, rounds: 8}}\n"))
    ends = best_by_round(outcome)
    assert len(ends) > 1, "the walk is still gaining after its one round"
    starts = [first_known(outcome), *ends[:-1]]
    for r in range(1, len(ends)):  # every added round followed one that gained enough
        assert starts[r - 1] / ends[r - 1] - 1 >= gain
    added = [n for n in outcome.notes if "added" in n]
    assert len(added) == len(ends) - 1
    assert all("converge" in n for n in added)
    last_gain = starts[-1] / ends[-1] - 1
    assert len(ends) == 9 or last_gain < gain or any("did not change" in n for n in outcome.notes)


def test_converge_only_adds_rounds(recorded: Recorded) -> None:
    without = run(recorded, walk())
    with_it = run(recorded, walk("converge: {gain: 0.01, rounds: 8}\n"))
    configs = [e.config for e in with_it.trace]
    assert [e.config for e in without.trace] == configs[: len(without.trace)]
    assert len(configs) > len(without.trace)
    assert with_it.best_result is not None and without.best_result is not None
    assert with_it.best_result.objective <= without.best_result.objective


def test_the_added_rounds_are_capped(recorded: Recorded) -> None:
    capped = run(recorded, walk("converge: {gain: 0.0001, rounds: 1}\n"))
    assert len(best_by_round(capped)) <= 2


def test_a_gain_no_round_reaches_changes_nothing(recorded: Recorded) -> None:
    plain = run(recorded, walk())
    strict = run(recorded, walk("converge: {gain: 1000, rounds: 8}\n"))
    assert [e.config for e in strict.trace] == [e.config for e in plain.trace]
    assert not any("added" in n for n in strict.notes)


def test_the_shipped_hybrid_with_converge_extends_its_search_without_it(
    recorded: Recorded,
) -> None:
    shipped = load_spec("hybrid")
    assert shipped.converge is not None
    bare = dataclasses.replace(shipped, converge=None)
    a, b = run(recorded, shipped), run(recorded, bare)
    assert [e.config for e in a.trace][: len(b.trace)] == [e.config for e in b.trace]
    assert a.best_result is not None and b.best_result is not None
    assert a.best_result.objective <= b.best_result.objective


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("converge: 2\n", "must be a mapping"),
        ("converge: {gain: 0.02}\n", "must be a mapping"),
        ("converge: {gain: 0, rounds: 2}\n", "positive fraction"),
        ("converge: {gain: -0.5, rounds: 2}\n", "positive fraction"),
        ("converge: {gain: .inf, rounds: 2}\n", "positive fraction"),
        ("converge: {gain: .nan, rounds: 2}\n", "positive fraction"),
        ("converge: {gain: true, rounds: 2}\n", "positive fraction"),
        ("converge: {gain: '2%', rounds: 2}\n", "positive fraction"),
        ("converge: {gain: 0.02, rounds: 0}\n", "converge.rounds"),
        ("converge: {gain: 0.02, rounds: 2, until: 5}\n", "unknown key"),
    ],
)
def test_a_bad_converge_names_the_key(text: str, why: str) -> None:
    with pytest.raises(InputError) as err:
        walk(text)
    assert why in str(err.value)
    assert "walk.yaml: converge" in str(err.value)
