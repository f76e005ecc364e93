"""One expression semantics: scalar, vectorised and MiniZinc evaluation agree.

Random expressions over the whole language (negative operands of ``/``, ``//``, ``%``,
powers, ``min``/``max``/``log2``, comparisons, ``and``/``or``/``not``, ``if``) are
evaluated on random environments by :meth:`Expr.evaluate`, by
:func:`gtune.space.vector.evaluate_columns` and -- integer expressions -- by the real
``minizinc`` binary, many expressions per model so the test stays fast.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gtune.exceptions import ExpressionError
from gtune.expr import MAX_MAGNITUDE, Expr, Value
from gtune.space.vector import evaluate_columns

NAMES = ("A", "B", "C")
BINARY = ("+", "-", "*", "/", "//", "%")


def _expressions(floats: bool) -> st.SearchStrategy[str]:
    ints = st.integers(0, 12).map(str)
    leaves = [st.sampled_from(NAMES), ints, st.sampled_from(["True", "False"])]
    if floats:
        leaves.append(st.integers(-14, 14).map(lambda k: repr(k / 4)))
    leaf = st.one_of(*leaves)

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        two = st.tuples(inner, inner)
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(inner, st.sampled_from(["0", "1", "2", "3", "B"])).map(
                lambda t: f"({t[0]} ** {t[1]})"
            ),
            inner.map(lambda a: f"(-{a})"),
            inner.map(lambda a: f"(not {a})"),
            st.tuples(inner, st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} < {t[1]} <= {t[2]})"),
            st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(st.sampled_from(["min", "max"]), st.lists(inner, min_size=2, max_size=3)).map(
                lambda t: f"{t[0]}({', '.join(t[1])})"
            ),
            st.tuples(st.sampled_from(["abs", "log2", "ceil", "floor"]), inner).map(
                lambda t: f"{t[0]}({t[1]})"
            ),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
            two.map(lambda t: f"({t[0]} * {t[1]})"),
        )

    # at least one operator at the top, and arithmetic on names (negative operands) often
    arithmetic = st.tuples(st.sampled_from(NAMES), st.sampled_from(BINARY), leaf).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    return grow(st.recursive(st.one_of(leaf, arithmetic), grow, max_leaves=12))


ENV = st.fixed_dictionaries({n: st.integers(-20, 20) for n in NAMES})


def _scalar(expr: Expr, env: dict[str, Value]) -> Value | None:
    """The value, or None where the expression is undefined (an ExpressionError)."""
    try:
        return expr.evaluate(env)
    except ExpressionError:
        return None


def _same(a: object, b: object) -> bool:
    x, y = float(a), float(b)  # type: ignore[arg-type]
    return math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_expressions(floats=True), envs=st.lists(ENV, min_size=1, max_size=8))
# int and float mixed in min/max, and in the branches of an if: both are float
@example(text="((-(min(A, 0.0) ** 0)) ** B)", envs=[{"A": 0, "B": -1, "C": 0}])
@example(text="(1 if A else 0.0) ** B", envs=[{"A": -1, "B": -1, "C": 0}])
def test_scalar_and_vectorised_evaluation_agree(text: str, envs: list[dict[str, int]]) -> None:
    expr = Expr(text)
    scalars = [_scalar(expr, env) for env in envs]
    columns = {n: np.array([env[n] for env in envs], dtype=np.int64) for n in NAMES}
    if any(s is None for s in scalars):
        with pytest.raises(ExpressionError):
            evaluate_columns(expr, columns, len(envs))
        return
    vector = evaluate_columns(expr, columns, len(envs))
    assert len(vector) == len(envs)
    for s, v, env in zip(scalars, vector.tolist(), envs, strict=True):
        assert _same(s, v), f"{text} at {env}: scalar {s!r}, vectorised {v!r}"


# values about the 2**53 bound and its square root (a product of two of them lands on
# either side of it), beside small ones: rows in bounds and out of them in one column
WIDE = st.one_of(
    st.integers(-20, 20),
    st.sampled_from([2**26, 2**26 + 1, 2**27, 3 * 2**25, 2**52, 2**53, 2**53 + 1]).flatmap(
        lambda v: st.sampled_from([v, -v])
    ),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_expressions(floats=True),
    envs=st.lists(st.fixed_dictionaries({n: WIDE for n in NAMES}), min_size=1, max_size=8),
)
@example(text="(A * B)", envs=[{"A": 2**26, "B": 2**27, "C": 0}, {"A": 1, "B": 2, "C": 0}])
@example(text="(A * B)", envs=[{"A": 2**26 + 1, "B": 2**27, "C": 0}])
@example(text="((A + B) - C)", envs=[{"A": 2**53, "B": 1, "C": 2}])
# a column of one sign and one of the other: truncation toward zero either way
@example(text="(A / B)", envs=[{"A": -1, "B": 2, "C": 0}, {"A": 7, "B": 2, "C": 0}])
@example(text="(A % B)", envs=[{"A": -1, "B": 2, "C": 0}, {"A": 7, "B": -2, "C": 0}])
def test_evaluations_agree_about_the_bounds(text: str, envs: list[dict[str, int]]) -> None:
    """As test_scalar_and_vectorised_evaluation_agree, with values whose products and
    sums reach past 2**53 in some rows: the columns are checked row by row there."""
    test_scalar_and_vectorised_evaluation_agree.hypothesis.inner_test(text, envs)  # type: ignore[attr-defined]


def test_documented_float_semantics_agree() -> None:
    for text, want in [
        ("-7.0 // 2", -3.0),
        ("-7.0 % 2", -1.0),
        ("7.5 // -2", -3.0),
        ("-7 / 2", -3),
    ]:
        expr = Expr(text)
        assert expr.evaluate({}) == want
        assert evaluate_columns(expr, {}, 1).tolist() == [want]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2**10**10", "exceeds 2\\*\\*53"),
        ("10**400", "exceeds 2\\*\\*53"),
        ("A * 10**15 * 10", "exceeds 2\\*\\*53"),
        ("A / (B - B)", "division by zero in 'A / \\(B - B\\)'"),
        ("A % 0", "modulo by zero"),
        ("log2(A - A)", "log2"),
        ("2 ** -1", "negative integer exponent"),
    ],
)
def test_undefined_values_are_clear_errors_in_both_evaluators(text: str, message: str) -> None:
    env = {"A": 3, "B": 2}
    with pytest.raises(ExpressionError, match=message):
        Expr(text, "spec.yaml: steps[0]").evaluate(env)
    with pytest.raises(ExpressionError, match=message):
        evaluate_columns(Expr(text), {k: np.array([v]) for k, v in env.items()}, 1)


def test_guards_protect_divisions_in_both_evaluators() -> None:
    expr = Expr("A != 0 and 8 / A > 1 or (0 if A == 0 else 8 % A)")
    column = np.array([0, 2, -3, 16])
    want = [bool(expr.evaluate({"A": int(a)})) for a in column]
    assert np.asarray(evaluate_columns(expr, {"A": column}, 4)).astype(bool).tolist() == want


@pytest.mark.parametrize(
    "text",
    [
        "+".join(["WX"] * 100_000),
        "+".join(["WX"] * 3_000),
        "-" * 5_000 + "1",
        "abs(" * 150 + "1" + ")" * 150,
        "1" * 5_000,
        "min(" * 120 + "1" + ", 2)" * 120,
    ],
)
def test_oversized_expressions_are_refused_quickly(text: str) -> None:
    with pytest.raises(ExpressionError, match=r"too long|too large|too deeply|exceeds|parse"):
        Expr(text, "k.yaml: constraints[0]")


def test_constant_parts_are_checked_before_solving() -> None:
    with pytest.raises(ExpressionError, match=r"modulo by zero \(WX % \(NX - 64\)\)"):
        Expr("WX % (NX - 64) == 0").check_defined({"NX": 64})
    with pytest.raises(ExpressionError, match="exceeds"):
        Expr("WX < 2**10**10").check_defined({})
    Expr("NX > 64 and WX % (NX - 64) == 0").check_defined({"NX": 64})  # guarded


# -- MiniZinc ---------------------------------------------------------------------------


def _minizinc_values(cases: list[tuple[Expr, dict[str, int]]], work: Path) -> list[str]:
    """Every case's value as MiniZinc prints it, from one model."""
    lines: list[str] = []
    outputs: list[str] = []
    for i, (expr, env) in enumerate(cases):
        lines += [f"int: {n}_{i} = {v};" for n, v in env.items()]
        body = expr.to_minizinc(lambda n, i=i: f"{n}_{i}")  # type: ignore[misc]
        outputs.append(f'"{i} ", show({body}), "\\n"')
    lines.append("solve satisfy;")
    lines.append("output [" + ", ".join(outputs) + "];")
    model = work / "batch.mzn"
    model.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        ["minizinc", "--solver", "gecode", str(model)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    values = {}
    for line in proc.stdout.splitlines():
        if line[:1].isdigit():
            index, value = line.split(" ", 1)
            values[int(index)] = value.strip()
    return [values[i] for i in range(len(cases))]


@pytest.mark.minizinc
@pytest.mark.skipif(shutil.which("minizinc") is None, reason="needs the minizinc binary")
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(cases=st.lists(st.tuples(_expressions(floats=False), ENV), min_size=40, max_size=60))
def test_minizinc_agrees_with_python(
    cases: list[tuple[str, dict[str, int]]], tmp_path: Path
) -> None:
    checked: list[tuple[Expr, dict[str, int], Value]] = []
    for text, env in cases:
        expr = Expr(text)
        value = _scalar(expr, env)
        if value is None:
            continue  # undefined: MiniZinc makes the enclosing constraint false instead
        try:
            expr.to_minizinc()
        except ExpressionError:
            continue  # log2 has no MiniZinc spelling; refused clearly
        checked.append((expr, env, value))
    if not checked:
        return
    printed = _minizinc_values([(e, env) for e, env, _ in checked], tmp_path)
    for (expr, env, value), got in zip(checked, printed, strict=True):
        if got in ("true", "false"):
            assert bool(value) == (got == "true"), f"{expr.text} at {env}: {value!r} vs {got}"
        else:
            assert isinstance(value, int | bool) and abs(value) <= MAX_MAGNITUDE
            assert int(value) == int(got), f"{expr.text} at {env}: {value!r} vs {got}"
