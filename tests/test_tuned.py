"""The tuned kernel an application takes (pure: formulas, files, the C header)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.expr import parse
from gtune.tuned import TunedKernel, specialise, tuned_kernel, write_tuned
from tests.conftest import ROOT

HEAT = ROOT / "stencils" / "heat3d.cl"
JACOBI = ROOT / "stencils" / "jacobi2d.cl"


def _heat(**config: int) -> TunedKernel:
    kernel = load_kernel(HEAT, {"NX": 64, "NY": 32, "NZ": 16})
    values = dict(kernel.default_config() or {})
    values.update(config)
    return tuned_kernel(kernel, values, device="dev")


@pytest.mark.parametrize(
    ("text", "values", "want"),
    [
        ("NX / (BX*CX)", {"BX": 4, "CX": 1}, "NX / 4"),
        ("NZ / (CZ*ZC)", {"CZ": 1, "ZC": 1}, "NZ"),
        ("(NX + WX - 1) / WX * WX", {"WX": 32}, "(NX + 32 - 1) / 32 * 32"),
        ("LOCAL == 0 or 4 * (WX + 2) <= LOCAL_MEM_SIZE", {"LOCAL": 0, "WX": 8}, "True"),
        (
            "LOCAL == 0 or 4 * (WX + 2) <= LOCAL_MEM_SIZE",
            {"LOCAL": 1, "WX": 8},
            "40 <= LOCAL_MEM_SIZE",
        ),
        ("min(WX*BX, NX)", {"WX": 8, "BX": 2}, "min(16, NX)"),
        ("STREAM == 1 or ZC == 1", {"STREAM": 0, "ZC": 1}, "True"),
        ("WX if STREAM else NX", {"WX": 8, "STREAM": 0}, "NX"),
    ],
)
def test_formulas_keep_the_size_and_fold_the_tuned_values(
    text: str, values: dict[str, int], want: str
) -> None:
    assert specialise(parse(text), values) == want


def test_formulas_mean_what_the_original_means_at_every_size() -> None:
    """The folded formula and the original agree wherever both are evaluated."""
    original = parse("(NX + WX*BX - 1) / (WX*BX) * WX + NY % (CY*2)")
    folded = parse(specialise(original, {"WX": 8, "BX": 3, "CY": 2}))
    for nx in range(1, 70, 7):
        for ny in (1, 5, 16):
            env = {"NX": nx, "NY": ny}
            assert folded.evaluate(env) == original.evaluate({**env, "WX": 8, "BX": 3, "CY": 2})


def test_launch_sizes_and_build_options_follow_the_problem_size() -> None:
    tuned = _heat(WX=8, BX=4, VX=4, CZ=2)
    assert tuned.global_size == ("NX / 4", "NY", "NZ / 2")
    assert tuned.local_size == ("8", "4", "1")
    assert tuned.launch_sizes() == ((16, 32, 8), (8, 4, 1))
    assert tuned.launch_sizes({"NX": 128, "NY": 64, "NZ": 32}) == ((32, 64, 16), (8, 4, 1))
    assert tuned.compile_options({"NX": 128, "NY": 64, "NZ": 32}) == [
        "-DNX=128",
        "-DNY=64",
        "-DNZ=32",
    ]
    assert "NX % 32 == 0" in tuned.valid_when
    assert "NX / 4 % 8 == 0" in tuned.valid_when  # whole work-groups
    assert "NZ / 2 % 1 == 0" not in tuned.valid_when
    assert "NX % 32 == 0" in tuned.violations({"NX": 48, "NY": 64, "NZ": 32})
    assert tuned.violations({"NX": 96, "NY": 64, "NZ": 32}) == []


def test_the_source_has_the_configuration_fixed_and_keeps_the_kernels_name() -> None:
    tuned = _heat(WX=32, STREAM=1, ZC=4)
    kernel = load_kernel(HEAT, {"NX": 64, "NY": 32, "NZ": 16})
    full = tuned_kernel(kernel, tuned.configuration, full_template=True)
    for name, value in tuned.configuration.items():
        assert f"#define {name} {value}\n" in full.source
    assert full.source.endswith(kernel.source)
    # the default: specialised, the parameters it uses fixed the same way
    assert "#define WX 32\n" in tuned.source and "#define ZC 4\n" in tuned.source
    assert "#if STREAM" not in tuned.source and len(tuned.source) < len(full.source) / 4
    assert tuned.kernel == "stencil" and tuned.name == "heat3d:stencil"
    assert [a["name"] for a in tuned.arguments] == ["src", "dst"]
    assert tuned.arguments[1]["init"] == "copy:src"


def test_an_image_configuration_says_the_input_is_an_image() -> None:
    tuned = _heat(IMAGE=1)
    assert [a["kind"] for a in tuned.arguments] == ["image", "buffer"]
    assert any("IMAGE_SUPPORT" in c or "IMAGE3D" in c for c in tuned.valid_when)


def test_a_2d_kernel_has_two_sizes() -> None:
    kernel = load_kernel(JACOBI, {"NX": 64, "NY": 32})
    tuned = tuned_kernel(kernel, dict(kernel.default_config() or {}))
    assert tuned.size_names == ("NX", "NY") and len(tuned.tuned_size) == 2
    assert tuned.launch_sizes()[0] == kernel.launch_sizes(kernel.default_config() or {})[0]


def test_a_configuration_that_breaks_a_constraint_or_misses_a_parameter_is_refused() -> None:
    kernel = load_kernel(HEAT, {"NX": 64, "NY": 32, "NZ": 16})
    config = dict(kernel.default_config() or {})
    with pytest.raises(InputError, match="constraint"):
        tuned_kernel(kernel, {**config, "VX": 4, "BX": 2})
    with pytest.raises(InputError, match="missing WX"):
        tuned_kernel(kernel, {k: v for k, v in config.items() if k != "WX"})


def test_json_round_trips(tmp_path: Path) -> None:
    tuned = _heat(WX=8, CX=2)
    paths = write_tuned(tuned, tmp_path)
    assert [p.name for p in paths] == ["heat3d.cl", "heat3d.json", "heat3d.h"]
    again = TunedKernel.load(paths[1])
    assert again == tuned
    assert paths[0].read_text() == tuned.source
    (tmp_path / "other.json").write_text('{"results": []}')
    with pytest.raises(InputError, match="not a tuned kernel"):
        TunedKernel.load(tmp_path / "other.json")


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_the_c_header_compiles_and_gives_the_same_numbers(tmp_path: Path) -> None:
    tuned = _heat(WX=8, BX=4, VX=4, CZ=2)
    write_tuned(tuned, tmp_path, "heat")
    program = tmp_path / "main.c"
    program.write_text(
        '#include <stdio.h>\n#include <string.h>\n#include "heat.h"\n'
        "int main(void) {\n"
        "  char opts[256];\n"
        "  snprintf(opts, sizeof opts, HEAT3D_STENCIL_BUILD_OPTIONS_FORMAT,\n"
        "           HEAT3D_STENCIL_BUILD_OPTIONS_ARGS(128, 64, 32));\n"
        '  printf("%s|%s|%zu %zu %zu|%zu %zu %zu|%d|%zu\\n", HEAT3D_STENCIL_KERNEL_NAME, opts,\n'
        "         HEAT3D_STENCIL_GLOBAL_0(128, 64, 32), HEAT3D_STENCIL_GLOBAL_1(128, 64, 32),\n"
        "         HEAT3D_STENCIL_GLOBAL_2(128, 64, 32), HEAT3D_STENCIL_LOCAL_0(128, 64, 32),\n"
        "         HEAT3D_STENCIL_LOCAL_1(128, 64, 32), HEAT3D_STENCIL_LOCAL_2(128, 64, 32),\n"
        "         HEAT3D_STENCIL_VX, strlen(heat3d_stencil_source));\n"
        "  return 0;\n}\n"
    )
    exe = tmp_path / "main"
    subprocess.run(
        ["cc", "-Wall", "-Werror", "-o", str(exe), str(program)], check=True, cwd=tmp_path
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.strip()
    sizes = {"NX": 128, "NY": 64, "NZ": 32}
    glob, loc = tuned.launch_sizes(sizes)
    assert out == "|".join(
        [
            "stencil",
            " ".join(tuned.compile_options(sizes)),
            " ".join(map(str, glob)),
            " ".join(map(str, loc or ())),
            "4",
            str(len(tuned.source.encode())),
        ]
    )
