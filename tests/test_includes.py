"""Headers a kernel includes belong to its identity: a changed header is measured anew."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.includes import include_dirs, included_names
from tests.inprocess import Cli


def _with_header(kernel_copy, tmp_path: Path) -> Path:
    """naive7 scaled by SCALE from ``scale.h``, which includes ``inner/one.h``."""
    cl = kernel_copy("naive7")
    text = cl.read_text().replace("out[i] = c0 * in[i] + c1", "out[i] = SCALE * c0 * in[i] + c1")
    cl.write_text('#include "scale.h"\n' + text)
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "one.h").write_text("#define ONE 1.0f\n")
    (tmp_path / "scale.h").write_text('#include "inner/one.h"\n#define SCALE ONE\n')
    return cl


def test_include_directives_and_folders_are_read() -> None:
    text = b'#include "a.h"\n  #  include <b/c.h>\n// #include "no.h"\nint x;'
    assert included_names(text) == ["a.h", "b/c.h"]
    assert include_dirs(["-I", "/x", "-I/y", "-DZ=1"]) == [Path("/x"), Path("/y")]


def test_every_header_changes_the_identity(kernel_copy, tmp_path: Path) -> None:
    cl = _with_header(kernel_copy, tmp_path)
    first = load_kernel(cl)
    assert first.headers_digest and load_kernel(cl).identity() == first.identity()
    assert f"-I{tmp_path.resolve()}" in first.build_options
    (tmp_path / "inner" / "one.h").write_text("#define ONE 2.0f\n")  # nested header
    second = load_kernel(cl)
    assert second.identity() != first.identity()
    (tmp_path / "scale.h").write_text('#include "inner/one.h"\n#define SCALE (ONE)\n')
    assert load_kernel(cl).identity() != second.identity()


def test_a_kernel_without_includes_keeps_its_identity(data_dir: Path) -> None:
    kernel = load_kernel(data_dir / "naive7.cl")
    assert kernel.headers_digest == ""
    assert not any(o.startswith("-I") for o in kernel.build_options)


@pytest.mark.opencl
@pytest.mark.usefixtures("shared_workers")
def test_a_changed_header_is_not_served_from_the_store(
    kernel_copy, tmp_path: Path, gtune_here: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    cl = _with_header(kernel_copy, tmp_path)
    db = tmp_path / "r.db"
    args = ("measure", str(cl), "--config", "WX=8,WY=4,WZ=1", "--json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    first = gtune_here(*args, db=db)  # the header is found beside the kernel
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["status"] == "ok"
    again = gtune_here(*args, db=db)
    assert json.loads(again.stdout)["from_store"] is True  # unchanged: served
    (tmp_path / "inner" / "one.h").write_text("#define ONE 2.0f\n")
    second = gtune_here(*args, db=db)
    data = json.loads(second.stdout)
    assert data["status"] == "wrong_result" and data["from_store"] is False, second.stdout
