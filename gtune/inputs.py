"""Reading user files within limits: kernel sources, descriptions and specs.

Descriptions and specs are data a user may have been handed; reading one must not cost
more than its size suggests. Every reader here checks that the path is a regular file,
reads at most a bounded number of bytes, decodes strict UTF-8 and, for YAML, walks the
event stream first (PyYAML's parser is iterative) to bound nesting depth, node count
and the size aliases expand to, before building any Python object. Only then does the
safe loader construct the document. Every failure is an :class:`InputError` naming the
file (and line where known).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from gtune.exceptions import InputError

MAX_YAML_BYTES = 2 * 1024 * 1024
"""Largest description or spec accepted (2 MiB: the shipped ones are a few KiB)."""
MAX_SOURCE_BYTES = 8 * 1024 * 1024
"""Largest kernel source accepted."""
MAX_YAML_DEPTH = 64
"""Deepest nesting of lists and mappings in a YAML document."""
MAX_YAML_NODES = 250_000
"""Most nodes a YAML document may hold once every alias is expanded."""
MAX_YAML_EXPANDED_BYTES = 4 * MAX_YAML_BYTES
"""Most bytes of scalar text a YAML document may hold once every alias is expanded
(a long string aliased many times is few nodes but much text to handle and print)."""


def read_text(path: str | Path, *, limit: int = MAX_SOURCE_BYTES, what: str = "file") -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes."""
    p = Path(path)
    try:
        if not p.exists():
            raise InputError(f"{what} not found", source=p)
        if p.is_dir():
            raise InputError(f"is a directory, expected a {what}", source=p)
        if not p.is_file():
            raise InputError(f"not a regular file (expected a {what})", source=p)
        with open(p, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=p) from None
    if len(data) > limit:
        raise InputError(f"{what} is larger than the limit of {limit:,} bytes", source=p)
    return decode(data, str(p))


def decode(data: bytes, source: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})", source=source
        ) from None
    if "\x00" in text:
        raise InputError("contains a NUL byte: not a text file", source=source)
    return text


def read_yaml_file(path: str | Path) -> Any:
    """A YAML description or spec file, read within the limits above."""
    text = read_text(path, limit=MAX_YAML_BYTES, what="YAML file")
    return load_yaml(text, str(path))


_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)
"""The safe loader on libyaml's parser (C), where PyYAML was built with it: the same
events, nodes and values as PyYAML's own parser (written in Python) at a tenth of its
time; a suite kernel's description, 7 KB, took 45 ms to read twice in Python."""


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML text through the safe loader once its shape is known to be bounded.

    libyaml's parser reads it where PyYAML has one; a document it refuses (or whose
    shape is refused) is read again by PyYAML's own parser, so every error is told as
    that parser tells it."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise InputError(
            f"YAML document is larger than the limit of {MAX_YAML_BYTES:,} bytes", source=source
        )
    if _FAST_LOADER is not None:
        try:
            yaml.reader.Reader(text)  # the characters PyYAML's parser accepts (libyaml's differ)
            check_yaml_shape(text, source, _FAST_LOADER)
            return yaml.load(text, Loader=_FAST_LOADER)
        except (yaml.YAMLError, InputError, RecursionError):
            pass  # told below, as PyYAML's own parser tells it
    try:
        check_yaml_shape(text, source)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {_problem(exc)}", source=_where(exc, source)) from None
    except RecursionError:
        raise InputError("YAML nested too deeply", source=source) from None


def check_yaml_shape(text: str, source: str, loader: Any = yaml.SafeLoader) -> None:
    """Bound depth, node count, expanded text and alias expansion from the event stream.

    Each anchored node's expanded size (nodes and bytes) is remembered, so an alias
    costs its full size at once: an alias bomb is refused after reading a few lines,
    not after expanding. An alias inside the collection it names (a recursive
    structure) is refused too: no description or spec is recursive.
    """
    depth = 0
    sizes: list[list[int]] = []  # expanded [nodes, bytes] of each open collection
    anchors: list[str | None] = []
    anchored: dict[str, tuple[int, int]] = {}
    total = [0, 0]

    def add(n: int, b: int, event: yaml.Event) -> None:
        total[0] += n
        total[1] += b
        if sizes:
            sizes[-1][0] += n
            sizes[-1][1] += b
        if total[0] > MAX_YAML_NODES:
            raise InputError(
                f"YAML document expands to more than {MAX_YAML_NODES:,} values "
                "(aliases are expanded when counting)",
                source=_at(event, source),
            )
        if total[1] > MAX_YAML_EXPANDED_BYTES:
            raise InputError(
                f"YAML document expands to more than {MAX_YAML_EXPANDED_BYTES:,} bytes of "
                "text (aliases are expanded when counting)",
                source=_at(event, source),
            )

    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise InputError(
                    f"YAML nested deeper than {MAX_YAML_DEPTH} levels", source=_at(event, source)
                )
            sizes.append([0, 0])
            anchors.append(event.anchor)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            inner, inner_bytes = sizes.pop()
            anchor = anchors.pop()
            total[0] -= inner  # counted as they came; now counted once as a whole
            total[1] -= inner_bytes
            if anchor is not None:
                anchored[anchor] = (inner + 1, inner_bytes)
            add(inner + 1, inner_bytes, event)
        elif isinstance(event, yaml.ScalarEvent):
            if (
                len(event.value) > MAX_YAML_INT_DIGITS
                and not event.style  # plain (libyaml's parser says "", PyYAML's None)
                and _YAML_INT.fullmatch(event.value)
            ):
                raise InputError(
                    f"a whole number written with {len(event.value):,} digits; at most "
                    f"{MAX_YAML_INT_DIGITS:,}",
                    source=_at(event, source),
                )
            bad = _CONTROL.search(event.value)
            if bad is not None:
                raise InputError(
                    f"holds a control character ({bad.group()!r}): descriptions, specs and "
                    "campaigns are text, and such characters would reach the terminal",
                    source=_at(event, source),
                )
            size = len(event.value.encode("utf-8", "surrogatepass"))
            if event.anchor is not None:
                anchored[event.anchor] = (1, size)
            add(1, size, event)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in anchors:
                raise InputError(
                    f"YAML alias *{event.anchor} refers to a collection that contains it "
                    "(a recursive structure)",
                    source=_at(event, source),
                )
            n, b = anchored.get(event.anchor or "", (1, 0))
            add(n, b, event)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters other than tab and line ends (escape sequences start with one)."""

MAX_YAML_INT_DIGITS = 1000
"""Longest whole number a YAML file may write (Python refuses to read one of more than
4,300 digits, with a traceback; nothing gtune reads needs a fraction of that)."""
_YAML_INT = re.compile(r"[-+]?(0[xob])?[0-9a-fA-F_:]+")


def _at(event: yaml.Event, source: str) -> str:
    mark = getattr(event, "start_mark", None)
    return f"{source}:{mark.line + 1}" if mark is not None else source


def _where(exc: yaml.YAMLError, source: str) -> str:
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"{source}:{mark.line + 1}"
    position = getattr(exc, "position", None)
    return f"{source} (character {position})" if position is not None else source


def _problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    if problem:
        return str(problem)
    reason = getattr(exc, "reason", None)
    if reason:
        return f"{reason} (character {getattr(exc, 'character', '?')!r})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
