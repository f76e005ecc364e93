"""benchmarks/placement_probe.py (issue 49, measured and lost: partition/placement/):
its tables send every block to exactly one work-group whatever the prediction, its
placement statistics read recorded launches right (pure), and on PoCL every table
computes the package kernel's bits while a table that repeats a block is caught."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
probe = load_script(ROOT / "benchmarks" / "placement_probe.py")

BOX27 = "WX=32,WY=2,WZ=2,BX=4,VX=4,BY=4,BZ=4,SEP=1,RIM=1,RIN=1"


@pytest.mark.parametrize("groups", [(4, 64, 64), (1, 16, 16), (2, 6, 3)])
def test_each_side_takes_half_of_every_slabs_rows_slab_after_slab(
    groups: tuple[int, int, int],
) -> None:
    n0, n1, n2 = groups
    side0, side1 = probe.ypart_order(groups)
    assert sorted(side0 + side1) == list(range(n0 * n1 * n2))
    for p, blocks in enumerate((side0, side1)):
        ys = {(b // n0) % n1 for b in blocks}
        assert ys == set(range(n1 // 2) if p == 0 else range(n1 // 2, n1))
        zs = [b // (n0 * n1) for b in blocks]
        assert zs == sorted(zs)  # slab after slab


@pytest.mark.parametrize("seed", range(5))
def test_a_table_is_a_permutation_whatever_the_prediction(seed: int) -> None:
    groups = (2, 8, 4)
    n = int(np.prod(groups))
    rng = np.random.default_rng(seed)
    for predicted in (
        rng.integers(0, 2, n).astype(np.int8),
        np.zeros(n, dtype=np.int8),  # every number on one side: the other's blocks too
        np.ones(n, dtype=np.int8),
    ):
        perm = probe.table(predicted, groups)
        assert sorted(perm.tolist()) == list(range(n))
    # a balanced prediction: each number predicted on side p gets a block of side p
    predicted = np.resize(np.array([0, 1], dtype=np.int8), n)
    perm = probe.table(predicted, groups)
    halves = probe.ypart_order(groups)
    for p, block in zip(predicted.tolist(), perm.tolist(), strict=True):
        assert block in halves[p]


def test_resident_work_groups_are_the_most_running_at_once() -> None:
    starts = np.array([0, 0, 5, 10, 12])
    ends = np.array([10, 6, 11, 20, 13])
    assert probe.resident(starts, ends) == 3  # at 5: the first three
    assert probe.resident(np.array([0, 10]), np.array([10, 20])) == 1  # one ends as one starts


def _records(sms: list[int], w: int) -> np.ndarray:
    """A launch whose work-groups run in waves of ``w`` (each 10 ns), on ``sms``."""
    n = len(sms)
    wave = np.arange(n) // w
    return np.stack([np.array(sms), wave * 10, wave * 10 + 9], axis=1).astype(np.int64)


def test_placement_statistics_read_the_records() -> None:
    side = {0: 0, 1: 1, 2: 0, 3: 1}
    first = _records([0, 1, 2, 3] * 3, 4)  # every wave on the same SMs in the same order
    shuffled = _records([1, 0, 3, 2] * 3, 4)  # each number on the other side
    stats, launch, wave = probe.placement_stats([first, first, shuffled], side)
    assert stats["resident"] == 4 and stats["groups"] == 12 and stats["sms_seen"] == 4
    assert stats["same_sm_one_wave_later"] == 1.0
    assert stats["wave_side_by_wave"] == [1.0, 1.0, 1.0]
    assert stats["later_launches"][0] == {"same_sm": 1.0, "same_side": 1.0, "wave_side": 1.0}
    assert stats["later_launches"][1] == {"same_sm": 0.0, "same_side": 0.0, "wave_side": 0.0}
    assert launch.tolist() == [0, 1, 0, 1] * 3 and wave.tolist() == launch.tolist()
    assert stats["side_counts"] == [6, 6] and stats["first_wave_side_counts"] == [2, 2]


def _pocl() -> tuple[Any, Any]:
    import pyopencl as cl

    device = next(d for p in cl.get_platforms() for d in p.get_devices())
    context = cl.Context([device])
    queue = cl.CommandQueue(context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return context, queue


def _run() -> dict[str, Any]:
    from gtune.commands._common import parse_config

    context, queue = _pocl()
    args = argparse.Namespace(size=128, rounds=1, reps=1, record=2, loop=[8, 3], delay=0)
    return dict(probe.run_kernel(context, queue, "box27", parse_config(BOX27), args, {}, False))


@pytest.mark.bench  # the probe run end to end
@pytest.mark.opencl
def test_every_table_computes_the_package_kernels_bits_and_a_repeat_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = _run()
    variants = ("std", "pid", "plaunch", "pwave", "prand", "loop8")  # 3 divides no 256
    assert out["same_as_std"] == dict.fromkeys(variants, True)
    assert {r["variant"] for r in out["rows"]} == {*variants, "copy4"}
    assert len(out["records"]) == 2 and out["records"][0].shape == (256, 3)
    assert out["placement"]["sms_seen"] == 1  # no %smid off NVIDIA: every group SM 0

    table = probe.table

    def repeating(predicted: np.ndarray, groups: Any) -> np.ndarray:
        perm = np.array(table(predicted, groups))
        perm[1] = perm[0]  # block perm[0] computed twice, the old perm[1] never
        return perm

    monkeypatch.setattr(probe, "table", repeating)
    out = _run()
    assert out["same_as_std"] == {
        "std": True,
        "pid": True,
        "plaunch": False,
        "pwave": False,
        "prand": False,
        "loop8": True,
    }
    assert {r["variant"] for r in out["rows"]} == {
        "std",
        "pid",
        "loop8",
        "copy4",
    }  # only checked ones
