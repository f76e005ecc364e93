"""benchmarks/temporal_report.py on recorded H100 runs (no device), and its geometry
against a count point by point."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "benchmarks" / "results" / "temporal"
report = load_script(ROOT / "benchmarks" / "temporal_report.py")


def counted(sides: list[tuple[int, int]], tb: int) -> tuple[float, float]:
    """(DRAM per step, recompute) by enumerating the points of a block: the input a
    launch loads (the block with TB radii of halo), and per level s the points it
    computes (the block with TB - s radii)."""

    def points(k: int) -> int:
        return sum(
            1
            for _ in itertools.product(
                *(range(-k * r, b + k * r) for b, r in sides)  # every coordinate
            )
        )

    block = points(0)
    loads = points(tb) / block
    computed = sum(points(tb - s) for s in range(1, tb + 1)) / (tb * block)
    return (loads + 1) / (2 * tb), computed


@settings(max_examples=60, deadline=None)
@given(
    wx=st.sampled_from([4, 8, 16]),
    wy=st.sampled_from([1, 2, 4]),
    cx=st.sampled_from([1, 2]),
    cy=st.sampled_from([1, 2]),
    zc=st.sampled_from([1, 2, 4]),
    tb=st.sampled_from([1, 2, 3, 4]),
    radius=st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
    stream=st.booleans(),
)
def test_geometry_matches_a_count_point_by_point(
    wx: int, wy: int, cx: int, cy: int, zc: int, tb: int, radius: tuple[int, int, int], stream: bool
) -> None:
    cfg = {"WX": wx, "WY": wy, "WZ": 2, "CX": cx, "CY": cy, "CZ": 1, "TB": tb, "ZC": zc}
    cfg["STREAM"] = int(stream)
    shape = (64, 64, 64)
    bz = zc if stream else 2
    sides = [(wx * cx, radius[0]), (wy * cy, radius[1]), (bz, radius[2])]
    got = report.geometry(cfg, shape, radius)
    want = counted(sides, tb)
    assert math.isclose(got[0], want[0]) and math.isclose(got[1], want[1])
    if tb == 1 or radius == (0, 0, 0):  # nothing to recompute
        assert math.isclose(got[1], 1.0)
    if radius == (0, 0, 0):  # no halo: each launch moves one step's bytes for TB steps
        assert math.isclose(got[0], 1.0 / tb)


def test_2d_streaming_counts_whole_chunks_of_rows() -> None:
    cfg = {"WX": 32, "WY": 4, "CX": 2, "TB": 2, "ZC": 8, "STREAM": 1}
    got = report.geometry(cfg, (8192, 8192), (1, 1, 0))
    assert got == counted([(64, 1), (32, 1)], 2)


def test_report_over_recorded_runs(tmp_path: Path) -> None:
    runs = [
        RUNS / "h100-zreg2" / "both",
        RUNS / "h100-suite" / "suite2",
        RUNS / "h100-hotspot" / "hotspot",
    ]
    assert report.main([str(tmp_path), *map(str, runs)]) == 0
    rows = list((tmp_path / "summary.csv").read_text().splitlines())
    recorded = {}
    for run in runs:
        data = json.loads((run / "temporal.json").read_text())
        for name, k in data["kernels"].items():
            recorded[name] = (k, data["copy_gbs"])
    assert len(rows) == 1 + len(recorded)
    assert (tmp_path / "summary.png").stat().st_size > 0
    md = (tmp_path / "summary.md").read_text()
    for name, (k, copy) in recorded.items():
        best = max(
            k["multi_step"]["bytes_moved"] / (e["remeasured_s"]) / 1e9 / copy
            for e in k["multi_step"]["techniques"].values()
            if e.get("remeasured_status") == "ok"
        )
        assert f"| {name} |" in md
        assert f"{100 * best:.1f} %" in md


def test_a_run_that_is_not_a_result_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "temporal.json"
    bad.write_text("{not json")
    assert report.main([str(tmp_path / "out"), str(bad)]) == 2
    assert not (tmp_path / "out").exists()


def test_fixed_input_fields_count_in_the_bytes_per_step() -> None:
    cfg = {"WX": 16, "WY": 16, "CX": 4, "CY": 2, "TB": 4, "STREAM": 0}
    one, _ = report.geometry(cfg, (8192, 8192), (1, 1, 0), inputs=1)
    two, _ = report.geometry(cfg, (8192, 8192), (1, 1, 0), inputs=2)
    loads = (64 + 8) * (32 + 8) / (64 * 32)
    assert math.isclose(one, (loads + 1) / 8)
    assert math.isclose(two, (2 * loads + 1) / 12)


def test_bytes_not_a_whole_number_of_arrays_are_refused(tmp_path: Path) -> None:
    data = json.loads((RUNS / "h100-zreg2" / "both" / "temporal.json").read_text())
    for k in data["kernels"].values():
        k["multi_step"]["bytes_moved"] *= 1.25  # two and a half arrays
    path = tmp_path / "temporal.json"
    path.write_text(json.dumps(data))
    assert report.main([str(tmp_path / "out"), str(path)]) == 2
