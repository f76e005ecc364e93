"""Temporal tiles' rows per work-item (``TR``, issue 49): the temporal-tile kernel's
work-items compute ``TR`` rows of a level's column at a time, the rows they share read
once from local memory (jacobi2d 8192², 8 steps on the H200: 153 % of copy at TR 1,
187 % at TR 4 and 8; benchmarks/results/h200-limit/tile-rows/).

``TR`` must leave the code as it was where it is off (every kernel preprocesses to the
text of the template from before it, ``tests/data/stencil_before_tile_rows.cl.gz``,
with ``TR`` left out or 1) and give the bits of the single steps where it is on: each
point's terms in the same order, so S steps of temporal tiles with ``TR`` equal S
single steps of the global technique bit for bit, on tiles inside the array and on the
edge tiles (the checked path).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.measure.once import run_plain
from gtune.stencils.definition import load_definition
from gtune.stencils.real import REAL
from gtune.stencils.render import definition_description, render_source, template_source
from tests.conftest import load_script
from tests.stencils import test_int_words as words
from tests.stencils.template_snapshot import beside_snapshot, cpp, older_definitions, sizes_of

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "definitions"
BEFORE = ROOT / "tests" / "data" / "stencil_before_tile_rows.cl.gz"
SINGLE = {"TB": 1, "STREAM": 0, "ZC": 1, "LOCAL": 0, "VX": 1, "BX": 1, "CX": 1, "CY": 1}
TEMPORAL = ["-DTB=2", "-DTB=4 -DCX=2 -DCY=2", "-DTB=2 -DSTREAM=1 -DZC=4"]


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_kernels_without_tr_preprocess_as_before(tmp_path: Path) -> None:
    """Every real stencil and the corpus's definitions (clamp, zero, rims, float64,
    separable) in the one-step techniques, and three of them with 4 steps in temporal
    tiles and temporal streaming, TR left out and TR = 1: the text of the template
    from before TR."""
    stencils: list[Any] = [REAL[n]() for n in sorted(REAL)]
    stencils += older_definitions(CORPUS)
    for block, new, old in beside_snapshot(BEFORE, stencils):
        assert new != old  # the snapshot is the template from before TR
        for cfg in words._float_configs(block):
            flags = sizes_of(block) + cfg.split()
            want = cpp(old, flags, tmp_path)
            assert want[0] == 0, (cfg, want[1][-300:])
            assert cpp(new, flags, tmp_path) == want, cfg
    steps = [
        dataclasses.replace(load_definition(CORPUS / f"{n}.stencil.yaml"), steps=4)
        for n in ("jacobi2d_clamp_f64", "thermal2d", "star3d_c")
    ]
    for block, new, old in beside_snapshot(BEFORE, steps):
        for cfg in TEMPORAL:
            flags = [*sizes_of(block), "-DWX=8", "-DWY=4", *cfg.split()]
            want = cpp(old, flags, tmp_path)
            assert want[0] == 0, (cfg, want[1][-300:])
            assert cpp(new, flags, tmp_path) == want, cfg
            assert cpp(new, [*flags, "-DTR=1"], tmp_path) == want, cfg


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_tr_where_it_does_not_apply_stops_the_build(tmp_path: Path) -> None:
    """TR > 1 with streaming, with more rows than the block, or without TB stops the
    build with the template's message."""
    d = dataclasses.replace(load_definition(CORPUS / "star3d_c.stencil.yaml"), steps=4)
    text = render_source(d)
    for cfg in ("-DTB=2 -DSTREAM=1 -DZC=4 -DTR=2", "-DTB=2 -DTR=5", "-DTR=2"):
        status, out = cpp(text, [*sizes_of(text), "-DWX=8", "-DWY=4", *cfg.split()], tmp_path)
        assert status != 0 and "TR (rows per work-item" in out, cfg


def test_the_space_offers_tr_to_temporal_tiles_only() -> None:
    """The description of a stepping definition has TR 1, 2, 4, 8 (default 1); its
    constraint admits TR > 1 only in temporal tiles with at least TR rows per block."""
    d = dataclasses.replace(load_definition(ROOT / "stencils" / "jacobi2d.stencil.yaml"), steps=8)
    _, desc = definition_description(d)
    assert desc["parameters"]["TR"]["values"] == [1, 2, 4, 8]
    assert desc["parameters"]["TR"]["default"] == 1
    assert "TR == 1 or (TB > 1 and STREAM == 0 and TR <= WY*CY)" in desc["constraints"]
    _, one = definition_description(load_definition(ROOT / "stencils" / "jacobi2d.stencil.yaml"))
    assert "TR" not in one["parameters"]  # one step: no temporal tiles


def _kernels(source: Path, steps: int, tmp: Path, text: str) -> tuple[TunableKernel, TunableKernel]:
    """The definition at ``source`` with ``steps`` steps, from the package's template and
    from ``text`` (a whole template), at 64² (2D) or 32³."""
    data = yaml.safe_load(source.read_text())
    data["steps"] = steps
    path = tmp / "k.stencil.yaml"
    path.write_text(yaml.safe_dump(data))
    package = load_kernel(path)
    with words.template_ab.rendering_from(text):
        variant = load_kernel(path)
    n = 64 if data["dims"] == 2 else 32
    sizes = {k: n for k in ("NX", "NY", "NZ")[: data["dims"]]}
    return package.with_sizes(sizes), variant.with_sizes(sizes)


def _outputs(kernel: TunableKernel, cfg: dict[str, int], arrays: dict[str, Any]) -> Any:
    out = kernel.steps.output if kernel.steps is not None else "b"
    return run_plain(kernel, arrays, kernel.with_defaults(cfg), device="pthread")[out]


_SINGLE_STEPS: dict[tuple[str, int], Any] = {}


def _steps_equal(source: Path, steps: int, cfg: dict[str, int], tmp: Path, text: str) -> bool:
    """S steps of ``text``'s temporal tiles at ``cfg`` (the package's template or a
    mutant of it) against S single steps of the package (the output's rim starts as
    the input's, so both keep the same rim)."""
    package, variant = _kernels(source, steps, tmp, text)
    arrays = words.template_exact.inputs(package, seed=7)
    assert package.steps is not None
    arrays[package.steps.output] = arrays[package.steps.input].copy()
    key = (str(source), steps)
    if key not in _SINGLE_STEPS:  # the same reference for the package and its mutants
        _SINGLE_STEPS[key] = _outputs(package, {**SINGLE, "WX": 8, "WY": 4}, arrays)
    want = _SINGLE_STEPS[key]
    got = _outputs(variant, {**SINGLE, **cfg}, arrays)
    assert np.isfinite(want).all()
    return bool(words.template_exact.same_bits(want, got))


JACOBI = ROOT / "stencils" / "jacobi2d.stencil.yaml"


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("source", "steps", "cfg"),
    [
        (JACOBI, 8, {"TB": 4, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "TR": 4}),  # 14 rows: 4+4+4+2
        (JACOBI, 8, {"TB": 4, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "TR": 3}),  # no level divides
        (JACOBI, 8, {"TB": 8, "WX": 4, "WY": 8, "CX": 2, "CY": 1, "TR": 8}),  # TR = the block
        (CORPUS / "thermal2d.stencil.yaml", 4, {"TB": 4, "WX": 8, "WY": 4, "CY": 2, "TR": 4}),
        (CORPUS / "jacobi2d_clamp_f64.stencil.yaml", 4, {"TB": 2, "WX": 8, "WY": 4, "TR": 4}),
        (CORPUS / "star3d_c.stencil.yaml", 4, {"TB": 2, "WX": 8, "WY": 4, "TR": 2}),
    ],
)
def test_the_rows_give_the_single_steps_bits(
    source: Path, steps: int, cfg: dict[str, int], tmp_path: Path
) -> None:
    assert _steps_equal(source, steps, cfg, tmp_path, template_source())


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("line", "mutant"),
    [
        ("const int at = at0 + r * TTX;", "const int at = at0 + (r / 2) * TTX;"),
        ("const int r0 = min(seg * TR, ey - TR);", "const int r0 = min(seg * TR, ey - TR - 1);"),
    ],
)
def test_a_mutant_of_the_rows_is_caught(line: str, mutant: str, tmp_path: Path) -> None:
    text = template_source()
    assert line in text
    cfg = {"TB": 4, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "TR": 4}
    assert not _steps_equal(JACOBI, 8, cfg, tmp_path, text.replace(line, mutant))


def _ptx_tile() -> Any:
    return load_script(ROOT / "benchmarks" / "ptx_tile.py")


@pytest.mark.skipif(shutil.which("clang-15") is None, reason="needs clang 15 (PTX)")
def test_the_rows_cut_local_loads_and_instructions_per_point() -> None:
    """clang's PTX of jacobi2d's recorded winner shape (TB 4, block 128x32 on 16x16):
    the package reads each of the 5 terms from local memory (more than 5 per output and
    step: the halo computed again); TR 4 shares the rows of a column, fewer loads and
    fewer instructions per point, one barrier per step all the same."""
    tool = _ptx_tile()
    cfg = {"TB": 4, "WX": 16, "WY": 16, "CX": 8, "CY": 2, "STREAM": 0, "ZC": 1}
    package = tool.counts(tool.kernel_of(JACOBI, 1024, 8, None), cfg, "clang-15")
    rows = tool.counts(tool.kernel_of(JACOBI, 1024, 8, None), {**cfg, "TR": 4}, "clang-15")
    assert package["ld.shared"] > 5 > 4.5 > rows["ld.shared"]
    assert rows["all"] < 0.9 * package["all"]
    assert rows["bar"] == package["bar"] == 1 / 16  # one per step, 16 points a work-item


def test_ptx_tile_names_a_candidate_it_cannot_read() -> None:
    script = ROOT / "benchmarks" / "ptx_tile.py"
    cmd = [sys.executable, str(script), "--template", "no_such.patch", "--config", "TB=2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2
    assert "no_such.patch" in r.stderr and "Traceback" not in r.stderr


def test_ptx_tile_reads_a_configurations_file(tmp_path: Path) -> None:
    """``--configs``: a temporal_configs.py file's kernel (a real stencil by name, or a
    definition's path), its steps, and each configuration after ``--prefix``."""
    tool = _ptx_tile()
    path = tmp_path / "c.yaml"
    entries = [{"name": "a", "config": {"TB": 2, "WX": 8}}, {"name": "b", "config": {"TB": 4}}]
    path.write_text(yaml.safe_dump({"kernel": "heat3d", "steps": 4, "configs": entries}))
    kernel, steps, configs = tool.from_file(path, "LOCAL=0")
    assert kernel == ROOT / "stencils" / "heat3d.stencil.yaml" and kernel.is_file()
    assert steps == 4 and configs == ["LOCAL=0,TB=2,WX=8", "LOCAL=0,TB=4"]
    path.write_text(yaml.safe_dump({"kernel": "x/copy.stencil.yaml", "configs": entries[:1]}))
    assert tool.from_file(path, "") == (Path("x/copy.stencil.yaml"), 8, ["TB=2,WX=8"])
