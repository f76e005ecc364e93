"""The hybrid spec's x vectors step, replayed on recorded H100 measurements of 2D streaming.

benchmarks/results/lift/budget300-2d-final holds every configuration lift_corpus.py
measured on the H100 for the lifted blur_clamp (5x5, clamp) and conv2d (3x3, interior)
at 8192x8192, budget 300; the stream technique won both with BX 2, VX 1. Vector loads of
the row segments (VX > 1 under 2D streaming) came later, so those configurations are
unrecorded: answered as not run (``unrecorded="fail"``), they cost an evaluation as on the
device and are never best. The replay shows what the search asks for and when, and that
the recorded path is otherwise unchanged: the recorded best is still reached.
benchmarks/spec_replay.py runs replays over every recorded kernel.
"""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from gtune.budget import Budget
from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.heuristics import SearchProblem, get_strategy
from gtune.heuristics.search import Seeded, TuningOutcome, drive, nearest_config
from gtune.kernel import TunableKernel
from gtune.measure import ReplayEvaluator, Result
from gtune.space import EnumeratedSpace, solve_space
from gtune.store import open_store
from tests.rawdata import raw

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "benchmarks" / "results" / "lift" / "budget300-2d-final"
RUN_3D = ROOT / "benchmarks" / "results" / "lift" / "budget300-x2" / "3d"
DEVICE = ROOT / "benchmarks" / "replay" / "h100.device.json"
BEFORE = ROOT / "benchmarks" / "compare" / "specs" / "hybrid-before-vectors.yaml"
# the x vectors step, without the merge shape step that came after it
VECTORS = ROOT / "benchmarks" / "compare" / "specs" / "hybrid-before-merge-shape.yaml"
SIZES = {"NX": 8192, "NY": 8192}
BUDGET = 300  # the lift corpus' budget


@dataclass
class StreamCase:
    kernel: TunableKernel
    space: EnumeratedSpace
    results: list[Result]

    @property
    def best_recorded(self) -> Result:
        inside = [r for r in self.results if r.ok and self.space.is_valid(dict(r.config)) is None]
        return min(inside, key=lambda r: r.objective)


def _case(name: str, tmp: Path, run: Path = RUN, sizes: dict[str, int] = SIZES) -> StreamCase:
    kernel = load_kernel(run / "definitions" / f"{name}.stencil.yaml", sizes)
    device = DeviceLimits.from_dict(json.loads(DEVICE.read_text()))
    space = solve_space(kernel, device, technique="stream").space
    db = tmp / f"{run.name}.db"
    if not db.exists():
        with gzip.open(raw(run / "lift.db.gz"), "rb") as src, db.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    store = open_store(db, readonly=True)
    default = kernel.default_config()
    assert default is not None
    try:
        params = set(space.parameters)
        results = []
        for r in store.rows(kernel=name):
            # recorded before the space gained SEP (separable streaming): the default
            config = {**{k: default[k] for k in params - set(r.result.config)}, **r.result.config}
            if dict(r.problem) == sizes and set(config) == params:
                results.append(replace(r.result, config=config))
    finally:
        store.close()
    assert isinstance(space, EnumeratedSpace)
    return StreamCase(kernel, space, results)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, StreamCase]:
    tmp = tmp_path_factory.mktemp("lift2d")
    return {name: _case(name, tmp) for name in ("blur_clamp", "conv2d")}


def _replay(case: StreamCase, spec: str) -> tuple[TuningOutcome, int]:
    evaluator = ReplayEvaluator(case.results, source=str(RUN), unrecorded="fail")
    strategy = get_strategy("grouped", {"spec": spec})
    problem = SearchProblem.from_kernel(case.kernel)
    inner = strategy.searcher(case.space, problem, strategy.configure(None))
    default = case.kernel.default_config()
    assert default is not None
    start = nearest_config(case.space, default)
    assert start is not None
    outcome = drive(
        Seeded(inner, start),
        evaluator,
        strategy=spec,
        budget=Budget(evaluations=BUDGET),
        space=case.space,
    )
    return outcome, len(evaluator.unrecorded_calls)


@pytest.mark.parametrize("name", ["blur_clamp", "conv2d"])
def test_vector_loads_are_reached_early_at_the_recorded_tile(
    cases: dict[str, StreamCase], name: str
) -> None:
    """The x vectors step asks for BX 4 and 8 with vectors of 4 at the tile the recorded
    search found (WX 64) within the first 100 evaluations of the stream search."""
    case = cases[name]
    outcome, unrecorded = _replay(case, "hybrid")
    vectors = [e for e in outcome.trace if e.result.config["VX"] > 1]
    assert vectors, "the x vectors step never ran"
    wide = {
        (e.result.config["BX"], e.result.config["VX"])
        for e in vectors
        if e.index < 100 and e.result.config["WX"] == 64
    }
    assert {(4, 4), (8, 4), (8, 8)} <= wide
    # the x step keeps BX and VX at the best so far (here VX 1 throughout): vectors come
    # from the x vectors step (at most 15 per round), never from a 150-candidate x group
    assert {e.step for e in vectors} == {"x vectors"}
    assert len(vectors) <= 15 * 3
    # the unrecorded ones before the tile steps (which came after the recording) are
    # the new configurations, and the whole search fits the budget
    tile_steps = {"chunk for the tile", "tile shape"}
    missed = [e for e in outcome.trace if "not recorded" in (e.result.message or "")]
    assert len(missed) == unrecorded
    assert sum(e.step not in tile_steps for e in missed) <= len(vectors) + 60
    assert outcome.evaluations < BUDGET


@pytest.mark.parametrize("name", ["blur_clamp", "conv2d"])
def test_the_recorded_best_is_still_reached(cases: dict[str, StreamCase], name: str) -> None:
    """Without measurements of the new configurations, the search still finds the best
    recorded configuration (BX 2, VX 1): the new steps add candidates, lose nothing."""
    case = cases[name]
    outcome, _ = _replay(case, "hybrid")
    assert outcome.best_result is not None
    assert outcome.best_result.objective == case.best_recorded.objective
    before, _ = _replay(case, str(BEFORE))
    assert before.best_result is not None
    assert outcome.best_result.objective <= before.best_result.objective


def test_3d_streaming_searches_are_unchanged(tmp_path: Path) -> None:
    """3D streaming keeps VX 1 (its planes go through local memory): the x vectors step is
    the current point there, so the search measures the same configurations in the same
    order as before the step, and ends at the same best. The merge shape step, which
    came later, adds configurations and loses nothing there."""
    case = _case("star7", tmp_path, RUN_3D, {"NX": 512, "NY": 512, "NZ": 512})
    after, unrecorded = _replay(case, str(VECTORS))
    before, _ = _replay(case, str(BEFORE))
    assert after.evaluations > 50 and unrecorded < after.evaluations // 2  # a real replay
    assert [dict(e.result.config) for e in after.trace] == [
        dict(e.result.config) for e in before.trace
    ]
    assert after.best_config == before.best_config
    assert "x vectors" in {s.step for s in after.steps}
    shipped, _ = _replay(case, "hybrid")
    assert shipped.best_result is not None and after.best_result is not None
    assert shipped.best_result.objective <= after.best_result.objective
