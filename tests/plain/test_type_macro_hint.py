"""An element type left to a macro (``DATA_TYPE``, as benchmark suites write kernels)
is refused with the flag that gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.inprocess import Cli

JACOBI = str(ROOT / "stencils" / "plain" / "jacobi2d.cl")


def test_a_macro_element_type_names_the_define_that_gives_it(
    tmp_path: Path, gtune_here: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    refused = gtune_here("describe", JACOBI, "--size", "64x64", "--scalar", "n=NX")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "has type 'DATA_TYPE'" in refused.stderr
    assert "hint: a macro the host defines at build time? give it: --define DATA_TYPE=float" in (
        refused.stderr
    )
    given = gtune_here(
        "describe", JACOBI, "--size", "64x64", "--scalar", "n=NX", "--define", "DATA_TYPE=float"
    )
    assert given.returncode == 0, given.stderr
    assert "float32" in given.stdout


def test_a_type_that_is_no_macro_gets_no_such_hint(
    tmp_path: Path, gtune_here: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    kernel = tmp_path / "k.cl"
    kernel.write_text(
        "typedef struct { float a; } pair;\n"
        "__kernel void k(__global const pair *in, __global float *out) {\n"
        "  int i = get_global_id(0); out[i] = in[i].a; }\n"
    )
    refused = gtune_here("describe", str(kernel), "--size", "64")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "has type 'pair'" in refused.stderr and "--define" not in refused.stderr
