"""Splitting one kernel's work across devices in proportion to their tuned speeds.

Seed 002 §2.2: each device keeps its own best work-group size; the split factors from
the devices' speeds (eq. 4) are adjusted to whole work-groups (eq. 5-9), the theoretical
time is Algorithm 1, and the split runs for real, every device at once, verified
against a single-device run. :func:`split_kernel` is the entry point; ``gtune split``
its command line. The arithmetic (:mod:`gtune.split.plan`) and the geometry
(:mod:`gtune.split.geometry`) are pure and usable alone.
"""

from gtune.split.execute import DeviceRef
from gtune.split.geometry import Slab, SplitAxis, block_of, halo_of, slab_for, split_axis
from gtune.split.plan import (
    Decision,
    DeviceCost,
    Partition,
    Share,
    decide,
    optimal_time,
    partition,
    split_factors,
    theoretical_time,
)
from gtune.split.report import DeviceEntry, SplitReport, SweepPoint
from gtune.split.splitter import BALANCES, parse_devices, split_kernel
from gtune.split.tuned import Tuned, best_config, best_from_store

__all__ = [
    "BALANCES",
    "Decision",
    "DeviceCost",
    "DeviceEntry",
    "DeviceRef",
    "Partition",
    "Share",
    "Slab",
    "SplitAxis",
    "SplitReport",
    "SweepPoint",
    "Tuned",
    "best_config",
    "best_from_store",
    "block_of",
    "decide",
    "halo_of",
    "optimal_time",
    "parse_devices",
    "partition",
    "slab_for",
    "split_axis",
    "split_factors",
    "split_kernel",
    "theoretical_time",
]
