"""The interface every tuning space offers to search code.

A space owns legality. Search asks it for the valid points of a step (a group of
parameters varying, the others fixed), for samples and for validity with a reason;
configurations the driver refuses at run time are fed back with :meth:`exclude`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from gtune.expr import Expr
from gtune.kernel import Config


@dataclass(frozen=True)
class Violation:
    """Why a configuration is not in the space: the constraint it breaks, in words."""

    constraint: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.constraint} ({self.detail})" if self.detail else self.constraint


@runtime_checkable
class Space(Protocol):
    @property
    def parameters(self) -> list[str]:
        """Parameter names, in description order."""
        ...

    def size_unpruned(self) -> int:
        """Product of the parameter domains (nothing pruned)."""
        ...

    def size(self) -> int:
        """Number of valid configurations."""
        ...

    def enumerate(self) -> Iterator[Config]:
        """Every valid configuration, in a deterministic order."""
        ...

    def sample(self, n: int, seed: int = 0) -> list[Config]:
        """Up to ``n`` distinct valid configurations drawn uniformly without replacement."""
        ...

    def is_valid(self, config: Mapping[str, int]) -> Violation | None:
        """None if valid, else the first violated constraint (or domain / exclusion)."""
        ...

    def subspace(
        self,
        fixed: Mapping[str, int],
        free: Sequence[str],
        extra: Sequence[Expr] = (),
    ) -> list[Config]:
        """Valid full configurations where ``free`` parameters vary, the rest equal
        ``fixed``, and the ``extra`` constraints hold. Every parameter not in ``free``
        must be in ``fixed``."""
        ...

    def restrict(self, constraints: Sequence[Expr], label: str = "") -> Space:
        """A narrower space (e.g. one data-loading technique, or an expert's limits)."""
        ...

    def exclude(self, config: Mapping[str, int], reason: str) -> None:
        """Record a configuration refused at run time; later queries omit it."""
        ...
