"""OpenCL C source analysis: what a kernel's text says, read without compiling it.

The C preprocessor (``cpp``, with the macros an OpenCL 1.2 compiler predefines), then
bracket matching and regular expressions over the comment-free, preprocessed text: the
``__kernel`` functions (name, parameter declarations, attributes, body), the helper
functions, ``typedef`` aliases, a parameter declaration's type and address space, and
how a body uses each pointer (read, written, both). Plain mode (:mod:`gtune.plain`)
builds a description from it; a description (:mod:`gtune.description`) checks its
argument count against it. This module knows nothing of descriptions or kernels' models.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtune.exceptions import EnvironmentProblem, InputError

QUALIFIERS = {
    "__global",
    "global",
    "__constant",
    "constant",
    "const",
    "__const",
    "restrict",
    "__restrict",
    "__restrict__",
    "volatile",
    "__private",
    "private",
    "__read_only",
    "__write_only",
    "read_only",
    "write_only",
}

# Macros the OpenCL compiler predefines (OpenCL C 1.2), so #if on them reads as on a device.
_OPENCL_DEFINES = {
    "__OPENCL_VERSION__": "120",
    "__OPENCL_C_VERSION__": "120",
    "CL_VERSION_1_0": "100",
    "CL_VERSION_1_1": "110",
    "CL_VERSION_1_2": "120",
    "__ENDIAN_LITTLE__": "1",
    "__IMAGE_SUPPORT__": "1",
    "cl_khr_fp64": "1",
}


# ---------------------------------------------------------------------------------
# Preprocessing


def strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", " ", source)


def preprocess(
    source: str,
    defines: Mapping[str, Any],
    *,
    include_dirs: Sequence[str | Path] = (),
    where: str = "",
    redefined: list[tuple[str, int]] | None = None,
    headers: list[str] | None = None,
) -> str:
    """``source`` after the C preprocessor, with ``defines`` as ``-DNAME=value``.

    GCC's ``cpp`` in a mode that predefines nothing of the host (``-undef``) and reads
    no system headers, plus the macros an OpenCL 1.2 compiler defines. With
    ``redefined``, the macros of ``defines`` that the source itself redefines are
    appended to it as (name, line); with ``headers``, the files it includes.
    """
    found = [
        [path, *flags]
        for name, flags in (("cpp", []), ("gcc", ["-E"]), ("clang", ["-E"]), ("cc", ["-E"]))
        if (path := shutil.which(name)) is not None
    ]
    if not found:
        raise EnvironmentProblem(
            "the C preprocessor `cpp` is needed to read a plain kernel",
            hint="install it (Debian/Ubuntu: apt-get install cpp; ./bootstrap.sh does this)",
        )
    cmd = [*found[0], "-P", "-undef", "-nostdinc", "-x", "c", "-std=c99"]
    if redefined is None:
        cmd.append("-w")
    if headers is not None:
        cmd.append("-H")
    for name, value in {**_OPENCL_DEFINES, **{k: str(v) for k, v in defines.items()}}.items():
        cmd.append(f"-D{name}={value}")
    for d in include_dirs:
        cmd += ["-I", str(d)]
    cmd.append("-")
    try:
        done = subprocess.run(
            cmd, input=source, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProblem(f"the C preprocessor failed to run: {exc}") from None
    if done.returncode != 0:
        lines = [ln.replace("<stdin>", where or "kernel") for ln in done.stderr.splitlines()]
        raise InputError(
            "the C preprocessor rejects the kernel: " + "; ".join(lines[:3]), source=where or None
        )
    if headers is not None:
        headers += [m[1] for m in re.finditer(r"(?m)^\.+ (.+)$", done.stderr)]
    if redefined is not None:
        for m in re.finditer(r"<stdin>:(\d+)(?::\d+)?: warning: \"(\w+)\" redefined", done.stderr):
            if m[2] in defines:
                redefined.append((m[2], int(m[1])))
    return done.stdout


# ---------------------------------------------------------------------------------
# Finding kernels


@dataclass
class KernelDecl:
    """One ``__kernel`` function: its name, parameter declarations, attributes and body."""

    name: str
    params: list[str]
    attributes: str
    body: str


def match_bracket(text: str, start: int, open_: str, close: str) -> int:
    """Index just past the bracket matching the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


_KERNEL_START = re.compile(r"\b(?:__kernel|kernel)\b")
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\(")


def find_kernels(text: str) -> dict[str, KernelDecl]:
    """Every ``__kernel`` function in (comment-free) C text."""
    found: dict[str, KernelDecl] = {}
    for m in _KERNEL_START.finditer(text):
        i = m.end()
        attrs: list[str] = []
        name = None
        while i < len(text):
            rest = text[i:]
            ws = len(rest) - len(rest.lstrip())
            i += ws
            a = _ATTRIBUTE.match(text, i)
            if a:
                end = match_bracket(text, a.end() - 2, "(", ")")
                attrs.append(text[i:end])
                i = end
                continue
            w = re.compile(r"[A-Za-z_]\w*").match(text, i)
            if not w:
                break
            i = w.end()
            if w.group() == "void":
                continue
            name = w.group()
            break
        if name is None:
            continue
        p = re.compile(r"\s*\(").match(text, i)
        if not p:
            continue
        close = match_bracket(text, p.end() - 1, "(", ")")
        params = split_top(text[p.end() : close - 1])
        if params == ["void"]:
            params = []
        brace = text.find("{", close)
        between = text[close:brace] if brace >= 0 else ""
        if brace < 0 or ";" in between:
            continue  # a declaration, not a definition
        if _ATTRIBUTE.search(between):
            attrs.append(between)
        end = match_bracket(text, brace, "{", "}")
        found[name] = KernelDecl(name, params, " ".join(attrs), text[brace + 1 : end - 1])
    return found


def kernel_signatures(source: str) -> dict[str, list[str]]:
    """Kernel function names and their raw parameter declarations."""
    return {k: d.params for k, d in find_kernels(strip_comments(source)).items()}


def typedefs(text: str) -> dict[str, str]:
    """Simple ``typedef T name;`` aliases, resolved through each other."""
    out: dict[str, str] = {}
    for m in re.finditer(r"\btypedef\s+([A-Za-z_][\w\s]*?)\s+([A-Za-z_]\w*)\s*;", text):
        out[m.group(2)] = " ".join(m.group(1).split())
    for _ in range(8):
        out = {k: out.get(v, v) for k, v in out.items()}
    return out


_STRUCT = re.compile(r"\b(typedef\s+)?struct\s+(?:([A-Za-z_]\w*)\s*)?\{")


def struct_fields(text: str, types: Mapping[str, str]) -> dict[str, list[tuple[str, str]]]:
    """The structs a (comment-free, preprocessed) text defines, by every name a
    parameter may give them (``grid_t`` of ``typedef struct {...} grid_t;``, ``struct
    grid`` of ``struct grid {...};``): their fields in order, as (C type, name), the
    type's ``typedef`` aliases resolved (``double dx, dy;`` is two fields; an array
    field keeps its brackets in its name, ``c[3]``)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for m in _STRUCT.finditer(text):
        end = match_bracket(text, m.end() - 1, "{", "}")
        fields: list[tuple[str, str]] = []
        for decl in text[m.end() : end - 1].split(";"):
            parts = split_top(decl)
            if not parts:
                continue
            first = re.fullmatch(r"(.*?)([\s*]*[A-Za-z_]\w*\s*(?:\[[^\]]*\]\s*)*)", parts[0], re.S)
            if first is None or not first.group(1).strip():
                continue
            words = [w for w in first.group(1).split() if w not in QUALIFIERS]
            ctype = " ".join(words)
            ctype = types.get(ctype, ctype)
            for d in [first.group(2), *parts[1:]]:
                stars = " " + "*" * d.count("*") if "*" in d else ""
                fields.append((ctype + stars, re.sub(r"[\s*]", "", d)))
        names = [f"struct {m.group(2)}"] if m.group(2) else []
        alias = re.match(r"\s*([A-Za-z_]\w*)\s*;", text[end:]) if m.group(1) else None
        names += [alias.group(1)] if alias else []
        out.update(dict.fromkeys(names, fields))
    return out


# ---------------------------------------------------------------------------------
# How the body uses each array


_ASSIGN = re.compile(r"\s*(<<=|>>=|[-+*/%&|^]=|=(?!=)|\+\+|--)")


@dataclass
class Use:
    """How a kernel body uses one pointer argument."""

    read: bool = False
    written: bool = False
    evidence: list[str] = field(default_factory=list)
    constant_indices: list[int] | None = field(default_factory=list)

    def note(self, what: str) -> None:
        if what not in self.evidence and len(self.evidence) < 3:
            self.evidence.append(what)


def _enclosing_call(body: str, pos: int) -> str | None:
    """The function whose argument list contains ``pos`` (innermost), if any."""
    found = _call_at(body, pos)
    return found[0] if found else None


def _call_at(body: str, pos: int) -> tuple[str, int] | None:
    """The function whose argument list contains ``pos`` (innermost), and the index of
    the argument ``pos`` lies in."""
    depth = 0
    commas = 0
    for i in range(pos - 1, -1, -1):
        ch = body[i]
        if ch in ")]":
            depth += 1
        elif ch in "([":
            if depth == 0:
                if ch == "[":
                    return None
                m = re.search(r"([A-Za-z_]\w*)\s*$", body[:i])
                return (m.group(1), commas) if m else None
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
        elif ch in ";{}" and depth == 0:
            return None
    return None


@dataclass
class FunctionDecl:
    """A function other than a kernel: its parameter declarations and body."""

    name: str
    params: list[str]
    body: str


def find_functions(text: str) -> dict[str, FunctionDecl]:
    """Every function defined at the top level of (comment-free) C text, kernels too."""
    found: dict[str, FunctionDecl] = {}
    depth = 0
    i = 0
    call = re.compile(r"([A-Za-z_]\w*)\s*\(")
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif (
            depth == 0
            and (m := call.match(text, i))
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            close = match_bracket(text, m.end() - 1, "(", ")")
            rest = re.match(r"\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*\{", text[close:], re.S)
            if rest and m.group(1) not in _C_KEYWORDS:
                brace = close + rest.end() - 1
                end = match_bracket(text, brace, "{", "}")
                params = split_top(text[m.end() : close - 1])
                found[m.group(1)] = FunctionDecl(
                    m.group(1), [] if params == ["void"] else params, text[brace + 1 : end - 1]
                )
                i = end
                continue
            i = m.end() - 1
        i += 1
    return found


def pointer_to_const(decl: str) -> bool:
    """Whether a parameter declaration is a pointer to ``const`` data (``const float*``,
    ``float const *``, ``const float src[]``): nothing can be written through it without
    a cast."""
    decl, array = _array_declarator(decl)
    head = decl.split("*")[0] if "*" in decl else decl if array else ""
    pointer = "*" in decl or array
    return pointer and re.search(r"\b(?:const|__constant|constant)\b", head) is not None


def _array_declarator(decl: str) -> tuple[str, bool]:
    """``decl`` without its trailing array declarators (``float w[9]``,
    ``__local float t[16 * 4]``, ``const float s[]``), and whether it had any: C takes
    an array parameter as a pointer to its element type."""
    bare = re.sub(r"(?:\s*\[[^\[\]]*\])+\s*$", "", decl)
    return bare, bare != decl


_C_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do"}


def array_uses(
    body: str,
    name: str,
    functions: Mapping[str, FunctionDecl] | None = None,
    _depth: int = 0,
) -> Use:
    """Whether ``name`` (a pointer) is read, written or both in ``body``.

    Reads every occurrence: ``a[i] = ...`` writes, ``a[i] += ...`` and ``a[i]++`` read and
    write, ``vstoreN(.., a)`` writes, ``vloadN(.., a)`` reads, atomics do both, a pointer
    declared from ``a`` is followed. ``a`` handed to a helper function of ``functions``
    is read only where that parameter is a pointer to ``const``, else as the helper's
    body uses it; handed to any other function it is taken as both.
    """
    use = Use()
    pending, seen = [name], {name}
    while pending:
        cur = pending.pop()
        for m in re.finditer(rf"(?<![\w.]){re.escape(cur)}\b", body):
            start, end = m.start(), m.end()
            before = body[:start].rstrip()
            stmt_start = max(body.rfind(c, 0, start) for c in ";{}") + 1
            after = body[end:]
            if _declared(body[stmt_start:start]) and re.match(r"\s*(?:=(?!=)|[;,)])", after):
                continue  # its own declarator (``*p = a + i``): no access to the data
            alias = re.search(
                r"\*\s*(?:const\s+|restrict\s+|__restrict\s+)*([A-Za-z_]\w*)\s*=\s*[^=;]*$",
                body[stmt_start:start],
            )
            if alias and _declared(body[stmt_start : stmt_start + alias.start(1)]):
                if alias.group(1) not in seen:  # a pointer declared from it: followed
                    seen.add(alias.group(1))
                    pending.append(alias.group(1))
                continue
            deref = re.search(rf"(?<![\w)\]])\*\s*(?:{_CAST})?\(?\s*$", before) is not None
            if not deref and _moved(body, cur, start, stmt_start, before, after):
                continue  # the pointer itself is (re)assigned or moved: no access to the data
            address = before.endswith("&") and not before.endswith("&&")
            if after.lstrip().startswith("[") and not address:
                _indexed(use, body, cur, end + after.index("["), before)
            elif deref:  # *a = ..., *(a + i) = ...
                _dereferenced(use, body, cur, start, end, before)
            else:
                _passed(use, body, cur, start, functions, _depth)
    return use


_CAST = r"\(\s*(?:__global\s+|global\s+)?(?:const\s+)?\w+\s*\*\s*\)\s*"
"""A cast to a pointer (``(__global const float *)``): ``*(T *)(p + i)``, as OpenCV's
``loadpix``/``storepix`` address a byte buffer, dereferences ``p``."""


def _moved(body: str, cur: str, start: int, stmt_start: int, before: str, after: str) -> bool:
    """Whether the occurrence of pointer ``cur`` at ``start`` only sets or moves the
    pointer: ``p = e``, ``p += e``, ``p -= e``, ``p++``, ``--p``, or the ``p`` of
    ``p = p + e`` (outside any call); ``p[i]`` and ``*p`` are accesses, not moves."""
    if re.match(r"\s*(?:[-+]?=(?!=)|\+\+|--)", after):
        return True
    if after.lstrip().startswith(("[", ".", "->")):
        return False
    if before.endswith(("++", "--")):
        return True
    own = re.match(rf"\s*(?:for\s*\(\s*)?{re.escape(cur)}\s*=(?!=)", body[stmt_start:start])
    call = _call_at(body, start)
    return own is not None and (call is None or call[0] in _C_KEYWORDS)


_DECL_KEYWORDS = {"return", "else", "case", "goto", "sizeof", "do"}
_POINTER_DECL = re.compile(
    r"\s*(?:for\s*\(\s*)?([A-Za-z_]\w*)(?:\s+[A-Za-z_]\w*)*\s*"
    r"(?:\*\s*(?:(?:const|restrict|__restrict|__restrict__|volatile)\b\s*)*)+"
)


def _declared(prefix: str) -> bool:
    """Whether the name after ``prefix`` (the statement's text before it) is a pointer
    being declared: a type and stars (``__global const float *``), or a later declarator
    of the same declaration (``float *p = a, *``)."""
    m = _POINTER_DECL.match(prefix)
    if m is None or m.group(1) in _DECL_KEYWORDS:
        return False
    rest = prefix[m.end() :]
    if not rest:
        return True
    later = re.search(r",\s*(?:\*\s*)+$", rest)
    if later is None:
        return False
    head = rest[: later.start()]
    return sum(head.count(c) for c in "([{") == sum(head.count(c) for c in ")]}")


def _indexed(use: Use, body: str, cur: str, j: int, before: str) -> None:
    """``cur[...]`` (the bracket at ``j``): read, written (``=``), or both (``+=``,
    ``++``); a constant index is noted."""
    close = match_bracket(body, j, "[", "]")
    index = body[j + 1 : close - 1].strip()
    if use.constant_indices is not None:
        if re.fullmatch(r"\(?\s*\d+[uU]?\s*\)?", index):
            use.constant_indices.append(int(re.sub(r"\D", "", index)))
        else:
            use.constant_indices = None
    tail = re.match(r"(\s*\.\s*\w+)?", body[close:])
    k = close + (tail.end() if tail else 0)
    op = _ASSIGN.match(body, k)
    pre = before.endswith(("++", "--"))
    if op and op.group(1) == "=":
        use.written = True
        use.note(f"{cur}[...] =")
    elif op or pre:
        use.written = use.read = True
        use.note(f"{cur}[...] {op.group(1) if op else before[-2:]}")
    else:
        use.read = True
        use.note(f"reads {cur}[...]")


def _dereferenced(use: Use, body: str, cur: str, start: int, end: int, before: str) -> None:
    """``*cur`` or ``*(cur + i)``: read, written, or both; ``*cur++`` moves the
    pointer after the access (``*cur++ = v`` writes)."""
    k = end
    if body[start - 1 :].lstrip().startswith("(") or re.search(r"\(\s*$", before):
        k = match_bracket(body, before.rfind("("), "(", ")")
    op = _ASSIGN.match(body, k)
    if op and k == end and op.group(1) in ("++", "--"):  # the pointer moves, not the data
        op = _ASSIGN.match(body, op.end())
    if op and op.group(1) == "=":
        use.written = True
        use.note(f"*{cur} =")
    elif op:
        use.written = use.read = True
        use.note(f"*{cur} {op.group(1)}")
    else:
        use.read = True
        use.note(f"reads *{cur}")


def _passed(
    use: Use,
    body: str,
    cur: str,
    start: int,
    functions: Mapping[str, FunctionDecl] | None,
    depth: int,
) -> None:
    """``cur`` as an argument: a helper's parameter (its ``const`` or its body says),
    ``vstoreN``/``vloadN``, or any other function (both); outside a call, read."""
    call = _call_at(body, start)
    func = call[0] if call else None
    helper = (functions or {}).get(func) if func else None
    if call and helper is not None and call[1] < len(helper.params) and depth < 4:
        decl = helper.params[call[1]]
        words = re.findall(r"[A-Za-z_]\w*", _array_declarator(decl)[0])
        if pointer_to_const(decl):
            use.read = True
            use.note(f"{func}(...) reads it through a const pointer")
        elif words:
            inner = array_uses(helper.body, words[-1], functions, depth + 1)
            use.read |= inner.read
            use.written |= inner.written
            what = "writes" if inner.written else "reads" if inner.read else "ignores"
            use.note(f"{func}(...) {what} it")
    elif func is None or func in _C_KEYWORDS:
        use.read = True
        use.note(f"reads {cur}")
    elif func.startswith("vstore"):
        use.written = True
        use.note(f"{func}(.., {cur})")
    elif func.startswith("vload") or func.startswith("prefetch"):
        use.read = True
        use.note(f"{func}(.., {cur})")
    else:
        use.read = use.written = True
        use.note(f"{func}({cur}, ...) may read and write it")
    use.constant_indices = None


# ---------------------------------------------------------------------------------
# A parameter declaration


@dataclass
class Param:
    name: str
    ctype: str
    pointer: bool
    space: str  # global, constant, local, private


def parse_param(decl: str, types: Mapping[str, str], where: str) -> Param:
    """One parameter declaration: its name, element type, whether it is a pointer (an
    array declarator, ``__local float t[64]``, is one) and its address space."""
    bare, array = _array_declarator(decl)
    words = bare.replace("*", " * ").split()
    if not words or not words[-1].isidentifier():
        raise InputError(f"cannot read the kernel parameter {decl!r}", source=where)
    name = words[-1]
    pointer = "*" in words or array
    space = "private"
    for w, sp in (
        ("__global", "global"),
        ("global", "global"),
        ("__constant", "constant"),
        ("constant", "constant"),
        ("__local", "local"),
        ("local", "local"),
    ):
        if w in words:
            space = sp
    type_words = [w for w in words[:-1] if w not in QUALIFIERS and w != "*" and w != space]
    type_words = [w for w in type_words if w not in ("__local", "local")]
    ctype = " ".join(type_words)
    ctype = types.get(ctype, ctype)
    return Param(name, ctype, pointer, space)
