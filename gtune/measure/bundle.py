"""Bundled builds: several configurations of one kernel built as one OpenCL program.

A build has a fixed cost beside the work of compiling the kernel itself (NVIDIA's
driver: some 0.07 s of CPU of the 0.2 s one configuration takes); building K
configurations in one program pays it once. :func:`bundle` makes that program's
source: one copy of the kernel source per configuration, each preceded by its ``-D``
values as ``#define``\\ s and by a macro renaming every name the source declares at
program scope (kernels, other functions, typedef names, struct/union/enum tags, enum
constants, program-scope variables such as ``__constant`` tables) to a name of its
own (``name__gtb<i>``), and followed by an ``#undef`` of every macro the copy could
have defined (the source's own ``#define``\\ s, include guards included, the
configuration's ``-D`` names and the renaming macros). Renaming by macros is a
consistent substitution of one identifier by another, so each copy means what the
source means built alone with its options; the kernel of copy ``i`` is
``Bundle.names[i]``.

What cannot be bundled safely is refused with a reason (callers then build singly):
an ``#include`` (a header's declarations and guards are out of sight), ``#pragma
once``, options other than ``-D`` that differ between configurations, ``-U``
options, a ``-D`` name that is also a name the source declares, and a source that
already uses the renaming suffix. A source whose declarations escape the scanner
(one made by a macro, say) fails to build as a bundle; the compile worker then
builds each configuration singly (see ``gtune.measure._worker``).

Pure text processing: no pyopencl here.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

SUFFIX = "__gtb"
"""What a copy's names end in, before the copy's index."""

_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<punct>\S)
    """,
    re.VERBOSE | re.DOTALL,
)
_COMMENT_OR_STRING = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.DOTALL
)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)(.*)$")
_CONTINUED = re.compile(r"\\[ \t]*\n")

# Names never renamed: keywords, qualifiers and the types of OpenCL C.
_KEYWORDS = frozenset(
    """
    auto break case char const continue default do double else enum extern float for
    goto if inline int long register restrict return short signed sizeof static struct
    switch typedef union unsigned void volatile while bool half size_t ptrdiff_t
    intptr_t uintptr_t uchar ushort uint ulong event_t sampler_t image1d_t image2d_t
    image3d_t image1d_array_t image2d_array_t image1d_buffer_t queue_t ndrange_t
    clk_event_t reserve_id_t pipe kernel __kernel global __global local __local
    constant __constant private __private generic __generic read_only __read_only
    write_only __write_only read_write __read_write __attribute__ _Alignas _Atomic
    _Bool _Static_assert alignof __alignof__ typeof
    """.split()  # noqa: SIM905 (a list of words)
)
_VECTOR = re.compile(r"(?:u?char|u?short|u?int|u?long|float|double|half|bool)(?:2|3|4|8|16)")
_SWIZZLE = re.compile(r"(?:[xyzw]{1,4}|[rgba]{1,4}|[sS][0-9a-fA-F]+|lo|hi|even|odd)")


@dataclass(frozen=True)
class Bundle:
    """The program of several configurations: ``source`` built with ``options`` holds
    configuration ``i``'s kernel under ``names[i]``."""

    source: str
    options: list[str]
    names: list[str]


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found in a source: the macros it defines, the names it declares
    at program scope (to rename), or why it cannot be bundled (``why``)."""

    macros: frozenset[str]
    names: frozenset[str]
    why: str = ""


def _logical_lines(source: str) -> list[str]:
    """The source's lines with backslash continuations joined (comments kept)."""
    return _CONTINUED.sub(" ", source).split("\n")


def _strip_comments(source: str) -> str:
    """``source`` with each comment replaced by a space (the newlines of a block
    comment kept), strings and character literals left alone."""

    def keep(m: re.Match[str]) -> str:
        text = m.group()
        if text.startswith("//"):
            return " "
        if text.startswith("/*"):
            return " " + "\n" * text.count("\n")
        return text

    return _COMMENT_OR_STRING.sub(keep, source)


def _tokens(text: str) -> list[str]:
    return [m.group() for m in _TOKEN.finditer(text) if m.lastgroup != "comment"]


def _drop_attributes(tokens: list[str]) -> list[str]:
    """``tokens`` without ``__attribute__((...))`` groups."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] == "__attribute__" and i + 1 < len(tokens) and tokens[i + 1] == "(":
            depth, i = 0, i + 1
            while i < len(tokens):
                depth += {"(": 1, ")": -1}.get(tokens[i], 0)
                i += 1
                if depth == 0:
                    break
            continue
        out.append(tokens[i])
        i += 1
    return out


def _is_name(tok: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_]\w*", tok)) and tok not in _KEYWORDS


def _declared(tokens: list[str]) -> list[str]:
    """The names one program-scope declaration (its tokens, bodies of structs and
    initialisers left out) declares: a function's name, or each declarator's."""
    tokens = _drop_attributes(tokens)
    names: list[str] = []
    part: list[str] = []
    depth = 0
    for tok in [*tokens, ","]:
        if tok in "([":
            depth += 1
        elif tok in ")]":
            depth -= 1
        if tok == "," and depth == 0:
            names += _declarator(part)
            part = []
        else:
            part.append(tok)
    return names


def _declarator(part: list[str]) -> list[str]:
    if "=" in part:
        part = part[: part.index("=")]
    if "(" in part:  # a function: the name before its parameters
        i = part.index("(")
        return [part[i - 1]] if i > 0 and _is_name(part[i - 1]) else []
    depth = 0
    last = ""
    for tok in part:
        if tok == "[":
            depth += 1
        elif tok == "]":
            depth -= 1
        elif depth == 0 and _is_name(tok):
            last = tok
    return [last] if last else []


@functools.lru_cache(maxsize=16)
def scan(source: str, kernel_name: str) -> Scan:
    """The macros ``source`` defines and the names it declares at program scope (the
    kernel ``kernel_name`` among them), or why it cannot be bundled."""
    text = _strip_comments(source)
    macros: set[str] = set()
    aliases: dict[str, str] = {}  # object-like macros whose body is one name
    code: list[str] = []  # the lines that are not directives
    branch_marks: list[tuple[str, int]] = []
    for line in _logical_lines(text):
        m = _DIRECTIVE.match(line)
        if not m:
            code.append(line)
            continue
        word, rest = m.group(1), m.group(2).strip()
        if word == "include":
            return Scan(frozenset(), frozenset(), f"it includes {rest}")
        if word == "pragma" and rest.split()[:1] == ["once"]:
            return Scan(frozenset(), frozenset(), "it holds #pragma once")
        if word == "define":
            d = re.match(r"([A-Za-z_]\w*)(\(?)\s*(.*)$", rest)
            if d:
                macros.add(d.group(1))
                if not d.group(2) and re.fullmatch(r"[A-Za-z_]\w*", d.group(3).strip()):
                    aliases[d.group(1)] = d.group(3).strip()
        if word in ("if", "ifdef", "ifndef", "elif", "else", "endif"):
            branch_marks.append((word, len(code)))
            code.append("")  # a marker line: the conditional's place among the code
    names: set[str] = {kernel_name}
    _program_scope(code, branch_marks, names)
    for name in list(names):  # a declarator that is a macro: the name it stands for
        seen = set()
        while name in aliases and name not in seen:
            seen.add(name)
            name = aliases[name]
        if _is_name(name):
            names.add(name)
    names -= macros
    if kernel_name in macros:
        return Scan(frozenset(), frozenset(), f"its kernel name {kernel_name} is a macro")
    tokens = set(_tokens(text))
    if any(SUFFIX in t for t in tokens):
        return Scan(frozenset(), frozenset(), f"it already uses names holding {SUFFIX}")
    swizzled = _member_names(text) & {n for n in names if _SWIZZLE.fullmatch(n)}
    if swizzled:
        return Scan(
            frozenset(),
            frozenset(),
            f"{sorted(swizzled)[0]} names both a declaration and a vector component",
        )
    return Scan(frozenset(macros), frozenset(n for n in names if not _VECTOR.fullmatch(n)))


def _member_names(text: str) -> set[str]:
    toks = _tokens(text)
    return {b for a, b in itertools.pairwise(toks) if a in (".", "->")}


def _program_scope(code: list[str], marks: list[tuple[str, int]], names: set[str]) -> None:
    """Add to ``names`` what the code lines declare at program scope. Each branch of a
    conditional starts at the brace depth its ``#if`` had, so branches that open a
    body differently do not throw the depth off."""
    where = {line: word for word, line in marks}
    stack: list[int] = []
    depth = 0
    decl: list[str] = []  # the current program-scope declaration's tokens
    body_kind = ""  # what the body being skipped belongs to: "function", "enum", "other"
    enum_expect = False
    for n, line in enumerate(code):
        word = where.get(n)
        if word in ("if", "ifdef", "ifndef"):
            stack.append(depth)
            continue
        if word in ("elif", "else"):
            if stack:
                depth = stack[-1]
            continue
        if word == "endif":
            if stack:
                stack.pop()
            continue
        for tok in _tokens(line):
            if depth == 0:
                if tok == "{":
                    plain = _drop_attributes(decl)
                    kinds = [t for t in plain if t in ("struct", "union", "enum")]
                    if plain and plain[-1] == ")" and "(" in plain and not kinds:
                        names.update(_declared(decl))
                        body_kind, decl = "function", []
                    elif "=" in plain:
                        body_kind = "other"  # an initialiser
                    else:
                        if kinds:
                            i = plain.index(kinds[-1])
                            if i + 1 < len(plain) and _is_name(plain[i + 1]):
                                names.add(plain[i + 1])  # the tag
                        body_kind = "enum" if kinds and kinds[-1] == "enum" else "other"
                        enum_expect = True
                        decl.append("{}")  # the body stands in the declaration
                    depth = 1
                elif tok == ";":
                    plain = _drop_attributes(decl)
                    for kind in ("struct", "union", "enum"):
                        if kind in plain:
                            i = plain.index(kind)
                            if i + 1 < len(plain) and _is_name(plain[i + 1]):
                                names.add(plain[i + 1])
                    # "struct tag x;": the tag is no declarator
                    kept = [t for t in _strip_tags(decl) if t != "{}"]
                    names.update(_declared(kept))
                    decl = []
                else:
                    decl.append(tok)
                continue
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0:
                    if body_kind == "function":
                        decl = []
                    body_kind = ""
                continue
            if body_kind == "enum" and depth == 1:
                if enum_expect and _is_name(tok):
                    names.add(tok)
                enum_expect = tok == ","


def _strip_tags(tokens: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for tok in tokens:
        if skip:
            skip = False
            if _is_name(tok):
                continue
        if tok in ("struct", "union", "enum"):
            skip = True
            out.append(tok)
            continue
        out.append(tok)
    return out


_DEFINE_OPTION = re.compile(r"([A-Za-z_]\w*)(\([\w\s,.]*\))?(?:=(.*))?")


def _split_options(options: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]] | str:
    """``(-D name, value) pairs, the other options`` of one configuration, or why not."""
    defines: list[tuple[str, str]] = []
    other: list[str] = []
    items = list(options)
    i = 0
    while i < len(items):
        opt = str(items[i])
        if opt == "-D" and i + 1 < len(items):
            opt = "-D" + str(items[i + 1])
            i += 1
        i += 1
        if opt.startswith("-U"):
            return f"the option {opt} undefines a macro"
        if not opt.startswith("-D"):
            other.append(opt)
            continue
        m = _DEFINE_OPTION.fullmatch(opt[2:])
        if not m or "\n" in opt:
            return f"the option {opt!r} defines no macro a #define can"
        # "#define NAME value" or, for "-DF(x)=...", "#define F(x) value"; -DNAME is 1
        value = "1" if m.group(3) is None else m.group(3)
        defines.append((m.group(1), f"{m.group(2) or ''} {value}"))
    return defines, other


def bundle(source: str, kernel_name: str, options: Sequence[Sequence[str]]) -> Bundle | str:
    """The program building ``kernel_name`` of ``source`` once per option list of
    ``options`` (``-DNAME=value`` options; any other option must be the same in every
    list), or, as a string, why it cannot be bundled safely."""
    found = scan(source, kernel_name)
    if found.why:
        return found.why
    if not options:
        return "no configuration"
    parts: list[str] = []
    common: list[str] | None = None
    names: list[str] = []
    renamed = sorted(found.names)
    body = source if source.endswith("\n") else source + "\n"
    for i, opts in enumerate(options):
        split = _split_options(opts)
        if isinstance(split, str):
            return split
        defines, other = split
        if common is None:
            common = other
        elif other != common:
            return (
                f"the options other than -D differ between configurations "
                f"({' '.join(common)} / {' '.join(other)})"
            )
        clash = sorted(found.names & {n for n, _ in defines})
        if clash:
            return f"-D{clash[0]} defines a name the source declares"
        suffix = f"{SUFFIX}{i}"
        parts += [f"#define {n}{v}" for n, v in defines]
        parts += [f"#define {n} {n}{suffix}" for n in renamed]
        parts += ["#line 1", body]
        undone = found.macros | {n for n, _ in defines} | found.names
        parts += [f"#undef {n}" for n in sorted(undone)]
        names.append(kernel_name + suffix)
    return Bundle("\n".join(parts) + "\n", list(common or []), names)


__all__ = ["SUFFIX", "Bundle", "Scan", "bundle", "scan"]
