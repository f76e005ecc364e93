"""A kernel run once, outside any search, on the input data a caller gives.

``run_plain`` is the Python face of plain mode's "run it and look": one launch in an
OpenCL worker process, inside guard zones, returning every array after it. It lives at
the measuring layer (the kernel model below never runs anything).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gtune.exceptions import GtuneError
from gtune.kernel import TunableKernel
from gtune.measure.opencl_evaluator import OpenCLEvaluator


def run_plain(
    kernel: TunableKernel,
    arrays: Mapping[str, Any],
    config: Mapping[str, int] | None = None,
    *,
    device: str | None = None,
    timeout_s: float = 60.0,
) -> dict[str, Any]:
    """Run ``kernel`` once on the given input data and return every array after it.

    ``arrays`` maps argument names to numpy arrays (their shapes, or as many elements;
    arrays not given start as the description says); ``config`` is the configuration
    (default: the kernel's reference or default configuration). Runs in an OpenCL
    worker process like every measurement, inside guard zones: a run that fails, or
    writes before or past an array, raises :class:`~gtune.exceptions.GtuneError`
    naming why. Returns ``{name: numpy array}`` for every buffer argument."""
    cfg = dict(config or {})
    if not cfg:
        ref = kernel.reference
        cfg = dict(ref.config) if ref.kind == "config" else dict(kernel.default_config() or {})
    ev = OpenCLEvaluator(
        kernel, device, runs=1, timeout_s=timeout_s, compile_workers=0, verify=False, arrays=arrays
    )
    try:
        result = ev.evaluate(cfg)
        if not result.ok:
            raise GtuneError(
                f"{kernel.name} with {_cfg_text(cfg)}: {result.status.value}"
                + (f": {result.message.splitlines()[0]}" if result.message.strip() else ""),
                source=kernel.label,
            )
        return {a.name: ev.output(a.name) for a in kernel.arguments if a.kind == "buffer"}
    finally:
        ev.close()


def _cfg_text(cfg: Mapping[str, int]) -> str:
    return ", ".join(f"{n}={v}" for n, v in cfg.items())
