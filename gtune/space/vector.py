"""Vectorised evaluation of :class:`~gtune.expr.Expr` over columns of configurations.

Queries on a solved space filter hundreds of thousands of rows; evaluating a constraint
row by row in Python would take seconds. This walks the same whitelisted syntax as
:mod:`gtune.expr` with numpy arrays, keeping its integer semantics (``/`` between
integers is floor division, as in :meth:`Expr.evaluate`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from gtune.exceptions import ExpressionError
from gtune.expr import Expr

Column = npt.NDArray[np.int64] | npt.NDArray[np.bool_] | npt.NDArray[np.float64]
Scalar = int | float | bool
Operand = Any  # an array or a Python scalar; numpy's own typing is too loose to help here


def evaluate_columns(expr: Expr, env: Mapping[str, Operand], rows: int) -> Operand:
    """``expr`` evaluated element-wise; names map to arrays of length ``rows`` or scalars."""
    expr.check_names(set(env))
    tree = ast.parse(expr.text.strip(), mode="eval").body  # already validated by Expr
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = _walk(tree, env, expr)
    if np.ndim(out) == 0:
        return np.full(rows, out)
    return out


def holds(expr: Expr, env: Mapping[str, Operand], rows: int) -> npt.NDArray[np.bool_]:
    """Boolean mask of the rows where the constraint ``expr`` holds."""
    return np.asarray(evaluate_columns(expr, env, rows)).astype(bool)


def _truth(value: Operand) -> Operand:
    return np.asarray(value) != 0


def _walk(node: ast.expr, env: Mapping[str, Operand], expr: Expr) -> Operand:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        value = _walk(node.operand, env, expr)
        if isinstance(node.op, ast.Not):
            return np.logical_not(_truth(value))
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BoolOp):
        parts = [_truth(_walk(v, env, expr)) for v in node.values]
        fold = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
        result = parts[0]
        for p in parts[1:]:
            result = fold(result, p)
        return result
    if isinstance(node, ast.Compare):
        left = _walk(node.left, env, expr)
        chain: Operand = True
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _walk(comparator, env, expr)
            chain = np.logical_and(chain, _compare(op, left, right))
            left = right
        return chain
    if isinstance(node, ast.IfExp):
        return np.where(
            _truth(_walk(node.test, env, expr)),
            _walk(node.body, env, expr),
            _walk(node.orelse, env, expr),
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_walk(a, env, expr) for a in node.args]
        return _call(node.func.id, args, expr)
    if isinstance(node, ast.BinOp):
        return _binop(node.op, _walk(node.left, env, expr), _walk(node.right, env, expr), expr)
    raise ExpressionError(f"cannot evaluate {expr.text!r}", source=expr.source or None)


def _is_int(value: Operand) -> bool:
    if isinstance(value, bool | int | np.integer | np.bool_):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "iub"


def _binop(op: ast.operator, a: Operand, b: Operand, expr: Expr) -> Operand:
    if isinstance(op, ast.Add):
        return np.add(a, b)
    if isinstance(op, ast.Sub):
        return np.subtract(a, b)
    if isinstance(op, ast.Mult):
        return np.multiply(a, b)
    if isinstance(op, ast.Div | ast.FloorDiv | ast.Mod):
        if np.any(np.asarray(b) == 0):
            raise ExpressionError(f"division by zero in {expr.text!r}", source=expr.source or None)
        if isinstance(op, ast.Mod | ast.FloorDiv) or (_is_int(a) and _is_int(b)):
            # truncation toward zero, as MiniZinc's div/mod (and gtune.expr)
            quotient = np.sign(a) * np.sign(b) * np.floor_divide(np.abs(a), np.abs(b))
            if isinstance(op, ast.Mod):
                return np.subtract(a, np.multiply(b, quotient))
            return quotient
        return np.true_divide(a, b)
    if isinstance(op, ast.Pow):
        return np.power(a, b)
    raise ExpressionError(f"operator not allowed in {expr.text!r}", source=expr.source or None)


def _compare(op: ast.cmpop, a: Operand, b: Operand) -> Operand:
    if isinstance(op, ast.Eq):
        return np.equal(a, b)
    if isinstance(op, ast.NotEq):
        return np.not_equal(a, b)
    if isinstance(op, ast.Lt):
        return np.less(a, b)
    if isinstance(op, ast.LtE):
        return np.less_equal(a, b)
    if isinstance(op, ast.Gt):
        return np.greater(a, b)
    return np.greater_equal(a, b)


def _call(name: str, args: list[Operand], expr: Expr) -> Operand:
    if name in ("min", "max"):
        fold = np.minimum if name == "min" else np.maximum
        result = args[0]
        for a in args[1:]:
            result = fold(result, a)
        return result
    if name == "abs":
        return np.abs(args[0])
    if name in ("ceil", "floor"):
        if _is_int(args[0]):
            return args[0]
        rounded = np.ceil(args[0]) if name == "ceil" else np.floor(args[0])
        return np.asarray(rounded).astype(np.int64)
    if name == "log2":
        value = np.log2(args[0])
        return np.floor(value).astype(np.int64) if _is_int(args[0]) else value
    raise ExpressionError(f"unknown function {name}() in {expr.text!r}", source=expr.source or None)
