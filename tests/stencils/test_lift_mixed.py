"""An output whose element type is not the fields' (``output_storage``): ``uchar`` pixels
in, ``short`` or ``float`` gradients out. The definition keys, the reference, the
template's declarations (unchanged for every other kernel), and lifting such a kernel
from numpy kernels (fast; the corpus's OpenCL kernels, prewitt_u8_s16 and
laplace_u8_f32, are lifted in test_lift.py and exported in test_lift_integer.py)."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import InputError
from gtune.stencils.definition import StencilDefinition, parse_definition
from gtune.stencils.elements import to_storage
from gtune.stencils.lift import Interface, NotAStencil, ScalarArg, lift_with
from gtune.stencils.render import describe, render_source
from tests.conftest import ROOT, run_gtune
from tests.stencils.template_snapshot import without_hoist

PREWITT = [
    {"field": "src", "offset": [dx, dy], "coefficient": dx} for dy in (-1, 0, 1) for dx in (-1, 1)
]
# a Sobel derivative scaled by 1/4: sums reach past an int8's range (saturation)
SOBEL4 = [
    {"field": "src", "offset": [dx, dy], "coefficient": f"{dx * (2 - abs(dy))}/4"}
    for dy in (-1, 0, 1)
    for dx in (-1, 1)
]


def _definition(
    output: str,
    convert: str | None,
    terms: Any,
    boundary: str = "clamp",
    fields: str = "uint8",
    **more: Any,
) -> StencilDefinition:
    data: dict[str, Any] = {
        "name": "k",
        "dims": 2,
        "dtype": "float32",
        "boundary": boundary,
        "fields": ["src"],
        "output": "dst",
        "storage": fields,
        "output_storage": output,
        "terms": terms,
        **more,
    }
    if convert is not None:
        data["convert"] = convert
    return parse_definition(data, "k.stencil.yaml")


def _face(output: str, fields: str = "uint8", shape: tuple[int, int] = (20, 24)) -> Interface:
    sizes = (ScalarArg("nx", "int32", shape[1], "x"), ScalarArg("ny", "int32", shape[0], "y"))
    return Interface(
        "numpy.cl",
        "k",
        shape,
        fields,
        ("src",),
        "dst",
        ("src", "dst", "nx", "ny"),
        sizes,
        out_dtype=output,
    )


def _probe(defn: StencilDefinition) -> Any:
    def probe(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        return np.asarray(defn.reference(dict(inputs), out))

    return probe


def test_the_reference_stores_through_the_outputs_conversion() -> None:
    """The sum in float32, then the output type's conversion: an int8 output saturates
    where the uint8 fields' sum leaves its range, a float32 output keeps the sum."""
    rng = np.random.default_rng(3)
    src = rng.integers(0, 256, (12, 16)).astype(np.uint8)
    a = src.astype(np.float32)
    acc = np.zeros((10, 14), np.float32)
    for t in SOBEL4:
        dx, dy = t["offset"]
        w = np.float32(dx * (2 - abs(dy)) / 4)
        acc += w * a[1 + dy : 11 + dy, 1 + dx : 15 + dx]
    for output, convert in (("int8", "rte_sat"), ("int16", "rtz_sat"), ("float32", None)):
        d = _definition(output, convert, SOBEL4, "interior")
        out0 = rng.integers(-100, 100, (12, 16)).astype(output)
        got = d.reference({"src": src}, out0)
        assert got.dtype == np.dtype(output)
        want = out0.copy()
        want[1:-1, 1:-1] = acc if convert is None else to_storage(acc, output, convert)
        np.testing.assert_array_equal(got, want)
    assert int(np.abs(acc).max()) > 127  # (the int8 output did saturate)


@pytest.mark.parametrize(
    ("fields", "output", "convert", "terms", "boundary", "rim"),
    [
        ("uint8", "int16", "rte_sat", PREWITT, "clamp", "keep"),
        ("uint8", "int8", "rte_sat", SOBEL4, "clamp", "keep"),
        ("uint8", "int8", "half_up_sat", SOBEL4, "interior", "keep"),
        ("uint8", "int16", "rtz_sat", SOBEL4, "interior", "copy"),
        ("uint8", "float32", None, SOBEL4, "interior", "keep"),
        ("uint8", "float32", None, PREWITT, "zero", "keep"),
        ("uint16", "float32", None, SOBEL4, "clamp", "keep"),
        ("int16", "uint8", "rte_sat", SOBEL4, "clamp", "keep"),
    ],
)
def test_lifting_finds_the_weights_and_the_outputs_type(
    fields: str, output: str, convert: str | None, terms: Any, boundary: str, rim: str
) -> None:
    """Saturation and rounding in the output's range (a signed output of unsigned
    fields, and the other way round), a float output exact, a rim copied across types."""
    kernel = _definition(output, convert, terms, boundary, fields, rim=rim)
    got, _ = lift_with(_face(output, fields), _probe(kernel), name="k")
    assert (got.storage, got.out_storage, got.boundary, got.rim) == (
        fields,
        output,
        boundary,
        rim,
    )
    assert got.convert == (convert or "")
    assert sorted((t.offset, t.coefficient.factor) for t in got.terms) == sorted(
        (t.offset, t.coefficient.factor) for t in kernel.terms
    )
    again = parse_definition(yaml.safe_load(got.to_yaml()), "k.stencil.yaml")
    assert again == got


def test_a_float_output_that_is_not_the_weighted_sum_is_refused() -> None:
    """``(float)(s >> 2)`` where the definition would take ``0.25f * s``: refused."""

    def floors(inputs: Any, out: np.ndarray, scalars: Any) -> np.ndarray:
        res = out.copy()
        a = inputs["src"].astype(np.int64)
        s = a[1:-1, 2:] + a[1:-1, :-2] + a[2:, 1:-1] + a[:-2, 1:-1] - 4 * a[1:-1, 1:-1]
        res[1:-1, 1:-1] = (s >> 2).astype(np.float32)
        return res

    with pytest.raises(NotAStencil, match=r"not bit for bit|no rounding"):
        lift_with(_face("float32"), floors, name="k")


def test_the_description_and_source_declare_the_outputs_type() -> None:
    """The output argument has its own dtype; the source defines OUT_ELEM (and STORE and
    STORE_VECTOR for an integer output only); the techniques are global, local, vec and
    (the terms listed in y order) 2D streaming, the doc says why."""
    for output, convert, ctype in (("int16", "rtz_sat", "short"), ("float32", None, "REAL")):
        d = _definition(output, convert, PREWITT)
        desc = describe(d, {"NX": 32, "NY": 16}, source="k.cl")
        args = {a["name"]: a["dtype"] for a in desc["arguments"]}
        assert args == {"src": "uint8", "dst": output}
        assert set(desc["techniques"]) == {"global", "local", "vec", "stream"}
        assert "uint8 fields" in desc["doc"]
        assert "global, local and vector techniques and 2D streaming" in desc["doc"]
        src = render_source(d)
        assert f"#define OUT_ELEM {ctype}" in src
        assert "__global OUT_ELEM *restrict DST" in src
        assert ("#define STORE(v) convert_short_sat(v)" in src) == (convert is not None)
        vector = "#define STORE_VECTOR(v) CAT(CAT(convert_short, VX), _sat)(v)"
        assert (vector in src) == (convert is not None)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"output_storage": "uint9"}, "output_storage: expected the output's element type"),
        ({"output_storage": "float64"}, "or the arithmetic's float32, got 'float64'"),
        ({"convert": "rte_sat"}, "convert: the output holds float32"),
        (
            {"storage": "float32", "output_storage": "int16"},
            "output_storage: an output element type of its own is for",
        ),
    ],
)
def test_bad_output_storage_is_an_error(change: dict[str, Any], why: str) -> None:
    data = _definition("float32", None, PREWITT).to_dict()
    data.update(change)
    with pytest.raises(InputError, match=re.escape(why)) as info:
        parse_definition(data, "k.stencil.yaml")
    assert "k.stencil.yaml" in str(info.value)


def test_an_integer_output_needs_its_conversion(tmp_path: Path) -> None:
    data = _definition("int16", "rte_sat", PREWITT).to_dict()
    del data["convert"]
    bad = tmp_path / "bad.stencil.yaml"
    bad.write_text(yaml.safe_dump(data))
    r = run_gtune("space", str(bad), "--size", "32x16")
    assert r.returncode == 2
    assert f"{bad}: convert: expected how a result becomes a int16" in r.stderr
    assert "Traceback" not in r.stderr


def _preprocessed(text: str, flags: list[str], tmp_path: Path) -> str:
    src = tmp_path / "k.cl"
    src.write_text(text)
    pre = subprocess.run(
        ["cpp", "-P", "-undef", "-DNX=64", "-DNY=32", *flags, str(src)],
        capture_output=True,
        text=True,
    )
    assert pre.returncode == 0, pre.stderr
    return " ".join(pre.stdout.split())


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_integer_element_code_is_unchanged_after_preprocessing(tmp_path: Path) -> None:
    """A kernel of uint8 fields and output (``tests/data/binomial_u8_uniform.cl.gz``,
    rendered before OUT_ELEM existed) preprocesses to the same code as now, with every
    technique it is tuned with and a written rim (the coefficients' hoist, later than
    that file, undone: template_snapshot.without_hoist)."""
    old = gzip.decompress((ROOT / "tests" / "data" / "binomial_u8_uniform.cl.gz").read_bytes())
    old_text = old.decode()
    binomial = [
        {"field": "src", "offset": [dx, dy], "coefficient": f"{(2 - abs(dx)) * (2 - abs(dy))}/16"}
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    data = {
        "name": "k",
        "dims": 2,
        "dtype": "float32",
        "boundary": "interior",
        "rim": "copy",
        "fields": ["src"],
        "output": "dst",
        "storage": "uint8",
        "convert": "rte_sat",
        "terms": binomial,
    }
    new = without_hoist(render_source(parse_definition(data, "k.stencil.yaml")))
    for cfg in ([], ["-DLOCAL=1"], ["-DBX=2", "-DCX=2"]):
        assert _preprocessed(old_text, cfg, tmp_path) == _preprocessed(new, cfg, tmp_path), cfg


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("output", "convert", "boundary", "rim"),
    [("int8", "rte_sat", "interior", "copy"), ("float32", None, "zero", "keep")],
)
def test_a_mixed_kernel_verifies_in_the_techniques_it_is_tuned_with(
    output: str, convert: str | None, boundary: str, rim: str, tmp_path: Path
) -> None:
    """Rendered on PoCL, bit for bit against the reference with the global, the local
    and the vector technique (an int8 output that saturates, its rim a copy of the uint8
    field, with whole rim vectors and row blocks too; a float output with the zero
    boundary) and streaming (the terms are listed in y order); no other technique is
    offered."""
    from dataclasses import replace

    from gtune.description import load_kernel
    from gtune.measure import OpenCLEvaluator, Status, select_device
    from tests.stencils.test_definition_opencl import technique_configs, verify_all

    path = tmp_path / "k.stencil.yaml"
    path.write_text(_definition(output, convert, SOBEL4, boundary, rim=rim).to_yaml())
    kernel = load_kernel(path).with_sizes({"NX": 32, "NY": 16})
    assert set(kernel.techniques) == {"global", "local", "vec", "stream"}
    limits = select_device(None).limit_values()
    rims = {"vec rim", "vec blocks"} if boundary == "interior" else set()
    assert set(verify_all(kernel, limits)) == {"global", "vec", "local", "stream", *rims}
    if convert is None:
        return
    # the same kernel rounding towards zero: caught, so the check above is exact
    store = "#define STORE(v) convert_char_sat_rte(v)"
    vector = "#define STORE_VECTOR(v) CAT(CAT(convert_char, VX), _sat_rte)(v)"
    assert store in kernel.source and vector in kernel.source
    source = kernel.source.replace(store, store.replace("_rte", ""))
    rtz = replace(kernel, source=source.replace(vector, vector.replace("_rte", "")))
    evaluator = OpenCLEvaluator(rtz, runs=1)
    try:
        for technique, cfg in technique_configs(kernel, limits).items():
            assert evaluator.evaluate(cfg).status is Status.WRONG_RESULT, technique
    finally:
        evaluator.close()
