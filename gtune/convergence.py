"""Comparing tuners over a run: best-so-far traces, a calculated random baseline, a score.

A tuner's run is a :class:`Trace`: every configuration it measured, in order, with the
wall time since the run began and the kernel time it got (``inf`` for a configuration
that failed). From it: the best kernel time after ``k`` evaluations or ``t`` seconds, and
the evaluations or seconds it took to come within a fraction of a target.

Random search is the baseline every tuner must beat. Rather than one random run (whose
luck would decide the comparison), the baseline is *calculated*: :func:`expected_best_of`
is the expected best of ``k`` random draws, exactly, from order statistics. Given the
kernel times of the whole space, draws are without replacement (random search never
measures a configuration twice). Given only a uniform sample of the space, draws are
with replacement from the sample (its empirical distribution): drawing without
replacement would make the baseline reach the sample's best exactly after as many
draws as the sample holds, as if that were the optimum. :class:`RandomBaseline` turns
evaluations into seconds with the random run's own mean cost per evaluation.

:func:`score` follows the autotuning-methodology literature: at each moment ``t`` of
the tuning time, ``(B(t) - S(t)) / (B(t) - O)`` where ``B`` is the baseline's expected
best, ``S`` the tuner's best so far and ``O`` the best known time; averaged over
evenly spaced moments. 1 means the tuner always had the best known kernel, 0 that it
did no better than random search, negative that it did worse. A tuner that has no
valid result yet at ``t`` is credited with one random draw (``B`` after one
evaluation): having nothing is never better than guessing.

Pure functions of recorded numbers: nothing here measures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

INF = math.inf


@dataclass(frozen=True)
class Observation:
    """One measured configuration: its position, when it finished, its time (s)."""

    evaluation: int
    elapsed_s: float
    value_s: float
    config: Mapping[str, int] | None = None


@dataclass
class Trace:
    """What one tuner measured in one run, in order."""

    name: str
    observations: list[Observation] = field(default_factory=list)

    def add(
        self, elapsed_s: float, value_s: float, config: Mapping[str, int] | None = None
    ) -> None:
        if not elapsed_s >= 0 or math.isnan(value_s):
            raise ValueError(f"bad observation: elapsed {elapsed_s!r}, value {value_s!r}")
        if self.observations and elapsed_s < self.observations[-1].elapsed_s:
            elapsed_s = self.observations[-1].elapsed_s  # clocks of different tools: keep order
        self.observations.append(
            Observation(len(self.observations) + 1, elapsed_s, value_s, dict(config or {}))
        )

    # -- best so far -------------------------------------------------------------
    def best_so_far(self) -> list[tuple[int, float, float]]:
        """(evaluation, elapsed s, best time so far) after each observation."""
        best = INF
        out = []
        for o in self.observations:
            best = min(best, o.value_s)
            out.append((o.evaluation, o.elapsed_s, best))
        return out

    @property
    def best(self) -> float:
        return min((o.value_s for o in self.observations), default=INF)

    @property
    def best_config(self) -> Mapping[str, int] | None:
        finite = [o for o in self.observations if math.isfinite(o.value_s)]
        return min(finite, key=lambda o: o.value_s).config if finite else None

    @property
    def wall_s(self) -> float:
        return self.observations[-1].elapsed_s if self.observations else 0.0

    def best_after_evaluations(self, k: int) -> float:
        return min((o.value_s for o in self.observations[: max(k, 0)]), default=INF)

    def best_at(self, seconds: float) -> float:
        return min((o.value_s for o in self.observations if o.elapsed_s <= seconds), default=INF)

    def evaluations_to(self, target_s: float) -> int | None:
        """Evaluations until the best so far is at most ``target_s``; None if never."""
        for e, _, b in self.best_so_far():
            if b <= target_s:
                return e
        return None

    def seconds_to(self, target_s: float) -> float | None:
        for _, s, b in self.best_so_far():
            if b <= target_s:
                return s
        return None

    # -- serialisation -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "observations": [
                [o.evaluation, o.elapsed_s, _num(o.value_s), dict(o.config or {})]
                for o in self.observations
            ],
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Trace:
        trace = cls(str(raw["name"]))
        for _, elapsed, value, config in raw["observations"]:
            trace.add(float(elapsed), INF if value is None else float(value), config)
        return trace


def _num(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _log_comb(n: int, r: int) -> float:
    if r < 0 or r > n:
        return -INF
    return math.lgamma(n + 1) - math.lgamma(r + 1) - math.lgamma(n - r + 1)


def expected_best_of(values: Iterable[float], k: int, *, replace: bool = False) -> float:
    """Expected minimum of ``k`` random draws from ``values``.

    ``values``: kernel times (``inf`` for configurations that failed). Sorted,
    ``v_1 <= ... <= v_N``. Without replacement the minimum of ``k`` draws is ``v_i``
    with probability ``C(N-i, k-1) / C(N, k)``, and ``k`` beyond ``N`` is clamped to
    it; with replacement, ``((N-i+1)/N)^k - ((N-i)/N)^k``. ``inf`` if the draws may
    hold only failures.
    """
    ordered = sorted(values)
    n = len(ordered)
    if n == 0 or k < 1:
        return INF
    if not replace:
        k = min(k, n)
    total = _log_comb(n, k)

    def p_min_at(i: int) -> float:
        """Probability that the minimum of the draws is the ``i``-th smallest value."""
        if replace:
            return ((n - i + 1) / n) ** k - ((n - i) / n) ** k
        weight = _log_comb(n - i, k - 1)  # -inf: no draw of k has its minimum this far down
        return 0.0 if weight == -INF else math.exp(weight - total)

    expected = 0.0
    for i, v in enumerate(ordered, start=1):
        p = p_min_at(i)
        if p == 0.0:
            continue
        if not math.isfinite(v):
            return INF
        expected += p * v
    return expected


class RandomBaseline:
    """Random search, calculated from a uniform sample's times and its cost per evaluation."""

    def __init__(
        self, values: Sequence[float], seconds_per_evaluation: float, *, whole_space: bool = False
    ) -> None:
        """``values``: times of a uniform sample of the space, or of all of it (``whole_space``)."""
        if not values:
            raise ValueError("a random baseline needs at least one sampled time")
        if not seconds_per_evaluation > 0:
            raise ValueError("seconds per evaluation must be positive")
        self.values = sorted(values)
        self.seconds_per_evaluation = float(seconds_per_evaluation)
        self.whole_space = whole_space
        self._cache: dict[int, float] = {}

    @classmethod
    def from_trace(cls, trace: Trace) -> RandomBaseline:
        """The baseline of a random-sampling run: its times, its wall time per evaluation."""
        if not trace.observations:
            raise ValueError(f"{trace.name}: no observations")
        per = trace.wall_s / len(trace.observations)
        return cls([o.value_s for o in trace.observations], per if per > 0 else 1e-9)

    @property
    def size(self) -> int:
        return len(self.values)

    def after_evaluations(self, k: int) -> float:
        if k not in self._cache:
            self._cache[k] = expected_best_of(self.values, k, replace=not self.whole_space)
        return self._cache[k]

    def at(self, seconds: float) -> float:
        """Expected best after ``seconds`` of random search (at least one draw)."""
        return self.after_evaluations(max(1, int(seconds / self.seconds_per_evaluation)))


def score(
    trace: Trace,
    baseline: RandomBaseline,
    optimum_s: float,
    horizon: float,
    *,
    axis: Literal["time", "evaluations"] = "time",
    points: int = 100,
) -> float | None:
    """Mean of ``(B - S) / (B - O)`` over ``points`` evenly spaced moments up to ``horizon``.

    ``axis="time"``: moments are seconds and ``B`` is the baseline after as many seconds;
    ``"evaluations"``: moments are evaluation counts. Moments where the baseline has
    already reached the optimum (nothing left to gain) are skipped; None if all are.
    """
    if not horizon > 0 or points < 1 or not math.isfinite(optimum_s):
        raise ValueError("score needs a positive horizon, points >= 1 and a finite optimum")
    first = baseline.after_evaluations(1)
    gains = []
    for j in range(1, points + 1):
        moment = horizon * j / points
        if axis == "time":
            b, s = baseline.at(moment), trace.best_at(moment)
        else:
            k = max(1, round(moment))
            b, s = baseline.after_evaluations(k), trace.best_after_evaluations(k)
        if not math.isfinite(b) or b <= optimum_s:
            continue
        if not math.isfinite(s):
            s = max(first, b) if math.isfinite(first) else b
        gains.append((b - s) / (b - optimum_s))
    return sum(gains) / len(gains) if gains else None


def summary(
    traces: Sequence[Trace],
    baseline: RandomBaseline,
    optimum_s: float | None = None,
    fraction: float = 0.95,
) -> list[dict[str, Any]]:
    """Per trace: best, evaluations and seconds to ``fraction`` of the best known, scores.

    "Within 95 % of the best known" means a kernel time at most ``optimum / 0.95``. The
    horizon of both scores is the longest run (in seconds and in evaluations).
    """
    optimum = optimum_s if optimum_s is not None else min(t.best for t in traces)
    if not math.isfinite(optimum):
        raise ValueError("no trace has a valid result")
    target = optimum / fraction
    horizon_s = max(t.wall_s for t in traces) or 1e-9
    horizon_e = max(len(t.observations) for t in traces) or 1
    rows = []
    for t in traces:
        rows.append(
            {
                "tuner": t.name,
                "evaluations": len(t.observations),
                "wall_s": t.wall_s,
                "best_s": _num(t.best),
                "evaluations_to_target": t.evaluations_to(target),
                "seconds_to_target": t.seconds_to(target),
                "score_time": score(t, baseline, optimum, horizon_s),
                "score_evaluations": score(
                    t, baseline, optimum, horizon_e, axis="evaluations", points=min(horizon_e, 100)
                ),
            }
        )
    return rows
