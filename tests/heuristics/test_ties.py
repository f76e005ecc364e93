"""Parameters tied one to one (``WX == WY``) move together in grouped searches: the
generic heuristic reaches every legal square work-group and a mode reachable only by
changing two tied parameters at once."""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.budget import Budget
from gtune.heuristics import GroupedSearch, SearchProblem, drive
from gtune.heuristics.grouped import tied_parameters
from gtune.heuristics.strategies.generic import generic_spec
from gtune.measure import Result, Status
from gtune.measure.evaluator import EvaluatorBase
from gtune.space.enumerated import EnumeratedSpace

PARAMS = ["WX", "WY", "MODE_A", "MODE_B", "U"]


def _space() -> EnumeratedSpace:
    rows = [
        (wx, wy, a, b, u)
        for wx, wy, a, b, u in itertools.product([1, 2, 4, 8], [1, 2, 4, 8], [0, 1], [0, 1], [1, 2])
        if wx == wy and a == b
    ]
    return EnumeratedSpace(PARAMS, rows)


class Cost(EvaluatorBase):
    """A made-up cost with its minimum at the largest square group in mode 1."""

    def __init__(self) -> None:
        self.seen: list[dict[str, int]] = []

    def evaluate(self, config: Mapping[str, int]) -> Result:
        self.seen.append(dict(config))
        t = 1.0 / config["WX"] + (0.0 if config["MODE_A"] else 1.0) + 0.01 * config["U"]
        return Result(dict(config), Status.OK, times_s=(t,))


def test_one_to_one_ties_are_found():
    ties = tied_parameters(_space())
    assert ties == {"WX": ["WY"], "WY": ["WX"], "MODE_A": ["MODE_B"], "MODE_B": ["MODE_A"]}
    free = EnumeratedSpace(["WX", "WY"], list(itertools.product([1, 2], [1, 2])))
    assert tied_parameters(free) == {}
    doubled = EnumeratedSpace(["WX", "TS"], [(1, 2), (2, 4), (4, 8)])
    assert tied_parameters(doubled) == {"WX": ["TS"], "TS": ["WX"]}


def test_generic_search_moves_tied_parameters_together():
    space = _space()
    spec = generic_spec(PARAMS, ["WX", "WY"]).bind(PARAMS, {"NX": 8, "NY": 8})
    searcher = GroupedSearch(spec, space, SearchProblem(sizes={"NX": 8, "NY": 8}))
    cost = Cost()
    outcome = drive(searcher, cost, strategy="generic", budget=Budget.parse("40"), space=space)
    squares = {c["WX"] for c in cost.seen}
    assert squares == {1, 2, 4, 8}  # every legal square group, not just the first
    assert {c["MODE_A"] for c in cost.seen} == {0, 1}
    assert outcome.best_config == {"WX": 8, "WY": 8, "MODE_A": 1, "MODE_B": 1, "U": 1}
    assert any("move together: MODE_A, MODE_B; WX, WY" in n for n in searcher.notes)


def _tied_by_sets(params: list[str], rows: list[tuple[int, ...]]) -> dict[str, list[str]]:
    """The definition, pair by pair with Python sets: a and b tied when each value of
    one goes with exactly one value of the other (both ways); groups joined through
    shared members."""
    cols = list(zip(*rows, strict=True))
    varying = [i for i in range(len(params)) if len(set(cols[i])) > 1]
    group = {i: {i} for i in varying}
    for a, b in itertools.combinations(varying, 2):
        pairs = set(zip(cols[a], cols[b], strict=True))
        if len(pairs) == len(set(cols[a])) == len(set(cols[b])):
            joined = group[a] | group[b]
            for k in joined:
                group[k] = joined
    return {
        params[i]: [params[j] for j in varying if j != i and j in group[i]]
        for i in varying
        if len(group[i]) > 1
    }


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.integers(-2, 2),
            st.sampled_from([1, 2, 4, 1 << 30]),  # a value range too wide to count
            st.integers(0, 1),
        ),
        min_size=2,
        max_size=40,
    ),
    st.sampled_from(["copy", "double", "shifted", "none"]),
)
def test_ties_agree_with_the_definition_on_random_spaces(
    base: list[tuple[int, int, int, int]], tie: str
) -> None:
    """Random spaces, with a column derived one to one from another (or not): the
    counting and sorting paths agree with a pair-by-pair check."""
    derived = {
        "copy": lambda r: r[0],
        "double": lambda r: 2 * r[2],
        "shifted": lambda r: r[1] - 7,
        "none": lambda r: r[0] // 2,
    }[tie]
    rows = [(*r, derived(r)) for r in base]
    params = ["A", "B", "C", "D", "E"]
    got = tied_parameters(EnumeratedSpace(params, rows))
    want = _tied_by_sets(params, rows)
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
