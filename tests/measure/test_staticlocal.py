"""The local memory a kernel's own ``__local`` arrays may take (``LOCAL_MEM_STATIC``):
the bisection that finds it (pure), a real kernel built and launched on PoCL, and how
the limit reaches the space's ``local_memory`` rule."""

from __future__ import annotations

from dataclasses import replace

import pyopencl as cl
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.description import parse_description
from gtune.kernel import TunableKernel
from gtune.measure._opencl import launches_with, static_local_limit, static_local_measured
from gtune.measure.staticlocal import STEP, largest_fitting
from gtune.space.model import build_model
from tests.space.space_helpers import h100_limits


@settings(max_examples=200, deadline=None)
@given(
    low=st.integers(1, 64).map(lambda k: k * STEP),
    span=st.integers(0, 256),
    threshold=st.integers(0, 400 * STEP),
)
def test_bisection_finds_the_largest_size_that_fits(low: int, span: int, threshold: int) -> None:
    high = low + span * STEP
    calls: list[int] = []

    def fits(n: int) -> bool:
        calls.append(n)
        return n <= max(threshold, low)

    got = largest_fitting(low, high, fits)
    want = max(low, min(high, max(threshold, low) // STEP * STEP))
    assert got == want
    assert all(n % STEP == 0 and low < n <= high for n in calls)
    assert len(calls) <= max(1, span).bit_length() + 1  # a bisection, not a scan


def _pocl() -> tuple[cl.Device, cl.Context, cl.CommandQueue]:
    device = next(d for p in cl.get_platforms() for d in p.get_devices())
    context = cl.Context([device])
    return device, context, cl.CommandQueue(context)


def test_a_kernel_with_its_own_array_launches_on_pocl() -> None:
    device, context, queue = _pocl()
    assert launches_with(context, queue, 16 * 1024)
    assert launches_with(context, queue, int(device.local_mem_size))


def test_only_nvidias_gpus_are_measured() -> None:
    device, _, _ = _pocl()
    assert not static_local_measured(device)
    assert static_local_limit(device) == 0  # the driver's number stands


def test_the_limit_reaches_constraints_and_never_shrinks_the_reported() -> None:
    h = h100_limits(local_mem_size=48 * 1024)
    assert h.limit_values()["LOCAL_MEM_STATIC"] == 48 * 1024  # not measured
    more = replace(h, local_mem_static=227 * 1024)
    assert more.limit_values()["LOCAL_MEM_STATIC"] == 227 * 1024
    assert more.limit_values()["LOCAL_MEM_SIZE"] == 48 * 1024
    assert replace(h, local_mem_static=1024).limit_values()["LOCAL_MEM_STATIC"] == 48 * 1024


def _kernel(local_arg: bool) -> TunableKernel:
    args = [{"name": "out", "role": "output", "dtype": "float32", "shape": ["N"]}]
    if local_arg:
        args.append({"name": "tile", "kind": "local", "dtype": "float32", "shape": ["WX"]})
    description = {
        "kernel": "k",
        "problem": {"N": 1024},
        "parameters": {"WX": {"values": [32, 64]}},
        "arguments": args,
        "launch": {"global": ["N"], "local": ["WX"], "local_memory_bytes": "WX * 1024"},
    }
    source = "__kernel void k(__global float *out" + (", __local float *tile" if local_arg else "")
    return parse_description(description, source=source + ") {}", label="k.yaml")


def test_the_local_memory_rule_bounds_own_arrays_by_the_measured_limit() -> None:
    """Own arrays: the measured limit; with __local arguments: the reported size."""
    for local_arg, limit in ((False, "LOCAL_MEM_STATIC"), (True, "LOCAL_MEM_SIZE")):
        model = build_model(_kernel(local_arg), h100_limits())
        rule = next(c for c in model.constraints if c.name == "local_memory")
        assert rule.expr.text.endswith(f"<= {limit}")
