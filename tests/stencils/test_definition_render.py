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

from gtune.description import load_kernel
from gtune.exceptions import UnsatisfiableSpace
from gtune.space.model import build_model
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.real import REAL
from gtune.stencils.reference import weighted_sum
from gtune.stencils.render import c_names, describe, render_source
from tests.conftest import run_gtune
from tests.space.space_helpers import h100_limits

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
    assert set(desc["techniques"]) == {"global", "vec", "local", "image"}


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


def test_bad_definition_exits_2_naming_file_and_key(tmp_path: Path) -> None:
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
    r = run_gtune("space", str(bad), "--size", "32x16")
    assert r.returncode == 2
    assert f"{bad}: terms[0].offset: expected 2 integers for dims 2" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
def test_float32_interior_code_is_unchanged_after_preprocessing(tmp_path: Path) -> None:
    """The generated heat3d, preprocessed, differs from the single-field template's
    (``tests/data/heat3d_single_field.cl``, rendered before definitions existed) only in
    spelling: ``(float)0`` for ``0.0f`` and empty statements."""
    old = (ROOT / "tests" / "data" / "heat3d_single_field.cl").read_text()
    new = render_source(REAL["heat3d"]())
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
            text = " ".join(text.split())
            while "; ;" in text or "} ;" in text:
                text = text.replace("; ;", ";").replace("} ;", "}")
            outs.append(text)
        assert outs[0] == outs[1], cfg


def test_stencils_render_writes_a_loadable_kernel(tmp_path: Path) -> None:
    r = run_gtune(
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
    r = run_gtune(
        "stencils", "render", str(CORPUS / "box2d.stencil.yaml"), str(tmp_path), "--size", "8x8x8"
    )
    assert r.returncode == 2 and "a 2D stencil's sizes are NX, NY" in r.stderr
