from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gtune.kernel import TRUST_ENV

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


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
