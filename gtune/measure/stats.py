"""Timing statistics: how well a median run time is known, and when to stop timing.

Run times of a kernel are not normally distributed (a tail of slow runs from
interference), so the confidence interval of the median is taken from order statistics,
which assume nothing about the distribution: with ``n`` runs, the interval between the
``k``-th smallest and the ``k``-th largest time covers the true median with probability
``1 - 2 * P(Binomial(n, 1/2) < k)``. With too few runs for the requested confidence,
the whole range ``[min, max]`` is used: any interval lies inside it, so a tight range
is a tight interval.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def _binom_cdf_half(k: int, n: int) -> float:
    """P(Binomial(n, 1/2) <= k)."""
    if k < 0:
        return 0.0
    # integer over integer: exact for any n (2.0**n overflows from n = 1024)
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / (1 << n)


def median_interval(times: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free confidence interval of the median of ``times``.

    Falls back to ``(min, max)`` when ``len(times)`` is too small for ``confidence``.
    """
    if not times:
        return (math.inf, math.inf)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    xs = sorted(times)
    n = len(xs)
    best = (xs[0], xs[-1])
    # the largest k whose interval [x_k, x_{n-k+1}] (1-based) still has the coverage;
    # P(Binomial(n, 1/2) <= k - 1) summed as k grows, in integers
    below, term, whole = 0, 1, 1 << n  # term: comb(n, k - 1)
    for k in range(1, n // 2 + 1):
        below += term
        term = term * (n - k + 1) // k
        coverage = 1.0 - 2.0 * (below / whole)
        if coverage < confidence:
            break
        best = (xs[k - 1], xs[n - k])
    return best


def interval_coverage(n: int, confidence: float = 0.95) -> float:
    """The coverage :func:`median_interval` actually obtains from ``n`` times when asked
    for ``confidence``: at least ``confidence`` when there are enough runs, else that of
    the whole range ``[min, max]``, ``1 - 2 / 2**n`` (75 % for three runs)."""
    if n < 1:
        return 0.0
    best = 0.0
    for k in range(1, n // 2 + 1):
        coverage = 1.0 - 2.0 * _binom_cdf_half(k - 1, n)
        if coverage < confidence:
            break
        best = coverage
    return best if best else 1.0 - 2.0 * _binom_cdf_half(0, n)


def relative_halfwidth(times: Sequence[float], confidence: float = 0.95) -> float:
    """Half the width of the median's confidence interval, relative to the median."""
    if not times:
        return math.inf
    lo, hi = median_interval(times, confidence)
    med = statistics.median(times)
    if med <= 0.0:
        return 0.0 if hi == lo else math.inf
    return (hi - lo) / 2.0 / med


@dataclass(frozen=True)
class TimingPolicy:
    """When a configuration has been timed enough.

    At least ``min_runs`` timed runs; then more until the median's confidence interval
    is within ``precision`` (relative half-width) or ``max_runs`` runs or ``max_seconds``
    of timed runs are spent. On a quiet device three runs that agree stop there.
    """

    min_runs: int = 3
    max_runs: int = 25
    max_seconds: float = 2.0
    precision: float = 0.03
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.min_runs < 1:
            raise ValueError(f"min_runs must be at least 1, got {self.min_runs}")
        if self.max_runs < self.min_runs:
            raise ValueError(
                f"max_runs ({self.max_runs}) must be at least min_runs ({self.min_runs})"
            )
        if not (self.precision > 0.0 and math.isfinite(self.precision)):
            raise ValueError(f"precision must be a positive number, got {self.precision}")
        if not (self.max_seconds > 0.0 and math.isfinite(self.max_seconds)):
            raise ValueError(f"max_seconds must be a positive number, got {self.max_seconds}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")

    def enough(self, times: Sequence[float]) -> bool:
        """Whether timing can stop after ``times`` (seconds per run)."""
        n = len(times)
        if n < self.min_runs:
            return False
        if n >= self.max_runs or sum(times) >= self.max_seconds:
            return True
        return relative_halfwidth(times, self.confidence) <= self.precision

    def converged(self, times: Sequence[float]) -> bool:
        """Whether the median is known to the stated precision (not merely capped)."""
        return (
            len(times) >= self.min_runs
            and relative_halfwidth(times, self.confidence) <= self.precision
        )

    def to_dict(self) -> dict[str, float | int]:
        return {
            "min_runs": self.min_runs,
            "max_runs": self.max_runs,
            "max_seconds": self.max_seconds,
            "precision": self.precision,
            "confidence": self.confidence,
        }


def faster_beyond_noise(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> bool:
    """Whether ``a`` is faster than ``b`` with their median intervals not overlapping."""
    if not a or not b:
        return False
    return median_interval(a, confidence)[1] < median_interval(b, confidence)[0]
