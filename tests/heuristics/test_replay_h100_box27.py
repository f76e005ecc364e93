"""The hybrid spec (``gtune run``'s default) on box27 at 512³, replayed on recorded H100
measurements: the default budget reaches the recorded plateau.

``tests/data/recording_h100_box27_512.json.gz`` holds every configuration the H100 run of
benchmarks/lift_corpus.py measured for the lifted box27 at 512³ (stream technique, the
load predictor's choice, budget 300) and the technique's valid configurations on the
H100's limits (``benchmarks/spec_replay.py --export "box27 512x512x512 [stream]"``). A
configuration the recording lacks is answered as not run: it costs an evaluation and can
never be the best. benchmarks/results/onestep-analysis.md reads the same store: the
fastest configurations are wide tile rows (256-512 outputs) streamed in long chunks.
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
RECORDING = ROOT / "tests" / "data" / "recording_h100_box27_512.json.gz"


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    if not RECORDING.exists():
        pytest.fail(f"{RECORDING} is missing; see benchmarks/spec_replay.py --export")
    with gzip.open(RECORDING, "rt") as f:
        loaded: dict[str, Any] = json.load(f)
    return loaded


def replay(data: dict[str, Any]) -> tuple[TuningOutcome, int, float]:
    """The hybrid search as ``gtune run`` drives it with no budget: the default's
    nearest stream configuration first, the spec's search started from it. Returns the
    outcome, how many configurations asked were unrecorded, and the best recorded."""
    sizes = data["kernel"]["sizes"]
    space = EnumeratedSpace(data["space"]["parameters"], data["space"]["rows"], env=sizes)
    results = [Result.from_dict(r) for r in data["results"]]
    evaluator = ReplayEvaluator(results, source=str(RECORDING), unrecorded="fail")
    strategy = get_strategy("grouped", {"spec": "hybrid"})
    problem = SearchProblem(sizes=sizes, default=data["default"])
    start = nearest_config(space, data["default"])
    assert start is not None
    searcher = Seeded(strategy.searcher(space, problem, strategy.configure(None)), start)
    outcome = drive(searcher, evaluator, strategy="hybrid", budget=None, space=space)
    best = min(r.objective for r in results if r.ok)
    return outcome, len(evaluator.unrecorded_calls), best


def test_default_budget_reaches_the_recorded_plateau(data: dict[str, Any]) -> None:
    outcome, unrecorded, best = replay(data)
    # the replay answers what it asks: otherwise this test would say nothing. The tile
    # steps (the chunk for the tile with the work-group's height, tile shape) came after
    # the recording and ask for configurations it lacks; a miss is never the best, so
    # what they add can only be judged on a device (benchmarks/compare/shape_steps.py)
    tile_steps = {"chunk for the tile", "tile shape"}
    missed = [e for e in outcome.trace if "not recorded" in (e.result.message or "")]
    assert len(missed) == unrecorded
    before = [e for e in outcome.trace if e.step not in tile_steps]
    assert sum(e.step not in tile_steps for e in missed) <= len(before) // 10
    assert outcome.best_result is not None
    assert best / outcome.best_result.objective >= 0.97
    cfg = outcome.best_result.config
    assert cfg["STREAM"] == 1 and cfg["WX"] * cfg["BX"] * cfg["CX"] >= 256
