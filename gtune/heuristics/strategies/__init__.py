"""Strategy plugins, looked up by name.

Built in: ``exhaustive``, ``expert``, ``random``, ``grouped`` (any spec file) and one
strategy per shipped spec (``hybrid``, ``dims``, ``opts``, ``hybrid-restricted``, ...).
"""

from __future__ import annotations

from collections.abc import Callable

from gtune.exceptions import InputError
from gtune.heuristics.spec import shipped_specs
from gtune.heuristics.strategies.base import Option, Strategy
from gtune.heuristics.strategies.exhaustive import ExhaustiveStrategy
from gtune.heuristics.strategies.expert import ExpertStrategy
from gtune.heuristics.strategies.grouped import GroupedStrategy
from gtune.heuristics.strategies.random_sampling import RandomStrategy

_REGISTRY: dict[str, Callable[[], Strategy]] = {
    "exhaustive": ExhaustiveStrategy,
    "expert": ExpertStrategy,
    "random": RandomStrategy,
    "grouped": GroupedStrategy,
}


def register_strategy(name: str, factory: Callable[[], Strategy]) -> None:
    """Make a strategy available by name (plugins outside gtune call this)."""
    if name in _REGISTRY or name in shipped_specs():
        raise InputError(f"a strategy named {name!r} already exists")
    _REGISTRY[name] = factory


def available_strategies() -> list[str]:
    """Every name :func:`get_strategy` accepts."""
    return sorted(set(_REGISTRY) | set(shipped_specs()))


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name``; an unknown name lists the available ones."""
    if name in _REGISTRY:
        return _REGISTRY[name]()
    if name in shipped_specs():
        return GroupedStrategy(preset=name)
    raise InputError(f"unknown strategy {name!r}; available: {', '.join(available_strategies())}")


__all__ = [
    "ExhaustiveStrategy",
    "ExpertStrategy",
    "GroupedStrategy",
    "Option",
    "RandomStrategy",
    "Strategy",
    "available_strategies",
    "get_strategy",
    "register_strategy",
]
