"""Where does the hybrid heuristic lose to expert search? Read from a recorded Table 3.

    python3 benchmarks/compare/why_expert.py OUT [--store results.db.gz] [--compare compare.json.gz]

Defaults to the H100 Table 3 in ``benchmarks/results/compare/``. For every kernel it
sets the hybrid heuristic's best configuration against expert search's and against
the best configuration anyone measured, parameter by parameter, and asks of the store
(every configuration any strategy measured) what two cheap extra steps would have
found from the hybrid's best:

* *merge reshape*: the same work-group, the merge factors CX, CY, CZ redistributed
  with their product kept;
* *joint reshape*: work-group shape and merge shape redistributed together, both
  products kept.

Only measured configurations can be looked up, so each figure is a lower bound on
what the step would find (the count of measured candidates is given). Needs no device.
Writes OUT/why_expert.json and OUT/why_expert.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sqlite3
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "compare"
SHAPE = ("WX", "WY", "WZ", "CX", "CY", "CZ")

Config = dict[str, int]


def _open_store(path: Path) -> sqlite3.Connection:
    if path.suffix == ".gz":
        tmp = Path(tempfile.mkdtemp()) / "results.db"
        tmp.write_bytes(gzip.decompress(path.read_bytes()))
        path = tmp
    return sqlite3.connect(path)


def _load_json(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    data: dict[str, Any] = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    return data


def _prod(c: Config, names: tuple[str, ...]) -> int:
    return math.prod(c.get(n, 1) for n in names)


def _fmt(c: Config) -> str:
    return " ".join(f"{p}={c[p]}" for p in SHAPE if p in c)


def _single_dim_merge(c: Config) -> bool:
    """All merging in one dimension (or none)."""
    return sum(c.get(p, 1) > 1 for p in ("CX", "CY", "CZ")) <= 1


def analyse(store: sqlite3.Connection, compare: dict[str, Any]) -> list[dict[str, Any]]:
    measured: dict[str, list[tuple[Config, float]]] = defaultdict(list)
    for kid, cfg, m in store.execute(
        "SELECT kernel_id, config, median_s FROM results WHERE status = 'ok'"
    ):
        measured[kid].append((json.loads(cfg), float(m)))
    cells = {(c["kernel"], c["strategy"]): c for c in compare["cells"]}
    out: list[dict[str, Any]] = []
    for name in compare["kernels_done"]:
        hyb, exp = cells[(name, "hybrid")], cells[(name, "expert")]
        hb: Config = hyb["best_config"]
        # the store's kernel: the one holding the hybrid's best at its recorded time
        rows = next(
            (
                lst
                for lst in measured.values()
                if any(c == hb and abs(m - hyb["best_s"]) < 1e-12 for c, m in lst)
            ),
            None,
        )
        if rows is None:
            continue
        others = [p for p in hb if p not in SHAPE]
        same_rest = [(c, m) for c, m in rows if all(c.get(p) == hb[p] for p in others)]
        c_prod, w_prod = _prod(hb, ("CX", "CY", "CZ")), _prod(hb, ("WX", "WY", "WZ"))
        merge = [
            (c, m)
            for c, m in same_rest
            if all(c.get(p) == hb[p] for p in ("WX", "WY", "WZ"))
            and _prod(c, ("CX", "CY", "CZ")) == c_prod
        ]
        joint = [
            (c, m)
            for c, m in same_rest
            if _prod(c, ("CX", "CY", "CZ")) == c_prod and _prod(c, ("WX", "WY", "WZ")) == w_prod
        ]
        best_any = min(rows, key=lambda cm: cm[1])
        mbest = min(merge, key=lambda cm: cm[1])
        jbest = min(joint, key=lambda cm: cm[1])
        out.append(
            {
                "kernel": name,
                "hybrid_s": hyb["best_s"],
                "expert_s": exp["best_s"],
                "best_measured_s": best_any[1],
                "hybrid": hb,
                "expert": exp["best_config"],
                "best_measured": best_any[0],
                "differs_in": [p for p in hb if hb[p] != exp["best_config"].get(p)],
                "merge_reshape": {"measured": len(merge), "best_s": mbest[1], "best": mbest[0]},
                "joint_reshape": {"measured": len(joint), "best_s": jbest[1], "best": jbest[0]},
            }
        )
    return out


def report(rows: list[dict[str, Any]], device: str) -> str:
    lines = [
        f"# Where the hybrid heuristic loses to expert search ({device})",
        "",
        "| kernel | hybrid µs | expert µs | best measured µs | hybrid best | expert best "
        "| merge reshape: measured, best µs | joint reshape: measured, best µs |",
        "|---|---:|---:|---:|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kernel']} | {r['hybrid_s'] * 1e6:.1f} | {r['expert_s'] * 1e6:.1f} | "
            f"{r['best_measured_s'] * 1e6:.1f} | {_fmt(r['hybrid'])} | {_fmt(r['expert'])} | "
            f"{r['merge_reshape']['measured']}, {r['merge_reshape']['best_s'] * 1e6:.1f} | "
            f"{r['joint_reshape']['measured']}, {r['joint_reshape']['best_s'] * 1e6:.1f} |"
        )
    n = len(rows)
    behind = [r for r in rows if r["expert_s"] < r["hybrid_s"]]
    gap = statistics.geometric_mean([r["hybrid_s"] / r["expert_s"] for r in rows])
    wider = sum(r["expert"]["WX"] > r["hybrid"]["WX"] for r in rows)
    single_h = sum(_single_dim_merge(r["hybrid"]) for r in rows)
    single_e = sum(_single_dim_merge(r["expert"]) for r in rows)
    joint_gain = [r for r in rows if r["joint_reshape"]["best_s"] < r["hybrid_s"] * 0.99]
    merge_gain = [r for r in rows if r["merge_reshape"]["best_s"] < r["hybrid_s"] * 0.99]
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        for p in r["differs_in"]:
            counts[p] += 1
    lines += [
        "",
        f"- Expert search beats the hybrid on {len(behind)} of {n} kernels; geometric mean "
        f"of hybrid / expert time: {gap:.3f}.",
        "- Parameters in which the two bests differ (kernels): "
        + ", ".join(f"{p} {k}" for p, k in sorted(counts.items(), key=lambda kv: -kv[1]))
        + ".",
        f"- Expert's best has a wider WX than the hybrid's on {wider} of {n} kernels.",
        f"- All merging in one dimension: the hybrid's best on {single_h} of {n} kernels, "
        f"expert's on {single_e}.",
        f"- Among measured configurations, a merge reshape from the hybrid's best gains "
        f">1 % on {len(merge_gain)} kernels; a joint reshape on {len(joint_gain)} "
        f"({', '.join(r['kernel'] for r in joint_gain) or 'none'}).",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--store", type=Path, default=RESULTS / "results.db.gz")
    ap.add_argument("--compare", type=Path, default=RESULTS / "table" / "compare.json.gz")
    args = ap.parse_args()
    compare = _load_json(args.compare)
    rows = analyse(_open_store(args.store), compare)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "why_expert.json").write_text(json.dumps(rows, indent=2) + "\n")
    text = report(rows, compare.get("device", "?"))
    (args.out / "why_expert.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
