"""Shared fixtures: a space and replayed timings from a recording of real measurements.

``tests/data/recording_heat3d_small.json`` holds every valid configuration of
stencils/heat3d at 16x4x4 (global and local memory loading, merge factors up to 2),
measured on PoCL by benchmarks/compare/record.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from gtune.description import load_kernel
from gtune.expr import Expr
from gtune.heuristics import SearchProblem
from gtune.kernel import Config, canonical_config
from gtune.measure import ReplayEvaluator, Result
from gtune.space import EnumeratedSpace

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "data" / "recording_heat3d_small.json"


class Recorded:
    """The recording as the tests use it: configurations, results, space, problem."""

    def __init__(self, path: Path) -> None:
        self.data: dict[str, Any] = json.loads(path.read_text())
        self.path = path
        self.results = [Result.from_dict(r) for r in self.data["results"]]
        self.parameters: list[str] = self.data["space"]["parameters"]
        self.domains: dict[str, list[int]] = self.data["space"]["domains"]
        self.sizes: dict[str, int] = self.data["kernel"]["sizes"]
        self.kernel = load_kernel(ROOT / self.data["kernel"]["description"], self.sizes)
        self.by_key = {canonical_config(r.config): r for r in self.results}
        # parameters the kernel gained after the recording (STREAM of a 2D kernel) read
        # as their defaults, the value every recorded configuration ran with
        default = self.kernel.default_config() or {}
        self.absent = {p: default[p] for p in default if p not in self.parameters}

    @property
    def configs(self) -> list[Config]:
        return [dict(r.config) for r in self.results]

    def space(self, technique: str | None = None) -> EnumeratedSpace:
        rows = [[c[p] for p in self.parameters] for c in self.configs]
        env = {**self.sizes, **self.absent}
        space = EnumeratedSpace(self.parameters, rows, domains=self.domains, env=env)
        if technique is None:
            return space
        return space.restrict(list(self.kernel.techniques[technique]), label=technique)

    def problem(self) -> SearchProblem:
        return SearchProblem(
            sizes=self.sizes, domains=self.domains, default=self.kernel.default_config()
        )

    def replay(self, replace: Mapping[str, Result] | None = None) -> ReplayEvaluator:
        results = dict(self.by_key)
        results.update(replace or {})
        return ReplayEvaluator(results.values(), source=str(self.path))

    def objective(self, config: Mapping[str, int]) -> float:
        return self.by_key[canonical_config(config)].objective

    def technique_of(self, technique: str) -> Callable[[Mapping[str, int]], bool]:
        exprs: list[Expr] = list(self.kernel.techniques[technique])
        return lambda c: all(bool(e.evaluate({**self.sizes, **self.absent, **c})) for e in exprs)


@pytest.fixture(scope="session")
def recorded() -> Recorded:
    if not RECORDING.exists():
        pytest.fail(f"{RECORDING} is missing; run benchmarks/compare/record.py (see its doc)")
    return Recorded(RECORDING)
