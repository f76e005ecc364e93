"""benchmarks/predict/cross_device.py's shared labels: what one device's labels keep on
another, over the committed GPU datasets (no device)."""

from __future__ import annotations

import math
from pathlib import Path

from gtune.loadpredict import Dataset
from gtune.loadpredict.model import TechniqueForest
from gtune.training import held_out_devices, leave_one_out
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


def test_seen_split_parts_each_held_out_device_by_what_the_others_labelled() -> None:
    module = load_script(ROOT / "benchmarks" / "predict" / "cross_device.py")
    h100 = Dataset.read_csv(PREDICT / "h100-table3-deeper" / "nvidia-h100-80gb-hbm3-hybrid.csv")
    h200 = Dataset.read_csv(PREDICT / "h200-scale" / "nvidia-h200-hybrid.csv")
    # a small slice keeps the fits cheap: the H200's first 8 kernels and 12 of the H100's,
    # 4 of them shared
    h200_rows = sorted(h200.usable().rows, key=lambda r: r.kernel)[:8]
    shared = {r.kernel for r in h200_rows[:4]}
    h100_only = [r for r in h100.usable().rows if r.kernel not in {x.kernel for x in h200_rows}]
    h100_rows = [r for r in h100.usable().rows if r.kernel in shared] + h100_only[:8]
    data = Dataset(h100_rows).merged(h200_rows).usable()
    devices = sorted({r.device for r in data.rows})
    est = TechniqueForest(n_estimators=10)
    own = {
        d: leave_one_out(Dataset([r for r in data.rows if r.device == d]), estimator=est)
        for d in devices
    }
    held = held_out_devices(data, estimator=est, with_device=False)
    split = module.seen_split(data, devices, own, held)
    for dev in devices:
        parts = split[dev]
        assert parts["seen"]["kernels"] == len(shared)
        assert parts["seen"]["kernels"] + parts["unseen"]["kernels"] == len(held[dev].predictions)
        for key, cv in (("held_out", held[dev]), ("own_leave_one_out", own[dev])):
            for score in ("absolute", "penalty_weighted"):
                total = sum(p["kernels"] * p[key][score] for p in parts.values())
                assert math.isclose(total / len(cv.predictions), getattr(cv, score))
        assert {p["majority"] for p in parts.values()} == {held[dev].majority}
