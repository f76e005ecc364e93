"""User strings written into other languages stay data there (gtune/escape.py): each
helper is checked by the language's own reader where one is at hand (Python's csv,
MiniZinc in tests/space/test_names.py, the C preprocessor of the OpenCL compiler is
not needed: the rules are textual)."""

from __future__ import annotations

import csv
import html.parser
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gtune import escape
from gtune.exceptions import InputError

HOSTILE = [
    "k\nconstraint WX = 2;\n%.cl",
    "\x1b]0;pwned\x07\x1b[31mred",
    "=cmd|' -C calc'!A0",
    "a */ int x; /* b",
    'quote " back \\ slash',
    "tri??/graph",
    "right\u202eto-left",
    "|col|[link](http://x)<b>&amp;",
]


@given(st.text())
def test_visible_text_holds_no_control_character(text: str) -> None:
    shown = escape.visible(text)
    assert not escape.has_control(shown)
    assert "\n" not in shown and "\x1b" not in shown
    if not escape.has_control(text):
        assert shown == text  # ordinary text is left as it is


@pytest.mark.parametrize("text", HOSTILE)
def test_minizinc_strings_and_comments_stay_one_item(text: str) -> None:
    literal = escape.mzn_string(text)
    body = literal[1:-1]
    assert literal.startswith('"') and literal.endswith('"') and "\n" not in literal
    assert '"' not in body and "\\" not in body  # no escape a FlatZinc reader trips on
    assert "\n" not in escape.mzn_comment(text)


@pytest.mark.parametrize("text", HOSTILE)
def test_c_comments_cannot_end_early(text: str) -> None:
    comment = escape.c_comment(text)
    assert "*/" not in comment and "\n" not in comment and "??" not in comment


def test_printf_text_is_itself_in_a_format() -> None:
    assert escape.printf_text("-DX=100%") % () == "-DX=100%"


@given(st.text())
def test_c_strings_round_trip_through_their_escapes(text: str) -> None:
    literal = escape.c_string(text)
    assert "\n" not in literal and "??" not in literal
    assert _c_decode(literal[1:-1]) == text


def _c_decode(body: str) -> str:
    """What a C compiler reads from a string literal's body (the escapes c_string
    writes; an unescaped quote or a lone backslash fails)."""
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        assert ch != '"', body
        if ch != "\\":
            out.append(ch)
            i += 1
        elif body[i + 1] in '?"\\':
            out.append(body[i + 1])
            i += 2
        elif body[i + 1] in "ntr":
            out.append({"n": "\n", "t": "\t", "r": "\r"}[body[i + 1]])
            i += 2
        elif body[i + 1] == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
    return "".join(out)


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_never_start_a_formula(start: str) -> None:
    cell = escape.csv_cell(f"{start}cmd|' -C calc'!A0")
    assert isinstance(cell, str) and cell.startswith("'")
    buf = io.StringIO()
    csv.writer(buf).writerow([cell, 1.5, -2])
    read = next(csv.reader(io.StringIO(buf.getvalue())))
    assert read[0] == cell and read[1:] == ["1.5", "-2"]  # numbers are left alone
    assert escape.csv_cell("heat3d") == "heat3d" and escape.csv_cell(-3) == -3


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_cells_stay_one_cell(text: str) -> None:
    cell = escape.markdown_text(text)
    assert "\n" not in cell
    unescaped = [c for i, c in enumerate(cell) if c in "|[]<>`*_" and cell[i - 1] != "\\"]
    assert not unescaped


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_holds_no_tag(text: str) -> None:
    tags: list[str] = []

    class Tags(html.parser.HTMLParser):
        def handle_starttag(self, tag: str, attrs: object) -> None:
            tags.append(tag)

    parser = Tags()
    parser.feed(f"<p>{escape.html_text(text)}</p>")
    assert tags == ["p"]


def test_file_names_with_control_characters_are_refused() -> None:
    escape.check_file_name("stencils/heat3d.cl")
    with pytest.raises(InputError, match=r"control character \(\\n\)") as info:
        escape.check_file_name("k\nconstraint WX = 2;\n%.cl", "kernel's file name")
    assert "\n" not in info.value.render()
