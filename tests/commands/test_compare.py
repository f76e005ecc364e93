"""``gtune compare`` end to end on two tiny kernels, on the real default OpenCL device."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.inprocess import Cli

pytestmark = pytest.mark.opencl

KERNELS = [str(ROOT / "stencils" / "heat3d.cl"), str(ROOT / "stencils" / "jacobi2d.cl")]
ARGS = ["--size", "16x8x8", "--strategies", "random,hybrid", "--random-n", "5"]
ARGS += ["--budget", "6"]


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


@pytest.mark.usefixtures("shared_workers")
def test_compare_tables_agree_and_resume(tmp_path: Path, gtune_here: Cli) -> None:
    db, out = tmp_path / "r.db", tmp_path / "out"
    # a time limit reached at once: a clean stop, an incomplete report, exit status 3
    stopped = gtune_here(
        "compare", *KERNELS, *ARGS, "--out", str(out), "--max-minutes", "0.0001", db=db
    )
    assert stopped.returncode == 3, stopped.stderr
    assert "run the same command again" in stopped.stderr
    assert json.loads((out / "compare.json").read_text())["complete"] is False

    proc = gtune_here("compare", *KERNELS, *ARGS, "--out", str(out), db=db)
    assert proc.returncode == 0, proc.stderr
    for name in ("table.md", "table.csv", "per_kernel.csv", "speedups.png", "compare.json"):
        assert (out / name).stat().st_size > 0, name
    data = json.loads((out / "compare.json").read_text())
    assert data["complete"] and data["kernels_done"] == ["heat3d", "jacobi2d"]
    rows = {r["strategy"]: r for r in data["rows"]}
    cells = {(c["kernel"], c["strategy"]): c for c in data["cells"]}
    assert rows["random"]["speedup"] == pytest.approx(1.0)
    # the table ranks by the winners re-measured side by side, one round-robin per kernel
    for k in data["kernels"]:
        confirmation = data["confirmations"][k]
        # three rounds, up to two more where a configuration's rounds disagreed
        assert 3 <= confirmation["rounds"] <= 5
        assert (confirmation["rounds"] > 3) == any(
            "rounds disagreed" in n for n in confirmation["notes"]
        )
        timed = {json.dumps(e["config"], sort_keys=True): e for e in confirmation["entries"]}
        for s in ("random", "hybrid"):
            c = cells[(k, s)]
            entry = timed[json.dumps(c["best_config"], sort_keys=True)]
            assert c["remeasured_s"] == entry["median_s"] > 0
            assert len(entry["times_s"]) >= 9  # three rounds of at least three runs
    per_kernel = [
        cells[(k, "random")]["remeasured_s"] / cells[(k, "hybrid")]["remeasured_s"]
        for k in data["kernels"]
    ]
    assert rows["hybrid"]["speedup"] == pytest.approx(_geomean(per_kernel))
    for s in ("random", "hybrid"):
        mine = [cells[(k, s)] for k in data["kernels"]]
        assert rows[s]["configs"] == pytest.approx(sum(c["evaluations"] for c in mine) / 2)
        assert rows[s]["compile_s"] == pytest.approx(sum(c["compile_s"] for c in mine) / 2)
        best = [
            min(cells[(k, t)]["remeasured_s"] for t in ("random", "hybrid"))
            for k in data["kernels"]
        ]
        assert rows[s]["best_count"] == sum(
            1 for c, b in zip(mine, best, strict=True) if c["remeasured_s"] == b
        )
    assert all(cells[(k, "random")]["evaluations"] == 5 for k in data["kernels"])
    assert all(cells[(k, "hybrid")]["evaluations"] <= 6 for k in data["kernels"])
    # a strategy's cost counts every configuration it used, whoever measured it first
    report = data["reports"]["heat3d"]["hybrid"]
    traced = sum(e["compile_s"] for r in report["runs"] for e in r["outcome"]["trace"])
    assert cells[("heat3d", "hybrid")]["compile_s"] == pytest.approx(traced)

    table = list(csv.DictReader((out / "table.csv").open()))
    assert {r["strategy"]: float(r["speedup"]) for r in table} == pytest.approx(
        {s: r["speedup"] for s, r in rows.items()}
    )
    pk = list(csv.DictReader((out / "per_kernel.csv").open()))
    assert len(pk) == 4
    for r in pk:
        assert float(r["best_s"]) == cells[(r["kernel"], r["strategy"])]["best_s"]
        assert float(r["remeasured_s"]) == cells[(r["kernel"], r["strategy"])]["remeasured_s"]
    md = (out / "table.md").read_text()
    assert f"| hybrid | {rows['hybrid']['speedup']:.3f} |" in md

    # a finished comparison's files are kept unless --force
    kept = gtune_here("compare", *KERNELS, *ARGS, "--out", str(out), "--no-confirm", db=db)
    assert kept.returncode == 2 and "--force" in kept.stderr and "table.md" in kept.stderr
    assert (out / "table.md").read_text() == md
    # again, ranked by the searches' own bests: every search is served by the store
    again = gtune_here(
        "compare", *KERNELS, *ARGS, "--out", str(out), "--no-confirm", "--force", db=db
    )
    assert again.returncode == 0, again.stderr
    redo = json.loads((out / "compare.json").read_text())
    assert all(c["measured"] == 0 for c in redo["cells"]), "everything comes from the store"
    assert redo["confirmations"] == {}
    assert all(c["remeasured_s"] is None for c in redo["cells"])
    assert [(c["best_s"], c["best_config"]) for c in redo["cells"]] == [
        (c["best_s"], c["best_config"]) for c in data["cells"]
    ]
    redo_rows = {r["strategy"]: r for r in redo["rows"]}
    searched = [
        cells[(k, "random")]["best_s"] / cells[(k, "hybrid")]["best_s"] for k in data["kernels"]
    ]
    assert redo_rows["hybrid"]["speedup"] == pytest.approx(_geomean(searched))
    assert any("--no-confirm" in n for n in redo["notes"])


def test_compare_needs_random(tmp_path: Path, gtune_here: Cli) -> None:
    proc = gtune_here("compare", KERNELS[0], "--strategies", "hybrid,dims", db=tmp_path / "r.db")
    assert proc.returncode == 2 and "include random" in proc.stderr
    proc = gtune_here("compare", KERNELS[0], "--strategies", "random,nope", db=tmp_path / "r.db")
    assert proc.returncode == 2 and "unknown strategy 'nope'" in proc.stderr
