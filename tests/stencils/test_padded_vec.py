"""The vector technique for a padded primary field: each padded row read as whole
vectors from its first stored point (``(NX + 2*SRC_PAD_X) % VX == 0``, a constraint of
the space), rows and planes beyond the array's edge read from the pad. Its description,
the space's alignment rule, and on PoCL the results against the numpy reference (VX 2
and 4, whole rim vectors, row blocks, the interior path, SEP, an unpadded second field,
3D, integer elements bit for bit) and a corpus convolution lifted and tuned with
``technique="vec"`` against its original."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.space.build import build_space, technique_space
from gtune.stencils.definition import StencilDefinition, load_definition, parse_definition
from gtune.stencils.render import definition_kernel_of, describe, render_source
from tests.space.space_helpers import h100_limits
from tests.stencils.test_padded import _conv, _weighted

ROUND_TO_THE_PAD = "#define SPX(dx) ((dx) + SRC_PAD_X)"
EDGE_ROWS = "#define SVR{axis}(i) (i)"  # one output row's rows and planes: never clamped


def _binomial(pad: int, boundary: str = "interior") -> dict[str, Any]:
    """A separable 3x3 binomial blur of a field padded by ``pad``."""
    terms = [
        {"field": "src", "offset": [dx, dy], "coefficient": f"{(2 - abs(dx)) * (2 - abs(dy))}/16"}
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    return {
        "dims": 2,
        "boundary": boundary,
        "fields": ["src"],
        "output": "dst",
        "terms": terms,
        "pad": {"src": [pad, pad]},
    }


def _with_power(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a second, unpadded field read at its point and right neighbour."""
    return {
        **data,
        "fields": ["src", "power"],
        "terms": data["terms"]
        + [
            {"field": "power", "coefficient": 0.5},
            {"field": "power", "offset": [1, 0], "coefficient": -0.25},
        ],
    }


def _ints(data: dict[str, Any], storage: str) -> dict[str, Any]:
    """``data`` with integer elements, each result rounded to the nearest (ties even)."""
    return {**data, "storage": storage, "convert": "rte_sat"}


def _definition(data: dict[str, Any]) -> StencilDefinition:
    return parse_definition(data, "p.stencil.yaml")


def test_padded_floats_offer_the_vector_technique() -> None:
    d = _definition(_weighted(2, 2))
    desc = describe(d, {"NX": 32, "NY": 16}, source="k.cl")
    assert set(desc["techniques"]) == {"global", "local", "vec", "stream"}
    assert "(NX+4) % VX == 0" in desc["constraints"]
    assert "STREAM == 0 or VX == 1" in desc["constraints"]
    assert "VX divides NX+4" in desc["doc"]
    three = describe(_definition(_conv(3, 1, "clamp", 1)), {"NX": 32, "NY": 8, "NZ": 8}, source="k")
    assert set(three["techniques"]) == {"global", "local", "vec"}
    assert "(NX+2) % VX == 0" in three["constraints"] and "STREAM == 0" in three["constraints"]
    # integer elements listed x-major (not in y order): no streaming, which would sum
    # them in another order (test_integer_stream.py); in y order, streaming value by value
    ints = _definition(_ints(_conv(2, 1, "clamp", 1), "uint8"))
    desc = describe(ints, {"NX": 32, "NY": 16}, source="k")
    assert set(desc["techniques"]) == {"global", "local", "vec"}
    assert {"(NX+2) % VX == 0", "STREAM == 0"} <= set(desc["constraints"])
    terms = ints.to_dict()["terms"]
    by_y = {**ints.to_dict(), "terms": sorted(terms, key=lambda t: t.get("offset", [0, 0])[1])}
    desc = describe(_definition(by_y), {"NX": 32, "NY": 16}, source="k")
    assert set(desc["techniques"]) == {"global", "local", "vec", "stream"}
    assert {"(NX+2) % VX == 0", "STREAM == 0 or VX == 1"} <= set(desc["constraints"])


def test_a_padded_row_that_vectors_do_not_tile_is_outside_the_space(tmp_path: Path) -> None:
    """Pad 1 on 128 columns: rows of 130 points take VX = 2 only; pad 2 (132) VX = 2 and
    4. The template refuses a misaligned row itself (a kernel built by hand)."""
    for pad, widths in ((1, {2}), (2, {2, 4})):
        d = _definition(_conv(2, 1, "interior", pad))
        kernel = definition_kernel_of(d, {"NX": 128, "NY": 32})
        space = technique_space(build_space(kernel, h100_limits()), kernel, "vec")
        seen = {c["VX"] for c in space.enumerate()}
        assert seen == widths, (pad, seen)
    if shutil.which("cpp") is None:
        return
    src = tmp_path / "k.cl"
    src.write_text(render_source(_definition(_conv(2, 1, "interior", 1))))
    flags = ["-DNX=128", "-DNY=32", "-DVX=4", "-DBX=4"]
    pre = subprocess.run(["cpp", "-P", "-undef", *flags, str(src)], capture_output=True, text=True)
    assert pre.returncode != 0 and "(NX + 2*SRC_PAD_X) % VX == 0" in pre.stderr


def _vec_configs(kernel: TunableKernel, interior: bool, dims: int) -> list[dict[str, int]]:
    """Vector configurations inside the kernel's constraints: VX 2 and 4 where the pad
    allows, and with the interior boundary whole rim vectors, row blocks, RIN, SEP."""
    default = kernel.default_config()
    assert default is not None
    changes: list[dict[str, int]] = [
        {"VX": 2, "BX": 2, "WX": 8},
        {"VX": 4, "BX": 4, "WX": 4},
        {"VX": 2, "BX": 2, "WX": 4, "CX": 2},
        {"VX": 2, "BX": 2, "WX": 8, "CY": 2},
    ]
    if interior:
        by = {"BY": 2} | ({"BZ": 2} if dims == 3 else {})
        # whole rim vectors with row blocks, with the interior path (RIN) too, and RIN
        # at VX 4 without blocks (whole rim vectors alone read the padded rows through
        # the same SVREAD_TERM; test_definition_opencl.py runs them unpadded)
        changes += [
            {"VX": 2, "BX": 2, "WX": 8, "RIM": 1, **by},
            {"VX": 2, "BX": 2, "WX": 8, "RIM": 1, "RIN": 1, **by},
            {"VX": 4, "BX": 4, "WX": 4, "RIM": 1, "RIN": 1},
        ]
        if "SEP" in kernel.parameter_names:
            changes += [
                {"VX": 2, "BX": 2, "WX": 8, "RIM": 1, "SEP": 1, **by},
                {"VX": 2, "BX": 2, "WX": 8, "RIM": 1, "RIN": 1, "SEP": 1, **by},
            ]
    limits = select_device(None).limit_values()
    out = []
    for change in changes:
        cfg = {**default, **change}
        if all(c.evaluate({**kernel.env(cfg), **limits}) for c in kernel.constraints):
            out.append(cfg)
    assert any(c["VX"] == 2 for c in out) and (not interior or any(c["RIM"] for c in out))
    return out


CASES = {
    "5x5 weights array, clamp, pad 2": (_weighted(2, 2, "clamp"), {"NX": 32, "NY": 16}),
    "5x5 weights array, interior, pad 2": (_weighted(2, 2, "interior"), {"NX": 32, "NY": 16}),
    "3x3, clamp, pad 1": (_conv(2, 1, "clamp", 1), {"NX": 32, "NY": 16}),
    "3x3 and a second field, interior, pad 1": (
        _with_power(_conv(2, 1, "interior", 1)),
        {"NX": 32, "NY": 16},
    ),
    "3x3 binomial (SEP), interior, pad 2": (_binomial(2), {"NX": 32, "NY": 16}),
    "3D 3x3x3, clamp, pad 1": (_conv(3, 1, "clamp", 1), {"NX": 32, "NY": 8, "NZ": 8}),
    "3D 3x3x3, interior, pad 2": (_conv(3, 1, "interior", 2), {"NX": 32, "NY": 8, "NZ": 8}),
    # integer elements (binomial weights: k/16, ties for rte): the check is bit for bit
    "uint8 3x3 binomial, clamp, pad 2": (
        _ints(_binomial(2, "clamp"), "uint8"),
        {"NX": 32, "NY": 16},
    ),
    "uint8 3x3 binomial, interior, pad 2": (_ints(_binomial(2), "uint8"), {"NX": 32, "NY": 16}),
    "int16 3D 3x3x3, interior, pad 1": (
        _ints(_conv(3, 1, "interior", 1), "int16"),
        {"NX": 32, "NY": 8, "NZ": 8},
    ),
}


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_vector_technique_reads_a_padded_field(case: str) -> None:
    """Every configuration equals the numpy reference (the evaluator's check); the same
    kernel with its vectors read from the array's row start (the pad's shift dropped),
    or (clamp) its rows beyond an edge clamped into the array, not the pad, is caught."""
    data, sizes = CASES[case]
    d = _definition(data)
    kernel = definition_kernel_of(d, sizes)
    assert "vec" in kernel.techniques
    configs = _vec_configs(kernel, d.boundary == "interior", d.dims)
    assert ROUND_TO_THE_PAD in kernel.source
    unshifted = kernel.source.replace(ROUND_TO_THE_PAD, "#define SPX(dx) (dx)")
    wrongs = [replace(kernel, source=unshifted)]
    for axis in ("Y", "Z")[: d.dims - 1] if d.boundary == "clamp" else ():
        rows = EDGE_ROWS.format(axis=axis)
        edge = f"#define SVR{axis}(i) min(max((i), 0), N{axis} - 1)"  # into the array
        assert kernel.source.count(rows) == 1
        wrongs.append(replace(kernel, source=kernel.source.replace(rows, edge)))
    with OpenCLEvaluator(kernel, runs=1) as ev:
        for cfg in configs:
            result = ev.evaluate(cfg)
            assert result.status is Status.OK, (cfg, result.message)
    for bad in wrongs:  # the first configuration reads every row through the mutant
        with OpenCLEvaluator(bad, runs=1) as wrong:
            assert wrong.evaluate(configs[0]).status is Status.WRONG_RESULT, configs[0]


def _open_corpus(name: str) -> Any:
    from tests.stencils.test_lift import _open_plain

    return _open_plain(name)


@pytest.mark.opencl
@pytest.mark.parametrize("name", ["convolution"])  # conv_padded_mask: the same idiom
@pytest.mark.usefixtures("shared_workers")
def test_a_padded_corpus_convolution_tunes_with_vec_against_its_original(
    name: str, tmp_path: Path
) -> None:
    """The corpus kernel lifted (its input padded by 2, a filter array), checked against
    the original kernel's output and tuned with the vector technique alone: every
    configuration tried verifies, and each reads vectors (VX > 1)."""
    from gtune import tune
    from gtune.budget import Budget
    from gtune.description import load_kernel
    from gtune.measure.lifting import against_original, lift_kernel
    from tests.stencils.test_lift import MANIFEST

    device = select_device(None)
    original = _open_corpus(name)
    out = tmp_path / f"{name}.stencil.yaml"
    defn, _ = lift_kernel(original, device=device, output=out, flags=MANIFEST[name]["flags"])
    out.write_text(defn.to_yaml())
    assert defn.pads and set(defn.weights)
    template = load_kernel(out, dict(original.sizes))
    assert "vec" in template.techniques
    checked = against_original(template, load_definition(out), original, device, tmp_path)
    report = tune(
        checked,
        device=device,
        technique="vec",
        budget=Budget.parse("3"),
        store="sqlite://",
        compile_workers=0,
        runs=1,
    )
    runs = [run.outcome for run in report.runs if run.outcome is not None]
    results = [(e.config, e.result) for outcome in runs for e in outcome.trace]
    assert report.best_result is not None and results
    assert all(r.status is Status.OK for _, r in results), [r.message for _, r in results]
    assert all(c["VX"] > 1 for c, _ in results)
    assert not any(r.extra.get("unverified") for _, r in results)
