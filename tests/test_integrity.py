"""Bad numbers are refused before anything is measured, and big ones do not overflow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtune.description import load_kernel
from tests.conftest import ROOT
from tests.inprocess import Cli

HEAT = str(ROOT / "stencils" / "heat3d.cl")


def test_values_outside_a_domain_are_named(data_dir: Path) -> None:
    kernel = load_kernel(data_dir / "naive7.cl")
    assert kernel.outside_domain({"WX": 8, "WY": 4, "WZ": 1}) == []
    assert kernel.outside_domain({"WX": 0, "WY": 3, "WZ": 1}) == ["WX=0", "WY=3"]
    # domains follow the problem size: WX may be 64 only where NX is at least 64
    assert kernel.outside_domain({"WX": 64, "WY": 4, "WZ": 1}) == ["WX=64"]
    assert kernel.with_sizes({"NX": 64}).outside_domain({"WX": 64, "WY": 4, "WZ": 1}) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--config", "WX=0"], "WX=0"),
        (["--config", "WX=-1"], "WX=-1"),
        (["--sweep", f"WX={','.join(str(v) for v in range(1, 5001))}"], "WX=3"),
    ],
)
def test_measure_refuses_values_outside_the_domain(
    tmp_path: Path, args: list[str], needle: str, gtune_here: Cli
) -> None:
    db = tmp_path / "r.db"
    done = gtune_here("measure", HEAT, "--size", "16x8x8", *args, db=db)
    assert done.returncode == 2, done.stderr
    assert "outside the parameter's domain" in done.stderr and needle in done.stderr
    assert "Traceback" not in done.stderr
    assert not db.exists() or db.stat().st_size == 0 or "results" not in done.stdout


@pytest.mark.parametrize("runs", ["0", "-3", "100001"])
def test_measure_refuses_a_number_of_runs_out_of_range(
    tmp_path: Path, runs: str, gtune_here: Cli
) -> None:
    done = gtune_here("measure", HEAT, "--size", "16x8x8", "--runs", runs, db=tmp_path / "r.db")
    assert done.returncode == 2, done.stderr
    assert "--runs" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.opencl
def test_a_thousand_runs_and_more_are_timed(tmp_path: Path, gtune_here: Cli) -> None:
    done = gtune_here(
        "measure", HEAT, "--size", "16x8x8", "--runs", "1100", "--json", db=tmp_path / "r.db"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["status"] == "ok" and len(data["times_s"]) == 1100


@pytest.mark.parametrize("runs", [0, -1, 100_001])
def test_the_library_refuses_runs_out_of_range(data_dir: Path, runs: int) -> None:
    from gtune.exceptions import InputError
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

    with pytest.raises(InputError, match="timed runs must be from 1 to 100,000"):
        OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), runs=runs)


def test_a_define_cannot_smuggle_in_compiler_options(
    tmp_path: Path, data_dir: Path, gtune_here: Cli
) -> None:
    plain = str(data_dir / "plain_blur.cl")
    done = gtune_here(
        "measure", plain, "--size", "64x32", "--scalar", "scale=0.1",
        "--define", "X=1 -D NX=2", db=tmp_path / "r.db",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot hold the space" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("option", ["-DNX=4", "-DWX=2", "-cl-mad-enable -DNY=3"])
def test_build_options_cannot_redefine_what_gtune_defines(kernel_copy, option: str) -> None:
    from gtune.exceptions import InputError

    cl = kernel_copy("naive7", lambda t: t + f"build_options: [{option}]\n")
    with pytest.raises(InputError, match="would redefine"):
        load_kernel(cl)


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("WX: {pow2: [1, NX], default: 8}", "WX: {pow2: [1, NX], default: 3}", "default"),
        ("WX: {pow2: [1, NX], default: 8}", "WX: {pow2: [1, NX], default: 64}", "outside"),
        ("WX: {pow2: [1, NX], default: 8}", "WÜ: {pow2: [1, NX], default: 8}", "ASCII"),
    ],
)
def test_descriptions_with_values_gtune_cannot_use_are_refused(
    kernel_copy, old: str, new: str, needle: str
) -> None:
    from gtune.exceptions import InputError

    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new)

    with pytest.raises(InputError, match=needle):
        load_kernel(kernel_copy("naive7", edit))


def test_terminal_escapes_never_reach_the_terminal(
    kernel_copy, tmp_path: Path, data_dir: Path, gtune_here: Cli
) -> None:
    cl = kernel_copy("naive7", lambda t: t + 'doc: "\\e[2J\\e[31mred"\n')
    done = gtune_here("space", str(cl))
    assert done.returncode == 2 and "control character" in done.stderr
    assert "\x1b" not in done.stderr + done.stdout
    clean = str(data_dir / "naive7.cl")
    bad = gtune_here("measure", clean, "--config", "\x1b[31mWX=1", db=tmp_path / "r.db")
    assert bad.returncode == 2 and "\x1b" not in bad.stderr + bad.stdout, bad.stderr


def test_a_description_and_kernel_disagreeing_on_arguments_is_refused(kernel_copy) -> None:
    from gtune.exceptions import InputError

    def drop_c1(text: str) -> str:
        line = "  - {name: c1, kind: scalar, value: 0.1}\n"
        assert line in text
        return text.replace(line, "")

    with pytest.raises(InputError, match=r"takes 4 argument\(s\).*lists 3"):
        load_kernel(kernel_copy("naive7", drop_c1))


def test_arrays_larger_than_the_device_allows_are_named(data_dir: Path) -> None:
    from dataclasses import replace

    from gtune.exceptions import InputError
    from gtune.measure.opencl_evaluator import check_fits
    from tests.space.space_helpers import h100_limits

    kernel = load_kernel(data_dir / "naive7.cl", {"NX": 4096, "NY": 4096, "NZ": 1024})
    h100 = h100_limits()
    with pytest.raises(InputError, match=r"array 'in' needs 65,536 MiB") as err:
        check_fits(kernel, h100)
    assert "--size" in err.value.render()
    roomy = replace(h100, max_mem_alloc_size=2**40)
    with pytest.raises(InputError, match="the arrays need 131,072 MiB"):
        check_fits(kernel, roomy)
    check_fits(load_kernel(data_dir / "naive7.cl"), h100)  # the usual size fits
