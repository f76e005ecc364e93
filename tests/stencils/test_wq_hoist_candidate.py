"""Issue 48's candidate ``benchmarks/candidates/wq_hoist.patch``: the primary field's
coefficients read once a work-item, at the kernel's entry, instead of at each use, for
the 5x5 convolutions whose weights are a run-time ``__constant`` array (clang's PTX of
the package's template loads them again for each row of outputs or streamed row:
benchmarks/results/lift/h200-all/conv_ptx.md).

The candidate changes no sum, its order nor its contractions, so on PoCL it must give
the package template's bits: the two array-weighted corpus kernels (convolution,
conv_padded_mask) lifted as issue 48's runs lift them, at their H200 winners' shapes
(vector CY 2, 2D streaming with cyclic merging) and the global, local and vector
techniques; a definition with an offset named by two terms (the package's coefficient
kept at each use) and the interior path with row blocks; every output within the
definition's tolerance of the numpy reference. A hoist that takes the wrong offset's
weight is caught.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.device import LIMIT_NAMES
from gtune.kernel import TunableKernel
from gtune.stencils.definition import load_definition, parse_definition
from tests.conftest import run_gtune
from tests.stencils import test_int_words as words

pytestmark = pytest.mark.candidate  # a candidate template: run with --candidates

PATCH = "wq_hoist.patch"
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


def _lift(name: str, out: Path) -> Path:
    size, flags, more = LIFTED[name]
    path = out / f"{name}.stencil.yaml"
    plain = str(ROOT / "stencils" / "plain" / f"{name}.cl")
    done = run_gtune("lift", plain, "--size", size, *flags, *more, "-o", str(path))
    assert done.returncode == 0, done.stderr
    return path


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


def allowed(kernel: TunableKernel, changes: list[dict[str, int]]) -> list[dict[str, int]]:
    """The default configuration with each change, where the space allows it (the
    device's limits taken as large: these work-groups are small)."""
    default = dict(kernel.default_config() or {})
    limits = dict.fromkeys(LIMIT_NAMES, 1 << 20)
    out = []
    for change in changes:
        cfg = {**default, **{k: v for k, v in change.items() if k in kernel.parameter_names}}
        env = {**limits, **kernel.env(cfg)}
        if all(c.evaluate(env) for c in kernel.constraints):
            out.append(cfg)
    return out


def same_bits(path: Path, variant: str, changes: list[dict[str, int]]) -> int:
    """Configurations whose outputs from ``variant`` are the package template's bits and
    within the definition's tolerance of the numpy reference; fails at the first that
    is not."""
    definition = load_definition(path)
    package = load_kernel(path).with_sizes(SIZES)
    with words.template_ab.rendering_from(variant):
        other = load_kernel(path).with_sizes(SIZES)
    assert other.source != package.source
    arrays = words._arrays(package, seed=11)
    for name, values in definition.weights.items():  # the definition's weights
        arrays[name] = np.asarray(values, dtype=np.float32)
    out = definition.output
    fields = {f: arrays[f] for f in definition.fields}
    want = definition.reference(fields, arrays[out])
    tol = definition.tolerance(max(float(np.abs(a).max()) for a in fields.values()))
    checked = 0
    for cfg in allowed(package, changes):
        a = words._outputs(package, arrays, cfg)[out]
        b = words._outputs(other, arrays, cfg)[out]
        assert b.tobytes() == a.tobytes(), (path.name, cfg, "not the package's bits")
        assert np.abs(b.astype(np.float64) - want).max() <= tol, (path.name, cfg)
        checked += 1
    return checked


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_the_array_weighted_convolutions_give_the_package_templates_bits(
    tmp_path: Path,
) -> None:
    variant = words._variant(PATCH)
    for name in LIFTED:
        assert same_bits(_lift(name, tmp_path), variant, CHANGES) == len(CHANGES), name
    path = _repeated(tmp_path)
    assert same_bits(path, variant, INTERIOR_CHANGES) == len(INTERIOR_CHANGES)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_hoist_that_takes_the_wrong_weight_is_caught(tmp_path: Path) -> None:
    """The candidate with the hoisted weights mirrored in x: the convolution's bits
    differ, so the hoisted values are what the terms use."""
    variant = words._variant(PATCH)
    right = "#define WQ(dx, dy, dz, w) (WQ_AT(wn_, dx, dy, dz) == 1 ? WQ_AT(wq_, dx, dy, dz)"
    assert variant.count(right) == 1
    broken = variant.replace(right, right.replace("WQ_AT(wq_, dx,", "WQ_AT(wq_, -dx,"))
    with pytest.raises(AssertionError, match="not the package's bits"):
        same_bits(_lift("convolution", tmp_path), broken, CHANGES[:1])
