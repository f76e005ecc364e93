"""The grouped search engine: runs a heuristic spec step by step (seed 001 §6.2).

Each step asks the space for its valid points (the step's parameters free, every other
parameter at the current point), keeps those allowed by the step's value sets,
products and constraints, evaluates them as one batch and moves the current point to
the step's best if it beats the best so far. The current point is therefore always the
best configuration found so far (before anything succeeded: the starting point), which
is what ``best.PARAM`` reads.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from gtune.exceptions import GtuneError, InputError
from gtune.expr import Value
from gtune.heuristics.search import Batch, SearchProblem
from gtune.heuristics.spec import BoundSpec, SpecExpr, Step, best_name
from gtune.kernel import Config
from gtune.measure.result import Result
from gtune.space.base import Space

_Plan = Generator[Batch, Sequence[Result], None]


def _codes(column: npt.NDArray[Any]) -> tuple[npt.NDArray[np.int64], int]:
    """A column's values as codes 0 .. n-1 in their order, and n: by counting where the
    values are integers of a small range (one pass), else by sorting."""
    if np.issubdtype(column.dtype, np.integer) and len(column):
        lo = int(column.min())
        span = int(column.max()) - lo + 1
        if span <= 1 << 20:
            shifted = (column - lo).astype(np.int64, copy=False)
            present = np.bincount(shifted, minlength=span) > 0
            lookup = np.cumsum(present) - 1
            return lookup[shifted].astype(np.int64, copy=False), int(present.sum())
    values, inverse = np.unique(column, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(values)


def tied_parameters(space: Space) -> dict[str, list[str]]:
    """Parameters tied one to one in every valid configuration (``WX == WY``, ``TS ==
    2 * WX``): each value of one goes with exactly one value of the other, both ways.
    Maps each tied parameter to the others of its group. Changing one alone always
    leaves the space, so a step that tunes one must move the others with it."""
    rows = getattr(space, "array", None)
    params = list(space.parameters)
    if rows is None or len(rows) < 2:
        return {}
    rows = np.asarray(rows)
    # each column's values as codes 0 .. n-1 (one sort per column, not one per pair)
    codes: list[npt.NDArray[np.int64]] = []
    counts: list[int] = []
    for i in range(len(params)):
        code, count = _codes(rows[:, i])
        codes.append(code)
        counts.append(count)
    varying = [i for i in range(len(params)) if counts[i] > 1]
    group = {i: i for i in varying}

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    def pairs(a: int, b: int, stop: int | None = None) -> int:
        """Distinct (a, b) value pairs among the first ``stop`` rows (all: None)."""
        key = codes[a][:stop] * counts[b] + codes[b][:stop]
        if counts[a] * counts[b] <= 1 << 22:
            return int(np.count_nonzero(np.bincount(key, minlength=counts[a] * counts[b])))
        return len(np.unique(key))

    for a_pos, a in enumerate(varying):
        n_a = counts[a]
        for b in varying[a_pos + 1 :]:
            if n_a != counts[b]:
                continue
            # a cheap look first: most pairs are not tied
            if pairs(a, b, 1000) != len(np.unique(codes[a][:1000])):
                continue
            if pairs(a, b) == n_a:  # one to one: as many pairs as values of either
                group[root(b)] = root(a)
    out: dict[str, list[str]] = {}
    for i in varying:
        mates = [params[j] for j in varying if j != i and root(j) == root(i)]
        if mates:
            out[params[i]] = mates
    return out


def _check_some_step_runs(spec: BoundSpec, rounds: int) -> None:
    """Refuse a spec none of whose steps runs in the rounds there are (every step
    ``rounds: later`` and one round): it would measure only the start."""
    if not spec.steps or any(spec.steps_for_round(r) for r in range(rounds)):
        return
    raise InputError(
        "no step would run: every step is 'rounds: later' (every round but the first) "
        f"and the search has {rounds} round; set repeat: 1 or more (or --option "
        "repeat=1), or give a step rounds: all",
        source=f"{spec.spec.source}: steps",
    )


class GroupedSearch:
    """Ask/tell searcher for one bound spec on one space."""

    def __init__(
        self,
        spec: BoundSpec,
        space: Space,
        problem: SearchProblem,
        *,
        seed: int | None = None,
        rounds: int | None = None,
    ) -> None:
        missing = [p for p in spec.parameters if p not in space.parameters]
        if missing or set(space.parameters) != set(spec.parameters):
            raise GtuneError(
                "spec bound to parameters "
                f"{', '.join(spec.parameters)} but the space has {', '.join(space.parameters)}"
            )
        self.spec = spec
        self.space = space
        self.problem = problem
        self.seed = spec.spec.seed if seed is None else seed
        self.rounds = spec.spec.rounds if rounds is None else rounds
        _check_some_step_runs(spec, self.rounds)
        dropped = list(spec.dropped_steps)
        self._notes: list[str] = (
            [
                f"step{'s' if len(dropped) > 1 else ''} "
                + ", ".join(repr(label) for label in dropped)
                + f" tune{'' if len(dropped) > 1 else 's'} only parameters this kernel "
                "lacks; dropped"
            ]
            if dropped
            else []
        )
        # the steps with nothing to measure (a step for another technique or dimension),
        # each with its rounds: one note, not one per step and round
        self._empty: dict[str, list[int]] = {}
        self._ties = tied_parameters(space)
        if self._ties:
            shown = sorted({", ".join(sorted([p, *m])) for p, m in self._ties.items()})
            self._notes.append(
                "parameters tied one to one in every valid configuration move together: "
                + "; ".join(shown)
            )
        self._plan = self._run()
        self._pending = False
        self._started = False
        self._next: Batch | None = None
        self._point: Config | None = None
        self._seed: Config | None = None
        self._best = math.inf
        self._round_start_best = math.inf

    # -- Searcher protocol -------------------------------------------------------------
    @property
    def notes(self) -> list[str]:
        if not self._empty:
            return list(self._notes)
        skipped = "; ".join(
            f"{label!r} (round{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))})"
            for label, rs in self._empty.items()
        )
        return [*self._notes, f"no valid points here, skipped: {skipped}"]

    def expected_evaluations(self) -> int | None:
        return None

    @property
    def point(self) -> Config | None:
        """The current point: the best configuration so far."""
        return dict(self._point) if self._point is not None else None

    def ask(self) -> Batch | None:
        if self._pending:
            raise RuntimeError("tell() the results of the last batch before asking again")
        if not self._started:
            self._started = True
            self._next = next(self._plan, None)
        batch, self._next = self._next, None
        self._pending = batch is not None
        return batch

    def tell(self, results: Sequence[Result]) -> None:
        """Take the results in at once, so :attr:`point` is current before the next ask."""
        if not self._pending:
            raise RuntimeError("tell() without a batch asked")
        self._pending = False
        try:
            self._next = self._plan.send(list(results))
        except StopIteration:
            self._next = None

    def start_from(self, config: Mapping[str, int], result: Result) -> None:
        """A configuration measured before the search (the kernel's default): when it ran
        and the spec allows it, the search starts from it and must beat its time."""
        if self._started or not result.ok or set(config) != set(self.space.parameters):
            return
        if self.space.is_valid(config) is None and self._holds_spec_where(dict(config)):
            self._seed = dict(config)
            self._best = result.objective

    def first_step_size(self) -> int | None:
        """How many configurations the first step proposes (None: no valid start)."""
        point = self._seed or self._initial_point()
        steps = self.spec.steps_for_round(0)
        if point is None or not steps:
            return None
        return len(self._candidates(steps[0], point))

    # -- the plan ----------------------------------------------------------------------
    def _run(self) -> _Plan:
        point = self._seed or self._initial_point()
        if point is None:
            self._notes.append("no valid configuration satisfies the spec's constraints")
            return
        self._point = point
        previous: list[Step] | None = None
        point_before = dict(point)
        r = 0
        while self._another_round(r):
            steps = self.spec.steps_for_round(r)
            if previous is not None and steps == previous and point_before == self._point:
                self._notes.append(
                    f"stopped after round {r}: the best configuration did not change during "
                    "the round (a local minimum; another round would only revisit it)"
                )
                return
            previous = steps
            point_before = dict(self._point)
            self._round_start_best = self._best
            for step in steps:
                candidates = self._candidates(step, self._point)
                if not candidates:
                    self._empty.setdefault(step.label, []).append(r + 1)
                    yield Batch([], step.label, r, note="no valid points; skipped")
                    continue
                results = yield Batch(candidates, step.label, r)
                for config, result in zip(candidates, results, strict=False):
                    if result.ok and math.isinf(self._round_start_best):
                        self._round_start_best = result.objective  # the first time known
                    if result.ok and result.objective < self._best:
                        self._best = result.objective
                        self._point = dict(config)
                if len(results) < len(candidates):
                    return
            r += 1

    def _another_round(self, r: int) -> bool:
        """Whether round ``r`` (from 0) runs: the spec's ``1 + repeat`` rounds, then, with
        ``converge``, up to its ``rounds`` more while the round before gained enough."""
        if r < self.rounds:
            return True
        converge = self.spec.spec.converge
        if converge is None or r >= self.rounds + converge.rounds:
            return False
        before, after = self._round_start_best, self._best
        gained = before / after - 1.0 if math.isfinite(before) and after > 0 else 0.0
        if gained < converge.gain:
            return False
        self._notes.append(
            f"round {r + 1} added: round {r} made the best {gained * 100:.1f} % faster "
            f"(converge: another round while a round gains {converge.gain * 100:g} % or "
            f"more, at most {converge.rounds} more)"
        )
        return True

    def _initial_point(self) -> Config | None:
        """The start values, every other parameter at the kernel's default where that is
        valid and otherwise at its smallest valid value."""
        params = list(self.space.parameters)
        start = self.spec.start_values()
        free = [p for p in params if p not in start]
        candidates = [c for c in self.space.subspace(start, free) if self._holds_spec_where(c)]
        if not candidates:
            candidates = [c for c in self.space.subspace({}, params) if self._holds_spec_where(c)]
            if not candidates:
                return None
            shown = ", ".join(f"{k}={v}" for k, v in start.items())
            self._notes.append(
                f"the start values ({shown}) are not valid in this space; starting from the "
                "valid configuration that agrees with them most"
            )
        default = self.problem.default or {}

        def key(c: Config) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
            start_miss = tuple(int(c[p] != v) for p, v in start.items() if p in c)
            default_miss = tuple(int(p in default and c[p] != default[p]) for p in free)
            return sum(start_miss), start_miss, default_miss, tuple(c[p] for p in params)

        best = min(candidates, key=key)
        return dict(best)

    def _holds_spec_where(self, config: Config) -> bool:
        env: dict[str, Value] = dict(self.spec.constants)
        env.update(config)
        return all(bool(e.evaluate(env)) for e in self.spec.spec.where)

    def _candidates(self, step: Step, point: Config) -> list[Config]:
        """The step's valid points, in lexicographic order of its parameters as listed."""
        free = list(step.tune)
        free += [m for p in step.tune for m in self._ties.get(p, []) if m not in free]
        fixed = {p: v for p, v in point.items() if p not in free}
        base: dict[str, Value] = dict(self.spec.constants)
        base.update({best_name(p): v for p, v in point.items()})
        at_point = dict(base)
        at_point.update(point)
        products = [(e, e.evaluate(at_point)) for e in step.keep_product]
        constraints: list[SpecExpr] = [*self.spec.spec.where, *step.where]
        cache: dict[tuple[str, tuple[Value, ...]], frozenset[int] | None] = {}
        out: list[Config] = []
        for config in self.space.subspace(fixed, free):
            env = dict(base)
            env.update(config)
            if not all(e.evaluate(env) == value for e, value in products):
                continue
            if not all(bool(e.evaluate(env)) for e in constraints):
                continue
            if all(self._allowed(step, p, config[p], env, cache) for p in step.tune):
                out.append(config)
        out.sort(key=lambda c: tuple(c[p] for p in free))
        return out

    def _allowed(
        self,
        step: Step,
        param: str,
        value: int,
        env: Mapping[str, Value],
        cache: dict[tuple[str, tuple[Value, ...]], frozenset[int] | None],
    ) -> bool:
        spec = step.tune[param]
        names = sorted(spec.names)
        key = (param, tuple(env[n] for n in names))
        if key not in cache:
            cache[key] = spec.values(env, self.seed)
        allowed = cache[key]
        return allowed is None or value in allowed
