"""A small, safe expression language for descriptions, specs and constraints.

Expressions are parsed with :mod:`ast` and evaluated by walking a whitelist of node
types -- never with ``eval``. The language: integer and float literals, names
(parameters, problem sizes, device limits), ``+ - * / // % **``, unary minus,
comparisons (chains allowed), ``and``/``or``/``not``, ``a if c else b`` and the
functions ``min``, ``max``, ``log2``, ``abs``, ``ceil``, ``floor``.

``/`` between two integers is integer division and ``%`` its remainder, both truncating
toward zero exactly as MiniZinc's ``div``/``mod`` (and C) do, so a constraint means the
same in Python and in MiniZinc: ``NX/WX`` is the number of work-groups, not a fraction.

The same tree translates to MiniZinc so that constraints keep one meaning in both
places.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from gtune.exceptions import ExpressionError

Number = int | float
Value = int | float | bool

_FUNCTIONS: dict[str, Callable[..., Value]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "log2": lambda x: int(math.log2(x)) if isinstance(x, int) and x > 0 else math.log2(x),
    "ceil": math.ceil,
    "floor": math.floor,
}

_MZN_FUNCTIONS = {"min": "min", "max": "max", "abs": "abs"}

_BINOPS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
_CMPOPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


@dataclass(frozen=True)
class Expr:
    """A parsed expression; ``source`` names where it came from for error messages."""

    text: str
    source: str = ""
    _tree: ast.expr = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        text = str(self.text).strip()
        if not text:
            raise ExpressionError("empty expression", source=self.source or None)
        try:
            tree = ast.parse(text, mode="eval").body
        except SyntaxError as exc:
            raise ExpressionError(
                f"cannot parse expression {text!r}: {exc.msg}", source=self.source or None
            ) from None
        _check(tree, text, self.source)
        object.__setattr__(self, "_tree", tree)

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
                f"unknown {what} {unknown[0]!r} in {self.text!r}; "
                f"known: {', '.join(sorted(known))}",
                source=self.source or None,
            )

    def evaluate(self, env: Mapping[str, Value]) -> Value:
        return _eval(self._tree, env, self)

    def evaluate_int(self, env: Mapping[str, Value]) -> int:
        value = self.evaluate(env)
        if isinstance(value, bool) or not float(value).is_integer():
            raise ExpressionError(
                f"expression {self.text!r} gave {value!r}, expected an integer",
                source=self.source or None,
            )
        return int(value)

    def to_minizinc(self, rename: Callable[[str], str] = lambda n: n) -> str:
        """The expression as MiniZinc text (integer semantics)."""
        return _mzn(self._tree, rename, self)

    def __str__(self) -> str:
        return self.text


def parse(text: str | int | float, source: str = "") -> Expr:
    return Expr(str(text), source)


def _check(node: ast.AST, text: str, source: str) -> None:
    for sub in ast.walk(node):
        ok = isinstance(
            sub,
            ast.Expression
            | ast.BinOp
            | ast.UnaryOp
            | ast.BoolOp
            | ast.Compare
            | ast.IfExp
            | ast.Call
            | ast.Name
            | ast.Constant
            | ast.Load
            | ast.operator
            | ast.unaryop
            | ast.boolop
            | ast.cmpop,
        )
        if isinstance(sub, ast.Constant) and not isinstance(sub.value, int | float):
            ok = False
        if isinstance(sub, ast.operator) and type(sub) not in _BINOPS:
            ok = False
        if isinstance(sub, ast.Call):
            if not isinstance(sub.func, ast.Name) or sub.func.id not in _FUNCTIONS:
                name = sub.func.id if isinstance(sub.func, ast.Name) else "?"
                raise ExpressionError(
                    f"unknown function {name!r} in {text!r}; allowed: {', '.join(_FUNCTIONS)}",
                    source=source or None,
                )
            if sub.keywords:
                ok = False
        if not ok:
            raise ExpressionError(
                f"{type(sub).__name__} is not allowed in expression {text!r}",
                source=source or None,
            )


def _eval(node: ast.expr, env: Mapping[str, Value], expr: Expr) -> Value:
    if isinstance(node, ast.Constant):
        value = node.value
        assert isinstance(value, int | float)  # guaranteed by _check
        return value
    if isinstance(node, ast.Name):
        try:
            return env[node.id]
        except KeyError:
            raise ExpressionError(
                f"unknown name {node.id!r} in {expr.text!r}; known: {', '.join(sorted(env))}",
                source=expr.source or None,
            ) from None
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, env, expr)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return +operand
        return not operand
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, env, expr) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, expr)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, env, expr)
            if not _compare(op, left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        if _eval(node.test, env, expr):
            return _eval(node.body, env, expr)
        return _eval(node.orelse, env, expr)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # guaranteed by _check
        args = [_eval(a, env, expr) for a in node.args]
        try:
            return _FUNCTIONS[node.func.id](*args)
        except (TypeError, ValueError) as exc:
            raise ExpressionError(
                f"{node.func.id}() failed in {expr.text!r}: {exc}", source=expr.source or None
            ) from None
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, env, expr)
        b = _eval(node.right, env, expr)
        return _binop(node.op, a, b, expr)
    raise ExpressionError(f"cannot evaluate {expr.text!r}", source=expr.source or None)


def _binop(op: ast.operator, a: Value, b: Value, expr: Expr) -> Value:
    both_int = isinstance(a, int) and isinstance(b, int)
    try:
        if isinstance(op, ast.Add):
            return a + b
        if isinstance(op, ast.Sub):
            return a - b
        if isinstance(op, ast.Mult):
            return a * b
        if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod) and both_int:
            q = abs(int(a)) // abs(int(b))
            q = q if (a >= 0) == (b >= 0) else -q
            return q if not isinstance(op, ast.Mod) else a - b * q
        if isinstance(op, ast.Div):
            return a / b
        if isinstance(op, ast.FloorDiv):
            return a // b
        if isinstance(op, ast.Mod):
            return a % b
        if isinstance(op, ast.Pow):
            return a**b
    except ZeroDivisionError:
        raise ExpressionError(
            f"division by zero in {expr.text!r}", source=expr.source or None
        ) from None
    raise ExpressionError(f"operator not allowed in {expr.text!r}", source=expr.source or None)


def _compare(op: ast.cmpop, a: Value, b: Value) -> bool:
    if isinstance(op, ast.Eq):
        return a == b
    if isinstance(op, ast.NotEq):
        return a != b
    if isinstance(op, ast.Lt):
        return a < b
    if isinstance(op, ast.LtE):
        return a <= b
    if isinstance(op, ast.Gt):
        return a > b
    return a >= b


def _mzn(node: ast.expr, rename: Callable[[str], str], expr: Expr) -> str:
    def sub(n: ast.expr) -> str:
        return _mzn(n, rename, expr)

    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return "true" if node.value else "false"
        if isinstance(node.value, float) and not node.value.is_integer():
            raise ExpressionError(
                f"MiniZinc constraints are integer; {node.value} in {expr.text!r}",
                source=expr.source or None,
            )
        assert isinstance(node.value, int | float)
        return str(int(node.value))
    if isinstance(node, ast.Name):
        return rename(node.id)
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return f"(not {sub(node.operand)})"
        return f"(-{sub(node.operand)})" if isinstance(node.op, ast.USub) else sub(node.operand)
    if isinstance(node, ast.BoolOp):
        joiner = " /\\ " if isinstance(node.op, ast.And) else " \\/ "
        return "(" + joiner.join(sub(v) for v in node.values) + ")"
    if isinstance(node, ast.Compare):
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts.append(f"({sub(left)} {_CMPOPS[type(op)]} {sub(right)})")
            left = right
        return parts[0] if len(parts) == 1 else "(" + " /\\ ".join(parts) + ")"
    if isinstance(node, ast.IfExp):
        return f"(if {sub(node.test)} then {sub(node.body)} else {sub(node.orelse)} endif)"
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        if name in ("ceil", "floor"):
            return sub(node.args[0])
        if name == "log2":
            raise ExpressionError(
                f"log2 is not available in constraints ({expr.text!r}); "
                "use a power-of-two parameter domain instead",
                source=expr.source or None,
            )
        args = ", ".join(sub(a) for a in node.args)
        if name in ("min", "max") and len(node.args) > 1:
            return f"{_MZN_FUNCTIONS[name]}([{args}])"
        return f"{_MZN_FUNCTIONS[name]}({args})"
    if isinstance(node, ast.BinOp):
        symbol = _BINOPS[type(node.op)]
        a, b = sub(node.left), sub(node.right)
        if symbol in ("/", "//"):
            return f"({a} div {b})"
        if symbol == "%":
            return f"({a} mod {b})"
        if symbol == "**":
            return f"pow({a}, {b})"
        return f"({a} {symbol} {b})"
    raise ExpressionError(f"cannot translate {expr.text!r} to MiniZinc", source=expr.source or None)
