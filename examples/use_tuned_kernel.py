"""Use a kernel tuned by gtune in a pyopencl application, and check its output.

First tune and export (any problem size the tuned configuration divides works later):

    gtune run stencils/heat3d.cl --size 64x64x64
    gtune export stencils/heat3d.cl --size 64x64x64 -o tuned/

then run this with the exported JSON (and, optionally, another problem size):

    python examples/use_tuned_kernel.py tuned/heat3d_tuned.json [--size 128x64x64]
    python examples/use_tuned_kernel.py tuned/heat3d_tuned.json --original stencils/heat3d.cl

For a kernel lifted from a plain kernel (``gtune lift``, docs/lift.md), give the
definition: its ``original:`` names the plain kernel and the flags it runs with:

    python examples/use_tuned_kernel.py tuned/star7_tuned.json --original star7.stencil.yaml

It builds the exported source with the exported build options, launches it with the
exported global and local sizes on random data, and compares its output with the
original: by default a numpy version of heat3d (one explicit step of the 3D heat
equation: u' = u + 1/8 * (sum of the 6 neighbours - 6u) on interior points; the boundary
keeps the input), or, with ``--original KERNEL``, that kernel (with its description) at
its default configuration on the same data. Exit status 0 when the outputs match.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyopencl as cl
from pyopencl import cltypes

from gtune.tuned import TunedKernel


def heat3d_reference(src: np.ndarray) -> np.ndarray:
    """The original heat3d stencil in numpy: what the tuned kernel must compute."""
    out = src.copy()
    c = src[1:-1, 1:-1, 1:-1]
    neighbours = (
        src[1:-1, 1:-1, :-2]
        + src[1:-1, 1:-1, 2:]
        + src[1:-1, :-2, 1:-1]
        + src[1:-1, 2:, 1:-1]
        + src[:-2, 1:-1, 1:-1]
        + src[2:, 1:-1, 1:-1]
    )
    out[1:-1, 1:-1, 1:-1] = np.float32(0.25) * c + np.float32(0.125) * neighbours
    return out


def make_inputs(tuned: TunedKernel, sizes: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Every array argument's initial contents: random inputs, outputs as described
    (``copy:src``: the output starts as a copy of ``src``, whose boundary it keeps;
    ``values:...``: the given contents)."""
    rng = np.random.default_rng(0)
    host: dict[str, np.ndarray] = {}
    for arg in tuned.arguments:
        if arg["kind"] in ("scalar", "local"):  # (a __local buffer holds no data)
            continue
        shape = tuple(int(tuned.evaluate(e, sizes)) for e in arg["shape"])
        dtype = np.dtype(arg["dtype"])
        init = str(arg.get("init", "random"))
        if init.startswith("copy:"):
            host[arg["name"]] = host[init.removeprefix("copy:")].copy()
        elif init == "zeros":
            host[arg["name"]] = np.zeros(shape, dtype)
        elif init.startswith("values:"):  # given contents (a lifted stencil's weights)
            values = [float(v) for v in init.removeprefix("values:").split(",")]
            host[arg["name"]] = np.array(values, dtype).reshape(shape)
        else:
            host[arg["name"]] = rng.random(shape, dtype=np.float64).astype(dtype)
    return host


def launch(
    ctx: cl.Context,
    queue: cl.CommandQueue,
    source: str,
    name: str,
    options: Sequence[str],
    global_size: tuple[int, ...],
    local_size: tuple[int, ...] | None,
    arguments: Sequence[Mapping[str, Any]],
    host: Mapping[str, np.ndarray],
    scalars: Mapping[str, Any],
    plane: tuple[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Build ``source``, launch kernel ``name`` once on copies of ``host``; the outputs.
    A ``local`` argument (a __local buffer) is passed its size and no data, as
    ``clSetKernelArg(k, i, bytes, NULL)`` does: ``bytes`` in its entry. With ``plane``
    (NAME, COUNT): COUNT launches in order on the same buffers, the scalar NAME 0, 1,
    ...: the host loop of a kernel launched once per plane."""
    kernel = getattr(cl.Program(ctx, source).build(options=list(options)), name)
    mf = cl.mem_flags
    device_args: list[Any] = []
    for arg in arguments:
        if arg["kind"] == "scalar" and isinstance(scalars[arg["name"]], list):
            # a vector (uint2 dims): its lanes, packed as OpenCL packs the vector type
            lanes = scalars[arg["name"]]
            vector = cltypes.vec_types[(np.dtype(arg["dtype"]), len(lanes))]
            device_args.append(np.array(tuple(lanes), dtype=vector))
        elif arg["kind"] == "scalar":
            device_args.append(np.dtype(arg["dtype"]).type(scalars[arg["name"]]))
        elif arg["kind"] == "local":
            device_args.append(cl.LocalMemory(int(arg["bytes"])))
        elif arg["kind"] == "image":  # the tuned configuration reads this input as an image
            data = host[arg["name"]]
            fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
            flags = mf.READ_ONLY | mf.COPY_HOST_PTR
            shape = data.shape[::-1]
            device_args.append(cl.create_image(ctx, flags, fmt, shape=shape, hostbuf=data))
        else:
            data = host[arg["name"]].copy()
            device_args.append(cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data))
    if plane is None:
        kernel(queue, global_size, local_size, *device_args)
    else:
        at = [a["name"] for a in arguments].index(plane[0])
        kind = np.dtype(arguments[at]["dtype"]).type
        for k in range(plane[1]):
            device_args[at] = kind(k)
            kernel(queue, global_size, local_size, *device_args)
    outputs = {}
    for arg, buf in zip(arguments, device_args, strict=True):
        if arg["kind"] == "buffer" and arg.get("role") != "input":
            outputs[arg["name"]] = np.empty_like(host[arg["name"]])
            cl.enqueue_copy(queue, outputs[arg["name"]], buf)
    queue.finish()
    return outputs


def tolerance_of(
    path: str, sizes: Mapping[str, int], want: Mapping[str, np.ndarray]
) -> tuple[float, float]:
    """The tolerance gtune's own verification allows this kernel (rtol, atol): scaled by
    the terms summed per point and the outputs' magnitude, so a reordered float sum
    with cancellation (a Laplacian's ``4*(a + b + c + d - 4*e)``) is not called wrong
    where gtune accepted it; a description's ``reference: {rtol, atol}`` overrides it."""
    from gtune.measure.problem import tolerances

    if path.endswith(".stencil.yaml"):
        from gtune.stencils.definition import load_definition
        from gtune.stencils.render import definition_kernel_of

        kernel = definition_kernel_of(load_definition(path), sizes)
    else:
        from gtune.description import load_kernel

        kernel = load_kernel(path, sizes)
    return tolerances(kernel, dict(want))


def original_outputs(
    path: str, ctx: cl.Context, queue: cl.CommandQueue, sizes: Mapping[str, int], host: Any
) -> dict[str, np.ndarray]:
    """The original kernel (a gtune kernel with its description, or the plain kernel a
    lifted ``NAME.stencil.yaml`` came from) at its default configuration on the same
    data."""
    from gtune.description import load_kernel

    plane = None
    if path.endswith(".stencil.yaml"):  # lifted: the original is recorded in the definition
        from gtune.commands._plain import original_kernel
        from gtune.measure.lifting import plane_of
        from gtune.stencils.definition import load_definition

        kernel = original_kernel(load_definition(path), sizes)
        plane = plane_of(load_definition(path), sizes)  # launched once per plane?
    else:
        kernel = load_kernel(path, sizes)
    from gtune.stencils.lift import shipped_config

    config = shipped_config(kernel)  # its --default, else its first configuration
    glob, loc = kernel.launch_sizes(config)
    env = kernel.env(config)
    arguments = []
    scalars: dict[str, Any] = {}
    local = kernel.local_arguments(config)  # its __local buffers, as its host sizes them
    for a in kernel.arguments:
        kind = "image" if kernel.uses_image(a, config) else a.kind
        arguments.append(
            {"name": a.name, "kind": kind, "dtype": a.dtype, "role": a.role}
            | ({"bytes": local[a.name]} if a.name in local else {})
        )
        if a.kind == "scalar" and a.value is not None:
            scalars[a.name] = a.value.evaluate(env)
        elif a.kind == "scalar" and a.lanes:  # a vector (uint2 dims): its lanes
            scalars[a.name] = [e.evaluate(env) for e in a.lanes]
    options = kernel.defines(config)
    # plane: the host loop the tuned kernel replaces, one launch per plane in order
    return launch(
        ctx, queue, kernel.source, kernel.name, options, glob, loc, arguments, host, scalars, plane
    )


def launches_per_original(original: str | None, tuned: TunedKernel) -> int:
    """Launches of the tuned kernel that one launch of the original equals: a lifted
    definition of several time steps over the tuned steps per launch (TB)."""
    if not original or not original.endswith(".stencil.yaml"):
        return 1
    from gtune.stencils.definition import load_definition

    steps = load_definition(original).steps
    return steps // int(tuned.configuration.get("TB", 1))


def swap_of(original: str) -> dict[str, str]:
    """{primary field: output} of a lifted definition: what the next step reads."""
    from gtune.stencils.definition import load_definition

    d = load_definition(original)
    return {d.primary_field: d.output}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tuned", help="the .json written by `gtune export`")
    parser.add_argument("--size", help="problem size NXxNYxNZ (default: the tuned size)")
    parser.add_argument(
        "--original",
        metavar="KERNEL",
        help="compare with this kernel's output (a lifted NAME.stencil.yaml: its original)",
    )
    args = parser.parse_args()

    tuned = TunedKernel.load(args.tuned)
    sizes = dict(tuned.tuned_size)
    if args.size:
        sizes = dict(zip(tuned.size_names, map(int, args.size.split("x")), strict=True))
    broken = tuned.violations(sizes)
    if broken:
        print(f"the tuned configuration does not fit this size: {broken}", file=sys.stderr)
        return 2

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    host = make_inputs(tuned, sizes)
    scalars = {  # a vector's (uint2 dims): the list of its lanes' values
        a["name"]: [tuned.evaluate(str(v), sizes) for v in a["value"]]
        if isinstance(a["value"], list)
        else tuned.evaluate(a["value"], sizes)
        for a in tuned.arguments
        if a["kind"] == "scalar" and a.get("value") is not None
    }
    # The exported source, built with the exported options, launched with the exported sizes.
    global_size, local_size = tuned.launch_sizes(sizes)
    options = tuned.compile_options(sizes)
    arguments = [  # a __local buffer: the bytes the host passes it (and no data)
        dict(a, bytes=tuned.local_bytes(a, sizes)) if a["kind"] == "local" else a
        for a in tuned.arguments
    ]
    got = launch(
        ctx, queue, tuned.source, tuned.kernel, options, global_size, local_size,
        arguments, host, scalars,
    )  # fmt: skip
    for _ in range(launches_per_original(args.original, tuned) - 1):
        # several time steps: the next launch reads the previous one's output
        swapped = dict(host, **{p: got[o] for p, o in swap_of(args.original).items()})
        got = launch(
            ctx, queue, tuned.source, tuned.kernel, options, global_size, local_size,
            arguments, swapped, scalars,
        )  # fmt: skip

    if args.original:
        want = original_outputs(args.original, ctx, queue, sizes, host)
        rtol, atol = tolerance_of(args.original, sizes, want)
    else:
        want = {name: heat3d_reference(host["src"]) for name in got}
        rtol, atol = 1e-5, 1e-6
    ok = True
    for name, out in got.items():
        err = float(np.max(np.abs(out.astype(np.float64) - want[name].astype(np.float64))))
        if out.dtype.kind in "iu":  # integer elements: bit for bit
            close = bool(np.array_equal(out, want[name]))
        else:
            close = bool(np.allclose(out, want[name], rtol=rtol, atol=atol))
        print(f"{name}: max |tuned - original| = {err:.3g} ({'ok' if close else 'WRONG'})")
        ok = ok and close
    config = " ".join(f"{k}={v}" for k, v in tuned.configuration.items())
    print(f"{tuned.name} at {'x'.join(map(str, sizes.values()))} with {config}")
    return 0 if ok else 1


if __name__ == "__main__":
    from gtune.exceptions import GtuneError

    try:
        sys.exit(main())
    except GtuneError as exc:  # a definition or export that cannot be read: one line
        print(f"use_tuned_kernel: {exc.render()}", file=sys.stderr)
        sys.exit(2)
