"""Named constraints: one rule of the space, with the label reports and violations use.

The same :class:`NamedConstraint` list is written to MiniZinc (which decides the space)
and evaluated in Python (which names the rule a configuration breaks), so both speak
of one rule by one name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from gtune.expr import Expr, Value

Origin = Literal["platform", "kernel", "technique", "extra", "learned"]


@dataclass(frozen=True)
class NamedConstraint:
    """A boolean expression over parameters, problem sizes and device limits."""

    name: str
    expr: Expr
    origin: Origin = "kernel"
    doc: str = ""

    def holds(self, env: Mapping[str, Value]) -> bool:
        return bool(self.expr.evaluate(env))

    def describe(self) -> str:
        return f"{self.name}: {self.expr.text}"
