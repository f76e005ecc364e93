"""The shipped ``hybrid`` spec replayed over the real vec space of laplacian4 and box27
(512³, the H100's limits), answered by a synthetic model of the vec technique's traffic.

No recording holds the vec technique as it is now (its row loads and its streaming
along z, ZC > 1, are newer than every H100 store). The space is the real one (the
description rendered from the definition, enumerated with the H100's OpenCL limits,
restricted to vec); every configuration is answered by :func:`vec_seconds`: the slower
of DRAM (each array once, at copy bandwidth) and L1 (the vector loads a work-item issues
per VX outputs: each distinct vector of every row its terms read, once per output plane,
or, streamed along z, once per input plane for all the planes it feeds and the
work-item's adjacent rows it serves), plus a quarter
of the faster (they share one memory pipeline: the H100's laplacian4, 13 scalar loads
per output, ran at 80 % of copy where heat3d's 7 ran at 90 %), with the penalties of a
GPU: too few work-items to hide latency, rows narrower than a 128-byte line, small
work-groups, queues that spill. Its numbers are not the H100's; what matters to a
search is the shape, where streaming along z (ZC > 1) divides the loads and a longer
chunk starves the device. The search is driven as ``gtune run`` drives it: the default
measured first, then the spec without a budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest

from gtune.budget import Budget
from gtune.heuristics import SearchProblem, get_strategy
from gtune.heuristics.search import Seeded, drive, nearest_config
from gtune.kernel import canonical_config
from gtune.measure import ReplayEvaluator, Result, Status
from gtune.space.build import build_space, technique_space
from gtune.stencils.definition import load_definition
from gtune.stencils.render import definition_kernel_of

from ..space.space_helpers import h100_limits

ROOT = Path(__file__).resolve().parents[2]
SIZES = {"NX": 512, "NY": 512, "NZ": 512}
DRAM = 3.0e12  # B/s, copy
L1 = 25e12  # B/s, all L1s together
RESIDENT = 132 * 1024  # work-items that hide the latency
OVERLAP_LOSS = 0.25


def _floor(d: int, vx: int) -> int:
    return d // vx  # Python's floor division: the template's VFLOOR


def row_vectors(offsets: list[tuple[int, int, int]], vx: int, rows: int = 0) -> float:
    """Vector loads per VX outputs: per row (dy, dz) the vectors its terms' x-offsets
    cover; streamed along z (``rows`` > 0: a work-item's adjacent rows), per row dy of
    the plane, shared by the ``rows`` rows."""
    seen = set()
    for cy in range(max(rows, 1)):
        for dx, dy, dz in offsets:
            row = (cy + dy,) if rows else (dy, dz)
            lo = _floor(dx, vx)
            seen.add((row, lo))
            if dx - lo * vx:
                seen.add((row, lo + 1))
    return len(seen) / max(rows, 1)


def vec_seconds(c: Mapping[str, int], offsets: list[tuple[int, int, int]], rz: int) -> float:
    n = SIZES["NX"] * SIZES["NY"] * SIZES["NZ"]
    vx, zc = c["VX"], c["ZC"]
    streamed = zc > 1
    loads = row_vectors(offsets, vx, c["CY"] if streamed else 0)
    if streamed:
        loads *= (zc + 2 * rz) / zc
    l1 = n * loads * 4 / L1  # each vector load brings VX values for VX outputs
    dram = n * 8 / DRAM
    items = n / (vx * c["CX"] * c["CY"] * c["CZ"] * zc)
    group = c["WX"] * c["WY"] * c["WZ"]
    penalty = max(1.0, RESIDENT / items)
    penalty *= max(1.0, 128 / (c["WX"] * vx * 4))  # a warp's rows narrower than a line
    penalty *= max(1.0, (64 / group) ** 0.5)
    registers = vx * c["CX"] * c["CY"] * ((2 * rz + 1) if streamed else c["CZ"])
    penalty *= 2.0 if registers > 64 else 1.0
    # the two overlap imperfectly (one memory pipeline): the lesser still costs a share
    return float((max(l1, dram) + OVERLAP_LOSS * min(l1, dram)) * penalty)


CASES = {
    "laplacian4": 2,
    "box27": 1,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_hybrid_spec_streams_vectors_along_z(name: str) -> None:
    """Run as ``gtune run`` runs it (no budget), the hybrid spec reaches 97 % of the
    model's best over the whole vec space (180,000 configurations), and that is a chunk
    along z (ZC > 1) which the spec's chunk steps reach by themselves."""
    d = load_definition(ROOT / "stencils" / f"{name}.stencil.yaml")
    kernel = definition_kernel_of(dataclasses.replace(d), SIZES)
    space = technique_space(build_space(kernel, h100_limits()), kernel, "vec")
    offsets = [(t.offset[0], t.offset[1], t.offset[2]) for t in d.terms if t.field == "u"]
    assert len(offsets) == len(d.terms)
    configs = list(space.enumerate())
    results = [
        Result(cfg, Status.OK, compile_s=0.1, times_s=(vec_seconds(cfg, offsets, CASES[name]),))
        for cfg in configs
    ]
    evaluator = ReplayEvaluator(results, source="vec model")
    strategy = get_strategy("grouped", {"spec": "hybrid"})
    default = kernel.default_config()
    assert default is not None
    problem = SearchProblem(sizes=SIZES, default=default)
    inner = strategy.searcher(space, problem, strategy.configure(None))
    start = nearest_config(space, default)
    assert start is not None
    outcome = drive(
        Seeded(inner, start),
        evaluator,
        strategy="hybrid",
        budget=Budget(evaluations=1000),
        space=space,
    )
    assert len(evaluator.calls) < 1000  # the spec's own end
    best = min(results, key=lambda r: r.objective)
    assert best.config["ZC"] > 1  # the model's best streams
    assert outcome.best_config is not None
    found = {canonical_config(r.config): r.objective for r in results}[
        canonical_config(outcome.best_config)
    ]
    assert best.objective / found >= 0.97, (outcome.best_config, found, best.config)
    assert outcome.best_config["ZC"] > 1
