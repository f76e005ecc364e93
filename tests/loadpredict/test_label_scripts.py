"""The labelling scripts refuse a carried dataset `gtune train` would not read, before
any device time is spent (benchmarks/predict/label_state.sh, shared by both)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREDICT = ROOT / "benchmarks" / "predict"


def _state(tmp_path: Path) -> tuple[Path, Path]:
    """A STATE whose part A holds a dataset under a name `gtune train` ignores, and a
    groups file."""
    state = tmp_path / "state"
    (state / "A").mkdir(parents=True)
    (state / "A" / "datasetA.csv").write_text("kernel,device,heuristic,label\n")
    groups = tmp_path / "groups.txt"
    groups.write_text("16x16x16 suite:star_3d_xyz_r1\n")
    return state, groups


@pytest.mark.parametrize("script", ["collect_two_gpus.sh", "avsa_then_labels.sh"])
def test_a_wrongly_named_dataset_is_refused_before_anything_runs(
    tmp_path: Path, script: str
) -> None:
    state, groups = _state(tmp_path)
    out = tmp_path / "out"
    if script == "collect_two_gpus.sh":
        args = [str(out), "pthread", "60", str(groups), str(groups), str(state)]
    else:
        avsa = tmp_path / "avsa"
        (avsa / "kernels").mkdir(parents=True)
        args = [str(out), "pthread", "60", str(avsa), str(groups), str(groups), str(state)]
    proc = subprocess.run(
        ["bash", str(PREDICT / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 2, proc.stderr
    assert "datasetA.csv: gtune train reads only NAME-hybrid.csv" in proc.stderr
    assert script in proc.stderr
    # nothing was labelled or measured
    assert not (out / "A.log").exists() and not (out / "avsa0.log").exists()
