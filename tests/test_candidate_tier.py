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


BENCH_FILE = "tests/campaign/test_scaling_bench.py"
CANDIDATE_FILE = "tests/stencils/test_u8_swar_candidate.py"
# folders (a file named is asked for), of which only the files test_z* and test_s* are
# collected: candidates, a bench file and the package's tests among them, without
# importing every test module of both folders four times (35 -> 21 s of CPU in all)
FOLDERS = (
    "tests/stencils",
    "tests/campaign",
    "--ignore-glob=tests/stencils/test_[!z]*",
    "--ignore-glob=tests/campaign/test_[!s]*",
)


@pytest.mark.parametrize(
    ("args", "asked"),
    [
        (("--all-tiers", *FOLDERS), False),
        (("--all-tiers", "--candidates", "--bench", *FOLDERS), True),
        (("-m", "candidate or bench", *FOLDERS), True),
        ((CANDIDATE_FILE, BENCH_FILE), True),
    ],
)
def test_candidate_and_bench_tests_run_only_when_asked_for(
    args: tuple[str, ...], asked: bool
) -> None:
    """Both kinds, in one collection per way of asking; a file named on the command line
    is asked for (a candidate's file run alone runs)."""
    ids = _collected(*args)
    assert ids, "nothing collected"
    assert any("_candidate.py::" in i for i in ids) == asked
    runs = [i for i in ids if i.startswith(BENCH_FILE) and "simulated_gpus" in i]
    assert bool(runs) == asked
    if "-m" not in args:
        assert any(i.startswith(BENCH_FILE) and "too_short" in i for i in ids)
        if "tests/stencils" in args:
            assert any("test_zreg_vectors.py::" in i for i in ids)  # the package's tests stay
