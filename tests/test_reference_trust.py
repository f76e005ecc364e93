"""A description's Python reference file runs only when trusted, in every command."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gtune.description import TRUST_ENV, from_dict, load_kernel
from gtune.exceptions import InputError
from tests.conftest import DATA, ROOT, run_gtune


def _untrusted_copy(folder: Path) -> Path:
    """naive7 with its reference and a mark the reference leaves when it is imported."""
    folder.mkdir(parents=True)
    for f in DATA.glob("naive7*"):
        shutil.copy(f, folder / f.name)
    ref = folder / "naive7_ref.py"
    ref.write_text(f"open({str(folder / 'MARK')!r}, 'a').write('ran\\n')\n" + ref.read_text())
    return folder / "naive7.cl"


def test_an_untrusted_reference_file_is_refused_by_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TRUST_ENV, "")
    kernel = _untrusted_copy(tmp_path / "k")
    with pytest.raises(InputError, match="not trusted") as caught:
        load_kernel(kernel)
    assert "--trust-module" in caught.value.render()
    # trusted by its file, or by a folder above it; the trust travels with the kernel
    for entry in (str(kernel.parent / "naive7_ref.py"), str(tmp_path)):
        loaded = load_kernel(kernel, trust_modules=[entry])
        assert loaded.reference.kind == "python"
        assert from_dict(loaded.to_dict()).reference.target == loaded.reference.target
    assert not (kernel.parent / "MARK").exists()  # loading never runs it


@pytest.mark.parametrize(
    "command",
    [
        ["space"],
        ["measure", "--config", "WX=8,WY=4,WZ=1"],
        ["run", "--budget", "3"],
    ],
)
def test_every_command_refuses_an_untrusted_reference_file(
    tmp_path: Path, command: list[str]
) -> None:
    kernel = _untrusted_copy(tmp_path / "k")
    verb, *rest = command
    done = run_gtune(verb, str(kernel), *rest, db=tmp_path / "r.db", env_extra={TRUST_ENV: ""})
    assert done.returncode == 2, done.stderr
    assert "not trusted" in done.stderr and "--trust-module" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (kernel.parent / "MARK").exists()


@pytest.mark.opencl
def test_a_trusted_reference_file_runs(tmp_path: Path) -> None:
    kernel = _untrusted_copy(tmp_path / "k")
    done = run_gtune(
        "--trust-module",
        str(kernel.parent),
        "measure",
        str(kernel),
        "--config",
        "WX=8,WY=4,WZ=1",
        db=tmp_path / "r.db",
        env_extra={TRUST_ENV: ""},
    )
    assert done.returncode == 0, done.stderr
    assert (kernel.parent / "MARK").exists()
    assert " ok " in done.stdout or "│ ok" in done.stdout


def test_references_shipped_with_gtune_are_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TRUST_ENV, "")
    assert load_kernel(ROOT / "stencils" / "hotspot.cl").reference.kind == "python"
