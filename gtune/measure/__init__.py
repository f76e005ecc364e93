"""Measuring configurations: the Evaluator protocol and its implementations.

``list_devices``/``select_device`` query OpenCL in a short-lived worker process: the
backend module, the only one that imports pyopencl, is loaded only in workers, so a
driver that crashes while it is queried ends that worker, not gtune. Importing this
package does not import pyopencl.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import TYPE_CHECKING

from gtune import exceptions
from gtune.device import DeviceLimits, choose_device
from gtune.exceptions import EnvironmentProblem, GtuneError
from gtune.measure.evaluator import (
    Evaluator,
    EvaluatorBase,
    ReplayEvaluator,
    StoredEvaluator,
    completed,
    pruned,
)
from gtune.measure.result import Result, Status
from gtune.processes import child_env, python_command

if TYPE_CHECKING:
    from gtune.measure.once import run_plain
    from gtune.measure.opencl_evaluator import OpenCLEvaluator

_ENV_KEYS = ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "POCL_DEVICES", "CUDA_VISIBLE_DEVICES")
_cache: dict[tuple[str | None, ...], list[DeviceLimits]] = {}
QUERY_TIMEOUT_S = 120.0


def _query() -> list[DeviceLimits]:
    hint = "`gtune devices --debug` shows the driver's output"
    try:
        proc = subprocess.run(
            python_command("gtune.measure._worker", "--devices"),
            env=child_env(),
            capture_output=True,
            timeout=QUERY_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(
            f"the OpenCL driver did not list its devices within {QUERY_TIMEOUT_S:.0f} s",
            hint=hint,
        ) from None
    if proc.returncode != 0:
        if proc.returncode < 0:
            try:
                why = f"was killed by {signal.Signals(-proc.returncode).name}"
            except ValueError:
                why = f"was killed by signal {-proc.returncode}"
        else:
            why = f"failed (exit status {proc.returncode})"
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise EnvironmentProblem(
            f"listing the OpenCL devices {why}" + (f": {' / '.join(tail)}" if tail else ""),
            hint="the OpenCL driver (ICD) crashed while it was queried; " + hint,
        )
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise EnvironmentProblem(
            "listing the OpenCL devices gave no readable answer", hint=hint
        ) from None
    if "error" in data:
        err = data["error"]
        cls = getattr(exceptions, str(err.get("type")), None)
        if (
            not (isinstance(cls, type) and issubclass(cls, GtuneError))
            or cls is exceptions.BuildError
        ):
            cls = EnvironmentProblem
        raise cls(
            str(err.get("message")), source=err.get("source"), hint=str(err.get("hint") or "")
        )
    return [DeviceLimits.from_dict(d) for d in data["devices"]]


def list_devices() -> list[DeviceLimits]:
    """Every OpenCL device, with its tuning-relevant limits (queried once per process)."""
    key = tuple(os.environ.get(k) for k in _ENV_KEYS)
    if key not in _cache:
        _cache[key] = _query()
    return list(_cache[key])


def select_device(selector: str | None = None) -> DeviceLimits:
    """A device by ``P:D`` index, identity or name substring; default: first GPU."""
    return choose_device(list_devices(), selector)


def __getattr__(name: str) -> object:
    if name == "OpenCLEvaluator":
        from gtune.measure.opencl_evaluator import OpenCLEvaluator

        return OpenCLEvaluator
    if name == "run_plain":
        from gtune.measure.once import run_plain

        return run_plain
    raise AttributeError(name)


__all__ = [
    "Evaluator",
    "EvaluatorBase",
    "OpenCLEvaluator",
    "ReplayEvaluator",
    "Result",
    "Status",
    "StoredEvaluator",
    "completed",
    "list_devices",
    "pruned",
    "run_plain",
    "select_device",
]
