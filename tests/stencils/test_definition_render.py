"""Rendering stencil definitions: source, description, kernel interface (no OpenCL)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.description import load_kernel
from gtune.exceptions import UnsatisfiableSpace
from gtune.space.model import build_model
from gtune.stencils.definition import StencilDefinition, load_definition, parse_definition
from gtune.stencils.real import REAL
from gtune.stencils.reference import weighted_sum
from gtune.stencils.render import (
    WeightedStencil,
    c_names,
    describe,
    render_source,
    separable_factors,
    separable_scale,
)
from tests.inprocess import Cli
from tests.space.space_helpers import h100_limits
from tests.stencils.template_snapshot import without_hoist

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "definitions"


def _block(source: str) -> str:
    """The lines rendering wrote at the template's marker."""
    start = source.index("/* stencil ")
    return source[start : source.index("\n\n", start)]


def test_generated_stencils_render_as_before() -> None:
    """float32, one field, interior: only the extent and the terms are written, so the
    template's defaults (REAL float, kernel stencil(src, dst)) give the same code."""
    block = _block(render_source(REAL["heat3d"]()))
    for absent in ("REAL", "CLAMP", "KERNEL_ARGS", "KERNEL_NAME", "EXTRA_TERMS", "CONSTANT"):
        assert absent not in block
    assert "T(0, 0, 0, 0.25f)" in block


def test_definition_renders_its_interface() -> None:
    d = load_definition(CORPUS / "star3d_c.stencil.yaml")
    block = _block(render_source(d))
    assert "#define KERNEL_NAME block2D_hybrid_coarsen_x" in block
    assert "#define SRC a0" in block and "#define DST anext" in block
    args = block[block.index("KERNEL_ARGS") : block.index("STENCIL_TERMS")]
    order = ["const REAL c0", "const REAL c1", "SRC_ARG", "DST", "int nx", "int ny", "int nz"]
    positions = [args.index(a) for a in order]
    assert positions == sorted(positions)
    assert "T(0, 0, 0, (c0))" in block


def test_float64_clamp_extra_fields() -> None:
    d = load_definition(CORPUS / "thermal3d_f64.stencil.yaml")
    block = _block(render_source(d))
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in block
    assert "#define REAL double" in block and "#define CLAMP 1" in block
    assert "E(pIn, 0, 0, 0, (sdc))" in block
    assert "#define CONSTANT_TERM ((REAL)1.0*amb*ct)" not in block
    assert "#define CONSTANT_TERM (amb*ct)" in block


def test_reserved_names_are_renamed() -> None:
    data = {
        "dims": 2,
        "fields": ["x", "acc"],
        "output": "float",
        "coefficients": ["y", "lane"],
        "values": {"y": 1.0, "lane": 2.0},
        "terms": [
            {"field": "x", "offset": [1, 0], "coefficient": "y"},
            {"field": "acc", "coefficient": "lane"},
        ],
    }
    d = parse_definition(data, "n.stencil.yaml")
    names = c_names(d)
    assert names == {"x": "x_v", "acc": "acc_v", "float": "float_v", "y": "y_v", "lane": "lane_v"}
    block = _block(render_source(d))
    assert "E(acc_v, 0, 0, 0, (lane_v))" in block and "T(1, 0, 0, (y_v))" in block
    # the description keeps the user's names, in kernel order
    desc = describe(d, {"NX": 32, "NY": 16}, source="n.cl")
    assert [a["name"] for a in desc["arguments"]] == ["x", "acc", "float", "y", "lane"]


def test_description_of_a_definition() -> None:
    d = load_definition(CORPUS / "thermal2d.stencil.yaml")
    desc = describe(d, {"NX": 64, "NY": 32}, source="thermal2d.cl")
    assert desc["kernel"] == "thermal2d"
    args = {a["name"]: a for a in desc["arguments"]}
    assert args["temp"]["image_when"] == "IMAGE == 1" and "image_when" not in args["power"]
    assert args["result"]["role"] == "output" and args["cc"]["kind"] == "scalar"
    assert args["cc"]["value"] == 0.5
    assert desc["features"]["size"] == 5 and desc["features"]["terms"] == 6
    assert desc["reference"]["python"] == "gtune.stencils.reference:definition_sum"
    assert desc["reference"]["rtol"] == 0.0 and 0 < desc["reference"]["atol"] < 1e-4
    assert set(desc["techniques"]) == {"global", "vec", "local", "image", "stream"}


def test_float64_excludes_images_and_needs_doubles() -> None:
    kernel = load_kernel(CORPUS / "star3d_f64.stencil.yaml").with_sizes(
        {"NX": 64, "NY": 64, "NZ": 64}
    )
    texts = [c.text for c in kernel.constraints]
    assert "IMAGE == 0" in texts and "DOUBLE_SUPPORT == 1" in texts
    assert "image" not in kernel.techniques
    assert "float64" in kernel.parameter("IMAGE").doc
    assert "LOCAL == 0 or 8 * (min(WX*BX, NX) + 2)" in " ".join(texts)
    with pytest.raises(UnsatisfiableSpace, match="DOUBLE_SUPPORT == 1") as info:
        build_model(kernel, h100_limits())
    assert "no cl_khr_fp64" in str(info.value)
    model = build_model(kernel, h100_limits(extensions=("cl_khr_fp64",)))
    assert model.constraints


def test_zero_boundary_renders_zero_and_every_technique_but_temporal() -> None:
    """``boundary: zero``: every point written (CLAMP) reading 0 beyond the edge (ZERO),
    no whole rim vectors, the image read through a zero-border sampler."""
    d = load_definition(CORPUS / "conv2d_zero.stencil.yaml")
    block = _block(render_source(d))
    assert "#define CLAMP 1" in block and "#define ZERO 1" in block
    kernel = load_kernel(CORPUS / "conv2d_zero.stencil.yaml")
    assert set(kernel.techniques) == {"global", "vec", "local", "image", "stream"}
    assert "RIM" not in kernel.parameter_names
    assert "zero-border" in kernel.parameter("IMAGE").doc
    assert kernel.features["boundary"] == "zero"
    clamp = load_definition(CORPUS / "thermal2d.stencil.yaml")
    assert "#define ZERO" not in _block(render_source(clamp))


def test_definition_kernel_round_trips_through_workers() -> None:
    from gtune.description import from_dict

    kernel = load_kernel(CORPUS / "thermal3d.stencil.yaml", {"NX": 32, "NY": 32, "NZ": 16})
    again = from_dict(kernel.to_dict())
    assert again.identity() == kernel.identity() and again.sizes == kernel.sizes


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_definitions_match_the_rendered_stencils(name: str) -> None:
    """``stencils/NAME.stencil.yaml`` holds the stencil of ``stencils/NAME.cl``."""
    ws = REAL[name]()
    d = load_definition(ROOT / "stencils" / f"{name}.stencil.yaml")
    assert [(t.offset, t.coefficient.factor) for t in d.terms] == list(
        zip(ws.offsets, ws.weights, strict=True)
    )
    shape = (10, 11, 12) if d.dims == 3 else (11, 12)
    rng = np.random.default_rng(1)
    src = rng.random(shape).astype(np.float32)
    out0 = rng.random(shape).astype(np.float32)
    want = weighted_sum(
        {"src": src, "dst": out0},
        {},
        {},
        input="src",
        output="dst",
        offsets=ws.offsets,
        weights=ws.weights,
    )["dst"]
    np.testing.assert_array_equal(d.reference({d.fields[0]: src}, out0), want)


def test_hotspot_definition_matches_hotspot_py() -> None:
    spec = importlib.util.spec_from_file_location("hotspot_ref", ROOT / "stencils" / "hotspot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    d = load_definition(ROOT / "stencils" / "hotspot.stencil.yaml")
    rng = np.random.default_rng(2)
    t, p = (rng.random((20, 24)).astype(np.float32) for _ in range(2))
    scalars: dict[str, Any] = {k: v for k, v in d.values.items() if k != "ct"}
    want = module.reference({"temp": t, "power": p, "dst": t.copy()}, {}, scalars)["dst"]
    got = d.reference({"temp": t, "power": p}, t.copy())
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6)


def test_bad_definition_exits_2_naming_file_and_key(tmp_path: Path, gtune_here: Cli) -> None:
    bad = tmp_path / "bad.stencil.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "dims": 2,
                "fields": ["u"],
                "output": "v",
                "terms": [{"field": "u", "offset": [1, 0, 0]}],
            }
        )
    )
    r = gtune_here("space", str(bad), "--size", "32x16")
    assert r.returncode == 2
    assert f"{bad}: terms[0].offset: expected 2 integers for dims 2" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float32_interior_code_is_unchanged_after_preprocessing(tmp_path: Path) -> None:
    """The generated heat3d, preprocessed, differs from the single-field template's
    (``tests/data/heat3d_single_field.cl``, rendered before definitions existed) only in
    spelling: ``(float)0`` for ``0.0f`` and empty statements (the coefficients' hoist,
    later than that file, undone: template_snapshot.without_hoist)."""
    old = (ROOT / "tests" / "data" / "heat3d_single_field.cl").read_text()
    new = without_hoist(render_source(REAL["heat3d"]()))
    for cfg in ("", "-DVX=4 -DBX=4", "-DLOCAL=1", "-DSTREAM=1 -DZC=4 -DBX=2", "-DIMAGE=1"):
        outs = []
        for text in (old, new):
            src = tmp_path / "k.cl"
            src.write_text(text)
            flags = ["-P", "-undef", "-DNX=64", "-DNY=64", "-DNZ=64", *cfg.split()]
            pre = subprocess.run(["cpp", *flags, str(src)], capture_output=True, text=True)
            assert pre.returncode == 0, pre.stderr
            text = pre.stdout.replace("(float)0", "0.0f")
            # spelling only: parentheses, whitespace and empty statements
            text = re.sub(r"[()]", " ", text).replace(";", " ; ")
            text = text.replace("[", " [ ").replace("]", " ] ")
            text = " ".join(text.split())
            while "; ;" in text or "} ;" in text:
                text = text.replace("; ;", ";").replace("} ;", "}")
            outs.append(text)
        assert outs[0] == outs[1], cfg


def _preprocessed(text: str, flags: str, tmp_path: Path) -> str:
    src = tmp_path / "k.cl"
    src.write_text(text)
    pre = subprocess.run(["cpp", "-P", "-undef", *flags.split(), str(src)], capture_output=True)
    assert pre.returncode == 0, pre.stderr
    return pre.stdout.decode()


# the interior's points as the template wrote them before its margins could differ
_SYMMETRIC = """#define LOX RX
#define LOY RY
#define LOZ RZ
#define HIX (NX - RX)
#define HIY (NY - RY)
#define HIZ (NZ - RZ)
"""


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_interior_margins_default_to_the_radius_after_preprocessing(tmp_path: Path) -> None:
    """The interior's margins below and above each axis (RX_LO ... RZ_HI) default to the
    radius: every kernel without ``band: reach`` preprocesses to the very code of the
    template that wrote LOX = RX and HIX = NX - RX, in every technique (vector with whole
    rim vectors and row blocks, local, image, streaming in 2D and 3D, temporal
    blocking and streaming) and with a written rim."""
    start = "/* The interior's margins below"
    cases: list[tuple[WeightedStencil | StencilDefinition, str, list[str]]] = [
        (
            REAL["heat3d"](),
            "-DNX=64 -DNY=32 -DNZ=32",
            [
                "",
                "-DVX=4 -DBX=4 -DRIM=1 -DBY=2 -DBZ=2",
                "-DLOCAL=1",
                "-DIMAGE=1",
                "-DSTREAM=1 -DZC=4",
            ],
        ),
        (
            load_definition(CORPUS / "box2d.stencil.yaml"),
            "-DNX=64 -DNY=32",
            ["-DVX=4 -DBX=4", "-DSTREAM=1 -DZC=4 -DBX=4 -DVX=4", "-DTB=2", "-DTB=2 -DSTREAM=1"],
        ),
        (
            parse_definition({**_ASYMMETRIC, "steps": 4}, "a.stencil.yaml"),
            "-DNX=64 -DNY=32",
            ["", "-DVX=4 -DBX=4 -DRIM=1 -DBY=2", "-DTB=2 -DSTREAM=1", "-DTB=4"],
        ),
        (
            parse_definition({**_ASYMMETRIC, "rim": "copy"}, "r.stencil.yaml"),
            "-DNX=64 -DNY=32",
            ["", "-DLOCAL=1"],
        ),
    ]
    for stencil, sizes, configs in cases:
        new = render_source(stencil)
        assert "_LO " not in _block(new) and "_HI " not in _block(new)
        head, rest = new.split(start, 1)
        old = head + _SYMMETRIC + rest[rest.index("#define CLX") :]
        for cfg in configs:
            flags = f"{sizes} {cfg}"
            assert _preprocessed(old, flags, tmp_path) == _preprocessed(new, flags, tmp_path), cfg


_ASYMMETRIC = {
    "dims": 2,
    "fields": ["u"],
    "output": "v",
    "terms": [
        {"field": "u", "offset": [-2, 0], "coefficient": 0.25},
        {"field": "u", "offset": [0, 1], "coefficient": 0.5},
        {"field": "u"},
    ],
}


def test_band_reach_renders_the_margins_that_differ_from_the_radius() -> None:
    """``band: reach`` writes RX_HI, RY_LO ... where a side's reach is not the radius
    (taps x-2, y+1: nothing above x, nothing below y), and notes the band."""
    d = parse_definition({**_ASYMMETRIC, "band": "reach"}, "a.stencil.yaml")
    block = _block(render_source(d))
    assert "band reach" in block.splitlines()[0]
    defined = [line for line in block.splitlines() if "_LO " in line or "_HI " in line]
    assert defined == ["#define RX_HI 0", "#define RY_LO 0"]


def test_a_one_sided_separable_stencil_sums_rows_first_only_when_streaming() -> None:
    """A separable stencil one-sided in y (x-1..x+1 times y-2..y) with ``band: reach``:
    the vector technique's row sums (RIM=1, SEP=1) read every row within the radius,
    beyond the band's edge, so SEP is left to 2D streaming (which skips rows beyond an
    edge); with the radius band, or one-sided only in x, nothing changes."""
    u, v = {-1: 1.0, 0: 2.0, 1: 1.0}, {-2: 1.0, -1: 2.0, 0: 3.0}
    terms = [
        {"field": "u", "offset": [dx, dy], "coefficient": u[dx] * v[dy] / 24}
        for dy in v
        for dx in u
    ]
    data = {"name": "s", "dims": 2, "fields": ["u"], "output": "w", "terms": terms}
    sizes = {"NX": 64, "NY": 32}

    def sep_constraints(changes: dict[str, Any]) -> list[str]:
        d = parse_definition({**data, **changes}, "s.stencil.yaml")
        assert separable_factors(d) is not None
        return [c for c in describe(d, sizes, source="s.cl")["constraints"] if "SEP" in c]

    rows_first = "SEP == 0 or STREAM == 1"
    assert rows_first in sep_constraints({"band": "reach"})
    assert rows_first not in sep_constraints({})
    across = [{**t, "offset": [t["offset"][1], t["offset"][0]]} for t in terms]  # x-2..x
    assert rows_first not in sep_constraints({"band": "reach", "terms": across})


def test_stencils_render_writes_a_loadable_kernel(tmp_path: Path, gtune_here: Cli) -> None:
    r = gtune_here(
        "stencils",
        "render",
        str(CORPUS / "thermal3d.stencil.yaml"),
        str(tmp_path),
        "--size",
        "32x32x16",
    )
    assert r.returncode == 0, r.stderr
    kernel = load_kernel(tmp_path / "thermal3d.yaml")
    assert kernel.name == "thermal3d" and kernel.sizes == {"NX": 32, "NY": 32, "NZ": 16}
    from_definition = load_kernel(CORPUS / "thermal3d.stencil.yaml", kernel.sizes)
    assert kernel.source == from_definition.source
    assert [a.name for a in kernel.arguments] == [a.name for a in from_definition.arguments]
    r = gtune_here(
        "stencils", "render", str(CORPUS / "box2d.stencil.yaml"), str(tmp_path), "--size", "8x8x8"
    )
    assert r.returncode == 2 and "a 2D stencil's sizes are NX, NY" in r.stderr


def test_2d_streaming_description_and_space() -> None:
    """A 2D definition has the stream technique (along y): ZC over NY, no local memory,
    the register queue bounded, and a chunk that need not divide NY (the launch rounds
    the rows' work-items up to the work-group)."""
    from gtune.space.build import build_space, technique_space

    # NY = 1000: most chunks leave a partial one; big enough for the H100's 132 groups
    kernel = load_kernel(CORPUS / "box2d.stencil.yaml").with_sizes({"NX": 512, "NY": 1000})
    assert kernel.techniques["stream"][0].text == "STREAM == 1"
    assert "STREAM == 0" in [e.text for e in kernel.techniques["global"]]
    zc = kernel.parameter("ZC")
    assert max(zc.domain.values(kernel.sizes)) == 512 and "rows" in zc.doc  # pow2 to NY
    texts = [c.text for c in kernel.constraints]
    assert "STREAM == 0 or (LOCAL == 0 and CY == 1)" in texts
    assert any(t.startswith("STREAM == 0 or BX*CX*3 <= ") for t in texts)
    assert not any("ZC" in t and "%" in t for t in texts)  # no divisibility by the chunk
    space = technique_space(build_space(kernel, h100_limits()), kernel, "stream")
    configs = list(space.enumerate())
    assert configs and all(c["STREAM"] == 1 and c["CY"] == 1 for c in configs)
    # vector loads of the row segments: VX up to BX, BX a multiple of it
    assert {c["VX"] for c in configs} == {1, 2, 4, 8, 16}
    assert all(c["BX"] % c["VX"] == 0 for c in configs)
    assert {(c["BX"], c["VX"]) for c in configs} >= {(4, 4), (8, 4), (8, 8), (4, 1)}
    assert all(c["BX"] * c["CX"] * 3 <= 128 and c["BX"] * c["CX"] <= 32 for c in configs)
    partial = [c for c in configs if 1000 % c["ZC"]]
    assert {c["ZC"] for c in partial} >= {16, 32}  # a partial chunk: 1000 = 62.5 * 16
    for c in partial[:5] + configs[:5]:
        glob, loc = kernel.launch_sizes(c)
        assert loc is not None and glob[1] % loc[1] == 0
        # every row covered, no work-group wholly idle
        assert glob[1] * c["ZC"] >= 1000 > (glob[1] - loc[1]) * c["ZC"]
        assert kernel.launch.local_memory_bytes is None or (
            kernel.launch.local_memory_bytes.evaluate({**kernel.env(c)}) == 0
        )
    default = kernel.default_config()
    assert default is not None and default["STREAM"] == 0 and default["ZC"] == 1
    assert kernel.launch_sizes(default)[0] == (512, 1000)  # unchanged without streaming


def test_streaming_outputs_per_work_item_are_bounded() -> None:
    """A streaming work-item computes at most STREAM_OUTS_MAX outputs per plane, also
    where its queue is one plane long (no z-radius) and the queue bound alone allows more."""
    from gtune.description import parse_description
    from gtune.stencils.definition import parse_definition
    from gtune.stencils.render import STREAM_OUTS_MAX, definition_description

    flat = parse_definition(
        {
            "dims": 3,
            "dtype": "float32",
            "boundary": "interior",
            "fields": ["a"],
            "output": "b",
            "terms": [
                {"field": "a", "offset": [0, 0, 0], "coefficient": 0.5},
                {"field": "a", "offset": [1, 0, 0], "coefficient": 0.125},
                {"field": "a", "offset": [-1, 0, 0], "coefficient": 0.125},
                {"field": "a", "offset": [0, 1, 0], "coefficient": 0.25},
            ],
        },
        "flat.stencil.yaml",
    )
    source, description = definition_description(flat, {"NX": 1024, "NY": 64, "NZ": 64})
    kernel = parse_description(description, source=source, label="flat")
    limits = {
        "LOCAL_MEM_SIZE": 1 << 20,
        "LOCAL_MEM_STATIC": 1 << 20,
        "MAX_WORK_GROUP_SIZE": 1024,
        "DOUBLE_SUPPORT": 1,
    }
    base = {"WX": 8, "WY": 1, "WZ": 1, "VX": 1, "BX": 1, "CZ": 1, "LOCAL": 0, "STREAM": 1}
    base |= {"ZC": 4, "IMAGE": 0, "RIM": 0, "RIN": 0, "BY": 1, "BZ": 1}

    def valid(cx: int, cy: int) -> bool:
        names = {p.name for p in kernel.parameters}
        cfg = {k: v for k, v in {**base, "CX": cx, "CY": cy}.items() if k in names}
        env = {**kernel.env(cfg), **limits}
        return all(c.evaluate(env) for c in kernel.constraints)

    assert valid(4, 8) and valid(STREAM_OUTS_MAX, 1)
    assert not valid(8, 8) and not valid(2 * STREAM_OUTS_MAX, 1)


def _box(weights: dict[tuple[int, int], Any], /, **extra: Any) -> Any:
    data = {
        "dims": 2,
        "fields": ["u"],
        "output": "out",
        "terms": [
            {"field": "u", "offset": [dx, dy], "coefficient": w} for (dx, dy), w in weights.items()
        ],
        **extra,
    }
    return parse_definition(data, "box.stencil.yaml")


@given(
    u=st.lists(st.floats(-2, 2).filter(lambda x: abs(x) > 0.05), min_size=3, max_size=9),
    v=st.lists(st.floats(-2, 2).filter(lambda x: abs(x) > 0.05), min_size=3, max_size=9),
    dtype=st.sampled_from(["float32", "float64"]),
)
@settings(max_examples=60, deadline=None)
def test_separable_factors_reproduce_rank_one_weights(
    u: list[float], v: list[float], dtype: str
) -> None:
    """Random outer products (odd widths, radius 1-4): the factors found reproduce every
    weight; the rendered source carries them and the SEP parameter."""
    u, v = u[: len(u) // 2 * 2 + 1], v[: len(v) // 2 * 2 + 1]
    rx, ry = len(u) // 2, len(v) // 2
    w = {(i - rx, j - ry): u[i] * v[j] for j in range(len(v)) for i in range(len(u))}
    d = _box(w, dtype=dtype)
    factors = separable_factors(d)
    assert factors is not None
    fu, fv = dict(factors[0]), dict(factors[1])
    big = max(abs(x) for x in w.values())
    for (dx, dy), x in w.items():
        assert abs(fu.get(dx, 0.0) * fv.get(dy, 0.0) - x) <= 1e-12 * big
    desc = describe(d, {"NX": 64, "NY": 64}, source="box.cl")
    assert "SEP" in desc["parameters"]
    # 2D streaming, or the vector technique's whole rim vectors (interior, clamp boundary)
    assert "SEP == 0 or STREAM == 1 or RIM == 1" in desc["constraints"]
    assert "SEP_X_TERMS" in render_source(d)
    clamped = describe(_box(w, dtype=dtype, boundary="clamp"), {"NX": 64, "NY": 64}, source="b.cl")
    assert "SEP == 0 or STREAM == 1 or RIM == 1" in clamped["constraints"]
    zero = describe(_box(w, dtype=dtype, boundary="zero"), {"NX": 64, "NY": 64}, source="z.cl")
    assert "SEP == 0 or STREAM == 1" in zero["constraints"]
    assert "RIM" not in zero["parameters"]


def _box3(weights: dict[tuple[int, int, int], Any], **extra: Any) -> Any:
    data = {
        "dims": 3,
        "fields": ["u"],
        "output": "out",
        "terms": [{"field": "u", "offset": list(o), "coefficient": w} for o, w in weights.items()],
        **extra,
    }
    return parse_definition(data, "box3.stencil.yaml")


@given(
    u=st.lists(st.floats(-2, 2).filter(lambda x: abs(x) > 0.05), min_size=3, max_size=5),
    v=st.lists(st.floats(-2, 2).filter(lambda x: abs(x) > 0.05), min_size=3, max_size=5),
    s=st.lists(st.floats(-2, 2).filter(lambda x: abs(x) > 0.05), min_size=3, max_size=5),
    dtype=st.sampled_from(["float32", "float64"]),
)
@settings(max_examples=40, deadline=None)
def test_separable_factors_reproduce_rank_one_3d_weights(
    u: list[float], v: list[float], s: list[float], dtype: str
) -> None:
    """Random 3D outer products (odd widths, radius 1-2 per axis): the three factors
    reproduce every weight; the source carries them, the description SEP and its rule."""
    u, v, s = (f[: len(f) // 2 * 2 + 1] for f in (u, v, s))
    rx, ry, rz = len(u) // 2, len(v) // 2, len(s) // 2
    w = {
        (i - rx, j - ry, k - rz): u[i] * v[j] * s[k]
        for k in range(len(s))
        for j in range(len(v))
        for i in range(len(u))
    }
    d = _box3(w, dtype=dtype)
    factors = separable_factors(d)
    assert factors is not None and len(factors) == 3
    fu, fv, fs = (dict(f) for f in factors)
    big = max(abs(x) for x in w.values())
    eps = 8 * float(np.finfo(np.float32 if dtype == "float32" else np.float64).eps)
    for (dx, dy, dz), x in w.items():
        product = fu.get(dx, 0.0) * fv.get(dy, 0.0) * fs.get(dz, 0.0)
        assert abs(product - x) <= eps * big
    desc = describe(d, {"NX": 64, "NY": 64, "NZ": 64}, source="box3.cl")
    assert "SEP" in desc["parameters"]
    assert "SEP == 0 or RIM == 1" in desc["constraints"]
    source = render_source(d)
    assert all(f"SEP_{a}_TERMS" in source for a in "XYZ")


def test_a_3d_star_is_not_separable() -> None:
    star = {(0, 0, 0): 0.4, **{o: 0.1 for o in [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0)]}}
    star.update({(0, 0, 1): 0.1, (0, 0, -1): 0.1})
    d = _box3(star)
    assert separable_factors(d) is None
    assert "SEP" not in describe(d, {"NX": 64, "NY": 64, "NZ": 64}, source="s.cl")["parameters"]


@pytest.mark.parametrize(
    ("weights", "extra", "why"),
    [
        ({(0, 0): 0.5, (1, 0): 0.1, (-1, 0): 0.1, (0, 1): 0.1, (0, -1): 0.1}, {}, "a star"),
        ({(dx, dy): 1.0 + (dx == dy == 0) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}, {}, "rank 2"),
        (
            {(dx, dy): "a" if dy == 0 else "b" for dx in (-1, 0, 1) for dy in (-1, 0, 1)},
            {"coefficients": ["a", "b"], "values": {"a": 0.1, "b": 0.1}},
            "two scalars",
        ),
        (
            {(dx, dy): "0.25*a" if dy == 0 else 0.25 for dx in (-1, 0, 1) for dy in (-1, 0, 1)},
            {"coefficients": ["a"], "values": {"a": 1.0}},
            "a scalar and numbers",
        ),
        (
            {(dx, dy): f"w[{dx + 1}]*w[{dy + 1}]" for dx in (-1, 0, 1) for dy in (-1, 0, 1)},
            {"weights": {"w": [0.25, 0.5, 0.25]}},
            "weights read at run time",
        ),
        ({(dx, 0): 0.2 for dx in range(-2, 3)}, {}, "one row"),
    ],
)
def test_not_separable(
    weights: dict[tuple[int, int], Any], extra: dict[str, Any], why: str
) -> None:
    d = _box(weights, **extra)
    assert separable_factors(d) is None, why
    assert "SEP" not in describe(d, {"NX": 64, "NY": 64}, source="box.cl")["parameters"]


def test_separable_3d_needs_a_radius_on_every_axis() -> None:
    """A 3x3 box in the xy plane of a 3D array: nothing to combine in z (RZ 0)."""
    d = parse_definition(
        {
            "dims": 3,
            "fields": ["u"],
            "output": "out",
            "terms": [
                {"field": "u", "offset": [dx, dy, 0], "coefficient": 0.1}
                for dx in (-1, 0, 1)
                for dy in (-1, 0, 1)
            ],
        },
        "box3.stencil.yaml",
    )
    assert separable_factors(d) is None


_BINOMIAL = {-2: 1.0, -1: 4.0, 0: 6.0, 1: 4.0, 2: 1.0}


@pytest.mark.parametrize(
    ("scale", "extra", "rendered"),
    [
        ("gain", {"coefficients": ["gain"], "values": {"gain": 1.5}}, "*gain)"),
        (
            "alpha*beta/cap",
            {"coefficients": ["alpha", "beta", "cap"], "values": {"alpha": 2, "beta": 3, "cap": 5}},
            "*alpha*beta/(cap))",
        ),
        (
            "tau/(cap*cap)",
            {"coefficients": ["tau", "cap"], "values": {"tau": 0.1, "cap": 2}},
            "*tau/(cap*cap))",
        ),
    ],
)
def test_a_number_times_a_common_scalar_is_separable(
    scale: str, extra: dict[str, Any], rendered: str
) -> None:
    """A 5x5 binomial written as ``0.00390625*gain``, ``0.015625*gain`` ... (the lifted
    tile_local's form; also with a product and quotient of scalars): the numbers'
    factors are found, S is factored out and multiplied into the y factor's weights
    once, and the space offers SEP."""
    w = {
        (dx, dy): f"{_BINOMIAL[dx] * _BINOMIAL[dy] / 256!r}*{scale}"
        for dy in _BINOMIAL
        for dx in _BINOMIAL
    }
    d = _box(w, **extra)
    factors = separable_factors(d)
    assert factors is not None
    fu, fv = dict(factors[0]), dict(factors[1])
    for (dx, dy), _ in w.items():
        assert fu[dx] * fv[dy] == _BINOMIAL[dx] * _BINOMIAL[dy] / 256
    s = separable_scale(d)
    assert s.factor == 1.0 and not s.is_number
    assert str(s) == scale
    desc = describe(d, {"NX": 64, "NY": 64}, source="box.cl")
    assert "SEP" in desc["parameters"]
    block = _block(render_source(d))
    x_terms = block[block.index("SEP_X_TERMS") : block.index("SEP_Y_TERMS")]
    y_terms = block[block.index("SEP_Y_TERMS") :]
    assert "T(0, 0.375f)" in x_terms  # the x factor: numbers
    assert y_terms.count(rendered) == 5  # S once per y weight
    assert separable_scale(_box({k: 0.1 for k in w})).is_number


def test_fixed_weights_entries_count_as_numbers() -> None:
    """``w[i]*w[j]`` from a fixed weights array (``weights_fixed``) is an outer
    product of numbers: separable, with no scalar factor."""
    w = {(dx, dy): f"w[{dx + 1}]*w[{dy + 1}]" for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
    d = _box(w, weights={"w": [0.25, 0.5, 0.25]}, weights_fixed=True)
    factors = separable_factors(d)
    assert factors is not None and separable_scale(d).is_number
    fu, fv = dict(factors[0]), dict(factors[1])
    assert all(fu[dx] * fv[dy] == (0.5 - abs(dx) / 4) * (0.5 - abs(dy) / 4) for dx, dy in w)
    assert "SEP" in describe(d, {"NX": 64, "NY": 64}, source="box.cl")["parameters"]
