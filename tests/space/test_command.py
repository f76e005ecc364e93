"""``gtune space`` end to end, in a subprocess like a user runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from space_helpers import DATA, h100_limits

from tests.procs import alive, children, command_name, start_time

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


def test_one_technique_solved_alone(tmp_path: Path) -> None:
    """``--technique``: the technique's configurations, its rules in the model that
    ``--emit-mzn`` writes; the techniques of the description share the space out."""
    desc = str(DATA / "stencil3d.yaml")
    common = ["space", desc, "--limits", limits_file(tmp_path), "--size", "32x32x32", "--json"]
    whole = gtune(common, tmp_path)
    assert whole.returncode == 0, whole.stderr
    parts = {}
    for technique in ("global", "vector", "local", "image"):
        out = gtune(
            [*common, "--technique", technique, "--emit-mzn", str(tmp_path / technique)], tmp_path
        )
        assert out.returncode == 0, out.stderr
        (report,) = json.loads(out.stdout)
        assert report["technique"] == technique
        parts[technique] = report["pruned"]
        mzn = (tmp_path / technique / f"stencil3d.{technique}.mzn").read_text()
        assert f"techniques.{technique}: " in mzn
    (report,) = json.loads(whole.stdout)
    assert report["technique"] == "" and sum(parts.values()) == report["pruned"]
    assert parts["vector"] > 0 and parts["global"] > 0
    text = gtune([*common[:-1], "--technique", "vector"], tmp_path)
    assert text.returncode == 0 and "[vector]" in text.stdout.splitlines()[0]
    bad = gtune([*common, "--technique", "nope"], tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "unknown technique 'nope'" in bad.stderr and "global" in bad.stderr


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


def _sleeping_minizinc(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A stand-in MiniZinc whose solver (a child) sleeps; its pid lands in a file."""
    fake = tmp_path / "bin" / "minizinc"
    fake.parent.mkdir()
    pids = tmp_path / "solver.pid"
    fake.write_text(
        "#!/bin/sh\n"
        '[ "$1" = --version ] && { echo "MiniZinc to FlatZinc converter, version 2.6.4"; '
        "exit 0; }\n"
        f"sleep 120 & echo $! > {pids}\nwait\n"
    )
    fake.chmod(0o755)
    env = {
        **os.environ,
        "GTUNE_CACHE": str(tmp_path / "cache"),
        "PATH": f"{fake.parent}:/usr/bin:/bin",
    }
    return env, pids


@pytest.mark.opencl
def test_ctrl_c_during_the_solve_of_a_run_stops_it_at_once(tmp_path: Path) -> None:
    env, pids = _sleeping_minizinc(tmp_path)
    heat = str(Path(__file__).parents[2] / "stencils" / "heat3d.cl")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gtune", "--db", str(tmp_path / "r.db"), "run", heat],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (pids.exists() and pids.read_text().strip()):
        assert time.monotonic() < deadline and proc.poll() is None, "the solver did not start"
        time.sleep(0.05)
    solver = int(pids.read_text())
    born = start_time(solver)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - sent < 10 and "Traceback" not in err
    assert not alive(solver, born)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_no_solver_outlives_a_stopped_space_solve(tmp_path: Path, sig: signal.Signals) -> None:
    """The solver MiniZinc starts (here a stand-in that sleeps) ends with gtune."""
    env, pids = _sleeping_minizinc(tmp_path)
    desc = str(DATA / "stencil3d.yaml")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gtune", "space", desc, "--limits", limits_file(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().strip()):
        assert time.monotonic() < deadline and proc.poll() is None, "the solver did not start"
        time.sleep(0.05)
    solver = int(pids.read_text())
    born = start_time(solver)  # the pid alone may be another process's by the end
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode in (2, 130) and "Traceback" not in err, err
    # the stand-in solver sleeps 120 s: one that outlived gtune would live on for
    # minutes; 15 s leaves room for a loaded two-core CI machine (5 s was passed by 23 ms)
    deadline = time.monotonic() + 15
    while alive(solver, born):
        assert time.monotonic() < deadline, "the solver outlived gtune"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_terminals_ctrl_c_does_not_cut_an_enumeration_short(tmp_path: Path) -> None:
    """A campaign worker ignores SIGINT (the campaign decides what Ctrl-C means), but a
    terminal's Ctrl-C reaches its whole process group. Gecode, which ends its search at
    SIGINT and prints the part it found, runs in a session of its own: the space comes
    out whole (laplacian4 at 128³: hundreds of thousands of configurations, Gecode runs
    for seconds; at 256³ the two solves took three times as long for the same check)."""
    from space_helpers import h100_limits

    from gtune.description import load_kernel
    from gtune.space import solve_space

    root = Path(__file__).parents[2]
    code = (
        "import signal, sys\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from space_helpers import h100_limits\n"
        "from gtune.description import load_kernel\n"
        "from gtune.space import solve_space\n"
        f"k = load_kernel({str(root / 'stencils' / 'laplacian4.cl')!r}, "
        "{'NX': 128, 'NY': 128, 'NZ': 128})\n"
        "print(solve_space(k, h100_limits(), use_cache=False, workers=2).space.size())\n"
    )
    env = {**os.environ, "GTUNE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's
    )
    deadline = time.monotonic() + 120
    while not any(command_name(c) == "fzn-gecode" for c in children(proc.pid)):
        assert time.monotonic() < deadline and proc.poll() is None, "Gecode did not start"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    kernel = load_kernel(root / "stencils" / "laplacian4.cl", {"NX": 128, "NY": 128, "NZ": 128})
    whole = solve_space(kernel, h100_limits(), use_cache=False, workers=2).space.size()
    assert int(out.split()[-1]) == whole
