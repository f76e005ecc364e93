"""What every strategy plugin provides: a name, documented options, a searcher.

One file per strategy; each declares its options with a doc string and a default and
rejects keys it does not know, so a typo in ``--option`` or a config file is an error
rather than a silently ignored setting.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import yaml

from gtune.budget import Budget
from gtune.exceptions import InputError
from gtune.heuristics.search import (
    Batch,
    ProgressHook,
    Searcher,
    SearchProblem,
    TuningOutcome,
    drive,
)
from gtune.heuristics.spec import MAX_REPEAT
from gtune.kernel import Config
from gtune.measure.evaluator import Evaluator
from gtune.measure.result import Result
from gtune.space.base import Space


@dataclass(frozen=True)
class Option:
    """One strategy option: its default, what it means and the types it accepts."""

    default: Any
    doc: str
    types: tuple[type, ...]
    choices: tuple[Any, ...] = ()
    #: the smallest and largest number allowed (a number option without them is
    #: unbounded: a seed)
    bounds: tuple[float, float] | None = None

    def check(self, strategy: str, name: str, value: Any) -> Any:
        ok = isinstance(value, self.types) and not (
            isinstance(value, bool) and bool not in self.types
        )
        if float in self.types and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            wanted = " or ".join("None" if t is type(None) else t.__name__ for t in self.types)
            raise InputError(
                f"option {name!r} of strategy {strategy!r} must be {wanted}, got {value!r}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                f"option {name!r} of strategy {strategy!r} must be finite, got {value!r}"
            )
        if (
            self.bounds is not None
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and not self.bounds[0] <= value <= self.bounds[1]
        ):
            low, high = (f"{b:,}" if float(b).is_integer() else str(b) for b in self.bounds)
            raise InputError(
                f"option {name!r} of strategy {strategy!r} must be at least {low} and at "
                f"most {high}, got {value!r}"
            )
        if self.choices and value not in self.choices:
            raise InputError(
                f"option {name!r} of strategy {strategy!r} must be one of "
                f"{', '.join(map(str, self.choices))}, got {value!r}"
            )
        return value

    @property
    def type_name(self) -> str:
        return " or ".join("None" if t is type(None) else t.__name__ for t in self.types)

    def parse(self, strategy: str, name: str, text: str) -> Any:
        """``text`` (from ``--option name=text``) as the first declared type it reads as
        (None first, where declared). The one parser of option text: the command line
        and the library (:func:`gtune.tune`'s ``strategy_options``) both use it.

        ``none``/``null`` for None; ``true``/``false`` (yes/no, on/off, 1/0) for a bool;
        a list is ``[a, b]`` (YAML flow) or ``a; b``.
        """
        raw = text.strip()
        kinds = sorted(self.types, key=lambda t: t is not type(None))  # none/null first
        for kind in kinds:
            value = _read_as(kind, raw)
            if value is not _NO:
                return self.check(strategy, name, value)
        raise InputError(
            f"option {name!r} of strategy {strategy!r} must be {self.type_name}, got {text!r}"
        )


_NO = object()
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _read_as(kind: type, raw: str) -> Any:
    low = raw.lower()
    if kind is type(None):
        return None if low in ("none", "null", "") else _NO
    if kind is bool:
        return True if low in _TRUE else False if low in _FALSE else _NO
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            return _NO
    if kind is float:
        try:
            value = float(raw)
        except ValueError:
            return _NO
        return value if math.isfinite(value) else _NO
    if kind in (list, tuple):
        if raw.startswith("["):
            try:
                items = yaml.safe_load(raw)
            except yaml.YAMLError:
                return _NO
            if not isinstance(items, list):
                return _NO
            return kind(str(i) for i in items)
        return kind(part.strip() for part in raw.split(";") if part.strip())
    if kind is str:
        return raw
    return _NO


class Strategy(ABC):
    """A search strategy: builds a :class:`Searcher` for a space and runs it."""

    name: ClassVar[str]
    doc: ClassVar[str]
    options: ClassVar[Mapping[str, Option]]
    seeded: ClassVar[bool] = True
    """Whether a tuning run measures the kernel's default first (see ``Seeded``)."""
    bound: Mapping[str, Any] = {}
    """Options fixed when the strategy was made (:meth:`bind`); ``tune(options=)`` wins."""

    def bind(self, given: Mapping[str, Any]) -> Strategy:
        """Fix options for every later :meth:`tune`; strings are parsed to the declared
        types (``--option n=50``). Unknown keys are errors listing the allowed ones."""
        self._reject_unknown(given)
        parsed: dict[str, Any] = dict(self.bound)
        for key, value in given.items():
            option = self.options[key]
            if isinstance(value, str) and str not in option.types:
                parsed[key] = option.parse(self.name, key, value)
            else:
                parsed[key] = option.check(self.name, key, value)
        self.bound = parsed
        return self

    def _reject_unknown(self, given: Mapping[str, Any]) -> None:
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            allowed = ", ".join(sorted(self.options)) or "none"
            raise InputError(
                f"strategy {self.name!r} has no option {unknown[0]!r}; its options: {allowed}"
            )

    def configure(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults, then bound options, then ``given``; unknown keys and wrong types are
        errors."""
        given = {**self.bound, **(given or {})}
        self._reject_unknown(given)
        out = {k: o.default for k, o in self.options.items()}
        for k, v in given.items():
            out[k] = self.options[k].check(self.name, k, v)
        return out

    @abstractmethod
    def searcher(
        self, space: Space, problem: SearchProblem, options: Mapping[str, Any]
    ) -> Searcher:
        """A fresh searcher; ``options`` have been through :meth:`configure`."""

    def default_budget(self, options: Mapping[str, Any]) -> Budget | None:
        """The budget the strategy itself asks for (e.g. a spec's), if any."""
        return None

    def tune(
        self,
        space: Space,
        evaluator: Evaluator,
        problem: SearchProblem,
        *,
        budget: Budget | None = None,
        options: Mapping[str, Any] | None = None,
        on_result: ProgressHook | None = None,
        label: str | None = None,
    ) -> TuningOutcome:
        """Search ``space`` with ``evaluator``; ``budget`` replaces the strategy's own."""
        opts = self.configure(options)
        searcher = self.searcher(space, problem, opts)
        return drive(
            searcher,
            evaluator,
            strategy=label or self.name,
            budget=budget if budget is not None else self.default_budget(opts),
            space=space,
            on_result=on_result,
        )


class ListSearcher:
    """Proposes a fixed list of configurations in batches (exhaustive, expert, random)."""

    def __init__(
        self,
        configs: Sequence[Config],
        step: str,
        batch_size: int,
        *,
        known: Mapping[int, Result] | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        if batch_size < 1:
            raise InputError(f"batch size must be at least 1, got {batch_size}")
        self._configs = list(configs)
        self._known = dict(known or {})
        self._step = step
        self._size = batch_size
        self._notes = list(notes)
        self._batches = self._chunks()

    def _chunks(self) -> Iterator[Batch]:
        for lo in range(0, len(self._configs), self._size):
            hi = min(lo + self._size, len(self._configs))
            known = {i - lo: r for i, r in self._known.items() if lo <= i < hi}
            yield Batch(self._configs[lo:hi], self._step, 0, known=known)

    @property
    def notes(self) -> list[str]:
        return list(self._notes)

    def expected_evaluations(self) -> int | None:
        return len(self._configs)

    def ask(self) -> Batch | None:
        return next(self._batches, None)

    def tell(self, results: Sequence[Result]) -> None:
        return None


BATCH_OPTION = Option(
    64,
    "configurations proposed per batch (compiled in parallel by the evaluator)",
    (int,),
    bounds=(1, 100_000),
)
MAX_REPEAT_OPTION = MAX_REPEAT
"""Most extra rounds ``--option repeat=N`` asks for (as many as a spec's ``repeat``)."""
