"""The hybrid spec's ``rows shape`` step: the rows per work-item (BY*BZ*CY*CZ) kept while
block merging (BY, BZ) is traded against cyclic merging (CY, CZ).

The step's candidates are read from the searcher on spaces solved for the H100's limits
(box27 at 32³, jacobi2d at 64², the vec and stream techniques), as ``gtune run`` solves
them; a kernel without RIM is checked on the real PoCL recording of heat3d
(``recording_heat3d_small.json``): there the step is dropped and the search is the
spec's before it, configuration for configuration.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.heuristics import HeuristicSpec, load_spec, tune
from gtune.heuristics.grouped import GroupedSearch
from gtune.heuristics.search import SearchProblem
from gtune.kernel import Config
from gtune.measure import Result, Status
from gtune.space import Space, solve_space

from .conftest import Recorded

ROOT = Path(__file__).resolve().parents[2]
DEVICE = ROOT / "benchmarks" / "replay" / "h100.device.json"
BEFORE = ROOT / "benchmarks" / "compare" / "specs" / "hybrid-before-rows.yaml"
ROWS = ("BY", "BZ", "CY", "CZ")
STEP = "rows shape"


def rows(config: Config) -> int:
    return math.prod(config.get(k, 1) for k in ROWS)


@cache
def solved(name: str, size: tuple[int, ...], technique: str) -> Space:
    sizes = dict(zip(("NX", "NY", "NZ"), size, strict=False))
    kernel = load_kernel(ROOT / "stencils" / f"{name}.stencil.yaml", sizes)
    device = DeviceLimits.from_dict(json.loads(DEVICE.read_text()))
    return solve_space(kernel, device, technique=technique).space


def step_alone() -> HeuristicSpec:
    """The shipped spec with its rows shape step alone, one round."""
    spec = load_spec("hybrid")
    steps = tuple(s for s in spec.steps if s.label == STEP)
    return dataclasses.replace(spec, steps=steps, repeat=0, converge=None)


def candidates(space: Space, size: tuple[int, ...], point: Config) -> list[Config]:
    """What the step asks for from ``point`` (the best so far)."""
    sizes = dict(zip(("NX", "NY", "NZ"), size, strict=False))
    bound = step_alone().bind(list(space.parameters), sizes)
    searcher = GroupedSearch(bound, space, SearchProblem(sizes=sizes))
    searcher.start_from(point, Result(dict(point), Status.OK, times_s=(1.0,)))
    batch = searcher.ask()
    assert batch is not None and batch.step == STEP
    return [dict(c) for c in batch.configs]


def a_point(space: Space, keep: Callable[[Config], bool]) -> Config:
    found = next((c for c in space.subspace({}, list(space.parameters)) if keep(c)), None)
    assert found is not None, "the space has such a configuration"
    return dict(found)


def test_the_shipped_spec_has_the_step_after_merge_shape() -> None:
    spec = load_spec("hybrid")
    labels = [s.label for s in spec.steps]
    assert labels.index("merge shape") < labels.index(STEP) < labels.index("work-group shape")
    step = spec.steps[labels.index(STEP)]
    assert list(step.tune) == list(ROWS)
    assert [e.text for e in step.keep_product] == ["BY*BZ*CY*CZ"]
    assert step.needs == ("RIM",)
    names = ["WX", "WY", "WZ", "BX", "VX", "CX", "CY", "CZ", "STREAM", "ZC"]
    sizes = {"NX": 64, "NY": 64, "NZ": 64}
    assert STEP in spec.bind(names, sizes).dropped_steps  # no RIM: no step
    assert STEP in [s.label for s in spec.bind([*names, "RIM", "BY", "BZ"], sizes).steps]


def test_the_step_keeps_the_rows_and_trades_blocks_for_cyclic_merging() -> None:
    space = solved("box27", (32, 32, 32), "vec")
    point = a_point(
        space, lambda c: c["RIM"] == 1 and c["BY"] == 2 and c["CY"] == 2 and c["CZ"] == 2
    )
    asked = candidates(space, (32, 32, 32), point)
    assert len(asked) > 1
    for c in asked:
        assert rows(c) == rows(point)
        assert {k for k in c if c[k] != point[k]} <= set(ROWS)
    assert any(c["CY"] == c["CZ"] == 1 for c in asked)  # all rows in blocks
    assert any(c["BY"] == c["BZ"] == 1 for c in asked)  # all rows merged cyclically
    # every arrangement of those rows the space allows at the point
    fixed = {k: v for k, v in point.items() if k not in ROWS}
    allowed = [dict(c) for c in space.subspace(fixed, list(ROWS)) if rows(c) == rows(point)]
    assert sorted(map(sorted, (c.items() for c in asked))) == sorted(
        map(sorted, (c.items() for c in allowed))
    )


@pytest.mark.parametrize(
    ("name", "size", "technique", "keep"),
    [
        ("box27", (32, 32, 32), "vec", lambda c: c["RIM"] == 0 and c["CY"] * c["CZ"] == 4),
        ("box27", (32, 32, 32), "stream", lambda c: c["CY"] == 2 and c["ZC"] == 2),
        ("jacobi2d", (64, 64), "vec", lambda c: c["RIM"] == 1 and c["BY"] == 2 and c["CY"] == 2),
    ],
    ids=["vec without rim vectors", "stream", "2D vec"],
)
def test_elsewhere_the_step_is_the_current_point(
    name: str, size: tuple[int, ...], technique: str, keep: Callable[[Config], bool]
) -> None:
    """Without whole rim vectors (RIM 0), under streaming and on 2D arrays the step asks
    for the best so far alone, which the search has measured already (streaming merges
    no blocks and no z rows: there the space itself leaves one arrangement)."""
    space = solved(name, size, technique)
    point = a_point(space, keep)
    free = [k for k in ROWS if k in point]
    fixed = {k: v for k, v in point.items() if k not in ROWS}
    others = [c for c in space.subspace(fixed, free) if rows(c) == rows(point)]
    if technique != "stream":
        assert len(others) > 1  # the space has other arrangements: the step leaves them
    assert candidates(space, size, point) == [point]


def test_a_kernel_without_rim_searches_as_before(recorded: Recorded) -> None:
    """The PoCL recording's kernel has no RIM: the step is dropped and the search asks
    for the same configurations as the spec before the step, in the same order."""
    assert STEP in load_spec("hybrid").bind(recorded.parameters, recorded.sizes).dropped_steps
    traces = []
    for spec in ("hybrid", str(BEFORE)):
        outcome = tune(
            "grouped",
            recorded.space("global"),
            recorded.replay(),
            recorded.problem(),
            options={"spec": spec},
        )
        traces.append([(e.step, dict(e.config)) for e in outcome.trace])
        assert all(e.step != STEP for e in outcome.trace)
    assert traces[0] == traces[1]
    assert len(traces[0]) > 10
