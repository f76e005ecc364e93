"""``gtune space`` end to end, in a subprocess like a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from space_helpers import DATA, h100_limits

pytestmark = pytest.mark.minizinc


def gtune(args: list[str], tmp: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GTUNE_CACHE": str(tmp / "cache")}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "gtune", *args], capture_output=True, text=True, env=env
    )


def limits_file(tmp: Path) -> str:
    f = tmp / "h100.json"
    f.write_text(json.dumps(h100_limits().to_dict()))
    return str(f)


def test_json_report_and_emitted_model(tmp_path: Path) -> None:
    desc = str(DATA / "stencil3d.yaml")
    out = gtune(
        [
            "space", desc, "--limits", limits_file(tmp_path), "--size", "32x32x32",
            "--json", "--emit-mzn", str(tmp_path / "mzn"),
        ],
        tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)
    assert report["unpruned"] == 6 * 6 * 6 * 5 * 6 * 6 * 6 * 5 * 2 * 2
    assert 0 < report["pruned"] < report["unpruned"]
    assert report["cuts"][0]["rejects"] > 0
    files = sorted(p.name for p in (tmp_path / "mzn").iterdir())
    assert files[1] == "stencil3d.mzn" and files[0].endswith(".dzn")
    solved = subprocess.run(
        ["minizinc", "--solver", "gecode", "-O2", "-a", *files],
        cwd=tmp_path / "mzn", capture_output=True, text=True, check=True,
    )  # fmt: skip
    count = sum(1 for ln in solved.stdout.splitlines() if ln[:1].isdigit())
    assert count == report["pruned"]


def test_missing_minizinc_is_one_clear_message(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    desc = str(DATA / "stencil3d.yaml")
    out = gtune(["space", desc, "--limits", limits_file(tmp_path)], tmp_path, path=str(empty))
    assert out.returncode == 2
    assert "MiniZinc is not installed" in out.stderr
    assert "apt-get install minizinc" in out.stderr
    assert "Traceback" not in out.stderr


def test_bad_descriptions_exit_2_naming_the_problem(tmp_path: Path) -> None:
    base = (DATA / "stencil3d.yaml").read_text()
    (tmp_path / "stencil3d.cl").write_text((DATA / "stencil3d.cl").read_text())
    cases = {
        "unknown.yaml": (base.replace("VX <= BX", "VX <= BXX"), "BXX"),
        "syntax.yaml": (base.replace("VX <= BX", "VX <= "), "cannot parse"),
        "empty.yaml": (base.replace("BX: {pow2: [1, 16]}", "BX: {pow2: [3, 3]}"), "empty"),
    }
    for name, (text, expected) in cases.items():
        f = tmp_path / name
        f.write_text(text)
        out = gtune(["space", str(f), "--limits", limits_file(tmp_path)], tmp_path)
        assert out.returncode == 2, name
        assert expected in out.stderr and name in out.stderr, out.stderr


@pytest.mark.opencl
def test_real_device_space() -> None:
    from space_helpers import stencil

    from gtune.measure import select_device
    from gtune.space import solve_space

    device = select_device(None)
    space = solve_space(stencil(32), device).space
    assert space.size() > 0
    for config in space.sample(50):
        assert config["WX"] * config["WY"] * config["WZ"] <= device.max_work_group_size
