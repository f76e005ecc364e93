"""benchmarks/onestep_tiles.py on a recorded H100 store (no device)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from gtune.store import open_store
from tests.conftest import load_script
from tests.rawdata import raw

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "benchmarks" / "results" / "onestep" / "h100-relabelled" / "onestep.db.gz"
tiles = load_script(ROOT / "benchmarks" / "onestep_tiles.py")


def test_best_per_tile_height_and_width_agree_with_the_store(tmp_path: Path) -> None:
    got = tiles.best_by_tile(raw(STORE), "heat3d", "512x512x512")
    db = tmp_path / "o.db"
    with gzip.open(raw(STORE), "rb") as src, db.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    store = open_store(db, readonly=True)
    try:
        stream = [
            r.result
            for r in store.rows(kernel="heat3d")
            if r.result.ok and r.result.config.get("STREAM") == 1
        ]
    finally:
        store.close()
    best = min(r.objective for r in stream)
    for axis in ("height", "width"):
        table = got[axis]
        # every verified stream configuration counted once per axis, the overall best in it
        assert sum(n for _, n in table.values()) == len(stream)
        assert min(t for t, _ in table.values()) == best
    tallest = max(got["height"])
    assert tallest == max(r.config["WY"] * r.config["CY"] for r in stream)


def test_an_unknown_kernel_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert tiles.main([str(raw(STORE)), "no_such_kernel"]) == 1
    assert "no verified stream configuration of no_such_kernel" in capsys.readouterr().out
