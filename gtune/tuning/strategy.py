"""Which strategy runs, with which options, for a kernel.

The shipped specs are written for gtune's template parameters. When one is asked for
(``hybrid`` is the default) and the kernel's parameters are not the template's -- it
lacks WX, or has parameters the spec never tunes (``block_size_x``, a ``--param``
macro) -- the ``generic`` strategy runs instead, with groups built from the kernel's own
launch geometry, and the report says so. No shipped spec needs editing to tune a kernel.

Strategy options may be given as text (``--option n=200``): each is converted to the
type the strategy declares for it; unknown keys are errors naming the strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtune.exceptions import InputError
from gtune.heuristics import HeuristicSpec, get_strategy, load_spec, shipped_specs
from gtune.heuristics.strategies import Strategy
from gtune.heuristics.strategies.generic import GenericStrategy
from gtune.heuristics.strategies.grouped import GroupedStrategy
from gtune.kernel import TunableKernel

GENERIC = "generic"


@dataclass
class ResolvedStrategy:
    """The plugin, its checked options, the name shown in reports, and why if adapted."""

    plugin: Strategy
    options: dict[str, Any]
    label: str
    note: str = ""
    # options of the same plugin for some techniques instead of ``options`` (the
    # default hybrid searches the temporal techniques with the ``temporal`` spec)
    technique_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def options_for(self, technique: str | None) -> dict[str, Any]:
        """The options the search of ``technique`` runs with."""
        if technique is not None and technique in self.technique_options:
            return self.technique_options[technique]
        return self.options


def _technique_parameters(kernel: TunableKernel) -> set[str]:
    names: set[str] = set()
    for rules in kernel.techniques.values():
        for rule in rules:
            names |= set(rule.names)
    return names


def spec_misfit(spec: HeuristicSpec, kernel: TunableKernel) -> str:
    """Why ``spec`` does not fit the kernel's parameters ("" if it does)."""
    params = set(kernel.parameter_names)
    named = {p for step in spec.steps for p in step.tune} | set(spec.start)
    missing = sorted(named - params - set(spec.optional))
    if missing:
        return f"the kernel has no {missing[0]}"
    tuned = {p for step in spec.steps for p in step.tune}
    fixed_by_technique = _technique_parameters(kernel)
    untuned = [p for p in kernel.parameter_names if p not in tuned | fixed_by_technique]
    if untuned:
        return f"the spec does not tune {', '.join(untuned)}"
    return ""


def local_size_texts(kernel: TunableKernel) -> list[str] | None:
    local = kernel.launch.local_size
    return None if local is None else [e.text for e in local]


def coerce_options(plugin: Strategy, given: Mapping[str, Any] | None) -> dict[str, Any]:
    """Text values converted to the types the strategy declares (other values kept), by
    :meth:`Option.parse` -- the one reader of ``--option`` text."""
    out: dict[str, Any] = {}
    for key, value in (given or {}).items():
        option = plugin.options.get(key)
        if option is None or not isinstance(value, str) or str in option.types:
            out[key] = value  # configure() names unknown keys and wrong types
            continue
        out[key] = option.parse(plugin.name, key, value)
    return out


def _generic(
    kernel: TunableKernel, options: Mapping[str, Any] | None, label: str, note: str
) -> ResolvedStrategy:
    plugin = GenericStrategy()
    given = coerce_options(plugin, options)
    given.setdefault("local", local_size_texts(kernel))
    return ResolvedStrategy(plugin, plugin.configure(given), label, note)


def resolve_strategy(
    kernel: TunableKernel,
    strategy: str,
    spec: str | Path | HeuristicSpec | None = None,
    options: Mapping[str, Any] | None = None,
) -> ResolvedStrategy:
    """The strategy to run on ``kernel``; errors in names or options raise InputError."""
    opts = dict(options or {})
    if strategy == GENERIC and spec is None:
        return _generic(kernel, opts, GENERIC, "")
    shipped = shipped_specs()
    if spec is not None:
        if strategy not in ("hybrid", "grouped"):
            raise InputError(
                f"a spec file runs with the grouped strategy, not {strategy!r}", source=str(spec)
            )
        loaded = spec if isinstance(spec, HeuristicSpec) else load_spec(spec)
        is_shipped = isinstance(spec, str) and spec in shipped and not Path(spec).exists()
        if is_shipped:
            why = spec_misfit(loaded, kernel)
            if why:
                return _generic(kernel, opts, GENERIC, _adapt_note(str(spec), why))
        plugin = get_strategy("grouped")
        opts = coerce_options(plugin, opts)
        opts["spec"] = loaded
        return ResolvedStrategy(plugin, plugin.configure(opts), loaded.name)
    plugin = get_strategy(strategy)
    if strategy in shipped and "spec" not in opts:
        why = spec_misfit(load_spec(strategy), kernel)
        if why:
            return _generic(kernel, opts, GENERIC, _adapt_note(strategy, why))
    resolved = ResolvedStrategy(plugin, plugin.configure(coerce_options(plugin, opts)), strategy)
    if strategy == DEFAULT and "spec" not in opts:
        resolved.technique_options, resolved.note = _temporal_options(kernel, plugin, opts)
    return resolved


DEFAULT = "hybrid"
"""The default strategy: the hybrid spec, with the temporal spec for temporal blocking."""

TEMPORAL_SPEC = "temporal"
"""The shipped spec the default strategy searches the temporal techniques with."""


def _temporal_options(
    kernel: TunableKernel, plugin: Strategy, opts: Mapping[str, Any]
) -> tuple[dict[str, dict[str, Any]], str]:
    """The default strategy's options for the temporal techniques: the ``temporal``
    spec's grouped search, whose first step tunes the time steps per launch with the
    block (the hybrid's steps reach TB only after the tile, with a block tuned for one
    step)."""
    names = kernel.temporal_techniques
    if not names or TEMPORAL_SPEC not in shipped_specs():
        return {}, ""
    spec = load_spec(TEMPORAL_SPEC)
    if spec_misfit(spec, kernel):
        return {}, ""
    if not isinstance(plugin, GroupedStrategy):
        return {}, ""
    options = plugin.configure({**coerce_options(plugin, dict(opts)), "spec": spec})
    note = f"{', '.join(names)} searched with the {TEMPORAL_SPEC} spec (specs/temporal.yaml)"
    return {name: options for name in names}, note


def _adapt_note(name: str, why: str) -> str:
    return (
        f"the shipped spec {name!r} is written for the template's parameters and {why}: "
        "tuned with the generic strategy instead (the work-group shape from the launch, "
        "then every other parameter, group by group)"
    )


__all__ = [
    "DEFAULT",
    "GENERIC",
    "TEMPORAL_SPEC",
    "ResolvedStrategy",
    "coerce_options",
    "local_size_texts",
    "resolve_strategy",
    "spec_misfit",
]
