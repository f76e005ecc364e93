"""A register cap that NVIDIA's OpenCL compiler really applies.

NVIDIA documents ``-cl-nv-maxrregcount=N`` (``cl_nv_compiler_options``), and its
driver takes the option without complaint, but on the H200 (driver of 2026) it changes
nothing: a configuration that ptxas gives 50 registers still gets 50 with the cap at
16, 24 or 32 (``benchmarks/results/h200-limit/regcap/``). The cap does work as the PTX
directive ``.maxnreg N`` on the kernel's entry. So gtune applies the option itself:
where a build's options carry it and the device is NVIDIA's, the program is built
without it, its binary (NVIDIA's is PTX text) gets ``.maxnreg N`` on every entry, and
that PTX is built again; the binary a compile worker hands on is the capped one.

Pure text functions here (tested without a GPU); ``_opencl.py`` does the builds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: The option, as NVIDIA spells it: ``-cl-nv-maxrregcount=N``.
OPTION = "-cl-nv-maxrregcount"

_ENTRY = re.compile(rb"\.entry\s+[\w$]+\s*\(")


def register_cap(options: Sequence[str]) -> tuple[int | None, list[str]]:
    """The cap the options ask for (the last one given, None if none) and the options
    without it. ``-cl-nv-maxrregcount=N`` and the two-word ``-cl-nv-maxrregcount N``
    are both taken out; a cap that is not a whole number from 1 to 255 is an error."""
    cap: int | None = None
    rest: list[str] = []
    i = 0
    while i < len(options):
        opt = options[i]
        if opt == OPTION:
            if i + 1 >= len(options):
                raise ValueError(f"{OPTION} without a number")
            cap, i = _cap_value(options[i + 1]), i + 2
            continue
        if opt.startswith(OPTION + "="):
            cap = _cap_value(opt[len(OPTION) + 1 :])
        else:
            rest.append(opt)
        i += 1
    return cap, rest


def _cap_value(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 255:
        raise ValueError(f"{OPTION}={text}: the cap must be a whole number from 1 to 255")
    return int(text)


def with_maxnreg(ptx: bytes, cap: int) -> bytes:
    """``ptx`` with ``.maxnreg cap`` on every kernel entry (after its parameter list,
    before its body), replacing a ``.maxnreg`` already there. ValueError when the text
    holds no entry (not PTX)."""
    out = bytearray()
    pos = 0
    found = False
    for m in _ENTRY.finditer(ptx):
        close = _closing_paren(ptx, m.end() - 1)
        body = ptx.find(b"{", close)
        if body < 0:
            raise ValueError("a PTX .entry without a body")
        directives = re.sub(rb"\s*\.maxnreg\s+\d+", b"", ptx[close + 1 : body])
        out += ptx[pos : close + 1] + directives.rstrip() + b"\n.maxnreg %d\n" % cap
        pos = body
        found = True
    if not found:
        raise ValueError("no PTX .entry in the program binary")
    return bytes(out + ptx[pos:])


def _closing_paren(text: bytes, opening: int) -> int:
    depth = 0
    for i in range(opening, len(text)):
        if text[i] == ord("("):
            depth += 1
        elif text[i] == ord(")"):
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("a PTX .entry whose parameter list does not close")
