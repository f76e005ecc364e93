"""``examples/image_filter.py`` on PoCL: the lifted 8-bit box blur called through
``gtune.runtime`` (the default, then with online tuning; the size tuned online served
from the store at the next start, tuned here and nearest), the original kernel for a
size the template does not fit, and a bad image; each output image checked against a
numpy blur computed here as the original kernel computes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.opencl]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "image_filter.py"


def box_blur(image: np.ndarray) -> np.ndarray:
    """``blur_u8.cl`` in numpy: float32 sums of the 3x3 neighbourhood, coordinates
    clamped, ``convert_uchar_sat(sum / 9.0f + 0.5f)``."""
    h, w = image.shape
    ys, xs = np.arange(h), np.arange(w)
    total = np.zeros((h, w), np.float32)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            rows = np.clip(ys + dy, 0, h - 1)[:, None]
            cols = np.clip(xs + dx, 0, w - 1)[None, :]
            total += image[rows, cols].astype(np.float32)
    rounded = np.floor(total / np.float32(9) + np.float32(0.5))
    return np.asarray(np.clip(rounded, 0, 255), dtype=np.uint8)


def write_pgm(path: Path, image: np.ndarray) -> None:
    path.write_bytes(b"P5\n%d %d\n255\n" % (image.shape[1], image.shape[0]) + image.tobytes())


def read_pgm(path: Path, shape: tuple[int, int]) -> np.ndarray:
    data = path.read_bytes()
    header = b"P5\n%d %d\n255\n" % (shape[1], shape[0])
    assert data.startswith(header)
    return np.frombuffer(data[len(header) :], np.uint8).reshape(shape)


def filtered(tmp_path: Path, image: np.ndarray, frames: int, *options: str) -> str:
    """Run the example on ``image``; its last frame's output must be numpy's blur of
    the last frame (the image shifted ``frames - 1`` pixels right)."""
    src, out = tmp_path / "in.pgm", tmp_path / "out.pgm"
    write_pgm(src, image)
    done = subprocess.run(
        [
            sys.executable, str(EXAMPLE), "--image", str(src), "--out", str(out),
            "--frames", str(frames), *options,
        ],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    last = np.roll(image, frames - 1, axis=1)
    np.testing.assert_array_equal(read_pgm(out, image.shape), box_blur(last))
    assert f"{frames} frames verified against numpy" in done.stdout
    return done.stdout


def test_the_image_filter_tunes_a_new_size_online_and_serves_it_next_time(
    tmp_path: Path,
) -> None:
    image = np.random.default_rng(3).integers(0, 256, (48, 64), np.uint8)
    store = str(tmp_path / "store.db")
    first = filtered(tmp_path, image, 12, "--budget", "4", "--store", store, "--wait")
    assert "frame 0: default configuration (no tuned result for this device)" in first
    assert "online tuning: switched" in first or "online tuning: kept" in first
    # the next start reads the store: this size tuned here, a larger one the nearest
    again = filtered(tmp_path, image, 3, "--tuned", store, "--no-tune")
    assert "frame 0: tuned configuration (tuned here)" in again
    wider = np.tile(image, (2, 2))
    assert "frame 0: nearest configuration (tuned at 64x48)" in filtered(
        tmp_path, wider, 3, "--tuned", store, "--no-tune"
    )


def test_a_size_the_template_does_not_fit_runs_the_original_kernel(tmp_path: Path) -> None:
    image = np.random.default_rng(4).integers(0, 256, (30, 50), np.uint8)
    out = filtered(tmp_path, image, 4, "--no-tune")
    assert "frame 0: original configuration (" in out and "not legal here" in out


def test_a_bad_image_is_one_message_and_status_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pgm"
    bad.write_bytes(b"P6\n4 4\n255\n" + bytes(48))
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--image", str(bad), "--no-tune"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert str(bad) in done.stderr and "not an 8-bit binary PGM" in done.stderr
    assert "Traceback" not in done.stderr
