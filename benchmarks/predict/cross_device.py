"""Does a load predictor carry over to a device it never saw?

    python3 benchmarks/predict/cross_device.py OUT DATASET.csv DATASET.csv [...]

Merges the datasets written by ``gtune train`` (one device each, or more) and, for
every device, trains on the other devices' kernels and predicts this one's (seed 001's
accuracies, §8.2), once with the static stencil features alone and once with the
device features added (``DeviceTraits``: GPU or not, compute units, local memory, work
group limit, clock, global memory, image support). Each device's own leave-one-out
accuracy is given beside it as the ceiling a model trained on that device reaches.
Those scores are then split between the held-out device's kernels that another device
also labelled (the model saw the same kernel-shape, with that device's label) and
those no other device labelled (the model must generalise): a transfer that only looks
up the other device's label scores well on the first and says nothing of the second.

Writes OUT/cross_device.json and OUT/cross_device.md. Needs no device: it reads
recorded measurements only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gtune.loadpredict import Dataset
from gtune.training import CrossValidation, held_out_devices, leave_one_out


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


def _mean(values: list[float | None]) -> float:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else math.nan


def _kept(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def shared_labels(data: Dataset, devices: list[str]) -> list[dict[str, Any]]:
    """For each pair of devices, the kernels labelled on both: how often the labels
    agree, and what one device's label keeps of the other's best (its best time over
    the time of the technique the first device chose, penalty-weighted accuracy's
    per-kernel term; None where the other device has no time for that technique, left
    out of the mean), each disagreement listed. Transfer can be no better than this."""
    by = {d: {r.kernel: r for r in data.rows if r.device == d} for d in devices}
    out: list[dict[str, Any]] = []
    for i, a in enumerate(devices):
        for b in devices[i + 1 :]:
            common = sorted(set(by[a]) & set(by[b]))
            if not common:
                continue
            differ = []
            kept: dict[str, list[float | None]] = {a: [], b: []}
            for k in common:
                ra, rb = by[a][k], by[b][k]
                for src, dst in ((ra, rb), (rb, ra)):
                    t = dst.times
                    best = min(v for v in t.values() if math.isfinite(v))
                    chosen = t.get(src.label, math.inf)
                    kept[dst.device].append(best / chosen if math.isfinite(chosen) else None)
                if ra.label != rb.label:
                    differ.append(
                        {
                            "kernel": k,
                            a: ra.label,
                            b: rb.label,
                            f"{a} label on {b}": kept[b][-1],
                            f"{b} label on {a}": kept[a][-1],
                        }
                    )
            out.append(
                {
                    "devices": [a, b],
                    "kernels": len(common),
                    "agree": len(common) - len(differ),
                    f"{a} labels on {b}": _mean(kept[b]),
                    f"{b} labels on {a}": _mean(kept[a]),
                    "differ": differ,
                }
            )
    return out


def _pair(cv: CrossValidation) -> dict[str, float]:
    return {"absolute": cv.absolute, "penalty_weighted": cv.penalty_weighted}


def seen_split(
    data: Dataset,
    devices: list[str],
    own: dict[str, CrossValidation | None],
    held_out: dict[str, CrossValidation],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per held-out device, its kernels split by whether another device labelled the
    same kernel-shape ("seen": in the held-out model's training set with that device's
    label) or not ("unseen"): the held-out model's scores, the device's own
    leave-one-out and the others' majority on each part (a part with no kernel is left
    out)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for dev in devices:
        elsewhere = {r.kernel for r in data.rows if r.device != dev}
        mine = [r for r in data.rows if r.device == dev]
        parts = {
            "seen": [f"{r.kernel}@{dev}" for r in mine if r.kernel in elsewhere],
            "unseen": [f"{r.kernel}@{dev}" for r in mine if r.kernel not in elsewhere],
        }
        out[dev] = {}
        for name, kernels in parts.items():
            if not kernels:
                continue
            held = held_out[dev].only(kernels)
            mine_cv = own[dev]
            out[dev][name] = {
                "kernels": len(kernels),
                "held_out": _pair(held),
                "own_leave_one_out": _pair(mine_cv.only(kernels)) if mine_cv else None,
                "majority": held.majority,
                "majority_penalty_weighted": held.majority_penalty_weighted,
            }
    return out


def _pw(pair: dict[str, float] | None) -> str:
    return "-" if pair is None else f"{pair['absolute']:.2f} / {pair['penalty_weighted']:.3f}"


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
    own_cv: dict[str, CrossValidation | None] = {}
    for dev in devices:
        rows = Dataset([r for r in data.rows if r.device == dev])
        own_cv[dev] = leave_one_out(rows) if len(rows) >= 2 else None
    own = {d: _scores(cv) if cv else None for d, cv in own_cv.items()}
    blind_cv = held_out_devices(data, with_device=False)
    blind = {d: _scores(cv) for d, cv in blind_cv.items()}
    aware = {d: _scores(cv) for d, cv in held_out_devices(data, with_device=True).items()}
    split = seen_split(data, devices, own_cv, blind_cv)
    result: dict[str, Any] = {
        "datasets": [str(p) for p in args.datasets],
        "devices": devices,
        "own_leave_one_out": own,
        "held_out_stencil_features": blind,
        "held_out_with_device_features": aware,
        "held_out_seen_unseen": split,
        "shared_labels": shared_labels(data, devices),
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
    lines += [
        "",
        "## Kernels the other devices labelled too, and kernels only this one labelled",
        "",
        "The stencil-features model of the table above, its scores split: *seen*, the "
        "same kernel-shape is in its training set with another device's label; "
        "*unseen*, no other device labelled it. Only the unseen kernels show a model "
        "generalising to a device it never saw; on the seen ones it mostly repeats the "
        "other device's label for the same kernel (compare the shared labels below).",
        "",
        "| held-out device | kernels | trained on the others (abs / PW) | its own LOO "
        "(abs / PW) | the others' majority (PW) |",
        "|---|---|---|---|---|",
    ]
    for dev in devices:
        for name, part in split[dev].items():
            lines.append(
                f"| {dev} | {part['kernels']} {name} | {_pw(part['held_out'])} "
                f"| {_pw(part['own_leave_one_out'])} | {part['majority']} "
                f"({part['majority_penalty_weighted']:.3f}) |"
            )
    for pair in result["shared_labels"]:
        a, b = pair["devices"]
        lines += [
            "",
            f"## Kernels labelled on both {a} and {b}",
            "",
            f"{pair['kernels']} kernels, the labels agree on {pair['agree']}. Each device's "
            f"labels used on the other keep (mean of best / chosen): {a} on {b} "
            f"{pair[f'{a} labels on {b}']:.3f}, {b} on {a} {pair[f'{b} labels on {a}']:.3f} "
            "(-: that technique has no time there).",
        ]
        if pair["differ"]:
            lines += [
                "",
                f"| kernel | {a} | {b} | {a}'s label on {b} | {b}'s label on {a} |",
                "|---|---|---|---:|---:|",
            ]
            lines += [
                f"| {d['kernel']} | {d[a]} | {d[b]} | {_kept(d[f'{a} label on {b}'])} "
                f"| {_kept(d[f'{b} label on {a}'])} |"
                for d in pair["differ"]
            ]
    (args.out / "cross_device.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
