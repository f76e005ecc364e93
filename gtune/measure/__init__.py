"""Measuring configurations: the Evaluator protocol and its implementations.

``list_devices``/``select_device`` query OpenCL (through the backend module, the only
one that imports pyopencl); importing this package does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gtune.measure.evaluator import (
    Evaluator,
    EvaluatorBase,
    ReplayEvaluator,
    StoredEvaluator,
    pruned,
)
from gtune.measure.result import Result, Status

if TYPE_CHECKING:
    from gtune.device import DeviceLimits
    from gtune.measure.opencl_evaluator import OpenCLEvaluator


def list_devices() -> list[DeviceLimits]:
    """Every OpenCL device, with its tuning-relevant limits."""
    from gtune.measure._opencl import list_devices as _list

    return _list()


def select_device(selector: str | None = None) -> DeviceLimits:
    """A device by ``P:D`` index, identity or name substring; default: first GPU."""
    from gtune.measure._opencl import select_device as _select

    return _select(selector)


def __getattr__(name: str) -> object:
    if name == "OpenCLEvaluator":
        from gtune.measure.opencl_evaluator import OpenCLEvaluator

        return OpenCLEvaluator
    raise AttributeError(name)


__all__ = [
    "Evaluator",
    "EvaluatorBase",
    "OpenCLEvaluator",
    "ReplayEvaluator",
    "Result",
    "Status",
    "StoredEvaluator",
    "list_devices",
    "pruned",
    "select_device",
]
