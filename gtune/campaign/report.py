"""The campaign report: one row per task, as CSV, JSON, markdown and a PNG."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gtune.outfiles import save_figure, write_text

COLUMNS = (
    "label",
    "size",
    "device",
    "strategy",
    "best_s",
    "gbs",
    "technique",
    "evaluations",
    "measured",
    "reused",
    "compile_s",
    "run_s",
    "wall_s",
    "host",
)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        return f"{value:.4g}"
    return str(value)


def rows(summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({c: s.get(c) for c in COLUMNS} for s in summaries),
        key=lambda r: (str(r["label"]), str(r["size"]), str(r["device"]), str(r["strategy"])),
    )


def write_report(summaries: Sequence[dict[str, Any]], out_dir: Path, title: str) -> list[Path]:
    """CSV, JSON, markdown and PNG in ``out_dir``; returns the paths written. The
    campaign's own folder: its report is replaced as the campaign resumes (atomically;
    never through a link, :mod:`gtune.outfiles`)."""
    table = rows(summaries)
    written: list[Path] = []
    text = io.StringIO(newline="")
    w = csv.DictWriter(text, fieldnames=list(COLUMNS))
    w.writeheader()
    w.writerows(table)
    written.append(write_text(out_dir / "campaign.csv", text.getvalue(), force=True))
    data = json.dumps({"title": title, "tasks": list(summaries)}, indent=2, default=str)
    written.append(write_text(out_dir / "campaign.json", data, force=True))
    md = [f"# {title}", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    md += ["| " + " | ".join(_fmt(r[c]) for c in COLUMNS) + " |" for r in table]
    written.append(write_text(out_dir / "campaign.md", "\n".join(md) + "\n", force=True))
    png = out_dir / "campaign.png"
    if _plot(table, png, title):
        written.append(png)
    return written


def _plot(table: list[dict[str, Any]], path: Path, title: str) -> bool:
    ok = [r for r in table if isinstance(r["best_s"], int | float) and r["best_s"]]
    if not ok:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kernels = sorted({f"{r['label']}@{r['size']}" for r in ok})
    series = sorted({f"{r['device']} / {r['strategy']}" for r in ok})
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(kernels) * max(1, len(series)) / 2), 4.5))
    for i, name in enumerate(series):
        xs, ys = [], []
        for k, kern in enumerate(kernels):
            for r in ok:
                if (
                    f"{r['label']}@{r['size']}" == kern
                    and f"{r['device']} / {r['strategy']}" == name
                ):
                    xs.append(k + i * width)
                    ys.append(float(r["best_s"]) * 1e6)
        bars = ax.bar(xs, ys, width=width, label=name)
        ax.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(kernels))])
    ax.set_xticklabels(kernels, rotation=60, ha="right", fontsize=7)
    # a linear axis from zero: bar heights compare as the times do (a log axis with a cut
    # baseline made 12 µs against 7 µs look like 10x); the legend sits beside the bars
    ax.set_ylabel("best kernel time (µs)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    save_figure(fig, path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return True
