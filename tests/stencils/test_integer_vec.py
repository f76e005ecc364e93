"""The vector technique for kernels of integer elements (``storage: uint8`` ...): ELEM
vectors loaded and converted to REAL, the terms summed lane by lane in the scalar code's
order, a vector of results stored through ``STORE_VECTOR``. Its description (vec kept,
SEP and images left out; streaming: test_integer_stream.py), and on PoCL its results
bit for bit against the numpy reference with VX 4 and 16, whole rim vectors, row blocks
and the interior path.

``tests/data/stencil_before_int_vec.cl.gz`` is the template as it was before integer
elements had the vector technique: every float kernel preprocesses to the code it gave.
When the template's vector code changes on purpose later, that snapshot (and the test
that reads it) retires.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.stencils.definition import StencilDefinition, parse_definition
from gtune.stencils.elements import store_vector_macro
from gtune.stencils.real import REAL
from gtune.stencils.render import describe, integer_streams, render_source
from tests.stencils.template_snapshot import beside_snapshot, cpp, older_definitions, sizes_of

ROOT = Path(__file__).resolve().parents[2]
BEFORE = ROOT / "tests" / "data" / "stencil_before_int_vec.cl.gz"
CORPUS = ROOT / "tests" / "data" / "definitions"


def _binomial(dims: int) -> list[dict[str, Any]]:
    """A binomial blur (separable, weights k/16 or k/64): ties for ``rte``."""
    scale = 64 if dims == 3 else 16
    return [
        {
            "field": "src",
            "offset": [dx, dy, dz][:dims],
            "coefficient": f"{(2 - abs(dx)) * (2 - abs(dy)) * (2 - abs(dz) if dims == 3 else 1)}"
            f"/{scale}",
        }
        for dz in ((-1, 0, 1) if dims == 3 else (0,))
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]


def _sharpen(dims: int) -> list[dict[str, Any]]:
    """A sharpen: the centre 1.5, its face neighbours -1/8, negative sums."""
    faces = [[1, 0], [-1, 0], [0, 1], [0, -1]]
    if dims == 3:
        faces = [[*f, 0] for f in faces] + [[0, 0, 1], [0, 0, -1]]
    return [
        {"field": "src", "coefficient": 1.5},
        *({"field": "src", "offset": o, "coefficient": "-1/8"} for o in faces),
    ]


def _gradient(dims: int) -> list[dict[str, Any]]:
    """A Prewitt-like x-derivative scaled by 1/4 (antisymmetric, not separable here:
    a y-offset term more on one side)."""
    rows = [(dy, dz) for dz in ((-1, 0, 1) if dims == 3 else (0,)) for dy in (-1, 0, 1)]
    terms = [
        {"field": "src", "offset": [dx, dy, dz][:dims], "coefficient": f"{dx}/4"}
        for dy, dz in rows
        for dx in (-1, 1)
    ]
    terms.append({"field": "src", "offset": [2, 1, 0][:dims], "coefficient": "1/8"})
    return terms


def _mask() -> list[dict[str, Any]]:
    """Terms of a second field, ``mask``: its point and its right neighbour."""
    return [
        {"field": "mask", "coefficient": "-1/4"},
        {"field": "mask", "offset": [1, 0], "coefficient": "1/8"},
    ]


def _random_weights(dims: int, low: float = 0.01, high: float = 0.25) -> list[dict[str, Any]]:
    """A 3x3 (3x3x3) of random 3-decimal weights in [low, high): no product of a weight
    and a pixel is exact in float32, so a kernel that contracts ``acc += w * v`` to an
    fma rounds differently from separate products and sums at some points."""
    rng = np.random.default_rng(48)
    offsets = [
        [dx, dy, dz][:dims]
        for dz in ((-1, 0, 1) if dims == 3 else (0,))
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    return [
        {"field": "src", "offset": o, "coefficient": round(float(w), 3)}
        for o, w in zip(offsets, rng.uniform(low, high, len(offsets)), strict=True)
    ]


def _twelfths(dims: int) -> list[dict[str, Any]]:
    """A fourth-order Laplacian-like star: -1/12 and 4/3 (neither exact in float32)."""
    terms: list[dict[str, Any]] = [{"field": "src", "coefficient": "-5/2"}]
    for axis in range(dims):
        for d, c in ((1, "4/3"), (-1, "4/3"), (2, "-1/12"), (-2, "-1/12")):
            o = [0] * dims
            o[axis] = d
            terms.append({"field": "src", "offset": o, "coefficient": c})
    return terms


def _definition(
    dims: int,
    terms: list[dict[str, Any]],
    storage: str,
    convert: str | None,
    boundary: str,
    output: str | None = None,
    **more: Any,
) -> StencilDefinition:
    data: dict[str, Any] = {
        "name": "k",
        "dims": dims,
        "dtype": "float32",
        "boundary": boundary,
        "fields": ["src"],
        "output": "dst",
        "storage": storage,
        "terms": terms,
        **more,
    }
    if convert is not None:
        data["convert"] = convert
    if output is not None:
        data["output_storage"] = output
    return parse_definition(data, "k.stencil.yaml")


def test_the_vector_store_converts_each_lane_as_store_does() -> None:
    assert (
        store_vector_macro("uint8", "rte_sat", "float")
        == "#define STORE_VECTOR(v) CAT(CAT(convert_uchar, VX), _sat_rte)(v)"
    )
    assert (
        store_vector_macro("int16", "half_up", "float")
        == "#define STORE_VECTOR(v) CAT(convert_short, VX)((v) + 0.5f)"
    )
    assert (
        store_vector_macro("int32", "half_up_sat", "double")
        == "#define STORE_VECTOR(v) CAT(CAT(convert_int, VX), _sat)((v) + 0.5)"
    )
    assert store_vector_macro("uint16", "rtz", "float") == (
        "#define STORE_VECTOR(v) CAT(convert_ushort, VX)(v)"
    )


@pytest.mark.parametrize(
    ("terms", "output", "convert", "separable"),
    [
        (_binomial(2), None, "rte_sat", True),
        (_gradient(2), "int16", "rtz_sat", False),
        (_gradient(2), "float32", None, False),
    ],
)
def test_integer_kernels_offer_the_vector_technique(
    terms: Any, output: str | None, convert: str | None, separable: bool
) -> None:
    """global, local and vec, 2D streaming where the terms are listed in y order
    (test_integer_stream.py); no SEP (another order of the sum); the doc says why; the
    source defines STORE_VECTOR for an integer output only."""
    d = _definition(2, terms, "uint8", convert, "interior", output)
    desc = describe(d, {"NX": 64, "NY": 16}, source="k.cl")
    streams = integer_streams(d)
    assert set(desc["techniques"]) - {"stream"} == {"global", "local", "vec"}
    assert ("stream" in desc["techniques"]) == streams
    assert "VX > 1" in desc["techniques"]["vec"]
    assert ("STREAM == 0" in desc["constraints"]) != streams
    assert "VX == 1" not in desc["constraints"]
    assert ("SEP" in desc["parameters"]) == separable
    assert ("SEP == 0" in desc["constraints"]) == separable
    assert desc["parameters"]["VX"]["values"] == [1, 2, 4, 8, 16]
    assert "global, local and vector techniques" in desc["doc"]
    assert "without SEP" in desc["doc"]
    src = render_source(d)
    assert ("#define STORE_VECTOR(v)" in src) == (output != "float32")
    assert "tuned with global, local, vec" + (" and stream" if streams else "") in src


def test_padded_integer_fields_take_the_vector_technique_too() -> None:
    """Its padded rows as whole vectors (test_padded_vec.py); no SEP; streamed value by
    value (a binomial is listed in y order), as a float field's padded rows are."""
    d = _definition(2, _binomial(2), "uint8", "rte_sat", "clamp", pad={"src": [1, 1]})
    desc = describe(d, {"NX": 64, "NY": 16}, source="k.cl")
    assert set(desc["techniques"]) == {"global", "local", "vec", "stream"}
    assert {"(NX+2) % VX == 0", "STREAM == 0 or VX == 1", "SEP == 0"} <= set(desc["constraints"])
    assert "STREAM == 0" not in desc["constraints"]
    assert "so VX divides NX+2" in desc["doc"] and "in 2D streaming" in desc["doc"]


def _vector_configs(block: str) -> list[str]:
    """The vector technique's switches (and the others' once), whole rim vectors with
    row blocks, the interior path and (separable stencils) SEP."""
    dims3 = "#define ARRAY_DIMS 3" in block
    configs = ["", "-DLOCAL=1", "-DSTREAM=1 -DZC=4 -DBX=2", "-DVX=4 -DBX=4", "-DVX=16 -DBX=16"]
    configs.append("-DVX=2 -DBX=4 -DCX=2")
    if "#define CLAMP" not in block:
        for vx, by in ((4, 2), (8, 1)):
            rim = f"-DVX={vx} -DBX={vx} -DRIM=1 -DBY={by}" + (" -DBZ=2" if dims3 else "")
            configs += [rim, rim + " -DRIN=1"]
            if "SEP_X_TERMS" in block:
                configs += [rim + " -DSEP=1", rim + " -DRIN=1 -DSEP=1"]
    return configs


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float_kernels_preprocess_to_the_code_before_integer_vectors(tmp_path: Path) -> None:
    """Every real stencil and the corpus's definitions (clamp, zero, a written rim, a
    constant rim, float64, a separable one), rendered, preprocess with the vector
    technique's switches to the same text as the template before integer elements had
    the vector technique, rendered with the same stencil."""
    stencils: list[Any] = [REAL[n]() for n in sorted(REAL)]
    stencils += older_definitions(CORPUS)
    for block, new, old in beside_snapshot(BEFORE, stencils):
        for cfg in _vector_configs(block):
            flags = sizes_of(block) + cfg.split()
            want = cpp(old, flags, tmp_path)
            assert want[0] == 0, (block[:80], cfg, want[1][-300:])
            assert cpp(new, flags, tmp_path) == want, (block[:80], cfg)


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_integer_elements_with_sep_or_streaming_along_z_are_an_error(tmp_path: Path) -> None:
    src = render_source(_definition(2, _binomial(2), "uint8", "rte_sat", "interior"))
    sizes = ["-DNX=64", "-DNY=32"]
    for cfg in ("-DVX=4 -DBX=4 -DRIM=1 -DSEP=1", "-DSTREAM=1 -DZC=4 -DSEP=1"):
        rc, out = cpp(src, sizes + cfg.split(), tmp_path)
        assert rc != 0 and "integer elements are read by the global, local and vector" in out
    assert cpp(src, [*sizes, "-DVX=16", "-DBX=16", "-DRIM=1", "-DRIN=1"], tmp_path)[0] == 0
    assert cpp(src, [*sizes, "-DSTREAM=1", "-DZC=4", "-DVX=4", "-DBX=4"], tmp_path)[0] == 0
    src3 = render_source(_definition(3, _binomial(3), "uint8", "rte_sat", "interior"))
    rc, out = cpp(src3, [*sizes, "-DNZ=8", "-DSTREAM=1", "-DZC=4"], tmp_path)
    assert rc != 0 and "no streaming along z" in out


# (dims, terms, fields, convert, boundary, output, more): uint8 with ties (rte_sat),
# int16 with negative weights, uint8 -> int16 and uint8 -> float32 outputs, 2D and 3D,
# the clamp, zero and interior boundaries (one with a copied rim)
CASES = {
    "u8-2d-clamp": (2, _binomial(2), "uint8", "rte_sat", "clamp", None, {}),
    "i16-2d-interior": (2, _sharpen(2), "int16", "rte_sat", "interior", None, {}),
    "u8-s16-2d-interior": (2, _gradient(2), "uint8", "rtz_sat", "interior", "int16", {}),
    "u8-2d-zero": (2, _binomial(2), "uint8", "half_up_sat", "zero", None, {}),
    "u8-3d-interior-copy": (3, _binomial(3), "uint8", "rte_sat", "interior", None, {"rim": "copy"}),
    "i16-3d-clamp": (3, _sharpen(3), "int16", "half_up_sat", "clamp", None, {}),
    "u8-f32-3d-interior": (3, _gradient(3), "uint8", None, "interior", "float32", {}),
    # weights no product is exact with (the reference adds each term as the kernel's
    # contracted acc += w * v does: one rounding)
    "u8-2d-random-weights": (2, _random_weights(2), "uint8", "rte_sat", "interior", None, {}),
    "i16-3d-twelfths": (3, _twelfths(3), "int16", "rte_sat", "clamp", None, {}),
    # a second field (its vectors through VECTOR_EXTRA and IN_EXTRA)
    "u8-2fields-2d-interior": (
        2,
        [*_binomial(2), *_mask()],
        "uint8",
        "rte_sat",
        "interior",
        None,
        {"fields": ["src", "mask"]},
    ),
}


def _configs(kernel: Any, limits: dict[str, int], turn: int | None = None) -> list[dict[str, int]]:
    """VX 4 and 16; with the interior boundary whole rim vectors, row blocks in y (and
    z) and the interior path too. Each valid and of the vector technique. With ``turn``
    (0 or 1), half of the rim's four: those whose place has that parity (the interior
    cases take them by turns, each of the four running in three cases)."""
    default = kernel.default_config()
    changes: list[dict[str, int]] = [
        {"VX": 4, "BX": 4, "WX": 4},
        {"VX": 16, "BX": 16, "WX": 4},
        {"VX": 2, "BX": 2, "WX": 8, "CX": 2},
    ]
    if "RIM" in kernel.parameter_names:
        blocks = {n: 2 for n in ("BY", "BZ") if n in kernel.parameter_names}
        changes += [
            {"VX": 4, "BX": 4, "WX": 4, "RIM": 1},
            {"VX": 16, "BX": 16, "WX": 4, "RIM": 1, **blocks},
            {"VX": 4, "BX": 4, "WX": 4, "RIM": 1, "RIN": 1, **blocks},
            {"VX": 8, "BX": 8, "WX": 4, "RIM": 1, "RIN": 1},
        ]
        if turn is not None:
            changes = changes[:3] + changes[3 + turn :: 2]
    out = []
    for change in changes:
        cfg = {**default, **change}
        env = {**kernel.env(cfg), **limits}
        broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
        assert not broken, (cfg, broken)
        assert all(t.evaluate(env) for t in kernel.techniques["vec"]), cfg
        out.append(cfg)
    return out


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", sorted(CASES))
def test_integer_vector_kernels_equal_the_reference_bit_for_bit(case: str, tmp_path: Path) -> None:
    """Rendered on PoCL with the vector technique, verified by the evaluator (exact for
    integer elements) against the numpy reference."""
    from gtune.measure import OpenCLEvaluator, Status, select_device

    dims, terms, fields, convert, boundary, output, more = CASES[case]
    path = tmp_path / "k.stencil.yaml"
    path.write_text(_definition(dims, terms, fields, convert, boundary, output, **more).to_yaml())
    sizes = {"NX": 64, "NY": 16} if dims == 2 else {"NX": 64, "NY": 8, "NZ": 8}
    kernel = load_kernel(path).with_sizes(sizes)
    streams = "stream" in kernel.techniques  # 2D, listed in y order: test_integer_stream.py
    assert set(kernel.techniques) - {"stream"} == {"global", "local", "vec"}
    assert not streams or dims == 2
    interior = [c for c in sorted(CASES) if CASES[c][4] == "interior"]
    turn = interior.index(case) % 2 if case in interior else None
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for cfg in _configs(kernel, select_device(None).limit_values(), turn):
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (case, cfg, result.message)
    finally:
        evaluator.close()


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_wrong_vector_store_is_caught(tmp_path: Path) -> None:
    """The vector store rounding towards zero where STORE rounds to the nearest: the
    global technique still verifies, every vector configuration is a wrong result (so the
    check is exact, and the vectors are stored through STORE_VECTOR)."""
    from gtune.measure import OpenCLEvaluator, Status, select_device

    path = tmp_path / "k.stencil.yaml"
    path.write_text(_definition(2, _sharpen(2), "int16", "rte_sat", "interior").to_yaml())
    kernel = load_kernel(path).with_sizes({"NX": 64, "NY": 16})
    vector = "#define STORE_VECTOR(v) CAT(CAT(convert_short, VX), _sat_rte)(v)"
    assert vector in kernel.source
    rtz = replace(kernel, source=kernel.source.replace(vector, vector.replace("_rte", "")))
    evaluator = OpenCLEvaluator(rtz, runs=1)
    try:
        assert evaluator.evaluate(kernel.default_config() or {}).status is Status.OK
        for cfg in _configs(kernel, select_device(None).limit_values())[:2]:
            assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT, cfg
    finally:
        evaluator.close()


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("case", ["u8-2d-random-weights", "i16-3d-twelfths"])
def test_weights_no_product_is_exact_with_verify_in_every_technique(
    case: str, tmp_path: Path
) -> None:
    """The global and local techniques too (the default configuration, LOCAL=1): with
    separate products and sums in the reference, these kernels were wrong results at a
    few points in every technique."""
    from gtune.measure import OpenCLEvaluator, Status

    dims, terms, fields, convert, boundary, output, more = CASES[case]
    path = tmp_path / "k.stencil.yaml"
    path.write_text(_definition(dims, terms, fields, convert, boundary, output, **more).to_yaml())
    sizes = {"NX": 256, "NY": 128} if dims == 2 else {"NX": 32, "NY": 16, "NZ": 16}
    kernel = load_kernel(path).with_sizes(sizes)
    default = kernel.default_config() or {}
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        for cfg in (default, {**default, "LOCAL": 1}):
            result = evaluator.evaluate(cfg)
            assert result.status is Status.OK, (case, cfg, result.message)
    finally:
        evaluator.close()
