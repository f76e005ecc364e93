"""The host's physical cores as the campaign budgets them (gtune.campaign.host): a
made-up CPU topology in the sysfs layout, and this machine's own."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gtune.campaign.host import host_cores


def _topology(root: Path, cpus: Mapping[int, tuple[int, int, int | None]]) -> Path:
    """cpu -> (package, core, die or None) as /sys/devices/system/cpu lays it out."""
    for cpu, (package, core, die) in cpus.items():
        topo = root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text(f"{package}\n")
        (topo / "core_id").write_text(f"{core}\n")
        if die is not None:
            (topo / "die_id").write_text(f"{die}\n")
    return root


def test_hyperthreads_of_one_core_count_once(tmp_path: Path) -> None:
    # two sockets of four cores, two threads each (the Linux numbering: the second
    # thread of each core after all the first ones)
    cpus = {c: (c // 4 % 2, c % 4, 0) for c in range(16)}
    sysfs = _topology(tmp_path, cpus)
    cores = host_cores(range(16), sysfs)
    assert (cores.logical, cores.physical, cores.threads_per_core) == (16, 8, 2)
    assert cores.source == "sysfs"
    # a process allowed on the first thread of each core only: eight cores, one each
    half = host_cores(range(8), sysfs)
    assert (half.logical, half.physical, half.threads_per_core) == (8, 8, 1)
    # core ids repeat on every die of a package: the die tells them apart
    dies = _topology(tmp_path / "dies", {c: (0, c % 2, c // 2) for c in range(4)})
    assert host_cores(range(4), dies).physical == 4
    assert host_cores(range(4), dies).to_dict()["source"] == "sysfs"


def test_a_missing_topology_counts_every_cpu_as_a_core(tmp_path: Path) -> None:
    sysfs = _topology(tmp_path, {0: (0, 0, None), 1: (0, 0, None)})
    assert host_cores([0, 1], sysfs).physical == 1
    cores = host_cores([0, 1, 2], sysfs)  # cpu2 has no topology here
    assert (cores.logical, cores.physical, cores.source) == (3, 3, "logical")
    assert host_cores([0, 1], tmp_path / "none").source == "logical"


def test_this_machine() -> None:
    cores = host_cores()
    assert cores.logical == len(os.sched_getaffinity(0))
    assert 1 <= cores.physical <= cores.logical
    assert cores.physical * cores.threads_per_core >= cores.logical
