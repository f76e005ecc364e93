"""The candidate templates' tests (marker ``candidate``) and the benchmark scripts'
end-to-end runs (marker ``bench``) run when asked for, not with the tiers
(tests/conftest.py): CI tests what ships."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _collected(*args: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "::" in line]


@pytest.mark.parametrize(
    ("args", "candidates"),
    [
        (("--all-tiers", "tests/stencils"), False),
        (("--all-tiers", "--candidates", "tests/stencils"), True),
        (("-m", "candidate", "tests/stencils"), True),
        (("tests/stencils/test_u8_swar_candidate.py",), True),
    ],
)
def test_candidate_tests_run_only_when_asked_for(args: tuple[str, ...], candidates: bool) -> None:
    ids = _collected(*args)
    assert ids, "nothing collected"
    assert any("_candidate.py::" in i for i in ids) == candidates
    if "-m" not in args and "tests/stencils" in args:
        assert any("test_lift.py::" in i for i in ids)  # the package's tests stay


BENCH_FILE = "tests/campaign/test_scaling_bench.py"


@pytest.mark.parametrize(
    ("args", "bench"),
    [
        (("--all-tiers", "tests/campaign"), False),
        (("--all-tiers", "--bench", "tests/campaign"), True),
        (("-m", "bench", "tests/campaign"), True),
        ((BENCH_FILE,), True),
    ],
)
def test_benchmark_script_runs_only_when_asked_for(args: tuple[str, ...], bench: bool) -> None:
    """The end-to-end runs of a benchmark script (marker ``bench``) are left out of the
    tiers; the script's cheap checks stay."""
    ids = _collected(*args)
    assert ids, "nothing collected"
    runs = [i for i in ids if i.startswith(BENCH_FILE) and "simulated_gpus" in i]
    assert bool(runs) == bench
    if "-m" not in args:
        assert any(i.startswith(BENCH_FILE) and "too_short" in i for i in ids)
