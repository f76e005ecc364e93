"""Which configuration a device and a problem size get: the rule of the runtime.

1. ``tuned``: the configuration tuned for this device at this very size;
2. ``nearest``: else the one tuned for the nearest size on this device that is legal
   at this size (:func:`gtune.tuned.size_distance`, the measure the bundle's C lookup
   uses: the sum over the dimensions of the larger extent over the smaller);
3. ``default``: else the kernel's default configuration (a bundle's, without the
   kernel).

Legality is gtune's own constraint evaluation for one configuration, without MiniZinc:
the kernel's parameter domains, and the named constraints of the space model
(:func:`gtune.space.model.build_model`: the platform rules on work-group sizes and
local memory for the device, and the kernel's own constraints) evaluated at the
configuration, the problem size and the device's limits, the check
``Space.is_valid`` makes for a configuration outside the solved space. Without the
kernel, a tuned kernel's ``valid_when`` conditions (its constraints left open by the
configuration) are evaluated instead. Pure Python: nothing here loads OpenCL.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gtune.device import DeviceLimits, name_slug
from gtune.exceptions import GtuneError, InputError
from gtune.expr import Value, parse
from gtune.kernel import TunableKernel
from gtune.runtime.sources import TunedEntry
from gtune.space.model import build_model
from gtune.tuned import TunedKernel, device_slug, size_distance, tuned_kernel

TUNED = "tuned"
NEAREST = "nearest"
DEFAULT = "default"


@dataclass(frozen=True)
class Choice:
    """The configuration chosen, why, and the tuned kernel that builds it."""

    kind: str  # TUNED, NEAREST or DEFAULT
    configuration: Mapping[str, int]
    tuned: TunedKernel
    entry: TunedEntry | None  # what it was tuned as (None: the default)
    reason: str

    @property
    def tuned_size(self) -> Mapping[str, int] | None:
        return None if self.entry is None else self.entry.sizes


def on_device(entries: Sequence[TunedEntry], device: DeviceLimits) -> list[TunedEntry]:
    """The entries tuned on ``device``: of its identity; else, where none has it, those
    of a device of the same OpenCL name (another driver version changes the identity),
    as :meth:`gtune.tuned.TunedBundle.on_device` and the C lookup match devices."""
    tuned = [e for e in entries if not e.default]
    mine = [e for e in tuned if e.device_identity == device.identity]
    slug = name_slug(device.name)
    return mine or [e for e in tuned if device_slug(e.device_identity) == slug]


def violation(
    config: Mapping[str, int],
    sizes: Mapping[str, int],
    device: DeviceLimits,
    kernel: TunableKernel | None,
    tuned: TunedKernel | None = None,
) -> str | None:
    """Why ``config`` is illegal at ``sizes`` on ``device``; None if it is legal."""
    if kernel is not None:
        return _kernel_violation(config, sizes, device, kernel)
    if tuned is None:
        return "neither the kernel nor a tuned kernel to check it with"
    return _tuned_violation(tuned, sizes, device)


def _kernel_violation(
    config: Mapping[str, int], sizes: Mapping[str, int], device: DeviceLimits, kernel: TunableKernel
) -> str | None:
    try:
        at = kernel.with_sizes(sizes)
        missing = [p for p in at.parameter_names if p not in config]
        if missing:
            return f"no value for {', '.join(missing)}"
        bad = at.outside_domain(config)
        if bad:
            return f"outside its domain: {', '.join(bad)}"
        model = build_model(at, device, min_groups=False)
        env: dict[str, Value] = {**model.env, **{k: int(v) for k, v in config.items()}}
        for c in model.constraints:
            if not c.holds(env):
                return c.describe()
    except GtuneError as exc:
        return exc.message
    return None


def _tuned_violation(
    tuned: TunedKernel, sizes: Mapping[str, int], device: DeviceLimits
) -> str | None:
    env: dict[str, Value] = {**device.limit_values(), **{k: int(v) for k, v in sizes.items()}}
    try:
        for cond in tuned.valid_when:
            expr = parse(cond)
            if expr.names <= set(env) and not expr.evaluate(env):
                return cond
        _, local = tuned.launch_sizes(sizes)
    except GtuneError as exc:
        return exc.message
    if local is not None and math.prod(local) > device.max_work_group_size:
        return f"work-group of {math.prod(local)} over the device's {device.max_work_group_size}"
    return None


def choose(
    entries: Sequence[TunedEntry],
    device: DeviceLimits,
    sizes: Mapping[str, int],
    kernel: TunableKernel | None,
    label: str,
) -> Choice:
    """The configuration for ``device`` at ``sizes`` (see the module's rule)."""
    sizes = {k: int(v) for k, v in sizes.items()}
    mine = on_device(entries, device)
    for e in mine:
        if dict(e.sizes) == sizes:
            return Choice(TUNED, e.configuration, _tuned(e, sizes, kernel), e, "tuned here")
    refused: list[str] = []
    for e in sorted(mine, key=lambda e: size_distance(sizes, e.sizes)):
        why = violation(e.configuration, sizes, device, kernel, e.tuned)
        if why is None:
            return Choice(
                NEAREST, e.configuration, _tuned(e, sizes, kernel), e,
                f"tuned at {_size_text(e.sizes)}",
            )  # fmt: skip
        refused.append(f"{_size_text(e.sizes)}: {why}")
    fallback = next((e for e in entries if e.default), None)
    return _default(kernel, fallback, device, sizes, label, refused, bool(mine))


def _default(
    kernel: TunableKernel | None,
    fallback: TunedEntry | None,
    device: DeviceLimits,
    sizes: Mapping[str, int],
    label: str,
    refused: list[str],
    seen: bool,
) -> Choice:
    where = f"{label} at {_size_text(sizes)} on {device.name} ({device.identity})"
    if not seen:
        reason = "no tuned result for this device"
    else:
        reason = "no configuration tuned on this device is legal here (" + "; ".join(refused) + ")"
    if kernel is None and fallback is not None and fallback.tuned is not None:
        why = _tuned_violation(fallback.tuned, sizes, device)
        if why is None:
            return Choice(DEFAULT, fallback.configuration, fallback.tuned, None, reason)
        raise InputError(
            f"{reason}, and the bundle's default configuration is not legal here ({why})",
            source=where,
        )
    default = None if kernel is None else kernel.default_config()
    if kernel is None or default is None:
        raise InputError(
            f"{reason}, and no default configuration to fall back on",
            source=where,
            hint="give the kernel (kernel=...: its description holds the default)"
            if kernel is None
            else "give every parameter a default in the kernel's description",
        )
    why = violation(default, sizes, device, kernel)
    if why is not None:
        raise InputError(
            f"{reason}, and the kernel's default configuration is not legal here ({why})",
            source=where,
        )
    tuned = tuned_kernel(kernel.with_sizes(sizes), default, full_template=True)
    return Choice(DEFAULT, default, tuned, None, reason)


def _tuned(e: TunedEntry, sizes: Mapping[str, int], kernel: TunableKernel | None) -> TunedKernel:
    """The tuned kernel that builds ``e`` at ``sizes``: the export's own, else rendered
    from the kernel (a store entry)."""
    if e.tuned is not None:
        return e.tuned
    if kernel is None:  # pragma: no cover - store entries are read with their kernel
        raise InputError("a stored configuration needs its kernel", source=e.origin)
    return tuned_kernel(
        kernel.with_sizes(sizes),
        kernel.with_defaults(e.configuration),
        device_identity=e.device_identity,
        time_s=e.time_s,
        confirmed=e.confirmed,
        full_template=True,
    )


def _size_text(sizes: Mapping[str, int]) -> str:
    return "x".join(str(int(v)) for v in sizes.values())


__all__ = ["DEFAULT", "NEAREST", "TUNED", "Choice", "choose", "on_device", "violation"]
