"""An image filter whose tuned kernel ``gtune.runtime`` picks by device and image size.

The application blurs a stream of 8-bit grey frames (a 3x3 box blur, clamped at the
edges, rounded to nearest). Its kernel is ``stencils/plain/blur_u8.cl``, lifted by
gtune into the optimizing template (``examples/box_blur_u8.stencil.yaml``, written by
``gtune lift stencils/plain/blur_u8.cl --size 32x24 --scalar width=NX --scalar
height=NY --default WX=16,WY=8``), so it takes the original's arguments
``(src, dst, width, height)``. For each image size ``gtune.runtime`` gives the
configuration tuned for this device and size, else the one tuned for the nearest legal
size, else the kernel's default; with online tuning on (``--budget``), a size never
tuned is tuned in the background while the frames keep coming, and later frames run
what was found. A size no configuration of the template fits (not a multiple of its
work-group) runs the original kernel. It prints which choice it made and why.

    python examples/image_filter.py                          # 640x480 synthetic frames
    python examples/image_filter.py --image photo.pgm --out blurred.pgm --frames 500
    python examples/image_filter.py --size 1920x1080 --tuned tuned/ --no-tune

Every frame of images up to ``--check-limit`` pixels is checked against numpy.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl

import gtune.runtime
from gtune.exceptions import GtuneError

HERE = Path(__file__).resolve().parent
KERNEL = HERE / "box_blur_u8.stencil.yaml"
ORIGINAL = HERE.parent / "stencils" / "plain" / "blur_u8.cl"


def blur_numpy(image: np.ndarray) -> np.ndarray:
    """The filter in numpy: the 3x3 sum with edges clamped, divided by 9 and rounded
    (a sum of integers over 9 never ends in .5)."""
    p = np.pad(image.astype(np.int32), 1, mode="edge")
    h, w = image.shape
    total = np.zeros((h, w), np.int32)
    for dy in range(3):
        for dx in range(3):
            total += p[dy : dy + h, dx : dx + w]
    return ((total + 4) // 9).astype(np.uint8)


class OriginalBlur:
    """The plain kernel, for sizes the template does not fit: any size, 16x8 groups.
    It answers what the run loop asks of a ``gtune.runtime`` kernel."""

    def __init__(self, ctx: Any, width: int, height: int, reason: str) -> None:
        self.kernel = cl.Program(ctx, ORIGINAL.read_text()).build().box_blur
        self.global_size = (-(-width // 16) * 16, -(-height // 8) * 8)
        self.choice, self.configuration = "original", {"WX": 16, "WY": 8}
        self.reason, self.tuning, self.tuning_message = reason, "", ""

    def __call__(self, queue: Any, src: Any, dst: Any, width: int, height: int) -> Any:
        args = (src, dst, np.int32(width), np.int32(height))
        return self.kernel(queue, self.global_size, (16, 8), *args)


def blur_for(ctx: Any, lib: gtune.runtime.TunedLibrary, width: int, height: int) -> Any:
    """The blur for this device and image size: gtune's choice, else the original."""
    try:
        return lib.kernel_for(ctx, {"NX": width, "NY": height})
    except GtuneError as exc:  # no configuration is legal at this size
        return OriginalBlur(ctx, width, height, exc.message)


def frames(image: np.ndarray, count: int) -> Any:
    """A moving picture: the image shifted one pixel further right each frame."""
    for i in range(count):
        yield np.ascontiguousarray(np.roll(image, i, axis=1))


def run(ctx: Any, blur: Any, image: np.ndarray, args: argparse.Namespace) -> np.ndarray:
    """Filter ``--frames`` frames; print when the configuration changes; check them."""
    queue = cl.CommandQueue(ctx)
    height, width = image.shape
    mf = cl.mem_flags
    src, dst = (
        cl.Buffer(ctx, mf.READ_ONLY, image.nbytes),
        cl.Buffer(ctx, mf.WRITE_ONLY, image.nbytes),
    )
    out, running, checked = np.empty_like(image), None, 0
    for i, frame in enumerate(frames(image, args.frames)):
        if args.wait and i == args.frames - 1 and blur.tuning == "running":
            blur.wait_tuning()  # a short demo: the last frame after tuning has decided
        if blur.configuration != running:
            running = blur.configuration
            config = " ".join(f"{k}={v}" for k, v in running.items())
            print(f"frame {i}: {blur.choice} configuration ({blur.reason}): {config}")
        cl.enqueue_copy(queue, src, frame)
        blur(queue, src, dst, width, height)
        cl.enqueue_copy(queue, out, dst)  # waits for the frame
        if image.size <= args.check_limit:
            np.testing.assert_array_equal(out, blur_numpy(frame), err_msg=f"frame {i}")
            checked += 1
    print(f"{args.frames} frames at {width}x{height}; online tuning: {blur.tuning or 'off'}")
    if blur.tuning_message:
        print(f"  {blur.tuning_message}")
    if checked:
        print(f"{checked} frames verified against numpy")
    return out


def read_pgm(path: Path) -> np.ndarray:
    """An 8-bit binary PGM (P5, no comments) as a (height, width) array."""
    data = path.read_bytes()
    m = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", data)
    if m is None or len(data) - m.end() < int(m[1]) * int(m[2]):
        raise ValueError("not an 8-bit binary PGM (P5, maximum 255, no comments)")
    width, height = int(m[1]), int(m[2])
    pixels = np.frombuffer(data, np.uint8, width * height, m.end())
    return pixels.reshape(height, width)


def write_pgm(path: Path, image: np.ndarray) -> None:
    path.write_bytes(b"P5\n%d %d\n255\n" % (image.shape[1], image.shape[0]) + image.tobytes())


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--image", type=Path, help="an 8-bit PGM (default: random pixels)")
    p.add_argument("--size", default="640x480", help="WIDTHxHEIGHT without --image")
    p.add_argument("--frames", type=int, default=100, help="frames to filter (default 100)")
    p.add_argument("--out", type=Path, help="write the last frame's result here (PGM)")
    p.add_argument("--tuned", nargs="*", default=[], help="exports, bundles or stores to read")
    p.add_argument("--budget", default="20", help="online tuning budget: configurations or '90s'")
    p.add_argument("--no-tune", action="store_true", help="no online tuning")
    p.add_argument("--store", help="result store for online tuning (default: gtune run's)")
    p.add_argument("--wait", action="store_true", help="the last frame waits for the tuning")
    p.add_argument("--check-limit", type=int, default=1 << 20, help="largest image checked")
    p.add_argument("-v", "--verbose", action="store_true", help="log the runtime's choices")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    if args.image is not None:
        try:
            image = read_pgm(args.image)
        except (OSError, ValueError) as exc:
            print(f"{args.image}: {exc}", file=sys.stderr)
            return 2
    else:
        try:
            width, height = (int(v) for v in args.size.lower().split("x"))
        except ValueError:
            print(
                f"error: --size: expected WIDTHxHEIGHT, e.g. 640x480, got {args.size!r}",
                file=sys.stderr,
            )
            return 2
        image = np.random.default_rng(0).integers(0, 256, (height, width), np.uint8)
    ctx = cl.create_some_context(interactive=False)
    try:
        lib = gtune.runtime.open_tuned(
            *args.tuned,
            kernel=KERNEL,
            tune_missing=None if args.no_tune else args.budget,
            store=args.store,
        )
    except GtuneError as exc:  # a --tuned file or folder it cannot use, a bad --budget
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with lib:
        out = run(ctx, blur_for(ctx, lib, image.shape[1], image.shape[0]), image, args)
    if args.out is not None:
        write_pgm(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
