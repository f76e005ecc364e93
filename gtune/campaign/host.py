"""The host's cores as a campaign budgets them: physical cores, not hyperthreads.

A campaign's compile helpers build on the host's CPU cores; two builds on the two
hardware threads of one core run little faster than one. The budget
(:func:`gtune.campaign.schedule.build_slots`) therefore counts *physical* cores: the
CPUs this process may run on (``os.sched_getaffinity``), grouped by the core they
belong to (``/sys/devices/system/cpu/cpuN/topology``: package, die and core ids).
Where the topology cannot be read, every CPU counts as a core of its own, and the
summary says so (``source``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gtune.processes import allowed_cpus

SYSFS_CPU = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class HostCores:
    """What the campaign may run on: logical CPUs and the physical cores they form."""

    logical: int  # CPUs this process may run on
    physical: int  # cores those CPUs belong to
    threads_per_core: int  # the most CPUs one of those cores has here
    source: str  # "sysfs": read from the topology; "logical": each CPU counted a core

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _read_id(path: Path) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text or None


def host_cores(cpus: Collection[int] | None = None, sysfs: Path = SYSFS_CPU) -> HostCores:
    """The cores of ``cpus`` (default: those this process may run on), by the CPU
    topology under ``sysfs``; each CPU a core where any CPU's topology is missing."""
    chosen = sorted(cpus) if cpus is not None else allowed_cpus()
    logical = max(1, len(chosen))
    cores: dict[tuple[str, str, str], int] = {}
    for cpu in chosen:
        topo = sysfs / f"cpu{cpu}" / "topology"
        core = _read_id(topo / "core_id")
        package = _read_id(topo / "physical_package_id")
        if core is None or package is None:
            return HostCores(logical, logical, 1, "logical")
        die = _read_id(topo / "die_id") or "0"
        key = (package, die, core)
        cores[key] = cores.get(key, 0) + 1
    if not cores:
        return HostCores(logical, logical, 1, "logical")
    return HostCores(logical, len(cores), max(cores.values()), "sysfs")


__all__ = ["HostCores", "host_cores"]
