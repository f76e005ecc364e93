"""Worker pools on the default device (PoCL in CI): kernels tuned one after another in
``reuse_workers()`` share one measure worker and one set of compile workers, and each
kernel still gets its own data and reference."""

from __future__ import annotations

import pytest

from gtune.description import load_kernel
from gtune.measure import OpenCLEvaluator, Status
from gtune.measure.pool import reuse_workers

pytestmark = pytest.mark.opencl

GOOD = {"WX": 8, "WY": 4, "WZ": 1}
OTHER = {"WX": 4, "WY": 4, "WZ": 1}


def _alive(process: object) -> bool:
    return process is not None and process.poll() is None  # type: ignore[attr-defined]


def test_evaluators_in_a_pool_share_workers_and_keep_their_own_problem(data_dir) -> None:
    small = load_kernel(data_dir / "naive7.cl")
    large = small.with_sizes({k: v * 2 for k, v in small.sizes.items()})
    with reuse_workers() as pools:
        first = OpenCLEvaluator(small, runs=1, compile_workers=1)
        results = list(first.evaluate_batch([GOOD, OTHER]))
        measure, compilers = first._measure.process, [w.process for w in first._compilers]
        first.close()
        assert _alive(measure) and all(_alive(c) for c in compilers)  # kept for the next
        # No timing here (a loaded CI machine makes any time comparison flaky): the
        # same process objects and the pool's counts say that nothing was started again.
        second = OpenCLEvaluator(large, runs=1, compile_workers=1)
        again = list(second.evaluate_batch([GOOD, OTHER]))
        assert second._measure.process is measure  # the same process, handed a new kernel
        assert [w.process for w in second._compilers] == compilers
        assert second.compilers_start_s == 0  # its compile workers were running already
        second.close()
        (pool,) = pools.values()
        assert pool.started == 1 and pool.reused == 1
    assert not _alive(measure) and not any(_alive(c) for c in compilers)  # closed with it
    # each verified against its own kernel's reference: the larger problem's data arrived
    assert all(r.status is Status.OK for r in results + again), [r.message for r in again]
    assert all(r.extra.get("verification") for r in again)


def test_without_a_pool_an_evaluator_stops_its_workers(data_dir) -> None:
    ev = OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), runs=1, compile_workers=1)
    list(ev.evaluate_batch([GOOD, OTHER]))
    measure = ev._measure.process
    ev.close()
    assert not _alive(measure)


def test_a_nested_block_lends_the_outer_pools_and_leaves_them_open(data_dir) -> None:
    """A command run inside a program's own ``reuse_workers`` (``gtune run`` called from
    a long-lived process) measures with that program's workers and does not close them."""
    kernel = load_kernel(data_dir / "naive7.cl")
    with reuse_workers() as outer:
        with reuse_workers() as inner:
            assert inner is outer
            ev = OpenCLEvaluator(kernel, runs=1, compile_workers=1)
            assert [r.status for r in ev.evaluate_batch([GOOD])] == [Status.OK]
            measure = ev._measure.process
            ev.close()
        assert _alive(measure)  # the inner block's end left it to the outer one
        (pool,) = outer.values()
        assert pool.started == 1
    assert not _alive(measure)
