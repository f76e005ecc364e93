"""Which OpenCL device a worker process opens for the device it was given: two
identical GPUs share an identity and differ only in their index (gtune.device)."""

from __future__ import annotations

from dataclasses import replace

from gtune.device import same_device
from tests.measure.test_devlock import _limits


def test_identical_gpus_are_told_apart_by_their_index() -> None:
    four = [_limits(di=i) for i in range(4)]
    assert len({d.identity for d in four}) == 1  # one model, one driver: one identity
    for i, wanted in enumerate(four):
        assert same_device(four, wanted) == i  # each worker opens its own GPU
    # another model at the same index is not it
    other = _limits(name="NVIDIA H200", di=2)
    assert same_device(four, other) is None
    assert same_device([*four, other], other) == 4


def test_a_process_that_lists_the_devices_otherwise_opens_one_of_the_identity() -> None:
    # a worker shown only its GPU (CUDA_VISIBLE_DEVICES honoured): it is device 0 there
    wanted = _limits(di=3)
    alone = [_limits(di=0)]
    assert same_device(alone, wanted) == 0
    # the CPU listed first on another platform order: the GPU is still found
    cpu = replace(_limits(name="cpu"), type="CPU", platform="Portable Computing Language")
    assert same_device([cpu, _limits(pi=1, di=0)], _limits(pi=0, di=0)) == 1
    assert same_device([], wanted) is None


def test_identical_gpus_keep_their_worker_pools_apart() -> None:
    from gtune.measure.pool import pool_key

    a, b = _limits(di=0), _limits(di=1)
    assert pool_key(a) != pool_key(b) and pool_key(a) == pool_key(_limits(di=0))
