#!/usr/bin/env python3
"""The render side of ``clamp_rows.patch``: row blocks (``BY``, ``BZ``) for every boundary.

``clamp_rows.patch`` lets the vector technique compute ``BY`` x ``BZ`` adjacent rows
without whole rim vectors (``RIM=0``), which the clamp and zero boundaries needed when
it was measured (neither had ``RIM``; since ``clamp_rim`` was promoted, the clamp
boundary has it, and its row blocks with it). The package's renderer gave those kernels
no ``BY`` parameter and launches ``NY / CY`` work-items in y, so a row block would
launch ``BY`` times the work-groups it needs. Inside :func:`row_blocks` the renderer
does what promoting the candidate would make it do, and nothing else: every boundary's
launch divides the rows by ``BY`` (planes by ``BZ``), ``BY`` (``BZ``) is a parameter of
every kernel (values 1, 2, 4, 8, default 1). A kernel rendered there from the package's
template at ``BY=1`` launches and compiles as outside it (``-DBY=1`` is the template's
default).

    python3 benchmarks/candidates/clamp_rows.py ab OUT --variant \\
        benchmarks/candidates/clamp_rows.patch --variant-set BY=4 ...   (template_ab.py)
    python3 benchmarks/candidates/clamp_rows.py exact --variant ... (template_exact.py)
    python3 benchmarks/candidates/clamp_rows.py ptx DEF --template ... (ptx_int_loads.py)
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gtune.stencils import render

ROW_BLOCKS = [1, 2, 4, 8]


def _parameters(original: Any) -> Any:
    def parameters(*args: Any, **kwargs: Any) -> dict[str, Any]:
        params: dict[str, Any] = original(*args, **kwargs)
        dims3 = bool(args[0] if args else kwargs["dims3"])
        for name in ("BY", "BZ") if dims3 else ("BY",):
            params[name] = {
                "values": ROW_BLOCKS,
                "default": 1,
                "doc": "vector technique: adjacent rows (planes) per work-item",
            }
        return params

    return parameters


@contextlib.contextmanager
def row_blocks() -> Iterator[None]:
    """Stencils rendered inside launch ``NY / (BY*CY)`` (3D: ``NZ / (BZ*CZ*ZC)``) rows
    in y whatever their boundary, and have ``BY`` (``BZ``) among their parameters."""
    geometry: Any = render._Geometry
    saved = (geometry.by, geometry.bz, render._parameters)
    geometry.by = property(lambda g: "BY*")
    geometry.bz = property(lambda g: "BZ*" if g.dims3 else "")
    render._parameters = _parameters(saved[2])
    try:
        yield
    finally:
        geometry.by, geometry.bz = saved[0], saved[1]
        render._parameters = saved[2]


def main(argv: Sequence[str]) -> int:
    """``ab ARGS``: template_ab.py; ``exact ARGS``: template_exact.py; ``ptx ARGS``:
    ptx_int_loads.py; each inside :func:`row_blocks`."""
    tools = {"ab": "template_ab", "exact": "template_exact", "ptx": "ptx_int_loads"}
    if not argv or argv[0] not in tools:
        print("clamp_rows: give ab, exact or ptx, then that tool's arguments", file=sys.stderr)
        return 2
    tool = __import__(tools[argv[0]])
    with row_blocks():
        code: int = tool.main(list(argv[1:]))
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
