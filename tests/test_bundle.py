"""The bundle of many tuned (device, size) of one kernel: its JSON read back, and the
choice of a configuration -- exact size, nearest legal size on the device, default --
made the same by :meth:`TunedBundle.select` and by the C header's ``gtune_select``
(compiled with the C compiler and run)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.exceptions import InputError
from gtune.tuned import (
    TunedBundle,
    bundle_header,
    read_bundle,
    tuned_bundle,
    tuned_kernel,
    write_bundle,
)
from tests.conftest import ROOT

HEAT = ROOT / "stencils" / "heat3d.cl"
CPU = "my-cpu-model-0123abcd"  # as an identity: the slug of "My CPU Model", a hash
GPU = "nvidia-h200-1a2b3c4d"
# (device identity, size, work-group) of each tuned entry; the default is WX=16, WY=4
TUNED = [
    (CPU, (32, 16, 8), {"WX": 32, "WY": 2}),
    (CPU, (64, 64, 64), {"WX": 8, "WY": 8}),
    (GPU, (64, 64, 64), {"WX": 64, "WY": 1}),
]

# (device as given, size, how, the work-group of the configuration chosen)
CASES = [
    ("My CPU Model", (32, 16, 8), "exact", (32, 2)),
    ("My CPU Model", (64, 64, 64), "exact", (8, 8)),
    (CPU, (64, 64, 64), "exact", (8, 8)),  # the identity itself
    ("My CPU Model", (64, 32, 8), "nearest", (32, 2)),  # 2+2+1 against 1+2+8
    ("My CPU Model", (64, 64, 32), "nearest", (8, 8)),  # 2+4+4 against 1+1+2
    ("My CPU Model", (16, 16, 16), "nearest", (8, 8)),  # 16 % 32: the nearer is illegal
    ("My CPU Model", (48, 48, 8), "nearest", (8, 8)),
    ("My CPU Model", (12, 12, 12), "default", (16, 4)),  # nothing tuned fits 12
    ("NVIDIA H200", (64, 64, 64), "exact", (64, 1)),
    ("NVIDIA H200", (128, 128, 128), "nearest", (64, 1)),
    ("NVIDIA H200", (96, 64, 64), "default", (16, 4)),  # 96 % 64
    ("Another GPU", (64, 64, 64), "default", (16, 4)),  # a device never tuned
]

DRIVER = r"""
#include "heat3d_bundle.h"
#include <stdlib.h>
int main(int argc, char **argv) {
    int i;
    for (i = 1; i + 3 < argc; i += 4) {
        gtune_choice c = gtune_select(argv[i], atol(argv[i + 1]), atol(argv[i + 2]),
                                      atol(argv[i + 3]));
        printf("%d %d %d %d %s|%zu %zu %zu|%zu %zu %zu|%s\n", c.how, c.config, c.entry,
               c.legal, c.source_file, c.global_size[0], c.global_size[1], c.global_size[2],
               c.local_size[0], c.local_size[1], c.local_size[2], c.build_options);
    }
    return 0;
}
"""


def _sizes(size: tuple[int, ...]) -> dict[str, int]:
    return dict(zip(("NX", "NY", "NZ"), size, strict=True))


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bundle")
    kernel = load_kernel(str(HEAT), {"NX": 32, "NY": 16, "NZ": 8})
    default = kernel.default_config()
    assert default is not None
    members = [
        tuned_kernel(
            kernel.with_sizes(_sizes(size)),
            {**default, **group},
            device_identity=device,
            time_s=1e-4 * (n + 1),
            confirmed=True,
        )
        for n, (device, size, group) in enumerate(TUNED)
    ]
    bundle, sources = tuned_bundle(members, tuned_kernel(kernel, default), "heat3d")
    write_bundle(bundle, sources, folder, "heat3d", force=False)
    return folder


def test_the_json_reads_back_with_every_field(bundle_dir: Path) -> None:
    bundle = read_bundle(bundle_dir / "heat3d_bundle.json")
    data = json.loads((bundle_dir / "heat3d_bundle.json").read_text())
    assert bundle.to_dict() == data
    assert data["kernel"] == "stencil" and data["name"] == "heat3d:stencil"
    assert [a["name"] for a in data["arguments"]] == ["src", "dst"]
    # one configuration per distinct configuration, the default among them
    assert len(bundle.configurations) == 4
    assert bundle.default_index is not None
    assert data["default"]["config"]["WX"] == 16 and data["default"]["config"]["WY"] == 4
    assert sorted(e["device_identity"] for e in data["entries"]) == [CPU, CPU, GPU]
    for e in data["entries"]:
        config = bundle.configurations[e["config_index"]]
        assert e["device"] == e["device_identity"].rsplit("-", 1)[0]
        assert e["config"] == config.configuration and e["source_file"] == config.source_file
        # the launch values are the formulas at the entry's size
        tuned = bundle.tuned(e["config_index"], e["sizes"])
        glob, loc = tuned.launch_sizes(e["sizes"])
        assert loc == (e["config"]["WX"], e["config"]["WY"], 1)
        assert e["global_values"] == list(glob) and e["local_values"] == list(loc)
        # its source is the .cl beside the JSON, with the configuration fixed in it
        source = bundle.source(e["config_index"])
        assert f"#define WX {e['config']['WX']}\n" in source
        assert (bundle_dir / e["source_file"]).read_text() == source
    for c in bundle.configurations:
        wx, wy = c.configuration["WX"], c.configuration["WY"]
        assert set(c.size_checks) <= set(c.valid_when)
        assert f"NX % {wx} == 0" in c.size_checks or wx == 1
        assert f"NY % {wy} == 0" in c.size_checks or wy == 1


@pytest.mark.parametrize(("device", "size", "how", "group"), CASES)
def test_python_select(
    bundle_dir: Path, device: str, size: tuple[int, ...], how: str, group: tuple[int, int]
) -> None:
    bundle = read_bundle(bundle_dir / "heat3d_bundle.json")
    choice = bundle.select(device, _sizes(size))
    assert choice.how == how
    config = choice.configuration.configuration
    assert (config["WX"], config["WY"]) == group
    assert choice.legal == (size[0] % group[0] == 0 and size[1] % group[1] == 0)
    assert choice.local_size == (group[0], group[1], 1) and choice.global_size == size
    assert choice.build_options == tuple(f"-D{n}={v}" for n, v in _sizes(size).items())
    if how == "default":
        assert choice.entry is None
    else:
        assert choice.entry is not None and choice.entry.config_index == choice.configuration.index


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_c_select_chooses_as_python_does(bundle_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = tmp_path / "driver"
    flags = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-Wno-unused-function"]
    built = subprocess.run(
        ["cc", *flags, "-I", str(bundle_dir), "-o", str(exe), str(tmp_path / "driver.c")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    argv = [str(v) for device, size, _, _ in CASES for v in (device, *size)]
    argv += ["My CPU Model", "0", "8", "8"]  # a size not positive: no choice
    ran = subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert len(lines) == len(CASES) + 1
    bundle = read_bundle(bundle_dir / "heat3d_bundle.json")
    hows = {"exact": 0, "nearest": 1, "default": 2}
    for (device, size, how, _), line in zip(CASES, lines, strict=False):
        head, glob, loc, options = line.split("|")
        c_how, c_config, c_entry, c_legal, c_file = head.split()
        py = bundle.select(device, _sizes(size))
        assert int(c_how) == hows[how] == hows[py.how], (device, size, line)
        assert int(c_config) == py.configuration.index and c_file == py.configuration.source_file
        entry = -1 if py.entry is None else bundle.entries.index(py.entry)
        assert int(c_entry) == entry and bool(int(c_legal)) == py.legal
        assert tuple(int(v) for v in glob.split()) == py.global_size
        assert tuple(int(v) for v in loc.split()) == py.local_size
        assert options.split() == list(py.build_options)
    assert lines[-1].split()[:2] == ["-1", "-1"]
    with pytest.raises(InputError, match="not positive"):
        bundle.select("My CPU Model", {"NX": 0, "NY": 8, "NZ": 8})


def _broken(bundle_dir: Path, tmp_path: Path, edit: dict[str, object]) -> Path:
    data = json.loads((bundle_dir / "heat3d_bundle.json").read_text())
    for key, value in edit.items():
        target = data
        *path, last = key.split(".")
        for part in path:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value
    out = tmp_path / "broken.json"
    out.write_text(json.dumps(data))
    return out


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"format": "gtune-tuned-kernel"}, "not a bundle"),
        ({"format_version": 99}, "newer gtune"),
        ({"entries.0.config_index": 17}, "no configuration 17"),
        ({"configurations.0.source_file": "../elsewhere.cl"}, "not a plain file name"),
        ({"entries.0.sizes": {"NX": 4}}, "does not name NX, NY, NZ"),
        ({"entries": "nothing"}, "malformed bundle"),
    ],
)
def test_a_malformed_bundle_is_one_error_naming_the_file(
    bundle_dir: Path, tmp_path: Path, edit: dict[str, object], message: str
) -> None:
    path = _broken(bundle_dir, tmp_path, edit)
    with pytest.raises(InputError, match=message) as caught:
        read_bundle(path)
    assert str(path) in str(caught.value)


def test_nothing_tuned_here_and_no_default_is_an_error(bundle_dir: Path) -> None:
    bundle = read_bundle(bundle_dir / "heat3d_bundle.json")
    bare = TunedBundle(**{**bundle.__dict__, "default_index": None})
    with pytest.raises(InputError, match="no default configuration"):
        bare.select("Another GPU", _sizes((64, 64, 64)))
    assert bare.select("NVIDIA H200", _sizes((64, 64, 64))).how == "exact"


def test_one_device_and_size_twice_is_refused() -> None:
    kernel = load_kernel(str(HEAT), {"NX": 32, "NY": 16, "NZ": 8})
    default = kernel.default_config()
    assert default is not None
    one = tuned_kernel(kernel, default, device_identity=CPU)
    other = tuned_kernel(kernel, {**default, "WX": 32}, device_identity=CPU)
    with pytest.raises(InputError, match="given twice"):
        tuned_bundle([one, other], None, "heat3d")
    bundle, sources = tuned_bundle([one], None, "heat3d")
    assert bundle.default_index is None and list(sources) == ["heat3d_config0.cl"]
    assert "#define HEAT3D_STENCIL_DEFAULT_CONFIG -1" in bundle_header(bundle)
