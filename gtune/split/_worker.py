"""A split worker: one device, its slab, in a fresh interpreter of its own.

Started by :func:`gtune.processes.spawn_worker` (a fresh interpreter, like
``gtune.measure._worker``: forking after a driver is initialised fails); it talks to the
parent over the socket ``FD`` with plain data and dies with its parent (``PR_SET_PDEATHSIG``
where Linux offers it, and at the latest when the socket closes).

Problem data travels as ``.npy`` files the parent wrote once: the worker maps them,
uploads its rows, and downloads its owned output rows straight into the shared output
file, so gathering is the download itself.
"""

from __future__ import annotations

import signal
import sys
import time
import traceback
import warnings
from multiprocessing.connection import Connection
from typing import Any

import numpy as np


class _Slab:
    """The worker's state for one sub-problem."""

    def __init__(self, payload: dict[str, Any]) -> None:
        from gtune.description import from_dict
        from gtune.device import DeviceLimits
        from gtune.measure._opencl import SlabRunner

        kernel = from_dict(payload["kernel"])
        lo, hi = int(payload["lo"]), int(payload["hi"])
        own_lo, own_hi = int(payload["own_lo"]), int(payload["own_hi"])
        size_name = str(payload["size_name"])
        axes: dict[str, int | None] = payload["arg_axes"]
        sub = kernel.with_sizes({size_name: hi - lo})
        part = (int(payload["part"][0]), int(payload["part"][1])) if payload.get("part") else None
        self.runner = SlabRunner(
            DeviceLimits.from_dict(payload["device"]),
            part,
            sub,
            payload["config"],
        )
        self.uploads: dict[str, np.ndarray] = {}
        self.downloads: dict[str, tuple[np.ndarray, int]] = {}
        self.scatter: list[tuple[np.ndarray, np.ndarray, int]] = []
        for arg in kernel.arguments:
            if arg.kind != "buffer":
                continue
            axis = axes.get(arg.name)
            whole = np.load(payload["inputs"][arg.name], mmap_mode="r")
            self.uploads[arg.name] = whole if axis is None else _take(whole, axis, lo, hi)
            if arg.role == "input":
                continue
            if axis is None:
                raise ValueError(f"output {arg.name} does not run along the split dimension")
            out = np.load(payload["outputs"][arg.name], mmap_mode="r+")
            if axis == 0:
                row = int(np.prod(out.shape[1:])) * out.dtype.itemsize
                self.downloads[arg.name] = (out[own_lo:own_hi], (own_lo - lo) * row)
            else:  # rows of an inner axis are not contiguous: download, then copy
                shape = list(out.shape)
                shape[axis] = hi - lo
                scratch = np.empty(shape, out.dtype)
                self.downloads[arg.name] = (scratch, 0)
                self.scatter.append(
                    (
                        _take(out, axis, own_lo, own_hi),
                        _take(scratch, axis, own_lo - lo, own_hi - lo),
                        axis,
                    )
                )

    def run(self) -> dict[str, float]:
        times = self.runner.run(self.uploads, self.downloads)
        for target, source, _ in self.scatter:
            target[...] = source
        if self.scatter:
            times["t_end"] = time.perf_counter()
        return times


def _take(arr: np.ndarray, axis: int, lo: int, hi: int) -> np.ndarray:
    index: list[slice] = [slice(None)] * arr.ndim
    index[axis] = slice(lo, hi)
    return arr[tuple(index)]


def serve(conn: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C means
    warnings.filterwarnings("ignore", message="Non-empty compiler output")
    slab: _Slab | None = None
    while True:
        try:
            verb, payload = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            if verb == "stop":
                conn.send(("ok", None))
                return
            if verb == "setup":
                slab = None  # release the previous sub-problem's buffers first
                slab = _Slab(payload)
                conn.send(("ok", None))
            elif verb == "run":
                if slab is None:
                    raise ValueError("run before setup")
                conn.send(("ok", slab.run()))
            else:
                conn.send(("error", f"unknown verb {verb!r}"))
        except Exception as exc:  # reported to the parent
            from gtune.exceptions import GtuneError

            if isinstance(exc, GtuneError):
                conn.send(("gtune_error", exc))
            else:
                conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


if __name__ == "__main__":
    from gtune.measure._worker import guard_parent

    guard_parent(int(sys.argv[2]), int(sys.argv[1]), death_signal=sys.argv[3:] != ["thread"])
    serve(Connection(int(sys.argv[1])))
