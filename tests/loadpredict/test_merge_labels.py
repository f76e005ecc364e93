"""benchmarks/predict/merge_labels.py: labelling parts merged into one dataset, the newest
row per kernel, from CSVs or from parts as a device call brings them back."""

from __future__ import annotations

import dataclasses
import tarfile
from pathlib import Path

import pytest

from gtune.loadpredict.dataset import Dataset
from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
ml = load_script(ROOT / "benchmarks" / "predict" / "merge_labels.py")
SHIPPED = ROOT / "gtune" / "data" / "models" / "nvidia-h200-hybrid.csv"


def _part(tmp_path: Path, name: str, rows: list[object]) -> Path:
    """A part folder as collect_complete.sh packs it: collect.tar.gz with the dataset."""
    folder = tmp_path / name
    folder.mkdir()
    csv = tmp_path / f"{name}-nvidia-h200-hybrid.csv"
    Dataset(rows).write_csv(csv)  # type: ignore[arg-type]
    with tarfile.open(folder / "collect.tar.gz", "w:gz") as tar:
        tar.add(csv, arcname="./nvidia-h200-hybrid.csv")
    return folder


def test_parts_merge_newest_row_per_kernel(tmp_path: Path) -> None:
    rows = Dataset.read_csv(SHIPPED).rows
    base = tmp_path / "base.csv"
    Dataset(rows[:10]).write_csv(base)
    # a later part's row wins: the same kernel, global now the fastest
    relabelled = dataclasses.replace(rows[0], times={**rows[0].times, "global": 1e-9})
    part_a = _part(tmp_path, "A", [relabelled, *rows[10:15]])
    part_b = tmp_path / "b.csv"
    Dataset(rows[15:20]).write_csv(part_b)
    out = tmp_path / "out.csv"
    assert ml.main([str(out), str(base), str(part_a), str(part_b)]) == 0
    merged = {r.kernel: r for r in Dataset.read_csv(out).rows}
    assert set(merged) == {r.kernel for r in rows[:20]}
    assert merged[rows[0].kernel].label == "global"
    assert ml.merge(out, base, [part_b])[:2] == (10, 15)


def test_a_part_without_a_dataset_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "A"
    empty.mkdir()
    assert ml.main([str(tmp_path / "out.csv"), str(SHIPPED), str(empty)]) == 2
    err = capsys.readouterr().err
    assert "merge_labels:" in err and "no collect.tar.gz" in err
    assert not (tmp_path / "out.csv").exists()
