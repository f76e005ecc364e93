"""A kernel that does not build as such fails once, early, with exit 2, naming the user's
file (and line), never a driver's temporary file, and no traceback."""

from __future__ import annotations

import pytest

from gtune.measure.opencl_evaluator import user_build_log
from tests.inprocess import Cli

pytestmark = pytest.mark.opencl


def test_driver_file_names_become_the_users():
    log = "error: /root/.cache/pocl/kcache/tempfile_P7wHak.cl:2:14: expected ';'\n"
    assert user_build_log(log, "/src/k.cl") == "error: /src/k.cl:2:14: expected ';'\n"
    assert user_build_log("<kernel>:7:3: error: x", "k.cl") == "k.cl:7:3: error: x"


def _measure(gtune_here: Cli, kernel, tmp_path):
    return gtune_here("measure", str(kernel), db=tmp_path / "r.db")


def _one_message(proc, *wanted: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for text in wanted:
        assert text in proc.stderr, proc.stderr
    assert "tempfile" not in proc.stderr


def test_syntax_error_names_file_and_line(kernel_copy, tmp_path, gtune_here):
    cl = kernel_copy("naive7")
    lines = cl.read_text().splitlines()
    bad = next(i for i, line in enumerate(lines) if "const int i =" in line)
    lines[bad] = lines[bad].replace(";", "")  # a missing semicolon on this line
    cl.write_text("\n".join(lines) + "\n")
    proc = _measure(gtune_here, cl, tmp_path)
    _one_message(proc, f"{cl}:{bad + 1}", "does not compile")


def test_wrong_kernel_name(kernel_copy, tmp_path, gtune_here):
    cl = kernel_copy("naive7", lambda t: t.replace("kernel: naive7", "kernel: naive8"))
    proc = _measure(gtune_here, cl, tmp_path)
    _one_message(proc, str(cl), "naive8")


def test_bad_build_options(kernel_copy, tmp_path, gtune_here):
    cl = kernel_copy("naive7", lambda t: t + "build_options: [-cl-no-such-option]\n")
    proc = _measure(gtune_here, cl, tmp_path)
    _one_message(proc, "naive7.yaml", "build_options", "-cl-no-such-option")


def test_run_fails_once_early(kernel_copy, tmp_path, gtune_here):
    cl = kernel_copy("naive7")
    cl.write_text(cl.read_text().replace("const int i =", "const int i = undeclared +"))
    proc = gtune_here("run", str(cl), "--budget", "20", db=tmp_path / "r.db")
    _one_message(proc, str(cl), "undeclared")
