"""Kernels whose parameters are not the template's are tuned with groups of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

import gtune
from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.heuristics import load_spec
from gtune.heuristics.strategies.generic import generic_spec, work_group_groups
from gtune.measure import select_device
from gtune.plain import plain_kernel
from gtune.tuning.strategy import resolve_strategy, spec_misfit
from tests.conftest import DATA, ROOT

SOURCE = """
__kernel __attribute__((reqd_work_group_size(block_size_x, block_size_y, 1)))
void smooth(__global const float* in, __global float* out) {
    const int x = get_global_id(0), y = get_global_id(1);
    for (int t = 0; t < TILE; ++t) {
        const int yy = y * TILE + t;
        if (x < 1 || yy < 1 || x >= NX - 1 || yy >= NY - 1) continue;
        out[yy * NX + x] = 0.25f * (in[yy * NX + x - 1] + in[yy * NX + x + 1]
                                    + in[(yy - 1) * NX + x] + in[(yy + 1) * NX + x]);
    }
}
"""

DESCRIPTION = """
kernel: smooth
problem: {NX: 32, NY: 16}
arguments:
  - {name: in, role: input, shape: [NY, NX]}
  - {name: out, role: output, shape: [NY, NX], init: "copy:in"}
parameters:
  block_size_x: {pow2: [1, NX], default: 8}
  block_size_y: {pow2: [1, NY], default: 2}
  TILE: {values: [1, 2, 4], default: 1}
constraints:
  - block_size_x * block_size_y <= MAX_WORK_GROUP_SIZE
launch:
  global: [NX, NY / TILE]
  local: [block_size_x, block_size_y]
reference: {config: {block_size_x: 1, block_size_y: 1, TILE: 1}}
"""


@pytest.fixture
def smooth(tmp_path: Path) -> Path:
    (tmp_path / "smooth.cl").write_text(SOURCE)
    (tmp_path / "smooth.yaml").write_text(DESCRIPTION)
    return tmp_path / "smooth.cl"


def test_groups_come_from_the_launch():
    params = ["block_size_x", "block_size_y", "TILE"]
    assert work_group_groups(params, ["block_size_x", "block_size_y"]) == [
        ["block_size_x"],
        ["block_size_y"],
    ]
    spec = generic_spec(params, ["block_size_x", "block_size_y"])
    labels = [s.label for s in spec.steps]
    assert labels == ["work-group x", "work-group y", "work-group shape", "TILE"]
    shape = spec.steps[2]
    assert [e.text for e in shape.keep_product] == ["(block_size_x)*(block_size_y)"]
    # no local size: every parameter is a group of its own
    assert [s.label for s in generic_spec(params, None).steps] == params
    with pytest.raises(InputError, match="no parameter"):
        generic_spec([], None)


def test_shipped_specs_fit_the_template_and_not_other_kernels(smooth: Path):
    template = load_kernel(ROOT / "stencils" / "heat3d.cl")
    assert spec_misfit(load_spec("hybrid"), template) == ""
    assert resolve_strategy(template, "hybrid").label == "hybrid"
    mine = load_kernel(smooth)
    assert "WX" in spec_misfit(load_spec("hybrid"), mine)
    chosen = resolve_strategy(mine, "hybrid")
    assert chosen.label == "generic" and "generic strategy" in chosen.note
    assert "edit" not in chosen.note
    assert chosen.options["local"] == ["block_size_x", "block_size_y"]
    # the template's parameters plus a --param macro: the macro must be tuned too
    plain = plain_kernel(
        DATA / "plain_blur.cl",
        sizes=[32, 16],
        params={"ROWS": [1, 2]},
        global_size=["NX", "NY/ROWS"],
        scalars={"scale": "0.1"},
    )
    assert "ROWS" in spec_misfit(load_spec("hybrid"), plain)
    assert resolve_strategy(plain, "dims").label == "generic"


@pytest.mark.opencl
def test_block_size_kernel_tunes_every_parameter(smooth: Path):
    report = gtune.tune(smooth, device=select_device(None), budget=40, store="sqlite://")
    assert report.strategy == "generic"
    (run,) = report.runs
    assert run.outcome is not None
    steps = {s.step for s in run.outcome.steps}
    assert {"work-group x", "work-group y", "TILE"} <= steps
    assert report.best_config is not None
    assert set(report.best_config) == {"block_size_x", "block_size_y", "TILE"}
    assert report.confirmed and report.default_result is not None
    assert report.significant is not None
