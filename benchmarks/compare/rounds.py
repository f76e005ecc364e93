"""Table 3's side-by-side round, each round weighted the same (issue 26).

Reads kernel records (the ``records/*.json`` that ``run_compare.py`` writes, or its
``records.tar.gz``), splits every re-measured configuration's times into its rounds and
re-ranks the strategies by the balanced median that :mod:`gtune.tuning.confirm` now
uses. Records written before the confirmation round kept its rounds (``round_sizes``)
are split by replaying the timing rule (``TimingPolicy()``: a measurement stops when
the rule says enough) over the times in order; the split is checked to use every time.

    python benchmarks/compare/rounds.py benchmarks/results/compare/table3-scale/records.tar.gz \\
        --out benchmarks/results/compare/table3-scale/rounds
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import sys
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_compare

from gtune.kernel import canonical_config
from gtune.measure.stats import TimingPolicy
from gtune.tuning.confirm import ConfirmedConfig


def split_rounds(times: Sequence[float], policy: TimingPolicy) -> list[int] | None:
    """The round sizes of ``times`` measured round after round under ``policy``;
    None when the times do not split into whole measurements."""
    sizes: list[int] = []
    cur: list[float] = []
    for t in times:
        cur.append(t)
        if policy.enough(cur):
            sizes.append(len(cur))
            cur = []
    return None if cur else sizes


def entry_of(e: Mapping[str, Any], policy: TimingPolicy) -> ConfirmedConfig:
    times = [float(t) for t in e["times_s"]]
    sizes = e.get("round_sizes") or split_rounds(times, policy) or []
    return ConfirmedConfig(dict(e["config"]), times_s=times, round_sizes=list(sizes))


def rerank(record: Mapping[str, Any], policy: TimingPolicy) -> tuple[dict[str, Any], list[str]]:
    """``record`` with each cell's ``remeasured_s`` from the balanced sample; lines
    telling the rounds of each re-measured configuration."""
    out = copy.deepcopy(dict(record))
    conf = record.get("confirmation")
    if not conf:
        return out, []
    entries = {canonical_config(e["config"]): entry_of(e, policy) for e in conf["entries"]}
    lines = []
    for cell in out["cells"]:
        cfg = cell.get("best_config")
        e = entries.get(canonical_config(cfg)) if cfg else None
        if e is None or not e.ok:
            continue
        before = cell.get("remeasured_s")
        cell["remeasured_pooled_s"] = before
        cell["remeasured_s"] = e.median_s
        cell["round_medians_s"] = e.round_medians_s
        cell["round_sizes"] = e.round_sizes
        lines.append(
            f"| {record['kernel']} | {cell['strategy']} | {_us(cell.get('best_s'))} | "
            f"{_us(before)} | "
            + " / ".join(
                f"{m * 1e6:.1f} ({n})"
                for m, n in zip(e.round_medians_s, e.round_sizes, strict=True)
            )
            + f" | {_us(e.median_s)} |"
        )
    return out, lines


def _us(v: Any) -> str:
    return "-" if v is None else f"{float(v) * 1e6:.1f}"


def load(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        return run_compare.read_records(path)
    out = []
    with tarfile.open(path) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if m.isfile() and m.name.endswith(".json"):
                f = tar.extractfile(m)
                assert f is not None
                out.append(json.load(io.TextIOWrapper(f, encoding="utf-8")))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", type=Path, help="a records folder or records.tar.gz")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    policy = TimingPolicy()
    records = load(args.records)
    strategies = run_compare.STRATEGIES.split(",")
    reranked, table = [], []
    for r in records:
        new, lines = rerank(r, policy)
        reranked.append(new)
        table += lines
    before = run_compare.merge(records, strategies)
    after = run_compare.merge(reranked, strategies)
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"pooled": before, "balanced": after, "command": " ".join(sys.argv)}
    (args.out / "rounds.json").write_text(json.dumps(doc, indent=1) + "\n")
    md = [
        "# Table 3's side-by-side round, each round weighted the same",
        "",
        "Per re-measured winner: its search time, the pooled median the table used, each",
        "round's median (runs in the round) and the balanced median (µs).",
        "",
        "| kernel | strategy | search | pooled | rounds | balanced |",
        "|---|---|---:|---:|---|---:|",
        *table,
        "",
        "## every kernel: pooled (as published) against balanced",
        "",
        "| strategy | over random, pooled | over random, balanced "
        "| over expert, pooled | over expert, balanced |",
        "|---|---:|---:|---:|---:|",
    ]
    for s in strategies:
        b, a = before["summary"]["strategies"][s], after["summary"]["strategies"][s]
        md.append(
            f"| {s} | {run_compare._x(b['over_random'])} | {run_compare._x(a['over_random'])} | "
            f"{run_compare._x(b['over_expert'])} | {run_compare._x(a['over_expert'])} |"
        )
    for label, key in (
        ("held out of the model's dataset", "held_out"),
        ("every kernel", "summary"),
    ):
        t = after[key]["target"]
        if t.get("kernels"):
            md.append("")
            md.append(
                f"Target, {label} ({t['kernels']} kernels), balanced: hybrid / expert speedup "
                f"over random {t['speedup_ratio']:.3f}x at {t['configs_share']:.1%} of expert's "
                "configurations "
                f"(pooled: {before[key]['target']['speedup_ratio']:.3f}x)."
            )
    (args.out / "rounds.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
