"""The primary field's coefficients read once a work-item (issue 48; the template's
``WQ_LOAD``/``WQ``): at the kernel's entry into private values instead of at each use,
for the 5x5 convolutions whose weights are a run-time ``__constant`` array (read again
for each row of outputs or streamed row otherwise: benchmarks/results/lift/h200-all/
conv_ptx.md; on the H200: benchmarks/results/lift/conv_hoist/README.md).

On PoCL, every output within the definition's tolerance of the numpy reference: the two
array-weighted corpus kernels (convolution, conv_padded_mask) lifted as issue 48's runs
lift them, at their H200 winners' shapes (vector CY 2, 2D streaming with cyclic
merging) and the global, local and vector techniques; a definition with an offset named
by two terms (its coefficient kept at each use) and the interior path with row blocks.
A hoist that takes the wrong offset's weight (mirrored in x) is caught by the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.cli import main
from gtune.description import load_kernel
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.render import template_source
from tests.stencils import test_int_words as words

ROOT = Path(__file__).resolve().parents[2]

# as stencils/plain/manifest.yaml lifts them (benchmarks/lift_corpus.py)
LIFTED = {
    "convolution": (
        "32x32",
        ["--array", "input=NX+4,NY+4", "--array", "filter=25", "--scalar", "width=NX"],
        ["--scalar", "height=NY", "--default", "WX=16,WY=16"],
    ),
    "conv_padded_mask": (
        "32x24",
        ["--array", "padded=NX+4,NY+4", "--array", "mask=25", "--scalar", "W=NX"],
        ["--scalar", "H=NY", "--default", "WX=16,WY=8"],
    ),
}
SIZES = {"NX": 64, "NY": 24}
# the H200 winners' shapes (convolution: vec, CY 2; conv_padded_mask: 2D streaming, CX
# 2), the global technique with cyclic merging, local memory, VX 2 with cyclic merging
CHANGES: list[dict[str, int]] = [
    {"WX": 8, "WY": 4, "BX": 4, "VX": 4, "CY": 2},
    {"WX": 8, "WY": 4, "BX": 4, "VX": 1, "CX": 2, "STREAM": 1, "ZC": 8},
    {"WX": 8, "WY": 4, "BX": 1, "CX": 2, "CY": 2},
    {"WX": 8, "WY": 4, "LOCAL": 1},
    {"WX": 4, "WY": 4, "BX": 2, "VX": 2, "CX": 2},
]
# the interior boundary's vector paths: whole rim vectors, row blocks, the interior path
INTERIOR_CHANGES: list[dict[str, int]] = [
    *CHANGES,
    {"WX": 8, "WY": 2, "BX": 4, "VX": 4, "RIM": 1, "RIN": 1, "BY": 2},
    {"WX": 8, "WY": 2, "BX": 4, "VX": 4, "RIM": 1, "RIN": 0, "BY": 2},
]
# the hoisted coefficient a term takes (an offset named once)
HOISTED = "#define WQ(dx, dy, dz, w) (WQ_AT(wn_, dx, dy, dz) == 1 ? WQ_AT(wq_, dx, dy, dz)"


def _lift(name: str, out: Path) -> Path:
    size, flags, more = LIFTED[name]
    path = out / f"{name}.stencil.yaml"
    plain = str(ROOT / "stencils" / "plain" / f"{name}.cl")
    # the command line in this process (gtune.cli.main, what the program runs): its
    # messages go to the test's captured output
    assert main(["lift", plain, "--size", size, *flags, *more, "-o", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def lifted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two corpus kernels lifted once for the module (``gtune lift``); the tests
    only read the definitions."""
    out = tmp_path_factory.mktemp("lifted")
    return {name: _lift(name, out) for name in LIFTED}


def _repeated(tmp_path: Path) -> Path:
    """A 5x5 stencil, interior boundary, its weights a run-time array, the centre named
    by two terms (a weight and a number) and the offset (1, -2) by two entries."""
    terms: list[dict[str, Any]] = []
    for k, (dx, dy) in enumerate((x, y) for y in range(-2, 3) for x in range(-2, 3)):
        terms.append({"field": "src", "offset": [dx, dy], "coefficient": f"w[{k}]"})
    terms.append({"field": "src", "offset": [0, 0], "coefficient": "0.25"})
    terms.append({"field": "src", "offset": [1, -2], "coefficient": "w[24]"})
    weights = [round((-1) ** k * (0.5 + k / 64), 6) for k in range(25)]
    data: dict[str, Any] = {"name": "rep", "dims": 2, "dtype": "float32"}
    data |= {"boundary": "interior", "fields": ["src"], "output": "dst", "terms": terms}
    data |= {"weights": {"w": weights}}
    path = tmp_path / "rep.stencil.yaml"
    path.write_text(parse_definition(data, path.name).to_yaml())
    return path


def errors(path: Path, changes: list[dict[str, int]], template: str | None = None) -> list[float]:
    """For each configuration the space allows, the largest difference of the outputs
    (from the package's template, or ``template``: a whole stencil.cl) from the numpy
    reference, in units of the definition's tolerance: at most 1 is within it."""
    definition = load_definition(path)
    if template is None:
        kernel = load_kernel(path).with_sizes(SIZES)
    else:
        with words.template_ab.rendering_from(template):
            kernel = load_kernel(path).with_sizes(SIZES)
    assert "WQ_LOAD()" in kernel.source and "STENCIL_TERMS(VECTOR_TERM_Q)" in kernel.source
    arrays = words._arrays(kernel, seed=11)
    for name, values in definition.weights.items():  # the definition's weights
        arrays[name] = np.asarray(values, dtype=np.float32)
    out = definition.output
    fields = {f: arrays[f] for f in definition.fields}
    want = definition.reference(fields, arrays[out])
    tol = definition.tolerance(max(float(np.abs(a).max()) for a in fields.values()))
    assert tol > 0
    worst = []
    with words._evaluator(kernel, arrays) as ev:  # each configuration from the same arrays
        for cfg in words.allowed(kernel, changes):
            got = words._outputs_of(ev, cfg)[out]
            worst.append(float(np.abs(got.astype(np.float64) - want).max()) / tol)
    return worst


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_the_array_weighted_convolutions_match_the_reference(
    tmp_path: Path, lifted: dict[str, Path]
) -> None:
    for name in LIFTED:
        worst = errors(lifted[name], CHANGES)
        assert len(worst) == len(CHANGES) and max(worst) <= 1, (name, worst)
    worst = errors(_repeated(tmp_path), INTERIOR_CHANGES)
    assert len(worst) == len(INTERIOR_CHANGES) and max(worst) <= 1, worst


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_hoist_that_takes_the_wrong_weight_is_caught(lifted: dict[str, Path]) -> None:
    """The template with the hoisted weights mirrored in x: the convolution's outputs
    (vector CY 2, 2D streaming) leave the reference's tolerance, so the hoisted values
    are what the terms use."""
    text = template_source()
    assert text.count(HOISTED) == 1
    mirrored = text.replace(HOISTED, HOISTED.replace("WQ_AT(wq_, dx,", "WQ_AT(wq_, -dx,"))
    worst = errors(lifted["convolution"], CHANGES[:2], mirrored)
    assert len(worst) == 2 and min(worst) > 1, worst
