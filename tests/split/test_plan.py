"""Property tests of the split arithmetic (seed 002 eq. 4-9, Algorithm 1) and of slabs.

The last property runs a 1D stencil with numpy, the way the template treats its
boundary, on each device's sub-problem and gathers the owned rows: the result must
equal the whole problem computed at once, for any sizes, speeds and work-group sizes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gtune.exceptions import InputError
from gtune.split.geometry import slab_for
from gtune.split.plan import (
    DeviceCost,
    Share,
    decide,
    factors_with_first,
    optimal_time,
    partition,
    split_factors,
    sweep_factors,
    theoretical_time,
)

PRIMES = [2, 3, 5, 7, 11, 13, 17, 31, 37, 61, 97, 127, 251, 509, 521]
sizes = st.one_of(st.sampled_from(PRIMES), st.integers(1, 600))
times = st.floats(1e-6, 1e3, allow_nan=False, allow_infinity=False)
blocks = st.sampled_from([1, 2, 3, 4, 6, 8, 16, 32, 64, 5, 7])


@st.composite
def problems(draw: st.DrawFn) -> tuple[int, list[int], list[float]]:
    n = draw(st.integers(2, 4))
    ts = draw(st.lists(times, min_size=n, max_size=n))
    bs = draw(st.lists(blocks, min_size=n, max_size=n))
    return draw(sizes), bs, ts


@given(st.lists(times, min_size=1, max_size=4))
def test_factors_sum_to_one_and_follow_speed(ts: list[float]) -> None:
    f = split_factors(ts)
    assert math.isclose(sum(f), 1.0, rel_tol=1e-12)
    for (a, ta), (b, tb) in zip(
        zip(f, ts, strict=True), zip(f[1:], ts[1:], strict=True), strict=False
    ):
        assert math.isclose(a * ta, b * tb, rel_tol=1e-9)  # share x time is equal


@given(problems())
def test_partition_owns_every_point_once(p: tuple[int, list[int], list[float]]) -> None:
    size, bs, ts = p
    part = partition(size, bs, times=ts)
    owner = np.zeros(size, int)
    for s in part.shares:
        owner[s.own_start : s.own_stop] += 1
        if s.owned:
            assert s.start <= s.own_start and s.own_stop <= s.stop  # owned rows computed
        assert s.computed == (s.groups + s.residue_groups) * s.block  # whole work-groups
    assert (owner == 1).all()
    assert math.isclose(sum(s.adjusted for s in part.shares), 1.0, rel_tol=1e-12)


@given(problems())
def test_partition_follows_eq_7_to_9(p: tuple[int, list[int], list[float]]) -> None:
    size, bs, ts = p
    part = partition(size, bs, times=ts)
    factors = split_factors(ts)
    for s, f in zip(part.shares, factors, strict=True):
        assert 0 <= size * f / s.block - s.groups < 1 + 1e-9  # eq. 7: the floor
    assert part.residue == size - sum(s.groups * s.block for s in part.shares)
    extra = [s for s in part.shares if s.residue_groups]
    if part.residue == 0:
        assert not extra and part.residue_device is None
        return
    assert len(extra) == 1 and extra[0].device == part.residue_device
    r = extra[0]
    assert r.residue_groups == -(-part.residue // r.block)  # eq. 9a

    def need(s: Share) -> int:
        return -(-part.residue // s.block) * s.block

    fits = [s for s in part.shares if s.groups * s.block + need(s) <= size]
    if fits:  # eq. 9: the least extra work among devices whose range stays inside
        assert r in fits
        assert need(r) == min(need(s) for s in fits)


@given(problems())
def test_overlap_is_bounded_by_one_work_group(p: tuple[int, list[int], list[float]]) -> None:
    size, bs, ts = p
    part = partition(size, bs, times=ts)
    if all(size % b == 0 for b in bs):
        assert part.overhang == 0
        if part.residue_device is not None:
            assert part.overlap < bs[part.residue_device]
    if all(b == bs[0] for b in bs) and size % bs[0] == 0:
        assert part.overlap == 0  # sizes that are multiples of each other fit exactly


@given(st.lists(times, min_size=2, max_size=4), st.data())
def test_algorithm_1_is_best_at_eq_4(ts: list[float], data: st.DataObject) -> None:
    raw = data.draw(st.lists(st.floats(0.0, 1.0), min_size=len(ts), max_size=len(ts)))
    if sum(raw) <= 0:
        return
    other = [x / sum(raw) for x in raw]
    assert theoretical_time(other, ts) >= optimal_time(ts) * (1 - 1e-9)
    assert optimal_time(ts) <= min(ts)


def test_paper_example_and_errors() -> None:
    # 512 work-items, factors 0.4 / 0.6 (the paper's example), work-groups 16 and 64
    part = partition(512, [16, 64], [0.4, 0.6])
    assert [s.groups for s in part.shares] == [12, 4]
    assert part.residue == 512 - 12 * 16 - 4 * 64 == 64
    # 4 groups of 16 or 1 of 64: the same extra work; the faster device takes it
    assert part.residue_device == 1
    assert part.shares[1].residue_groups == 1
    with pytest.raises(InputError):
        partition(0, [1], [1.0])
    with pytest.raises(InputError):
        partition(10, [0, 1], [0.5, 0.5])
    with pytest.raises(InputError):
        split_factors([1.0, float("nan")])
    with pytest.raises(InputError):
        partition(10, [1, 1], [0.0, 0.0])


def test_decision_counts_overheads() -> None:
    fast = DeviceCost(kernel_s=1.0, upload_s=4.0, download_s=4.0, end_to_end_s=9.5)
    slow = DeviceCost(kernel_s=10.0, upload_s=0.1, download_s=0.1, end_to_end_s=10.5)
    # transfers dominate the fast device: moving a fifth of the work to the slow one wins
    good = decide([fast, slow], [(0.8, 0.8, 0.8), (0.2, 0.2, 0.2)])
    assert good.split and good.predicted_s < good.alone_s and good.fastest == 0
    # kernel-bound: the split cannot beat the fast device alone
    lean = DeviceCost(kernel_s=1.0, upload_s=0.0, download_s=0.0, end_to_end_s=1.2)
    bad = decide([lean, slow], [(0.5, 0.5, 0.5), (0.5, 0.5, 0.5)])
    assert not bad.split and "cannot beat" in bad.reason
    alone = decide([lean, slow], [(1.0, 1.0, 1.0), (0.0, 0.0, 0.0)])
    assert not alone.split


@given(st.floats(0.0, 1.0), st.integers(2, 12))
def test_sweep_includes_the_computed_point(centre: float, points: int) -> None:
    xs = sweep_factors(centre, points)
    assert centre in xs and all(0.0 <= x <= 1.0 for x in xs) and xs == sorted(xs)
    f = factors_with_first(xs[0], [centre, 1 - centre, 0.5])
    assert math.isclose(sum(f), 1.0) and f[0] == xs[0]


@settings(max_examples=150)
@given(problems(), st.integers(0, 5))
def test_slabs_gather_the_whole_result(p: tuple[int, list[int], list[float]], r: int) -> None:
    size, bs, ts = p
    # a configuration valid on the whole problem tiles it: round the size up to that
    size = max(size, 2 * r + 1)
    lcm = math.lcm(*bs)
    size = -(-size // lcm) * lcm
    if size > 1200:
        return
    rng = np.random.default_rng(size)
    a = rng.random(size)
    whole = _box(a, r)
    gathered = np.full(size, np.nan)
    part = partition(size, bs, times=ts)
    for s in part.active:
        slab = slab_for(s.device, s.own_start, s.own_stop, size, r, s.block)
        assert slab.length % s.block == 0 and slab.lo >= 0 and slab.hi <= size
        assert slab.lo <= max(0, s.own_start - r) and slab.hi >= min(size, s.own_stop + r)
        sub = _box(a[slab.lo : slab.hi], r)
        gathered[s.own_start : s.own_stop] = sub[s.own_start - slab.lo : s.own_stop - slab.lo]
    np.testing.assert_array_equal(gathered, whole)


def _box(a: np.ndarray, r: int) -> np.ndarray:
    out = a.copy()
    for i in range(r, len(a) - r):
        out[i] = a[i - r : i + r + 1].sum()
    return out
