"""The verification guard: can a check against this reference fail at all?

A reference that equals the arrays' initial data (the kernel wrote nothing), that is
constant, or that most of which was left as initialised, cannot tell a configuration that
computes the whole grid from one that computes part of it or nothing. Results checked
against it must not be called verified.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

#: Above this fraction of elements left as initialised, a reference is called partial.
UNCHANGED_LIMIT = 0.5


def reference_problems(
    initial: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    *,
    unchanged_limit: float = UNCHANGED_LIMIT,
) -> list[str]:
    """Why verification against ``reference`` would be vacuous; empty when it is sound.

    ``initial`` holds each array's contents before the reference ran, ``reference`` the
    expected contents of every written array after it.
    """
    if not reference:
        return ["no array is written by the kernel, so there is nothing to compare"]
    problems: list[str] = []
    for name, ref in reference.items():
        ref = np.asarray(ref)
        if ref.size == 0:
            problems.append(f"the reference for {name!r} is empty")
            continue
        flat = ref.reshape(-1)
        init = initial.get(name)
        same: np.ndarray | None = None
        if init is not None and np.asarray(init).shape == ref.shape:
            same = np.asarray(init).reshape(-1) == flat
            if ref.dtype.kind == "f":
                same |= np.isnan(np.asarray(init).reshape(-1)) & np.isnan(flat)
        if same is not None and bool(same.all()):
            problems.append(
                f"the reference left {name!r} exactly as initialised: it wrote nothing, so a "
                "configuration that computes nothing would pass"
            )
            continue
        if ref.dtype.kind == "f" and not np.isfinite(flat).all():
            bad = int((~np.isfinite(flat)).sum())
            problems.append(f"the reference for {name!r} has {bad} NaN or infinite values")
            continue
        if bool((flat == flat[0]).all()):
            problems.append(
                f"the reference for {name!r} is constant (every element {flat[0]!r}): a wrong "
                "configuration could easily match it"
            )
            continue
        if same is not None:
            fraction = float(same.mean())
            if fraction > unchanged_limit:
                problems.append(
                    f"the reference left {fraction:.0%} of {name!r} as initialised: a "
                    "configuration that computes only part of it would pass"
                )
    return problems


def tolerance_problems(
    initial: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    rtol: float,
    atol: float,
) -> list[str]:
    """Why the comparison with tolerances ``rtol``/``atol`` could not fail: an output
    left exactly as initialised (a configuration that computes nothing) would pass it."""
    problems: list[str] = []
    for name, ref in reference.items():
        ref = np.asarray(ref)
        init = initial.get(name)
        if init is None or ref.dtype.kind != "f" or ref.size == 0:
            continue
        init = np.asarray(init)
        if init.shape != ref.shape:
            continue
        flat_ref, flat_init = ref.reshape(-1), init.reshape(-1)
        if bool((flat_ref == flat_init).all()):
            continue  # already said by reference_problems
        passes = True
        for lo in range(0, flat_ref.size, 1 << 22):
            r = flat_ref[lo : lo + (1 << 22)].astype(np.float64)
            i = flat_init[lo : lo + (1 << 22)].astype(np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                if not bool((np.abs(i - r) <= atol + rtol * np.abs(r)).all()):
                    passes = False
                    break
        if passes:
            problems.append(
                f"the tolerance (rtol {rtol:g}, atol {atol:g}) accepts {name!r} as initialised: "
                "a configuration that computes nothing would pass"
            )
    return problems


def failed_reference(status: str, message: str) -> str:
    """The guard's reason when the reference configuration itself did not run."""
    first = message.strip().splitlines()[0][:300] if message.strip() else ""
    return f"the reference configuration failed ({status}{': ' + first if first else ''})"
