"""A kernel source specialised to one configuration: what ``gtune export`` writes.

The optimizing template holds every technique behind preprocessor conditionals; an
application developer wants to read only the code the tuned configuration runs. This is
a partial C preprocessor in the manner of ``unifdef``: with the configuration's values
known, it evaluates ``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else``, drops the dead
branches and the directives it decided, and keeps everything else as written -- macro
names, comments and layout of the live code -- so the result reads like hand-written
OpenCL. A conditional it cannot decide (one that names the problem size, passed at
build time) is kept whole. Then ``#define``s nothing live uses are dropped, runs of
blank lines closed up and trailing spaces removed.

Why not a full preprocessor: ``cpp`` (or the ``pcpp`` package) would also expand every
macro, turning ``STENCIL_TERMS(SCALAR_TERM)`` into one long line of arithmetic and the
readable names into numbers; ``pcpp``'s partial mode expands known macros in the text
as well, and would be a dependency for what a few hundred lines do here. The real
``cpp`` checks the result instead: :func:`same_after_cpp` preprocesses the original and
the specialised source with the same options, and the two must be the same tokens.

What is known, and how (C's rules): the macros the source ``#define``s where it is
certainly reached, evaluated when used (so later definitions count); the build-time
macros (``-D``), defined with values unknown unless given as integers; and every other
name is undefined (0 in ``#if``), since the exported kernel is built with exactly those
options -- except names reserved to the implementation (``__*``, ``cl_*``, ``CL_*``,
``FP_*``...), which an OpenCL compiler may predefine, and every name once a live
``#include`` brings in text not seen here. A ``#define`` inside a conditional left
undecided makes its name unknown.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gtune.expr import BINARY, COMPARE, Undefined

# a directive's keyword and the rest of its (comment-free, joined) text
_DIRECTIVE = re.compile(r"\s*#\s*([A-Za-z_]\w*)?(.*)", re.S)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*(?![\w.])|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%()<>!?:~&|^,]))"
)
# names an OpenCL compiler may predefine (never known to be undefined)
_RESERVED = re.compile(
    r"_\w*|cl_\w+|CL_\w+|FP_\w+|(FLT|DBL|HALF|M)_\w+|MAXFLOAT|HUGE_VALF?|INFINITY|NAN"
    r"|CHAR_BIT|U?(CHAR|SCHAR|SHRT|INT|LONG)_(MAX|MIN)|(FULL|EMBEDDED)_PROFILE"
)
_CONDITIONALS = {"if", "ifdef", "ifndef", "elif", "else", "endif"}
_TEMPLATE_HEADER = "gtune optimizing stencil template"
MAX_TOKENS = 4000
"""Most tokens of one ``#if`` expression evaluated (a longer one is left undecided)."""
MAX_DEPTH = 64
"""Deepest nesting of macros and parentheses followed in one ``#if`` expression."""


class _Unsupported(Exception):
    """An expression this evaluator does not decide (it is kept for the compiler)."""


# -- lines ---------------------------------------------------------------------------------


@dataclass
class _Line:
    """One logical line: its text as written (continuations, and for a directive the
    comments it opens, included), its code (comments blanked, continuations joined),
    and for a directive its keyword and argument."""

    text: str
    code: str = ""
    keyword: str | None = None  # None: not a directive; "" a null directive
    argument: str = ""

    @property
    def comment_only(self) -> bool:
        return self.keyword is None and not self.code.strip() and bool(self.text.strip())


def _string_end(text: str, i: int) -> int:
    """Index past the string or character literal starting at ``i`` (or the line end)."""
    quote, j, n = text[i], i + 1, len(text)
    while j < n and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, n)


def _scan_line(source: str, start: int, in_comment: bool, directive: bool) -> tuple[int, str, bool]:
    """The end of the logical line at ``start``, its code, and whether a comment is open
    at its end. A directive's line runs on through a comment it opens, as in C."""
    code: list[str] = []
    i, n = start, len(source)
    while i < n:
        if in_comment:
            end = source.find("*/", i)
            newline = source.find("\n", i)
            if not directive and newline >= 0 and (end < 0 or newline < end):
                return newline, "".join(code), True
            in_comment = end < 0
            i = n if end < 0 else end + 2
            continue
        c = source[i]
        if c == "\n":
            break
        if c == "\\" and source.startswith("\n", i + 1):
            i += 2
        elif source.startswith("/*", i):
            in_comment = True
            code.append(" ")
            i += 2
        elif source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif c in "\"'":
            end = _string_end(source, i)
            code.append(source[i:end])
            i = end
        else:
            code.append(c)
            i += 1
    return i, "".join(code), in_comment


def logical_lines(source: str) -> list[_Line]:
    """``source`` as logical lines: a line continued by a backslash is one line, and so
    is a directive with a comment that runs over several lines (the comment is part of
    the directive, as in C); a ``#`` inside a comment starts no directive."""
    lines: list[_Line] = []
    start, n = 0, len(source)
    in_comment = False
    while start < n:
        directive = not in_comment and re.match(r"[ \t]*#", source[start : start + 200]) is not None
        end, code, in_comment = _scan_line(source, start, in_comment, directive)
        line = _Line(source[start:end], code)
        if directive:
            m = _DIRECTIVE.match(code)
            if m is not None:
                line.keyword = m[1] or ""
                line.argument = m[2].strip()
        lines.append(line)
        start = end + 1
    return lines


# -- what is known ---------------------------------------------------------------------------


@dataclass
class _Macros:
    """What is known of the macros at one point of the source."""

    bodies: dict[str, str | None] = field(default_factory=dict)  # None: value not known
    unknown: set[str] = field(default_factory=set)
    closed: bool = True  # a name not defined here is undefined
    memo: dict[str, int | None] = field(default_factory=dict)  # values in one #if

    def define(self, name: str, body: str | None, *, certain: bool) -> None:
        if certain:
            self.bodies[name] = body
            self.unknown.discard(name)
        else:
            self.bodies.pop(name, None)
            self.unknown.add(name)

    def undefine(self, name: str, *, certain: bool) -> None:
        self.bodies.pop(name, None)
        if certain:
            self.unknown.discard(name)
        else:
            self.unknown.add(name)

    def defined(self, name: str) -> bool | None:
        if name in self.bodies:
            return True
        if name in self.unknown or not self.closed or _RESERVED.fullmatch(name):
            return None
        return False

    def value(self, name: str, depth: int) -> int | None:
        known = self.defined(name)
        if known is None:
            return None
        if not known:
            return 0  # an identifier that is no macro is 0 in #if
        body = self.bodies[name]
        if body is None or depth > MAX_DEPTH:
            return None
        if name not in self.memo:  # each macro once: nested macros cost no more than flat
            try:
                self.memo[name] = _value(_parse(body), self, depth + 1)
            except _Unsupported:
                self.memo[name] = None
        return self.memo[name]


def _define_parts(argument: str) -> tuple[str, str | None] | None:
    """A ``#define``'s name and object-like body (None: a function-like macro)."""
    m = re.match(r"([A-Za-z_]\w*)(\()?(.*)", argument, re.S)
    if m is None:
        return None
    return m[1], None if m[2] else m[3].strip()


def option_macros(options: Iterable[str]) -> dict[str, str]:
    """The macros ``-D`` build options define, name -> value text (``-DX``: ``1``)."""
    out: dict[str, str] = {}
    items = list(options)
    for i, opt in enumerate(items):
        text = opt[2:] if opt.startswith("-D") else None
        if opt == "-D" and i + 1 < len(items):
            text = items[i + 1]
        if text:
            name, eq, value = text.partition("=")
            if _IDENT.fullmatch(name):
                out[name] = value if eq else "1"
    return out


# -- #if expressions -------------------------------------------------------------------------

_Node = tuple[
    Any, ...
]  # ("num", n) | ("name", s) | ("defined", s) | ("un", op, a) | ("bin", op, a, b)

_BINARY_LEVELS = {
    "||": 1,
    "&&": 2,
    "==": 3,
    "!=": 3,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
}
_ARITHMETIC = {"+": "Add", "-": "Sub", "*": "Mult", "/": "Div", "%": "Mod"}
_COMPARISONS = {"==": "Eq", "!=": "NotEq", "<": "Lt", "<=": "LtE", ">": "Gt", ">=": "GtE"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, text = 0, text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _Unsupported(text[pos:])
        kind = m.lastgroup or "op"
        out.append((kind, m[kind]))
        pos = m.end()
        if len(out) > MAX_TOKENS:
            raise _Unsupported("too long")
    return out


_PARSED: dict[str, _Node] = {}


def _parse(text: str) -> _Node:
    """The expression of an ``#if`` (C's precedence), or :class:`_Unsupported`."""
    cached = _PARSED.get(text)
    if cached is not None:
        return cached
    tokens = _tokens(text)
    node, pos = _parse_binary(tokens, 0, 1, 0)
    if pos != len(tokens):
        raise _Unsupported(text)
    if len(_PARSED) < 10_000:
        _PARSED[text] = node
    return node


def _parse_binary(
    tokens: list[tuple[str, str]], pos: int, level: int, depth: int
) -> tuple[_Node, int]:
    left, pos = _parse_unary(tokens, pos, depth)
    while pos < len(tokens):
        op = tokens[pos][1] if tokens[pos][0] == "op" else ""
        op_level = _BINARY_LEVELS.get(op)
        if op_level is None or op_level < level:
            break
        right, pos = _parse_binary(tokens, pos + 1, op_level + 1, depth + 1)
        left = ("bin", op, left, right)
    return left, pos


def _parse_unary(tokens: list[tuple[str, str]], pos: int, depth: int) -> tuple[_Node, int]:
    if depth > MAX_DEPTH or pos >= len(tokens):
        raise _Unsupported("too deep or incomplete")
    kind, text = tokens[pos]
    if kind == "num":
        return ("num", int(text, 0) if not re.fullmatch(r"0\d+", text) else int(text, 8)), pos + 1
    if kind == "id" and text == "defined":
        return _parse_defined(tokens, pos + 1)
    if kind == "id":
        if pos + 1 < len(tokens) and tokens[pos + 1] == ("op", "("):
            raise _Unsupported("a function-like macro")
        return ("name", text), pos + 1
    if text in ("!", "-", "+"):
        operand, pos = _parse_unary(tokens, pos + 1, depth + 1)
        return ("un", text, operand), pos
    if text == "(":
        inner, pos = _parse_binary(tokens, pos + 1, 1, depth + 1)
        if pos >= len(tokens) or tokens[pos] != ("op", ")"):
            raise _Unsupported("unbalanced parentheses")
        return inner, pos + 1
    raise _Unsupported(text)


def _parse_defined(tokens: list[tuple[str, str]], pos: int) -> tuple[_Node, int]:
    paren = pos < len(tokens) and tokens[pos] == ("op", "(")
    pos += paren
    if pos >= len(tokens) or tokens[pos][0] != "id":
        raise _Unsupported("defined without a name")
    name = tokens[pos][1]
    pos += 1
    if paren:
        if pos >= len(tokens) or tokens[pos] != ("op", ")"):
            raise _Unsupported("defined( without )")
        pos += 1
    return ("defined", name), pos


def _value(node: _Node, macros: _Macros, depth: int = 0) -> int | None:
    """``node``'s value, None where it depends on what is not known. ``&&`` and ``||``
    decide on one side where they can, as C evaluates them."""
    kind = node[0]
    if kind == "num":
        return int(node[1])
    if kind == "name":
        return macros.value(node[1], depth)
    if kind == "defined":
        known = macros.defined(node[1])
        return None if known is None else int(known)
    if kind == "un":
        v = _value(node[2], macros, depth)
        if v is None:
            return None
        return int(not v) if node[1] == "!" else (-v if node[1] == "-" else v)
    op, left, right = node[1], node[2], node[3]
    a = _value(left, macros, depth)
    if op in ("&&", "||"):
        decisive = 0 if op == "&&" else 1
        if a is not None and bool(a) == bool(decisive):
            return decisive
        b = _value(right, macros, depth)
        if b is not None and bool(b) == bool(decisive):
            return decisive
        return None if a is None or b is None else 1 - decisive
    b = _value(right, macros, depth)
    if a is None or b is None:
        return None
    if op in _COMPARISONS:
        compare = next(c for t, c in COMPARE.items() if t.__name__ == _COMPARISONS[op])
        return int(bool(compare.apply(a, b)))
    binary = next(c for t, c in BINARY.items() if t.__name__ == _ARITHMETIC[op])
    try:
        result = binary.scalar(a, b)
    except Undefined:
        return None  # division by zero: the compiler's to report
    return int(result)


def evaluate(text: str, macros: _Macros) -> bool | None:
    """An ``#if`` expression's truth, None where it cannot be decided here."""
    macros.memo.clear()  # the macros may have changed since the last #if
    try:
        v = _value(_parse(text), macros)
    except _Unsupported:
        return None
    return None if v is None else bool(v)


# -- resolving the conditionals --------------------------------------------------------------


@dataclass
class _Frame:
    """One ``#if`` group being read."""

    outer_live: bool  # the text around the group is kept
    outer_certain: bool  # ... and reached whatever the unknown values are
    live: bool = False  # the current branch is kept
    taken: bool = False  # a branch known to be true was entered: the rest are dead
    kept: bool = False  # the group's opening directive was kept (it stays a group)


@dataclass
class _Out:
    """A kept logical line, with what the later passes need to know of it."""

    index: int  # the logical line of the source it is
    text: str
    keyword: str | None = None
    name: str = ""  # the macro of a #define or #undef
    names: frozenset[str] = frozenset()  # the identifiers it uses
    comment: bool = False  # a line of comment only


def _identifiers(code: str) -> frozenset[str]:
    """The identifiers of a line's code (strings left out)."""
    return frozenset(_IDENT.findall(re.sub(r"\"(\\.|[^\"\\\n])*\"|'(\\.|[^'\\\n])*'", " ", code)))


class _Resolver:
    """The conditionals of one source resolved, line by line."""

    def __init__(self, macros: _Macros) -> None:
        self.macros = macros
        self.frames: list[_Frame] = []
        self.out: list[_Out] = []
        self.index = 0

    @property
    def live(self) -> bool:
        return not self.frames or self.frames[-1].live

    @property
    def certain(self) -> bool:
        """Whether the current line is reached whatever the unknown values are."""
        if not self.frames:
            return True
        top = self.frames[-1]
        return top.live and top.outer_certain and not top.kept

    def line(self, index: int, line: _Line) -> None:
        self.index = index
        if line.keyword in _CONDITIONALS:
            self.conditional(line)
        elif self.live:
            self.keep(line)

    def keep(self, line: _Line, text: str | None = None) -> None:
        key, arg = line.keyword, line.argument
        name = ""
        if key in ("define", "undef"):
            parts = _define_parts(arg)
            if parts is not None:
                name = parts[0]
                if key == "define":
                    self.macros.define(name, parts[1], certain=self.certain)
                else:
                    self.macros.undefine(name, certain=self.certain)
        elif key == "include":
            self.macros.closed = False  # text not seen here may define anything
        names = _identifiers(line.code if key is None else arg) - {name, "defined"}
        text = line.text if text is None else text
        self.out.append(_Out(self.index, text, key, name, names, line.comment_only))

    def conditional(self, line: _Line) -> None:
        key = line.keyword
        if key in ("if", "ifdef", "ifndef"):
            outer_live = self.live
            self.frames.append(_Frame(outer_live, self.certain and outer_live))
            self.branch(line, self.truth(line) if outer_live else False, opening=True)
        elif not self.frames:
            self.keep(line)  # unbalanced: the compiler says so
        elif key in ("elif", "else"):
            frame = self.frames[-1]
            if not frame.outer_live or frame.taken:
                frame.live = False
            else:
                self.branch(line, True if key == "else" else self.truth(line), opening=False)
        else:  # endif
            frame = self.frames.pop()
            if frame.kept:
                self.keep(line)

    def truth(self, line: _Line) -> bool | None:
        if line.keyword in ("ifdef", "ifndef"):
            m = _IDENT.match(line.argument)
            known = None if m is None else self.macros.defined(m[0])
            return None if known is None else known == (line.keyword == "ifdef")
        return evaluate(line.argument, self.macros)

    def branch(self, line: _Line, truth: bool | None, *, opening: bool) -> None:
        """Enter the branch ``line`` opens: dropped, kept as it is, or made plain."""
        frame = self.frames[-1]
        frame.live = truth is not False and frame.outer_live
        if not frame.live:
            return
        if truth is True:
            frame.taken = True
            if frame.kept:  # after kept branches, the first true one is their #else
                self.keep(line, line.text if line.keyword == "else" else "#else")
            return
        text = None
        if not frame.kept and not opening:
            # the first undecided branch after dropped ones opens the group
            text = re.sub(r"^(\s*#\s*)elif", r"\1if", line.text, count=1)
        frame.kept = True
        self.keep(line, text)


def _groups(lines: list[_Line]) -> dict[int, int]:
    """Each ``#if``'s line -> its ``#endif``'s line."""
    ends: dict[int, int] = {}
    stack: list[int] = []
    for i, line in enumerate(lines):
        if line.keyword in ("if", "ifdef", "ifndef"):
            stack.append(i)
        elif line.keyword == "endif" and stack:
            ends[stack.pop()] = i
    return ends


# -- what nothing uses, and tidying ---------------------------------------------------------


def _used(lines: list[_Out]) -> set[str]:
    """The identifiers the kept code uses, through the macros it uses (and the names
    ``##`` may paste from them: ``CAT(LANES, VX)`` uses ``LANES4`` when ``VX`` is 4)."""
    bodies: dict[str, set[str]] = {}
    pasting: set[str] = set()
    for ln in lines:
        if ln.keyword == "define" and ln.name:
            bodies.setdefault(ln.name, set()).update(ln.names)
            if "##" in ln.text:
                pasting.add(ln.name)
    used: set[str] = set()
    todo = [n for ln in lines if ln.keyword not in ("define", "undef") for n in ln.names]
    while todo:
        while todo:
            name = todo.pop()
            if name not in used:
                used.add(name)
                todo.extend(bodies.get(name, ()))
        if used & pasting:
            pieces = used | {str(v) for v in range(65)}
            todo = [
                name
                for name in set(bodies) - used
                if any(name[:i] in used and name[i:] in pieces for i in range(1, len(name)))
            ]
    return used


def _prune(lines: list[_Out]) -> list[_Out]:
    """``lines`` less the ``#define``s and ``#undef``s of macros nothing uses."""
    while True:
        used = _used(lines)
        kept = [
            ln
            for ln in lines
            if ln.keyword not in ("define", "undef") or not ln.name or ln.name in used
        ]
        if len(kept) == len(lines):
            return kept
        lines = kept


# -- macros that only rename, inlined ---------------------------------------------------

_OBJECT_ALIAS = re.compile(r"#\s*define\s+(\w+)[ \t]+([A-Za-z_]\w*)\s*$")
_FUNCTION_ALIAS = re.compile(r"#\s*define\s+(\w+)\(([\w\s,]*)\)[ \t]+(.+?)\s*$")
_Alias = tuple[list[str] | None, str | None]  # (parameters or None, the name it forwards to)


def _alias(text: str) -> tuple[str, _Alias] | None:
    """A ``#define`` that only renames: ``#define SRC src`` (a name for a name),
    ``#define CLX(i) (i)`` (the identity) or ``#define SCLX(i) CLX(i)`` (the same
    arguments passed on); None for any other."""
    m = _OBJECT_ALIAS.match(text.strip())
    if m:
        return m[1], (None, m[2])
    m = _FUNCTION_ALIAS.match(text.strip())
    if not m:
        return None
    params = [p.strip() for p in m[2].split(",")] if m[2].strip() else []
    body = m[3]
    if len(params) == 1 and body == f"({params[0]})":
        return m[1], (params, None)
    forward = re.fullmatch(r"(\w+)\(\s*" + r"\s*,\s*".join(map(re.escape, params)) + r"\s*\)", body)
    if params and forward:
        return m[1], (params, forward[1])
    return None


def _aliases(out: list[_Out], keep: set[str]) -> dict[str, _Alias]:
    """The renaming macros of ``out`` safe to inline: defined once, outside any
    conditional left in, never tested (``defined``, ``#ifdef``), pasted or stringified,
    and not a configuration parameter, size or build option (``keep``: readers look
    those up by name)."""
    depth, found, defined = 0, {}, Counter[str]()
    for ln in out:
        if ln.keyword in ("if", "ifdef", "ifndef"):
            depth += 1
        elif ln.keyword == "endif":
            depth -= 1
        if ln.keyword in ("define", "undef") and ln.name:
            defined[ln.name] += 1
        if ln.keyword == "define" and depth == 0 and ln.name not in keep:
            alias = _alias(ln.text)
            if alias is not None:
                found[alias[0]] = alias[1]
    tested = {n for ln in out if ln.keyword in ("if", "ifdef", "ifndef", "elif") for n in ln.names}
    pasted: set[str] = set()
    for ln in out:
        for groups in re.findall(r"(\w+)\s*##|##\s*(\w+)|#\s*(\w+)", ln.text):
            pasted.update(g for g in groups if g)
    # a forwarding macro in front of one that pastes (``CAT(a, b) CAT_(a, b)``) is the
    # extra expansion that lets its arguments expand first: it stays
    pastes = {
        ln.name for ln in out if ln.keyword == "define" and "#" in ln.text.split(ln.name, 1)[-1]
    }
    return {
        n: a
        for n, a in found.items()
        if defined[n] == 1 and n not in tested and n not in pasted and a[1] not in pastes
    }


def _call_args(text: str, open_at: int) -> tuple[list[str], int] | None:
    """The arguments of the call whose ``(`` is at ``open_at``, and the index after its
    ``)``; None when the parentheses do not close on the line."""
    depth, start, args = 0, open_at + 1, []
    for i in range(open_at, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append(text[start:i])
                return args, i + 1
        elif c == "," and depth == 1:
            args.append(text[start:i])
            start = i + 1
    return None


def _replace_alias(text: str, name: str, alias: _Alias) -> str:
    params, target = alias
    if params is None:
        return re.sub(rf"(?<![\w#]){re.escape(name)}(?![\w#])", str(target), text)
    out, pos = [], 0
    for m in re.finditer(rf"(?<![\w#]){re.escape(name)}\s*\(", text):
        if m.start() < pos:
            continue
        call = _call_args(text, m.end() - 1)
        if call is None or len(call[0]) != len(params):
            continue
        args, end = call
        inner = ", ".join(a.strip() for a in args)
        out.append(text[pos : m.start()])
        out.append(f"({inner})" if target is None else f"{target}({inner})")
        pos = end
    return "".join(out) + text[pos:]


def _inline_aliases(out: list[_Out], keep: set[str]) -> list[_Out]:
    """``out`` with the macros that only rename (:func:`_aliases`) replaced where they
    are used and their ``#define``s dropped, until none is left: the reader sees
    ``src`` and ``(x)`` instead of a chain of names (``cpp_difference`` checks the
    result against the whole source)."""
    for _ in range(8):
        aliases = _aliases(out, keep)
        if not aliases:
            break
        result = []
        for ln in out:
            if ln.keyword == "define" and ln.name in aliases:
                continue
            text, names = ln.text, ln.names
            for _depth in range(8 if not ln.comment else 0):  # an alias of an alias too
                todo = [n for n in aliases if n in names]
                if not todo:
                    break
                for name in todo:
                    text = _replace_alias(text, name, aliases[name])
                names = _identifiers(text)
            result.append(replace(ln, text=text, names=names))
        out = result
    return out


def _drop_orphan_comments(out: list[_Out], source: list[_Line]) -> list[_Out]:
    """Comments right above a line (or an ``#if`` group) that was dropped go with it: a
    comment on a macro nothing uses, or on a group whose every branch is dead."""
    kept = {ln.index for ln in out}
    ordered = sorted(kept)
    ends = _groups(source)
    drop: set[int] = set()
    # the file's own header comment (above its first code or conditional) always stays
    i = next(
        (
            k
            for k, ln in enumerate(source)
            if ln.keyword not in (None, "define") or (ln.code.strip() and ln.keyword is None)
        ),
        len(source),
    )
    while i < len(source):
        if not (source[i].comment_only and i in kept):
            i += 1
            continue
        j = i
        while j < len(source) and source[j].comment_only:
            j += 1
        subject = source[j] if j < len(source) else None
        if subject is not None and subject.text.strip():
            if subject.keyword in ("if", "ifdef", "ifndef") and j in ends:
                first = bisect.bisect_right(ordered, j)
                orphan = first >= len(ordered) or ordered[first] >= ends[j]
            elif subject.keyword in ("elif", "else", "endif"):
                orphan = False
            else:
                orphan = j not in kept
            if orphan:
                drop.update(range(i, j))
        i = j
    return [ln for ln in out if ln.index not in drop]


def _tidy(text: str) -> str:
    """Trailing spaces gone, blank-line runs closed up, no blank line just inside a
    brace; the template's own header comment (what every technique does) dropped."""
    text = re.sub(r"[ \t]+$", "", text, flags=re.M)
    text = re.sub(r"(?ms)^/\*(?:(?!\*/).)*" + _TEMPLATE_HEADER + r".*?\*/\n", "", text, count=1)
    text = re.sub(r"\n{3,}", "\n\n", text)
    text = re.sub(r"\{\n\n+", "{\n", text)
    text = re.sub(r"\n\n+(\s*\})", r"\n\1", text)
    return text.strip("\n") + "\n"


def specialise_source(
    source: str,
    values: Mapping[str, int],
    build_time: Iterable[str] = (),
    build_options: Iterable[str] = (),
) -> str:
    """``source`` specialised: the conditionals ``values`` (the configuration, given by
    ``#define`` at the source's top or here) decide resolved, the dead branches and
    the macros nothing uses dropped, the rest as written. ``build_time``: macros passed
    with ``-D`` when it is built, values unknown here (the problem size);
    ``build_options``: the kernel's fixed options (their ``-D`` macros count)."""
    macros = _Macros()
    for name in build_time:
        macros.bodies[name] = None
    macros.bodies.update(option_macros(build_options))
    for name, v in values.items():
        macros.bodies[name] = str(int(v))
    lines = logical_lines(source)
    resolver = _Resolver(macros)
    for i, line in enumerate(lines):
        resolver.line(i, line)
    keep = {*values, *build_time, *option_macros(build_options)}
    inlined = _prune(_inline_aliases(_prune(resolver.out), keep))
    kept = _drop_orphan_comments(inlined, lines)
    return _tidy("\n".join(ln.text for ln in kept))


def cpp_difference(
    original: str,
    specialised: str,
    defines: Mapping[str, int],
    build_options: Iterable[str] = (),
) -> str | None:
    """How ``specialised`` differs from ``original`` once the real C preprocessor has run
    over both with the same macros (``defines``: the build-time macros' values, and the
    ``-D`` and ``-I`` of ``build_options``); None when they are the same tokens."""
    from gtune.clsource import preprocess  # runs cpp: loaded where a check is made

    options = list(build_options)
    macros: dict[str, object] = dict(option_macros(options))
    macros.update({k: int(v) for k, v in defines.items()})
    includes = [o[2:] for o in options if o.startswith("-I") and len(o) > 2]
    before = preprocess(original, macros, include_dirs=includes, where="the original").split()
    after = preprocess(specialised, macros, include_dirs=includes, where="the specialised").split()
    if before == after:
        return None
    at = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), None)
    if at is None:
        return f"{len(before)} tokens against {len(after)}"
    return f"token {at}: {' '.join(before[at : at + 8])!r} against {' '.join(after[at : at + 8])!r}"


__all__ = ["cpp_difference", "logical_lines", "specialise_source"]
