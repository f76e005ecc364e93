"""User strings written into another language: one helper per target.

A kernel's file name, a device's name or a message read from a store is data; where it
is written into MiniZinc, C, a CSV file, a terminal or a Markdown/HTML report it must
stay data there. Each helper here takes any text and returns text that the target reads
as that text and nothing more (docs/robustness.md, security model). File names holding
control characters are refused where they come in (:func:`check_file_name`).
"""

from __future__ import annotations

import html
import re
from os import PathLike

from gtune.exceptions import InputError

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 control characters, DEL, line and paragraph separators and the bidirectional
overrides (text that reads differently from how it is stored)."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(ch: str) -> str:
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\n``):
    one line, nothing a terminal or a line-based format acts on."""
    return _CONTROL.sub(lambda m: _shown(m.group()), text)


def terminal(text: str) -> str:
    """Text for a terminal: control characters (escape sequences start with one) shown
    escaped. Rich markup is the caller's (``rich.markup.escape``)."""
    return visible(text)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (see :func:`visible`)."""
    return _CONTROL.search(text) is not None


def check_file_name(path: str | PathLike[str], what: str = "file name") -> None:
    """Refuse a path holding a control character: such a name would reach the terminal,
    the MiniZinc model and reports; no real kernel needs one."""
    text = str(path)
    found = _CONTROL.search(text)
    if found is not None:
        raise InputError(
            f"the {what} holds a control character ({_shown(found.group())}); rename the "
            "file (names with control characters are refused: they would reach the "
            "terminal and the files gtune writes)",
            source=visible(text),
        )


# -- MiniZinc ------------------------------------------------------------------------


def mzn_string(text: str) -> str:
    """A MiniZinc string literal for a label (a constraint's name): one that MiniZinc
    and the FlatZinc readers of its solvers take, which read no escapes (Gecode stops
    at a backslash). So a control character becomes ``?``, a backslash ``/`` and a
    double quote ``'``: the label reads the same, and nothing in it is code."""
    label = _CONTROL.sub("?", text).replace("\\", "/").replace('"', "'")
    return f'"{label}"'


def mzn_comment(text: str) -> str:
    """Text for a MiniZinc line comment (``% ...``): one line, whatever ``text`` holds."""
    return visible(text)


# -- C and the C preprocessor ----------------------------------------------------------


def c_comment(text: str) -> str:
    """Text for a C block comment (``/* ... */``): one line, no ``*/`` to end it early
    and no ``??`` trigraph."""
    return visible(text).replace("*/", "* /").replace("/*", "/ *").replace("??", "?\\?")


_C_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def c_string(text: str) -> str:
    """A C string literal holding ``text``: usable in a ``#define`` line (no line ends,
    no ``??`` trigraph, every other control character an octal escape)."""
    out = []
    for i, ch in enumerate(text):
        if ch in _C_NAMED:
            out.append(_C_NAMED[ch])
        elif ch == "?" and i > 0 and text[i - 1] == "?":
            out.append("\\?")  # the second ? of a pair: no ??/ trigraph can form
        elif _CONTROL.fullmatch(ch):
            out.append(f"\\{ord(ch):03o}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def printf_text(text: str) -> str:
    """Text to put in a printf format as itself (``%`` doubled)."""
    return text.replace("%", "%%")


# -- CSV ------------------------------------------------------------------------------

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula (OWASP,
    CSV injection: a text cell starting with ``= + - @``, tab or CR gets a leading
    ``'``). Numbers stay numbers; other text is written as it is (the CSV writer
    quotes it)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


# -- Markdown and HTML reports -----------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def markdown_text(text: str) -> str:
    """Text for a Markdown table cell or paragraph: one line, the punctuation that
    forms emphasis, code, links, images, HTML tags and table columns escaped, ``&`` as
    an entity."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible(text).replace("&", "&amp;"))


def html_text(text: str) -> str:
    """Text for HTML: ``& < > " '`` as entities, control characters shown escaped."""
    return html.escape(visible(text), quote=True)
