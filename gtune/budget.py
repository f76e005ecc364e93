"""A search's limits: :class:`Budget` (evaluations, measured seconds, wall time) and
its text form (``500``, ``90s``, ``none``).

Plain data that every layer from the search loop up passes around; how a budget is
shared by the searches of one run lives in ``gtune/tuning/budget.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gtune.exceptions import InputError


@dataclass(frozen=True)
class Budget:
    """Limits on a search; ``None`` means unlimited.

    ``evaluations`` counts distinct configurations measured, ``seconds`` the measured
    tuning cost (compile plus run seconds, as seed 001 Table 3 counts it; deterministic
    under replay) and ``wall_seconds`` elapsed time.
    """

    evaluations: int | None = None
    seconds: float | None = None
    wall_seconds: float | None = None

    @property
    def unlimited(self) -> bool:
        return self.evaluations is None and self.seconds is None and self.wall_seconds is None

    @classmethod
    def parse(cls, text: str, source: str = "budget") -> Budget:
        """``N`` evaluations, wall time ``Ns`` / ``Nm`` / ``Nh``, or ``none`` (no limit:
        not even the default a run without a budget may get)."""
        t = text.strip().lower()
        scale = {"s": 1.0, "m": 60.0, "h": 3600.0}
        if t in ("none", "unlimited"):
            return cls()
        try:
            if t and t[-1] in scale:
                value = float(t[:-1]) * scale[t[-1]]
                if not math.isfinite(value) or value <= 0:
                    raise ValueError
                return cls(wall_seconds=value)
            n = int(t)
            if n <= 0:
                raise ValueError
            return cls(evaluations=n)
        except ValueError:
            raise InputError(
                f"expected a positive number of evaluations (500), a time (90s, 10m, 1h) or "
                f"none, got {text!r}",
                source=source,
            ) from None
