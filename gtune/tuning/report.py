"""What a tuning run found and what it cost: :class:`TuningReport`.

``search_*`` is what the searches found (what ``compare`` ranks strategies by, and what
a resumed run reproduces exactly). ``best_*``, ``default_*`` and ``speedup`` are the
answer: from the confirmation round when there was one (the candidates and the default
re-measured side by side), else from the searches.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gtune.heuristics import TuningOutcome
from gtune.kernel import Config
from gtune.measure.result import Result
from gtune.tuning.budget import TimeBreakdown
from gtune.tuning.confirm import Confirmation


@dataclass
class TechniqueRun:
    """One search: a strategy on the space restricted to one technique (or all of it)."""

    technique: str | None  # None: the whole space
    space_size: int
    outcome: TuningOutcome | None  # None: skipped (see note)
    measured: int = 0  # configurations measured now
    reused: int = 0  # configurations served by the result store
    note: str = ""
    best_technique: str | None = None  # the technique the best configuration uses
    started_s: float = 0.0  # seconds from the start of the run until the search began

    @property
    def best_s(self) -> float:
        return self.outcome.best_s if self.outcome is not None else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "technique": self.technique,
            "space_size": self.space_size,
            "measured": self.measured,
            "reused": self.reused,
            "note": self.note,
            "best_technique": self.best_technique,
            "started_s": self.started_s,
            "outcome": self.outcome.to_dict() if self.outcome is not None else None,
        }


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


@dataclass
class TuningReport:
    """Everything a tuning run found and what it cost."""

    kernel: str
    kernel_label: str
    sizes: dict[str, int]
    device: str
    device_identity: str
    strategy: str
    technique: str  # as requested: auto, all, whole, a name, or "" for kernels without any
    runs: list[TechniqueRun]
    bytes_moved: int
    points: int
    flops_per_point: float
    space_size: int
    default_config: Config | None = None
    default_result: Result | None = None
    default_note: str = ""
    confirmation: Confirmation | None = None
    measured: int = 0
    reused: int = 0
    wall_s: float = 0.0
    time: TimeBreakdown = field(default_factory=TimeBreakdown)
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False
    parameters: list[str] = field(default_factory=list)  # the description's order
    unconverged: int = 0  # configurations measured now whose timing did not converge
    timed: int = 0  # configurations measured now that report whether they converged
    steps: int = 1  # time steps per measurement: times and bandwidths are per step

    def ordered(self, config: Mapping[str, int] | None) -> Config | None:
        """``config`` in the description's parameter order (the store sorts names)."""
        if config is None:
            return None
        first = [p for p in self.parameters if p in config]
        return {**{p: config[p] for p in first}, **config}

    # -- the searches ---------------------------------------------------------------
    @property
    def search_run(self) -> TechniqueRun | None:
        """The run whose best configuration is the fastest (None if nothing ran ok)."""
        ok = [r for r in self.runs if math.isfinite(r.best_s)]
        return min(ok, key=lambda r: r.best_s) if ok else None

    @property
    def search_result(self) -> Result | None:
        run = self.search_run
        return run.outcome.best_result if run is not None and run.outcome is not None else None

    @property
    def search_s(self) -> float:
        r = self.search_result
        return r.median_s if r is not None else math.inf

    @property
    def search_config(self) -> Config | None:
        r = self.search_result
        return self.ordered(r.config) if r is not None else None

    @property
    def technique_choice(self) -> str | None:
        """The technique of the best configuration the searches found."""
        run = self.search_run
        return run.best_technique if run is not None else None

    @property
    def evaluations(self) -> int:
        """Configurations the searches used (measured now or served by the store)."""
        return sum(r.outcome.evaluations for r in self.runs if r.outcome is not None)

    @property
    def status_counts(self) -> dict[str, int]:
        """How many configurations the searches used ended in each status (ok,
        wrong_result, build_failed, ...), most frequent first."""
        counts: dict[str, int] = {}
        for r in self.runs:
            for e in r.outcome.trace if r.outcome is not None else []:
                counts[e.result.status.value] = counts.get(e.result.status.value, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def failed(self) -> int:
        """Configurations the searches used that did not run correctly."""
        return sum(n for s, n in self.status_counts.items() if s != "ok")

    @property
    def mostly_failed(self) -> bool:
        """Most configurations failed: a best found among the few left is less sure."""
        total = sum(self.status_counts.values())
        return total > 0 and self.failed * 2 > total

    @property
    def verification(self) -> str | None:
        """What the results were verified against, per array (None: not verified). The
        best may be the reference configuration itself, which says nothing of it."""
        traced = (e.result for run in self.runs if run.outcome for e in run.outcome.trace)
        for r in (self.search_result, self.best_result, *traced):
            if r is not None and r.extra.get("verification"):
                return str(r.extra["verification"])
        return None

    @property
    def compile_s(self) -> float:
        """Compile seconds of every configuration the searches used (seed 001 Table 3)."""
        return sum(r.outcome.compile_s for r in self.runs if r.outcome is not None)

    @property
    def run_s(self) -> float:
        """Device seconds of every timed run of the configurations the searches used."""
        return sum(r.outcome.run_s for r in self.runs if r.outcome is not None)

    # -- the answer -------------------------------------------------------------------
    @property
    def confirmed(self) -> bool:
        """Whether the answer comes from a confirmation round."""
        return self.confirmation is not None and self.confirmation.best is not None

    @property
    def best_from_default(self) -> bool:
        if self.confirmation is not None and self.confirmation.best is not None:
            return self.confirmation.best_is_default
        d = self.default_result
        return d is not None and d.ok and d.median_s < self.search_s

    @property
    def best_result(self) -> Result | None:
        if self.confirmation is not None:
            best = self.confirmation.best
            if best is not None:
                return best.result()
        if self.best_from_default:
            return self.default_result
        return self.search_result

    @property
    def best_config(self) -> Config | None:
        r = self.best_result
        return self.ordered(r.config) if r is not None else None

    @property
    def best_s(self) -> float:
        r = self.best_result
        return r.median_s if r is not None else math.inf

    @property
    def default_s(self) -> float:
        r = self.default_result
        return r.median_s if r is not None and r.ok else math.inf

    @property
    def speedup(self) -> float | None:
        """Default time over best time; None when either is unknown."""
        if math.isfinite(self.best_s) and math.isfinite(self.default_s) and self.best_s > 0:
            return self.default_s / self.best_s
        return None

    @property
    def significant(self) -> bool | None:
        """Whether the best beats the default beyond the noise (None: not confirmed)."""
        if not self.confirmed or self.confirmation is None:
            return None
        return self.confirmation.significant

    @property
    def noisy(self) -> bool:
        """Many configurations' timings did not converge to the stated precision."""
        return self.timed >= 3 and self.unconverged >= max(3, self.timed // 4)

    def gbs(self, seconds: float | None = None) -> float | None:
        """Bandwidth in GB/s assuming every array is read or written whole, once (an
        ``inout`` array both), over the time: a kernel that touches less moves less."""
        t = self.best_s if seconds is None else seconds
        return self.bytes_moved / t / 1e9 if math.isfinite(t) and t > 0 else None

    def gflops(self, seconds: float | None = None) -> float | None:
        t = self.best_s if seconds is None else seconds
        if not self.flops_per_point or not math.isfinite(t) or t <= 0:
            return None
        return self.flops_per_point * self.points / t / 1e9

    def to_dict(self) -> dict[str, Any]:
        c = self.confirmation
        return {
            "kernel": self.kernel,
            "kernel_label": self.kernel_label,
            "sizes": dict(self.sizes),
            "device": self.device,
            "device_identity": self.device_identity,
            "strategy": self.strategy,
            "technique": self.technique,
            "technique_choice": self.technique_choice,
            "space_size": self.space_size,
            "best_config": self.best_config,
            "best_s": _finite(self.best_s),
            "best_from_default": self.best_from_default,
            "confirmed": self.confirmed,
            "gbs": self.gbs(),
            "gbs_assumes": "every array read or written whole, once (inout: both)",
            "statuses": self.status_counts,
            "verification": self.verification,
            "gflops": self.gflops(),
            "default_config": self.ordered(self.default_config),
            "default_s": _finite(self.default_s),
            "default_result": self.default_result.to_dict() if self.default_result else None,
            "default_note": self.default_note,
            "speedup_over_default": self.speedup,
            "speedup_significant": self.significant,
            "confirmation": c.to_dict() if c is not None else None,
            "search_best_config": self.search_config,
            "search_best_s": _finite(self.search_s),
            "evaluations": self.evaluations,
            "measured": self.measured,
            "reused": self.reused,
            "compile_s": self.compile_s,
            "run_s": self.run_s,
            "wall_s": self.wall_s,
            "time": self.time.to_dict(),
            "timing": {"measured": self.timed, "unconverged": self.unconverged},
            "noisy": self.noisy,
            "bytes_moved": self.bytes_moved,
            "points": self.points,
            "flops_per_point": self.flops_per_point,
            "steps": self.steps,
            "notes": list(self.notes),
            "interrupted": self.interrupted,
            "runs": [r.to_dict() for r in self.runs],
        }


class TuningInterrupted(KeyboardInterrupt):
    """Ctrl-C (a KeyboardInterrupt) during a run; ``report`` holds what was found."""

    def __init__(self, report: TuningReport) -> None:
        super().__init__("tuning interrupted")
        self.report = report


__all__ = ["TechniqueRun", "TuningInterrupted", "TuningReport"]
