"""A synthetic cost model of the template's temporal kernels, for replaying searches.

No recording holds the whole temporal space of a large stencil on a GPU (the H100 runs of
benchmarks/temporal.py measured a few dozen configurations). The replay tests of the
``temporal`` spec answer every configuration of the real space (built from the real
description with the H100's limits) with the time this model gives: a launch moves the
block's input with its halo and the output through global memory at ``bandwidth``,
computes every level's region (the block widened by TB - s radii) from local memory at
``local_bandwidth``, idles the lanes of a work-group's last partial pass over a region,
and hides latency only with enough work-items resident per compute unit (local memory
and work-group size limit how many groups are). Temporal tiles with TR rows per
work-item read a column's terms along y once per TR points. Its numbers are not the H100's: what
matters to a search is the shape, where a larger block pays a smaller halo but needs
more local memory and more work per work-item.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from gtune.kernel import TunableKernel
from gtune.measure import Result, Status
from gtune.space.vector import evaluate_columns

BANDWIDTH = 3.0e12  # B/s, global memory (copy)
LOCAL_BANDWIDTH = 15e12  # B/s, local memory, all compute units
UNITS = 132
LOCAL_PER_UNIT = 228 * 1024
ITEMS_PER_UNIT = 2048
BARRIER_S = 4e-8  # one barrier of one work-group


def launch_seconds(
    config: Mapping[str, int],
    sizes: Mapping[str, int],
    radius: tuple[int, int, int],
    terms: int,
    local_bytes: int,
) -> float:
    """The model's time of one launch (TB steps) of a temporal configuration."""
    c = dict(config)
    tb = c["TB"]
    rx, ry, rz = radius
    dims3 = "NZ" in sizes
    nx, ny, nz = sizes["NX"], sizes["NY"], sizes.get("NZ", 1)
    sbx = c["WX"] * c.get("CX", 1)
    group = c["WX"] * c.get("WY", 1) * c.get("WZ", 1)
    stream = c.get("STREAM", 0) == 1
    if stream and not dims3:  # a strip of WY*ZC rows
        sby, sbz = c["WY"] * c["ZC"], 1
    elif stream:
        sby, sbz = c["WY"] * c.get("CY", 1), c["ZC"]
    else:
        sby, sbz = c.get("WY", 1) * c.get("CY", 1), c.get("WZ", 1) * c.get("CZ", 1)
    groups = (nx // sbx) * (ny // sby) * (nz // sbz)

    def region(m: int) -> int:
        return (sbx + 2 * m * rx) * (sby + 2 * m * ry) * ((sbz + 2 * m * rz) if dims3 else 1)

    reads = groups * region(tb)
    writes = nx * ny * nz
    points = [region(tb - s) for s in range(1, tb + 1)]
    # a work-group's passes over each level's region: the last one partly idle. The
    # z-neighbours in registers dealt round robin (ZREG = 1) pass over the whole plane
    # at every level; dealt block first (ZREG = 2), a level's warps past its region
    # skip it (32 lanes).
    zreg = c.get("ZREG", 0)
    walked = sbz + 2 * tb * rz  # planes a streaming work-group walks
    if zreg == 1:
        passes = tb * math.ceil(region(tb) // walked / group) * group * walked * groups
    elif zreg == 2:
        plane = [p // (sbz + 2 * (tb - s) * rz) for s, p in enumerate(points, 1)]
        passes = sum(math.ceil(p / 32) * 32 for p in plane) * walked * groups
    else:  # temporal tiles: a work-item computes TR rows of a column (segments)
        tr = c.get("TR", 1)
        passes = sum(math.ceil(math.ceil(p / tr) / group) * group * tr for p in points)
        passes *= groups
    # per point its terms' reads and one store; with the z-neighbours in registers
    # (ZREG) the 2*RZ z-terms and the centre come from registers; with TR rows a
    # column's 2*RY+1 terms along y are TR + 2*RY loads per TR points
    accesses: float = terms - 2 * rz if zreg else terms + 1
    if not stream and c.get("TR", 1) > 1:
        accesses -= 2 * ry + 1 - (c["TR"] + 2 * ry) / c["TR"]
    lds = passes * accesses * 4 / LOCAL_BANDWIDTH
    barriers = groups * tb * (sbz + 2 * tb * rz if stream and dims3 else 1)
    if stream and not dims3:
        barriers = groups * tb * ((sby + 2 * tb * ry) // c["WY"])
    resident = min(LOCAL_PER_UNIT // max(local_bytes, 1), ITEMS_PER_UNIT // group, 32)
    latency = min(1.0, resident * group / 1024)  # below 1024 items: bandwidth unused
    memory = 4 * (reads + writes) / BANDWIDTH / max(latency, 0.05)
    sync = barriers * BARRIER_S / (UNITS * max(resident, 1))
    return max(memory, lds) + sync


def model_results(
    kernel: TunableKernel,
    configs: list[dict[str, int]],
    radius: tuple[int, int, int],
    terms: int,
) -> list[Result]:
    """Each configuration answered with the model's time per step (one timed run)."""
    out = []
    local = local_bytes(kernel, configs)
    for cfg, lb in zip(configs, local, strict=True):
        t = launch_seconds(cfg, kernel.sizes, radius, terms, lb) / cfg["TB"]
        out.append(Result(cfg, Status.OK, compile_s=0.1, times_s=(t,)))
    return out


def local_bytes(kernel: TunableKernel, configs: list[dict[str, int]]) -> list[int]:
    """Each configuration's local memory, the description's expression evaluated over
    the configurations as columns (gtune.space.vector, the scalar evaluator's semantics:
    row by row it took most of the replay tests' time on these spaces of thousands)."""
    lm = kernel.launch.local_memory_bytes
    if lm is None or not configs:
        return [0] * len(configs)
    envs = [kernel.env(cfg) for cfg in configs]
    names = set(envs[0])
    if any(set(env) != names for env in envs):  # not one set of names: row by row
        return [lm.evaluate_int(env) for env in envs]
    columns = {n: np.array([env[n] for env in envs]) for n in names}
    return [int(v) for v in evaluate_columns(lm, columns, len(envs))]
