"""``benchmarks/lift_export_check.py --winners``: a result without a store (a merge of
runs) checked without tuning again: each kernel lifted, its recorded winner measured
once into a fresh store, exported and run by the example against the original (real
PoCL)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.opencl

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "lift_export_check.py"
MANIFEST = yaml.safe_load((ROOT / "stencils" / "plain" / "manifest.yaml").read_text())["kernels"]
# winners at the manifest's small sizes (a lift_corpus.py --small run's on PoCL)
JACOBI2D = {"WX": 16, "WY": 4, "BX": 1, "VX": 1, "CX": 1, "CY": 1, "LOCAL": 0, "IMAGE": 0}
JACOBI2D |= {"STREAM": 1, "ZC": 1, "RIM": 0, "RIN": 0, "BY": 1}
BLUR_U8 = {"WX": 16, "WY": 4, "BX": 2, "VX": 2, "CX": 1, "CY": 1, "LOCAL": 0, "STREAM": 0}
BLUR_U8 |= {"ZC": 1, "SEP": 0}


def _merged(path: Path, winners: dict[str, dict[str, int]]) -> Path:
    kernels = {
        name: {"size": MANIFEST[name]["size"], "lifted_config": config, "budget": 0}
        for name, config in winners.items()
    }
    path.write_text(json.dumps({"device": "dev", "budget": 0, "rounds": 1, "kernels": kernels}))
    return path


def _check(out: Path, merged: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(out), "--winners", str(merged), "--device", "pthread",
         *args],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )  # fmt: skip


def _rows(out: Path) -> dict[str, Any]:
    return {r["kernel"]: r for r in json.loads((out / "export_check.json").read_text())}


def test_the_recorded_winners_are_measured_exported_and_match(tmp_path: Path) -> None:
    """One run, two kernels: blur_u8's winner measured, exported (the winner, not
    another) and matching the original bit for bit; jacobi2d's winner made one that no
    longer runs, a failed row with nothing exported, the run's exit status 1."""
    broken = JACOBI2D | {"BX": 4, "STREAM": 0}  # 64 columns a group: no launch at 32 wide
    merged = _merged(tmp_path / "merged.json", {"jacobi2d": broken, "blur_u8": BLUR_U8})
    out = tmp_path / "out"
    proc = _check(out, merged)
    assert proc.returncode == 1, proc.stderr
    rows = _rows(out)
    assert list(rows) == ["jacobi2d", "blur_u8"]
    assert not rows["jacobi2d"]["ok"] and rows["jacobi2d"]["status"] == "launch_failed"
    assert rows["blur_u8"]["ok"] and rows["blur_u8"]["status"] == "ok"
    exported = rows["blur_u8"]["configuration"]
    assert {k: exported[k] for k in BLUR_U8} == BLUR_U8  # exported: the winner, not another
    # parameters the template gained since (the clamp boundary's RIM, RIN, BY): named,
    # and at their defaults, the code the recorded winner ran
    added = {k: v for k, v in exported.items() if k not in BLUR_U8}
    assert added == rows["blur_u8"].get("defaults_added", {})
    assert added.get("RIM", 0) == 0
    assert set(rows["blur_u8"]["seconds"]) == {"lift", "measure", "export and example"}
    for name in ("jacobi2d", "blur_u8"):
        assert rows[name]["size"] == MANIFEST[name]["size"]
    assert rows["blur_u8"]["measured_s"] > 0
    assert "max |tuned - original| = 0 (ok)" in rows["blur_u8"]["example"]  # bit for bit
    assert "[1/2] jacobi2d" in proc.stderr and "[2/2] blur_u8" in proc.stderr
    assert (out / "lift.db").exists() and (out / "definitions" / "blur_u8.stencil.yaml").exists()
    assert (out / "tuned" / "blur_u8_tuned.json").exists()
    assert not list((out / "tuned").glob("jacobi2d*"))  # the failed winner: nothing exported
    copied = json.loads((out / "lift_corpus.json").read_text())
    assert copied["kernels"] == json.loads(merged.read_text())["kernels"]
    md = (out / "export_check.md").read_text()
    assert "recorded winners" in md and "FAILED: measure: launch_failed" in md


def test_an_unknown_kernel_or_a_bad_file_stops_with_one_message(tmp_path: Path) -> None:
    merged = _merged(tmp_path / "merged.json", {"jacobi2d": JACOBI2D})
    proc = _check(tmp_path / "out", merged, "--kernels", "jacobi2d", "no_such_kernel")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"lift_export_check: not a kernel of {merged}: no_such_kernel"
    ]
    assert not (tmp_path / "out").exists()
    (tmp_path / "bad.json").write_text('{"kernels": {"jacobi2d": {"size": "32x32"}}}')
    proc = _check(tmp_path / "out", tmp_path / "bad.json")
    assert proc.returncode == 2 and "no 'size' and 'lifted_config'" in proc.stderr
