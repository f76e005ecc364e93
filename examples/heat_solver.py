"""A 3D heat solver whose step kernel gtune tunes while it runs (``gtune.runtime``).

The solver advances the heat equation ``--steps`` times on an ``--size`` grid with
the heat3d stencil (``stencils/heat3d.cl``). It asks ``gtune.runtime`` for the step
kernel: the configuration tuned for this device and size if the results hold one,
else the one tuned for the nearest legal size, else the kernel's default. With online
tuning on (``--budget``, the default), a size never tuned is tuned in the background
while the solver keeps stepping with the fallback, and the steps after the switch run
the configuration the confirmation round found faster. What was measured stays in the
store (``--store``, default: the one ``gtune run`` uses), so the next run starts tuned.

    python examples/heat_solver.py                                # small: runs on PoCL
    python examples/heat_solver.py --size 512x512x256 --steps 20000 --budget 120s
    python examples/heat_solver.py --tuned tuned/ --no-tune       # exports only

At the end it prints how many steps each configuration ran and their time per step,
and (for grids up to ``--check-limit`` points) checks the result against numpy.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl

import gtune.runtime
from gtune.exceptions import GtuneError

HERE = Path(__file__).resolve().parent
KERNEL = HERE.parent / "stencils" / "heat3d.cl"


@dataclass
class Phase:
    """Steps run with one configuration."""

    choice: str
    configuration: dict[str, int]
    first_step: int
    steps: int = 0
    kernel_s: float = 0.0  # device time of its launches (profiling events)

    @property
    def per_step_s(self) -> float:
        return self.kernel_s / self.steps if self.steps else float("nan")


@dataclass
class Run:
    phases: list[Phase] = field(default_factory=list)
    wall_s: float = 0.0
    final: np.ndarray | None = None

    def step(self, kernel: Any, queue: Any, a: Any, b: Any, i: int) -> None:
        """Step ``i``: ``kernel`` from ``a`` into ``b``, its time counted in the phase of
        the configuration that ran it (a new phase where online tuning switched)."""
        if not self.phases or self.phases[-1].configuration != kernel.configuration:
            self.phases.append(Phase(kernel.choice, kernel.configuration, i))
        event = kernel(queue, a, b)
        event.wait()
        phase = self.phases[-1]
        phase.steps += 1
        phase.kernel_s += (event.profile.end - event.profile.start) * 1e-9


def heat_numpy(a: np.ndarray, steps: int) -> np.ndarray:
    """The same solver in numpy: interior points updated, the boundary kept."""
    a = a.copy()
    for _ in range(steps):
        n = a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:] + a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1]
        n = n + a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1]
        b = a.copy()
        b[1:-1, 1:-1, 1:-1] = np.float32(0.25) * a[1:-1, 1:-1, 1:-1] + np.float32(0.125) * n
        a = b
    return a


def initial(sizes: dict[str, int]) -> np.ndarray:
    return np.random.default_rng(0).random((sizes["NZ"], sizes["NY"], sizes["NX"]), np.float32)


def solve(
    ctx: Any, lib: gtune.runtime.TunedLibrary, sizes: dict[str, int], steps: int, wait: bool
) -> Run:
    """Run the solver loop: ``steps`` heat steps, buffers swapped after each. With
    ``wait``, the last step waits for online tuning to decide first (so a short run
    shows the switch)."""
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    host = initial(sizes)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    a, b = cl.Buffer(ctx, flags, hostbuf=host), cl.Buffer(ctx, flags, hostbuf=host)
    step = lib.kernel_for(ctx, sizes)
    run = Run()
    start = time.perf_counter()
    for i in range(steps):
        if wait and i == steps - 1:
            step.wait_tuning()
        run.step(step, queue, a, b, i)
        a, b = b, a
    queue.finish()
    run.wall_s = time.perf_counter() - start
    run.final = np.empty_like(host)
    cl.enqueue_copy(queue, run.final, a)
    queue.finish()
    return run


def report(run: Run, step: gtune.runtime.RuntimeKernel) -> list[str]:
    lines = []
    for p in run.phases:
        config = " ".join(f"{k}={v}" for k, v in p.configuration.items())
        lines.append(
            f"configuration: {p.choice} from step {p.first_step}: {p.steps} steps, "
            f"{p.per_step_s * 1e6:.1f} us per step ({config})"
        )
    lines.append(f"wall time {run.wall_s:.2f} s; online tuning: {step.tuning or 'off'}")
    if step.tuning_message:
        lines.append(f"  {step.tuning_message}")
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="32x32x16", help="NXxNYxNZ (default 32x32x16)")
    p.add_argument("--steps", type=int, default=200, help="time steps (default 200)")
    p.add_argument("--kernel", default=str(KERNEL), help="the step kernel (heat3d)")
    p.add_argument("--tuned", nargs="*", default=[], help="exports, bundles or stores to read")
    # 25: where no load-predictor model fits (PoCL on most CPUs) the five techniques'
    # searches share it, and each needs 5 to finish its first group (else a warning)
    p.add_argument("--budget", default="25", help="online tuning budget: configurations or '90s'")
    p.add_argument("--no-tune", action="store_true", help="no online tuning")
    p.add_argument("--store", help="result store for online tuning (default: gtune run's)")
    p.add_argument("--wait", action="store_true", help="the last step waits for the tuning")
    p.add_argument("--check-limit", type=int, default=1 << 18, help="largest grid checked")
    p.add_argument("-v", "--verbose", action="store_true", help="log the runtime's choices")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    try:
        nx, ny, nz = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        print(
            f"error: --size: expected NXxNYxNZ, e.g. 32x32x16, got {args.size!r}", file=sys.stderr
        )
        return 2
    sizes = {"NX": nx, "NY": ny, "NZ": nz}
    ctx = cl.create_some_context(interactive=False)
    try:
        lib = gtune.runtime.open_tuned(
            *args.tuned,
            kernel=args.kernel,
            tune_missing=None if args.no_tune else args.budget,
            store=args.store,
        )
    except GtuneError as exc:  # a --tuned file or folder it cannot use, a bad --budget
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with lib:
        run = solve(ctx, lib, sizes, args.steps, args.wait)
        step = lib.kernel_for(ctx, sizes)
        print("\n".join(report(run, step)))
    assert run.final is not None
    if nx * ny * nz <= args.check_limit:
        expected = heat_numpy(initial(sizes), args.steps)
        np.testing.assert_allclose(run.final, expected, rtol=1e-4, atol=1e-5)
        print(f"{args.steps} steps verified against numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
