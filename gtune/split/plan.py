"""The arithmetic of a split (seed 002 §2.2): pure functions, no OpenCL, no kernels.

One dimension of ``size`` points is shared by N devices:

- eq. 4: split factors from speeds, ``S_i = v_i / sum(v)``, ``v_i = 1 / t_i``;
- eq. 5-7: each device gets ``floor(G * S_i / wg_i)`` whole work-groups of its own
  size ``wg_i`` (points per work-group along the split dimension);
- eq. 8: what that leaves uncovered (the residue) ...
- eq. 9: ... goes to the device that needs the least extra work to cover it with whole
  work-groups of its own size; its range may then reach back into its neighbour's
  (overlap). Every point is *owned* by exactly one device: the gather takes each point
  from its owner only, so overlapping points are computed twice but written once.
- Algorithm 1: the theoretical heterogeneous time ``max_i S_i * t_i``.

Exact rational arithmetic (:class:`fractions.Fraction`) keeps ``sum(S) == 1`` and the
floors of eq. 7 free of rounding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gtune.exceptions import InputError


@dataclass(frozen=True)
class Share:
    """One device's part of the split dimension.

    ``[start, stop)`` is what its work-groups cover (``groups + residue_groups`` of
    ``block`` points; ``stop`` may pass ``size`` when ``size`` is not a multiple of the
    block); ``[own_start, own_stop)`` is what it contributes to the output.
    """

    device: int
    block: int
    factor: float  # S_i, eq. 4 (the optimal split factor)
    groups: int  # eq. 7
    residue_groups: int  # eq. 9a, for the device chosen for the residue; else 0
    start: int
    stop: int
    own_start: int
    own_stop: int
    size: int

    @property
    def computed(self) -> int:
        return self.stop - self.start

    @property
    def owned(self) -> int:
        return self.own_stop - self.own_start

    @property
    def adjusted(self) -> float:
        """The share of the output this device writes (Table 3 "adjusted"; sums to 1)."""
        return self.owned / self.size

    @property
    def computed_factor(self) -> float:
        """Eq. 8a plus 9b for the residue device: the share its work-groups cover."""
        return self.computed / self.size

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "block": self.block,
            "factor": self.factor,
            "adjusted": self.adjusted,
            "computed_factor": self.computed_factor,
            "groups": self.groups,
            "residue_groups": self.residue_groups,
            "start": self.start,
            "stop": self.stop,
            "own_start": self.own_start,
            "own_stop": self.own_stop,
        }


@dataclass(frozen=True)
class Partition:
    """The split of ``size`` points among devices (one share per device, in order)."""

    size: int
    shares: tuple[Share, ...]
    residue: int  # points left by eq. 7 (G * S_R of eq. 8b)
    residue_device: int | None

    @property
    def overlap(self) -> int:
        """Points inside ``[0, size)`` computed by more than one device."""
        covered = [0] * (self.size + 1)
        for s in self.shares:
            lo, hi = max(0, s.start), min(self.size, s.stop)
            if hi > lo:
                covered[lo] += 1
                covered[hi] -= 1
        total, depth = 0, 0
        for i in range(self.size):
            depth += covered[i]
            if depth > 1:
                total += 1
        return total

    @property
    def overhang(self) -> int:
        """Points past the end that work-groups cover (``size`` not a block multiple)."""
        return sum(max(0, s.stop - self.size) for s in self.shares)

    @property
    def active(self) -> tuple[Share, ...]:
        """The shares that write something."""
        return tuple(s for s in self.shares if s.owned > 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "residue": self.residue,
            "residue_device": self.residue_device,
            "overlap": self.overlap,
            "overhang": self.overhang,
            "shares": [s.to_dict() for s in self.shares],
        }


def split_factors(times: Sequence[float]) -> list[float]:
    """Eq. 4: each device's share in proportion to its speed (the inverse of its time)."""
    return [float(f) for f in _exact_factors(times)]


def _exact_factors(times: Sequence[float]) -> list[Fraction]:
    if not times:
        raise InputError("no device times to split by")
    for t in times:
        if not (isinstance(t, int | float) and math.isfinite(t) and t > 0):
            raise InputError(f"device times must be positive and finite, got {t!r}")
    speeds = [1 / Fraction(t) for t in times]
    total = sum(speeds, Fraction(0))
    return [v / total for v in speeds]


def _as_fractions(factors: Sequence[float]) -> list[Fraction]:
    if not factors:
        raise InputError("no split factors")
    exact = []
    for f in factors:
        if not (math.isfinite(f) and f >= 0):
            raise InputError(f"split factors must be non-negative, got {f!r}")
        exact.append(Fraction(f))
    total = sum(exact, Fraction(0))
    if total <= 0:
        raise InputError("split factors must not all be zero")
    return [f / total for f in exact]  # normalised: they sum to exactly 1


def partition(
    size: int,
    blocks: Sequence[int],
    factors: Sequence[float] | None = None,
    *,
    times: Sequence[float] | None = None,
) -> Partition:
    """Eq. 5-9: whole work-groups per device, the residue to the cheapest device.

    Give ``factors`` (normalised here) or ``times`` (eq. 4 makes the factors). Devices
    are laid out in order along the dimension, the residue device last, so the overlap
    it causes falls on the range of the device before it.
    """
    if size < 1:
        raise InputError(f"the split dimension must have at least one point, got {size}")
    if factors is None:
        if times is None:
            raise InputError("give split factors or device times")
        exact = _exact_factors(times)
    else:
        exact = _as_fractions(factors)
    if len(blocks) != len(exact):
        raise InputError(f"{len(blocks)} work-group sizes for {len(exact)} devices")
    for b in blocks:
        if not isinstance(b, int) or b < 1:
            raise InputError(f"work-group sizes must be positive integers, got {b!r}")
    n = len(blocks)
    groups = [math.floor(size * s / b) for s, b in zip(exact, blocks, strict=True)]  # eq. 6-7
    residue = size - sum(g * b for g, b in zip(groups, blocks, strict=True))  # eq. 8
    extra = [0] * n
    chosen: int | None = None
    if residue > 0:
        need = [-(-residue // b) for b in blocks]  # eq. 9a

        def cost(i: int) -> tuple[int, int, Fraction, int]:
            fits = (groups[i] + need[i]) * blocks[i] <= size
            return (0 if fits else 1, need[i] * blocks[i], -exact[i], i)

        chosen = min(range(n), key=cost)  # eq. 9: least extra work, then fastest
        extra[chosen] = need[chosen]
    order = [i for i in range(n) if i != chosen] + ([chosen] if chosen is not None else [])
    spans: dict[int, tuple[int, int, int, int]] = {}
    pos = 0
    for i in order:
        length = (groups[i] + extra[i]) * blocks[i]
        if i == chosen:
            own = (pos, size)
            start = size - length if length <= size else pos
            spans[i] = (start, start + length, *own)
        else:
            spans[i] = (pos, pos + length, pos, pos + length)
            pos += length
    shares = tuple(
        Share(
            device=i,
            block=blocks[i],
            factor=float(exact[i]),
            groups=groups[i],
            residue_groups=extra[i],
            start=spans[i][0],
            stop=spans[i][1],
            own_start=spans[i][2],
            own_stop=spans[i][3],
            size=size,
        )
        for i in range(n)
    )
    return Partition(size, shares, residue, chosen)


def theoretical_time(factors: Sequence[float], times: Sequence[float]) -> float:
    """Algorithm 1: with perfect overlap, the slowest device's part decides."""
    if len(factors) != len(times) or not factors:
        raise InputError("one split factor per device time")
    return max(f * t for f, t in zip(factors, times, strict=True))


def optimal_time(times: Sequence[float]) -> float:
    """Algorithm 1 at the eq. 4 factors: ``1 / sum(1 / t_i)``."""
    factors = split_factors(times)
    return theoretical_time(factors, times)


# -------------------------------------------------------------------------------------
# The decision: does a split beat the fastest device alone, overheads included?


@dataclass(frozen=True)
class DeviceCost:
    """One device measured alone on the whole problem, data on the host before and after.

    ``fixed_s`` is what is left of the end-to-end time once the kernel and the
    transfers are taken out: launch, synchronisation, host bookkeeping.
    """

    kernel_s: float
    upload_s: float
    download_s: float
    end_to_end_s: float

    @property
    def fixed_s(self) -> float:
        return max(0.0, self.end_to_end_s - self.kernel_s - self.upload_s - self.download_s)

    def predict(self, computed: float, uploaded: float, downloaded: float) -> float:
        """End-to-end time for a part, given as fractions of the whole problem: rows
        computed and uploaded (halo and padding included) and rows downloaded."""
        return (
            computed * self.kernel_s
            + uploaded * self.upload_s
            + downloaded * self.download_s
            + self.fixed_s
        )


@dataclass(frozen=True)
class Decision:
    split: bool
    fastest: int  # the device fastest alone, end to end
    predicted_s: float  # the split, end to end (max over the devices taking part)
    alone_s: float  # the fastest device alone, end to end
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "fastest": self.fastest,
            "predicted_s": self.predicted_s,
            "alone_s": self.alone_s,
            "reason": self.reason,
        }


def decide(
    costs: Sequence[DeviceCost],
    parts: Sequence[tuple[float, float, float]],
    names: Sequence[str] | None = None,
) -> Decision:
    """Split only when the predicted end-to-end time beats the fastest device alone.

    ``parts[i]`` is ``(computed, uploaded, downloaded)`` for device ``i`` as fractions
    of the whole problem (see :meth:`DeviceCost.predict`); a device with nothing to
    compute takes no part.
    """
    if len(costs) != len(parts) or not costs:
        raise InputError("one part per device cost")
    label = list(names) if names is not None else [f"device {i}" for i in range(len(costs))]
    fastest = min(range(len(costs)), key=lambda i: costs[i].end_to_end_s)
    alone = costs[fastest].end_to_end_s
    taking = [i for i, part in enumerate(parts) if part[0] > 0]
    predicted = max(costs[i].predict(*parts[i]) for i in taking) if taking else math.inf
    if len(taking) < 2:
        only = label[taking[0]] if taking else label[fastest]
        return Decision(
            False, fastest, predicted, alone, f"the split leaves all the work to {only}"
        )
    if predicted < alone:
        gain = alone / predicted
        return Decision(
            True,
            fastest,
            predicted,
            alone,
            f"predicted {gain:.2f}x faster than {label[fastest]} alone, transfers included",
        )
    return Decision(
        False,
        fastest,
        predicted,
        alone,
        f"splitting cannot beat {label[fastest]} alone: predicted {predicted * 1e3:.3f} ms "
        f"against {alone * 1e3:.3f} ms end to end (transfers and launches included)",
    )


def sweep_factors(center: float, points: int = 9, width: float = 0.2) -> list[float]:
    """Shares of the first device around ``center`` for a sweep (Figures 6-7), in [0, 1]."""
    if points < 2:
        return [min(1.0, max(0.0, center))]
    lo = max(0.0, center - width)
    hi = min(1.0, center + width)
    if hi - lo < 1e-9:
        lo, hi = 0.0, 1.0
    grid = {round(lo + (hi - lo) * k / (points - 1), 6) for k in range(points)}
    return sorted({x for x in grid if abs(x - center) > 1e-6} | {center})


def factors_with_first(first: float, base: Sequence[float]) -> list[float]:
    """Set the first device's share to ``first``; the others keep their proportions."""
    if not base:
        raise InputError("no split factors")
    first = min(1.0, max(0.0, first))
    rest = sum(base[1:])
    if len(base) == 1:
        return [1.0]
    if rest <= 0:
        equal = (1.0 - first) / (len(base) - 1)
        return [first] + [equal] * (len(base) - 1)
    return [first] + [(1.0 - first) * b / rest for b in base[1:]]


__all__ = [
    "Decision",
    "DeviceCost",
    "Partition",
    "Share",
    "decide",
    "factors_with_first",
    "optimal_time",
    "partition",
    "split_factors",
    "sweep_factors",
    "theoretical_time",
]
