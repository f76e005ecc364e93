"""benchmarks/predict/unseen.py on the shipped H200 dataset: the kernels a labelling
call added, chosen for by the card fitted on the rows before them."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, load_script

unseen = load_script(ROOT / "benchmarks" / "predict" / "unseen.py")
SHIPPED = ROOT / "gtune" / "data" / "models" / "nvidia-h200-hybrid.csv"
ADDED = ("lifted_mirror_filter2d_sym@4096x4096", "lifted_periodic_heat2d@8192x8192")


def test_the_added_rows_are_chosen_for_by_the_card_fitted_without_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SHIPPED.open(newline="") as f:
        rows = list(csv.DictReader(f))
    old = tmp_path / "old.csv"
    with old.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(r for r in rows if r["kernel"] not in ADDED)
    assert unseen.main([str(old), str(SHIPPED)]) == 0
    out = capsys.readouterr().out
    table = {line.split(" | ")[0].strip("| "): line for line in out.splitlines()}
    for kernel in ADDED:
        row = next(r for r in rows if r["kernel"] == kernel)
        times = {t: float(row[f"time:{t}"]) for t in ("global", "stream", "vec")}
        line = table[kernel]
        chosen = re.search(r"\| (\w+) \(p=", line)
        assert chosen is not None, line
        # the regret printed is the chosen technique's best over the best of the three
        regret = float(line.rstrip(" |").rsplit("|", 1)[1])
        assert regret == pytest.approx(times[chosen.group(1)] / min(times.values()), abs=1e-3)
    assert "2 kernels;" in out


def test_nothing_added_is_one_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert unseen.main([str(SHIPPED), str(SHIPPED)]) == 2
    assert "holds no kernel that OLD lacks" in capsys.readouterr().err
