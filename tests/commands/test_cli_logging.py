"""The command line's --version, -v and --quiet; the documented campaign script."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gtune.cli import main
from tests.conftest import ROOT, run_gtune

HEAT = str(ROOT / "stencils" / "heat3d.cl")


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out.strip() == f"gtune {version}"


def test_quiet_and_verbose_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "-v", "devices"]) == 2
    assert "--quiet and --verbose" in capsys.readouterr().err


@pytest.mark.opencl
def test_verbose_logs_milestones_and_quiet_hides_the_progress(tmp_path: Path) -> None:
    args = ["run", HEAT, "--size", "16x16x16", "--technique", "global", "--budget", "4"]
    plot = tmp_path / "plots" / "convergence.png"
    loud = run_gtune("-v", *args, "--no-confirm", "--plot", str(plot), db=tmp_path / "a.db")
    assert loud.returncode == 0, loud.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    info = [ln for ln in loud.stderr.splitlines() if ln.startswith("gtune: info: ")]
    assert info[0].startswith("gtune: info: tuning stencil on ")
    assert info[-1].startswith("gtune: info: finished ") and "after 4 configurations" in info[-1]
    assert "4/4" in loud.stderr  # the progress display
    quiet = run_gtune("--quiet", *args, "--no-confirm", db=tmp_path / "b.db")
    assert quiet.returncode == 0, quiet.stderr
    assert "gtune: info" not in quiet.stderr and "4/4" not in quiet.stderr
    assert "best" in quiet.stdout


def _snippet(doc: Path, marker: str) -> str:
    text = doc.read_text()
    after = text[text.index(marker) :]
    m = re.search(r"```python\n(.*?)```", after, re.S)
    assert m is not None
    return m.group(1)


@pytest.mark.opencl
@pytest.mark.slow
def test_documented_campaign_script_runs_and_writes_its_report(tmp_path: Path) -> None:
    code = _snippet(ROOT / "docs" / "campaigns.md", "From Python:")
    (tmp_path / "campaign.py").write_text(code)
    (tmp_path / "table3.yaml").write_text(
        f"name: table3\nkernels: [{HEAT}]\nsizes: [16x16x16]\nstrategies: [random]\n"
        "technique: global\nbudget: 3\ncompile_workers: 0\n"
    )
    proc = subprocess.run(
        [sys.executable, "campaign.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "1 tasks, 0 failed" in proc.stdout
    for name in ("campaign.csv", "campaign.json", "campaign.md", "campaign.png"):
        assert (tmp_path / "runs" / "table3" / name).stat().st_size > 0
    # Dask's worker processes say nothing on the terminal
    assert "distributed." not in proc.stderr and " - INFO - " not in proc.stderr
