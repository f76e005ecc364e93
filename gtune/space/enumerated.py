"""A tuning space held as an explicit array of its valid configurations.

Once the solver has decided which configurations are legal, every query a search makes
(membership, the valid points of a step, samples) is a numpy mask over one integer
array: microseconds to milliseconds, with no solver in the loop.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from gtune.exceptions import InputError
from gtune.expr import Expr, Value
from gtune.kernel import Config
from gtune.space.base import Space, Violation
from gtune.space.constraints import NamedConstraint
from gtune.space.vector import holds, row_columns

IntArray = npt.NDArray[np.int64]
ExcludeHook = Callable[[Config, str], None]

_KEY_LIMIT = 2**62
_TABLE_LIMIT = 2**20  # values spanned by the columns, for one lookup table


class Exclusions:
    """Configurations refused at run time, shared by a space and its restrictions."""

    def __init__(self, initial: Mapping[tuple[int, ...], str] | None = None) -> None:
        self.reasons: dict[tuple[int, ...], str] = dict(initial or {})
        self.version = 0

    def add(self, row: tuple[int, ...], reason: str) -> None:
        self.reasons[row] = reason
        self.version += 1


class EnumeratedSpace(Space):
    """The valid configurations of ``parameters`` as rows of ``configs``.

    ``domains`` are the unpruned values of each parameter (default: the values seen in
    ``configs``); ``constraints`` with ``env`` (problem sizes, device limits) name the
    rule an invalid configuration breaks; ``on_exclude`` persists run-time refusals.
    """

    def __init__(
        self,
        parameters: Sequence[str],
        configs: npt.ArrayLike,
        *,
        domains: Mapping[str, Sequence[int]] | None = None,
        constraints: Sequence[NamedConstraint] = (),
        env: Mapping[str, Value] | None = None,
        label: str = "",
        exclusions: Exclusions | None = None,
        on_exclude: ExcludeHook | None = None,
        work_group_size: Expr | None = None,
    ) -> None:
        self._params = list(parameters)
        if len(set(self._params)) != len(self._params):
            raise InputError(f"duplicate parameter names in {self._params}")
        rows = np.array(configs, dtype=np.int64)  # its own: the caller's may change
        if rows.size == 0 and (rows.ndim != 2 or rows.shape[1] != len(self._params)):
            rows = rows.reshape(0, len(self._params))  # (a kernel with nothing to tune
            # has one configuration, a row of no values: shape (1, 0))
        if rows.ndim != 2 or rows.shape[1] != len(self._params):
            raise InputError(
                f"configurations must be an array of shape (n, {len(self._params)}), "
                f"got {rows.shape}"
            )
        if domains is None:
            domains = {p: np.unique(rows[:, i]).tolist() for i, p in enumerate(self._params)}
        missing = [p for p in self._params if p not in domains]
        if missing:
            raise InputError(f"no domain given for parameter {missing[0]!r}")
        self._domains = {p: sorted({int(v) for v in domains[p]}) for p in self._params}
        empty = [p for p in self._params if not self._domains[p]]
        if empty:
            raise InputError(f"domain of {empty[0]} is empty")
        self._constraints = list(constraints)
        self._env: dict[str, Value] = dict(env or {})
        self.label = label
        self._exclusions = exclusions if exclusions is not None else Exclusions()
        self._on_exclude = on_exclude
        self._wg = work_group_size
        self._radix = [len(self._domains[p]) for p in self._params]
        self._use_keys = math.prod(self._radix) < _KEY_LIMIT
        self._rows, self._keys = self._canonical(rows)
        self._alive_version = -1
        self._alive: npt.NDArray[np.bool_] = np.ones(len(self._rows), dtype=bool)
        self._columns: IntArray | None = None  # the rows transposed, built on first query
        self._set: set[tuple[int, ...]] | None = None

    # -- construction helpers ------------------------------------------------------
    def _canonical(self, rows: IntArray) -> tuple[IntArray, IntArray]:
        """Sort rows in domain order (deterministic) and drop duplicates."""
        indices = self._domain_indices(rows)
        if not self._use_keys:
            unique_rows = np.unique(rows, axis=0) if len(rows) else rows
            return np.ascontiguousarray(unique_rows), np.zeros(0, dtype=np.int64)
        keys = indices @ self._place_values()
        if len(keys) > 1 and not bool((keys[1:] > keys[:-1]).all()):
            keys, first = np.unique(keys, return_index=True)  # (solved rows come sorted)
            rows = rows[first]
        return np.ascontiguousarray(rows), keys

    def _domain_indices(self, rows: IntArray) -> IntArray:
        """Each value's index in its parameter's domain (the shape of ``rows``), through
        one table of every column's values: a few passes over the array, where a search
        column by column would stride through it twice a parameter."""
        domains = [np.asarray(self._domains[p], dtype=np.int64) for p in self._params]
        if rows.size == 0:
            return np.zeros(rows.shape, dtype=np.int64)
        low, high = rows.min(axis=0), rows.max(axis=0)
        if sum(int(h) - int(lo) + 1 for lo, h in zip(low, high, strict=True)) <= _TABLE_LIMIT:
            span = high - low + 1
            starts = np.concatenate(([0], np.cumsum(span)[:-1]))
            table = np.full(int(span.sum()), -1, dtype=np.int64)
            for j, domain in enumerate(domains):
                seen = domain[(domain >= low[j]) & (domain <= high[j])]
                table[starts[j] + seen - low[j]] = np.searchsorted(domain, seen)
            indices: IntArray = np.take(table, rows + (starts - low))
            if not bool((indices < 0).any()):
                return indices
        for j, (p, domain) in enumerate(zip(self._params, domains, strict=True)):
            outside = ~np.isin(rows[:, j], domain)
            if outside.any():
                bad = int(rows[outside.argmax(), j])
                raise InputError(f"configuration value {p}={bad} is outside its domain")
        return self._searched_indices(rows)

    def _searched_indices(self, rows: IntArray) -> IntArray:
        """As :meth:`_domain_indices` for rows whose values lie in their domains, column
        by column (for a few rows: no table to build)."""
        indices = np.empty(rows.shape, dtype=np.int64)
        for j, p in enumerate(self._params):
            indices[:, j] = np.searchsorted(
                np.asarray(self._domains[p], dtype=np.int64), rows[:, j]
            )
        return indices

    def _place_values(self) -> IntArray:
        """What one step of each parameter's index adds to a row's key."""
        places = np.ones(len(self._radix), dtype=np.int64)
        for i in range(len(self._radix) - 2, -1, -1):
            places[i] = places[i + 1] * self._radix[i + 1]
        return places

    def _encode(self, rows: IntArray) -> IntArray:
        """The keys of rows whose values lie in their domains."""
        keys: IntArray = self._searched_indices(rows) @ self._place_values()
        return keys

    def _derive(
        self, mask: npt.NDArray[np.bool_], constraints: Sequence[NamedConstraint], label: str
    ) -> EnumeratedSpace:
        """The rows ``mask`` keeps, under further constraints: they are canonical already
        (sorted, unique, in their domains), so nothing is checked or sorted again."""
        derived = copy.copy(self)
        derived._rows = np.ascontiguousarray(self._rows[mask])
        derived._keys = self._keys[mask] if self._use_keys else self._keys
        derived._constraints = [*self._constraints, *constraints]
        derived.label = label
        derived._alive_version = -1
        derived._alive = np.ones(len(derived._rows), dtype=bool)
        derived._columns = None
        derived._set = None
        return derived

    # -- state -----------------------------------------------------------------------
    def _live(self) -> npt.NDArray[np.bool_]:
        """Mask of rows not refused at run time (recomputed when refusals change)."""
        if self._alive_version != self._exclusions.version:
            alive = np.ones(len(self._rows), dtype=bool)
            if self._exclusions.reasons:
                refused = np.array(list(self._exclusions.reasons), dtype=np.int64)
                inside = np.ones(len(refused), dtype=bool)
                for i, p in enumerate(self._params):
                    inside &= np.isin(refused[:, i], self._domains[p])
                refused = refused[inside]
                if self._use_keys:
                    alive = ~np.isin(self._keys, self._encode(refused))
                else:
                    alive = ~self._contains_rows(refused, self._rows)
            self._alive = alive
            self._alive_version = self._exclusions.version
        return self._alive

    @staticmethod
    def _contains_rows(needles: IntArray, haystack: IntArray) -> npt.NDArray[np.bool_]:
        """For each row of ``haystack``: is it one of ``needles``?"""
        wanted = {tuple(r) for r in needles.tolist()}
        return np.fromiter((tuple(r) in wanted for r in haystack.tolist()), bool, len(haystack))

    @property
    def array(self) -> IntArray:
        """The valid configurations (refusals removed), one row each, read-only."""
        out = self._rows[self._live()]
        out.flags.writeable = False
        return out

    @property
    def domains(self) -> dict[str, list[int]]:
        return {p: list(v) for p, v in self._domains.items()}

    @property
    def constraints(self) -> list[NamedConstraint]:
        return list(self._constraints)

    @property
    def env(self) -> dict[str, Value]:
        """Problem sizes and device limits the constraints read."""
        return dict(self._env)

    # -- Space protocol ------------------------------------------------------------
    @property
    def parameters(self) -> list[str]:
        return list(self._params)

    def size_unpruned(self) -> int:
        return math.prod(self._radix)

    def size(self) -> int:
        return int(self._live().sum())

    def enumerate(self) -> Iterator[Config]:
        for row in self.array.tolist():
            yield dict(zip(self._params, row, strict=True))

    def sample(self, n: int, seed: int = 0) -> list[Config]:
        rows = self.array
        if n < 0:
            raise InputError(f"sample size must be >= 0, got {n}")
        rng = np.random.default_rng(seed)
        pick = rng.choice(len(rows), size=min(n, len(rows)), replace=False)
        return self._configs(rows[pick])

    def is_valid(self, config: Mapping[str, int]) -> Violation | None:
        unknown = sorted(set(config) - set(self._params))
        if unknown:
            return Violation("unknown parameter", f"{unknown[0]} is not a parameter of this space")
        for p in self._params:
            if p not in config:
                return Violation("missing parameter", f"{p} has no value")
            if int(config[p]) not in self._domains[p]:
                return Violation(
                    f"domain of {p}", f"{p}={config[p]} not in {_short(self._domains[p])}"
                )
        row = tuple(int(config[p]) for p in self._params)
        if row in self._exclusions.reasons:
            return Violation("refused at run time", self._exclusions.reasons[row])
        if self._member(row):
            return None
        env: dict[str, Value] = dict(self._env)
        env.update(zip(self._params, row, strict=True))
        for c in self._constraints:
            if not c.holds(env):
                return Violation(c.name, c.expr.text)
        return Violation("not in the solved space", "no recorded constraint names the reason")

    def _member(self, row: tuple[int, ...]) -> bool:
        if self._use_keys:
            key = int(self._encode(np.array([row], dtype=np.int64))[0])
            i = int(np.searchsorted(self._keys, key))
            return i < len(self._keys) and int(self._keys[i]) == key
        if self._set is None:
            self._set = {tuple(r) for r in self._rows.tolist()}
        return row in self._set

    def subspace(
        self,
        fixed: Mapping[str, int],
        free: Sequence[str],
        extra: Sequence[Expr] = (),
    ) -> list[Config]:
        return self._configs(self.subspace_array(fixed, free, extra))

    def subspace_array(
        self,
        fixed: Mapping[str, int],
        free: Sequence[str],
        extra: Sequence[Expr] = (),
    ) -> IntArray:
        """As :meth:`subspace`, as rows in :attr:`parameters` order (no dict building)."""
        unknown = sorted((set(fixed) | set(free)) - set(self._params))
        if unknown:
            raise InputError(
                f"unknown parameter {unknown[0]!r}; parameters: {', '.join(self._params)}"
            )
        unset = [p for p in self._params if p not in free and p not in fixed]
        if unset:
            raise InputError(f"parameter {unset[0]!r} is neither free nor fixed")
        # Narrow an index list one fixed parameter at a time over contiguous columns:
        # after the first comparison only the survivors are looked at.
        if self._columns is None:
            self._columns = np.ascontiguousarray(self._rows.T)
        idx: npt.NDArray[np.intp] | None = None
        for i, p in enumerate(self._params):
            if p in free:
                continue
            column = self._columns[i]
            value = int(fixed[p])
            idx = np.flatnonzero(column == value) if idx is None else idx[column[idx] == value]
            if len(idx) == 0:
                break
        if idx is None:
            idx = np.arange(len(self._rows))
        rows = self._rows[idx[self._live()[idx]]]
        if extra and len(rows):
            rows = rows[self._mask(rows, [NamedConstraint(e.text, e, "extra") for e in extra])]
        return rows

    def restrict(self, constraints: Sequence[Expr], label: str = "") -> EnumeratedSpace:
        named = [
            NamedConstraint(f"{label}: {c.text}" if label else c.text, c, "extra")
            for c in constraints
        ]
        return self.restrict_named(named, label)

    def restrict_named(
        self, constraints: Sequence[NamedConstraint], label: str = ""
    ) -> EnumeratedSpace:
        """As :meth:`restrict` with constraints that already carry names."""
        mask = self._mask(self._rows, constraints)
        return self._derive(mask, constraints, label or self.label)

    def exclude(self, config: Mapping[str, int], reason: str) -> None:
        missing = [p for p in self._params if p not in config]
        if missing:
            raise InputError(f"cannot exclude a configuration without {missing[0]!r}")
        row = tuple(int(config[p]) for p in self._params)
        self._exclusions.add(row, reason)
        if self._on_exclude is not None:
            self._on_exclude(dict(zip(self._params, row, strict=True)), reason)

    def limit_work_group(self, max_work_group_size: int) -> EnumeratedSpace:
        """The space under a kernel's own work-group limit (CL_KERNEL_WORK_GROUP_SIZE),
        which the compiler reports only after building; may be below the device's."""
        if self._wg is None:
            raise InputError("this space does not know the kernel's work-group size expression")
        if max_work_group_size < 1:
            raise InputError(f"work-group limit must be >= 1, got {max_work_group_size}")
        rule = NamedConstraint(
            "kernel_work_group_size",
            Expr(f"{self._wg.text} <= {int(max_work_group_size)}", "CL_KERNEL_WORK_GROUP_SIZE"),
            "learned",
            "the compiled kernel's maximum work-group size",
        )
        return self.restrict_named([rule], self.label)

    # -- helpers -------------------------------------------------------------------
    def _mask(
        self, rows: IntArray, constraints: Sequence[NamedConstraint]
    ) -> npt.NDArray[np.bool_]:
        env: dict[str, object] = dict(self._env)
        env.update(
            row_columns(self._params, rows, frozenset().union(*(c.expr.names for c in constraints)))
        )
        mask = np.ones(len(rows), dtype=bool)
        for c in constraints:
            mask &= holds(c.expr, env, len(rows))
        return mask

    def rejected_by(self, rows: IntArray, constraint: NamedConstraint) -> int:
        """How many of ``rows`` (e.g. the unpruned grid) the constraint alone rejects."""
        return int((~self._mask(rows, [constraint])).sum())

    def _configs(self, rows: IntArray) -> list[Config]:
        return [dict(zip(self._params, r, strict=True)) for r in rows.tolist()]

    def __repr__(self) -> str:
        name = f" {self.label!r}" if self.label else ""
        return f"<EnumeratedSpace{name} {self.size()} of {self.size_unpruned()} configurations>"


def _short(values: Sequence[int], limit: int = 8) -> str:
    if len(values) <= limit:
        return "{" + ", ".join(map(str, values)) + "}"
    return "{" + ", ".join(map(str, values[:limit])) + ", ...}"
