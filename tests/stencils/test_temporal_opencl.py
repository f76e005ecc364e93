"""Temporal blocking on real OpenCL (PoCL in CI): a kernel advancing TB time steps per
launch gives what TB single steps give, for 2D and 3D stencils, both boundaries, both
element types and a stencil with a second (fixed) field, checked against the numpy
reference's steps loop."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from gtune.description import load_kernel, parse_description
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status, select_device
from gtune.stencils.definition import load_definition, parse_definition
from gtune.stencils.render import definition_description

from .test_definition_opencl import definitions

pytestmark = pytest.mark.opencl

ROOT = Path(__file__).resolve().parents[2]
DEFS = ROOT / "tests" / "data" / "definitions"
STEPS = 4

# (definition file, sizes, configurations beside the defaults that the TB values run in)
CASES: dict[str, tuple[Path, dict[str, int], list[dict[str, int]]]] = {
    "star2d": (
        DEFS / "star2d_c.stencil.yaml",
        {"NX": 48, "NY": 24},
        [
            {"WX": 8, "WY": 8},
            {"WX": 4, "WY": 4, "CX": 4, "CY": 2},
            {"WX": 8, "WY": 1, "CX": 2, "CY": 8},
            {"STREAM": 1, "WX": 8, "WY": 1, "CX": 2, "ZC": 8},
            {"STREAM": 1, "WX": 16, "WY": 1, "ZC": 2},
            {"STREAM": 1, "WX": 4, "WY": 4, "CX": 2, "ZC": 2},
            {"WX": 8, "WY": 8, "TR": 2},
            {"WX": 4, "WY": 4, "CX": 4, "CY": 2, "TR": 4},
            {"WX": 8, "WY": 1, "CX": 2, "CY": 8, "TR": 8},
        ],
    ),
    "jacobi2d_f64": (
        DEFS / "jacobi2d_clamp_f64.stencil.yaml",
        {"NX": 32, "NY": 16},
        [
            {"WX": 4, "WY": 2},
            {"WX": 4, "WY": 2, "CX": 2, "CY": 4},
            {"STREAM": 1, "WX": 8, "WY": 1, "CX": 2, "ZC": 4},
            {"STREAM": 1, "WX": 4, "WY": 8, "CX": 2, "ZC": 2},
            {"WX": 4, "WY": 2, "CX": 2, "CY": 4, "TR": 8},
            {"WX": 4, "WY": 2, "CX": 2, "CY": 2, "TR": 2},
        ],
    ),
    # wide enough that some work-groups' tiles (planes) with their halo lie inside the
    # array: those take the template's interior fast path, the others the checked one
    # (the configurations after the first six ran at 16 x 8 x 16 as "heat3d", all its
    # work-groups at an edge: here its edge work-groups run that code, beside the others)
    "heat3d_inner": (
        ROOT / "stencils" / "heat3d.stencil.yaml",
        {"NX": 32, "NY": 16, "NZ": 16},
        [
            {"STREAM": 1, "ZC": 4, "WX": 4, "WY": 2, "CX": 2, "CY": 2},
            {"WX": 4, "WY": 2, "WZ": 2, "CX": 2, "CY": 2, "CZ": 1},
            {"WX": 4, "WY": 2, "WZ": 2, "CX": 2, "CY": 2, "TR": 4},
            {"WX": 4, "WY": 4, "WZ": 2, "CX": 2, "CY": 2, "TR": 8},
            {"STREAM": 1, "ZREG": 1, "ZC": 4, "WX": 8, "WY": 4},
            {"STREAM": 1, "ZREG": 2, "ZC": 4, "WX": 8, "WY": 4},
            {"STREAM": 1, "ZC": 4},
            {"STREAM": 1, "ZC": 8, "WX": 8, "WY": 2},
            {"WX": 4, "WY": 2, "WZ": 2, "CX": 2, "CY": 2, "CZ": 2},
            {"STREAM": 1, "ZREG": 1, "ZC": 8, "WX": 16, "WY": 2},
            {"STREAM": 1, "ZREG": 1, "ZC": 4, "WX": 8, "WY": 4, "CX": 2},
            {"STREAM": 1, "ZREG": 2, "ZC": 8, "WX": 8, "WY": 4, "CY": 2},
            {"STREAM": 1, "ZREG": 2, "ZU": 1, "ZC": 4, "WX": 8, "WY": 4, "CX": 2},
        ],
    ),
    # (the configurations after the first three ran at 16 x 8 x 8 as "box3d", all its
    # work-groups at an edge, as heat3d's)
    "box3d_inner": (
        DEFS / "box3d_c.stencil.yaml",
        {"NX": 32, "NY": 16, "NZ": 16},
        [
            {"STREAM": 1, "ZC": 4, "WX": 4, "WY": 2, "CX": 2, "CY": 2},
            {"WX": 4, "WY": 2, "WZ": 2, "CX": 2, "CY": 2, "CZ": 1},
            {"WX": 4, "WY": 2, "WZ": 2, "CX": 2, "CY": 2, "TR": 2},
            {"WZ": 2},
            {"STREAM": 1, "ZC": 2, "WX": 4, "WY": 4},
            {"STREAM": 1, "ZC": 4, "WX": 4, "WY": 4, "CX": 4, "CY": 2},
            {"WX": 4, "WY": 2, "CX": 2, "CZ": 2},
        ],
    ),
    "laplacian4": (
        ROOT / "stencils" / "laplacian4.stencil.yaml",
        {"NX": 16, "NY": 16, "NZ": 16},
        [
            {"STREAM": 1, "ZC": 8, "WX": 8, "WY": 2},
            {"STREAM": 1, "ZC": 8, "WX": 8, "WY": 4, "CX": 2, "CY": 2},
            {"STREAM": 1, "ZREG": 1, "ZC": 8, "WX": 16, "WY": 16},
            {"STREAM": 1, "ZREG": 1, "ZC": 8, "WX": 16, "WY": 8},
            {"STREAM": 1, "ZREG": 2, "ZC": 8, "WX": 16, "WY": 8},
        ],
    ),
    "hotspot": (
        ROOT / "stencils" / "hotspot.stencil.yaml",
        {"NX": 32, "NY": 16},
        [{"WX": 8, "WY": 2, "CX": 2, "CY": 4}, {"STREAM": 1, "WX": 4, "WY": 2, "CX": 4, "ZC": 4}],
    ),
    "thermal3d": (
        DEFS / "thermal3d.stencil.yaml",
        {"NX": 16, "NY": 8, "NZ": 8},
        [
            {"STREAM": 1, "ZC": 4, "WX": 8, "WY": 2},
            {"STREAM": 1, "ZC": 4, "WX": 4, "WY": 2, "CX": 2, "CY": 2},
            {"STREAM": 1, "ZREG": 1, "ZC": 4, "WX": 8, "WY": 4},
            {"STREAM": 1, "ZREG": 1, "ZC": 8, "WX": 4, "WY": 8, "CX": 2},
            {"STREAM": 1, "ZREG": 2, "ZC": 8, "WX": 4, "WY": 8, "CX": 2},
        ],
    ),
}
"""3D cases run the temporal tiles (the defaults, STREAM=0) and streaming along z with
TB time levels (STREAM=1); laplacian4 has radius 2, hotspot and thermal3d a second
field that stays fixed. Configurations with CX, CY (CZ) merge blocks: a work-group's
block is larger than the work-group, each work-item computes several points per level
(star2d's 48 x 24 is no power of two). 2D configurations with STREAM stream along y:
WY rows per iteration through rings in local memory (jacobi2d's WY = 8 does not divide
the rows walked, WY·ZC + 2·TB·RY). Configurations with ZREG (heat3d, laplacian4,
thermal3d: z-star stencils) stream along z with the z-neighbours in registers and one
shared plane per stage (ZREG = 1: the plane's points round robin; ZREG = 2: the block's
first, then the halo frame by frame, each level on its own region; ZU = 1: its walk
unrolled by the queue length). Each configuration runs at TB = 2 with one boundary and
at TB = 4 with the other; so do the defaults (TB = 2 with the interior boundary, 4
with clamp), which also run at TB = 1 with the interior boundary where ONE_STEP_LOOP
names the case (see ``tb_configs``). heat3d_inner's ZREG configurations have interior
work-groups (plane and halo inside the array) at TB = 2 and 4 beside edge ones.
Configurations with TR (star2d, jacobi2d_f64, heat3d_inner, box3d_inner) compute TR
rows of a temporal tile's column per work-item (2, 4, 8; TR = the block's rows in
star2d's and heat3d_inner's last), each at both TB values over the boundaries."""


ONE_STEP_LOOP = ("star2d", "heat3d_inner", "hotspot", "thermal3d")
"""The cases whose defaults also run at TB = 1: the host's loop of one-step launches,
buffers swapped, in 2D and 3D, with one field and with a second one held (the loop
does not depend on the element type, the radius or the boundary: jacobi2d_f64,
box3d_inner and laplacian4 run no more of it)."""


def stepping(path: Path, tmp: Path, *, boundary: str, dtype: str | None = None) -> Path:
    """The definition at ``path`` with ``steps``, the boundary and element type given."""
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    data.update({"steps": STEPS, "boundary": boundary})
    if dtype is not None:
        data["dtype"] = dtype
    out = tmp / f"{path.name.split('.')[0]}_{boundary}.stencil.yaml"
    out.write_text(yaml.safe_dump(data))
    return out


def evaluate(kernel: TunableKernel, configs: list[dict[str, int]]) -> list[Any]:
    limits = select_device(None).limit_values()
    evaluator = OpenCLEvaluator(kernel, runs=1)
    try:
        results = []
        for cfg in configs:
            env = {**kernel.env(cfg), **limits}
            broken = [c.text for c in kernel.constraints if not c.evaluate(env)]
            assert not broken, (cfg, broken)
            results.append(evaluator.evaluate(cfg))
        return results
    finally:
        evaluator.close()


def tb_configs(
    kernel: TunableKernel,
    extra: list[dict[str, int]],
    phase: int = 0,
    defaults: tuple[int, ...] | None = None,
) -> list[dict[str, int]]:
    """The defaults at TB = 1 (STEPS launches of the one-step kernel, buffers swapped
    between them; in phase 0 only) and at TB = 2 and 4 (or at the TB values
    ``defaults`` names), then each configuration of ``extra`` at one of them: TB = 2
    and 4 by turns, starting at the ``phase``-th. A test that runs both phases
    (test_tb_steps_per_launch_equal_single_steps: one per boundary) runs every
    configuration at both TB values at half the builds. TB = 1 renders no temporal
    code: what it adds is the host's loop of launches with the buffers swapped (and a
    second field held), the same whatever the boundary, so it runs once per kernel
    (test_tb_steps_per_launch_equal_single_steps: once per ONE_STEP_LOOP kernel);
    the one-step kernel's boundaries and other shapes (streaming, merged blocks) are
    verified by test_definition_opencl, test_stream2d_opencl and
    test_template_opencl."""
    default = kernel.default_config()
    assert default is not None
    if defaults is None:
        defaults = (1, 2, 4) if phase == 0 else (2, 4)
    return [{**default, "TB": tb} for tb in defaults] + [
        {**default, **change, "TB": (2, 4)[(i + phase) % 2]} for i, change in enumerate(extra)
    ]


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("boundary", ["interior", "clamp"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_tb_steps_per_launch_equal_single_steps(case: str, boundary: str, tmp_path: Path) -> None:
    path, sizes, extra = CASES[case]
    kernel = load_kernel(stepping(path, tmp_path, boundary=boundary), sizes)
    assert kernel.steps is not None and kernel.steps.count == STEPS
    assert "temporal" in kernel.techniques and "temporal-tile" in kernel.techniques
    # the defaults as the other configurations run: TB = 2 and 4 by turns, TB = 2 with
    # the interior boundary (and TB = 1, once per ONE_STEP_LOOP kernel) and TB = 4
    # with clamp
    phase = ["interior", "clamp"].index(boundary)
    first = (1, 2) if case in ONE_STEP_LOOP else (2,)
    configs = tb_configs(kernel, extra, phase=phase, defaults=(first, (4,))[phase])
    for cfg, result in zip(configs, evaluate(kernel, configs), strict=True):
        assert result.status is Status.OK, (case, boundary, cfg, result.message)
        assert result.extra.get("launches", 1) == STEPS // cfg["TB"]


@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
def test_float64_in_3d(tmp_path: Path) -> None:
    """The 3D heat stencil in doubles (its file gives float32, which
    test_tb_steps_per_launch_equal_single_steps runs with both boundaries); heat3d_inner
    takes the interior fast path in some work-groups and the checked one in the others.
    (The configurations heat3d_inner took from heat3d at 16 x 8 x 16 are left out: their
    doubles run the same code as heat3d_inner's own, ZREG layouts too.) Every other
    configuration: tiles, merged blocks, streaming, TR and ZREG among them (the shapes'
    code does not depend on the element type, which the loads, stores and sums do).
    Doubles in 2D are CASES' jacobi2d_f64 (tiles, merged blocks, streaming along y and
    TR, with both boundaries, some work-groups inside the array)."""
    path, sizes, extra = CASES["heat3d_inner"]
    extra = extra[:6:2]  # (not heat3d's)
    kernel = load_kernel(stepping(path, tmp_path, boundary="clamp", dtype="float64"), sizes)
    # no TB = 1: the host's loop of one-step launches is the same in floats
    # (test_tb_steps_per_launch_equal_single_steps), the one-step kernel in
    # doubles test_definition_opencl's
    configs = tb_configs(kernel, extra, defaults=(2, 4))
    for cfg, result in zip(configs, evaluate(kernel, configs), strict=True):
        assert result.status is Status.OK, (cfg, result.message)


@pytest.mark.usefixtures("shared_workers")
def test_a_wrong_step_count_is_caught(tmp_path: Path) -> None:
    """The verification tells the steps apart: a kernel checked against a reference of
    one step fewer fails in every TB (the reference loop has teeth). The kernel is
    heat3d_inner's with the interior boundary, source and sizes (its programs at TB = 1
    and 2 those test_tb_steps_per_launch_equal_single_steps built: PoCL's cache has
    them); only the reference differs."""
    path, sizes, _ = CASES["heat3d_inner"]
    d = load_definition(stepping(path, tmp_path, boundary="interior"))
    source, description = definition_description(d, sizes)
    description["reference"]["args"]["definition"]["steps"] = STEPS - 1
    kernel = parse_description(description, source=source, label="heat3d-wrong-steps")
    results = evaluate(kernel, tb_configs(kernel, []))
    assert [r.status for r in results] == [Status.WRONG_RESULT] * 3


def test_steps_loop_of_the_reference_is_repeated_single_steps() -> None:
    """The reference's steps loop is single steps with the buffers swapped, the
    secondary field fixed (computed here step by step)."""
    d = load_definition(ROOT / "stencils" / "hotspot.stencil.yaml")
    stepped = replace(d, steps=3)
    rng = np.random.default_rng(1)
    temp, power = rng.random((12, 10), dtype=np.float32), rng.random((12, 10), dtype=np.float32)
    out0 = temp.copy()
    a, b = temp, out0
    for _ in range(3):
        new = d.reference({"temp": a, "power": power}, b)
        a, b = new, a
    got = stepped.reference_steps({"temp": temp, "power": power}, out0)
    assert np.array_equal(got, a)
    assert not np.array_equal(got, d.reference({"temp": temp, "power": power}, out0))
    assert stepped.tolerance(1.0) > d.tolerance(1.0)


@pytest.mark.slow
def test_tunes_briefly_with_the_temporal_technique(tmp_path: Path) -> None:
    import gtune

    path, sizes, _ = CASES["star2d"]
    kernel = load_kernel(stepping(path, tmp_path, boundary="interior"), sizes)
    report = gtune.tune(
        kernel,
        technique="temporal",
        budget=6,
        store=tmp_path / "results.db",
        confirm=None,
        timeout_s=120,
    )
    assert report.steps == STEPS
    from gtune.report import run_summary_rows

    rows = dict(run_summary_rows(report))
    assert f"per step ({STEPS} steps)" in rows["best time"]
    assert "once per step" in rows["bandwidth"]
    best = report.best_result
    assert best is not None and best.status is Status.OK, report.notes
    tried = {e.config["TB"] for r in report.runs if r.outcome for e in r.outcome.trace}
    assert tried and tried <= {2, 4}


@pytest.mark.bench
@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
def test_benchmark_script_runs_quick_and_keeps_each_kernel_it_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchmarks/temporal.py (the GPU measurement) runs end to end on small sizes, a 3D
    suite kernel (by name) and a 2D stencil. It writes its results after every kernel:
    while the second runs, the first is on disk, marked partial (a run stopped then
    keeps it; the file is replaced whole, never half written). A name it does not know
    stops it before anything is measured. Its result store is the test's own (not
    ./gtune-results.db, whose results of an earlier run it would reuse). (Its main in
    this process, the run in a thread of its own while this one reads its files, on
    the module's shared workers: no interpreter to start.)"""
    import contextvars
    import json
    import threading
    import time

    from tests.conftest import load_script

    script = load_script(ROOT / "benchmarks" / "temporal.py")
    monkeypatch.setenv("GTUNE_DB", str(tmp_path / "results.db"))
    capsys.readouterr()
    with pytest.raises(SystemExit) as bad:  # argparse's refusal: status 2
        script.main([str(tmp_path / "bad"), "--kernels", "heat3d", "suite:nope"])
    assert bad.value.code == 2 and "no suite kernel 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "bad" / "temporal.json").exists()

    out = tmp_path / "out"
    argv = [str(out), "--quick", "--size", "16", "--size2d", "32"]
    argv += ["--steps", "4", "--budget", "1", "--runs", "1"]
    argv += ["--kernels", "suite:star_3d_xyz_r1", "jacobi2d"]
    ended: list[Any] = []

    def run() -> None:
        try:
            ended.append(script.main(argv))
        except BaseException as exc:  # told in the test's thread
            ended.append(exc)

    context = contextvars.copy_context()  # the shared workers (a context variable)
    worker = threading.Thread(target=context.run, args=(run,), daemon=True)
    worker.start()
    written = out / "temporal.json"
    deadline = time.monotonic() + 600
    while not written.exists() and worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert written.exists(), f"no results after the first kernel: {ended}"
    first = json.loads(written.read_text())
    md = (out / "temporal.md").read_text()
    still = json.loads(written.read_text())["partial"]
    worker.join(timeout=600)
    assert not worker.is_alive() and ended == [0], ended
    if first["partial"]:  # the usual case: read while the second kernel ran
        assert list(first["kernels"]) == ["star_3d_xyz_r1"] and len(first["copy"]) == 1
        temporal = first["kernels"]["star_3d_xyz_r1"]["multi_step"]["techniques"]["temporal"]
        assert temporal["remeasured_status"] == "ok"
        if still:  # the markdown read before the final write
            assert "Partial" in md
    data = json.loads(written.read_text())
    assert not data["partial"] and data["steps"] == 4 and len(data["copy"]) == 2
    assert list(data["kernels"]) == ["star_3d_xyz_r1", "jacobi2d"]
    for k in data["kernels"].values():
        temporal = k["multi_step"]["techniques"]["temporal"]
        assert temporal["remeasured_status"] == "ok" and temporal["config"]["TB"] in (2, 4)
    assert (out / "temporal.md").exists() and (out / "temporal.png").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=definitions(boundaries=("interior", "clamp")))  # zero: no temporal blocking
def test_random_definitions_step_exactly(data: dict[str, Any]) -> None:
    """Random definitions (offsets up to radius 4, both boundaries and element types,
    a second field) with 4 steps: TB = 2 and 4 in tiles, merged tiles, and streaming
    (along z in 3D, along y in 2D)."""
    # a written rim is not served by temporal blocking (the tight band is)
    data = {**{k: v for k, v in data.items() if k != "rim"}, "steps": STEPS}
    d = parse_definition(data, "random.stencil.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "random.stencil.yaml"
        path.write_text(d.to_yaml())
        sizes = {"NX": 32, "NY": 16} | ({"NZ": 32} if d.dims == 3 else {})
        kernel = load_kernel(path, sizes)
        extra = (
            [
                {"WX": 8, "WY": 2, "STREAM": 1, "ZC": 8},
                {"WX": 4, "WY": 2, "CX": 2, "CY": 2},
                {"WX": 8, "WY": 4, "STREAM": 1, "ZREG": 1, "ZC": 8},  # z-star stencils
            ]
            if d.dims == 3
            else [
                {"WX": 8, "WY": 1, "STREAM": 1, "ZC": 4},
                {"WX": 4, "WY": 4, "STREAM": 1, "ZC": 2},
                {"WX": 4, "WY": 2, "CX": 2},
            ]
        )
        limits = select_device(None).limit_values()
        configs = [
            c
            for c in tb_configs(kernel, extra)
            if c["TB"] > 1
            and all(x.evaluate({**kernel.env(c), **limits}) for x in kernel.constraints)
        ]
        assert configs, (d.radius, "no temporal configuration fits")
        for cfg, result in zip(configs, evaluate(kernel, configs), strict=True):
            assert result.status is Status.OK, (data, cfg, result.message)


def _zreg_kernel(data: dict[str, Any], path: Path) -> tuple[Any, dict[str, int]]:
    """The definition ``data`` written to ``path``, loaded at 32 x 16 x 16: a z-star
    kernel (it has the temporal-zreg technique) and its default configuration."""
    path.write_text(parse_definition(data, path.name).to_yaml())
    kernel = load_kernel(path, {"NX": 32, "NY": 16, "NZ": 16})
    assert "temporal-zreg" in kernel.techniques
    default = kernel.default_config()
    assert default is not None
    return kernel, dict(default)


@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize("seed", [1, 2])
def test_zreg_random_z_stars_step_exactly(seed: int) -> None:
    """Random z-star stencils (in-plane offsets up to radius 2, z-axis offsets up to 2,
    not symmetric, with or without the centre) run with both ZREG layouts at TB = 2 and
    4 (one work-group block each): equal to single steps. The two seeds take each value
    of every choice once: seed 1 floats, the interior boundary, a second field and the
    block-first walk unrolled (ZU); seed 2 doubles, clamping, one field, the walk not
    unrolled. (Seeds 0 and 3, their other pairings, ran the same code: the element type,
    boundary, field and unrolling are rendered independently of one another.)"""
    rng = np.random.default_rng(seed)
    plane = [(dx, dy) for dx in range(-2, 3) for dy in range(-2, 3)]
    picked = [plane[i] for i in rng.choice(len(plane), size=5, replace=False)]
    zs = [int(z) for z in rng.choice([-2, -1, 1, 2], size=int(rng.integers(1, 4)), replace=False)]
    offsets = [[dx, dy, 0] for dx, dy in picked] + [[0, 0, z] for z in zs]
    fields = ["u", "w"] if seed % 2 else ["u"]
    terms: list[dict[str, Any]] = [
        {"field": "u", "offset": o, "coefficient": float(rng.uniform(-0.2, 0.3))} for o in offsets
    ]
    if seed % 2:
        terms.append({"field": "w", "offset": [0, 0, 0], "coefficient": 0.05})
    data = {
        "dims": 3,
        "dtype": "float64" if seed >= 2 else "float32",
        "boundary": "clamp" if seed % 2 == 0 else "interior",
        "fields": fields,
        "output": "v",
        "terms": terms,
        "steps": STEPS,
    }
    with tempfile.TemporaryDirectory() as tmp:
        kernel, default = _zreg_kernel(data, Path(tmp) / "zstar.stencil.yaml")
        limits = select_device(None).limit_values()
        blocks = (
            {"WX": 16, "WY": 8, "ZC": 8},
            {"WX": 8, "WY": 16, "ZC": 4},
            {"WX": 16, "WY": 16, "ZC": 16},
        )
        configs: list[dict[str, int]] = []
        for i, (zreg, tb) in enumerate(((1, 2), (1, 4), (2, 2), (2, 4))):
            # one block a layout and TB, the first the space allows from a place that
            # turns with the pair and the seed (every block runs over the seeds)
            first = (i + seed) % len(blocks)
            for change in blocks[first:] + blocks[:first]:
                c = {**default, "STREAM": 1, "ZREG": zreg, "ZU": seed % 2 * (zreg - 1)}
                c.update({"TB": tb, **change})
                if all(x.evaluate({**kernel.env(c), **limits}) for x in kernel.constraints):
                    configs.append(c)
                    break
        assert {(c["TB"], c["ZREG"]) for c in configs} == {(2, 1), (2, 2), (4, 1), (4, 2)}
        for cfg, result in zip(configs, evaluate(kernel, configs), strict=True):
            assert result.status is Status.OK, (data, cfg, result.message)


# z-star stencils without terms along x or y (or both): the block-first layout's halo
# has no frames beside (RX = 0), none above and below (RY = 0), or none at all; and
# one-sided radii (x offsets -1 and +2)
AXES = {
    "xz": [[-1, 0, 0], [0, 0, 0], [2, 0, 0], [0, 0, -1], [0, 0, 1]],
    "yz": [[0, -1, 0], [0, 1, 0], [0, 0, 0], [0, 0, 2]],
    "z": [[0, 0, -2], [0, 0, 0], [0, 0, 1]],
}


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    ("axes", "boundary"), [("xz", "interior"), ("yz", "clamp"), ("z", "interior")]
)
def test_zreg_layouts_without_terms_along_an_axis(axes: str, boundary: str, tmp_path: Path) -> None:
    """Both ZREG layouts at TB = 2 and 4, with merged blocks, equal to single steps
    where the stencil's plane terms lie on one axis or none. Each block runs in both
    layouts at one TB, TB = 2 and 4 by turns, the turns shifted from one case to the
    next: every case runs both layouts at both TB values, and every block runs at both
    TB values over the cases (yz, whose z reaches 2, runs its largest block at TB = 2:
    the register bound leaves it out at TB = 4)."""
    data = {
        "dims": 3,
        "dtype": "float32",
        "boundary": boundary,
        "fields": ["u"],
        "output": "v",
        "steps": STEPS,
        "terms": [
            {"field": "u", "offset": o, "coefficient": 0.1 + 0.05 * i}
            for i, o in enumerate(AXES[axes])
        ],
    }
    kernel, default = _zreg_kernel(data, tmp_path / "axes.stencil.yaml")
    turn = list(AXES).index(axes) + 1
    configs = [
        {**default, "STREAM": 1, "ZREG": zreg, "ZU": int(zreg == 2 and tb == 4), "TB": tb, **change}
        for zreg in (1, 2)
        for j, change in enumerate(
            (
                {"WX": 16, "WY": 4, "ZC": 8},
                {"WX": 8, "WY": 8, "CX": 2, "ZC": 4},
                {"WX": 8, "WY": 4, "CX": 2, "CY": 2, "ZC": 4},
            )
        )
        for tb in [(2, 4)[(j + turn) % 2]]
    ]
    limits = select_device(None).limit_values()
    configs = [
        c
        for c in configs
        if all(x.evaluate({**kernel.env(c), **limits}) for x in kernel.constraints)
    ]
    # both layouts at both TB, both merged in y
    assert {(c["TB"], c["ZREG"]) for c in configs} == {(2, 1), (2, 2), (4, 1), (4, 2)}
    assert {c["ZREG"] for c in configs if c["CY"] == 2} == {1, 2}
    for cfg, result in zip(configs, evaluate(kernel, configs), strict=True):
        assert result.status is Status.OK, (axes, boundary, cfg, result.message)


@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
def test_fixed_configurations_script_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/temporal_configs.py (the GPU A/B of fixed configurations against the
    copy kernel) runs end to end on a small size: every configuration verified, the
    first the baseline, one beyond the register bound run and marked so, one with
    NVIDIA's build options run without them on PoCL, and ``--ptxas`` (NVIDIA's
    registers) nothing on PoCL. (Its main in this process, on the
    module's shared workers: no interpreter to start.)"""
    import json

    from tests.conftest import load_script

    configs = tmp_path / "configs.yaml"
    base = {"STREAM": 1, "TB": 2, "WX": 8, "WY": 4, "CX": 2, "ZC": 8}
    probe = {"STREAM": 1, "ZREG": 2, "TB": 4, "WX": 8, "WY": 4, "CX": 2, "CY": 2, "ZC": 8}
    entries = [
        {"name": "round robin", "config": {**base, "ZREG": 1}},
        {"name": "block first", "config": {**base, "ZREG": 2}},
        {"name": "probe", "config": probe},
        {"name": "capped", "config": {**base, "ZREG": 2}, "options": ["-cl-nv-maxrregcount=32"]},
    ]
    configs.write_text(
        yaml.safe_dump({"kernel": "heat3d", "size": 16, "steps": 4, "configs": entries})
    )
    out = tmp_path / "out"
    script = load_script(ROOT / "benchmarks" / "temporal_configs.py")
    capsys.readouterr()
    assert script.main([str(out), str(configs), "--rounds", "2", "--runs", "1", "--ptxas"]) == 0
    said = capsys.readouterr().out
    data = json.loads((out / "configs.json").read_text())
    rows = {row["name"]: row for row in data["configs"]}
    assert list(rows) == ["round robin", "block first", "probe", "capped"]
    assert all(row["status"] == "ok" and row["time_per_step_s"] > 0 for row in rows.values())
    assert rows["round robin"]["speedup"] == 1.0
    assert [bool(row["broken"]) for row in rows.values()] == [False, False, True, False]
    # NVIDIA's register cap: its build option on another device is dropped, and said so
    assert rows["capped"]["options"] == [] and "NVIDIA's options dropped" in said
    assert data["copy_gbs"] > 0 and data["steps"] == 4
    assert "(outside the space)" in (out / "configs.md").read_text()
    assert not any("ptxas" in row for row in rows.values())


def test_fixed_configurations_table_shows_registers_and_spills() -> None:
    """``--ptxas``'s registers and spill bytes (NVIDIA's build log) go into the shape
    column; a row without them is shown as before."""
    from tests.conftest import load_script

    script = load_script(ROOT / "benchmarks" / "temporal_configs.py")
    row = {"name": "a", "shape": "TB=4", "status": "ok", "broken": [], "time_per_step_s": 1e-4}
    row |= {"gbs": 100.0, "fraction_of_copy": 1.5, "speedup": 1.0}
    rows = [
        {**row, "ptxas": {"registers": 118, "spill_stores": 0, "spill_loads": 0}},
        {**row, "name": "b", "ptxas": {"registers": 128, "spill_stores": 48, "spill_loads": 80}},
        {**row, "name": "c"},
    ]
    lines = script.table(rows, 100.0, "# head").splitlines()
    assert "| a | TB=4, 118 regs | ok |" in lines[4]
    assert "| b | TB=4, 128 regs, 128 B spilled | ok |" in lines[5]
    assert "| c | TB=4 | ok |" in lines[6]


@pytest.mark.bench
@pytest.mark.slow
@pytest.mark.usefixtures("shared_workers")
def test_fixed_configurations_script_times_a_probe_all_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A configuration marked ``probe`` (a template wrong by design: the vector walk's
    halo left out, benchmarks/candidates/probe_no_halo.patch) fails its verification,
    says so and is timed all the same, marked; the same configuration unmarked is not
    timed. The scalar walk, which the probe leaves as it is, still verifies."""
    import json

    from tests.conftest import load_script

    configs = tmp_path / "configs.yaml"
    vec = {"STREAM": 1, "ZREG": 2, "TB": 2, "VX": 4, "BX": 4, "WX": 4, "WY": 4, "ZC": 8}
    entries = [
        {"name": "scalar", "config": {"STREAM": 1, "ZREG": 2, "TB": 2, "WX": 8, "WY": 4, "ZC": 8}},
        {"name": "no halo", "config": vec, "probe": True},
        {"name": "no halo, unmarked", "config": vec},
    ]
    configs.write_text(
        yaml.safe_dump({"kernel": "heat3d", "size": 32, "steps": 4, "configs": entries})
    )
    out = tmp_path / "out"
    script = load_script(ROOT / "benchmarks" / "temporal_configs.py")
    patch = ROOT / "benchmarks" / "candidates" / "probe_no_halo.patch"
    args = [str(out), str(configs), "--rounds", "1", "--runs", "1", "--template", str(patch)]
    assert script.main(args) == 0
    capsys.readouterr()
    rows = {r["name"]: r for r in json.loads((out / "configs.json").read_text())["configs"]}
    assert rows["scalar"]["status"] == "ok" and rows["scalar"]["time_per_step_s"] > 0
    assert rows["no halo"]["status"] == rows["no halo, unmarked"]["status"] == "wrong_result"
    assert rows["no halo"]["time_per_step_s"] > 0
    assert rows["no halo, unmarked"].get("time_per_step_s") is None
    md = (out / "configs.md").read_text()
    assert "no halo (probe: wrong by design)" in md
    assert "no halo, unmarked (probe" not in md
