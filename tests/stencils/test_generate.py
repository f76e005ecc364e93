"""Generation: files, reproducibility, descriptions that load, the reference, the CLI."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from gtune.description import load_kernel
from gtune.stencils import StencilShape, generate, synthetic
from gtune.stencils.reference import weighted_sum
from tests.inprocess import Cli

SMALL = (16, 16, 16)


def test_generated_kernel_loads_with_all_techniques(tmp_path: Path) -> None:
    shape = StencilShape("diamond", 2, "xz", 2)
    (g,) = generate([shape], tmp_path, size=(32, 16, 8))
    kernel = load_kernel(g.description)
    assert kernel.sizes == {"NX": 32, "NY": 16, "NZ": 8}
    assert set(kernel.techniques) == {"global", "vec", "local", "image", "stream"}
    assert kernel.features["size"] == shape.size
    assert kernel.features["unique_dim"] == "y"
    assert kernel.flops_per_point == 2 * shape.size
    assert kernel.reference.target == "gtune.stencils.reference:weighted_sum"
    default = kernel.default_config()
    assert default is not None
    assert kernel.launch_sizes(default) == ((32, 16, 8), (16, 4, 1))
    streaming = {**default, "STREAM": 1, "ZC": 4, "CX": 2}
    assert kernel.launch_sizes(streaming) == ((16, 16, 2), (16, 4, 1))
    assert kernel.launch.local_memory_bytes is not None
    plane = (16 * 2 + 2 * shape.extent["x"]) * (4 + 2 * shape.extent["y"])
    assert kernel.launch.local_memory_bytes.evaluate(kernel.env(streaming)) == 2 * 4 * plane
    assert f"#define RX {shape.extent['x']}" in kernel.source


def test_same_seed_same_kernel_other_seed_other_weights(tmp_path: Path) -> None:
    shapes = [StencilShape("star", 3, "xyz", 2), StencilShape("dense", 1, "z", 3)]
    a = generate(shapes, tmp_path / "a", seed=7, size=SMALL)
    b = generate(shapes[::-1], tmp_path / "b", seed=7, size=SMALL)
    c = generate(shapes, tmp_path / "c", seed=8, size=SMALL)
    for name in ("star_3d_xyz_r2", "dense_1d_z_r3"):
        for ext in (".cl", ".yaml"):
            text = (tmp_path / "a" / (name + ext)).read_text()
            assert text == (tmp_path / "b" / (name + ext)).read_text()
        assert (tmp_path / "a" / f"{name}.cl").read_text() != (
            tmp_path / "c" / f"{name}.cl"
        ).read_text()
    assert len(a) == len(b) == len(c) == 2


def test_weights_are_nonzero_and_float32_exact() -> None:
    stencil = synthetic(StencilShape("dense", 3, "xyz", 2), seed=3)
    w = np.array(stencil.weights)
    assert np.all(w > 0)
    assert np.array_equal(w.astype(np.float32).astype(np.float64), w)
    assert len(set(stencil.weights)) > 1


def test_intensity_two_doubles_flops() -> None:
    shape = StencilShape("star", 2, "xy", 1)
    one, two = synthetic(shape), synthetic(shape, intensity=2)
    assert two.flops_per_point == 2 * one.flops_per_point
    assert two.name.endswith("_i2")


def test_weighted_sum_matches_pointwise_loop() -> None:
    """The vectorised reference against a direct loop over interior points."""
    stencil = synthetic(StencilShape("thumbtack", 3, "x", 1), seed=1)
    rng = np.random.default_rng(0)
    src = rng.random((6, 7, 8), dtype=np.float32)
    dst = src.copy()
    got = weighted_sum(
        {"src": src, "dst": dst},
        {},
        {},
        input="src",
        output="dst",
        offsets=[list(o) for o in stencil.offsets],
        weights=list(stencil.weights),
    )["dst"]
    rx, ry, rz = stencil.extent
    want = src.astype(np.float64).copy()
    for z, y, x in itertools.product(range(6), range(7), range(8)):
        if rz <= z < 6 - rz and ry <= y < 7 - ry and rx <= x < 8 - rx:
            want[z, y, x] = sum(
                w * float(src[z + dz, y + dy, x + dx])
                for (dx, dy, dz), w in zip(stencil.offsets, stencil.weights, strict=True)
            )
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert np.array_equal(got[0], src[0])  # boundary untouched


def test_template_is_found_from_any_directory(
    tmp_path: Path, gtune_here: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    proc = gtune_here(
        "stencils",
        "generate",
        "--pattern",
        "star",
        "--radius",
        "2",
        "--size",
        "32x16x16",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert "wrote 1 kernels" in proc.stdout
    kernel = load_kernel(out / "star_3d_xyz_r2.cl")
    assert kernel.features["size"] == 13


def test_cli_writes_the_garvey104_suite(tmp_path: Path, gtune_here: Cli) -> None:
    proc = gtune_here("stencils", "generate", "--suite", "garvey104", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert len(list(tmp_path.glob("*.cl"))) == 104
    assert len(list(tmp_path.glob("*.yaml"))) == 104
    assert "[104/104]" in proc.stderr
    assert "36 dense, 16 diamond, 17 no-corners, 20 star, 15 thumbtack" in proc.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "give --suite"),
        (["--suite", "garvey104", "--radius", "2"], "cannot be combined"),
        (["--pattern", "star", "--dims", "2", "--orientation", "x"], "does not fit"),
        (["--pattern", "thumbtack", "--dims", "2"], "3D"),
        (["--pattern", "dense", "--radius", "7"], "radius"),
        (["--pattern", "dense", "--size", "16x16"], "three positive integers"),
        (["--pattern", "dense", "--size", "abc"], "size must look like"),
        (["--pattern", "dense", "--radius", "5", "--size", "10"], "no interior"),
    ],
)
def test_cli_bad_options_exit_2(
    tmp_path: Path, args: list[str], fragment: str, gtune_here: Cli
) -> None:
    proc = gtune_here("stencils", "generate", *args, str(tmp_path / "out"))
    assert proc.returncode == 2
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr
