"""What a split found: per-device columns, Algorithm 1, the measured split, the sweep."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtune.outfiles import save_figure
from gtune.split.plan import Decision, Partition


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


@dataclass
class DeviceEntry:
    """One device: its configuration, its time alone, its share and its slab."""

    label: str
    name: str
    identity: str
    part: tuple[int, int] | None
    config: dict[str, int]
    config_source: str
    tuned_s: float | None  # the tuned time (store or search), on the whole device
    block: int  # points per work-group along the split dimension
    alone_kernel_s: float
    alone_end_to_end_s: float
    alone_upload_s: float
    alone_download_s: float
    optimal: float = 0.0  # eq. 4
    adjusted: float = 0.0  # the share of the output it writes (Table 3)
    computed: float = 0.0  # the share its work-groups cover (eq. 8a/9b)
    slab: dict[str, int] | None = None
    split_kernel_s: float | None = None
    split_end_to_end_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "name": self.name,
            "identity": self.identity,
            "part": list(self.part) if self.part else None,
            "config": dict(self.config),
            "config_source": self.config_source,
            "tuned_s": _finite(self.tuned_s),
            "block": self.block,
            "alone_kernel_s": _finite(self.alone_kernel_s),
            "alone_end_to_end_s": _finite(self.alone_end_to_end_s),
            "alone_upload_s": _finite(self.alone_upload_s),
            "alone_download_s": _finite(self.alone_download_s),
            "optimal": self.optimal,
            "adjusted": self.adjusted,
            "computed": self.computed,
            "slab": self.slab,
            "split_kernel_s": _finite(self.split_kernel_s),
            "split_end_to_end_s": _finite(self.split_end_to_end_s),
        }


@dataclass
class SweepPoint:
    """One measured split around the computed one (Figures 6-7)."""

    first_share: float  # the first device's split factor asked for
    adjusted: list[float]
    theoretical_s: float  # Algorithm 1 at the adjusted factors, kernel times alone
    kernel_s: float | None  # measured: the slowest device's kernel
    end_to_end_s: float | None  # measured, transfers included
    verified: bool | None
    computed: bool = False  # the point eq. 4-9 chose

    def to_dict(self) -> dict[str, Any]:
        return {
            "first_share": self.first_share,
            "adjusted": list(self.adjusted),
            "theoretical_s": _finite(self.theoretical_s),
            "kernel_s": _finite(self.kernel_s),
            "end_to_end_s": _finite(self.end_to_end_s),
            "verified": self.verified,
            "computed": self.computed,
        }


@dataclass
class SplitReport:
    """Everything :func:`gtune.split.split_kernel` measured and decided."""

    kernel: str
    kernel_label: str
    sizes: dict[str, int]
    dim: str
    size_name: str
    halo: int
    balance: str
    runs: int
    devices: list[DeviceEntry]
    partition: Partition
    theoretical_s: float  # Algorithm 1 at the optimal factors
    theoretical_adjusted_s: float  # Algorithm 1 at the computed (adjusted) factors
    decision: Decision
    ran_split: bool = False
    split_kernel_s: float | None = None
    split_end_to_end_s: float | None = None
    split_times: dict[str, Any] = field(default_factory=dict)
    verified: bool | None = None
    mismatches: int = 0
    max_error: float | None = None
    sweep: list[SweepPoint] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    # -- derived columns ------------------------------------------------------------
    @property
    def fastest(self) -> DeviceEntry:
        return self.devices[self.decision.fastest]

    @property
    def overhead_s(self) -> float | None:
        """Measured kernel time of the split minus Algorithm 1 (seed 002's overhead)."""
        if self.split_kernel_s is None:
            return None
        return self.split_kernel_s - self.theoretical_s

    @property
    def overhead_end_to_end_s(self) -> float | None:
        """Measured end-to-end time of the split minus Algorithm 1: what the transfers,
        launches and the adjustment of the split point cost on top of the kernels."""
        if self.split_end_to_end_s is None:
            return None
        return self.split_end_to_end_s - self.theoretical_s

    @property
    def speedup_kernel(self) -> float | None:
        fastest = min(d.alone_kernel_s for d in self.devices)
        if self.split_kernel_s is None or self.split_kernel_s <= 0:
            return None
        return fastest / self.split_kernel_s

    @property
    def speedup_end_to_end(self) -> float | None:
        if self.split_end_to_end_s is None or self.split_end_to_end_s <= 0:
            return None
        return self.fastest.alone_end_to_end_s / self.split_end_to_end_s

    @property
    def recommendation(self) -> str:
        """What to run: the split only where it was measured faster, end to end."""
        alone = self.fastest
        if not self.ran_split or self.split_end_to_end_s is None:
            return f"run on {alone.label} alone"
        if self.verified is False:
            return f"run on {alone.label} alone (the split's output did not verify)"
        if self.split_end_to_end_s < alone.alone_end_to_end_s:
            return "split: " + ", ".join(
                f"{d.label} {d.adjusted:.3f}" for d in self.devices if d.adjusted > 0
            )
        return f"run on {alone.label} alone (the split measured slower end to end)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "kernel_label": self.kernel_label,
            "sizes": dict(self.sizes),
            "dim": self.dim,
            "size_name": self.size_name,
            "halo": self.halo,
            "balance": self.balance,
            "runs": self.runs,
            "devices": [d.to_dict() for d in self.devices],
            "partition": self.partition.to_dict(),
            "theoretical_s": _finite(self.theoretical_s),
            "theoretical_adjusted_s": _finite(self.theoretical_adjusted_s),
            "decision": self.decision.to_dict(),
            "ran_split": self.ran_split,
            "split_kernel_s": _finite(self.split_kernel_s),
            "split_end_to_end_s": _finite(self.split_end_to_end_s),
            "overhead_s": _finite(self.overhead_s),
            "overhead_end_to_end_s": _finite(self.overhead_end_to_end_s),
            "speedup_kernel": self.speedup_kernel,
            "speedup_end_to_end": self.speedup_end_to_end,
            "verified": self.verified,
            "mismatches": self.mismatches,
            "max_error": _finite(self.max_error),
            "recommendation": self.recommendation,
            "split_times": self.split_times,
            "sweep": [p.to_dict() for p in self.sweep],
            "notes": list(self.notes),
        }

    def plot_sweep(self, path: str | Path) -> Path:
        """The sweep as a PNG (Figures 6-7): measured and theoretical time against the
        first device's split factor, each device alone as a line, the computed point
        circled."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        out = Path(path)
        pts = sorted(self.sweep, key=lambda p: p.first_share)
        xs = [p.first_share for p in pts]
        fig, ax = plt.subplots(figsize=(7, 4.2))

        def ms(v: float | None) -> float:
            return v * 1e3 if v is not None and math.isfinite(v) else math.nan

        ax.plot(xs, [ms(p.theoretical_s) for p in pts], "b--", label="theoretical (Alg. 1)")
        ax.plot(xs, [ms(p.kernel_s) for p in pts], "g-", marker=".", label="measured, kernels")
        ax.plot(
            xs,
            [ms(p.end_to_end_s) for p in pts],
            "-",
            color="tab:orange",
            marker=".",
            label="measured, end to end",
        )
        for d, style in zip(self.devices, (":", "-.", (0, (1, 3)), (0, (5, 2))), strict=False):
            ax.axhline(ms(d.alone_kernel_s), color="gray", linestyle=style, lw=1)
            ax.annotate(
                f"{d.label[:30]} alone (kernel)",
                (xs[-1] if xs else 1.0, ms(d.alone_kernel_s)),
                fontsize=7,
                ha="right",
                va="bottom",
                color="gray",
            )
        for p in pts:
            if p.computed:
                ax.plot(
                    [p.first_share],
                    [ms(p.kernel_s)],
                    "o",
                    mfc="none",
                    mec="red",
                    ms=11,
                    label="computed split",
                )
        ax.set_xlabel(f"split factor of {self.devices[0].name[:30]}")
        ax.set_ylabel("time (ms)")
        sizes = "x".join(str(v) for v in self.sizes.values())
        ax.set_title(f"{self.kernel_label.split('/')[-1]} {sizes}, split along {self.dim}")
        finite = [
            v
            for p in pts
            for v in (ms(p.kernel_s), ms(p.theoretical_s), ms(p.end_to_end_s))
            if math.isfinite(v)
        ]
        if finite:
            ax.set_ylim(0, max(finite) * 1.1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        save_figure(fig, out, dpi=120)
        plt.close(fig)
        return out


def _t(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"


def format_report(report: SplitReport) -> list[str]:
    """The report as lines of text (what ``gtune split`` shows)."""
    sizes = "x".join(str(v) for v in report.sizes.values())
    lines = [
        f"{report.kernel_label} {sizes}: split along {report.dim} ({report.size_name}="
        f"{report.partition.size}), halo {report.halo}, factors from {report.balance} times",
        "",
        f"  {'device':<40} {'wg':>4} {'alone kernel':>13} {'alone e2e':>11} "
        f"{'optimal':>8} {'adjusted':>8} {'rows':>11} {'split kernel':>13}",
    ]
    for d in report.devices:
        rows = f"{d.slab['own_lo']}-{d.slab['own_hi']}" if d.slab else "-"
        lines.append(
            f"  {d.label[:40]:<40} {d.block:>4} {_t(d.alone_kernel_s):>13} "
            f"{_t(d.alone_end_to_end_s):>11} {d.optimal:>8.3f} {d.adjusted:>8.3f} {rows:>11} "
            f"{_t(d.split_kernel_s):>13}"
        )
    for d in report.devices:
        cfg = ",".join(f"{k}={v}" for k, v in d.config.items())
        tuned = f", tuned {_t(d.tuned_s)}" if d.tuned_s is not None else ""
        lines.append(f"  {d.label[:40]}: {cfg} ({d.config_source}{tuned})")
    p = report.partition
    lines += [
        "",
        f"  residue {p.residue} points to "
        + (report.devices[p.residue_device].label if p.residue_device is not None else "-")
        + f"; overlap {p.overlap}, overhang {p.overhang}",
        f"  theoretical (Algorithm 1)   {_t(report.theoretical_s)}"
        f"  (adjusted factors: {_t(report.theoretical_adjusted_s)})",
        f"  decision                    {report.decision.reason}",
    ]
    if report.ran_split:
        verdict = "verified" if report.verified else f"{report.mismatches} elements differ"
        lines += [
            f"  measured split, kernels     {_t(report.split_kernel_s)}"
            f"  (overhead {_t(report.overhead_s)}, speedup {_fmt_x(report.speedup_kernel)})",
            f"  measured split, end to end  {_t(report.split_end_to_end_s)}"
            f"  (overhead {_t(report.overhead_end_to_end_s)}, "
            f"speedup {_fmt_x(report.speedup_end_to_end)})",
            f"  output                      {verdict} against {report.fastest.label} alone",
        ]
    if report.sweep:
        lines += ["", f"  {'share':>8} {'adjusted':>18} {'theory':>11} {'kernels':>11} {'e2e':>11}"]
        for s in sorted(report.sweep, key=lambda s: s.first_share):
            adj = ",".join(f"{a:.3f}" for a in s.adjusted)
            mark = " *" if s.computed else ""
            ok = "" if s.verified else " (wrong output)"
            lines.append(
                f"  {s.first_share:>8.3f} {adj:>18} {_t(s.theoretical_s):>11} "
                f"{_t(s.kernel_s):>11} {_t(s.end_to_end_s):>11}{mark}{ok}"
            )
    lines += ["", f"  recommendation: {report.recommendation}"]
    lines += [f"  note: {n}" for n in report.notes]
    return lines


def _fmt_x(x: float | None) -> str:
    return f"{x:.2f}x" if x is not None and math.isfinite(x) else "-"


__all__ = ["DeviceEntry", "SplitReport", "SweepPoint", "format_report"]
