"""benchmarks/campaign/collect_throughput.py's scaling form, end to end on PoCL: each
setting a process of its own running the collection on a real Dask LocalCluster, the
direct-run baseline, the wall-clock limit, and what it writes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> Any:
    """The benchmark as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "collect_throughput", ROOT / "benchmarks" / "campaign" / "collect_throughput.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["collect_throughput"] = module
    spec.loader.exec_module(module)
    return module


bench = _script()
SMALL = [
    "--selector",
    "Portable",
    "--one-device",
    "--kernels",
    "star_3d_xyz_r1",
    "--size",
    "16x16x16",
    "--budget",
    "2",
    "--techniques",
    "global,vec",
]


@pytest.mark.bench
@pytest.mark.opencl
@pytest.mark.dask
@pytest.mark.slow
def test_one_and_two_simulated_gpus_and_the_direct_baseline_in_one_invocation(
    tmp_path: Path,
) -> None:
    out = tmp_path / "x"
    argv = [str(out), "--gpus", "1,2", *SMALL, "--limit", "300"]
    # the direct phase ends with its one kernel; its cap only has to outlast a slow start
    assert bench.main([*argv, "--direct-s", "40", "--min-phase-s", "20", "--grace-s", "10"]) == 0
    result = json.loads((out / "scaling.json").read_text())
    settings = {int(r["gpus"]): r for r in result["settings"]}
    assert set(settings) == {1, 2} and not result["notes"]
    for n, r in settings.items():
        # the same campaign each time, from an empty store: everything measured
        assert r["labelled"] == r["kernels"] == 1 and r["pieces"] == 2 and not r["cut"]
        assert r["measured"] >= r["pieces_measured"] > 0
        assert r["workers_per_device"] == n * result["host"]["workers_per_gpu"]
        assert 0 < r["span_s"] <= r["wall_s"] and r["configs_per_s"] > 0
        # every worker started before the first piece, off the searching time
        assert 0 < r["start_s"] < r["wall_s"] and r["search_s"] <= r["wall_s"] - r["start_s"]
        assert len(r["worker_starts"]) == r["workers_per_device"]
        assert all(w["error"] is None for w in r["worker_starts"])
        assert r["cores"]["physical"] >= 1 and r["build_slots"] >= 1
        # run to the end: everything measured counts, weighed by the cost model too
        assert r["searched"] == r["measured"] and r["window_s"] is None
        assert r["configs_per_s_search"] == pytest.approx(r["measured"] / r["search_s"])
        assert r["work_s"] > 0 and r["build_wait_s"] >= 0
        ledger = out / f"gpus-{n}" / "collect" / "tasks.jsonl"
        pieces = [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()]
        assert all(p["started_at"] <= p["ended_at"] for p in pieces)
        assert {p["task"]["technique"] for p in pieces} == {"global", "vec"}
    # two workers took the two searches side by side
    assert settings[2]["workers"] == 2
    (direct,) = result["direct"]
    assert direct["finished"] == ["star_3d_xyz_r1"] and direct["measured"] > 0
    assert result["host"]["topology"]["physical"] == result["host"]["cores"]
    table = (out / "scaling.md").read_text()
    assert "| 1 | 1 |" in table and "| 2 | 2 |" in table and "Direct runs" in table
    assert "Campaign per GPU (searching) over a direct run" in table
    assert (out / "scaling.png").stat().st_size > 0


@pytest.mark.opencl
def test_a_limit_too_short_for_a_phase_skips_it_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "x"
    argv = [str(out), "--gpus", "1,2", *SMALL, "--limit", "20", "--min-phase-s", "30"]
    assert bench.main(argv) == 0
    result = json.loads((out / "scaling.json").read_text())
    assert result["settings"] == [] and result["direct"] == []
    assert len(result["notes"]) == 3 and all("not run" in n for n in result["notes"])
    assert "not run" in (out / "scaling.md").read_text()


@pytest.mark.bench
@pytest.mark.opencl
@pytest.mark.dask
@pytest.mark.slow
def test_a_setting_drives_its_gpus_by_their_own_selectors(tmp_path: Path) -> None:
    out = tmp_path / "x"
    small = [a for a in SMALL if a != "--one-device"]
    argv = [str(out), "--gpus", "1", *small, "--limit", "200", "--direct-s", "0"]
    assert bench.main([*argv, "--min-phase-s", "20", "--grace-s", "10"]) == 0
    result = json.loads((out / "scaling.json").read_text())
    (row,) = result["settings"]
    assert row["devices"] == 1 and row["labelled"] == 1 and not result["notes"]
    assert result["direct"] == []  # --direct-s 0: no baseline phase
    ledger = out / "gpus-1" / "collect" / "tasks.jsonl"
    pieces = [json.loads(x) for x in ledger.read_text().splitlines() if x.strip()]
    # the task named the device by its own selector, as the host lists it
    assert {p["task"]["device"] for p in pieces} == {result["host"]["selectors"][0]}


@pytest.mark.bench
@pytest.mark.opencl
@pytest.mark.dask
@pytest.mark.slow
def test_a_window_cuts_each_setting_after_its_share_of_searching(tmp_path: Path) -> None:
    """A campaign larger than the limit: the N-GPU setting searches window / N seconds
    after its workers started, and counts what it measured up to then (N = 2: the
    one-GPU setting's window is the window itself; the settings run to the end are
    test_one_and_two_simulated_gpus_and_the_direct_baseline_in_one_invocation's)."""
    out = tmp_path / "x"
    small = [*SMALL[:3], "--kernels", "star_3d_xyz_r1,dense_1d_x_r1", "--size", "16x16x16"]
    # work for about three times the window: on an idle two-core host the 40
    # configurations of each search ended 14 s into a 15 s window, uncut
    argv = [str(out), "--gpus", "2", *small, "--budget", "150", "--techniques", "global,vec"]
    # a window long enough that each setting measures something on a loaded two-core host:
    # its first configurations wait on the space, the predictor and a cold PoCL build
    # (idle, 5 s measured 1 or 2; CI once measured none in them): 10 s of searching
    window = 20.0
    argv += ["--window-s", f"{window:g}", "--limit", "300", "--direct-s", "0"]
    argv += ["--min-phase-s", "20"]
    assert bench.main(argv) == 0
    result = json.loads((out / "scaling.json").read_text())
    settings = {int(r["gpus"]): r for r in result["settings"]}
    assert set(settings) == {2}
    for n, r in settings.items():
        assert r["cut"] and r["window_s"] == pytest.approx(window / n)
        # searched for its window (a piece ends its current configuration after it)
        assert r["search_s"] == pytest.approx(window / n, abs=0.5)
        assert 0 < r["searched"] <= r["measured"] and r["work_s"] > 0
    assert "| 2 | 2 |" in (out / "scaling.md").read_text()
