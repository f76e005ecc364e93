"""Build docs/api.md, the API reference, from the public names' docstrings.

    python docs/build_api.py           # rewrite docs/api.md
    python docs/build_api.py --check   # exit 1 if docs/api.md is not what the code says

The public API is each listed module's ``__all__`` (for modules without one, the names
listed here). Each name is shown with its signature and docstring; each class with its
public methods and properties that have docstrings. CI runs ``--check``, so the
reference never drifts from the code, and the test suite checks that every public
name has a docstring.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "api.md"

MODULES: list[tuple[str, list[str] | None]] = [
    ("gtune", None),
    ("gtune.progress", None),
    ("gtune.tuning", None),
    ("gtune.heuristics", None),
    ("gtune.measure", None),
    ("gtune.store", None),
    ("gtune.campaign", None),
    ("gtune.testing", None),
    (
        "gtune.exceptions",
        [
            "GtuneError",
            "InputError",
            "ExpressionError",
            "BuildError",
            "EnvironmentProblem",
            "UnsatisfiableSpace",
            "RecordingMissing",
        ],
    ),
    ("gtune.convergence", ["Trace", "expected_best_of", "RandomBaseline", "score"]),
]


def public_names(module: ModuleType, listed: list[str] | None) -> list[str]:
    names = listed if listed is not None else list(getattr(module, "__all__", []))
    return [n for n in names if not n.startswith("_")]


def _signature(obj: Any, name: str) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return name
    sig = re.sub(r" at 0x[0-9a-f]+", "", sig)  # default values' addresses vary by run
    return f"{name}{sig}"


def _doc(obj: Any) -> str:
    own = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else None
    doc = inspect.cleandoc(own).strip() if own else ""
    if inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""  # the signature dataclasses write in place of a docstring
    return doc


def _own_doc(cls: type, member: str) -> str:
    """A member's docstring where ``cls`` or a gtune base class defines it."""
    for klass in cls.__mro__:
        if member in vars(klass) and klass.__module__.startswith("gtune"):
            return _doc(vars(klass)[member])
    return ""


def describe(name: str, obj: Any, owner: str) -> Iterator[str]:
    """The Markdown for one public name."""
    if inspect.isclass(obj):
        kind = "enum" if issubclass(obj, enum.Enum) else "class"
        yield f"### {kind} `{owner}.{name}`\n"
        if kind == "class" and not issubclass(obj, BaseException):
            yield f"```python\n{_signature(obj, name)}\n```\n"
        doc = _doc(obj)
        yield (doc or "*(no docstring)*") + "\n"
        if issubclass(obj, enum.Enum):
            yield "Members: " + ", ".join(f"`{m.name}`" for m in obj) + "\n"
            return
        fields = (
            {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
        )
        members = []
        for member in sorted(vars(obj)):
            if member.startswith("_") or member in fields:
                continue
            value = vars(obj)[member]
            if isinstance(value, property | staticmethod | classmethod) or inspect.isfunction(
                value
            ):
                text = _own_doc(obj, member)
                if not text:
                    continue
                func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
                head = (
                    f"`{member}` (property)"
                    if isinstance(value, property)
                    else f"`{_signature(func, member)}`"
                )
                first = text.split("\n\n")[0].replace("\n", " ")
                members.append(f"- {head}: {first}")
        if members:
            yield "\n".join(members) + "\n"
    elif callable(obj):
        yield f"### function `{owner}.{name}`\n"
        yield f"```python\n{_signature(obj, name)}\n```\n"
        yield (_doc(obj) or "*(no docstring)*") + "\n"
    else:
        yield f"### `{owner}.{name}`\n"
        yield f"`{obj!r}`\n"


def build() -> str:
    """The whole reference, as Markdown."""
    import importlib

    parts = [
        "# API reference\n",
        "Generated from the docstrings by `python docs/build_api.py` (CI checks that this "
        "file is current); do not edit by hand. The guide to the library is "
        "[tuning.md](tuning.md#from-python); examples are in [../examples](../examples/).\n",
    ]
    for mod_name, listed in MODULES:
        module = importlib.import_module(mod_name)
        parts.append(f"## `{mod_name}`\n")
        summary = _doc(module).split("\n\n")[0]
        if summary:
            parts.append(summary + "\n")
        for name in public_names(module, listed):
            parts.extend(describe(name, getattr(module, name), mod_name))
    text = "\n".join(parts)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def missing_docstrings() -> list[str]:
    """Public names (classes, functions) without a docstring of their own."""
    import importlib

    missing = []
    for mod_name, listed in MODULES:
        module = importlib.import_module(mod_name)
        for name in public_names(module, listed):
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not _doc(obj):
                missing.append(f"{mod_name}.{name}")
    return sorted(set(missing))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/api.md is stale")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    text = build()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print("docs/api.md is out of date: run python docs/build_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
