"""Running slabs concurrently: one worker process per device, data through files.

The parent writes the problem's initial arrays once as ``.npy`` files (in shared memory
where the machine has ``/dev/shm``); each worker maps them, uploads its rows, runs its
own configuration and downloads its owned rows straight into the shared output file.
A run starts when the parent sends *run* to every worker and ends when the last
worker's download is done: that is the end-to-end time a user sees. Worker stamps use
``time.perf_counter``, one clock for every process on Linux.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gtune.device import DeviceLimits
from gtune.exceptions import EnvironmentProblem, GtuneError
from gtune.kernel import TunableKernel
from gtune.measure.opencl_evaluator import Worker, WorkerDied, WorkerTimeout
from gtune.measure.problem import initial_arrays, tolerances
from gtune.processes import scratch_dir, spawn_worker
from gtune.split.geometry import Slab, SplitAxis


class SlabWorker(Worker):
    """A :class:`~gtune.measure.opencl_evaluator.Worker` running the split worker."""

    module = "gtune.split._worker"

    def launch(self) -> None:  # no set-up message: the slab comes with its first call
        self.process, self.conn = spawn_worker(self.module, env=self.env, log_path=self.log_path)


@dataclass(frozen=True)
class DeviceRef:
    """A device to split onto: its limits, and a part ``(k, n)`` of an equal partition
    of its compute units when several parts of one device are used."""

    limits: DeviceLimits
    part: tuple[int, int] | None = None

    @property
    def label(self) -> str:
        where = f" [{self.part[0] + 1}/{self.part[1]}]" if self.part else ""
        return f"{self.limits.selector} {self.limits.name}{where}"


@dataclass
class RunTimes:
    """The runs of one measurement (after a warm-up), per device and in all."""

    end_to_end_s: list[float] = field(default_factory=list)
    kernel_s: list[float] = field(default_factory=list)  # the slowest device's kernel
    per_device: dict[int, dict[str, list[float]]] = field(default_factory=dict)

    @staticmethod
    def median(values: Sequence[float]) -> float:
        return float(statistics.median(values)) if values else float("nan")

    def device_median(self, device: int, key: str) -> float:
        return self.median(self.per_device.get(device, {}).get(key, []))

    def to_dict(self) -> dict[str, Any]:
        return {
            "end_to_end_s": list(self.end_to_end_s),
            "kernel_s": list(self.kernel_s),
            "per_device": {str(k): v for k, v in self.per_device.items()},
        }


def _shared_tmp(need: int) -> str | None:
    """``/dev/shm`` when it exists and has room for ``need`` bytes (containers often
    give it only 64 MiB), else the ordinary temporary directory."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    try:
        return str(shm) if shutil.disk_usage(shm).free > need else None
    except OSError:
        return None


class Executor:
    """Workers for a list of devices, the problem data, and measured runs."""

    def __init__(
        self,
        kernel: TunableKernel,
        devices: Sequence[DeviceRef],
        axis: SplitAxis,
        *,
        timeout_s: float = 120.0,
    ) -> None:
        self.kernel = kernel
        self.devices = list(devices)
        self.axis = axis
        self.timeout_s = timeout_s
        # inputs, plus one output alone per device, one split: with room to spare
        need = 2 * kernel.bytes_moved() * (len(self.devices) + 2)
        self._tmp = scratch_dir("split", _shared_tmp(need))
        self.dir = Path(self._tmp.name)
        self.inputs: dict[str, str] = {}
        self.shapes: dict[str, tuple[tuple[int, ...], np.dtype[Any]]] = {}
        for name, arr in initial_arrays(kernel).items():
            path = self.dir / f"in_{name}.npy"
            np.save(path, arr)
            self.inputs[name] = str(path)
            self.shapes[name] = (arr.shape, arr.dtype)
        self.output_names = [
            a.name for a in kernel.arguments if a.kind == "buffer" and a.role != "input"
        ]
        for name in self.output_names:
            if axis.arg_axes.get(name) is None:
                raise GtuneError(
                    f"output {name} does not run along {axis.size_name}: it cannot be "
                    "gathered from slabs",
                    source=kernel.label,
                )
        self.workers: list[SlabWorker | None] = [None] * len(self.devices)

    # -- workers ----------------------------------------------------------------------
    def _worker(self, i: int) -> SlabWorker:
        w = self.workers[i]
        if w is None or w.process is None:
            w = SlabWorker("split", ("setup", {}))
            w.log_path = self.dir / f"worker-{i}.log"
            w.launch()
            self.workers[i] = w
        return w

    def _fail(self, i: int, exc: Exception) -> GtuneError:
        w = self.workers[i]
        log = ""
        if w is not None:
            w.kill()
            if w.log_path is not None and w.log_path.exists():
                log = w.log_path.read_text(errors="replace")[-2000:]
        self.workers[i] = None
        what = "no answer in time" if isinstance(exc, WorkerTimeout) else str(exc)
        return EnvironmentProblem(
            f"the worker on {self.devices[i].label} failed: {what}"
            + (f"\n{log.strip()}" if log.strip() else "")
        )

    def new_output(self, tag: str) -> dict[str, str]:
        """Fresh output files (initial contents: zeros; every row gets overwritten)."""
        paths = {}
        for name in self.output_names:
            shape, dtype = self.shapes[name]
            path = self.dir / f"out_{tag}_{name}.npy"
            mm = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
            mm.flush()
            del mm
            paths[name] = str(path)
        return paths

    def discard(self, paths: dict[str, str]) -> None:
        """Remove output files no longer needed (large problems fill shared memory)."""
        for p in paths.values():
            with contextlib.suppress(OSError):
                Path(p).unlink()

    def output(self, paths: dict[str, str]) -> dict[str, np.ndarray]:
        return {name: np.load(p, mmap_mode="r") for name, p in paths.items()}

    def setup(
        self, slabs: Sequence[Slab], configs: Sequence[dict[str, int]], outputs: dict[str, str]
    ) -> None:
        """Give each slab's device its sub-problem (built side by side)."""
        for slab in slabs:
            ref = self.devices[slab.device]
            payload = {
                "device": ref.limits.to_dict(),
                "part": list(ref.part) if ref.part else None,
                "kernel": self.kernel.to_dict(),
                "config": dict(configs[slab.device]),
                "size_name": self.axis.size_name,
                "arg_axes": dict(self.axis.arg_axes),
                "lo": slab.lo,
                "hi": slab.hi,
                "own_lo": slab.own_lo,
                "own_hi": slab.own_hi,
                "inputs": self.inputs,
                "outputs": outputs,
            }
            self._worker(slab.device).send("setup", payload)
        for slab in slabs:
            try:
                self._worker(slab.device).receive(self.timeout_s)
            except (WorkerTimeout, WorkerDied) as exc:
                raise self._fail(slab.device, exc) from None

    def measure(self, slabs: Sequence[Slab], runs: int) -> RunTimes:
        """One warm-up, then ``runs`` timed runs of every slab at once."""
        times = RunTimes()
        for s in slabs:
            times.per_device[s.device] = {
                k: [] for k in ("kernel_s", "upload_s", "download_s", "end_to_end_s")
            }
        for rep in range(runs + 1):
            started = time.perf_counter()
            for s in slabs:
                self._worker(s.device).send("run", None)
            stamps = {}
            for s in slabs:
                try:
                    stamps[s.device] = self._worker(s.device).receive(self.timeout_s)
                except (WorkerTimeout, WorkerDied) as exc:
                    raise self._fail(s.device, exc) from None
            if rep == 0:
                continue
            times.end_to_end_s.append(max(t["t_end"] for t in stamps.values()) - started)
            times.kernel_s.append(max(t["kernel_s"] for t in stamps.values()))
            for d, t in stamps.items():
                per = times.per_device[d]
                per["kernel_s"].append(t["kernel_s"])
                per["upload_s"].append(t["t_uploaded"] - t["t_start"])
                per["download_s"].append(t["t_end"] - t["t_computed"])
                per["end_to_end_s"].append(t["t_end"] - started)
        return times

    def compare(self, got: dict[str, str], want: dict[str, str]) -> tuple[int, float | None]:
        """Mismatching elements of ``got`` against ``want`` and the largest error."""
        a, b = self.output(got), self.output(want)
        rtol, atol = tolerances(self.kernel, {k: np.asarray(v) for k, v in b.items()})
        bad, worst = 0, None
        for name in self.output_names:
            x = np.asarray(a[name], dtype=np.float64)
            y = np.asarray(b[name], dtype=np.float64)
            diff = np.abs(x - y)
            mask = ~(diff <= atol + rtol * np.abs(y))
            if mask.any():
                bad += int(mask.sum())
                finite = diff[np.isfinite(diff)]
                err = float(finite.max()) if finite.size == diff.size else float("inf")
                worst = err if worst is None else max(worst, err)
        return bad, worst

    def close(self) -> None:
        for w in self.workers:
            if w is not None:
                w.stop()
        self.workers = [None] * len(self.devices)
        with contextlib.suppress(OSError):
            self._tmp.cleanup()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            for w in self.workers:
                if w is not None:
                    w.kill()


__all__ = ["DeviceRef", "Executor", "RunTimes", "SlabWorker"]
