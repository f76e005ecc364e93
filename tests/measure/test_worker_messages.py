"""What the measuring worker's failures say: an exception of gtune's own code in the
worker (an array of the wrong shape) is one line naming its cause, its traceback kept
for ``--debug`` (the error's cause, which the command line prints only then), and the
worker lives on; a kernel that kills its worker is still a crash. And what ``gtune run``
says of a lifted definition's original: arrays that the definition shapes otherwise
(a pad that changes with the size) are refused before the original runs, naming the
definition; the original's launch is shown as it ran."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from rich.console import Console

from gtune.exceptions import GtuneError
from gtune.plain import plain_kernel
from tests.inprocess import Cli

TWICE = """
__kernel void twice(__global const float *in, __global float *out, int nx, int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x < nx && y < ny)
        out[y * nx + x] = 2.0f * in[y * nx + x];
}
"""
WILD = """
__kernel void wild(__global const float *in, __global float *out, int nx, int ny)
{
    const int x = get_global_id(0), y = get_global_id(1);
    __global float *p = (__global float *)(ulong)(16 + 4 * x);  /* no array: address 16 */
    *p = in[y * nx + x];
}
"""


@pytest.fixture(scope="module")
def device() -> Any:
    from gtune.measure import select_device

    return select_device(None)


def _kernel(folder: Path, source: str, name: str, **kw: Any) -> Any:
    path = folder / f"{name}.cl"
    path.write_text(source)
    kw.setdefault("default", {"WX": 4, "WY": 4})
    return plain_kernel(path, sizes=[16, 8], scalars={"nx": "NX", "ny": "NY"}, **kw)


@pytest.mark.opencl
def test_a_host_side_error_in_the_worker_is_one_line_not_a_crash(
    tmp_path: Path, device: Any
) -> None:
    from gtune.measure.opencl_evaluator import OpenCLEvaluator, WorkerTraceback
    from gtune.stencils.lift import shipped_config

    kernel = _kernel(tmp_path, TWICE, "twice")
    evaluator = OpenCLEvaluator(kernel, device, verify=False, compile_workers=0)
    config = shipped_config(kernel)
    try:
        with pytest.raises(GtuneError) as info:
            evaluator.run_once(config, {"in": np.zeros((8, 17), np.float32)})
        # the same worker runs the next call: it was not restarted
        out = evaluator.run_once(config, {"in": np.ones((8, 16), np.float32)})
        restarts = evaluator.restarts
    finally:
        evaluator.close()
    text = info.value.render()
    assert "\n" not in text and "crash" not in text.replace("not a crash", "")
    assert "in: shape (8, 17), expected (8, 16)" in text
    assert "host side of the launch failed in gtune's worker" in text
    # --debug prints the error with its causes: the worker's traceback is one of them
    cause = info.value.__cause__
    assert isinstance(cause, WorkerTraceback)
    printed = "".join(traceback.format_exception(info.value))
    assert "Traceback (most recent call last)" in printed and "_run_args" in printed
    assert restarts == 0 and np.array_equal(out["out"], np.full((8, 16), 2.0, np.float32))


@pytest.mark.opencl
def test_a_kernel_that_kills_its_worker_is_still_a_crash(tmp_path: Path, device: Any) -> None:
    from gtune.measure.opencl_evaluator import OpenCLEvaluator
    from gtune.stencils.lift import shipped_config

    kernel = _kernel(tmp_path, WILD, "wild")
    evaluator = OpenCLEvaluator(kernel, device, verify=False, compile_workers=0)
    try:
        with pytest.raises(GtuneError, match=r"the kernel crashed its worker \(worker killed"):
            evaluator.run_once(shipped_config(kernel), {"in": np.ones((8, 16), np.float32)})
    finally:
        evaluator.close()


PITCHED = Path(__file__).parents[2] / "stencils" / "plain" / "laplace_halo_pitch.cl"
"""A kernel whose input rows are padded: its pitch a scalar apart from the width."""


def _pitched_definition(folder: Path) -> Path:
    """A definition as lift wrote it at 14x12 for a kernel whose input rows are padded
    to a multiple of 16 (``pad: [1, 1]`` there, not at 32x24)."""
    (folder / "pitched.cl").write_text(PITCHED.read_text())
    inner = [[0, -1], [-1, 0], [1, 0], [0, 1]]
    flags = ["--scalar", "width=NX", "--scalar", "height=NY", "--scalar"]
    flags += ["in_pitch=(NX+2+15)/16*16", "--scalar", "inv_h2=4.0", "--default", "WX=2,WY=4"]
    flags += ["--array", "in=(NX+2+15)/16*16,NY+2", "--role", "in=input"]
    data = {
        "name": "pitched",
        "dims": 2,
        "dtype": "float32",
        "boundary": "clamp",
        "fields": ["in"],
        "output": "out",
        "pad": {"in": [1, 1]},
        "coefficients": ["inv_h2"],
        "terms": [
            {"field": "in", "coefficient": "-4.0*inv_h2"},
            *({"field": "in", "offset": o, "coefficient": "inv_h2"} for o in inner),
        ],
        "values": {"inv_h2": 4},
        "kernel": {
            "name": "laplace_halo",
            "arguments": [
                "in",
                "out",
                {"name": "width", "type": "int", "size": "x"},
                {"name": "height", "type": "int", "size": "y"},
                {"name": "in_pitch", "type": "int", "ignored": True, "value": 16},
                "inv_h2",
            ],
        },
        "original": {
            "source": "pitched.cl",
            "kernel": "laplace_halo",
            "flags": flags,
            "size": [14, 12],
            "global": ["NX", "NY"],
            "local": [2, 4],
            "fixed": {"in_pitch": 16},
        },
    }
    path = folder / "pitched.stencil.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.opencl
def test_an_original_whose_arrays_the_definition_shapes_otherwise_is_refused_early(
    tmp_path: Path, gtune_here: Cli
) -> None:
    definition = _pitched_definition(tmp_path)
    ran = gtune_here("run", str(definition), "--size", "32x24", db=tmp_path / "r.db")
    assert ran.returncode == 2
    errors = [ln for ln in ran.stderr.splitlines() if ln.startswith("gtune: error:")]
    assert len(errors) == 1 and "Traceback" not in ran.stderr
    assert f"{definition}: original: at 32x24 the original kernel laplace_halo" in errors[0]
    assert "takes its array in as 48x26 (--array in=(NX+2+15)/16*16,NY+2)" in errors[0]
    assert "the definition's kernel as 34x26, padded by [1, 1]" in errors[0]
    # at the size it was lifted at, the pads agree and the check lets it run
    again = gtune_here(
        "run", str(definition), "--size", "14x12", "--budget", "1", db=tmp_path / "s.db"
    )
    assert again.returncode == 0, again.stderr


def test_the_original_launch_is_shown_as_it_ran(tmp_path: Path) -> None:
    """An original with no work-group parameter (``--local 16,16``): its launch's sizes,
    not empty parentheses."""
    from gtune.commands.run import show_original
    from gtune.measure.lifting import OriginalComparison, launch_text

    kernel = _kernel(tmp_path, TWICE, "fixed_local", local_size=["16", "8"], default=None)
    assert launch_text(kernel, {}) == "global 16x8, local 16x8"
    for config, launch, shown in (
        ({}, launch_text(kernel, {}), "at its shipped launch (global 16x8, local 16x8): "),
        ({"WX": 4, "WY": 4}, "global 16x8, local 4x4", "at its shipped launch (WX=4, WY=4): "),
        ({}, "", "at its shipped launch: "),
    ):
        console = Console(record=True, width=300)
        comparison = OriginalComparison("twice", config, {}, 2e-5, 1e-5, 3, launch)
        show_original(comparison, console)
        text = console.export_text()
        assert shown in text and "()" not in text
        assert comparison.to_dict()["original_launch"] == launch
