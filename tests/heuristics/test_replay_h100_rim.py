"""The hybrid spec's ``rim`` step (whole rim vectors, the vector width, rows merged in y
and z, a separable stencil's weights axis by axis) replayed on recorded H100
measurements.

``benchmarks/results/onestep/h100-sep3d/onestep.db.gz`` holds ``gtune run``'s defaults
for heat3d and box27 at 512³ on one H100 (``benchmarks/onestep.py``): the load
predictor chose the vec technique for both, and the hybrid spec searched it with no
budget, its rim step tuning ``RIM``, ``VX``, ``BY``, ``BZ`` and ``SEP``. The replay
serves every configuration from the search's rows of that store (the confirmation
round's re-measurements left out, as the search never saw them; a configuration the
store lacks would be answered as not run and never be the best), on the vec
technique's space solved for the H100's limits. The search ran before the template had
the interior path (``RIN``), so it is replayed with the spec of then
(``benchmarks/compare/specs/hybrid-before-rin.yaml``): ``RIN`` stays 0, as it ran.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.expr import Expr
from gtune.kernel import Domain, canonical_config
from gtune.measure import completed
from gtune.space import solve_space
from gtune.store.ranking import confirmation
from tests.conftest import load_script
from tests.rawdata import raw

pytestmark = pytest.mark.slow  # solves two vec spaces at 512³ (about 10 s each)

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "benchmarks" / "results" / "onestep" / "h100-sep3d" / "onestep.db.gz"
BEFORE = ROOT / "benchmarks" / "compare" / "specs" / "hybrid-before-rin.yaml"

lt = load_script(ROOT / "benchmarks" / "compare" / "loo_table3.py")
tiles = load_script(ROOT / "benchmarks" / "onestep_tiles.py")


@pytest.fixture(scope="module", params=["heat3d", "box27"])
def replayed(request: pytest.FixtureRequest) -> dict[str, Any]:
    name = request.param
    kernel = load_kernel(ROOT / "stencils" / f"{name}.yaml", {"NX": 512, "NY": 512, "NZ": 512})
    # RIN held at 0, as the recorded search ran it: its space is the one solved then
    # (half the size, half the solving time)
    parameters = tuple(
        replace(p, domain=Domain("values", items=(Expr("0"),))) if p.name == "RIN" else p
        for p in kernel.parameters
    )
    kernel = replace(kernel, parameters=parameters)
    device = DeviceLimits.from_dict(json.loads(lt.DEVICE.read_text()))
    space = solve_space(kernel, device, technique="vec").space
    rows = [r for r in tiles.stored_rows(raw(STORE), f"{name}:stencil") if confirmation(r) is None]
    # recorded before the template had RIN: a configuration without it ran it at 0
    results = [completed(r.result, kernel.default_config() or {}) for r in rows]
    results = [r for r in results if space.is_valid(dict(r.config)) is None]
    return {
        "name": name,
        "kernel": kernel,
        "results": results,
        "replay": lt.replay_hybrid(kernel, device, results, ["vec"], space=space, spec=BEFORE),
    }


def test_the_vec_search_retraces_its_recording_and_ends_on_whole_rim_vectors(
    replayed: dict[str, Any],
) -> None:
    replay, results = replayed["replay"], replayed["results"]
    assert len(results) > 500  # the whole search is in the recording
    assert replay.unrecorded == []  # the replay asks what the device run asked
    recorded = {canonical_config(r.config): r.objective for r in results if r.ok}
    assert replay.best_config is not None
    assert recorded[canonical_config(replay.best_config)] == replay.best_s
    assert replay.best_s == min(recorded.values())  # the recording's best vec kernel
    assert replay.best_config["RIM"] == 1
    # the rim step found a faster configuration in some round, and both values ran
    assert any(s[0] == "rim" and s[5] for run in replay.runs for s in run["steps"])
    assert {r.config["RIM"] for r in results} == {0, 1}
    # it tuned the vector width with RIM: more than one VX ran with whole rim vectors
    assert len({r.config["VX"] for r in results if r.config["RIM"] == 1}) > 1


def test_box27_applies_its_weights_axis_by_axis_on_merged_rows(
    replayed: dict[str, Any],
) -> None:
    """box27 (the tensor product of [1, 2, 1]/4, 27 points) is separable: its best vec
    kernel sums each input row once for a block of rows (SEP), and the search's best
    without SEP is slower by more than the timing's noise. heat3d (a star) has no SEP."""
    best, results = replayed["replay"].best_config, replayed["results"]
    if replayed["name"] == "heat3d":
        assert "SEP" not in replayed["kernel"].parameter_names
        return
    assert best["SEP"] == 1 and best["BY"] * best["BZ"] > 1
    without = min(r.objective for r in results if r.ok and r.config["SEP"] == 0)
    assert without > 1.03 * replayed["replay"].best_s
