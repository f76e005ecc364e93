"""Strategy plugins, looked up by name.

Strategies are found through the entry-point group ``gtune.strategies``
(:mod:`importlib.metadata`): an installed distribution that declares

.. code-block:: toml

    [project.entry-points."gtune.strategies"]
    annealing = "my_package.annealing:AnnealingStrategy"

makes ``annealing`` available to :func:`get_strategy`, ``gtune run --strategy`` and
``gtune compare``. The entry point names a :class:`Strategy` subclass (or any callable
returning a :class:`Strategy`). gtune's own strategies are declared the same way in its
``pyproject.toml``, with a built-in fallback so they work from a source checkout that
was never installed. A plugin cannot take the name of a built-in strategy or a shipped
spec; the first distribution that declares a name wins.

Built in: ``exhaustive``, ``expert``, ``random``, ``grouped`` (any spec file),
``generic`` (groups built from the kernel's launch geometry; also the automatic fallback
when a shipped spec does not fit the kernel's parameters) and one
strategy per shipped spec (``hybrid``, ``dims``, ``opts``, ``hybrid-restricted``, ...).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from typing import Any

from gtune.exceptions import EnvironmentProblem, GtuneError, InputError
from gtune.heuristics.spec import shipped_specs
from gtune.heuristics.strategies.base import Option, Strategy
from gtune.heuristics.strategies.exhaustive import ExhaustiveStrategy
from gtune.heuristics.strategies.expert import ExpertStrategy
from gtune.heuristics.strategies.generic import GenericStrategy
from gtune.heuristics.strategies.grouped import GroupedStrategy
from gtune.heuristics.strategies.random_sampling import RandomStrategy

ENTRY_POINT_GROUP = "gtune.strategies"

Factory = Callable[[], Strategy]

# gtune's own strategies: the same names and objects its pyproject.toml declares as
# entry points, so they work even where the package metadata is missing or stale.
_BUILTIN: dict[str, Factory] = {
    "exhaustive": ExhaustiveStrategy,
    "expert": ExpertStrategy,
    "random": RandomStrategy,
    "grouped": GroupedStrategy,
    "generic": GenericStrategy,
}
_REGISTERED: dict[str, Factory] = {}


def register_strategy(name: str, factory: Factory) -> None:
    """Make a strategy available by name in this process (an entry point is the way to
    make it available to the command line)."""
    if name in _BUILTIN or name in _REGISTERED or name in shipped_specs():
        raise InputError(f"a strategy named {name!r} already exists")
    _REGISTERED[name] = factory


def _plugins() -> dict[str, importlib.metadata.EntryPoint]:
    """Entry points of the group, by name, built-in and shipped-spec names excluded."""
    taken = set(_BUILTIN) | set(_REGISTERED) | set(shipped_specs())
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in taken and ep.name not in found:
            found[ep.name] = ep
    return found


def available_strategies() -> list[str]:
    """Every name :func:`get_strategy` accepts."""
    return sorted(set(_BUILTIN) | set(_REGISTERED) | set(shipped_specs()) | set(_plugins()))


def _load(ep: importlib.metadata.EntryPoint) -> Factory:
    origin = f"{ep.value}" + (f" from {ep.dist.name}" if ep.dist is not None else "")
    try:
        loaded = ep.load()
    except Exception as exc:  # a broken plugin must not look like a gtune bug
        raise EnvironmentProblem(
            f"strategy plugin {ep.name!r} ({origin}) cannot be loaded: {type(exc).__name__}: {exc}"
        ) from None
    if not callable(loaded):
        raise EnvironmentProblem(
            f"strategy plugin {ep.name!r} ({origin}) is not a Strategy class or factory"
        )

    def make() -> Strategy:
        try:
            made = loaded()
        except GtuneError:
            raise
        except Exception as exc:
            raise EnvironmentProblem(
                f"strategy plugin {ep.name!r} ({origin}) failed to start: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(made, Strategy):
            raise EnvironmentProblem(
                f"strategy plugin {ep.name!r} ({origin}) made {type(made).__name__}, "
                "not a gtune Strategy"
            )
        return made

    return make


def get_strategy(name: str, options: Mapping[str, Any] | None = None) -> Strategy:
    """The strategy called ``name``, with ``options`` bound (strings such as those of
    ``--option key=value`` are parsed to the option's declared type). An unknown name
    lists the available ones; an unknown option lists the strategy's options."""
    strategy: Strategy
    if name in _BUILTIN:
        strategy = _BUILTIN[name]()
    elif name in _REGISTERED:
        strategy = _REGISTERED[name]()
    elif name in shipped_specs():
        strategy = GroupedStrategy(preset=name)
    else:
        plugins = _plugins()
        if name not in plugins:
            raise InputError(
                f"unknown strategy {name!r}; available: {', '.join(available_strategies())}",
                hint=f"plugins register under the entry-point group {ENTRY_POINT_GROUP!r}",
            )
        strategy = _load(plugins[name])()
    if options:
        strategy.bind(options)
    return strategy


def describe_options(strategy: Strategy) -> list[tuple[str, str, Any, str]]:
    """(name, type, default, doc) of every option, for help texts and documentation."""
    return [(k, o.type_name, o.default, o.doc) for k, o in sorted(strategy.options.items())]


__all__ = [
    "ENTRY_POINT_GROUP",
    "ExhaustiveStrategy",
    "ExpertStrategy",
    "GenericStrategy",
    "GroupedStrategy",
    "Option",
    "RandomStrategy",
    "Strategy",
    "available_strategies",
    "describe_options",
    "get_strategy",
    "register_strategy",
]
