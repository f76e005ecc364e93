"""Strategy options with numbers are bounded (gtune/heuristics/strategies/base.py) and a
spec none of whose steps would run is refused (gtune/heuristics/grouped.py): neither is
taken silently."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path

import pytest

from gtune.budget import Budget
from gtune.exceptions import InputError
from gtune.heuristics import GroupedSearch, SearchProblem, drive, parse_spec
from gtune.heuristics.strategies import available_strategies, get_strategy
from gtune.measure import Result, Status
from gtune.measure.evaluator import EvaluatorBase
from gtune.space.enumerated import EnumeratedSpace
from tests.conftest import ROOT
from tests.inprocess import Cli


@pytest.mark.parametrize(
    ("strategy", "option", "value"),
    [("hybrid", "repeat", "1000000000"), ("generic", "repeat", "-1"),
     ("random", "n", "0"), ("random", "batch", "100000000")],
)  # fmt: skip
def test_numbers_outside_an_options_range_are_refused(
    strategy: str, option: str, value: str
) -> None:
    declared = get_strategy(strategy).options[option]
    with pytest.raises(InputError, match=rf"option '{option}' .* at least .* at most .*got"):
        declared.parse(strategy, option, value)


def test_every_count_option_has_bounds() -> None:
    for name in available_strategies():
        for option, declared in get_strategy(name).options.items():
            if option in ("repeat", "n", "batch"):
                assert declared.bounds is not None, (name, option)


@pytest.mark.opencl
def test_the_command_line_names_the_range(tmp_path: Path, gtune_here: Cli) -> None:
    done = gtune_here(
        "run", str(ROOT / "stencils" / "heat3d.cl"), "--size", "16x8x8",
        "--option", "repeat=1000000000", db=tmp_path / "r.db",
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "at least 0 and at most 1,000, got 1000000000" in done.stderr


class _Cost(EvaluatorBase):
    def __init__(self) -> None:
        self.seen: list[dict[str, int]] = []

    def evaluate(self, config: Mapping[str, int]) -> Result:
        self.seen.append(dict(config))
        return Result(dict(config), Status.OK, times_s=(1.0 / config["WX"] + config["WY"],))


def _later_spec(repeat: int):  # type: ignore[no-untyped-def]
    raw = {
        "name": "later",
        "repeat": repeat,
        "steps": [{"tune": {"WX": "1:8:*2"}, "rounds": "later"}],
    }
    return parse_spec(raw, "later.yaml").bind(["WX", "WY"], {"NX": 8})


def test_a_spec_whose_steps_never_run_is_refused() -> None:
    space = EnumeratedSpace(["WX", "WY"], list(itertools.product([1, 2, 4, 8], [1, 2])))
    with pytest.raises(InputError, match=r"later\.yaml: steps: no step would run.*repeat"):
        GroupedSearch(_later_spec(0), space, SearchProblem(sizes={"NX": 8}))
    with pytest.raises(InputError, match="no step would run"):
        GroupedSearch(_later_spec(2), space, SearchProblem(sizes={"NX": 8}), rounds=1)
    searcher = GroupedSearch(_later_spec(1), space, SearchProblem(sizes={"NX": 8}))
    cost = _Cost()
    drive(searcher, cost, strategy="grouped", budget=Budget.parse("40"), space=space)
    assert {c["WX"] for c in cost.seen} == {1, 2, 4, 8}  # the second round runs the step
