"""Each device's best configuration: from the result store, or tuned on the spot."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel
from gtune.store import ResultStore

Source = Literal["auto", "store", "tune", "default"]
SOURCES: tuple[str, ...] = ("auto", "store", "tune", "default")


@dataclass(frozen=True)
class Tuned:
    """A device's configuration, where it came from and its tuned time (if known)."""

    config: dict[str, int]
    time_s: float | None
    source: str  # store, tuned, default, given

    def to_dict(self) -> dict[str, Any]:
        return {"config": dict(self.config), "time_s": self.time_s, "source": self.source}


def best_from_store(
    store: ResultStore, kernel: TunableKernel, device: DeviceLimits
) -> Tuned | None:
    """The fastest ``ok`` result stored for this kernel, problem size and device."""
    best = None
    for r in store.results(device=device.identity, kernel_id=kernel.identity()):
        usable = r.ok and r.times_s and math.isfinite(r.median_s)
        if usable and (best is None or r.median_s < best.median_s):
            best = r
    if best is None:
        return None
    return Tuned({k: int(v) for k, v in best.config.items()}, best.median_s, "store")


def best_config(
    kernel: TunableKernel,
    device: DeviceLimits,
    *,
    source: str = "auto",
    store: ResultStore | None = None,
    budget: int = 60,
    strategy: str = "hybrid",
    given: Mapping[str, int] | None = None,
) -> Tuned:
    """``given`` if any; else by ``source``: ``store`` (the best stored result),
    ``tune`` (a search of ``budget`` evaluations through :func:`gtune.tune`,
    results written to ``store``), ``auto`` (the store, else tune), ``default`` (the
    description's default configuration). A parameter ``given`` lacks takes its default
    (a configuration written before the kernel gained the parameter)."""
    if given is not None:
        return Tuned(kernel.with_defaults(given), None, "given")
    if source not in SOURCES:
        raise InputError(
            f"unknown configuration source {source!r}; use {', '.join(SOURCES)}",
            source="source",
        )
    if source == "default":
        default = kernel.default_config()
        if default is None:
            raise InputError(
                "the description gives no default for every parameter", source=kernel.label
            )
        return Tuned(default, None, "default")
    if source in ("store", "auto") and store is not None:
        found = best_from_store(store, kernel, device)
        if found is not None:
            return found
    if source == "store":
        raise InputError(
            f"the result store holds no successful measurement of {kernel.name} at "
            f"{dict(kernel.sizes)} on {device.name}",
            source=kernel.label,
            hint="tune it first (gtune run), or use --configs tune",
        )
    from gtune.api import tune
    from gtune.budget import Budget

    if budget < 1:
        raise InputError(f"the tuning budget must be at least 1, got {budget}", source="budget")
    report = tune(
        kernel, device=device, strategy=strategy, budget=Budget(evaluations=budget), store=store
    )
    if report.best_config is None:
        raise InputError(
            f"tuning found no configuration that runs on {device.name}: " + "; ".join(report.notes),
            source=kernel.label,
        )
    return Tuned(dict(report.best_config), report.best_s, "tuned")


__all__ = ["SOURCES", "Source", "Tuned", "best_config", "best_from_store"]
