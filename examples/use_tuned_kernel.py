"""Use a kernel tuned by gtune in a pyopencl application, and check its output.

First tune and export (any problem size the tuned configuration divides works later):

    gtune run stencils/heat3d.cl --size 64x64x64
    gtune export stencils/heat3d.cl --size 64x64x64 -o tuned/

then run this with the exported JSON (and, optionally, another problem size):

    python examples/use_tuned_kernel.py tuned/heat3d_tuned.json [--size 128x64x64]

It builds the exported source with the exported build options, launches it with the
exported global and local sizes, and compares the result with a numpy version of the
heat3d update (one explicit step of the 3D heat equation: u' = u + 1/8 * (sum of the 6
neighbours - 6u) on interior points; the boundary keeps the input). It exits 0 when the
kernel's output matches, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pyopencl as cl

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tuned", help="the .json written by `gtune export`")
    parser.add_argument("--size", help="problem size NXxNYxNZ (default: the tuned size)")
    args = parser.parse_args()

    tuned = TunedKernel.load(args.tuned)
    sizes = dict(tuned.tuned_size)
    if args.size:
        sizes = dict(zip(tuned.size_names, map(int, args.size.split("x")), strict=True))
    broken = tuned.violations(sizes)
    if broken:
        print(f"the tuned configuration does not fit this size: {broken}", file=sys.stderr)
        return 2

    # 1. Build the exported source with the exported options for this size.
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, tuned.source).build(options=tuned.compile_options(sizes))
    kernel = getattr(program, tuned.kernel)

    # 2. The arguments, in the exported order: buffers (or images), then scalars.
    rng = np.random.default_rng(0)
    host: dict[str, np.ndarray] = {}
    device_args = []
    mf = cl.mem_flags
    for arg in tuned.arguments:
        dtype = np.dtype(arg["dtype"])
        if arg["kind"] == "scalar":
            device_args.append(dtype.type(tuned.evaluate(arg["value"], sizes)))
            continue
        shape = tuple(int(tuned.evaluate(e, sizes)) for e in arg["shape"])
        init = str(arg.get("init", "random"))
        if init.startswith("copy:"):
            data = host[init.removeprefix("copy:")].copy()  # e.g. dst starts as src
        elif init == "zeros":
            data = np.zeros(shape, dtype)
        else:
            data = rng.random(shape, dtype=np.float64).astype(dtype)
        host[arg["name"]] = data
        if arg["kind"] == "image":  # the tuned configuration reads this input as an image
            fmt = cl.ImageFormat(cl.channel_order.R, cl.channel_type.FLOAT)
            device_args.append(
                cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt, shape[::-1], hostbuf=data)
            )
        else:
            device_args.append(cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data))

    # 3. Launch with the exported global and local sizes.
    global_size, local_size = tuned.launch_sizes(sizes)
    kernel(queue, global_size, local_size, *device_args)

    # 4. Read the outputs back and compare with the original stencil.
    ok = True
    for arg, buf in zip(tuned.arguments, device_args, strict=True):
        if arg["kind"] != "buffer" or arg.get("role") == "input":
            continue
        got = np.empty_like(host[arg["name"]])
        cl.enqueue_copy(queue, got, buf)
        want = heat3d_reference(host["src"])
        err = float(np.max(np.abs(got - want)))
        close = np.allclose(got, want, rtol=1e-5, atol=1e-6)
        print(f"{arg['name']}: max |tuned - reference| = {err:.3g} ({'ok' if close else 'WRONG'})")
        ok = ok and close
    config = " ".join(f"{k}={v}" for k, v in tuned.configuration.items())
    print(f"{tuned.name} at {'x'.join(map(str, sizes.values()))} with {config}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
