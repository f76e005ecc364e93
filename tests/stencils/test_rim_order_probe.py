"""benchmarks/rim_order_probe.py (issue 49): its launches cover the arrays exactly (pure),
and its copies run on PoCL, each checked, a wrong one stopping the probe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
rim_order_probe = load_script(ROOT / "benchmarks" / "rim_order_probe.py")


@pytest.mark.parametrize("n", [128, 512])
def test_launches_cover_every_vector_and_every_rows_two_ends(n: int) -> None:
    for shape in [s for s in rim_order_probe.SHAPES if (n // 4) % s[0] == 0]:
        xv, ry, pz = shape
        blocks, wg = rim_order_probe.groups("blk", n, shape)
        assert wg == xv * ry
        assert blocks * wg * pz * 4 == n**3  # each work-item: one vector in pz planes
        apart, wg2 = rim_order_probe.groups("blks", n, shape)
        assert wg2 == wg
        assert (apart - blocks) * wg == 2 * n * n  # the rim groups: two vectors a row
    rows, size = rim_order_probe.groups("rowi", n, rim_order_probe.SHAPES[0])
    assert rows * size * 4 == n**3


@pytest.mark.bench  # the probe run end to end
@pytest.mark.opencl
def test_rim_order_probe_runs_on_pocl_and_stops_on_a_wrong_rim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def probe(out: str) -> int:
        small = ["--device", "pthread", "--size", "128", "--rounds", "1", "--reps", "1"]
        return int(rim_order_probe.main([str(tmp_path / out), *small]))

    assert probe("ok") == 0
    data = json.loads((tmp_path / "ok" / "rim_order.json").read_text())
    assert data["checks"] and all(data["checks"].values())
    assert {"copy4", "rowi", "blk@32x8x8", "blki@32x8x8", "blke@32x8x8"} <= set(data["checks"])
    assert not any(k.startswith("blk@128") for k in data["checks"])  # 128 vectors > a row
    wrong = rim_order_probe.SOURCE.replace("q % 2 ? NXV - 1 : 0", "q % 2 ? NXV - 2 : 0")
    assert wrong != rim_order_probe.SOURCE
    monkeypatch.setattr(rim_order_probe, "SOURCE", wrong)
    with pytest.raises(SystemExit, match="wrong output from blks@32x8x8"):
        probe("bad")
    assert not (tmp_path / "bad" / "rim_order.json").exists()
