"""A small, safe expression language for descriptions, specs and constraints.

Expressions are parsed with :mod:`ast` and evaluated by walking a whitelist of node
types -- never with ``eval``. The language: integer and float literals, names
(parameters, problem sizes, device limits), ``+ - * / // % **``, unary minus,
comparisons (chains allowed), ``and``/``or``/``not``, ``a if c else b`` and the
functions ``min``, ``max``, ``log2``, ``abs``, ``ceil``, ``floor``.

One semantics, three interpreters. Every operator is defined once, in the tables
:data:`BINARY`, :data:`COMPARE` and :data:`FUNCTIONS` below, each entry holding its
scalar meaning (:meth:`Expr.evaluate`), its element-wise meaning over numpy columns
(:mod:`gtune.space.vector`) and its MiniZinc spelling (:meth:`Expr.to_minizinc`):

- ``/`` between two integers is integer division and ``%`` its remainder, both
  truncating toward zero exactly as MiniZinc's ``div``/``mod`` (and C) do, so a
  constraint means the same in Python and in MiniZinc: ``NX/WX`` is the number of
  work-groups, not a fraction. ``//`` is the same integer division.
- With a float operand, ``/`` is true division; ``//`` and ``%`` still truncate toward
  zero (``-7.0 // 2 == -3.0``, ``-7.0 % 2 == -1.0``, C's ``fmod``), so an integral float
  behaves like the integer it equals.
- ``**`` with integers is exact; a negative integer exponent is an error (MiniZinc has no
  fractional integers). ``log2`` of an integer is the floor of the logarithm.
- Every value is a finite number of magnitude at most ``2**53`` (:data:`MAX_MAGNITUDE`):
  integers stay exact in 64-bit columns and floats; a larger intermediate value, a
  division or remainder by zero, or a logarithm of a non-positive number is an
  :class:`~gtune.exceptions.ExpressionError` naming the expression.
- ``and``/``or``/``if`` evaluate only what they need: ``WX > 0 and NX / WX > 2`` is
  defined where ``WX == 0``.
- MiniZinc constraints are integer: names are integers there and float literals are
  refused. A number used as a condition means ``!= 0``.

Expressions are bounded in text length, node count and nesting depth so a hostile file
cannot exhaust time or memory.
"""

from __future__ import annotations

import ast
import math
import operator
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gtune.exceptions import ExpressionError

# CPython 3.11 converts a parse tree to ``ast`` objects with a recursion counter in state
# that every thread shares: a parse can fail with "SystemError: AST constructor recursion
# depth mismatch" when another thread parses meanwhile (CPython issue 106905). gtune's own
# parses take one lock; a parse elsewhere in the process (a library's, a garbage
# collector's finalizer) can still interleave, as CI saw with the lock held, so the
# spurious error is parsed again: the parse itself is deterministic.
_PARSE_LOCK = threading.Lock()
_PARSE_TRIES = 3


def parse_ast(text: str) -> ast.Expression:
    """``ast.parse(text, mode="eval")``, one gtune parse at a time across threads, again
    after CPython 3.11's spurious recursion-depth mismatch."""
    for attempt in range(_PARSE_TRIES):
        try:
            with _PARSE_LOCK:
                return ast.parse(text, mode="eval")
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == _PARSE_TRIES - 1:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


Number = int | float
Value = int | float | bool
Operand = Any  # a numpy array or a Python scalar (numpy's typing is too loose to help)
Kind = Literal["int", "bool"]

MAX_MAGNITUDE = 2**53
"""Largest magnitude any value may take (exact in float64 and int64 alike)."""
MAX_TEXT = 10_000
"""Longest expression text accepted (characters)."""
MAX_NODES = 5_000
"""Most syntax nodes in one expression."""
MAX_DEPTH = 100
"""Deepest nesting of one expression."""


class Undefined(Exception):
    """An operation with no value (division by zero, overflow, ...); carries the reason."""


# -- numbers, shared by both interpreters ---------------------------------------------


def _bounded(value: Value) -> Value:
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise Undefined("a value is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise Undefined("a value exceeds 2**53 in magnitude")
    return value


def _is_int(value: Operand) -> bool:
    if isinstance(value, bool | int | np.integer | np.bool_):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "iub"


def _numeric(value: Operand) -> Operand:
    """Booleans as int64 (numpy refuses arithmetic on bool arrays)."""
    arr = np.asarray(value)
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    return arr


def _check_columns(result: Operand, live: Operand, bad: Operand, reason: str) -> Operand:
    """Raise when an undefined element lies in a row that is actually evaluated."""
    if np.any(np.logical_and(bad, live)):
        raise Undefined(reason)
    return result


def _magnitude(x: Operand) -> int:
    """The largest magnitude in an integer column (0 when empty), exactly."""
    arr = np.asarray(x)
    if arr.size == 0:
        return 0
    return max(abs(int(arr.min())), abs(int(arr.max())))


def _within_bounds(r: npt.NDArray[Any]) -> bool:
    """Whether every element of ``r`` is a finite number of magnitude at most
    :data:`MAX_MAGNITUDE`: two reductions, no temporary columns (NaN makes both
    ends NaN, so a column holding one is not within bounds)."""
    if r.size == 0:
        return True
    lo, hi = r.min(), r.max()
    if r.dtype.kind == "f":
        return bool(lo >= -MAX_MAGNITUDE and hi <= MAX_MAGNITUDE)
    return int(lo) >= -MAX_MAGNITUDE and int(hi) <= MAX_MAGNITUDE


def _vector_bounds(result: Operand, live: Operand) -> Operand:
    r = np.asarray(result)
    if _within_bounds(r):  # the usual case: nothing to look for row by row
        return result
    if r.dtype.kind == "f":
        _check_columns(r, live, ~np.isfinite(r), "a value is not a finite number")
        with np.errstate(invalid="ignore"):
            big = np.abs(r) > MAX_MAGNITUDE
    else:
        big = np.abs(r) > MAX_MAGNITUDE
    return _check_columns(result, live, big, "a value exceeds 2**53 in magnitude")


def _safe_divisor(b: Operand, live: Operand, what: str) -> Operand:
    arr = np.asarray(b)
    if np.count_nonzero(arr) == arr.size:  # no zero anywhere (the usual case)
        return b
    zero = arr == 0
    _check_columns(b, live, zero, f"{what} by zero")
    return np.where(zero, 1, b)


# -- the operators: scalar and vector meaning, MiniZinc spelling ------------------------


def _s_add(a: Value, b: Value) -> Value:
    return _bounded(a + b)


def _s_sub(a: Value, b: Value) -> Value:
    return _bounded(a - b)


def _s_mul(a: Value, b: Value) -> Value:
    return _bounded(a * b)


def _trunc_int(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _s_div(a: Value, b: Value) -> Value:
    if b == 0:
        raise Undefined("division by zero")
    if _is_int(a) and _is_int(b):
        return _trunc_int(int(a), int(b))
    return _bounded(a / b)


def _s_floordiv(a: Value, b: Value) -> Value:
    if b == 0:
        raise Undefined("division by zero")
    if _is_int(a) and _is_int(b):
        return _trunc_int(int(a), int(b))
    rem = math.fmod(a, b)
    return _bounded(float(round((a - rem) / b)))


def _s_mod(a: Value, b: Value) -> Value:
    if b == 0:
        raise Undefined("modulo by zero")
    if _is_int(a) and _is_int(b):
        return int(a) - int(b) * _trunc_int(int(a), int(b))
    return _bounded(math.fmod(a, b))


def _s_pow(a: Value, b: Value) -> Value:
    if _is_int(a) and _is_int(b):
        base, exp = int(a), int(b)
        if exp < 0:
            raise Undefined("a negative integer exponent")
        if abs(base) >= 2 and exp * math.log2(abs(base)) > 54:
            raise Undefined("a value exceeds 2**53 in magnitude")
        return _bounded(base**exp)
    try:
        result = float(a) ** float(b)
    except (OverflowError, ZeroDivisionError):
        raise Undefined("a power is not a finite number") from None
    if isinstance(result, complex):
        raise Undefined("a power is not a real number")
    return _bounded(result)


def _v_add(a: Operand, b: Operand, live: Operand) -> Operand:
    return _vector_bounds(np.add(_numeric(a), _numeric(b)), live)


def _v_sub(a: Operand, b: Operand, live: Operand) -> Operand:
    return _vector_bounds(np.subtract(_numeric(a), _numeric(b)), live)


def _v_mul(a: Operand, b: Operand, live: Operand) -> Operand:
    a, b = _numeric(a), _numeric(b)
    if _is_int(a) and _is_int(b):
        if _magnitude(a) * _magnitude(b) <= MAX_MAGNITUDE:
            return np.multiply(a, b)  # no product can leave the bounds
        approx = np.abs(np.multiply(a.astype(np.float64), b))
        huge = approx > 2.0**60
        _check_columns(a, live, huge, "a value exceeds 2**53 in magnitude")
        b = np.where(huge, 0, b)
    return _vector_bounds(np.multiply(a, b), live)


def _v_trunc_int(a: Operand, b: Operand) -> Operand:
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.size and b_arr.size and a_arr.min() >= 0 and b_arr.min() > 0:
        return np.floor_divide(a, b)  # no negative operand: flooring is truncating
    return np.sign(a) * np.sign(b) * np.floor_divide(np.abs(a), np.abs(b))


def _v_div(a: Operand, b: Operand, live: Operand) -> Operand:
    a, b = _numeric(a), _numeric(b)
    b = _safe_divisor(b, live, "division")
    if _is_int(a) and _is_int(b):
        return _v_trunc_int(a, b)
    return _vector_bounds(np.true_divide(a, b), live)


def _v_floordiv(a: Operand, b: Operand, live: Operand) -> Operand:
    a, b = _numeric(a), _numeric(b)
    b = _safe_divisor(b, live, "division")
    if _is_int(a) and _is_int(b):
        return _v_trunc_int(a, b)
    rem = np.fmod(a, b)
    return _vector_bounds(np.round((a - rem) / b), live)


def _v_mod(a: Operand, b: Operand, live: Operand) -> Operand:
    a, b = _numeric(a), _numeric(b)
    b = _safe_divisor(b, live, "modulo")
    if _is_int(a) and _is_int(b):
        return np.subtract(a, np.multiply(b, _v_trunc_int(a, b)))
    return _vector_bounds(np.fmod(a, b), live)


def _v_pow(a: Operand, b: Operand, live: Operand) -> Operand:
    a, b = _numeric(a), _numeric(b)
    if _is_int(a) and _is_int(b):
        _check_columns(a, live, b < 0, "a negative integer exponent")
        b = np.where(b < 0, 0, b)
        approx = np.power(np.abs(a).astype(np.float64), b)
        huge = approx > 2.0**60
        _check_columns(a, live, huge, "a value exceeds 2**53 in magnitude")
        return _vector_bounds(np.power(a, np.where(huge, 0, b)), live)
    return _vector_bounds(np.power(a.astype(np.float64), b), live)


@dataclass(frozen=True)
class BinaryOp:
    """An arithmetic operator: its spelling in Python and MiniZinc and its meaning."""

    symbol: str
    minizinc: str
    scalar: Callable[[Value, Value], Value]
    vector: Callable[[Operand, Operand, Operand], Operand]


@dataclass(frozen=True)
class CompareOp:
    symbol: str
    minizinc: str
    apply: Callable[[Operand, Operand], Operand]  # the same for scalars and columns


@dataclass(frozen=True)
class Function:
    """A function: its arity, its meaning on scalars and columns, its MiniZinc spelling
    (``None``: not available in constraints)."""

    name: str
    min_args: int
    max_args: int | None
    scalar: Callable[[Sequence[Value]], Value]
    vector: Callable[[Sequence[Operand], Operand], Operand]
    minizinc: Callable[[Sequence[str]], str] | None


BINARY: dict[type[ast.operator], BinaryOp] = {
    ast.Add: BinaryOp("+", "({a} + {b})", _s_add, _v_add),
    ast.Sub: BinaryOp("-", "({a} - {b})", _s_sub, _v_sub),
    ast.Mult: BinaryOp("*", "({a} * {b})", _s_mul, _v_mul),
    ast.Div: BinaryOp("/", "({a} div {b})", _s_div, _v_div),
    ast.FloorDiv: BinaryOp("//", "({a} div {b})", _s_floordiv, _v_floordiv),
    ast.Mod: BinaryOp("%", "({a} mod {b})", _s_mod, _v_mod),
    ast.Pow: BinaryOp("**", "pow({a}, {b})", _s_pow, _v_pow),
}

COMPARE: dict[type[ast.cmpop], CompareOp] = {
    ast.Eq: CompareOp("==", "==", operator.eq),
    ast.NotEq: CompareOp("!=", "!=", operator.ne),
    ast.Lt: CompareOp("<", "<", operator.lt),
    ast.LtE: CompareOp("<=", "<=", operator.le),
    ast.Gt: CompareOp(">", ">", operator.gt),
    ast.GtE: CompareOp(">=", ">=", operator.ge),
}


def _s_log2(args: Sequence[Value]) -> Value:
    x = args[0]
    if x <= 0:
        raise Undefined("log2 of a number that is not positive")
    if _is_int(x):
        return int(x).bit_length() - 1
    return math.log2(x)


def _v_log2(args: Sequence[Operand], live: Operand) -> Operand:
    x = _numeric(args[0])
    bad = x <= 0
    _check_columns(x, live, bad, "log2 of a number that is not positive")
    safe = np.where(bad, 1, x)
    if not _is_int(safe):
        return np.log2(safe)
    k = np.floor(np.log2(safe.astype(np.float64))).astype(np.int64)
    k = np.where(np.left_shift(np.int64(1), k) > safe, k - 1, k)  # float rounding near 2**n
    return np.where(np.left_shift(np.int64(1), k + 1) <= safe, k + 1, k)


def _s_round(fn: Callable[[float], int]) -> Callable[[Sequence[Value]], Value]:
    def apply(args: Sequence[Value]) -> Value:
        x = args[0]
        return int(x) if _is_int(x) else fn(x)

    return apply


def _v_round(fn: Callable[[Operand], Operand]) -> Callable[[Sequence[Operand], Operand], Operand]:
    def apply(args: Sequence[Operand], live: Operand) -> Operand:
        x = _numeric(args[0])
        return x if _is_int(x) else np.asarray(fn(x)).astype(np.int64)

    return apply


def _v_fold(fn: Callable[[Operand, Operand], Operand]) -> Callable[..., Operand]:
    def apply(args: Sequence[Operand], live: Operand) -> Operand:
        result = _numeric(args[0])
        for a in args[1:]:
            result = fn(result, _numeric(a))
        return result

    return apply


def _s_fold(fn: Callable[[Sequence[Value]], Value]) -> Callable[[Sequence[Value]], Value]:
    """``min``/``max`` of scalars, promoted as numpy promotes columns: float if any is."""

    def apply(args: Sequence[Value]) -> Value:
        result = fn(args)
        return float(result) if any(not _is_int(a) for a in args) else result

    return apply


FUNCTIONS: dict[str, Function] = {
    "min": Function(
        "min", 2, None, _s_fold(min), _v_fold(np.minimum), lambda a: f"min([{', '.join(a)}])"
    ),
    "max": Function(
        "max", 2, None, _s_fold(max), _v_fold(np.maximum), lambda a: f"max([{', '.join(a)}])"
    ),
    "abs": Function(
        "abs",
        1,
        1,
        lambda a: abs(a[0]),
        lambda a, _: np.abs(_numeric(a[0])),
        lambda a: f"abs({a[0]})",
    ),
    "log2": Function("log2", 1, 1, _s_log2, _v_log2, None),
    "ceil": Function("ceil", 1, 1, _s_round(math.ceil), _v_round(np.ceil), lambda a: a[0]),
    "floor": Function("floor", 1, 1, _s_round(math.floor), _v_round(np.floor), lambda a: a[0]),
}


# -- the expression -------------------------------------------------------------------


@dataclass(frozen=True)
class Expr:
    """A parsed expression; ``source`` names where it came from for error messages."""

    text: str
    source: str = ""
    _tree: ast.expr = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        text = str(self.text).strip()
        where = self.source or None
        if not text:
            raise ExpressionError("empty expression", source=where)
        if len(text) > MAX_TEXT:
            raise ExpressionError(
                f"expression of {len(text)} characters is too long (at most {MAX_TEXT}): "
                f"{text[:40]}...",
                source=where,
            )
        try:
            tree = parse_ast(text).body
        except SyntaxError as exc:
            raise ExpressionError(
                f"cannot parse expression {_short(text)!r}: {exc.msg}", source=where
            ) from None
        except (RecursionError, MemoryError, ValueError):
            raise ExpressionError(
                f"expression {_short(text)!r} is nested too deeply (at most {MAX_DEPTH} levels)",
                source=where,
            ) from None
        _check(tree, text, self.source)
        object.__setattr__(self, "_tree", tree)

    @property
    def tree(self) -> ast.expr:
        """The validated syntax tree (read-only by convention)."""
        return self._tree

    @cached_property
    def names(self) -> frozenset[str]:
        """Free names the expression reads (functions excluded)."""
        found: set[str] = set()
        for node in ast.walk(self._tree):
            if isinstance(node, ast.Name):
                found.add(node.id)
        for node in ast.walk(self._tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                found.discard(node.func.id)
        return frozenset(found)

    def check_names(self, known: set[str] | frozenset[str], what: str = "name") -> None:
        """Raise naming the first unknown name, and what names are allowed."""
        unknown = sorted(self.names - set(known))
        if unknown:
            raise ExpressionError(
                f"unknown {what} {unknown[0]!r} in {_short(self.text)!r}; "
                f"known: {', '.join(sorted(known))}",
                source=self.source or None,
            )

    def evaluate(self, env: Mapping[str, Value]) -> Value:
        try:
            return _eval(self._tree, env, self)
        except Undefined as exc:
            raise self.undefined(str(exc)) from None

    def evaluate_int(self, env: Mapping[str, Value]) -> int:
        value = self.evaluate(env)
        if isinstance(value, bool) or not float(value).is_integer():
            raise ExpressionError(
                f"expression {_short(self.text)!r} gave {value!r}, expected an integer",
                source=self.source or None,
            )
        return int(value)

    def to_minizinc(self, rename: Callable[[str], str] = lambda n: n) -> str:
        """The expression as MiniZinc text (integer semantics)."""
        return _mzn(self._tree, rename, self)[0]

    def to_minizinc_bool(self, rename: Callable[[str], str] = lambda n: n) -> str:
        """The expression as a MiniZinc constraint: a number ``x`` means ``x != 0``."""
        return _as_bool(_mzn(self._tree, rename, self))

    @cached_property
    def kind(self) -> Kind:
        """``bool`` or ``int``: the MiniZinc type of the expression (names are integers)."""
        return _mzn(self._tree, lambda n: n, self)[1]

    def check_defined(self, env: Mapping[str, Value]) -> None:
        """Raise if a part that depends only on ``env`` has no value.

        Evaluates every largest sub-expression whose names are all in ``env`` (problem
        sizes and device limits, say) and every divisor that is, so a division by a zero
        size or a constant too large is reported naming the expression -- before a
        solver would silently treat it as false. Parts under ``and``/``or``/``if`` that
        might not be evaluated are not checked.
        """
        constant = _constant_nodes(self._tree, set(env))
        stack: list[ast.expr] = [self._tree]
        while stack:
            node = stack.pop()
            try:
                if id(node) in constant and not isinstance(node, ast.Constant | ast.Name):
                    _eval(node, env, self)
                    continue
                if (
                    isinstance(node, ast.BinOp)
                    and isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod)
                    and id(node.right) in constant
                    and _eval(node.right, env, self) == 0
                ):
                    what = "modulo" if isinstance(node.op, ast.Mod) else "division"
                    raise Undefined(f"{what} by zero ({ast.unparse(node)})")
            except Undefined as exc:
                raise self.undefined(str(exc)) from None
            if isinstance(node, ast.BoolOp):
                stack.append(node.values[0])
            elif isinstance(node, ast.IfExp):
                stack.append(node.test)
            elif isinstance(node, ast.Compare):
                stack += [node.left, node.comparators[0]]
            else:
                stack += [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]

    def undefined(self, reason: str) -> ExpressionError:
        """The error for an operation without a value in this expression."""
        return ExpressionError(f"{reason} in {_short(self.text)!r}", source=self.source or None)

    def __str__(self) -> str:
        return self.text


def parse(text: str | int | float, source: str = "") -> Expr:
    return Expr(str(text), source)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


_ALLOWED = (
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Name,
    ast.Constant,
    ast.Load,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def _check(tree: ast.AST, text: str, source: str) -> None:
    """Whitelist node types, bound size, depth and literals (iteratively: no recursion)."""
    where = source or None
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    count = 0
    while stack:
        sub, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise ExpressionError(
                f"expression {_short(text, 60)!r} is too large (more than {MAX_NODES} terms)",
                source=where,
            )
        if depth > MAX_DEPTH:
            raise ExpressionError(
                f"expression {_short(text, 60)!r} is nested too deeply "
                f"(at most {MAX_DEPTH} levels)",
                source=where,
            )
        ok = isinstance(sub, _ALLOWED)
        if isinstance(sub, ast.Constant):
            if not isinstance(sub.value, int | float) or not math.isfinite(sub.value):
                ok = False
            elif abs(sub.value) > MAX_MAGNITUDE:
                raise ExpressionError(
                    f"number {_short(str(sub.value), 30)} in {_short(text)!r} exceeds 2**53",
                    source=where,
                )
        if isinstance(sub, ast.operator) and type(sub) not in BINARY:
            ok = False
        if isinstance(sub, ast.Call):
            if not isinstance(sub.func, ast.Name) or sub.func.id not in FUNCTIONS:
                name = sub.func.id if isinstance(sub.func, ast.Name) else "?"
                raise ExpressionError(
                    f"unknown function {name!r} in {_short(text)!r}; "
                    f"allowed: {', '.join(FUNCTIONS)}",
                    source=where,
                )
            fn = FUNCTIONS[sub.func.id]
            n = len(sub.args)
            if n < fn.min_args or (fn.max_args is not None and n > fn.max_args):
                want = (
                    f"at least {fn.min_args}"
                    if fn.max_args is None
                    else f"{fn.min_args}"
                    if fn.min_args == fn.max_args
                    else f"{fn.min_args} to {fn.max_args}"
                )
                raise ExpressionError(
                    f"{fn.name}() takes {want} argument(s), got {n} in {_short(text)!r}",
                    source=where,
                )
            if sub.keywords or any(isinstance(a, ast.Starred) for a in sub.args):
                ok = False
            stack.extend((a, depth + 1) for a in sub.args)
        elif ok:
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(sub))
        if not ok:
            raise ExpressionError(
                f"{type(sub).__name__} is not allowed in expression {_short(text)!r}",
                source=where,
            )


def _constant_nodes(tree: ast.expr, known: set[str]) -> set[int]:
    """Ids of the nodes whose names are all in ``known`` (bottom-up, no recursion)."""
    order: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(ast.iter_child_nodes(node))
    constant: set[int] = set()
    for node in reversed(order):  # children before parents
        if isinstance(node, ast.Name):
            ok = node.id in known
        elif isinstance(node, ast.Call):
            ok = all(id(a) in constant for a in node.args)
        else:
            ok = all(
                id(c) in constant for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)
            )
        if ok:
            constant.add(id(node))
    return constant


# -- scalar evaluation ----------------------------------------------------------------


def _scalar(value: object) -> Value:
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value  # type: ignore[return-value]  # reported by the operation that uses it


def _floating(node: ast.expr, env: Mapping[str, Value]) -> bool:
    """Whether ``node`` is float-typed, without evaluating it.

    The type follows numpy's promotion of columns, so the scalar and vectorised
    interpreters agree: a float literal or float name makes ``+ - * / // % **``,
    ``min``, ``max``, ``abs``, ``log2`` and unary minus float; comparisons,
    ``and``/``or``/``not``, ``ceil`` and ``floor`` are integers; ``a if c else b`` is
    float if either branch is.
    """
    if isinstance(node, ast.Constant):
        return isinstance(node.value, float)
    if isinstance(node, ast.Name):
        value = env.get(node.id)
        return isinstance(value, float | np.floating)
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, ast.Not) and _floating(node.operand, env)
    if isinstance(node, ast.BinOp):
        return _floating(node.left, env) or _floating(node.right, env)
    if isinstance(node, ast.IfExp):
        return _floating(node.body, env) or _floating(node.orelse, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in ("ceil", "floor"):
            return False
        return any(_floating(a, env) for a in node.args)
    return False


def _eval(node: ast.expr, env: Mapping[str, Value], expr: Expr) -> Value:
    if isinstance(node, ast.Constant):
        value = node.value
        if not isinstance(value, int | float):  # excluded by _check
            raise ExpressionError(f"cannot evaluate {_short(expr.text)!r}")
        return value
    if isinstance(node, ast.Name):
        try:
            return _scalar(env[node.id])
        except KeyError:
            raise ExpressionError(
                f"unknown name {node.id!r} in {_short(expr.text)!r}; "
                f"known: {', '.join(sorted(env))}",
                source=expr.source or None,
            ) from None
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env, expr)
        if isinstance(node.op, ast.Not):
            return not operand
        value = int(operand) if isinstance(operand, bool) else operand
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BoolOp):
        want = isinstance(node.op, ast.And)
        for v in node.values:
            if bool(_eval(v, env, expr)) != want:
                return not want
        return want
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, expr)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, env, expr)
            if not COMPARE[type(op)].apply(left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        value = _eval(node.body if _eval(node.test, env, expr) else node.orelse, env, expr)
        if _is_int(value) and (_floating(node.body, env) or _floating(node.orelse, env)):
            return float(value)  # the branch not taken decides the type, as in a column
        return value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fn = FUNCTIONS[node.func.id]
        return fn.scalar([_eval(a, env, expr) for a in node.args])
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, env, expr)
        b = _eval(node.right, env, expr)
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            raise ExpressionError(
                f"names in {_short(expr.text)!r} must be numbers", source=expr.source or None
            )
        return BINARY[type(node.op)].scalar(a, b)
    raise ExpressionError(f"cannot evaluate {_short(expr.text)!r}", source=expr.source or None)


# -- MiniZinc translation -------------------------------------------------------------


def _as_bool(part: tuple[str, Kind]) -> str:
    text, kind = part
    return text if kind == "bool" else f"({text} != 0)"


def _as_int(part: tuple[str, Kind]) -> str:
    text, kind = part
    return text if kind == "int" else f"bool2int({text})"


def _mzn(node: ast.expr, rename: Callable[[str], str], expr: Expr) -> tuple[str, Kind]:
    def sub(n: ast.expr) -> tuple[str, Kind]:
        return _mzn(n, rename, expr)

    if isinstance(node, ast.Constant):
        if not isinstance(node.value, int | float):  # excluded by _check
            raise ExpressionError(f"cannot translate {_short(expr.text)!r}")
        if isinstance(node.value, bool):
            return ("true" if node.value else "false"), "bool"
        if isinstance(node.value, float):
            raise ExpressionError(
                f"MiniZinc constraints are integer; {node.value!r} in {_short(expr.text)!r} "
                "(write integers without a decimal point)",
                source=expr.source or None,
            )
        return (str(node.value) if node.value >= 0 else f"({node.value})"), "int"
    if isinstance(node, ast.Name):
        return rename(node.id), "int"
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return f"(not {_as_bool(sub(node.operand))})", "bool"
        operand = _as_int(sub(node.operand))
        return (f"(-{operand})" if isinstance(node.op, ast.USub) else operand), "int"
    if isinstance(node, ast.BoolOp):
        joiner = " /\\ " if isinstance(node.op, ast.And) else " \\/ "
        return "(" + joiner.join(_as_bool(sub(v)) for v in node.values) + ")", "bool"
    if isinstance(node, ast.Compare):
        parts = []
        left = sub(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = sub(comparator)
            if left[1] == right[1] == "bool" and isinstance(op, ast.Eq | ast.NotEq):
                a, b = left[0], right[0]
            else:
                a, b = _as_int(left), _as_int(right)
            parts.append(f"({a} {COMPARE[type(op)].minizinc} {b})")
            left = right
        return (parts[0] if len(parts) == 1 else "(" + " /\\ ".join(parts) + ")"), "bool"
    if isinstance(node, ast.IfExp):
        test, body, orelse = _as_bool(sub(node.test)), sub(node.body), sub(node.orelse)
        if body[1] == orelse[1]:
            kind, b, o = body[1], body[0], orelse[0]
        else:
            kind, b, o = "int", _as_int(body), _as_int(orelse)
        return f"(if {test} then {b} else {o} endif)", kind
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fn = FUNCTIONS[node.func.id]
        if fn.minizinc is None:
            raise ExpressionError(
                f"{fn.name} is not available in constraints ({_short(expr.text)!r}); "
                "use a power-of-two parameter domain instead",
                source=expr.source or None,
            )
        return fn.minizinc([_as_int(sub(a)) for a in node.args]), "int"
    if isinstance(node, ast.BinOp):
        binary = BINARY[type(node.op)]
        return binary.minizinc.format(a=_as_int(sub(node.left)), b=_as_int(sub(node.right))), "int"
    raise ExpressionError(
        f"cannot translate {_short(expr.text)!r} to MiniZinc", source=expr.source or None
    )


def substitute(expr: Expr, names: Mapping[str, Expr]) -> Expr:
    """``expr`` with each name in ``names`` replaced by its expression (the syntax tree
    keeps the precedence: ``2*W`` with ``W = A+B`` is ``2*(A+B)``)."""
    if not expr.names & set(names):
        return expr

    class Swap(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in names:
                return parse_ast(names[node.id].text.strip()).body
            return node

    tree = parse_ast(expr.text.strip())
    return Expr(ast.unparse(Swap().visit(tree)), expr.source)
