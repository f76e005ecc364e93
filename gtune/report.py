"""Reports of tuning runs and strategy comparisons: terminal tables, Markdown, CSV, PNG.

Pure functions over plain data (:class:`~gtune.tuning.TuningReport` for ``gtune run``,
:class:`CompareCell` rows for ``gtune compare``), so every format is tested without a
device and every command prints the same numbers the files hold.

Comparison metrics follow seed 001 §8.2 and Table 3: a strategy's speedup on a kernel is
Rand's best time over the strategy's best time, averaged over kernels with the geometric
mean; configurations, compile seconds and run seconds are means over kernels; the best
count is the number of kernels on which a strategy's best time is the best of all
strategies (a tie counts for each).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.markup import escape as _markup
from rich.table import Table

from gtune.convergence import Trace
from gtune.escape import csv_cell, markdown_text, terminal
from gtune.outfiles import save_figure
from gtune.tuning import TuningReport

BASELINE = "random"


def seconds_text(s: float | None) -> str:
    """A duration with a unit that keeps three significant digits readable."""
    if s is None or not math.isfinite(s):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"


def config_text(config: Mapping[str, int] | None) -> str:
    if not config:
        return "-"
    return " ".join(f"{k}={v}" for k, v in config.items())


def geomean(values: Iterable[float]) -> float | None:
    """Geometric mean of positive finite values; None when there are none."""
    logs = [math.log(v) for v in values if math.isfinite(v) and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


# -------------------------------------------------------------------------------------
# gtune run


def _speedup_text(report: TuningReport) -> str:
    sp = report.speedup
    if sp is None:
        return "-"
    c = report.confirmation
    if c is None or c.best is None:
        return f"{sp:.2f}x (not confirmed)"
    if c.best_is_default:
        return f"{sp:.2f}x: the default configuration was the fastest"
    interval = c.speedup_interval
    span = f" [{interval[0]:.2f}-{interval[1]:.2f}]" if interval else ""
    if c.significant:
        return f"{sp:.2f}x{span} ({c.coverage_text})"
    return f"no significant speedup ({sp:.2f}x{span}, within the noise)"


def _time_text(report: TuningReport) -> str:
    t = report.time
    return (
        f"{t.wall_s:.1f} s = compile {t.compile_s:.1f} + run {t.run_s:.1f} + verify "
        f"{t.verify_s:.1f} + overhead {t.overhead_s:.1f}"
    )


def _overhead_text(report: TuningReport) -> str:
    t = report.time
    return (
        f"{t.overhead_s:.1f} s = solving the space {t.space_s:.1f} + starting workers and "
        f"uploading data {t.startup_s:.1f} + the store {t.store_s:.1f} + waiting for the "
        f"device {t.wait_s:.1f} + other "
        f"{t.other_s:.1f} (handing configurations to workers, the search)"
    )


def _compile_text(report: TuningReport) -> str:
    t = report.time
    text = f"{t.compile_total_s:.2f} s building what this run measured"
    if t.compile_hidden_s > 0.05:
        text += f"; {t.compile_hidden_s:.2f} s of it overlapped with runs (not in wall time)"
    return text


def run_summary_rows(report: TuningReport) -> list[tuple[str, str]]:
    """(label, value) rows of the final summary, in display order."""
    rows: list[tuple[str, str]] = [
        ("kernel", f"{report.kernel} ({report.kernel_label})"),
        ("problem", " ".join(f"{k}={v}" for k, v in report.sizes.items())),
        ("device", report.device),
        ("strategy", report.strategy),
    ]
    if report.technique:
        choice = report.technique_choice or "-"
        if report.best_from_default:
            choice += " (the default configuration won)"
        rows.append(("technique", f"{report.technique} → {choice}"))
    rows.append(("best configuration", config_text(report.best_config)))
    best = seconds_text(report.best_s)
    if report.steps > 1:
        best += f" per step ({report.steps} steps)"
    c = report.confirmation
    if c is not None and c.best is not None:
        lo, hi = c.best.interval(c.confidence)
        best += f"  [{seconds_text(lo)} - {seconds_text(hi)}], confirmed"
    rows.append(("best time", best))
    gbs, gflops = report.gbs(), report.gflops()
    once = "once" + (" per step" if report.steps > 1 else "")
    rows.append(
        (
            "bandwidth",
            f"{gbs:.2f} GB/s if every array is read or written whole {once}" if gbs else "-",
        )
    )
    rows.append(("compute", f"{gflops:.2f} GFLOP/s" if gflops is not None else "-"))
    if report.default_result is not None and report.default_result.ok:
        default = f"{seconds_text(report.default_s)}  ({config_text(report.default_config)})"
    else:
        default = report.default_note or "-"
    rows.append(("default configuration", default))
    rows.append(("speedup over default", _speedup_text(report)))
    if report.search_config is not None and report.search_config != report.best_config:
        rows.append(
            (
                "search's best",
                f"{seconds_text(report.search_s)}  ({config_text(report.search_config)}); "
                "slower when re-measured",
            )
        )
    rows.append(
        (
            "configurations",
            f"{report.evaluations} searched; {report.measured} measured now, "
            f"{report.reused} served by the result store"
            + (
                f"; {len(c.entries)} re-measured x {c.rounds_done} rounds"
                if c is not None and c.rounds_done
                else ""
            ),
        )
    )
    counts = report.status_counts
    if counts:
        failed = report.failed
        text = ", ".join(f"{n} {s}" for s, n in counts.items())
        if report.mostly_failed and report.best_result is not None:
            text += f" (most failed: the best comes from the {sum(counts.values()) - failed} left)"
        rows.append(("outcomes", text))
    if report.verification:
        rows.append(("verification", report.verification))
    rows.append(("compile time", _compile_text(report)))
    rows.append(("run time", f"{report.run_s:.4f} s (sum of timed runs)"))
    rows.append(("wall time", _time_text(report)))
    if report.time.overhead_s > 0:
        rows.append(("overhead", _overhead_text(report)))
    return rows


def run_summary_table(report: TuningReport) -> Table:
    title = _cell(f"{report.kernel} on {report.device}")
    if report.interrupted:
        title += " (interrupted: best found so far)"
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    for label, value in run_summary_rows(report):
        t.add_row(label, _cell(value))
    return t


def _cell(text: str) -> str:
    """Text from names and messages (a file, a device, a store's row) for a table: no
    control character reaches the terminal, no bracket is read as markup."""
    return _markup(terminal(text))


def technique_table(report: TuningReport) -> Table:
    """One row per search (technique): what it found and what it cost."""
    t = Table(title="searches", title_justify="left")
    for col in ("technique", "space", "best time", "GB/s", "configs", "new", "compile s"):
        t.add_column(col, justify="left" if col == "technique" else "right")
    t.add_column("stop")
    for run in report.runs:
        o = run.outcome
        gbs = report.gbs(run.best_s)
        t.add_row(
            run.technique or "(whole space)",
            f"{run.space_size:,}",
            seconds_text(run.best_s),
            f"{gbs:.2f}" if gbs is not None else "-",
            str(o.evaluations) if o else "-",
            str(run.measured),
            f"{o.compile_s:.2f}" if o else "-",
            _cell(run.note or (o.stop_reason if o else "")),
        )
    return t


def confirmation_table(report: TuningReport) -> Table:
    """The confirmation round: each configuration's median and interval."""
    c = report.confirmation
    t = Table(
        title=f"confirmation round ({c.rounds_done if c else 0} interleaved rounds)",
        title_justify="left",
    )
    for col in ("configuration", "median", "interval", "runs", "in the search"):
        t.add_column(col, justify="left" if col == "configuration" else "right")
    if c is None:
        return t
    best = c.best
    for e in sorted(c.entries, key=lambda e: e.median_s):
        name = config_text(report.ordered(e.config))
        if e.is_default:
            name += " (default)"
        if e is best:
            name = f"[bold]{name}[/bold]"
        lo, hi = e.interval(c.confidence)
        t.add_row(
            name,
            seconds_text(e.median_s) if e.ok else e.status.value,
            f"{seconds_text(lo)} - {seconds_text(hi)}" if e.ok else "-",
            str(len(e.times_s)),
            seconds_text(e.search_s),
        )
    return t


# -------------------------------------------------------------------------------------
# gtune compare


@dataclass(frozen=True)
class CompareCell:
    """One strategy on one kernel: its best time and what it cost (seed 001 Table 3)."""

    kernel: str
    strategy: str
    best_s: float  # inf: nothing ran correctly
    evaluations: int
    compile_s: float
    run_s: float
    measured: int = 0
    reused: int = 0
    wall_s: float = 0.0
    technique: str | None = None
    best_config: Mapping[str, int] | None = None
    # the best re-measured beside the other strategies' bests (None: not re-measured)
    remeasured_s: float | None = None
    remeasure_note: str = ""

    @property
    def time_s(self) -> float:
        """The time the table ranks by: the side-by-side re-measurement when there is
        one, else the search's own best."""
        return self.remeasured_s if self.remeasured_s is not None else self.best_s

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["best_s"] = self.best_s if math.isfinite(self.best_s) else None
        d["best_config"] = dict(self.best_config) if self.best_config else None
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompareCell:
        best = data.get("best_s")
        return cls(
            kernel=str(data["kernel"]),
            strategy=str(data["strategy"]),
            best_s=math.inf if best is None else float(best),
            evaluations=int(data["evaluations"]),
            compile_s=float(data["compile_s"]),
            run_s=float(data["run_s"]),
            measured=int(data.get("measured", 0)),
            reused=int(data.get("reused", 0)),
            wall_s=float(data.get("wall_s", 0.0)),
            technique=data.get("technique"),
            best_config=data.get("best_config"),
            remeasured_s=None if data.get("remeasured_s") is None else float(data["remeasured_s"]),
            remeasure_note=str(data.get("remeasure_note") or ""),
        )


@dataclass(frozen=True)
class StrategyRow:
    """One row of Table 3."""

    strategy: str
    speedup: float | None  # geometric mean over kernels of t_baseline / t_strategy
    kernels: int  # kernels in the geometric mean
    configs: float  # mean over kernels
    compile_s: float  # mean over kernels
    run_s: float  # mean over kernels
    best_count: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_cell(kernel: str, strategy: str, report: TuningReport) -> CompareCell:
    """A strategy's row for a kernel: what its searches found and what they cost."""
    result = report.search_result
    return CompareCell(
        kernel=kernel,
        strategy=strategy,
        best_s=report.search_s,
        evaluations=report.evaluations,
        compile_s=report.compile_s,
        run_s=report.run_s,
        measured=report.measured,
        reused=report.reused,
        wall_s=report.wall_s,
        technique=report.technique_choice,
        best_config=report.ordered(result.config) if result is not None else None,
    )


def best_times(cells: Sequence[CompareCell]) -> dict[str, float]:
    """Per kernel, the best time of any strategy (re-measured where it was)."""
    out: dict[str, float] = {}
    for c in cells:
        out[c.kernel] = min(out.get(c.kernel, math.inf), c.time_s)
    return out


def per_kernel_speedups(
    cells: Sequence[CompareCell], baseline: str = BASELINE
) -> dict[str, dict[str, float]]:
    """strategy → kernel → t_baseline / t_strategy, for kernels where both are known."""
    base = {c.kernel: c.time_s for c in cells if c.strategy == baseline}
    out: dict[str, dict[str, float]] = {}
    for c in cells:
        b = base.get(c.kernel, math.inf)
        if math.isfinite(b) and math.isfinite(c.time_s) and c.time_s > 0:
            out.setdefault(c.strategy, {})[c.kernel] = b / c.time_s
    return out


def strategy_rows(
    cells: Sequence[CompareCell], strategies: Sequence[str], baseline: str = BASELINE
) -> list[StrategyRow]:
    """Table 3 from per-kernel cells, one row per strategy in the order given."""
    speedups = per_kernel_speedups(cells, baseline)
    best = best_times(cells)
    rows = []
    for s in strategies:
        mine = [c for c in cells if c.strategy == s]
        n = len(mine) or 1
        per_kernel = speedups.get(s, {})
        rows.append(
            StrategyRow(
                strategy=s,
                speedup=geomean(per_kernel.values()),
                kernels=len(per_kernel),
                configs=sum(c.evaluations for c in mine) / n,
                compile_s=sum(c.compile_s for c in mine) / n,
                run_s=sum(c.run_s for c in mine) / n,
                best_count=sum(
                    1 for c in mine if math.isfinite(c.time_s) and c.time_s == best[c.kernel]
                ),
            )
        )
    return rows


_HEADERS = (
    "strategy",
    "speedup over Rand",
    "kernels",
    "configs",
    "compile s",
    "run s",
    "best count",
)


def _row_texts(row: StrategyRow) -> list[str]:
    return [
        row.strategy,
        f"{row.speedup:.3f}" if row.speedup is not None else "-",
        str(row.kernels),
        f"{row.configs:.1f}",
        f"{row.compile_s:.2f}",
        f"{row.run_s:.4f}",
        str(row.best_count),
    ]


def compare_table(rows: Sequence[StrategyRow], title: str = "") -> Table:
    t = Table(title=title or None, title_justify="left")
    for i, h in enumerate(_HEADERS):
        t.add_column(h, justify="left" if i == 0 else "right")
    for row in rows:
        t.add_row(*(_cell(text) for text in _row_texts(row)))
    return t


def compare_markdown(rows: Sequence[StrategyRow], notes: Sequence[str] = ()) -> str:
    """Table 3 as Markdown; configs, compile and run seconds are means per kernel."""
    lines = [
        "| " + " | ".join(_HEADERS) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(_HEADERS) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(markdown_text(t) for t in _row_texts(r)) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\n" + "\n".join(f"- {markdown_text(n)}" for n in notes) + "\n"
    return text


def per_kernel_markdown(cells: Sequence[CompareCell], strategies: Sequence[str]) -> str:
    """Kernel × strategy as Markdown: each strategy's time (re-measured where it was)
    and configurations used; the kernel's fastest in bold (ties in bold each)."""
    best = best_times(cells)
    by = {(c.kernel, c.strategy): c for c in cells}
    kernels = list(dict.fromkeys(c.kernel for c in cells))
    lines = [
        "| kernel | " + " | ".join(markdown_text(s) for s in strategies) + " |",
        "|---|" + "---:|" * len(strategies),
    ]
    for k in kernels:
        texts = []
        for s in strategies:
            c = by.get((k, s))
            if c is None or not math.isfinite(c.time_s):
                texts.append("-")
                continue
            t = seconds_text(c.time_s)
            texts.append(f"{f'**{t}**' if c.time_s == best[k] else t} ({c.evaluations:,})")
        lines.append(f"| {markdown_text(k)} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"


def compare_csv(rows: Sequence[StrategyRow]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["strategy", "speedup", "kernels", "configs", "compile_s", "run_s", "best_count"])
    for r in rows:
        w.writerow(
            [
                csv_cell(r.strategy),
                "" if r.speedup is None else repr(r.speedup),
                r.kernels,
                repr(r.configs),
                repr(r.compile_s),
                repr(r.run_s),
                r.best_count,
            ]
        )
    return buf.getvalue()


def per_kernel_csv(cells: Sequence[CompareCell], baseline: str = BASELINE) -> str:
    """Kernel × strategy: best time, speedup over the baseline, and the cost."""
    speedups = per_kernel_speedups(cells, baseline)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "kernel",
            "strategy",
            "best_s",
            "remeasured_s",
            "speedup",
            "configs",
            "compile_s",
            "run_s",
            "measured",
            "reused",
            "technique",
            "best_config",
        ]
    )
    for c in cells:
        sp = speedups.get(c.strategy, {}).get(c.kernel)
        w.writerow(
            [
                csv_cell(c.kernel),
                csv_cell(c.strategy),
                repr(c.best_s) if math.isfinite(c.best_s) else "",
                "" if c.remeasured_s is None else repr(c.remeasured_s),
                "" if sp is None else repr(sp),
                c.evaluations,
                repr(c.compile_s),
                repr(c.run_s),
                c.measured,
                c.reused,
                csv_cell(c.technique or ""),
                config_text(c.best_config) if c.best_config else "",
            ]
        )
    return buf.getvalue()


FEW_KERNELS = 8
"""Below this many kernels a histogram says little: the speedups are drawn per kernel."""


def _speedup_bars(
    speedups: Mapping[str, Mapping[str, float]],
    shown: Sequence[str],
    kernels: Sequence[str],
    out: Path,
    baseline: str,
    title: str,
) -> Path:
    """Each kernel's speedup over the baseline, one bar per strategy, on a linear axis
    from 0 with the baseline's 1.0 drawn across; the legend sits below the bars."""
    import matplotlib.pyplot as plt

    width = 0.8 / max(1, len(shown))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(kernels) * max(1, len(shown)) / 2), 4))
    for i, s in enumerate(shown):
        xs = [k + (i - (len(shown) - 1) / 2) * width for k in range(len(kernels))]
        ys = [speedups.get(s, {}).get(kern, math.nan) for kern in kernels]
        g = geomean([y for y in ys if math.isfinite(y)])
        label = f"{s} (geomean {g:.2f})" if g is not None else s
        bars = ax.bar(xs, ys, width=width, label=label)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=2)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(bottom=0)
    ax.margins(y=0.15)
    ax.set_ylabel(f"speedup over {baseline} (t_{baseline} / t_strategy)")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, out, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return out


def speedups_png(
    cells: Sequence[CompareCell],
    strategies: Sequence[str],
    path: str | Path,
    *,
    baseline: str = BASELINE,
    title: str = "",
) -> Path:
    """Figure-8-like histograms: per-kernel speedup over Rand, one panel per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    speedups = per_kernel_speedups(cells, baseline)
    shown = [s for s in strategies if s != baseline] or list(strategies)
    kernels = sorted({k for s in shown for k in speedups.get(s, {})})
    if len(kernels) < FEW_KERNELS:
        return _speedup_bars(speedups, shown, kernels, Path(path), baseline, title)
    values = [v for s in shown for v in speedups.get(s, {}).values()]
    lo = min([*values, 1.0]) * 0.95
    hi = max([*values, 1.0]) * 1.05
    bins = [lo + (hi - lo) * i / 20 for i in range(21)]
    fig, axes = plt.subplots(
        len(shown), 1, figsize=(6, 1.9 * len(shown) + 0.6), sharex=True, squeeze=False
    )
    for ax, s in zip(axes[:, 0], shown, strict=True):
        data = list(speedups.get(s, {}).values())
        ax.hist(data, bins=bins, color="#4c72b0", edgecolor="white")
        ax.axvline(1.0, color="black", linewidth=0.8)
        g = geomean(data)
        label = f"{s} (geomean {g:.2f}, n={len(data)})" if g is not None else f"{s} (no data)"
        ax.set_title(label, fontsize=9, loc="left")
        ax.set_ylabel("kernels")
    axes[-1, 0].set_xlabel("speedup over Rand (t_rand / t_strategy)")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = save_figure(fig, path, dpi=120)
    plt.close(fig)
    return out


# -------------------------------------------------------------------------------------
# Convergence of one run


def convergence_traces(report: TuningReport) -> list[Trace]:
    """One :class:`~gtune.convergence.Trace` per search of the run (per technique), in
    order: every configuration it used with the seconds since the run began and its
    time (``inf`` when it did not run correctly)."""
    traces: list[Trace] = []
    for run in report.runs:
        if run.outcome is None or not run.outcome.trace:
            continue
        trace = Trace(run.technique or "whole space")
        for entry in run.outcome.trace:
            if entry.result.status.value == "pruned":
                continue
            trace.add(run.started_s + entry.elapsed_s, entry.result.objective, entry.config)
        traces.append(trace)
    return traces


def convergence_png(report: TuningReport, path: str | Path) -> Path:
    """Best time so far against evaluations (left) and seconds of the run (right), one
    line per technique, with the default's confirmed time as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    traces = convergence_traces(report)
    fig, (by_count, by_time) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for trace in traces:
        points = [(e, s, b) for e, s, b in trace.best_so_far() if math.isfinite(b)]
        if not points:
            continue
        evals = [e for e, _, _ in points]
        secs = [s for _, s, _ in points]
        best = [b * 1e6 for _, _, b in points]
        (line,) = by_count.step(evals, best, where="post", label=trace.name)
        by_time.step(secs, best, where="post", color=line.get_color())
    if report.default_result is not None and math.isfinite(report.default_s):
        for ax in (by_count, by_time):
            ax.axhline(report.default_s * 1e6, color="black", linestyle="--", linewidth=0.8)
        by_count.plot([], [], color="black", linestyle="--", linewidth=0.8, label="default")
    by_count.set_xlabel("evaluations (of this technique's search)")
    by_time.set_xlabel("seconds since the run began")
    by_count.set_ylabel("best kernel time so far (µs)")
    by_count.set_ylim(bottom=0)
    by_count.xaxis.set_major_locator(MaxNLocator(integer=True))
    if traces:
        by_count.legend(fontsize=8, loc="upper right")
    name = Path(report.kernel_label).stem if report.kernel_label else report.kernel
    fig.suptitle(f"{name} on {report.device}: {report.strategy}", fontsize=10)
    fig.tight_layout()
    out = save_figure(fig, path, dpi=120)
    plt.close(fig)
    return out
