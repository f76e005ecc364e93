"""The hybrid spec's merge shape step, replayed on H100 measurements of heat3d and
laplacian4 at 512³ (global, the load predictor's choice for both).

Without the step the hybrid search fixed the outputs per work-item in x (the x group
tunes CX while CY = CZ = 1, and the y and z groups only add merging on top of it) and
stopped at CX 8, CZ 2 for heat3d, about 5 % slower than tiles that merge in y and z at
the same 16 outputs per work-item (CX 4, CY 2, CZ 2). The step reshapes CX*CY*CZ at its
number, as the work-group shape step does with WX*WY*WZ.

``tests/data/recording_h100_{heat3d,laplacian4}_512_merge.json.gz`` hold every
configuration benchmarks/onestep.py measured on the H100 for the two kernels with the
spec before the step (benchmarks/compare/specs/hybrid-before-merge-shape.yaml) and with
it, in one session on one GPU (benchmarks/results/onestep/h100-merge-shape), and the
technique's valid configurations on the H100's limits (``benchmarks/spec_replay.py
--export "heat3d 512x512x512 [global]"``). Where both runs measured a configuration the
run without the step answers, so the spec before the step replays its own path. A
configuration the recording lacks is answered as not run: it costs an evaluation and can
never be the best.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gtune.heuristics import SearchProblem, get_strategy
from gtune.heuristics.search import Seeded, TuningOutcome, drive, nearest_config
from gtune.measure import ReplayEvaluator, Result
from gtune.space import EnumeratedSpace

ROOT = Path(__file__).resolve().parents[2]
BEFORE = ROOT / "benchmarks" / "compare" / "specs" / "hybrid-before-merge-shape.yaml"
KERNELS = ("heat3d", "laplacian4")


def recording(name: str) -> Path:
    return ROOT / "tests" / "data" / f"recording_h100_{name}_512_merge.json.gz"


@pytest.fixture(scope="module", params=KERNELS)
def data(request: pytest.FixtureRequest) -> dict[str, Any]:
    path = recording(request.param)
    if not path.exists():
        pytest.fail(f"{path} is missing; see benchmarks/spec_replay.py --export")
    with gzip.open(path, "rt") as f:
        loaded: dict[str, Any] = json.load(f)
    return loaded


def replay(data: dict[str, Any], spec: str) -> tuple[TuningOutcome, int, float]:
    """The search as ``gtune run`` drives it with no budget: the default's nearest
    configuration first, the spec's search started from it. Returns the outcome, how
    many configurations asked were unrecorded, and the best recorded time."""
    sizes = data["kernel"]["sizes"]
    space = EnumeratedSpace(data["space"]["parameters"], data["space"]["rows"], env=sizes)
    results = [Result.from_dict(r) for r in data["results"]]
    evaluator = ReplayEvaluator(results, source="recording", unrecorded="fail")
    strategy = get_strategy("grouped", {"spec": spec})
    problem = SearchProblem(sizes=sizes, default=data["default"])
    start = nearest_config(space, data["default"])
    assert start is not None
    searcher = Seeded(strategy.searcher(space, problem, strategy.configure(None)), start)
    outcome = drive(searcher, evaluator, strategy=spec, budget=None, space=space)
    best = min(r.objective for r in results if r.ok)
    return outcome, len(evaluator.unrecorded_calls), best


def test_hybrid_reaches_the_tiles_that_merge_in_y_and_z(data: dict[str, Any]) -> None:
    outcome, unrecorded, best = replay(data, "hybrid")
    # the replay answers what it asks: otherwise this test would say nothing
    assert unrecorded <= outcome.evaluations // 10
    assert outcome.best_result is not None
    assert best / outcome.best_result.objective >= 0.98
    cfg = outcome.best_result.config
    assert cfg["CY"] * cfg["CZ"] >= 4 and cfg["CX"] < 8
    assert any(s.step == "merge shape" and s.evaluated > 0 for s in outcome.steps)


def test_the_spec_before_the_step_stays_behind(data: dict[str, Any]) -> None:
    with_step, _, _ = replay(data, "hybrid")
    before, unrecorded, _ = replay(data, str(BEFORE))
    # its own path was measured on the device: the replay follows it
    assert unrecorded <= before.evaluations // 20
    assert with_step.best_result is not None and before.best_result is not None
    assert before.best_result.objective >= 1.04 * with_step.best_result.objective
