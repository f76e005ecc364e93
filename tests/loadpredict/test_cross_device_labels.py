"""benchmarks/predict/cross_device.py's shared labels: what one device's labels keep on
another, over the committed GPU datasets (no device)."""

from __future__ import annotations

import math
from pathlib import Path

from gtune.loadpredict import Dataset
from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
PREDICT = ROOT / "benchmarks" / "results" / "predict"


def test_shared_labels_count_agreement_and_what_a_label_keeps_elsewhere() -> None:
    module = load_script(ROOT / "benchmarks" / "predict" / "cross_device.py")
    h100 = Dataset.read_csv(PREDICT / "h100-table3-deeper" / "nvidia-h100-80gb-hbm3-hybrid.csv")
    h200 = Dataset.read_csv(PREDICT / "h200-scale" / "nvidia-h200-hybrid.csv")
    data = h100.merged(h200.rows).usable()
    devices = sorted({r.device for r in data.rows})
    (pair,) = module.shared_labels(data, devices)
    a, b = pair["devices"]
    rows = {d: {r.kernel: r for r in data.rows if r.device == d} for d in (a, b)}
    common = set(rows[a]) & set(rows[b])
    assert pair["kernels"] == len(common) > 0
    differ = {d["kernel"] for d in pair["differ"]}
    assert pair["agree"] == len(common) - len(differ)
    assert differ == {k for k in common if rows[a][k].label != rows[b][k].label}
    for d in pair["differ"]:
        k = d["kernel"]
        for src, dst in ((a, b), (b, a)):
            kept = d[f"{src} label on {dst}"]
            t = rows[dst][k].times
            chosen = t.get(rows[src][k].label, math.inf)
            if math.isfinite(chosen):
                assert kept == min(v for v in t.values() if math.isfinite(v)) / chosen
                assert 0 < kept <= 1  # never faster than the best
            else:
                assert kept is None  # no time there: not counted, not zero
    for src, dst in ((a, b), (b, a)):
        assert 0 < pair[f"{src} labels on {dst}"] <= 1
