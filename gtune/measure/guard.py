"""The verification guard: can a check against this reference fail at all?

A reference that equals the arrays' initial data (the kernel wrote nothing), that is
constant, or that most of which was left as initialised, cannot tell a configuration that
computes the whole grid from one that computes part of it or nothing. Results checked
against it must not be called verified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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


@dataclass(frozen=True)
class ArrayCheck:
    """How one written array is checked against the reference.

    ``compared``: configurations are compared with the reference on this array (a
    comparison that can fail). ``sound``: a right configuration and a wrong one can be
    told apart by it. ``why`` says what weakens or prevents the check ("" when sound).
    """

    name: str
    compared: bool
    sound: bool
    why: str = ""


def array_checks(
    initial: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    *,
    unchanged_limit: float = UNCHANGED_LIMIT,
    reads_past: Mapping[str, str] | None = None,
) -> list[ArrayCheck]:
    """The verification guard per array: which arrays are compared, and which of those
    comparisons can tell right from wrong (see :func:`reference_problems`).

    An array the reference left exactly as initialised, or whose reference holds NaN
    or infinite values, is not compared; every other array is, though a constant or
    mostly unchanged reference makes its check weak. ``reads_past`` maps an array
    whose reference came from reading past the end of another array (guard zones, see
    the OpenCL backend) to that finding: it is compared (every configuration that reads
    past the end fails) but is not sound.
    """
    out: list[ArrayCheck] = []
    for name, ref in reference.items():
        if reads_past and name in reads_past:
            out.append(ArrayCheck(name, True, False, reads_past[name]))
            continue
        problems = reference_problems(
            {name: initial[name]} if name in initial else {},
            {name: ref},
            unchanged_limit=unchanged_limit,
        )
        if not problems:
            out.append(ArrayCheck(name, True, True))
            continue
        why = problems[0]
        compared = not ("wrote nothing" in why or "NaN" in why or "empty" in why)
        out.append(ArrayCheck(name, compared, False, why))
    return out


def transposed_launch_hint(initial: np.ndarray, reference: np.ndarray) -> str:
    """A hint when what a kernel wrote looks like a launch with its dimensions in the
    wrong order, as a kernel whose ``get_global_id(0)`` indexes rows writes at
    ``--global NX,NY``: along x, the written points leave a margin at the end wider than
    the one at the start (a stencil's own margins are equal), by exactly as much as the
    array's extent along y (or z) falls short of its extent along x. "" otherwise."""
    ref, init = np.asarray(reference), np.asarray(initial)
    if ref.ndim not in (2, 3) or init.shape != ref.shape:
        return ""
    written = ref != init
    if ref.dtype.kind == "f":
        written &= ~(np.isnan(ref) & np.isnan(init))
    if not written.any():
        return ""
    idx = np.argwhere(written)
    lo, hi = idx.min(axis=0), idx.max(axis=0) + 1
    shape = ref.shape  # C order: x last
    nx = shape[-1]
    others = shape[:-1]
    reach = int(hi[-1]) + int(lo[-1])  # where x would end with equal margins
    if reach < nx and reach in others:
        names = ("NX", "NY", "NZ")[: ref.ndim]
        turned = ",".join(reversed(names))
        return (
            f"it wrote x up to {int(hi[-1])} of {nx}: if the kernel's get_global_id(0) "
            f"indexes rows (the slowest axis), give --global {turned}"
        )
    return ""


def describe_checks(checks: list[ArrayCheck], against: str) -> str:
    """One line naming what was verified against what, e.g. ``verified against the
    default configuration's output: out; not checked: aux, left as initialised``."""
    sound = [c.name for c in checks if c.sound]
    weak = [c for c in checks if c.compared and not c.sound]
    skipped = [c for c in checks if not c.compared]
    parts: list[str] = []
    if sound:
        parts.append(f"verified against {against}: {', '.join(sound)}")
    if weak:
        parts.append(
            f"compared with {against}, but the check is weak: "
            + "; ".join(f"{c.name} ({_short(c.why)})" for c in weak)
        )
    if skipped:
        parts.append("not checked: " + "; ".join(f"{c.name}, {_short(c.why)}" for c in skipped))
    return "; ".join(parts) if parts else "nothing to verify: no array is written"


def _short(why: str) -> str:
    """A reason of :func:`reference_problems` as a few words about one array."""
    import re

    if "wrote nothing" in why:
        return "left as initialised"
    if "reads past" in why:
        return "the reference reads past an array"
    if "tolerance" in why:
        return "the tolerance accepts it as initialised"
    if m := re.search(r"has (\d+) NaN", why):
        return f"its reference holds {m[1]} NaN or infinite values"
    if "constant" in why:
        return "its reference is constant"
    if m := re.search(r"left (\d+%) of", why):
        return f"the reference left {m[1]} of it as initialised"
    if "empty" in why:
        return "empty"
    return why
