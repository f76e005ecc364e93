"""Heuristic spec files: the YAML successor of seed 001's Algorithm 3.

A spec names ordered steps; each step tunes a group of parameters over given values
while every other parameter stays at the best configuration found so far. The format
is documented in ``docs/specs.md``. Parsing happens in two stages so that every
mistake is reported before anything is measured: :func:`parse_spec` checks the
structure and the expression syntax of the file alone, :meth:`HeuristicSpec.bind`
checks every name against one kernel's parameters and problem sizes.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

from gtune.budget import Budget
from gtune.exceptions import ExpressionError, GtuneError, InputError
from gtune.expr import Expr, Value
from gtune.inputs import MAX_YAML_BYTES, load_yaml, read_text

Rounds = Literal["all", "first", "later"]

_TOP_KEYS = (
    "name",
    "doc",
    "repeat",
    "converge",
    "seed",
    "optional",
    "start",
    "where",
    "budget",
    "steps",
)
_CONVERGE_KEYS = ("gain", "rounds")
_STEP_KEYS = ("name", "tune", "keep_product", "where", "rounds", "needs")
_BUDGET_KEYS = ("evaluations", "seconds", "wall_seconds")
_ROUNDS: tuple[Rounds, ...] = ("all", "first", "later")

_BEST = re.compile(r"\bbest\.([A-Za-z_]\w*)")
_SAMPLE = re.compile(r"^sample\s*\((?P<n>[^,]+),(?P<range>.+)\)$", re.DOTALL)
_STEP_OP = re.compile(r"^(?P<op>[*+])(?P<step>.+)$", re.DOTALL)
BEST_PREFIX = "best__"
DIMS = "DIMS"
"""The name under which spec expressions read the problem's dimensions: how many problem
sizes it has (2 for NX, NY; 3 for NX, NY, NZ), as a stencil definition's ``dims``."""

MAX_VALUES = 100_000
"""Most values one range in a spec may produce."""
MAX_LIST = 10_000
"""Most items an explicit list in a spec may hold."""
MAX_REPEAT = 1_000


def best_name(parameter: str) -> str:
    """The expression-language name under which ``best.PARAM`` is bound."""
    return BEST_PREFIX + parameter


# ---------------------------------------------------------------------------------
# Expressions and value sets


@dataclass(frozen=True)
class SpecExpr:
    """An expression from a spec: ``best.X`` is read as the best configuration's X."""

    text: str
    source: str
    expr: Expr = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rewritten = _BEST.sub(lambda m: best_name(m.group(1)), self.text)
        object.__setattr__(self, "expr", Expr(rewritten, self.source))

    @property
    def names(self) -> frozenset[str]:
        return self.expr.names

    def evaluate(self, env: Mapping[str, Value]) -> Value:
        return self.expr.evaluate(env)

    def evaluate_int(self, env: Mapping[str, Value]) -> int:
        return self.expr.evaluate_int(env)

    def __str__(self) -> str:
        return self.text


class ValueSpec:
    """The values one parameter may take in a step; ``None`` from :meth:`values` means
    "whatever the space allows"."""

    text: str
    source: str

    @property
    def names(self) -> frozenset[str]:
        return frozenset()

    def values(self, env: Mapping[str, Value], seed: int) -> frozenset[int] | None:
        raise NotImplementedError


@dataclass(frozen=True)
class AnyValue(ValueSpec):
    """``"*"``: every value the space allows, with the rest of the point fixed."""

    text: str
    source: str

    def values(self, env: Mapping[str, Value], seed: int) -> frozenset[int] | None:
        return None


@dataclass(frozen=True)
class ListValues(ValueSpec):
    """A constant, an expression or a list of them: a fixed set per point."""

    text: str
    source: str
    items: tuple[SpecExpr, ...]

    @property
    def names(self) -> frozenset[str]:
        return frozenset().union(*(i.names for i in self.items))

    def values(self, env: Mapping[str, Value], seed: int) -> frozenset[int] | None:
        return frozenset(i.evaluate_int(env) for i in self.items)


@dataclass(frozen=True)
class RangeValues(ValueSpec):
    """``lo:hi`` (step +1), ``lo:hi:+k`` or ``lo:hi:*k``, bounds inclusive."""

    text: str
    source: str
    lo: SpecExpr
    hi: SpecExpr
    op: Literal["+", "*"]
    step: SpecExpr

    @property
    def names(self) -> frozenset[str]:
        return self.lo.names | self.hi.names | self.step.names

    def values(self, env: Mapping[str, Value], seed: int) -> frozenset[int] | None:
        return frozenset(self.sequence(env))

    def sequence(self, env: Mapping[str, Value]) -> list[int]:
        lo, hi, step = (e.evaluate_int(env) for e in (self.lo, self.hi, self.step))
        if self.op == "+":
            if step <= 0:
                raise InputError(f"additive step must be positive, got {step}", source=self.source)
            count = (hi - lo) // step + 1 if hi >= lo else 0
            if count > MAX_VALUES:
                raise InputError(
                    f"range {self.text!r} holds {count:,} values here; at most {MAX_VALUES:,} "
                    "are allowed (use a multiplicative step such as *2, or sample())",
                    source=self.source,
                )
            return list(range(lo, hi + 1, step))
        if step < 2 or lo < 1:
            raise InputError(
                f"multiplicative range needs start >= 1 and factor >= 2, got {lo} and {step}",
                source=self.source,
            )
        out: list[int] = []
        v = lo
        while v <= hi:
            out.append(v)
            v *= step
        return out


@dataclass(frozen=True)
class SampleValues(ValueSpec):
    """``sample(N, range)``: N distinct values of the range, drawn reproducibly.

    The draw depends only on the spec's seed, where the value set sits in the spec and
    the values of the names the range reads, so a step revisited from the same point
    draws the same sample (which keeps the early stop exact).
    """

    text: str
    source: str
    count: SpecExpr
    range: RangeValues

    @property
    def names(self) -> frozenset[str]:
        return self.count.names | self.range.names

    def values(self, env: Mapping[str, Value], seed: int) -> frozenset[int] | None:
        population = self.range.sequence(env)
        n = self.count.evaluate_int(env)
        if n < 0:
            raise InputError(f"sample size must not be negative, got {n}", source=self.source)
        if n >= len(population):
            return frozenset(population)
        key = ",".join(f"{k}={env[k]}" for k in sorted(self.names) if k in env)
        rng = random.Random(f"{seed}|{self.source}|{key}")
        return frozenset(rng.sample(population, n))


def parse_values(raw: Any, source: str) -> ValueSpec:
    """Read one ``tune:`` entry (see docs/specs.md for the forms)."""
    if isinstance(raw, bool) or raw is None:
        raise InputError(f"expected a value, range or expression, got {raw!r}", source=source)
    if isinstance(raw, list):
        if not raw:
            raise InputError("an empty list of values tunes nothing", source=source)
        if len(raw) > MAX_LIST:
            raise InputError(
                f"a list of {len(raw):,} values; at most {MAX_LIST:,} are allowed "
                "(use a range such as 1:1024:*2)",
                source=source,
            )
        items = tuple(_scalar_expr(v, source) for v in raw)
        return ListValues(_short(str(raw), 200), source, items)
    if isinstance(raw, int | float):
        return ListValues(str(raw), source, (SpecExpr(str(raw), source),))
    if not isinstance(raw, str):
        raise InputError(f"expected a value, range or expression, got {raw!r}", source=source)
    text = raw.strip()
    if not text:
        raise InputError("empty value: give a value, a range or an expression", source=source)
    if text in ("*", "any"):
        return AnyValue(text, source)
    m = _SAMPLE.match(text)
    if m:
        inner = parse_values(m.group("range").strip(), source)
        if not isinstance(inner, RangeValues):
            raise InputError(
                f"sample() draws from a range such as 1:NX:*2, got {m.group('range').strip()!r}",
                source=source,
            )
        return SampleValues(text, source, SpecExpr(m.group("n").strip(), source), inner)
    if text.startswith("sample"):
        raise InputError(
            f"malformed sample {text!r}; write sample(N, lo:hi:*2)",
            source=source,
        )
    if ":" in text:
        parts = [p.strip() for p in text.split(":")]
        if len(parts) not in (2, 3) or not all(parts):
            raise InputError(
                f"malformed range {text!r}; write lo:hi, lo:hi:+step or lo:hi:*factor",
                source=source,
            )
        op: Literal["+", "*"] = "+"
        step = "1"
        if len(parts) == 3:
            sm = _STEP_OP.match(parts[2])
            if not sm:
                raise InputError(
                    f"range step {parts[2]!r} must start with + or * (e.g. *2, +1)",
                    source=source,
                )
            op = "*" if sm.group("op") == "*" else "+"
            step = sm.group("step").strip()
        return RangeValues(
            text,
            source,
            SpecExpr(parts[0], source),
            SpecExpr(parts[1], source),
            op,
            SpecExpr(step, source),
        )
    return ListValues(text, source, (SpecExpr(text, source),))


def _scalar_expr(raw: Any, source: str) -> SpecExpr:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise InputError(f"expected a number or an expression, got {raw!r}", source=source)
    return SpecExpr(str(raw), source)


# ---------------------------------------------------------------------------------
# The spec


@dataclass(frozen=True)
class Step:
    index: int
    label: str
    tune: Mapping[str, ValueSpec]
    keep_product: tuple[SpecExpr, ...] = ()
    where: tuple[SpecExpr, ...] = ()
    rounds: Rounds = "all"
    #: parameters the step is for: a kernel without one of them drops the step, though
    #: it may have others the step tunes (the rim step tunes VX only with RIM)
    needs: tuple[str, ...] = ()

    def active(self, round_index: int) -> bool:
        if self.rounds == "first":
            return round_index == 0
        if self.rounds == "later":
            return round_index > 0
        return True


@dataclass(frozen=True)
class Converge:
    """More rounds for a search still gaining: after the ``1 + repeat`` rounds, up to
    ``rounds`` more, each only while the round before it made the best time at least
    ``gain`` (a fraction: 0.02 is 2 %) faster."""

    gain: float
    rounds: int


@dataclass(frozen=True)
class HeuristicSpec:
    """A parsed spec, not yet checked against a kernel (see :meth:`bind`)."""

    name: str
    source: str
    steps: tuple[Step, ...]
    doc: str = ""
    repeat: int = 2
    seed: int = 0
    optional: Mapping[str, int] = field(default_factory=dict)
    start: Mapping[str, SpecExpr] = field(default_factory=dict)
    where: tuple[SpecExpr, ...] = ()
    budget: Budget | None = None
    converge: Converge | None = None

    @property
    def rounds(self) -> int:
        """Passes over the steps: the first plus ``repeat`` more (seed 001's n)."""
        return 1 + self.repeat

    def bind(self, parameters: Sequence[str], sizes: Mapping[str, int]) -> BoundSpec:
        """Check every name against a kernel; drop optional parameters it lacks.

        An absent optional parameter reads as its neutral value in every expression and
        is not tuned; a step left with nothing to tune is dropped.
        """
        params = list(parameters)
        pset = set(params)
        clash = pset & (set(sizes) | {DIMS})
        if clash:
            what = "the problem's dimensions" if DIMS in clash else "a problem size"
            raise InputError(f"{sorted(clash)[0]!r} is both a parameter and {what}")
        absent = {k: v for k, v in self.optional.items() if k not in pset}
        constants: dict[str, int] = dict(sizes)
        constants[DIMS] = len(sizes)
        constants.update(absent)
        # an absent optional parameter reads as its given value, as best.PARAM too
        constants.update({best_name(k): v for k, v in absent.items()})
        names = _Names(params, absent, sizes)
        start = self._bound_start(names, constants)
        point_names = set(constants) | pset | {best_name(p) for p in params}
        steps: list[Step] = []
        dropped: list[str] = []
        for step in self.steps:
            bound = self._bound_step(step, names, constants, point_names)
            if bound is None:
                dropped.append(step.label)
            else:
                steps.append(bound)
        if not steps:
            raise InputError(
                "none of the spec's steps tunes a parameter this kernel has "
                f"(kernel parameters: {names.tunable})",
                source=self.source,
            )
        return BoundSpec(
            spec=self,
            parameters=tuple(params),
            constants=constants,
            start=start,
            steps=tuple(steps),
            dropped_steps=tuple(dropped),
            absent=absent,
        )

    def _bound_start(self, names: _Names, constants: Mapping[str, int]) -> dict[str, SpecExpr]:
        """The start values the kernel takes (checked, and evaluated once: their mistakes
        show now); ``where`` checked too."""
        start_env_names = set(constants)
        start: dict[str, SpecExpr] = {}
        for name, e in self.start.items():
            names.check_param(name, e.source)
            names.check_expr(e, start_env_names)
            if name in names.absent:
                continue
            start[name] = e
            start_env_names.add(name)
        for e in self.where:
            names.check_expr(e, set(constants) | names.pset)
        start_env: dict[str, Value] = dict(constants)
        for name, e in start.items():
            start_env[name] = _constant(e, start_env, "start value")
        return start

    def _bound_step(
        self, step: Step, names: _Names, constants: Mapping[str, int], point_names: set[str]
    ) -> Step | None:
        """``step`` checked against the kernel, without its absent parameters; None where
        nothing is left to tune or it needs a parameter the kernel lacks."""
        absent = names.absent
        tune: dict[str, ValueSpec] = {}
        for name, values in step.tune.items():
            names.check_param(name, values.source)
            if name in absent:
                continue  # may read sizes the kernel lacks too (NZ of a 2D kernel)
            for e in _exprs_of(values):
                names.check_expr(e, point_names, values.text)
            _try_constant(values, constants, self.seed)
            tune[name] = values
        for e in (*step.keep_product, *step.where):
            names.check_expr(e, point_names)
        for name in step.needs:
            names.check_param(name, f"{self.source}: steps[{step.index}].needs")
        if not tune or any(name in absent for name in step.needs):
            return None
        return Step(
            step.index,
            step.label,
            tune,
            step.keep_product,
            step.where,
            step.rounds,
            step.needs,
        )


class _Names:
    """The names a spec bound to one kernel may use, and the errors naming the others."""

    def __init__(
        self, params: Sequence[str], absent: Mapping[str, int], sizes: Mapping[str, int]
    ) -> None:
        self.pset = set(params)
        self.absent = absent
        self.sizes = sizes
        self.tunable = ", ".join(params) or "(none)"

    def check_param(self, name: str, source: str) -> None:
        if name not in self.pset and name not in self.absent:
            raise InputError(
                f"unknown parameter {name!r}; the kernel's parameters are {self.tunable}",
                source=source,
                hint=f"list it under optional: (e.g. optional: {{{name}: 1}}) if the spec "
                "should also work for kernels without it",
            )

    def check_expr(self, e: SpecExpr, known: set[str], whole: str = "") -> None:
        if e.names <= known:
            return
        try:
            e.expr.check_names(known)
        except ExpressionError:
            unknown = sorted(e.names - known)[0]
            shown = unknown
            if unknown.startswith(BEST_PREFIX):
                shown = "best." + unknown[len(BEST_PREFIX) :]
            raise InputError(
                f"unknown name {shown!r} in {_short(whole or e.text)!r}; expressions may "
                "use the "
                f"parameters ({self.tunable}), best.PARAM, the problem sizes "
                f"({', '.join(self.sizes) or 'none'}) and {DIMS} (how many there are)",
                source=e.source,
            ) from None


@dataclass(frozen=True)
class BoundSpec:
    """A spec checked against one kernel: what the engine runs."""

    spec: HeuristicSpec
    parameters: tuple[str, ...]
    constants: Mapping[str, int]  # problem sizes, DIMS and absent optional parameters
    start: Mapping[str, SpecExpr]
    steps: tuple[Step, ...]
    dropped_steps: tuple[str, ...] = ()
    absent: Mapping[str, int] = field(default_factory=dict)

    def start_values(self) -> dict[str, int]:
        env: dict[str, Value] = dict(self.constants)
        out: dict[str, int] = {}
        for name, e in self.start.items():
            out[name] = e.evaluate_int(env)
            env[name] = out[name]
        return out

    def steps_for_round(self, round_index: int) -> list[Step]:
        return [s for s in self.steps if s.active(round_index)]


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _constant(e: SpecExpr, env: Mapping[str, Value], what: str) -> int:
    """Evaluate an expression that reads only constants, naming it if that fails."""
    try:
        return e.evaluate_int(env)
    except GtuneError:
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise InputError(
            f"{what} {_short(e.text)!r} cannot be evaluated: {exc}", source=e.source
        ) from None


def _try_constant(values: ValueSpec, constants: Mapping[str, int], seed: int) -> None:
    """Evaluate a value set that reads only constants (problem sizes, absent optional
    parameters) now, so its mistakes show before anything is measured."""
    if not values.names <= set(constants):
        return
    try:
        values.values(dict(constants), seed)
    except GtuneError:
        raise
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise InputError(
            f"values {_short(values.text)!r} cannot be evaluated: {exc}", source=values.source
        ) from None


def _exprs_of(values: ValueSpec) -> list[SpecExpr]:
    if isinstance(values, ListValues):
        return list(values.items)
    if isinstance(values, RangeValues):
        return [values.lo, values.hi, values.step]
    if isinstance(values, SampleValues):
        return [values.count, *_exprs_of(values.range)]
    return []


# ---------------------------------------------------------------------------------
# Reading


def parse_spec(raw: Any, source: str) -> HeuristicSpec:
    """Validate a spec mapping; every error names ``source`` and the key."""

    def at(key: str) -> str:
        return f"{source}: {key}"

    if not isinstance(raw, dict):
        raise InputError("a heuristic spec must be a mapping with name: and steps:", source=source)
    _reject_unknown(raw, _TOP_KEYS, source, "")
    if "steps" not in raw:
        raise InputError("missing required key", source=at("steps"))
    name = raw.get("name", Path(source).stem)
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"must be a non-empty string, got {name!r}", source=at("name"))
    doc = raw.get("doc", "")
    if not isinstance(doc, str):
        raise InputError("must be a string", source=at("doc"))
    repeat = _int(raw.get("repeat", 2), at("repeat"), minimum=0)
    if repeat > MAX_REPEAT:
        raise InputError(f"must be at most {MAX_REPEAT}, got {repeat}", source=at("repeat"))
    seed = _int(raw.get("seed", 0), at("seed"), minimum=0)
    converge = _parse_converge(raw["converge"], source) if raw.get("converge") is not None else None

    optional = _parse_optional(raw.get("optional") or {}, source)
    start = _parse_start(raw.get("start") or {}, source)
    where = _expr_list(raw.get("where"), at("where"), forbid_best=True)
    budget = _parse_budget(raw["budget"], source) if raw.get("budget") is not None else None
    steps_raw = raw["steps"]
    if not isinstance(steps_raw, list) or not steps_raw:
        raise InputError("must be a non-empty list of steps", source=at("steps"))
    steps = [_parse_step(i, sraw, source) for i, sraw in enumerate(steps_raw)]
    return HeuristicSpec(
        name=name.strip(),
        source=source,
        steps=tuple(steps),
        doc=doc.strip(),
        repeat=repeat,
        seed=seed,
        optional=optional,
        start=start,
        where=where,
        budget=budget,
        converge=converge,
    )


def _parse_converge(craw: Any, source: str) -> Converge:
    def at(key: str) -> str:
        return f"{source}: converge.{key}"

    if not isinstance(craw, dict) or "gain" not in craw or "rounds" not in craw:
        raise InputError(
            "must be a mapping such as {gain: 0.02, rounds: 2}", source=f"{source}: converge"
        )
    _reject_unknown(craw, _CONVERGE_KEYS, source, "converge.")
    gain = craw["gain"]
    if isinstance(gain, bool) or not isinstance(gain, int | float) or not 0 < gain < math.inf:
        raise InputError(
            f"must be a positive fraction (0.02 is 2 %), got {gain!r}", source=at("gain")
        )
    rounds = _int(craw["rounds"], at("rounds"), minimum=1)
    if rounds > MAX_REPEAT:
        raise InputError(f"must be at most {MAX_REPEAT}, got {rounds}", source=at("rounds"))
    return Converge(gain=float(gain), rounds=rounds)


def _parse_optional(optional_raw: Any, source: str) -> dict[str, int]:
    at = f"{source}: optional"
    if isinstance(optional_raw, list):
        for i, k in enumerate(optional_raw):
            _identifier(k, f"{at}[{i}]")
        optional_raw = {k: 1 for k in optional_raw}
    if not isinstance(optional_raw, dict):
        raise InputError(
            "must map parameter names to the value they stand for when the kernel lacks "
            "them, e.g. {BY: 1}",
            source=at,
        )
    optional: dict[str, int] = {}
    for k, v in optional_raw.items():
        _identifier(k, f"{at}.{k}")
        optional[str(k)] = _int(v, f"{at}.{k}")
    return optional


def _parse_start(start_raw: Any, source: str) -> dict[str, SpecExpr]:
    if not isinstance(start_raw, dict):
        raise InputError("must map parameter names to values", source=f"{source}: start")
    start: dict[str, SpecExpr] = {}
    for k, v in start_raw.items():
        src = f"{source}: start.{k}"
        _identifier(k, src)
        if isinstance(v, str) and _BEST.search(v):
            raise InputError(
                "start values cannot refer to best. (nothing is measured yet)", source=src
            )
        start[str(k)] = _scalar_expr(v, src)
    return start


def _parse_budget(braw: Any, source: str) -> Budget:
    def at(key: str) -> str:
        return f"{source}: {key}"

    if not isinstance(braw, dict):
        raise InputError(
            "must be a mapping such as {evaluations: 500, seconds: 600}", source=at("budget")
        )
    _reject_unknown(braw, _BUDGET_KEYS, source, "budget.")
    return Budget(
        evaluations=_int(braw["evaluations"], at("budget.evaluations"), minimum=1)
        if braw.get("evaluations") is not None
        else None,
        seconds=_positive(braw.get("seconds"), at("budget.seconds")),
        wall_seconds=_positive(braw.get("wall_seconds"), at("budget.wall_seconds")),
    )


def _parse_step(i: int, sraw: Any, source: str) -> Step:
    key = f"steps[{i}]"

    def at(sub: str) -> str:
        return f"{source}: {key}{sub}"

    if not isinstance(sraw, dict):
        raise InputError("each step must be a mapping with tune:", source=at(""))
    _reject_unknown(sraw, _STEP_KEYS, source, f"{key}.")
    tune_raw = sraw.get("tune")
    if not isinstance(tune_raw, dict) or not tune_raw:
        raise InputError(
            "must map the parameters tuned in this step to their values", source=at(".tune")
        )
    tune: dict[str, ValueSpec] = {}
    for pname, praw in tune_raw.items():
        psrc = at(f".tune.{pname}")
        _identifier(pname, psrc)
        tune[str(pname)] = parse_values(praw, psrc)
    label = sraw.get("name", f"step {i + 1}")
    if not isinstance(label, str):
        raise InputError("must be a string", source=at(".name"))
    rounds = sraw.get("rounds", "all")
    if rounds not in _ROUNDS:
        raise InputError(
            f"must be one of {', '.join(_ROUNDS)}, got {rounds!r}", source=at(".rounds")
        )
    needs_raw = sraw.get("needs", [])
    if not isinstance(needs_raw, list):
        raise InputError(
            "must be a list of parameter names (the step is dropped for a kernel "
            "without one of them)",
            source=at(".needs"),
        )
    for n, pname in enumerate(needs_raw):
        _identifier(pname, at(f".needs[{n}]"))
    return Step(
        index=i,
        label=label,
        tune=tune,
        keep_product=_expr_list(sraw.get("keep_product"), at(".keep_product")),
        where=_expr_list(sraw.get("where"), at(".where")),
        rounds=rounds,
        needs=tuple(str(n) for n in needs_raw),
    )


def load_spec(name_or_path: str | Path) -> HeuristicSpec:
    """A shipped spec by name (``hybrid``) or a spec file by path."""
    text = str(name_or_path)
    shipped = shipped_specs()
    if text in shipped and not Path(text).exists():
        resource = _specs_root().joinpath(shipped[text])
        return _parse_text(resource.read_text(), f"{text} (shipped spec {shipped[text]})")
    if not text.strip():
        raise InputError(
            f"empty spec name; shipped specs: {', '.join(shipped)}", source=text or "spec"
        )
    path = Path(text)
    if not path.exists():
        raise InputError(
            f"no such spec file, and not a shipped spec; shipped specs: {', '.join(shipped)}",
            source=text,
        )
    return _parse_text(read_text(path, limit=MAX_YAML_BYTES, what="spec file"), text)


def shipped_specs() -> dict[str, str]:
    """Shipped spec names (and their short aliases) mapped to their file names."""
    root = _specs_root()
    out: dict[str, str] = {}
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            out[entry.name[: -len(".yaml")]] = entry.name
    for alias, target in SPEC_ALIASES.items():
        if target in out:
            out[alias] = out[target]
    return out


def _specs_root() -> Traversable:
    return resources.files("gtune").joinpath("data", "specs")


SPEC_ALIASES = {
    "dims": "group-by-dimension",
    "opts": "group-by-optimization",
}


def _parse_text(text: str, source: str) -> HeuristicSpec:
    return parse_spec(load_yaml(text, source), source)


def _reject_unknown(raw: Mapping[Any, Any], allowed: Sequence[str], source: str, key: str) -> None:
    for k in raw:
        if k not in allowed:
            raise InputError(
                f"unknown key; allowed: {', '.join(allowed)}", source=f"{source}: {key}{k}"
            )


def _identifier(name: Any, source: str) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"parameter names are identifiers, got {name!r}", source=source)


def _int(value: Any, source: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be an integer, got {value!r}", source=source)
    if minimum is not None and value < minimum:
        raise InputError(f"must be at least {minimum}, got {value}", source=source)
    return value


def _positive(value: Any, source: str) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(f"must be a positive number of seconds, got {value!r}", source=source)
    return float(value)


def _expr_list(raw: Any, source: str, forbid_best: bool = False) -> tuple[SpecExpr, ...]:
    if raw is None:
        return ()
    items = raw if isinstance(raw, list) else [raw]
    if len(items) > MAX_LIST:
        raise InputError(f"{len(items):,} items; at most {MAX_LIST:,} are allowed", source=source)
    out: list[SpecExpr] = []
    for i, item in enumerate(items):
        src = f"{source}[{i}]"
        if forbid_best and isinstance(item, str) and _BEST.search(item):
            raise InputError("spec-wide constraints cannot refer to best.", source=src)
        out.append(_scalar_expr(item, src))
    return tuple(out)
