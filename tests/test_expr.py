import pytest

from gtune.exceptions import ExpressionError
from gtune.expr import Expr, substitute


@pytest.mark.parametrize(
    ("text", "env", "want"),
    [
        ("NX / WX", {"NX": 256, "WX": 32}, 8),
        ("NX / WX", {"NX": 10, "WX": 4}, 2),  # integer division between integers
        ("-7 / 2", {}, -3),  # truncates toward zero, as MiniZinc's div
        ("-7 % 2", {}, -1),  # and mod
        ("7 // -2", {}, -3),
        ("1.5 / 2", {}, 0.75),
        ("min(WX, 4) * max(2, WY)", {"WX": 8, "WY": 1}, 8),
        ("log2(NX)", {"NX": 256}, 8),
        ("WX * WY <= 1024 and WX >= 32", {"WX": 32, "WY": 8}, True),
        ("1 <= WX < 4", {"WX": 4}, False),
        ("2 ** 3 % 5", {}, 3),
        ("WX if LOCAL == 1 else 0", {"WX": 16, "LOCAL": 0}, 0),
        ("not (WX > 2)", {"WX": 1}, True),
    ],
)
def test_evaluate(text, env, want):
    assert Expr(text).evaluate(env) == want


@pytest.mark.parametrize(
    "text",
    ["__import__('os')", "WX.real", "[1, 2]", "lambda: 1", "'text'", "open('f')", "WX[0]"],
)
def test_rejects_anything_but_arithmetic(text):
    with pytest.raises(ExpressionError):
        Expr(text)


def test_syntax_error_names_source():
    with pytest.raises(ExpressionError, match=r"k\.yaml: constraints\[0\]: cannot parse"):
        Expr("WX * * 2", source="k.yaml: constraints[0]")


def test_unknown_name_lists_known_names():
    with pytest.raises(ExpressionError, match=r"unknown name 'WQ'.*known: NX, WX"):
        Expr("WQ + 1").check_names({"WX", "NX"}, "name")


def test_names_exclude_functions():
    assert Expr("min(WX, NX) + log2(CX)").names == {"WX", "NX", "CX"}


def test_minizinc_translation_keeps_integer_semantics():
    e = Expr("NX / (BX * CX) % WX == 0 and WX * WY <= MAX")
    text = e.to_minizinc()
    assert "div" in text and "mod" in text and "/\\" in text
    assert Expr("min(A, B, C)").to_minizinc() == "min([A, B, C])"
    assert Expr("X if Y > 0 else 2").to_minizinc() == "(if (Y > 0) then X else 2 endif)"
    assert Expr("X if Y else 2").to_minizinc() == "(if (Y != 0) then X else 2 endif)"


def test_log2_not_allowed_in_minizinc():
    with pytest.raises(ExpressionError, match="log2"):
        Expr("log2(WX) <= 3").to_minizinc()


def test_division_by_zero_is_reported():
    with pytest.raises(ExpressionError, match="division by zero"):
        Expr("NX / WX").evaluate({"NX": 4, "WX": 0})


def test_substitute_keeps_each_expression_whole():
    """A name replaced by a sum stays a sum under a product (the syntax tree keeps the
    precedence), sources are kept, and an expression without the names is itself."""
    tied = Expr("2 * W - W", "constraints[0]")
    swapped = substitute(tied, {"W": Expr("A + B", "params[W]")})
    assert swapped.names == {"A", "B"} and swapped.source == "constraints[0]"
    for a, b in ((1, 2), (5, -3), (0, 7)):
        assert swapped.evaluate({"A": a, "B": b}) == a + b
    untouched = Expr("NX / WX", "global_size")
    assert substitute(untouched, {"W": Expr("1", "x")}) is untouched


def test_expressions_parse_in_many_threads_at_once() -> None:
    """CPython 3.11 can fail two ``ast.parse`` calls at once ("AST constructor recursion
    depth mismatch"); gtune's expressions are parsed in several threads of one tuning,
    so every parse goes through ``parse_ast``'s lock: eight threads parsing nested
    expressions together all get their values."""
    import threading

    from gtune.expr import Expr

    text = " + ".join(f"(({i} * NX) % (WX + {i}))" for i in range(40))
    want = Expr(text).evaluate({"NX": 512, "WX": 8})
    errors: list[BaseException] = []
    got: list[float] = []

    def parse_many() -> None:
        try:
            for _ in range(200):
                got.append(Expr(text).evaluate({"NX": 512, "WX": 8}))
        except BaseException as exc:  # what a thread raised is the result
            errors.append(exc)

    threads = [threading.Thread(target=parse_many) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert got == [want] * 1600
