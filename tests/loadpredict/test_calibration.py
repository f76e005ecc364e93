"""benchmarks/predict/calibration.py's tables on made-up held-out kernels: the
reliability bins count the first choice's misses by its probability, and a gated scout
takes each kernel's outcome of its gate."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
load_script(ROOT / "benchmarks" / "predict" / "regret.py")  # calibration imports it
calibration = load_script(ROOT / "benchmarks" / "predict" / "calibration.py")


def entry(kernel: str, p: float, cost: float) -> object:
    """A held-out kernel: the first choice alone costs ``cost``; the scout finds the
    best (regret 1) for 1.5 times the first choice's seconds."""
    gates = {t: ((cost, 1.0, 10.0) if p >= t else (1.0, 1.5, 15.0)) for t in calibration.GATES}
    return calibration.Held(kernel, p, cost, gates, 20.0)


ENTRIES = [
    entry("a", 0.6, 1.0),
    entry("b", 0.95, 1.10),
    entry("c", 0.95, 1.0),
    entry("d", 1.0, 1.03),
]


def test_reliability_counts_misses_per_bin_and_scores_the_first_choice() -> None:
    lines = calibration.reliability(ENTRIES)
    rows = {line.split(" | ")[0].strip("| "): line for line in lines if line.startswith("| 0")}
    assert "| 1 | 0.600 | 100% | 0 | 0 |" in rows["0.00–0.70"]
    assert "| 2 | 0.950 | 50% | 1 | 1 |" in rows["0.90–0.99"]
    assert "| 1 | 1.000 | 0% | 1 | 0 |" in rows["0.99–1.00"]
    brier = ((0.6 - 1) ** 2 + (0.95 - 0) ** 2 + (0.95 - 1) ** 2 + (1.0 - 0) ** 2) / 4
    assert f"{brier:.4f}" in lines[-1]


def test_a_gate_scouts_only_below_its_probability() -> None:
    lines = calibration.gated(ENTRIES)
    never = next(line for line in lines if line.startswith("| never"))
    always = next(line for line in lines if line.startswith("| always"))
    assert "| 0 |" in never and "| 1.100 | 1 | 50% |" in never  # 40 of 80 s
    assert "| 4 | 1.0000 | 1.000 | 0 | 75% |" in always  # 60 of 80 s
