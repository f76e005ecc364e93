"""From a tuning run to a drop-in kernel, for real on PoCL: ``gtune run``, ``gtune results
--best``, ``gtune export`` and the pyopencl example that launches the exported kernel and
checks it against the reference."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.kernel import TunableKernel
from gtune.measure import OpenCLEvaluator, Status
from gtune.stencils.definition import load_definition
from gtune.stencils.render import definition_kernel_of
from gtune.tuned import tuned_kernel, write_tuned
from tests.conftest import ROOT, run_gtune, run_tuned_example
from tests.inprocess import Cli

pytestmark = [pytest.mark.opencl, pytest.mark.slow]

HEAT = str(ROOT / "stencils" / "heat3d.cl")
SIZE = "32x16x8"


def _example(tuned_json: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_tuned_example(tuned_json, *extra)


@pytest.fixture(scope="module")
def tuned_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """heat3d tuned once by ``gtune run`` for the module (its store and JSON report):
    the tests below export from it and never write to it."""
    folder = tmp_path_factory.mktemp("tuned")
    db, report_path = folder / "r.db", folder / "run.json"
    ran = run_gtune(
        "run", HEAT, "--size", SIZE, "--technique", "global", "--budget", "6",
        "--json", str(report_path), db=db,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return db, report_path


@pytest.mark.usefixtures("shared_workers")
def test_run_results_export_and_the_example_agree(
    tmp_path: Path, tuned_store: tuple[Path, Path], gtune_here: Cli
) -> None:
    db, report_path = tuned_store
    report = json.loads(report_path.read_text())
    assert report["confirmed"]

    # results --best 1 names the configuration run reported, with its confirmed time
    best = json.loads(
        gtune_here("results", "-k", "heat3d", "--best", "1", "--format", "json", db=db).stdout
    )["results"]
    assert len(best) == 1 and best[0]["config"] == report["best_config"]
    assert best[0]["median_s"] == pytest.approx(report["best_s"])
    assert best[0]["kernel"] == "heat3d:stencil" and best[0]["size"] == SIZE
    rows = json.loads(gtune_here("results", "-k", "heat3d", "--format", "json", db=db).stdout)
    default = [r for r in rows["results"] if "default" in r["confirmed"]]
    assert len(default) == 1 and default[0]["median_s"] == pytest.approx(report["default_s"])

    # the exported kernel is that configuration, and the example checks it
    out = tmp_path / "tuned"
    exported = gtune_here("export", HEAT, "--size", SIZE, "-o", str(out), db=db)
    assert exported.returncode == 0, exported.stderr
    data = json.loads((out / "heat3d_tuned.json").read_text())
    assert data["configuration"] == report["best_config"] and data["confirmed"] is True
    assert data["default_time_s"] == pytest.approx(report["default_s"])
    assert (out / "heat3d_tuned.h").read_text().count("#define HEAT3D_STENCIL_") > 5
    for size in ([], ["--size", "64x32x16"]):
        checked = _example(out / "heat3d_tuned.json", *size)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "dst: max |tuned - original|" in checked.stdout and "(ok)" in checked.stdout
    # the same against the original kernel at its default configuration, on the same data
    checked = _example(out / "heat3d_tuned.json", "--original", HEAT)
    assert checked.returncode == 0 and "(ok)" in checked.stdout, checked.stdout + checked.stderr

    # a size the store has no results for is one clear error naming the sizes it has
    missing = gtune_here("export", HEAT, "--size", "64x64x64", "-o", str(out), db=db)
    assert missing.returncode == 2 and "32x16x8" in missing.stderr
    assert "Traceback" not in missing.stderr

    # the same name and size with another source (edited since it was tuned): the error
    # says so instead of asking for the size it was given
    edited = tmp_path / "edited"
    edited.mkdir()
    (edited / "heat3d.cl").write_text("/* edited */\n" + Path(HEAT).read_text())
    (edited / "heat3d.yaml").write_text(Path(HEAT).with_suffix(".yaml").read_text())
    changed = gtune_here("export", str(edited / "heat3d.cl"), "--size", SIZE, db=db)
    assert changed.returncode == 2 and "another version of its source" in changed.stderr
    assert "give --size" not in changed.stderr and "Traceback" not in changed.stderr


@pytest.mark.parametrize(
    "config",
    [
        {"VX": 4, "BX": 4, "WX": 4},  # vec
        {"LOCAL": 1, "WX": 8, "WY": 2, "WZ": 2},  # local
        {"STREAM": 1, "WX": 8, "ZC": 4, "BX": 2, "CY": 2},  # stream
        {"CX": 2, "CY": 2, "CZ": 2, "WX": 4},  # cyclic merging
        {"IMAGE": 1},  # the input read through an image
    ],
    ids=["vec", "local", "stream", "cyclic", "image"],
)
def test_every_technique_exports_a_kernel_that_computes_the_stencil(
    tmp_path: Path, config: dict[str, int]
) -> None:
    """Each run against the original kernel on the same data (the example's own
    reference, numpy's, is test_run_results_export_and_the_example_agree's)."""
    kernel = load_kernel(HEAT, {"NX": 32, "NY": 16, "NZ": 16})
    values = {**(kernel.default_config() or {}), **config}
    paths = write_tuned(tuned_kernel(kernel, values), tmp_path)
    checked = _example(paths[1], "--size", "64x32x32", "--original", HEAT)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "dst: max |tuned - original|" in checked.stdout and "(ok)" in checked.stdout


def test_a_2d_streaming_kernel_with_vector_loads_exports(tmp_path: Path) -> None:
    """2D streaming with vector loads (VX 4, BX 8) exported and run at another size by the
    example, against the original kernel (the example's own reference is heat3d's)."""
    blur = str(ROOT / "stencils" / "blur5.cl")
    kernel = load_kernel(blur, {"NX": 64, "NY": 32})
    config = {"STREAM": 1, "VX": 4, "BX": 8, "WX": 4, "WY": 2, "ZC": 4}
    values = {**(kernel.default_config() or {}), **config}
    paths = write_tuned(tuned_kernel(kernel, values), tmp_path)
    checked = _example(paths[1], "--size", "128x48", "--original", blur)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "dst: max |tuned - original|" in checked.stdout and "(ok)" in checked.stdout


def _evaluated_as_exported(kernel: TunableKernel, config: dict[str, int]) -> Status:
    """The exported source in place of the kernel's own, run by gtune's evaluator at the
    configuration and checked against the kernel's reference."""
    tuned = tuned_kernel(kernel, config)
    assert not tuned.notes and "Specialised" in tuned.source
    exported = dataclasses.replace(kernel, source=tuned.source)
    evaluator = OpenCLEvaluator(exported, runs=1)
    try:
        return evaluator.evaluate(config).status
    finally:
        evaluator.close()


@pytest.mark.usefixtures("shared_workers")
@pytest.mark.parametrize(
    "config",
    [
        {"STREAM": 1, "WX": 8, "WY": 1, "CX": 2, "ZC": 4},
        {"WX": 4, "WY": 2, "CX": 2, "CY": 4},
        {"VX": 4, "BX": 4, "WX": 4},
    ],
    ids=["stream", "cyclic", "vec"],
)
def test_jacobi2d_and_temporal_exports_build_and_verify(config: dict[str, int]) -> None:
    """2D jacobi at one step, and advancing four steps per launch (temporal blocking,
    TB 4), exported specialised and verified against the reference on PoCL."""
    d = load_definition(ROOT / "stencils" / "jacobi2d.stencil.yaml")
    one = definition_kernel_of(d, {"NX": 64, "NY": 32})
    assert _evaluated_as_exported(one, {**(one.default_config() or {}), **config}) == Status.OK
    if "VX" in config:
        return  # temporal blocking is a technique of its own (no vectors)
    stepped = definition_kernel_of(dataclasses.replace(d, steps=4), {"NX": 64, "NY": 32})
    temporal = {**(stepped.default_config() or {}), **config, "TB": 4}
    assert _evaluated_as_exported(stepped, temporal) == Status.OK


@pytest.mark.usefixtures("shared_workers")
def test_export_keeps_files_refuses_links_and_names_a_wrong_device(
    tmp_path: Path, tuned_store: tuple[Path, Path], gtune_here: Cli
) -> None:
    db = tuned_store[0]
    out = tmp_path / "tuned"
    first = gtune_here("export", HEAT, "--size", SIZE, "-o", str(out), db=db)
    assert first.returncode == 0, first.stderr
    source = (out / "heat3d_tuned.cl").read_text()
    assert len(source.splitlines()) < 200 and "#if STREAM" not in source

    # a second export keeps the files unless --force
    again = gtune_here("export", HEAT, "--size", SIZE, "-o", str(out), db=db)
    assert again.returncode == 2 and "--force" in again.stderr
    assert "heat3d_tuned.cl" in again.stderr and "Traceback" not in again.stderr
    full = gtune_here(
        "export", HEAT, "--size", SIZE, "-o", str(out), "--force", "--full-template", db=db
    )  # fmt: skip
    assert full.returncode == 0, full.stderr
    assert len((out / "heat3d_tuned.cl").read_text().splitlines()) > 1000

    # a link planted where the header goes: refused, with --force too; its target kept
    victim = tmp_path / "victim.h"
    victim.write_text("precious\n")
    (out / "heat3d_tuned.h").unlink()
    (out / "heat3d_tuned.h").symlink_to(victim)
    linked = gtune_here("export", HEAT, "--size", SIZE, "-o", str(out), "--force", db=db)
    assert linked.returncode == 2 and "symbolic link" in linked.stderr
    assert victim.read_text() == "precious\n"

    # a device it was not tuned on is named as such, not blamed on the source
    wrong = gtune_here(
        "export", HEAT, "--size", SIZE, "-o", str(tmp_path / "w"), "--device", "nosuchdevice",
        db=db,
    )  # fmt: skip
    assert wrong.returncode == 2, wrong.stderr
    assert "--device nosuchdevice" in wrong.stderr and "tuned on" in wrong.stderr
    assert "another version of its source" not in wrong.stderr
