"""Separable weights in the temporal techniques (``SEP`` with ``steps``, issue 49).

A separable 2D stencil (a binomial or box blur, weights ``u(dx) * v(dy)``) with steps
gets ``SEP`` as a one-step one does, and 2D temporal tiles take it where a work-item
computes several rows of a level's column (``TR > 1``): each row's x-terms are summed
once for the work-item's TR rows and the RY rows either side, and the row sums are
combined in y, ``(TR + 2 RY)(2 RX + 1) + TR (2 RY + 1)`` multiply-adds for TR points
instead of ``TR (2 RX + 1)(2 RY + 1)``. The sums are rounded differently from the
terms in order, so the check is S single steps within the definition's tolerance,
not their bits.
"""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.heuristics import SearchProblem, get_strategy
from gtune.space.build import build_space
from gtune.stencils.definition import load_definition
from gtune.stencils.render import definition_description, definition_kernel_of, template_source
from tests.space.space_helpers import h100_limits
from tests.stencils import test_int_words as words
from tests.stencils import test_tile_rows as rows

ROOT = Path(__file__).resolve().parents[2]
BLUR5 = ROOT / "stencils" / "blur5.stencil.yaml"
BOX27 = ROOT / "stencils" / "box27.stencil.yaml"
BLOCK = {"WX": 8, "WY": 4, "CX": 2, "CY": 2}


def test_the_space_offers_sep_to_tiles_with_rows_and_one_step_launches() -> None:
    """blur5 with 8 steps has SEP; of its temporal techniques only temporal tiles with
    TR > 1 take SEP = 1, and the launches of one step take it as a one-step kernel does."""
    d = dataclasses.replace(load_definition(BLUR5), steps=8)
    _, desc = definition_description(d)
    assert desc["parameters"]["SEP"]["values"] == [0, 1]
    kernel = definition_kernel_of(d, {"NX": 1024, "NY": 1024})
    seen: dict[str, collections.Counter[tuple[int, int]]] = {}
    for technique in ("temporal", "temporal-tile", "stream"):
        space = build_space(kernel, h100_limits(), technique=technique)
        seen[technique] = collections.Counter((c["SEP"], c["TR"]) for c in space.enumerate())  # type: ignore[attr-defined]
    assert {sep for sep, _ in seen["temporal"]} == {0}
    tiles = seen["temporal-tile"]
    assert {tr for sep, tr in tiles if sep == 1} == {2, 4, 8}
    assert {tr for sep, tr in tiles if sep == 0} == {1, 2, 4, 8}
    assert {sep for sep, _ in seen["stream"]} == {0, 1}  # TB = 1: one step a launch


def _outputs_close(
    steps: int, cfg: dict[str, int], tmp: Path, text: str, source: Path = BLUR5
) -> tuple[bool, bool]:
    """``steps`` steps of ``source`` (blur5; box27 at 32³) at ``cfg`` from ``text`` (the
    package's template or a mutant of it) against as many single steps of the package's
    global technique: (within the definition's tolerance, the same bits)."""
    package, variant = rows._kernels(source, steps, tmp, text)
    arrays = words.template_exact.inputs(package, seed=5)
    assert package.steps is not None
    arrays[package.steps.output] = arrays[package.steps.input].copy()
    want = rows._outputs(package, {**rows.SINGLE, "WX": 8, "WY": 4}, arrays)
    got = rows._outputs(variant, {**rows.SINGLE, **cfg}, arrays)
    assert np.isfinite(want).all()
    d = dataclasses.replace(load_definition(source), steps=steps)
    tolerance = d.tolerance(float(np.abs(arrays[package.steps.input]).max()))
    close = bool(np.abs(got.astype(np.float64) - want).max() <= tolerance)
    return close, bool(words.template_exact.same_bits(want, got))


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    "cfg",
    [
        {"TB": 2, **BLOCK, "TR": 4},
        {"TB": 4, **BLOCK, "TR": 2},  # rows of a level not divided by TR
        {"TB": 4, "WX": 8, "WY": 8, "CX": 2, "CY": 1, "TR": 8},
    ],
)
def test_separable_tiles_give_the_single_steps(cfg: dict[str, int], tmp_path: Path) -> None:
    """SEP = 1 in temporal tiles: 8 steps within the tolerance of 8 single steps, and
    not their bits (the row sums are rounded otherwise: the path ran)."""
    close, same = _outputs_close(8, {**cfg, "SEP": 1}, tmp_path, template_source())
    assert close and not same
    assert _outputs_close(8, {**cfg, "SEP": 0}, tmp_path, template_source()) == (True, True)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("line", "mutant"),
    [
        ("hs_ += (w) * F(prev[at + (dx)]);", "hs_ += (w) * F(prev[at + 2 * (dx)]);"),
        ("acc += (w) * h_[r + RY + (dy)];", "acc += (w) * h_[r + (dy)];"),
        (
            "const int at = at0 + ((kz - RZ) * TTY + r - RY) * TTX;",
            "const int at = at0 + ((kz - RZ) * TTY + r) * TTX;",
        ),
    ],
)
def test_a_mutant_of_the_row_sums_is_caught(line: str, mutant: str, tmp_path: Path) -> None:
    text = template_source()
    assert line in text
    cfg: dict[str, Any] = {"TB": 4, **BLOCK, "TR": 4, "SEP": 1}
    assert not _outputs_close(8, cfg, tmp_path, text.replace(line, mutant))[0]


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_separable_3d_tiles_give_the_single_steps(tmp_path: Path) -> None:
    """3D temporal tiles with SEP = 1 (box27: each row's x-sums once for the TR rows of
    every plane within the radius, the planes' y-sums combined in z): 4 steps within
    the tolerance of 4 single steps, not their bits, at TB 2 and at TB 4 with rows of a
    level not divided by TR; the space offers SEP with every TR > 1, and only there; a
    mutant that reads one plane for all three is caught."""
    d = dataclasses.replace(load_definition(BOX27), steps=4)
    kernel = definition_kernel_of(d, {"NX": 32, "NY": 32, "NZ": 32})
    space = build_space(kernel, h100_limits(), technique="temporal-tile")
    pairs = collections.Counter((c["SEP"], c["TR"]) for c in space.enumerate())  # type: ignore[attr-defined]
    assert {tr for sep, tr in pairs if sep == 1} == {2, 4, 8}
    assert (1, 1) not in pairs
    text = template_source()
    for cfg in ({"TB": 2, "WX": 8, "WY": 4, "TR": 4}, {"TB": 4, "WX": 8, "WY": 4, "TR": 2}):
        assert space.is_valid({**kernel.with_defaults(cfg), "SEP": 1}) is None
        work = tmp_path / f"tb{cfg['TB']}"
        work.mkdir()
        close, same = _outputs_close(4, {**cfg, "SEP": 1}, work, text, BOX27)
        assert close and not same
    line = "const int at = at0 + ((kz - RZ) * TTY + r - RY) * TTX;"
    assert line in text
    mutant = text.replace(line, "const int at = at0 + (r - RY) * TTX;")
    cfg = {"TB": 2, "WX": 8, "WY": 4, "TR": 4, "SEP": 1}
    (tmp_path / "mutant").mkdir()
    assert not _outputs_close(4, cfg, tmp_path / "mutant", mutant, BOX27)[0]


def test_the_temporal_specs_rows_step_tries_sep_with_every_tr() -> None:
    """The ``temporal`` spec's step ``rows per work-item`` measures SEP 0 and 1 with each
    TR that has several rows (SEP = 0 alone at TR 1) at the best found."""
    d = dataclasses.replace(load_definition(BLUR5), steps=8)
    kernel = definition_kernel_of(d, {"NX": 1024, "NY": 1024})
    space = build_space(kernel, h100_limits(), technique="temporal-tile")
    best = next(
        c
        for c in space.enumerate()  # type: ignore[attr-defined]
        if c["TB"] == 4 and c["TR"] == 4 and c["SEP"] == 0 and c["WX"] == 16 and c["WY"] == 16
    )
    strategy = get_strategy("grouped", {"spec": "temporal"})
    problem = SearchProblem(sizes=kernel.sizes, default=kernel.default_config())
    inner = strategy.searcher(space, problem, strategy.configure(None))  # type: ignore[arg-type]
    step = next(s for s in inner.spec.steps if s.label == "rows per work-item")
    tried = inner._candidates(step, best)  # the step's points from that best
    assert sorted((c["TR"], c["SEP"]) for c in tried) == [
        (1, 0),
        (2, 0),
        (2, 1),
        (4, 0),
        (4, 1),
        (8, 0),
        (8, 1),
    ]
