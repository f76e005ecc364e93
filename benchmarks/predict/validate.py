"""Leave-one-out cross-validation of load-predictor datasets, offline.

    python3 benchmarks/predict/validate.py OUT DATASET.csv [DATASET.csv ...]

For each dataset written by ``gtune train`` (recorded measurements; no device needed):
seed 001's two accuracies (§8.2) with the forest a shipped model uses, the baseline of
always answering the majority technique, and each kernel's label, prediction and
penalty. A prediction is the most probable technique the kernel has, as ``gtune run``
chooses. Writes OUT/validate.json and OUT/validate.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gtune.loadpredict import Dataset
from gtune.loadpredict.model import sklearn_version
from gtune.training import leave_one_out


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("datasets", nargs="+", type=Path)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    doc: dict[str, object] = {"sklearn": sklearn_version(), "datasets": {}}
    md = [
        "# Leave-one-out cross-validation (offline)",
        "",
        f"scikit-learn {sklearn_version()}.",
        "",
        "| dataset | kernels | absolute | penalty-weighted | majority | always majority |",
        "|---|---:|---:|---:|---|---:|",
    ]
    rows = []
    for path in args.datasets:
        cv = leave_one_out(Dataset.read_csv(path))
        doc["datasets"][path.name] = cv.to_dict()  # type: ignore[index]
        md.append(
            f"| {path.name} | {len(cv.predictions)} | {cv.absolute:.2f} | "
            f"{cv.penalty_weighted:.3f} | {cv.majority} | {cv.majority_penalty_weighted:.3f} |"
        )
        for p in cv.predictions:
            rows.append(f"| {p.kernel} | {p.label} | {p.predicted} | {p.penalty:.3f} |")
    md += ["", "| kernel | best technique | predicted | penalty |", "|---|---|---|---:|", *rows]
    (args.out / "validate.json").write_text(json.dumps(doc, indent=1))
    (args.out / "validate.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
