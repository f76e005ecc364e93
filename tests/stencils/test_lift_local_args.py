"""Kernels that take their local-memory tile as an argument the host sizes per launch
(``__local float *sh``, ``clSetKernelArg(k, i, bytes, NULL)``), as SHOC's Stencil2D, the
AMD APP SDK's samples and many image filters do: plain mode reads the tile's length from
``--array sh=EXPR``, the measurement passes ``cl.LocalMemory`` of it per configuration,
lift probes the original with it, and the tuned kernel keeps it in its signature
(unused), so the export is a drop-in. The corpus kernels are
``stencils/plain/stencil2d_local_arg.cl`` and ``box_local_arg.cl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gtune.exceptions import ExpressionError, InputError
from gtune.kernel import TunableKernel
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.lift import interface
from tests.conftest import run_tuned_example
from tests.inprocess import Cli
from tests.space.space_helpers import h100_limits
from tests.stencils.plain_helpers import PLAIN, open_corpus, plain_from_text

STENCIL2D = (
    "--array", "data=NX+2,NY+2", "--scalar", "alignment=NX+2", "--scalar", "wCenter=0.25",
    "--scalar", "wCardinal=0.125", "--scalar", "wDiagonal=0.0625", "--default", "WX=16,WY=8",
    "--array", "sh=(WX+2)*(WY+2)",
)  # fmt: skip
BOX = ("--scalar", "scale=0.2", "--default", "WX=16,WY=4", "--array", "lds=(WX+4)*WY")
TILED = """
__kernel void k(__global const float *in, __global float *out, __local float *sh)
{
    const int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0);
    const int t = get_local_id(1) * get_local_size(0) + get_local_id(0);
    sh[t] = in[y * w + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[y * w + x] = 0.5f * sh[t];
}
"""


# ---------------------------------------------------------------------------------
# Plain mode and the lifting interface (the preprocessor, no OpenCL)


def test_a_local_parameter_without_its_length_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        plain_from_text(tmp_path, TILED, [16, 8])
    assert info.value.render() == (
        f"{tmp_path / 'k.cl'}: parameter 'sh' is a __local buffer the host sizes: give its "
        "length in elements with --array sh=EXPR (e.g. --array sh=(WX+2)*(WY+2))"
    )
    with pytest.raises(ExpressionError, match=r"unknown name 'TILE' in 'TILE\*2'") as bad:
        plain_from_text(tmp_path, TILED, [16, 8], arrays={"sh": ["TILE*2"]})
    assert bad.value.source is not None and "arrays[sh]" in bad.value.source


def test_lift_and_run_without_the_length_exit_2_naming_the_flag(
    tmp_path: Path, gtune_here: Cli
) -> None:
    source = str(PLAIN / "box_local_arg.cl")
    out = tmp_path / "box.stencil.yaml"
    for args in (["lift", "-o", str(out)], ["run", "--budget", "1"]):
        done = gtune_here(
            *args, source, "--size", "32x16", "--scalar", "scale=0.2", db=tmp_path / "r.db"
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1 and "box_local_arg.cl: parameter 'lds'" in done.stderr
        assert "give its length in elements with --array lds=EXPR" in done.stderr
    assert not out.exists()


def test_the_length_is_an_expression_of_the_launch(tmp_path: Path) -> None:
    kernel = plain_from_text(tmp_path, TILED, [16, 8], arrays={"sh": ["WX*WY"]})
    sh = kernel.arguments[2]
    assert (sh.kind, sh.dtype, [e.text for e in sh.shape]) == ("local", "float32", ["WX*WY"])
    assert kernel.local_arguments({"WX": 8, "WY": 2}) == {"sh": 64}
    assert any("sh: a __local buffer the host sizes" in n for n in kernel.inferred)
    # a local size given as numbers: the length is a number too (WX, WY are tied to it)
    fixed = plain_from_text(
        tmp_path, TILED, [16, 8], arrays={"sh": ["WX*WY"]}, local_size=["4", "2"]
    )
    assert fixed.local_arguments({}) == {"sh": 32}
    # lifting: the tile in the template's work-group names, other parameters at their
    # shipped values
    tiled = plain_from_text(
        tmp_path,
        TILED,
        [16, 8],
        arrays={"sh": ["ROWS*(WX+2)*(WY+2)"]},
        params={"ROWS": [1, 2]},
        default={"WX": 8, "WY": 2, "ROWS": 2},
    )
    assert interface(tiled).locals == {"sh": ("float", ("2 * (WX + 2) * (WY + 2)",))}
    assert interface(fixed).locals == {"sh": ("float", ("4 * 2",))}


def test_a_definition_keeps_a_local_argument_in_its_place() -> None:
    from gtune.stencils.render import definition_description

    data = {
        "name": "blur",
        "dims": 2,
        "fields": ["a"],
        "output": "b",
        "terms": [{"field": "a", "offset": [-1, 0], "coefficient": 0.5}],
        "kernel": {
            "name": "k",
            "arguments": [
                "a",
                "b",
                {"name": "sh", "type": "float", "local": True, "shape": ["(WX+2)*(WY+2)"]},
            ],
        },
    }
    defn = parse_definition(data, "blur.stencil.yaml")
    sh = defn.arguments[2]
    assert (sh.kind, sh.type, sh.shape) == ("local", "float", ("(WX+2)*(WY+2)",))
    assert parse_definition(yaml.safe_load(defn.to_yaml()), "again.stencil.yaml") == defn
    source, description = definition_description(defn, {"NX": 32, "NY": 16})
    assert "__local float *sh" in source
    assert description["arguments"][2] == {
        "name": "sh",
        "kind": "local",
        "dtype": "float32",
        "shape": ["(WX+2)*(WY+2)"],
    }


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"local": True, "shape": ["(WX+2)*(WQ+2)"]}, r"\.shape: unknown name 'WQ'"),
        ({"local": True, "shape": ["WZ"]}, r"\.shape: unknown name 'WZ'"),  # a 2D definition
        ({"local": True}, r"\.shape: a local buffer needs its elements"),
        ({"local": True, "shape": ["WX"], "type": "float4"}, r"\.type: expected one of"),
        ({"local": True, "shape": ["WX"], "value": 3}, r"\.value: a local buffer has a type"),
        ({"local": True, "ignored": True, "shape": ["WX"]}, "not ignored and local"),
        ({"ignored": True, "type": "int", "shape": ["WX"]}, "only a local buffer has a shape"),
    ],
)
def test_bad_local_arguments_of_a_definition_name_the_key(
    item: dict[str, Any], message: str
) -> None:
    data = {
        "name": "blur",
        "dims": 2,
        "fields": ["a"],
        "output": "b",
        "terms": [{"field": "a", "coefficient": 0.5}],
        "kernel": {"arguments": ["a", "b", {"name": "sh", "type": "float", **item}]},
    }
    with pytest.raises(InputError, match=message) as info:
        parse_definition(data, "blur.stencil.yaml")
    assert info.value.render().startswith("blur.stencil.yaml: kernel.arguments[2]")


def test_a_local_argument_counts_against_the_devices_local_memory(tmp_path: Path) -> None:
    from gtune.space.model import build_model
    from gtune.tuned import tuned_kernel

    kernel = plain_from_text(tmp_path, TILED, [64, 64], arrays={"sh": ["(WX+2)*(WY+2)"]})
    device = h100_limits(local_mem_size=4096)  # a 4 KiB local memory
    model = build_model(kernel, device)
    rules = {c.name: c.expr for c in model.constraints}
    env = {**model.env}
    fits = {**env, "WX": 16, "WY": 16}  # 18 * 18 * 4 = 1296 bytes
    assert rules["local_memory"].evaluate(fits)
    assert rules["local_argument_positive[sh]"].evaluate(fits)
    assert not rules["local_memory"].evaluate({**env, "WX": 32, "WY": 32})  # 4624 > 4096
    # exported: the bytes at the tuned configuration, as JSON, a C macro and in Python
    tuned = tuned_kernel(kernel, {"WX": 16, "WY": 4})
    sh = tuned.arguments[2]
    assert sh["kind"] == "local" and "role" not in sh and "init" not in sh
    assert tuned.local_bytes(sh) == 18 * 6 * 4
    assert "_ARG_2_LOCAL_BYTES(NX, NY) ((size_t)" in tuned.header()


# ---------------------------------------------------------------------------------
# On OpenCL (PoCL)


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_local_buffer_that_does_not_fit_fails_its_configuration_only(
    tmp_path: Path, device: Any
) -> None:
    from gtune.measure.opencl_evaluator import OpenCLEvaluator
    from gtune.result import Status

    # 1.5 MiB at 32x16: past PoCL's local memory (512 KiB), and any GPU's
    kernel = plain_from_text(
        tmp_path,
        TILED,
        [32, 16],
        arrays={"sh": ["(WX-8)*WY*WY*64"]},
        default={"WX": 16, "WY": 4},
    )
    with OpenCLEvaluator(kernel, device, compile_workers=0, runs=1, verify=False) as ev:
        big = ev.evaluate({"WX": 32, "WY": 16})
        empty = ev.evaluate({"WX": 8, "WY": 4})  # (WX-8) = 0 elements
        ok = ev.evaluate({"WX": 16, "WY": 4})
    assert big.status is Status.LAUNCH_FAILED and "bytes of local memory" in big.message
    assert "the local argument sh takes 1,572,864 bytes at this configuration" in big.message
    assert empty.status is Status.LAUNCH_FAILED and "needs at least one element" in empty.message
    assert ok.status is Status.OK, ok.message


@pytest.mark.opencl
def test_shoc_stencil2d_lifts_tunes_and_drops_in(
    device: Any, tmp_path: Path, gtune_here: Cli
) -> None:
    """lift -> run (checked against the original at another size) -> export -> the
    exported kernel launched with the original's own host arguments (its padded input,
    its pitch at that size, the __local tile sized from the launch) gives the original's
    output."""
    out = tmp_path / "s2d.stencil.yaml"
    source = PLAIN / "stencil2d_local_arg.cl"
    done = gtune_here("lift", str(source), "--size", "32x16", *STENCIL2D, "-o", str(out))
    assert done.returncode == 0, done.stderr
    defn = load_definition(out)
    assert defn.coefficients == ("wCenter", "wCardinal", "wDiagonal") and len(defn.terms) == 9
    assert defn.pads == {"data": (1, 1, 0)}
    kinds = {a.name: a.kind for a in defn.arguments}
    assert list(kinds) == [
        "data",
        "newData",
        "alignment",
        "wCenter",
        "wCardinal",
        "wDiagonal",
        "sh",
    ]
    assert defn.arguments[-1].shape == ("(WX + 2) * (WY + 2)",) and kinds["sh"] == "local"
    db, size = tmp_path / "r.db", "48x40"
    ran = gtune_here("run", str(out), "--size", size, "--budget", "3", "--runs", "3", db=db)
    assert ran.returncode == 0, ran.stderr
    said = " ".join((ran.stdout + ran.stderr).split())
    assert "output of the original kernel StencilKernel" in said and "over the original" in said
    exported = gtune_here("export", str(out), "--size", size, "-o", str(tmp_path / "t"), db=db)
    assert exported.returncode == 0, exported.stderr
    assert "__local argument sh keeps its place" in " ".join(exported.stderr.split())
    tuned = tmp_path / "t" / "s2d_tuned.json"
    assert [a["name"] for a in json.loads(tuned.read_text())["arguments"]] == list(kinds)
    _drop_in_matches(tuned, defn, {"NX": 80, "NY": 24})
    example = run_tuned_example(tuned, "--original", str(out))  # the documented way
    assert example.returncode == 0, example.stdout + example.stderr
    assert "newData: max |tuned - original|" in example.stdout and "(ok)" in example.stdout


def _drop_in_matches(tuned_path: Path, defn: Any, sizes: dict[str, int]) -> None:
    """The exported kernel and the original, each built and launched as its host does,
    with the original's argument values (the tuned kernel at its exported launch, the
    tile sized for that launch): the same output; and the same again through gtune's
    runtime, the tile passed as None (the runtime sizes it)."""
    import pyopencl as cl

    from gtune.commands._plain import original_kernel
    from gtune.measure.problem import initial_arrays
    from gtune.runtime.opencl import Launch, Programs
    from gtune.stencils.lift import shipped_config
    from gtune.tuned import TunedKernel

    tuned = TunedKernel.load(tuned_path)
    original = original_kernel(defn, sizes)
    ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    host = initial_arrays(original, seed=7)
    out_at = [a.name for a in original.arguments].index(defn.output)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    outputs = []
    runs = (
        (tuned.source, tuned.compile_options(sizes), *tuned.launch_sizes(sizes)),
        (original.source, original.defines(shipped_config(original)), *_launch(original)),
    )
    for source, options, glob, loc in runs:
        assert loc is not None
        env = {**original.env(shipped_config(original)), "WX": loc[0], "WY": loc[1]}
        args: list[Any] = []
        for a in original.arguments:  # as the original's host passes them
            if a.kind == "scalar" and a.value is not None:
                args.append(np.dtype(a.dtype).type(a.value.evaluate(env)))
            elif a.kind == "local":  # (its size from the launch the host uses)
                args.append(cl.LocalMemory(a.local_bytes(env)))
            else:
                args.append(cl.Buffer(ctx, flags, hostbuf=host[a.name].copy()))
        program = cl.Program(ctx, source).build(options=list(options))
        getattr(program, original.name)(queue, glob, loc, *args)
        outputs.append(np.empty_like(host[defn.output]))
        cl.enqueue_copy(queue, outputs[-1], args[out_at])
    runtime = Programs().get(ctx, ctx.devices[0], tuned.source, tuned.compile_options(sizes))
    args[out_at] = cl.Buffer(ctx, flags, hostbuf=host[defn.output].copy())
    given = [
        None if a.kind == "local" else v for a, v in zip(original.arguments, args, strict=True)
    ]
    Launch(tuned, runtime, sizes)(queue, given)
    outputs.append(np.empty_like(host[defn.output]))
    cl.enqueue_copy(queue, outputs[-1], args[out_at])
    for got in (outputs[0], outputs[2]):
        np.testing.assert_allclose(got, outputs[1], rtol=1e-5, atol=1e-6)


def _launch(kernel: TunableKernel) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    from gtune.stencils.lift import shipped_config

    return kernel.launch_sizes(shipped_config(kernel))


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_amd_box_filter_lifts_and_agrees_with_its_original_at_another_size(
    device: Any, tmp_path: Path
) -> None:
    from gtune.commands._plain import original_kernel
    from gtune.measure.lifting import against_original, lift_kernel
    from gtune.stencils.render import definition_kernel

    out = tmp_path / "box.stencil.yaml"
    kernel = open_corpus("box_local_arg.cl", "32x16", *BOX)
    defn, _ = lift_kernel(kernel, device=device, output=out, flags=list(BOX))
    out.write_text(defn.to_yaml())
    assert defn.boundary == "clamp" and defn.coefficients == ("scale",)
    assert sorted(t.offset[0] for t in defn.terms) == [-2, -1, 0, 1, 2]
    assert defn.arguments[-1].shape == ("(WX + 4) * WY",)
    # what `gtune run` does first: the original (its tile sized at its shipped launch)
    # computes the definition at another size
    sizes = {"NX": 48, "NY": 24}
    rendered = definition_kernel(out).with_sizes(sizes)
    checked = against_original(rendered, load_definition(out), original_kernel(defn, sizes), device)
    assert checked.reference.target == "gtune.stencils.reference:recorded_output"
    Path(checked.reference.args["file"]).unlink()
