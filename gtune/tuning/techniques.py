"""Which data-loading technique(s) to search: the technique policy.

A description's ``techniques`` (global, vec, local, image, ...) each restrict the space
with their constraints (seed 001 §4). A :class:`TechniquePolicy` looks at the kernel and
the device's limits and says which techniques to search, with a note for the report.
``auto`` asks the load predictor (seed 001 §6.1, :mod:`gtune.loadpredict`) for a model
trained on this kind of device with this heuristic: a confident model narrows the search
to one technique, an unsure one to two; with no model (or a kernel without stencil
features) every technique is searched and the best kept -- the oracle (seed 001 §8.1) --
and the note says so. ``all`` is always the oracle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel

AUTO = "auto"
ALL = "all"
WHOLE = "whole"
NO_PREDICTOR_NOTE = "no load predictor for this device yet: tried every technique (oracle)"
ORACLE = "oracle"  # the strategy name for the hybrid over every technique
BASELINES = ("random", "expert", "exhaustive")


def technique_for(strategy: str, technique: str) -> str:
    """What a strategy searches when ``technique`` is asked for (docs/tuning.md):
    ``oracle`` is the hybrid over every technique; the baselines search the whole space
    at once unless a technique is named; heuristics search what ``technique`` says
    (``auto``: the load predictor's choice)."""
    if strategy == ORACLE:
        return ALL
    if strategy in BASELINES and technique in (AUTO, ALL):
        return WHOLE
    return technique


SCOUT_MIN = 60
"""The fewest configurations the runner-up is scouted for, whatever its share: a scout
of fewer has measured little beyond its spec's first steps. Replayed on the H200's 144
complete searches with whole families held out (``benchmarks/predict/regret.py``,
``benchmarks/results/predict/h200-complete/regret.md``), a floor of 30 left three 2D
image convolutions that stream wins at 4096² and 8192² on vec (stream's scout of 30 had
not reached its best: regret up to 1.098, geometric mean 1.0022); 60 finds every
kernel's best technique but a few within 3.3 % (1.0005, worst 1.033) at 71 % of
``--technique all``'s search time against 67 %; 50 still missed one by 6 %, 70 found
all at 74 %. The floor first came from one kernel (diamond_2d_yz_r3, whose stream
scout of 14 configurations dropped a technique that won by 19 %: 30 caught it)."""


@dataclass(frozen=True)
class TechniqueChoice:
    """The techniques to search, one search each (``None``: the whole space at once)."""

    techniques: tuple[str | None, ...]
    note: str = ""
    unpredicted: bool = False  # every technique, because no model could predict one
    equal: bool = False  # the searches share a wall-time budget equally: no scouting
    # the runner-up scouted for ``scout_share`` of its search once the first choice is
    # searched, and searched to its end when it leads at equal progress (docs/predictor.md)
    scout: str | None = None
    scout_share: float = 0.0
    # the runner-up's search length over the first choice's, estimated from the
    # model's data (``None``: unknown; the scout's share is of the first choice's length)
    scout_length: float | None = None
    # never fewer configurations than this, whatever the share (SCOUT_MIN)
    scout_min: int = SCOUT_MIN


class TechniquePolicy(Protocol):
    """Decides the technique(s) to search for a kernel on a device."""

    @property
    def name(self) -> str:
        """How the request is shown in reports (auto, all, whole, a technique)."""
        ...

    def choose(self, kernel: TunableKernel, device: DeviceLimits | None) -> TechniqueChoice:
        """The techniques to search; ``device`` is None when no device is known yet."""
        ...


@dataclass(frozen=True)
class OracleTechniquePolicy:
    """Every technique of the kernel (or those of ``only`` it has), one search each;
    the best is kept. ``equal``: under a wall-time budget each search gets an equal part
    (no scouting, see :mod:`gtune.tuning.driver`), as labelling techniques needs."""

    name: str = AUTO
    note: str = NO_PREDICTOR_NOTE
    only: tuple[str, ...] = ()
    equal: bool = False

    def choose(self, kernel: TunableKernel, device: DeviceLimits | None) -> TechniqueChoice:
        names = tuple(t for t in kernel.techniques if not self.only or t in self.only)
        if not names:
            return TechniqueChoice((None,))
        return TechniqueChoice(names, self.note if len(names) > 1 else "", equal=self.equal)


@dataclass(frozen=True)
class FixedTechniquePolicy:
    """One named technique, or ``None``: a single search over the whole space."""

    technique: str | None

    @property
    def name(self) -> str:
        return WHOLE if self.technique is None else self.technique

    def choose(self, kernel: TunableKernel, device: DeviceLimits | None) -> TechniqueChoice:
        if self.technique is None:
            return TechniqueChoice((None,))
        names = list(kernel.techniques)
        if not names:
            raise InputError(
                f"technique {self.technique!r} asked for, but the kernel defines no "
                "data-loading techniques; use --technique auto",
                source=kernel.label,
            )
        if self.technique not in kernel.techniques:
            raise InputError(
                f"unknown technique {self.technique!r}; the kernel defines: {', '.join(names)} "
                "(or auto, all, whole)",
                source="technique",
            )
        return TechniqueChoice((self.technique,))


@dataclass(frozen=True)
class PredictedTechniquePolicy:
    """The load predictor's choice for ``heuristic``; the oracle when it has no answer."""

    heuristic: str = "hybrid"
    name: str = AUTO

    def choose(self, kernel: TunableKernel, device: DeviceLimits | None) -> TechniqueChoice:
        names = tuple(kernel.techniques)
        if not names:
            return TechniqueChoice((None,))
        if device is None or len(names) == 1:
            return OracleTechniquePolicy().choose(kernel, device)
        # imported when asked: loading scikit-learn takes a second (no import cycle:
        # gtune.loadpredict never imports tuning; training is gtune.training, above)
        from gtune.loadpredict.policy import choose_techniques

        choice = choose_techniques(kernel, device, self.heuristic)
        unpredicted = choice.oracle and len(choice.techniques) > 1
        return TechniqueChoice(
            tuple(choice.techniques),
            choice.note,
            unpredicted,
            scout=choice.scout,
            scout_share=choice.scout_share,
            scout_length=choice.scout_length,
        )


def technique_policy(
    technique: str | TechniquePolicy, heuristic: str = "hybrid"
) -> TechniquePolicy:
    """The policy a request names: ``auto``, ``all``, ``whole`` or a technique name."""
    if not isinstance(technique, str):
        return technique
    if technique == AUTO:
        return PredictedTechniquePolicy(heuristic)
    if technique == ALL:
        return OracleTechniquePolicy(name=ALL, note="")
    if technique == WHOLE:
        return FixedTechniquePolicy(None)
    return FixedTechniquePolicy(technique)


def techniques_to_run(kernel: TunableKernel, technique: str) -> list[str | None]:
    """The techniques a request means (device limits do not matter to these policies)."""
    policy = technique_policy(technique)
    return list(policy.choose(kernel, None).techniques)


def technique_of(kernel: TunableKernel, config: Mapping[str, int] | None) -> str | None:
    """The first technique of the description whose constraints ``config`` meets (a
    parameter ``config`` lacks, as in a result recorded before the kernel gained it, at
    its default)."""
    if config is None:
        return None
    defaults = {p.name: int(p.default) for p in kernel.parameters if p.default is not None}
    env = kernel.env({**defaults, **config})
    for name, rules in kernel.techniques.items():
        if all(bool(rule.evaluate(env)) for rule in rules):
            return name
    return None


__all__ = [
    "ALL",
    "AUTO",
    "BASELINES",
    "NO_PREDICTOR_NOTE",
    "ORACLE",
    "WHOLE",
    "FixedTechniquePolicy",
    "OracleTechniquePolicy",
    "PredictedTechniquePolicy",
    "TechniqueChoice",
    "TechniquePolicy",
    "technique_for",
    "technique_of",
    "technique_policy",
    "techniques_to_run",
]
