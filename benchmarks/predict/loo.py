"""Leave-one-out of load-predictor datasets side by side (issue 26).

For each dataset CSV: the shipped estimator's leave-one-out (absolute and
penalty-weighted accuracy), the majority baseline, the same on the decisive kernels
(runner-up more than 5 % slower), feature importances (impurity, and permutation on
held-out kernels), and each kernel's prediction; ``--only`` restricts the scores to
kernels whose name starts with one of the given prefixes.

    python benchmarks/predict/loo.py OUT.json A.csv B.csv [--only star_]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gtune.loadpredict.dataset import Dataset  # noqa: E402
from gtune.training.train import card_scores  # noqa: E402
from gtune.training.validation import grouped_importances, leave_one_out  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("datasets", type=Path, nargs="+")
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args(argv)
    doc = {"command": " ".join(sys.argv), "datasets": {}}
    for path in args.datasets:
        cv = leave_one_out(Dataset.read_csv(path), permutation=True)
        entry = {
            "scores": card_scores(cv),
            "importances": grouped_importances(cv.importances),
            "permutation": {k: list(v) for k, v in cv.permutation.items()},
            "predictions": cv.to_dict()["predictions"],
        }
        for prefix in args.only:
            part = cv.only(p.kernel for p in cv.predictions if p.kernel.startswith(prefix))
            entry[f"only {prefix}"] = part.scores()
        doc["datasets"][str(path)] = entry
        s = entry["scores"]
        print(
            f"{path}: {s['kernels']} kernels, absolute {s['absolute_accuracy']:.3f}, "
            f"penalty-weighted {s['penalty_weighted_accuracy']:.4f}; majority "
            f"({s['majority_technique']}, {s['majority_share']:.0%}) penalty-weighted "
            f"{s['majority_penalty_weighted_accuracy']:.4f}; decisive {s['decisive']}"
        )
        for prefix in args.only:
            print(f"  only {prefix}: {entry[f'only {prefix}']}")
        top = sorted(entry["importances"].items(), key=lambda kv: -kv[1])[:8]
        print("  importances: " + ", ".join(f"{k} {v:.3f}" for k, v in top))
        perm = list(entry["permutation"].items())[:6]
        print(
            "  permutation loss (abs, pw): "
            + ", ".join(f"{k} {a:.3f}/{w:.4f}" for k, (a, w) in perm)
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
