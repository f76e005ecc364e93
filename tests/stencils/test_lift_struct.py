"""Two styles of real kernels lift cannot take as they are, refused with what lifts:
a struct of scalars as an argument (pocl's scalarwave: ``const grid_t grid``, read as
``grid.dt``), refused with its fields and their types and the copy of the kernel that
takes one scalar per field; and an output haloed like its input (SHOC's Stencil2D), refused
with the flags that lift the whole haloed array as the problem (boundary interior). The
corpus kernels are ``stencils/plain/wave3d_struct.cl`` and ``haloed_out2d.cl``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from gtune.clsource import struct_fields, typedefs
from gtune.exceptions import InputError
from gtune.stencils.lift import interface
from tests.inprocess import Cli
from tests.stencils.plain_helpers import PLAIN, open_corpus, plain_from_text

MANIFEST = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]
WAVE = MANIFEST["wave3d_struct"]
HALO = MANIFEST["haloed_out2d"]
GRID = "typedef float real; typedef struct { real dt; double dx, dy; int ni, nj; } grid_t;\n"
BODY = "{ int i = get_global_id(0); out[i] = in[i] * %s; }"


# ---------------------------------------------------------------------------------
# Plain mode and the lifting interface (the preprocessor, no OpenCL)


def test_a_structs_fields_are_read_with_their_types() -> None:
    text = GRID + "struct cell { float *p; uchar c[3]; };"
    found = struct_fields(text, typedefs(text))
    assert found["grid_t"] == [
        ("float", "dt"),
        ("double", "dx"),
        ("double", "dy"),
        ("int", "ni"),
        ("int", "nj"),
    ]
    assert found["struct cell"] == [("float *", "p"), ("uchar", "c[3]")]


@pytest.mark.parametrize(
    ("param", "use", "how"),
    [
        ("const grid_t grid", "grid.dt", "a struct passed by value"),
        ("__constant grid_t *restrict grid", "grid->dt", "a pointer to a struct"),
    ],
)
def test_a_struct_argument_is_refused_with_its_fields_and_the_copy_that_lifts(
    tmp_path: Path, param: str, use: str, how: str
) -> None:
    source = f"{GRID}__kernel void k(__global const float *in, __global float *out, {param})"
    with pytest.raises(InputError) as info:
        plain_from_text(tmp_path, source + BODY % use, [16, 8])
    text = info.value.render()
    assert f"parameter 'grid' is {how}, grid_t {{ float dt; double dx, dy; int ni, nj; }}" in text
    assert "float grid_dt, double grid_dx, double grid_dy, int grid_ni, int grid_nj" in text
    assert f"with grid_dt for {use} in its body" in text
    assert "--scalar grid_ni=NX" in text and "float dt, float dx" not in text


def test_a_struct_without_its_definition_is_still_named(tmp_path: Path) -> None:
    source = "__kernel void k(__global const float *in, __global float *out, struct p q)"
    with pytest.raises(InputError, match=r"struct p \(its definition is not in the source"):
        plain_from_text(tmp_path, source + BODY % "q.a", [16, 8])


def test_a_haloed_output_is_refused_with_the_flags_that_lift_it() -> None:
    kernel = open_corpus(HALO["source"], HALO["size"], *HALO["flags"])
    with pytest.raises(InputError) as info:
        interface(kernel)
    text = info.value.render()
    assert "array newData, the output, has the shape [18, 34]" in text
    assert "(NX+2, NY+2), as data is" in text
    assert '--size 34x18 --global "NX-2,NY-2", without --array data=... --array newData=' in text
    assert HALO["why"] in text


def test_the_rewritten_flags_cover_the_scalars_and_other_arrays(tmp_path: Path) -> None:
    source = (
        "__kernel void k(__global const float *a, __global float *b, int pitch,"
        " __local float *t) { int i = get_global_id(0) + 1, j = get_global_id(1) + 1;"
        " t[0] = a[j * pitch + i]; b[j * pitch + i] = a[j * pitch + i - 1] + t[0]; }"
    )
    arrays = {"a": ["NX+2", "NY+2"], "b": ["NX+2", "NY+2"], "t": ["NY/2+1"]}
    kernel = plain_from_text(tmp_path, source, [32, 16], arrays=arrays, scalars={"pitch": "NX+2"})
    with pytest.raises(InputError) as info:
        interface(kernel)
    text = info.value.render()
    assert '--global "NX-2,NY-2" --scalar pitch=NX-2+2 --array t="(NY-2)/2+1"' in text


# ---------------------------------------------------------------------------------
# On PoCL: the refusal, then what it says lifts (lift checks the definition against the
# original; an ordinary definition's run, export and drop-in are tested elsewhere)


@pytest.mark.opencl
@pytest.mark.slow
def test_a_struct_kernels_copy_of_scalars_lifts(tmp_path: Path, gtune_here: Cli) -> None:
    """The refusal's copy: one scalar per field, ``grid.dt`` -> ``grid_dt``, the sizes
    given as sizes; it lifts to the wave equation's terms."""
    original = PLAIN / WAVE["source"]
    no = ("-o", str(tmp_path / "no.stencil.yaml"))
    refused = gtune_here("lift", str(original), "--size", WAVE["size"], *WAVE["flags"], *no)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and WAVE["why"] in said
    params = re.search(r"one scalar per field, (.*?), in place of", said)
    assert params is not None
    copy = tmp_path / "wave3d_scalars.cl"
    text = original.read_text().replace("const grid_t grid", params.group(1))
    copy.write_text(re.sub(r"\bgrid\.(\w+)", r"grid_\1", text))
    scalars = ["grid_dt=0.1", "grid_dx=1", "grid_dy=0.5", "grid_dz=2"]
    scalars += ["grid_ni=NX", "grid_nj=NY", "grid_nk=NZ"]
    out = tmp_path / "wave3d_scalars.stencil.yaml"
    flags = [f for s in scalars for f in ("--scalar", s)]
    size = ("--size", WAVE["size"])
    done = gtune_here("lift", str(copy), *size, *WAVE["flags"], *flags, "-o", str(out))
    assert done.returncode == 0, done.stderr
    d = yaml.safe_load(out.read_text())
    assert (d["dims"], d["dtype"], d["fields"]) == (3, "float64", ["phi_p", "phi_p_p"])


@pytest.mark.opencl
@pytest.mark.slow
def test_a_haloed_output_lifts_with_the_flags_its_refusal_gives(
    tmp_path: Path, gtune_here: Cli
) -> None:
    plain = str(PLAIN / HALO["source"])
    no = ("-o", str(tmp_path / "no.stencil.yaml"))
    refused = gtune_here("lift", plain, "--size", HALO["size"], *HALO["flags"], *no)
    text = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and HALO["why"] in text
    said = re.search(r"as its rim\): (.*?), without", text)
    assert said is not None
    kept = [f for f in HALO["flags"] if not f.startswith(("data=", "newData=")) and f != "--array"]
    out = tmp_path / "haloed_out2d.stencil.yaml"
    done = gtune_here("lift", plain, *shlex.split(said.group(1)), *kept, "-o", str(out))
    assert done.returncode == 0, done.stderr
    d = yaml.safe_load(out.read_text())
    assert (d["boundary"], len(d["terms"])) == ("interior", 9)
