"""Issue 49's block-order probe (``benchmarks/partition_probe.py``, measured and lost,
benchmarks/results/h200-limit/partition/): the package's vec kernel made a function of
its block, run by a kernel that takes block numbers from counters, one queue or one per
L2 side. On PoCL every SM is SM 0, so each side's queue is drained by side 0's and the
other side's blocks are taken at the end: every variant must compute the package's
bits, twice in a row (the counters zeroed for the second launch), and a wrong block
number must show.

The sides come from atomics' latencies (NVIDIA only); their arithmetic is pure.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import load_script

pytestmark = pytest.mark.candidate  # a probe of issue 49: run with --candidates

ROOT = Path(__file__).resolve().parents[2]
probe = load_script(ROOT / "benchmarks" / "partition_probe.py")

BASE = "RIM=1,LOCAL=0,IMAGE=0,STREAM=0,ZC=1,VX=4,BX=4"
CASES = [
    ("heat3d", "WX=32,WY=4,WZ=2,CZ=2,BY=2,BZ=2,RIN=0"),  # the defaults' H200 winner
    ("box27", "WX=32,WY=2,WZ=2,BY=4,BZ=4,SEP=1,RIN=1"),  # a block of 16 rows, RIN
]


def _pocl() -> tuple[Any, Any, Any]:
    import pyopencl as cl

    device = next(d for p in cl.get_platforms() for d in p.get_devices())
    context = cl.Context([device])
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return device, context, queue


def _run(name: str, config: str, mutate: str | None = None) -> dict[str, Any]:
    import pyopencl as cl

    from gtune.commands._common import parse_config

    _, context, queue = _pocl()
    counters = cl.Buffer(context, cl.mem_flags.READ_WRITE, size=3 * probe.LINE * 4)
    offsets = [0, probe.LINE, 2 * probe.LINE]
    args = argparse.Namespace(size=128, rounds=1, reps=1, variants="")
    sched = probe.SCHED
    if mutate is not None:
        probe.SCHED = sched.replace(*mutate.split("|"))
    try:
        return dict(
            probe.run_kernel(
                context,
                queue,
                name,
                parse_config(f"{BASE},{config}"),
                args,
                None,
                False,
                (counters, offsets),
            )
        )
    finally:
        probe.SCHED = sched


@pytest.mark.opencl
@pytest.mark.parametrize(("name", "config"), CASES)
def test_every_block_order_computes_the_package_kernels_bits(name: str, config: str) -> None:
    out = _run(name, config)
    assert set(out["same_as_std"]) == set(probe.variants(None))
    assert all(out["same_as_std"].values()), out["same_as_std"]
    assert {r["variant"] for r in out["rows"]} == {*probe.variants(None), "copy4"}


@pytest.mark.opencl
def test_a_wrong_block_number_is_caught() -> None:
    # the y-halves order with each side's rows taken in pairs: every other row of
    # blocks computed twice, the rows between never (two blocks per work-group take
    # the even numbers, which the change leaves, and the next block along)
    out = _run("heat3d", CASES[0][1], mutate="p * hy + k / n0|p * hy + k / n0 / 2 * 2")
    wrong = {k for k, same in out["same_as_std"].items() if not same}
    assert wrong == {"ypart", "yparth", "yparte", "yrandh", "yrande", "ypartg"}


def test_sides_are_the_sms_whose_near_lines_agree() -> None:
    rng = np.random.default_rng(3)
    lines = probe.LATENCY_LINES
    home = rng.integers(0, 2, size=lines)  # each line's side
    truth = {s: int(s % 3 == 0) for s in range(12)}  # SM 0 on side 1 of 4 SMs
    sms = np.array([s for s in range(12) for _ in range(2)], dtype=np.int32)
    cycles = np.array(
        [np.where(home == truth[int(s)], 290, 480) + rng.integers(0, 20, lines) for s in sms]
    )
    side, info = probe.sides_from(cycles, sms)
    assert side == {s: truth[s] ^ truth[0] for s in truth}  # SM 0's side is called 0
    assert info["side_counts"] == [4, 8]
    a, b, c = probe.near_lines(cycles, sms, side)
    assert len({a, b, c}) == 3 and a % probe.LINE == b % probe.LINE == 0
    for s, v in side.items():  # a: a line side 0 reaches fast, b: side 1's
        near, far = (a, b) if v == 0 else (b, a)
        assert cycles[2 * s][near // probe.LINE] < 400 < cycles[2 * s][far // probe.LINE]


@pytest.mark.opencl
def test_counters_left_set_are_caught_on_the_next_launch() -> None:
    # the last work-group no longer zeroes side 0's counter: a second launch finds its
    # blocks taken (the host-zeroed variants are unaffected)
    out = _run("heat3d", CASES[0][1], mutate="QB[QC0] = 0;|")
    wrong = {k for k, same in out["same_as_std"].items() if not same}
    assert wrong == {"dyn", "dyne", "ypart", "yparte", "yrande", "ypartg"}


CL20_CASES = [
    ("heat3d", "WX=8,WY=4,VX=4,BX=4,RIM=1,BY=2,BZ=2"),  # vec, rows merged
    ("heat3d", "WX=8,WY=4,STREAM=1,ZC=4"),  # 3D streaming
    ("heat3d", "WX=8,WY=4,LOCAL=1"),  # local tiles
    ("heat3d", "WX=8,WY=4"),  # global
    ("jacobi2d", "WX=8,WY=4,VX=4,BX=4,RIM=1"),
    ("jacobi2d", "WX=8,WY=4,STREAM=1"),  # 2D streaming
]


@pytest.mark.opencl
@pytest.mark.parametrize(("name", "config"), CL20_CASES)
def test_the_template_built_as_opencl_c_2_computes_the_same_bits(name: str, config: str) -> None:
    """What holding the counters in program scope would ask of every kernel of the
    technique: ``-cl-std=CL2.0``. On PoCL the template's kernels give the same bits
    built either way (on NVIDIA the same times and registers: partition/program-scope)."""
    import pyopencl as cl

    from gtune.commands._common import parse_config

    _, context, queue = _pocl()
    kernel = probe.load(name, 64)
    full = kernel.with_defaults(parse_config(config))
    glob, loc = kernel.launch_sizes(full)
    n = int(np.prod(kernel.arguments[0].shape_for(kernel.env(full))))
    host = np.random.default_rng(5).random(n, dtype=np.float32)
    outs = []
    for std in ([], [probe.CL20]):
        mf = cl.mem_flags
        src = cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
        dst = cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
        program = cl.Program(context, kernel.source).build(options=kernel.defines(full) + std)
        program.stencil(queue, glob, loc, src, dst).wait()
        out = np.empty_like(host)
        cl.enqueue_copy(queue, out, dst).wait()
        outs.append(out)
    assert not np.array_equal(outs[0], host)  # the kernel wrote its output
    assert np.array_equal(outs[0], outs[1])
