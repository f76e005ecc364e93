"""Updates in place: a kernel that overwrites an array from its own value at the point
it writes and a stencil of other fields (PolyBench's FDTD-2D, ``ey[i] = ey[i] - c*(hz[i]
- hz[i-nx])``; a leapfrog wave step written over the old level, ``u_old[k] = 2 u[k] -
u_old[k] + c2 lap u``). Lift reads the array as a field that is also the output
(``inplace: true``), the template aliases the two (one argument, no ``restrict``), and
``gtune run``, ``export`` keep the original's one buffer. A kernel that reads the array
at a neighbour (a Gauss-Seidel sweep) is refused: its result depends on the order the
work-items run in. The corpus kernels are ``stencils/plain/fdtd_ey_inplace.cl``,
``wave_leapfrog_inplace.cl`` and ``gauss_seidel_inplace.cl``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import InputError
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.lift import interface
from tests.inprocess import Cli
from tests.stencils.plain_helpers import PLAIN, open_corpus, plain_from_text

MANIFEST = yaml.safe_load((PLAIN / "manifest.yaml").read_text())["kernels"]
FDTD = MANIFEST["fdtd_ey_inplace"]
WAVE = MANIFEST["wave_leapfrog_inplace"]
SWEEP = MANIFEST["gauss_seidel_inplace"]

# a leapfrog step over two buffers: u_old overwritten in place
LEAPFROG: dict[str, Any] = {
    "name": "leap",
    "dims": 2,
    "fields": ["u", "u_old"],
    "output": "u_old",
    "inplace": True,
    "coefficients": ["c2"],
    "terms": [
        {"field": "u", "offset": [-1, 0], "coefficient": "c2"},
        {"field": "u", "offset": [1, 0], "coefficient": "c2"},
        {"field": "u", "offset": [0, -1], "coefficient": "c2"},
        {"field": "u", "offset": [0, 1], "coefficient": "c2"},
        {"field": "u", "coefficient": 2},
        {"field": "u", "coefficient": "-4*c2"},
        {"field": "u_old", "coefficient": -1},
    ],
    "values": {"c2": 0.2},
}
# a 3D clamped star with a constant, v updated in place
CLAMPED: dict[str, Any] = {
    "name": "relax",
    "dims": 3,
    "boundary": "clamp",
    "fields": ["u", "v"],
    "output": "v",
    "inplace": True,
    "terms": [
        {"field": "u", "offset": [-1, 0, 0], "coefficient": 0.25},
        {"field": "u", "offset": [1, 0, 0], "coefficient": 0.25},
        {"field": "u", "offset": [0, 0, -1], "coefficient": 0.125},
        {"field": "u", "offset": [0, 0, 1], "coefficient": 0.125},
        {"field": "v", "coefficient": 0.5},
    ],
    "constant": 0.75,
}


# ---------------------------------------------------------------------------------
# The definition (no OpenCL)


def test_an_inplace_definition_has_one_argument_for_the_field_and_output() -> None:
    defn = parse_definition(LEAPFROG, "leap.stencil.yaml")
    assert defn.inplace and defn.primary_field == "u" and defn.output == "u_old"
    assert [(a.name, a.kind) for a in defn.arguments] == [
        ("u", "field"),
        ("u_old", "output"),
        ("c2", "coefficient"),
    ]
    text = defn.to_yaml()
    assert "inplace: true" in text and "arguments" not in text  # the default arguments
    assert parse_definition(yaml.safe_load(text), "again.stencil.yaml") == defn
    plain = parse_definition({**LEAPFROG, "inplace": False, "output": "w"}, "w.stencil.yaml")
    assert not plain.inplace and "inplace" not in plain.to_yaml()


def test_the_reference_updates_the_field_it_reads() -> None:
    defn = parse_definition(LEAPFROG, "leap.stencil.yaml")
    rng = np.random.default_rng(3)
    u, old = (rng.uniform(-1, 1, (6, 7)).astype(np.float32) for _ in range(2))
    out = defn.reference({"u": u, "u_old": old}, old, {"c2": 0.2})
    lap = u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1]
    want = 2 * u[1:-1, 1:-1] - old[1:-1, 1:-1] + np.float32(0.2) * lap
    np.testing.assert_allclose(out[1:-1, 1:-1], want, rtol=1e-5, atol=1e-6)
    inner = np.zeros(old.shape, bool)
    inner[1:-1, 1:-1] = True
    assert np.array_equal(out[~inner], old[~inner])  # the rim as it was


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"inplace": False}, r"^output: u_old is also an input field.*say inplace: true\)$"),
        ({"inplace": "yes"}, r"^inplace: expected true or false, got 'yes'$"),
        ({"output": "w"}, r"^inplace: the output w is not a field: an update in place names"),
        (
            {"terms": [*LEAPFROG["terms"], {"field": "u_old", "offset": [1, 0]}]},
            r"^terms\[7\]\.offset: u_old is updated in place: it is read at the point written "
            r"only \(no offset\); read at a neighbour, the result depends on the order",
        ),
        (
            {"fields": ["u_old", "u"], "terms": [{"field": "u"}, {"field": "u_old"}]},
            r"^fields: u_old, updated in place, would be the stencil's primary field .*: list "
            "another field first$",
        ),
        (
            {"fields": ["u_old"], "terms": [{"field": "u_old", "coefficient": 0.5}]},
            "it reads no other field$",
        ),
        ({"steps": 2}, r"^steps: an update in place is one step per launch \(steps: 1\)$"),
        (
            {"storage": "uint8", "convert": "rte_sat", "values": {}, "coefficients": []},
            "^storage: an update in place holds float elements$",
        ),
    ],
)
def test_what_an_inplace_definition_cannot_be(change: dict[str, Any], message: str) -> None:
    data = {**LEAPFROG, **change}
    if "coefficients" in change:  # (integer elements: number weights)
        data["terms"] = [{"field": "u", "offset": [1, 0]}, {"field": "u_old"}]
    with pytest.raises(InputError) as info:
        parse_definition(data, "leap.stencil.yaml")
    assert info.value.source == "leap.stencil.yaml"
    assert re.search(message, info.value.message), info.value.message


def test_the_template_aliases_the_output_with_the_field() -> None:
    from gtune.stencils.render import definition_description

    defn = parse_definition(LEAPFROG, "leap.stencil.yaml")
    source, description = definition_description(defn, {"NX": 32, "NY": 16})
    assert "#define DST u_old" in source and "__global REAL *DST, \\" in source
    assert "E(u_old, 0, 0, 0, " in source and "u_old updated in place" in source
    args = {a["name"]: a for a in description["arguments"]}
    assert list(args) == ["u", "u_old", "c2"]
    assert (args["u_old"]["role"], args["u_old"]["init"]) == ("inout", "random")
    assert set(description["techniques"]) == {"global", "vec", "local", "image", "stream"}
    assert "u_old is updated in place" in description["doc"]
    assert "no temporal blocking" in description["doc"]


# ---------------------------------------------------------------------------------
# Plain mode and the lifting interface (the preprocessor, no OpenCL)


def test_an_array_read_where_it_is_written_is_the_field_updated_in_place() -> None:
    kernel = open_corpus(FDTD["source"], FDTD["size"], *FDTD["flags"])
    assert {a.name: a.role for a in kernel.arguments if a.kind == "buffer"} == {
        "hz": "input",
        "ey": "inout",
    }
    face = interface(kernel)
    assert (face.fields, face.output, face.inplace) == (("hz", "ey"), "ey", "ey")


def test_an_inout_array_beside_another_output_is_refused_without_suggesting_output(
    tmp_path: Path,
) -> None:
    source = (
        "__kernel void k(__global float *u, __global const float *v, __global float *w)"
        " { int i = get_global_id(0); u[i] = u[i] + 0.5f * v[i]; w[i] = v[i]; }"
    )
    with pytest.raises(InputError) as info:
        interface(plain_from_text(tmp_path, source, [16, 8]))
    said = info.value.render()
    assert "cannot lift kernel k: array u is read and written (u[...] =; reads u[...])" in said
    assert (
        "hint: u is read at the index it writes, an update in place, which lifts where it "
        "is the kernel's only output array (this kernel writes u, w)" in said
    )
    assert "--role u=output" not in said


def test_an_array_updated_in_place_alone_is_refused(tmp_path: Path) -> None:
    source = "__kernel void k(__global float *u) { int i = get_global_id(0); u[i] *= 0.5f; }"
    with pytest.raises(
        InputError,
        match="array u is read and written, an update in place, and it reads no other array",
    ):
        interface(plain_from_text(tmp_path, source, [16, 8]))


# ---------------------------------------------------------------------------------
# On OpenCL (PoCL)


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("data", [LEAPFROG, CLAMPED], ids=["leapfrog-2d", "clamped-3d"])
def test_an_inplace_definition_verifies_in_every_technique(
    data: dict[str, Any], device: Any
) -> None:
    """One buffer for the field and the output: each work-item reads its point before
    writing it, in every one-step technique (the vector technique with whole rim
    vectors and row blocks too)."""
    from gtune.stencils.render import definition_kernel_of
    from tests.stencils.test_definition_opencl import technique_configs, verify

    defn = parse_definition(data, f"{data['name']}.stencil.yaml")
    sizes = {"NX": 32, "NY": 16, "NZ": 16} if defn.dims == 3 else {"NX": 32, "NY": 16}
    kernel = definition_kernel_of(defn).with_sizes(sizes)
    configs = technique_configs(kernel, device.limit_values())
    assert {"global", "vec", "local", "image", "stream", "vec rim", "vec blocks"} <= set(configs)
    verify(kernel, configs)


@pytest.mark.opencl
@pytest.mark.parametrize("case", ["fdtd_ey_inplace", "wave_leapfrog_inplace"])
def test_an_update_in_place_lifts_tunes_and_drops_in(
    case: str, device: Any, tmp_path: Path, gtune_here: Cli
) -> None:
    """lift -> run (against the original, one buffer for both roles) -> export -> the
    exported kernel launched with the original's arguments gives the original's
    output."""
    entry = MANIFEST[case]
    out = tmp_path / f"{case}.stencil.yaml"
    source = str(PLAIN / entry["source"])
    done = gtune_here("lift", source, "--size", entry["size"], *entry["flags"], "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    field = {"fdtd_ey_inplace": "ey", "wave_leapfrog_inplace": "u_old"}[case]
    assert defn.inplace and defn.output == field and defn.fields[-1] == field
    assert [t.offset for t in defn.terms_of(field)] == [(0, 0, 0)]
    assert [t.coefficient.factor for t in defn.terms_of(field)] == [
        1.0 if case == "fdtd_ey_inplace" else -1.0
    ]
    assert defn.band == ("reach" if case == "fdtd_ey_inplace" else "radius")
    db, size = tmp_path / "r.db", "64x40"
    ran = gtune_here("run", str(out), "--size", size, "--budget", "2", "--runs", "3", db=db)
    assert ran.returncode == 0, ran.stderr
    said = " ".join((ran.stdout + ran.stderr).split())
    assert "output of the original kernel" in said and "over the original" in said
    exported = gtune_here("export", str(out), "--size", size, "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    tuned = tmp_path / "t" / f"{case}_tuned.json"
    arguments = json.loads(tuned.read_text())["arguments"]
    assert [a["name"] for a in arguments] == [a.name for a in defn.arguments]
    assert [a.get("role") for a in arguments if a["name"] == field] == ["inout"]
    _drop_in_matches(tuned, defn, {"NX": 128, "NY": 80})  # (a multiple of 64x40)


def _drop_in_matches(tuned_path: Path, defn: Any, sizes: dict[str, int]) -> None:
    """The exported kernel and the original, each launched as its host does with the
    original's argument values on the same data: the same array updated in place."""
    import pyopencl as cl

    from gtune.commands._plain import original_kernel
    from gtune.measure.problem import initial_arrays
    from gtune.stencils.lift import shipped_config
    from gtune.tuned import TunedKernel

    tuned = TunedKernel.load(tuned_path)
    original = original_kernel(defn, sizes)
    ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    host = initial_arrays(original, seed=7)
    at = [a.name for a in original.arguments].index(defn.output)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    config = shipped_config(original)
    runs = (
        (tuned.source, tuned.compile_options(sizes), *tuned.launch_sizes(sizes)),
        (original.source, original.defines(config), *original.launch_sizes(config)),
    )
    outputs = []
    for source, options, glob, loc in runs:
        env = original.env(config)
        args: list[Any] = []
        for a in original.arguments:  # as the original's host passes them
            if a.kind == "scalar" and a.value is not None:
                args.append(np.dtype(a.dtype).type(a.value.evaluate(env)))
            else:
                args.append(cl.Buffer(ctx, flags, hostbuf=host[a.name].copy()))
        program = cl.Program(ctx, source).build(options=list(options))
        getattr(program, original.name)(queue, glob, loc, *args)
        outputs.append(np.empty_like(host[defn.output]))
        cl.enqueue_copy(queue, outputs[-1], args[at])
    assert not np.array_equal(outputs[1], host[defn.output])  # (it updates the array)
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-5, atol=1e-6)


@pytest.mark.opencl
def test_an_array_read_at_a_neighbour_is_refused(tmp_path: Path, gtune_here: Cli) -> None:
    """A Gauss-Seidel sweep in place: order-dependent, refused with the reason."""
    out = tmp_path / "gs.stencil.yaml"
    source = str(PLAIN / SWEEP["source"])
    done = gtune_here("lift", source, "--size", SWEEP["size"], *SWEEP["flags"], "-o", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    said = " ".join(done.stderr.split())
    assert "it updates u in place and reads it at u[" in said
    assert SWEEP["why"] in said and "reads u at the point it writes only" in said
    assert not out.exists()


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_an_update_in_place_taken_for_an_output_says_so(device: Any, tmp_path: Path) -> None:
    """--role ey=output: every input zero leaves ey as it was (ey - c*0), which is no
    'writes nothing': random inputs change it, an update in place."""
    from gtune.measure.lifting import lift_kernel
    from gtune.stencils.lift import NotAStencil

    kernel = open_corpus(FDTD["source"], FDTD["size"], *FDTD["flags"], "--role", "ey=output")
    with pytest.raises(NotAStencil) as info:
        lift_kernel(kernel, device=device, output=tmp_path / "e.stencil.yaml")
    assert info.value.why == (
        "with every input zero it leaves its output ey as it was, but random inputs change "
        "it: it adds to what ey held (ey = ey + ...), an update in place; lift it with ey "
        "read and written, as plain mode reads it (--role ey=inout, not output)"
    )


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_an_array_read_only_after_it_is_written_lifts_as_the_output(
    device: Any, tmp_path: Path
) -> None:
    """Plain mode reads ``out[k]`` after its write as a read: probing shows the output
    does not depend on what the array held, so it lifts as an output alone."""
    from gtune.measure.lifting import lift_kernel

    source = """
__kernel void k(__global const float *in, __global float *out, int nx, int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < 1 || x >= nx - 1) return;
    const int k = y * nx + x;
    out[k] = 0.5f * (in[k - 1] + in[k + 1]);
    out[k] = 2.0f * out[k];
}
"""
    kernel = plain_from_text(
        tmp_path, source, [32, 16], scalars={"nx": "NX", "ny": "NY"}, default={"WX": 16, "WY": 4}
    )
    assert interface(kernel).inplace == "out"
    defn, _ = lift_kernel(kernel, device=device, output=tmp_path / "k.stencil.yaml")
    assert not defn.inplace and defn.fields == ("in",) and defn.output == "out"
    assert sorted((t.offset[0], t.coefficient.factor) for t in defn.terms) == [(-1, 1.0), (1, 1.0)]
