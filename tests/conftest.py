from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.description import TRUST_ENV

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent

# The test tiers. Bare ``python -m pytest`` runs the fast tier: pure tests and tests that
# replay recorded measurements, less those marked ``slow``. The real tiers run real
# parts: OpenCL kernels on PoCL, the MiniZinc binary, a throw-away PostgreSQL server, a
# Dask LocalCluster. They (and the slow tests) run
# with ``--all-tiers`` (``./bootstrap.sh test`` and CI pass it), with ``-m`` naming
# markers, or when test files or folders are named on the command line.
REAL_TIERS = ("opencl", "minizinc", "postgres", "dask")
# Fixtures that bring a real part with them: a test using one is in that tier.
FIXTURE_TIERS = {"pg_cluster": "postgres", "pg_url": "postgres"}
# Parametrized fixtures whose value picks a real part (the store backends).
PARAM_TIERS = {("store_url", "postgresql"): "postgres"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all-tiers",
        action="store_true",
        help="run every test tier: fast, plus OpenCL (PoCL), MiniZinc, PostgreSQL and Dask",
    )


def _fast_tier_only(config: pytest.Config) -> bool:
    return not (
        config.getoption("--all-tiers") or config.option.markexpr or config.option.file_or_dir
    )


def _mark_tiers(item: pytest.Item) -> None:
    names = set(getattr(item, "fixturenames", ()))
    for fixture, tier in FIXTURE_TIERS.items():
        if fixture in names:
            item.add_marker(tier)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        for (fixture, value), tier in PARAM_TIERS.items():
            if callspec.params.get(fixture) == value:
                item.add_marker(tier)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        _mark_tiers(item)
    if not _fast_tier_only(config):
        return
    real = [any(i.get_closest_marker(t) for t in (*REAL_TIERS, "slow")) for i in items]
    if any(real):
        config.hook.pytest_deselected(items=[i for i, r in zip(items, real, strict=True) if r])
        items[:] = [i for i, r in zip(items, real, strict=True) if not r]


def pytest_report_header(config: pytest.Config) -> str:
    if _fast_tier_only(config):
        return (
            "gtune: fast tier only (deselected: " + ", ".join((*REAL_TIERS, "slow")) + "); "
            "--all-tiers or ./bootstrap.sh test runs every tier"
        )
    return "gtune: every tier selected (" + ", ".join(("fast", *REAL_TIERS)) + ")"


@pytest.fixture(scope="session", autouse=True)
def trusted_test_references(tmp_path_factory: pytest.TempPathFactory):
    """The tests' own Python references run: those in tests/data and their copies in
    the session's temporary folders (a reference file runs only when trusted)."""
    before = os.environ.get(TRUST_ENV)
    trusted = [str(DATA), str(tmp_path_factory.getbasetemp().resolve())]
    os.environ[TRUST_ENV] = ",".join(filter(None, [before, *trusted]))
    yield
    if before is None:
        os.environ.pop(TRUST_ENV, None)
    else:
        os.environ[TRUST_ENV] = before


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def kernel_copy(tmp_path: Path):
    """Copy a test kernel (cl + yaml + reference) into tmp_path, with YAML edits."""

    def make(name: str = "naive7", edit=None) -> Path:
        for f in DATA.glob(f"{name}*"):
            shutil.copy(f, tmp_path / f.name)
        desc = tmp_path / f"{name}.yaml"
        if edit is not None:
            desc.write_text(edit(desc.read_text()))
        return tmp_path / f"{name}.cl"

    return make


def run_gtune(
    *args: str,
    db: Path | None = None,
    timeout: float = 300,
    env_extra: dict[str, str] | None = None,
    **kw,
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "gtune"]
    if db is not None:
        cmd += ["--db", str(db)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", **(env_extra or {}))
    return subprocess.run(
        cmd + list(args), capture_output=True, text=True, timeout=timeout, env=env, **kw
    )
