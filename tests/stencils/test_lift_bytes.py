"""Buffers that hold elements of another type than their pointer's, as OpenCV's imgproc
filters take their images: ``__global const uchar *srcptr`` holding floats addressed in
bytes (``src_step`` and ``src_offset`` in bytes), or ``uint *`` holding uchar pixels
read 16 at a time (vload4, as_uchar16). ``--array NAME=TYPE:SHAPE`` says what the buffer
holds: plain mode fills it as that type, lift finds the stencil in those elements (a step
in bytes, ``4*NX``, is the row length in bytes), the definition records the pointer's
type, and the tuned kernel declares it so. The corpus kernels are
``stencils/plain/blur_bytes.cl`` and ``gauss_u8_uint16.cl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gtune.description import parse_description
from gtune.exceptions import InputError
from gtune.plain import array_view
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.lift import interface
from gtune.stencils.render import render_source
from tests.inprocess import Cli
from tests.stencils.plain_helpers import PLAIN, open_corpus, plain_from_text
from tests.stencils.test_lift_local_args import _drop_in_matches

# evaluators share the session's worker processes (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("shared_workers")

MANIFEST = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]


def _flags(name: str) -> list[str]:
    """The manifest's flags of ``name``, with its ``fixed:`` as lift's --fixed."""
    entry = MANIFEST[name]
    return [*entry["flags"], *(f for n in entry.get("fixed", ()) for f in ("--fixed", n))]


BYTES = """
#define AT(p, x, y, step) *(__global const float *)((p) + mad24(y, step, (x) * 4))
__kernel void k(__global const uchar *src, int src_step, __global float *dst, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    dst[y * w + x] = 0.5f * AT(src, x, y, src_step)
                   + 0.25f * AT(src, clamp(x + 1, 0, w - 1), y, src_step);
}
"""


# ---------------------------------------------------------------------------------
# Parsing: the flag, plain mode's description, the definition (no OpenCL)


@pytest.mark.parametrize(
    ("given", "want"),
    [
        (["float32:NX", "NY"], ("float32", ["NX", "NY"])),
        (["float: NX+2", "NY"], ("float32", ["NX+2", "NY"])),  # the OpenCL C name
        (["uchar:NX"], ("uint8", ["NX"])),
        (["NX", "NY"], ("", ["NX", "NY"])),  # no type: the pointer's
        (["(WX+2)*(WY+2)"], ("", ["(WX+2)*(WY+2)"])),
    ],
)
def test_array_view_reads_the_element_type_before_the_shape(
    given: list[str], want: tuple[str, list[str]]
) -> None:
    assert array_view(given, "arrays[src]") == want


@pytest.mark.parametrize("given", [["floaty:NX", "NY"], ["float32:", "NY"], ["struct:NX"]])
def test_a_bad_element_type_names_the_form(given: list[str]) -> None:
    with pytest.raises(InputError, match=r"expected TYPE:SHAPE") as info:
        array_view(given, "arrays[src]")
    assert info.value.source == "arrays[src]" and "float32:NX,NY" in info.value.message


def test_plain_mode_fills_the_buffer_as_the_given_type(tmp_path: Path) -> None:
    kernel = plain_from_text(
        tmp_path,
        BYTES,
        [16, 8],
        arrays={"src": ["float32:NX", "NY"]},
        scalars={"src_step": "4*NX", "w": "NX", "h": "NY"},
    )
    src = kernel.arguments[0]
    assert (src.dtype, src.pointer, [e.text for e in src.shape]) == (
        "float32",
        "uchar",
        ["NY", "NX"],
    )
    assert kernel.arguments[2].pointer == ""  # (a float * given no type: as it was)
    notes = " ".join(kernel.raw["inferred"])
    assert "src: a uchar pointer: the array is given in float32 elements" in notes
    assert "4 uchars per float32 element" in notes
    face = interface(kernel)
    assert face.pointers == {"src": "uchar"}
    step = next(s for s in face.scalars if s.name == "src_step")
    assert step.pitch == "the row length of src in bytes, 4*NX"


def test_a_shape_that_is_a_multiple_of_the_size_suggests_the_element_type(
    tmp_path: Path,
) -> None:
    kernel = plain_from_text(
        tmp_path,
        BYTES,
        [16, 8],
        arrays={"src": ["4*NX", "NY"]},
        scalars={"src_step": "4*NX", "w": "NX", "h": "NY"},
    )
    with pytest.raises(InputError) as info:
        interface(kernel)
    said = info.value.message
    assert "the shape of src, 4*NX, is 4 times the size NX" in said
    assert "addresses in bytes" in said and "--array src=float32:NX,NY" in said
    assert "alignment" not in said


def test_a_description_records_the_pointer_type() -> None:
    raw = {
        "kernel": "k",
        "source": "k.cl",
        "problem": {"NX": 16},
        "arguments": [{"name": "a", "dtype": "float32", "shape": ["NX"], "pointer": "uchar"}],
        "parameters": {"WX": {"values": [1]}},
        "launch": {"global": ["NX"], "local": ["WX"]},
    }
    text = "__kernel void k(__global const uchar *a) {}"
    kernel = parse_description(raw, source=text, label="k.yaml")
    assert kernel.arguments[0].pointer == "uchar"
    raw["arguments"][0]["pointer"] = "uchar *"
    with pytest.raises(InputError, match=r"arguments\[0\]\.pointer"):
        parse_description(raw, source=text, label="k.yaml")


def _definition(arguments: list[Any]) -> dict[str, Any]:
    return {
        "name": "b",
        "dims": 2,
        "boundary": "clamp",
        "fields": ["srcptr"],
        "output": "dstptr",
        "terms": [
            {"field": "srcptr", "offset": [-1, 0], "coefficient": 0.25},
            {"field": "srcptr", "coefficient": 0.5},
            {"field": "srcptr", "offset": [1, 0], "coefficient": 0.25},
        ],
        "kernel": {"name": "blur", "arguments": arguments},
    }


def test_a_definition_keeps_the_pointer_types_and_renders_them() -> None:
    args = [{"name": "srcptr", "pointer": "uchar"}, {"name": "dstptr", "pointer": "uchar"}]
    defn = parse_definition(_definition(args), "b.stencil.yaml")
    assert [(a.name, a.pointer) for a in defn.arguments] == [
        ("srcptr", "uchar"),
        ("dstptr", "uchar"),
    ]
    again = parse_definition(yaml.safe_load(defn.to_yaml()), "b.stencil.yaml")
    assert again.arguments == defn.arguments
    source = render_source(defn)
    assert "#define SRC ((__global const ELEM *)srcptr)" in source
    assert "#define SRC_VIEW __global const uchar *restrict srcptr" in source
    assert "#define DST ((__global OUT_ELEM *)dstptr)" in source
    assert "__global uchar *restrict dstptr" in source


@pytest.mark.parametrize(
    ("arguments", "key", "said"),
    [
        ([{"name": "srcptr", "pointer": "uchar*"}, "dstptr"], "[0].pointer", "OpenCL C type"),
        (
            ["srcptr", "dstptr", {"name": "n", "pointer": "uchar"}],
            "[2].pointer",
            "only a field or the output",
        ),
        (
            [{"name": "srcptr", "pointer": "uchar", "type": "int"}, "dstptr"],
            "[0].type",
            "a name and a pointer",
        ),
    ],
)
def test_bad_pointer_entries_name_the_key(arguments: list[Any], key: str, said: str) -> None:
    with pytest.raises(InputError, match=said) as info:
        parse_definition(_definition(arguments), "b.stencil.yaml")
    assert f"kernel.arguments{key}" in info.value.render()


# ---------------------------------------------------------------------------------
# On OpenCL: lift, tune against the original, export, and the drop-in


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


@pytest.mark.opencl
@pytest.mark.parametrize(
    ("name", "size", "run_size"),
    [("blur_bytes", "32x16", "48x40"), ("gauss_u8_uint16", "64x16", "64x24")],
)
def test_byte_addressed_kernels_lift_tune_and_drop_in(
    device: Any, tmp_path: Path, gtune_here: Cli, name: str, size: str, run_size: str
) -> None:
    """lift -> run (checked against the original, which gets the same buffers) ->
    export (the original's pointer types in the signature) -> the exported kernel
    launched with the original's own host arguments gives the original's output."""
    entry = MANIFEST[name]
    out = tmp_path / f"{name}.stencil.yaml"
    source = PLAIN / entry["source"]
    done = gtune_here("lift", str(source), "--size", size, *_flags(name), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert " pointer: the array is given in " in done.stderr
    defn = load_definition(out)
    assert len(defn.terms) == 9 and defn.boundary == "clamp"
    pointers = {a.name: a.pointer for a in defn.arguments if a.pointer}
    field, output = defn.primary_field, defn.output
    want = "uchar" if name == "blur_bytes" else "uint"
    assert pointers == {field: want, output: want}
    if name == "blur_bytes":  # steps in bytes: the rows' length, ignored by the tuned kernel
        assert "src_step is the row length of srcptr and dstptr in bytes, 4*NX" in defn.doc
    else:
        assert defn.storage == "uint8" and defn.convert == "rte_sat"
    db = tmp_path / "r.db"
    ran = gtune_here("run", str(out), "--size", run_size, "--budget", "2", "--runs", "3", db=db)
    assert ran.returncode == 0, ran.stderr
    said = " ".join((ran.stdout + ran.stderr).split())
    assert "verified against the original kernel's output" in said
    exported = gtune_here("export", str(out), "--size", run_size, "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    tuned = tmp_path / "t" / f"{name}_tuned.json"
    kernel_text = tuned.with_suffix(".cl").read_text()
    assert f"__global const {want} *restrict {field}" in kernel_text
    assert f"__global {want} *restrict {output}" in kernel_text
    names = [a["name"] for a in json.loads(tuned.read_text())["arguments"]]
    assert names == [a.name for a in defn.arguments]
    _drop_in_matches(tuned, defn, {"NX": 128, "NY": 32})  # (a multiple of the run size)


@pytest.mark.opencl
def test_lift_without_the_type_says_how_to_give_it(gtune_here: Cli, tmp_path: Path) -> None:
    flags = [f.replace("float32:", "4*") for f in _flags("blur_bytes")]
    out = tmp_path / "b.stencil.yaml"
    done = gtune_here(
        "lift", str(PLAIN / "blur_bytes.cl"), "--size", "32x16", *flags, "-o", str(out)
    )
    assert done.returncode == 2 and not out.exists()
    said = " ".join(done.stderr.split())
    assert "the shape of srcptr, 4*NX, is 4 times the size NX" in said
    assert "--array srcptr=float32:NX,NY" in said


def test_the_corpus_kernels_open_with_their_flags() -> None:
    kernel = open_corpus("gauss_u8_uint16.cl", "64x16", *_flags("gauss_u8_uint16"))
    assert [(a.name, a.dtype, a.pointer) for a in kernel.arguments if a.kind == "buffer"] == [
        ("src", "uint8", "uint"),
        ("dst", "uint8", "uint"),
    ]
