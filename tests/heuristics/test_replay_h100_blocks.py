"""The hybrid spec's ``rim`` step (whole rim vectors, rows merged in y and z) replayed on
recorded H100 measurements.

``benchmarks/results/onestep/blocks/onestep.db.gz`` holds heat3d and box27 at 512³, each
searched alone in the vec technique by the hybrid spec with no budget (``onestep.py
--all-techniques --techniques vec`` on one H100), once the template had ``RIM`` (a
vector at a row's rim computed whole) and ``BY``/``BZ`` (a work-item's adjacent rows in
y and z). The replay serves every configuration from that store (one it lacks would be
answered as not run and never be the best), on the vec technique's space solved for the
H100's limits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gtune.description import load_kernel
from gtune.device import DeviceLimits
from gtune.kernel import canonical_config
from gtune.space import solve_space, technique_space
from tests.conftest import load_script

pytestmark = pytest.mark.slow  # solves two vec spaces at 512³ (about 10 s each)

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "benchmarks" / "results" / "onestep" / "blocks" / "onestep.db.gz"

lt = load_script(ROOT / "benchmarks" / "compare" / "loo_table3.py")
tiles = load_script(ROOT / "benchmarks" / "onestep_tiles.py")


@pytest.fixture(scope="module", params=["heat3d", "box27"])
def replayed(request: pytest.FixtureRequest) -> dict[str, Any]:
    name = request.param
    kernel = load_kernel(ROOT / "stencils" / f"{name}.yaml", {"NX": 512, "NY": 512, "NZ": 512})
    device = DeviceLimits.from_dict(json.loads(lt.DEVICE.read_text()))
    space = technique_space(solve_space(kernel, device).space, kernel, "vec")
    rows = tiles.stored_rows(STORE, f"{name}:stencil")
    results = [r.result for r in rows if space.is_valid(dict(r.result.config)) is None]
    return {
        "name": name,
        "results": results,
        "replay": lt.replay_hybrid(kernel, device, results, ["vec"], space=space),
    }


def test_the_vec_search_retraces_its_recording_and_ends_on_whole_rim_vectors(
    replayed: dict[str, Any],
) -> None:
    replay, results = replayed["replay"], replayed["results"]
    assert replay.unrecorded == []  # the replay asks what the device run asked
    recorded = {canonical_config(r.config): r.objective for r in results if r.ok}
    assert replay.best_config is not None
    assert recorded[canonical_config(replay.best_config)] == replay.best_s
    assert replay.best_s == min(recorded.values())  # the recording's best vec kernel
    assert replay.best_config["RIM"] == 1
    # the rim step found a faster configuration in some round, and both values ran
    assert any(s[0] == "rim" and s[5] for run in replay.runs for s in run["steps"])
    assert {r.config["RIM"] for r in results} == {0, 1}


def test_box27_merges_rows_in_y_and_z_and_heat3d_does_not(replayed: dict[str, Any]) -> None:
    """box27 (27 points: 9 rows of input per output row) shares rows between the
    work-item's adjacent rows; heat3d (5 rows, 3 of them its own) gains nothing."""
    best = replayed["replay"].best_config
    blocked = best["BY"] * best["BZ"] > 1
    assert blocked == (replayed["name"] == "box27")
    # the search measured blocks in both kernels: the choice is the measurements'
    assert any(r.config["BY"] * r.config["BZ"] > 1 for r in replayed["results"] if r.ok)
