"""benchmarks/lift_bar.py: issue 48's bar kernel by kernel, from a corpus result and its
bound classes (pure: no device)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import lift_bar


def _row(share: float, plain: float, over: float) -> dict[str, object]:
    return {
        "size": "8192x8192",
        "dtype": "float32",
        "fraction_of_copy": share,
        "plain_fraction_of_copy": plain,
        "lifted_over_plain": over,
        "budget": 0,
    }


@pytest.mark.parametrize(
    ("row", "said"),
    [
        (_row(0.90, 0.50, 1.80), "met"),
        (_row(0.823, 0.278, 2.96), "copy not met"),
        (_row(0.991, 0.806, 1.23), "1.3× not met: needs 104.8% of the copy (beyond the copy)"),
        (_row(0.987, 0.761, 1.297), "1.3× not met: needs 98.9% of the copy"),
        (_row(0.60, 0.55, 1.09), "copy not met; 1.3× not met: needs 71.5% of the copy"),
    ],
)
def test_the_verdict_names_each_part_missed(row: dict[str, object], said: str) -> None:
    assert lift_bar.verdict(row, 0.85, 1.3) == said


def test_counts_by_class_and_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = {"kernels": {"a": _row(0.9, 0.5, 1.8), "b": _row(0.7, 0.3, 2.3), "c": {"error": "x"}}}
    bound = {"kernels": {"a": {"class": "memory"}, "b": {"class": "mixed"}}}
    (tmp_path / "c.json").write_text(json.dumps(corpus))
    (tmp_path / "b.json").write_text(json.dumps(bound))
    assert lift_bar.main([str(tmp_path / "c.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "- memory: 1 kernels, 1 meet the bar" in out
    assert "- mixed: 1 kernels, 0 meet the bar" in out
    assert "| c | | | | | | | not measured: x |" in out and "- not measured: 1" in out
    assert lift_bar.main([str(tmp_path / "missing.json"), str(tmp_path / "b.json")]) == 2
    assert "lift_bar:" in capsys.readouterr().err
