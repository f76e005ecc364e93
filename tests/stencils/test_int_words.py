"""The template's 8- and 16-bit vectors read as 32-bit words (``uint``, ``uint2``,
``uint4``, ``uint8``) with their lanes taken out by shifts and masks (issue 48's
candidate ``int_words``, promoted after the H200's A/B: benchmarks/results/lift/
int_words.md). ``benchmarks/candidates/element_vectors.patch`` is the template before
it, vectors of the element type, kept as the comparison.

The words must leave every float kernel's code as it was (the C preprocessor's output
of both templates, every real stencil and the corpus's definitions) and compute the
element vectors' bits for integer kernels: on PoCL, unsigned and signed 8- and 16-bit
fields (2D and 3D, the clamp, zero and interior boundaries, a padded field, a second
field, 16-bit and float outputs) on random data over the whole range of the type, VX 2
to 16, whole rim vectors, row blocks and the interior path, every output element
compared as raw bits with the element vectors' and with the numpy reference. The lifted
corpus's integer kernels too (slow).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.description import load_kernel
from gtune.device import LIMIT_NAMES
from gtune.kernel import TunableKernel
from gtune.stencils.definition import StencilDefinition, load_definition, parse_definition
from gtune.stencils.real import REAL
from gtune.stencils.render import render_source
from tests.conftest import load_script
from tests.inprocess import Cli
from tests.stencils.template_snapshot import cpp, sizes_of
from tests.stencils.test_integer_vec import _random_weights

ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = ROOT / "benchmarks" / "candidates"
PATCHES = ["element_vectors.patch"]
TEMPLATE = ROOT / "gtune" / "data" / "templates" / "stencil.cl"
CORPUS = ROOT / "tests" / "data" / "definitions"
candidate = load_script(ROOT / "benchmarks" / "candidate.py")
template_ab = load_script(ROOT / "benchmarks" / "template_ab.py")
template_exact = load_script(ROOT / "benchmarks" / "template_exact.py")


def _variant(patch: str) -> str:
    text: str = candidate.read_variant(CANDIDATES / patch)
    return text


def bits(
    variant: str, kernel: str, config: str, vset: dict[str, int] | None = None
) -> tuple[int, int, int]:
    """``template_exact``'s check of one configuration (``N=V,...``) of ``kernel`` (a real
    stencil's name or a definition's path) at 32³ on PoCL: the ``variant`` template's
    rendering (with ``vset``'s values) against the package's, as (same, different,
    skipped) counts."""
    cfg = template_exact.parse_config(config)
    result: tuple[int, int, int] = template_exact.check(
        kernel, variant, 32, [cfg], "pthread", vset or {}
    )
    return result


def _float_configs(block: str) -> list[str]:
    """The vector technique's switches, as test_integer_vec.py's snapshot test sets them."""
    dims3 = "#define ARRAY_DIMS 3" in block
    configs = ["", "-DLOCAL=1", "-DVX=4 -DBX=4", "-DVX=8 -DBX=8", "-DVX=16 -DBX=16"]
    if "#define CLAMP" not in block:
        rim = "-DVX=4 -DBX=4 -DRIM=1 -DBY=2" + (" -DBZ=2" if dims3 else "")
        configs += [rim, rim + " -DRIN=1"]
    return configs


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs the C preprocessor")
@pytest.mark.parametrize("patch", PATCHES)
def test_float_kernels_preprocess_as_with_the_package_template(patch: str, tmp_path: Path) -> None:
    """Every real stencil and the corpus's definitions (clamp, zero, rims, float64,
    separable), rendered from the element vectors, preprocess to the package's text."""
    variant = _variant(patch)
    stencils: list[Any] = [REAL[n]() for n in sorted(REAL)]
    stencils += [load_definition(p) for p in sorted(CORPUS.glob("*.stencil.yaml"))]
    for stencil in stencils:
        new = render_source(stencil)
        with template_ab.rendering_from(variant):
            old = render_source(stencil)
        assert old != new  # the other template, not the package's
        for cfg in _float_configs(new):
            flags = sizes_of(new) + cfg.split()
            want = cpp(new, flags, tmp_path)
            assert want[0] == 0, (stencil, cfg, want[1][-300:])
            assert cpp(old, flags, tmp_path) == want, (stencil, cfg)


# -- integer kernels on PoCL ---------------------------------------------------------------
def _terms(dims: int, fields: list[str]) -> list[dict[str, Any]]:
    """A 3x3 (3x3x3) of weights no product is exact with, a sharpening negative centre
    difference and, for a second field, its point and right neighbour."""
    terms = _random_weights(dims, -0.2, 0.3)
    terms.append({"field": "src", "offset": [2, 0, 0][:dims], "coefficient": "-1/8"})
    if "mask" in fields:
        terms += [
            {"field": "mask", "coefficient": "-1/4"},
            {"field": "mask", "offset": [1, 0, 0][:dims], "coefficient": "1/8"},
        ]
    return terms


# name: (dims, storage, output storage, convert, boundary, more keys)
CASES: dict[str, tuple[int, str, str | None, str | None, str, dict[str, Any]]] = {
    "u8-2d-clamp": (2, "uint8", None, "rte_sat", "clamp", {}),
    "s8-2d-interior": (2, "int8", None, "half_up_sat", "interior", {}),
    "s8-3d-zero": (3, "int8", None, "rtz_sat", "zero", {}),
    "u16-2d-interior": (2, "uint16", None, "rte_sat", "interior", {}),
    "s16-2d-clamp": (2, "int16", None, "rte_sat", "clamp", {}),
    "s16-3d-interior": (3, "int16", None, "half_up_sat", "interior", {}),
    "u8-s16-2d-interior": (2, "uint8", "int16", "rtz_sat", "interior", {}),
    "s8-f32-2d-interior": (2, "int8", "float32", None, "interior", {}),
    "u8-2d-padded": (2, "uint8", None, "rte_sat", "clamp", {"pad": {"src": [8, 2]}}),
    "s16-2fields-2d-interior": (2, "int16", None, "rte_sat", "interior", {"mask": True}),
}


def _definition(case: str) -> StencilDefinition:
    dims, storage, output, convert, boundary, more = CASES[case]
    fields = ["src", "mask"] if more.get("mask") else ["src"]
    data: dict[str, Any] = {
        "name": "k",
        "dims": dims,
        "dtype": "float32",
        "boundary": boundary,
        "fields": fields,
        "output": "dst",
        "storage": storage,
        "terms": _terms(dims, fields),
        **{k: v for k, v in more.items() if k != "mask"},
    }
    if convert is not None:
        data["convert"] = convert
    if output is not None:
        data["output_storage"] = output
    return parse_definition(data, "k.stencil.yaml")


def _configs(kernel: TunableKernel, turn: int | None = None) -> Iterator[dict[str, int]]:
    """VX 2 to 16 (16 with two work-items a row), cyclic merging, and with the interior
    boundary whole rim vectors, row blocks and the interior path; each one the space
    allows. With ``turn`` (0 or 1), VX 2 to 16 and every other one of the rest, from
    the ``turn``-th (the cases take them by turns)."""
    names = kernel.parameter_names
    changes: list[dict[str, int]] = [
        {"VX": vx, "BX": vx, "WX": 4} for vx in (2, 4, 8, 16) if "VX" in names
    ]
    more = [{"VX": 16, "BX": 16, "WX": 8}, {"VX": 8, "BX": 8, "WX": 4, "CX": 2}]
    if "RIM" in names:
        blocks: dict[str, int] = {n: 2 for n in ("BY", "BZ") if n in names}
        more += [
            {"VX": 16, "BX": 16, "WX": 4, "RIM": 1, **blocks},
            {"VX": 8, "BX": 8, "WX": 4, "RIM": 1, "RIN": 1, **blocks},
            {"VX": 4, "BX": 4, "WX": 4, "RIM": 1, "RIN": 1},
        ]
    changes += more if turn is None else more[turn::2]
    yield from allowed(kernel, changes)


def allowed(kernel: TunableKernel, changes: list[dict[str, int]]) -> Iterator[dict[str, int]]:
    """The kernel's default configuration with each change (of the parameters it has),
    where the space allows it (a device's limits, where a constraint names them, taken as
    large: these work-groups are small)."""
    default = dict(kernel.default_config() or {})
    limits = dict.fromkeys(LIMIT_NAMES, 1 << 20)
    for change in changes:
        cfg = {**default, **{k: v for k, v in change.items() if k in kernel.parameter_names}}
        env = {**limits, **kernel.env(cfg)}
        if all(c.evaluate(env) for c in kernel.constraints):
            yield cfg


def _arrays(kernel: TunableKernel, seed: int) -> dict[str, np.ndarray]:
    """Inputs random over the whole range of their type; outputs a sentinel."""
    arrays: dict[str, np.ndarray] = template_exact.inputs(kernel, seed, sentinel=93)
    return arrays


def _evaluator(kernel: TunableKernel, arrays: dict[str, np.ndarray]) -> Any:
    """An evaluator of ``kernel`` on ``arrays``, for :func:`_outputs_of` (one for all of a
    kernel's configurations: each measurement starts from the arrays given)."""
    from gtune.measure import OpenCLEvaluator

    return OpenCLEvaluator(kernel, runs=1, verify=False, arrays=arrays, compile_workers=0)


def _outputs_of(ev: Any, cfg: dict[str, int]) -> Any:
    """The outputs of ``cfg`` run by ``ev`` (:func:`_evaluator`)."""
    kernel = ev.kernel
    result = ev.evaluate(cfg)
    assert result.ok, (kernel.name, cfg, result.status, result.message[-500:])
    return {a.name: ev.output(a.name) for a in kernel.arguments if a.role == "output"}


def _outputs(kernel: TunableKernel, arrays: dict[str, np.ndarray], cfg: dict[str, int]) -> Any:
    """The outputs of ``cfg`` on ``arrays``, with an evaluator of its own."""
    with _evaluator(kernel, arrays) as ev:
        return _outputs_of(ev, cfg)


def same_bits(
    path: Path, variant: str | None, sizes: dict[str, int], turn: int | None = None
) -> int:
    """Configurations of the definition at ``path`` whose outputs from ``variant`` are the
    package template's bits and the numpy reference's; fails at the first that is not.
    ``variant`` None: the package template's outputs against the reference alone.
    ``turn``: those of ``_configs``'s turn."""
    definition = load_definition(path)
    package = load_kernel(path).with_sizes(sizes)
    other = None
    if variant is not None:
        with template_ab.rendering_from(variant):
            other = load_kernel(path).with_sizes(sizes)
        assert other.source != package.source
    arrays = _arrays(package, seed=sum(sizes.values()))
    out = definition.output
    inputs = {f: arrays[f] for f in definition.fields}
    want = definition.reference(inputs, arrays[out])
    checked = 0
    with contextlib.ExitStack() as stack:
        ev = stack.enter_context(_evaluator(package, arrays))
        other_ev = stack.enter_context(_evaluator(other, arrays)) if other is not None else None
        for cfg in _configs(package, turn):
            a = _outputs_of(ev, cfg)[out]
            assert a.dtype == want.dtype, (path.name, cfg)
            assert a.tobytes() == want.tobytes(), (path.name, cfg, "not the reference's bits")
            if other_ev is not None:
                b = _outputs_of(other_ev, cfg)[out]
                assert b.dtype == a.dtype and b.tobytes() == a.tobytes(), (
                    path.name,
                    cfg,
                    "not the package's bits",
                )
            checked += 1
    return checked


def _sizes(dims: int) -> dict[str, int]:
    return {"NX": 128, "NY": 24} if dims == 2 else {"NX": 64, "NY": 8, "NZ": 8}


# The whole matrix (every case, every corpus kernel, each against the element vectors'
# template too) is the check of a change to the words or the conversions, about 4
# minutes of PoCL on two cores: GTUNE_CANDIDATE_FULL=1 pytest -m "" tests/stencils/<this
# file>. Otherwise three cases (together: u8 clamped and padded, s8 to float, s16 in 3D;
# u8-2d-clamp is u8-2d-padded less its pad), each in VX 2 to 16 and half of the other
# configurations by turns, and one corpus kernel in all of them, against the numpy
# reference alone: the template that ships, bit for bit, at half the builds, so the test
# suite stays within CI's time (the element vectors' template is not what ships).
FULL = os.environ.get("GTUNE_CANDIDATE_FULL") == "1"
AGAINST = PATCHES if FULL else [None]  # the element vectors' template too, or not
MATRIX = [(p, c) for p in PATCHES for c in sorted(CASES)]
SAMPLE = [
    ("element_vectors.patch", case)
    for case in ("u8-2d-padded", "s16-3d-interior", "s8-f32-2d-interior")
]


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(("patch", "case"), MATRIX if FULL else SAMPLE)
def test_integer_kernels_give_the_package_templates_bits(
    patch: str, case: str, tmp_path: Path
) -> None:
    path = tmp_path / "k.stencil.yaml"
    path.write_text(_definition(case).to_yaml())
    turn = None if FULL else [c for _, c in SAMPLE].index(case) % 2
    variant = _variant(patch) if FULL else None
    assert same_bits(path, variant, _sizes(CASES[case][0]), turn) >= 5


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_pocl_compiles_the_words_not_the_element_vectors(tmp_path: Path) -> None:
    """With the element vectors' branch made an error, the template still builds and
    runs on PoCL for 8- and 16-bit fields (the device is little-endian: the words are
    read), and fails for int32 fields (their vectors are read as elements)."""
    fallback = "#define VE CAT(ELEM, VX)\n#define VIN(v) CAT(convert_, VT)(v)\n"
    template = TEMPLATE.read_text()
    assert template.count(fallback) == 1
    variant = template.replace(fallback, '#error "the element vectors"\n')
    for storage, ok in (("uint8", True), ("int16", True), ("int32", False)):
        data = _definition("u8-2d-clamp").to_yaml().replace("uint8", storage)
        path = tmp_path / f"{storage}.stencil.yaml"
        path.write_text(data)
        with template_ab.rendering_from(variant):
            kernel = load_kernel(path).with_sizes(_sizes(2))
        from gtune.measure import OpenCLEvaluator

        ev = OpenCLEvaluator(kernel, runs=1, compile_workers=0)
        try:
            cfg = {**(kernel.default_config() or {}), "VX": 8, "BX": 8, "WX": 4}
            result = ev.evaluate(cfg)
            assert result.ok == ok, (storage, result.status, result.message[-300:])
            if not ok:
                assert "the element vectors" in result.message
        finally:
            ev.close()


CORPUS_INTEGER = ["smooth_s8", "gauss_u8_rte", "binomial_u16", "sharpen_s16", "prewitt_u8_s16"]


@pytest.mark.opencl
@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("name", CORPUS_INTEGER if FULL else ["prewitt_u8_s16"])
def test_the_corpus_integer_kernels_lifted_give_the_package_templates_bits(
    name: str, tmp_path: Path, gtune_here: Cli
) -> None:
    """The plain corpus's 8- and 16-bit kernels (stencils/plain/manifest.yaml), lifted:
    the words give the element vectors' bits."""
    entry = yaml.safe_load((ROOT / "stencils/plain/manifest.yaml").read_text())["kernels"][name]
    path = tmp_path / f"{name}.stencil.yaml"
    plain = str(ROOT / "stencils/plain" / entry["source"])
    done = gtune_here("lift", plain, "--size", entry["size"], *entry["flags"], "-o", str(path))
    assert done.returncode == 0, done.stderr
    for patch in AGAINST:
        assert same_bits(path, _variant(patch) if patch else None, _sizes(2)) >= 6


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_lost_sign_extension_is_caught(tmp_path: Path) -> None:
    """The template with char lanes taken as unsigned bytes (no sign extension): the
    check fails on its first configuration, a signed 8-bit kernel's bits differ."""
    signed = "#define WBITS_(w, b) (WI_((w) << (24 - 8 * (b))) >> 24)"
    template = TEMPLATE.read_text()
    assert template.count(signed) == 1
    broken = template.replace(signed, "#define WBITS_(w, b) WI_(((w) >> (8 * (b))) & 0xffu)")
    path = tmp_path / "k.stencil.yaml"
    path.write_text(_definition("s8-2d-interior").to_yaml())
    with pytest.raises(AssertionError, match="not the package's bits"):
        same_bits(path, broken, _sizes(2))


def _ptx_row(vx: int, *args: str) -> list[str]:
    """benchmarks/ptx_int_loads.py's row for ``vx`` on the uint8 box blur, with ``args``."""
    import subprocess
    import sys

    script = ROOT / "benchmarks" / "ptx_int_loads.py"
    blur = ROOT / "examples" / "box_blur_u8.stencil.yaml"
    cmd = [sys.executable, str(script), str(blur), "--vx", str(vx), "--size", "4096x4096"]
    done = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [r.split("|") for r in done.stdout.splitlines() if r.startswith(f"| {vx} ")]
    assert len(rows) == 1, done.stdout
    return [c.strip() for c in rows[0]]


@pytest.mark.skipif(shutil.which("clang-15") is None, reason="clang-15 compiles the PTX")
def test_a_uchar16_is_loaded_as_one_vector_of_words() -> None:
    """In LLVM's PTX, VX 16: the template loads 16 bytes a load (ld.v4.u32), the element
    vectors 4 (ld.v4.u8), four times the loads per output; with the conversions' bodies
    (--bodies) each lane is converted (cvt)."""
    words = _ptx_row(16, "--bodies")
    assert "ld.v4.u32" in words[2] and "ld.v4.u8" not in words[2] and float(words[5]) > 0
    elements = _ptx_row(16, "--template", str(CANDIDATES / "element_vectors.patch"))
    assert "ld.v4.u8" in elements[2] and "u32" not in elements[2]
    assert float(words[3]) == pytest.approx(float(elements[3]) / 4, abs=0.01)


def test_ptx_int_loads_names_a_template_that_does_not_apply(tmp_path: Path) -> None:
    import subprocess
    import sys

    stale = tmp_path / "stale.patch"
    stale.write_text("--- a\n+++ b\n@@ -3,1 +3,1 @@\n-no such line in the template\n+x\n")
    script = ROOT / "benchmarks" / "ptx_int_loads.py"
    blur = ROOT / "examples" / "box_blur_u8.stencil.yaml"
    cmd = [sys.executable, str(script), str(blur), "--template", str(stale)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 2
    assert "stale.patch" in done.stderr and "line 3" in done.stderr
    assert "Traceback" not in done.stderr
