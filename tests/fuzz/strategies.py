"""Hypothesis strategies that mutate real inputs: the shipped descriptions, the shipped
specs and command lines (types, structure, expressions, sizes, encodings)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.fuzz.harness import LONG, ROOT

STENCILS = ROOT / "stencils"
SPECS = ROOT / "specs"

DESCRIPTIONS = sorted(p for p in STENCILS.glob("*.yaml") if not p.name.endswith(".stencil.yaml"))
DEFINITIONS = sorted(STENCILS.glob("*.stencil.yaml"))
SPEC_FILES = sorted(SPECS.glob("*.yaml"))

HOSTILE_TEXT = [
    "",
    " ",
    ".",
    "..",
    "/",
    "NX",
    "1:NX:*2",
    "1:10**9:+1",
    "abc",
    "tight",
    "os:system",
    "json:loads",
    "../x.py:f",
    "/etc/passwd",
    "NX/0",
    "1e400",
    "²",
    "∞",
    "-1",
    "0",
    "nan",
    "True",
    "None",
    "[1, 2]",
    "{a: 1}",
    "&a",
    "*a",
    "!!python/name:os.system",
    "\t",
    "\u202e",
    "sample(3, 1:8:*2)",
    "sample(-1, 1:8)",
    "best.WX",
    "best.NOPE",
    "min(NX, 4)",
    "log2(0)",
    "\x1b[2J\x1b[31m",
    "WÄ",
    "-DNX=2",
    "1 -DNX=2",
]
if LONG:
    HOSTILE_TEXT += ["2**10**10", "10**400", "+".join(["WX"] * 100_000), "9" * 5000]

junk: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(HOSTILE_TEXT),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
    st.dictionaries(st.sampled_from(["a", "NX", "WX", "1"]), st.integers(), max_size=2),
)


def expressions(names: list[str]) -> st.SearchStrategy[str]:
    """Small expressions over the given names (``**`` only in the long profile)."""
    ops = ["+", "-", "*", "/", "//", "%", "<", "<=", "==", " and ", " or "]
    if LONG:
        ops.append("**")
    leaf = st.one_of(
        st.sampled_from(names or ["NX"]), st.integers(min_value=-3, max_value=64).map(str)
    )
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(ops), inner).map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
            st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(
                lambda t: f"{t[0]}({t[1]}, {t[2]})"
            ),
            inner.map(lambda e: f"log2({e})"),
        ),
        max_leaves=6,
    )


def _paths(tree: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(tree, dict):
        for k, v in tree.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out += _paths(v, (*prefix, i))
    return out


def _get(tree: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        tree = tree[p]
    return tree


@st.composite
def mutated_tree(draw: st.DrawFn, tree: Any, names: list[str]) -> Any:
    """One to three structural or type mutations of a YAML document."""
    tree = copy.deepcopy(tree)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(tree)
        path = draw(st.sampled_from(paths))
        op = draw(
            st.sampled_from(
                ["replace", "expression", "delete", "wrap", "unwrap", "rename", "add", "big"]
            )
        )
        if not path:
            if op in ("replace", "wrap"):
                tree = draw(junk) if op == "replace" else [tree]
            continue
        parent, key = _get(tree, path[:-1]), path[-1]
        value = parent[key]
        if op == "replace":
            parent[key] = draw(junk)
        elif op == "expression":
            parent[key] = draw(expressions(names))
        elif op == "delete":
            del parent[key]
        elif op == "wrap":
            parent[key] = [value]
        elif op == "unwrap":
            if isinstance(value, list | dict) and value:
                parent[key] = next(iter(value.values() if isinstance(value, dict) else value))
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["", "1", "NX", "unknown_key", "kernel"]))] = parent.pop(
                key
            )
        elif op == "add" and isinstance(value, dict):
            value[draw(st.sampled_from(["bogus", "python", "config", "default", "doc"]))] = draw(
                junk
            )
        elif op == "big":
            n = 200_000 if LONG else draw(st.sampled_from([10_001, 20_000]))
            parent[key] = list(range(n))
    return tree


ENCODINGS = [
    "none",
    "bytes",
    "truncate",
    "bom",
    "latin1",
    "nul",
    "tabs",
    "deep",
    "bomb",
    "recursive",
    "long_alias",
]


@st.composite
def encoded(draw: st.DrawFn, tree: Any) -> bytes:
    """The document as YAML bytes, possibly damaged at the byte level."""
    try:
        text = yaml.safe_dump(tree, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, ValueError, TypeError):
        text = str(tree)
    data = text.encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(ENCODINGS))
    if how == "bytes":
        at = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    elif how == "truncate":
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    elif how == "bom":
        data = b"\xef\xbb\xbf" + data
    elif how == "latin1":
        data = (text + "doc: café\n").encode("latin-1", "replace")
    elif how == "nul":
        data = data + b"\x00"
    elif how == "tabs":
        data = data.replace(b"  ", b"\t")
    elif how == "deep":
        depth = draw(st.sampled_from([70, 500]))
        data = data + b"extra: " + b"[" * depth + b"]" * depth + b"\n"
    elif how == "bomb":
        lines = ['b0: &b0 ["x","x","x","x","x","x","x","x","x"]']
        lines += [f"b{i}: &b{i} [{','.join([f'*b{i - 1}'] * 9)}]" for i in range(1, 9)]
        data = data + ("\n".join(lines) + "\n").encode()
    elif how == "recursive":
        data = data + b"r: &r [1, *r]\n"
    elif how == "long_alias":  # few values, much text: 300 KB aliased 100 times
        data = data + f"s: &s {'x' * 300_000}\nt: [{', '.join(['*s'] * 100)}]\n".encode()
    return data


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())
