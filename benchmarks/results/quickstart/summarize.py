"""One line per run of ``first_runs.sh`` (and a JSON summary): the confirmed speedup, the
configurations each technique's search measured, and where the wall time went.

    python benchmarks/results/quickstart/summarize.py LABEL=RUN.json ... > table.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def summary(path: Path) -> dict[str, object]:
    d = json.loads(path.read_text())
    c = d.get("confirmation") or {}
    t = d["time"]
    return {
        "speedup": c.get("speedup"),
        "interval": c.get("speedup_interval"),
        "confirmed": c.get("significant"),
        "rounds": c.get("rounds"),
        "configurations": d["evaluations"],
        "measured": d["measured"],
        "served": d["reused"],
        "per_technique": {r["technique"]: r["measured"] + r["reused"] for r in d["runs"]},
        "search_best_us": d["search_best_s"] * 1e6,
        "best_config": d["best_config"],
        "wall_s": t["wall_s"],
        "compile_s": t["compile_s"],
        "other_s": t["other_s"],
        "space_s": t["space_s"],
        "startup_s": t["startup_s"],
    }


def main(args: list[str]) -> None:
    rows = {}
    print(
        "| run | speedup (95 % interval) | confirmed | configs | per technique | wall s "
        "| compile s | other s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for arg in args:
        label, _, name = arg.partition("=")
        s = rows[label] = summary(Path(name))
        lo, hi = s["interval"] or (0, 0)  # type: ignore[misc]
        per = s["per_technique"]
        assert isinstance(per, dict)
        techniques = " ".join(f"{k} {v}" for k, v in per.items())
        print(
            f"| {label} | {s['speedup']:.2f}× ({lo:.2f}–{hi:.2f}) "
            f"| {'yes' if s['confirmed'] else 'no'} "
            f"| {s['configurations']} | {techniques} | {s['wall_s']:.1f} | {s['compile_s']:.1f} "
            f"| {s['other_s']:.1f} |"
        )
    Path("summary.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
