"""A stencil definition's ``original:`` is data (gtune/commands/_plain.py): its flags are
an allow-list of plain-kernel flags, never ``--reference``; its source and ``-I``
folders stay in the definition's folder unless the user trusts the folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from gtune.commands._plain import ORIGINAL_FLAGS, original_kernel
from gtune.exceptions import InputError
from gtune.stencils.definition import load_definition
from tests.conftest import ROOT, run_gtune

JACOBI = ROOT / "stencils" / "plain" / "jacobi2d.cl"


@pytest.fixture(autouse=True)
def _nothing_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test session trusts its temporary folders (tests/conftest.py): not here."""
    monkeypatch.delenv("GTUNE_TRUST_MODULES", raising=False)


FLAGS = ["--scalar", "n=NX", "--define", "DATA_TYPE=float", "--default", "WX=32,WY=8"]


def _definition(folder: Path, source: str = "jacobi2d.cl", flags: list[str] = FLAGS) -> Path:
    """A lifted-style definition of jacobi2d (its original beside it), and a planted
    ``evil.py`` that leaves a mark if it ever runs."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(JACOBI, folder / "jacobi2d.cl")
    (folder / "evil.py").write_text(
        f"open({str(folder / 'MARK')!r}, 'w').write('ran')\n"
        "def reference(**kw):\n    raise SystemExit(1)\n"
    )
    definition = {
        "dims": 2,
        "fields": ["A"],
        "output": "B",
        "terms": [
            {"field": "A", "offset": list(o), "coefficient": 0.2}
            for o in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))
        ],
        "original": {"source": source, "kernel": "jacobi2d_step", "flags": flags},
    }
    path = folder / "jacobi.stencil.yaml"
    path.write_text(yaml.safe_dump(definition, sort_keys=False))
    return path


@pytest.mark.parametrize(
    "extra",
    [
        ["--reference", "evil.py:reference"],
        ["--reference=evil.py:reference"],
        ["--ref", "evil.py:reference"],  # no abbreviation reaches --reference
        ["--trust-module", "evil.py"],
    ],
)
def test_flags_naming_code_are_refused_and_nothing_runs(tmp_path: Path, extra: list[str]) -> None:
    path = _definition(tmp_path / "defs", flags=[*FLAGS, *extra])
    done = run_gtune("run", str(path), "--size", "32x32", "--budget", "2", db=tmp_path / "r.db")
    assert done.returncode == 2, done.stderr
    assert "jacobi.stencil.yaml" in done.stderr and "original.flags" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "defs" / "MARK").exists()


def test_the_allowed_flags_give_the_original(tmp_path: Path) -> None:
    path = _definition(tmp_path / "defs")
    kernel = original_kernel(load_definition(path), {"NX": 32, "NY": 32})
    assert kernel.name == "jacobi2d_step"
    assert kernel.reference.kind == "config"  # the original's own output, no Python
    assert "--reference" not in ORIGINAL_FLAGS and "-I" in ORIGINAL_FLAGS


def test_a_source_outside_the_definitions_folder_is_refused(tmp_path: Path) -> None:
    _definition(tmp_path / "outside")
    path = _definition(tmp_path / "defs", source="../outside/jacobi2d.cl")
    with pytest.raises(InputError, match=r"original\.source: .* outside the definition's folder"):
        original_kernel(load_definition(path), {"NX": 32, "NY": 32})


def test_a_trusted_folder_may_hold_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _definition(tmp_path / "outside")
    path = _definition(tmp_path / "defs", source="../outside/jacobi2d.cl")
    monkeypatch.setenv("GTUNE_TRUST_MODULES", str(tmp_path / "outside") + "/")
    kernel = original_kernel(load_definition(path), {"NX": 32, "NY": 32})
    assert Path(kernel.source_path) == (tmp_path / "outside" / "jacobi2d.cl").resolve()


def test_include_folders_outside_the_definition_are_refused(tmp_path: Path) -> None:
    path = _definition(tmp_path / "defs", flags=[*FLAGS, "-I", "/etc"])
    with pytest.raises(InputError, match=r"original\.flags: -I: '/etc' lies outside"):
        original_kernel(load_definition(path), {"NX": 32, "NY": 32})
    (tmp_path / "defs" / "inc").mkdir()
    inside = _definition(tmp_path / "defs", flags=[*FLAGS, "-Iinc"])
    assert original_kernel(load_definition(inside), {"NX": 32, "NY": 32}).name


def test_the_command_line_names_the_file_and_the_key(tmp_path: Path) -> None:
    _definition(tmp_path / "outside")
    path = _definition(tmp_path / "defs", source="../outside/jacobi2d.cl")
    done = run_gtune("run", str(path), "--size", "32x32", "--budget", "2", db=tmp_path / "r.db")
    assert done.returncode == 2
    assert "jacobi.stencil.yaml" in done.stderr and "original.source" in done.stderr
    assert "--trust-module" in done.stderr and "Traceback" not in done.stderr


def test_lift_refuses_a_definition_that_could_not_name_its_original(tmp_path: Path) -> None:
    _definition(tmp_path / "kernels")
    out = tmp_path / "defs" / "jacobi.stencil.yaml"
    out.parent.mkdir()
    kernel = str(tmp_path / "kernels" / "jacobi2d.cl")
    done = run_gtune("lift", kernel, "--size", "32x32", *FLAGS, "-o", str(out))
    assert done.returncode == 2, done.stderr
    assert "original.source" in done.stderr and "--trust-module" in done.stderr
    assert not out.exists() and "Traceback" not in done.stderr


def test_lift_records_include_folders_relative_to_the_definition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gtune.commands._plain import definition_flags

    (tmp_path / "k" / "inc").mkdir(parents=True)
    (tmp_path / "k" / "k.cl").write_text("__kernel void k(__global float *a) {}\n")
    monkeypatch.chdir(tmp_path / "k")
    flags = definition_flags(
        ["--scalar", "n=NX", "-I", "inc"], "k.cl", tmp_path / "k" / "k.stencil.yaml"
    )
    assert flags == ["--scalar", "n=NX", "-I", "inc"]
    monkeypatch.chdir(tmp_path)
    flags = definition_flags(["-I", "k/inc"], "k/k.cl", "k/k.stencil.yaml")
    assert flags == ["-I", "inc"]  # relative to the definition, not to where lift ran
    with pytest.raises(InputError, match=r"original\.flags: -I: .* outside"):
        definition_flags(["-I", "/etc"], "k/k.cl", "k/k.stencil.yaml")


@pytest.mark.opencl
def test_a_lifted_definition_finds_its_original_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _definition(tmp_path / "defs")
    (tmp_path / "defs" / "inc").mkdir()
    out = tmp_path / "defs" / "lifted.stencil.yaml"
    monkeypatch.chdir(tmp_path)
    done = run_gtune(
        "lift", "defs/jacobi2d.cl", "--size", "32x32", *FLAGS, "-I", "defs/inc", "-o", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    original = yaml.safe_load(out.read_text())["original"]
    assert original["source"] == "jacobi2d.cl" and original["flags"][-2:] == ["-I", "inc"]
    monkeypatch.chdir(ROOT)
    kernel = original_kernel(load_definition(out), {"NX": 32, "NY": 32})
    assert kernel.name == "jacobi2d_step"
