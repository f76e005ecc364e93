"""Names and options reach the exported C header as data (gtune/tuned.py through
gtune/escape.py): a device name or build option that would end a comment, start a
line of its own or act as a printf conversion compiles into nothing but text."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.tuned import tuned_kernel, write_tuned
from tests.conftest import ROOT

DEVICE = "gpu */ int injected = 1; /* \n#error reached\n ??/"
OPTION = "-DLABEL=100%*/"


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_a_hostile_device_name_and_option_stay_text(tmp_path: Path) -> None:
    kernel = load_kernel(ROOT / "stencils" / "heat3d.cl", {"NX": 64, "NY": 32, "NZ": 16})
    tuned = tuned_kernel(kernel, dict(kernel.default_config() or {}), device=DEVICE)
    tuned = dataclasses.replace(tuned, build_options=(*tuned.build_options, OPTION))
    write_tuned(tuned, tmp_path, "heat")
    header = (tmp_path / "heat.h").read_text()
    assert "\n#error" not in header and "*/ int injected" not in header
    program = tmp_path / "main.c"
    program.write_text(
        '#include <stdio.h>\n#include "heat.h"\n'
        "int injected = 2; /* a second definition would not compile */\n"
        "int main(void) {\n  char opts[512];\n"
        "  snprintf(opts, sizeof opts, HEAT3D_STENCIL_BUILD_OPTIONS_FORMAT,\n"
        "           HEAT3D_STENCIL_BUILD_OPTIONS_ARGS(64, 32, 16));\n"
        '  printf("%s\\n", opts);\n  return injected - 2;\n}\n'
    )
    exe = tmp_path / "main"
    subprocess.run(["cc", "-Wall", "-Werror", "-o", str(exe), str(program)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.strip().endswith(OPTION)  # the % came through as itself
