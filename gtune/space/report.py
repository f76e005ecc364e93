"""Which constraints cut the space, computed without enumerating the unpruned grid.

Each constraint reads a few parameters; it is evaluated (vectorised) on the grid of
those parameters alone, and the count of rejected points scaled by the other domains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gtune.space.constraints import NamedConstraint
from gtune.space.model import SpaceModel
from gtune.space.vector import holds

MAX_GRID = 20_000_000


@dataclass(frozen=True)
class Cut:
    constraint: NamedConstraint
    rejected: int | None  # domain points this constraint alone rejects; None: grid too big

    def fraction(self, total: int) -> float | None:
        return None if self.rejected is None else self.rejected / total


def constraint_cuts(model: SpaceModel) -> list[Cut]:
    """Every constraint with the unpruned points it rejects on its own, largest first."""
    env = model.env
    total = model.size_unpruned()
    cuts = []
    for c in model.constraints:
        used = [p for p in model.parameters if p in c.expr.names]
        grid = math.prod(len(model.domains[p]) for p in used)
        if grid > MAX_GRID:
            cuts.append(Cut(c, None))
            continue
        columns: dict[str, object] = dict(env)
        if used:
            mesh = np.meshgrid(
                *[np.asarray(model.domains[p], dtype=np.int64) for p in used], indexing="ij"
            )
            for p, m in zip(used, mesh, strict=True):
                columns[p] = m.ravel()
        ok = holds(c.expr, columns, grid)
        rejected = int((~ok).sum()) * (total // grid)
        cuts.append(Cut(c, rejected))
    return sorted(cuts, key=lambda k: -(k.rejected if k.rejected is not None else -1))
