"""A rendered stencil against a snapshot of the template from before a change: the
C preprocessor's output of both, for the template tests that pin the code a change
must leave as it was (``tests/data/stencil_before_*.cl.gz``).

Every snapshot is older than the hoist of the primary field's coefficients (issue 48:
read once a work-item into ``wq_``, the terms taking ``WQ(...)``): today's source is
compared with that hoist undone (:func:`without_hoist`), so each test still pins what
its own change must leave as it was (the hoist's own results: test_wq_hoist.py). They
are older too than a written rim's x rim stored with its rows' vectors (RIM=1, float
elements: ``RIM_X_IN_VECTORS``), undone the same way (:func:`without_rim_vectors`; its
own results: test_rim_vectors.py).
"""

from __future__ import annotations

import gzip
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gtune.stencils.render import render_source, template_source

MARKER = "/* STENCIL */"
HOIST_LOAD = re.compile(r"^[ \t]*WQ_LOAD\(\)[^\n]*\n", re.M)
HOIST_TERMS = re.compile(r"STENCIL_TERMS\((SCALAR|INSIDE|VECTOR|IN|ROW)_TERM_Q\)")


def without_hoist(text: str) -> str:
    """``text`` (a rendered stencil) as the template before the hoist of the primary
    field's coefficients gave it: the kernels' ``WQ_LOAD()`` gone and their terms the
    plain ``*_TERM`` ones (the hoist's macros, left defined, are unused)."""
    out, loads = HOIST_LOAD.subn("", text)
    out, terms = HOIST_TERMS.subn(r"STENCIL_TERMS(\1_TERM)", out)
    assert loads == 2 and terms == 9, (loads, terms)  # the template's hoisted kernels
    return out


RIM_VECTORS_ON = "#if RIM && !INT_ELEMS\n#define RIM_X_IN_VECTORS 1\n"


def without_rim_vectors(text: str) -> str:
    """``text`` (a rendered stencil) as the template before a written rim's x rim was
    stored with its rows' vectors gave it: ``RIM_X_IN_VECTORS`` 0 in every kernel, so
    ``RIM_WRITE`` writes each row's x rim apart and the rim vectors their interior
    lanes."""
    assert text.count(RIM_VECTORS_ON) == 1
    return text.replace(RIM_VECTORS_ON, "#if 0\n#define RIM_X_IN_VECTORS 1\n")


def older_definitions(folder: Path) -> list[Any]:
    """The definitions of ``folder`` every snapshot renders: all but those with a wrap,
    reflect or symmetric boundary (the template's ``BORDER``, newer than any snapshot;
    their own results: test_definition_opencl.py)."""
    from gtune.stencils.definition import MAPPED_BOUNDARIES, load_definition

    defs = [load_definition(p) for p in sorted(folder.glob("*.stencil.yaml"))]
    return [d for d in defs if d.boundary not in MAPPED_BOUNDARIES]


def cpp(text: str, flags: list[str], tmp: Path) -> tuple[int, str]:
    """``text`` preprocessed with ``flags``: the exit status, and the output with its
    messages (an ``#error`` is read from it)."""
    src = tmp / "k.cl"
    src.write_text(text)
    pre = subprocess.run(["cpp", "-P", "-undef", *flags, str(src)], capture_output=True, text=True)
    return pre.returncode, pre.stdout + pre.stderr


def beside_snapshot(snapshot: Path, stencils: Iterable[Any]) -> Iterator[tuple[str, str, str]]:
    """For each stencil: its rendered block (what the renderer puts at the template's
    marker), its source with today's template (the coefficients' hoist and the rim
    vectors undone: :func:`without_hoist`, :func:`without_rim_vectors`) and its source
    with the snapshot's."""
    before = gzip.decompress(snapshot.read_bytes()).decode()
    template = template_source()
    cut = template.index(MARKER)
    for stencil in stencils:
        new = render_source(stencil)
        block = new[cut : len(new) - (len(template) - cut - len(MARKER))]
        assert new == template.replace(MARKER, block, 1)
        yield block, without_rim_vectors(without_hoist(new)), before.replace(MARKER, block, 1)


def sizes_of(block: str) -> list[str]:
    """The problem-size flags for a rendered block (2D or 3D)."""
    dims3 = "#define ARRAY_DIMS 3" in block
    return ["-DNX=64", "-DNY=32"] + (["-DNZ=16"] if dims3 else [])
