"""Does a load predictor carry over to a device it never saw?

    python3 benchmarks/predict/cross_device.py OUT DATASET.csv DATASET.csv [...]

Merges the datasets written by ``gtune train`` (one device each, or more) and, for
every device, trains on the other devices' kernels and predicts this one's (seed 001's
accuracies, §8.2), once with the static stencil features alone and once with the
device features added (``DeviceTraits``: GPU or not, compute units, local memory, work
group limit, clock, global memory, image support). Each device's own leave-one-out
accuracy is given beside it as the ceiling a model trained on that device reaches.

Writes OUT/cross_device.json and OUT/cross_device.md. Needs no device: it reads
recorded measurements only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gtune.loadpredict import Dataset
from gtune.training import held_out_devices, leave_one_out


def _scores(cv: Any) -> dict[str, Any]:
    return {
        "kernels": len(cv.predictions),
        "absolute": cv.absolute,
        "penalty_weighted": cv.penalty_weighted,
        "majority": cv.majority,
        "majority_penalty_weighted": cv.majority_penalty_weighted,
        "predicted": {p.kernel: p.predicted for p in cv.predictions},
        "labels": {p.kernel: p.label for p in cv.predictions},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("datasets", nargs="+", type=Path)
    args = ap.parse_args()
    data = Dataset([])
    for path in args.datasets:
        data = data.merged(Dataset.read_csv(path).rows)
    data = data.usable()
    devices = sorted({r.device for r in data.rows})
    own = {}
    for dev in devices:
        rows = Dataset([r for r in data.rows if r.device == dev])
        own[dev] = _scores(leave_one_out(rows)) if len(rows) >= 2 else None
    blind = {d: _scores(cv) for d, cv in held_out_devices(data, with_device=False).items()}
    aware = {d: _scores(cv) for d, cv in held_out_devices(data, with_device=True).items()}
    result = {
        "datasets": [str(p) for p in args.datasets],
        "devices": devices,
        "own_leave_one_out": own,
        "held_out_stencil_features": blind,
        "held_out_with_device_features": aware,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cross_device.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# A load predictor on a device it never saw",
        "",
        f"Datasets: {', '.join(f'`{p}`' for p in args.datasets)}.",
        "",
        "| held-out device | kernels | its own LOO (abs / PW) | trained on the others: "
        "stencil features (abs / PW) | + device features (abs / PW) | the others' majority "
        "(PW) |",
        "|---|---:|---|---|---|---|",
    ]
    for dev in devices:
        o, b, a = own[dev], blind[dev], aware[dev]
        own_txt = f"{o['absolute']:.2f} / {o['penalty_weighted']:.3f}" if o else "-"
        lines.append(
            f"| {dev} | {b['kernels']} | {own_txt} | {b['absolute']:.2f} / "
            f"{b['penalty_weighted']:.3f} | {a['absolute']:.2f} / {a['penalty_weighted']:.3f} "
            f"| {a['majority']} ({a['majority_penalty_weighted']:.3f}) |"
        )
    if len(devices) == 2:
        lines += [
            "",
            "With two devices each model is trained on one device only, so its device "
            "features are constant in training and cannot be learned from: the with- and "
            "without-device columns can only differ by chance. A third device is needed "
            "for the device features to mean anything.",
        ]
    (args.out / "cross_device.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
