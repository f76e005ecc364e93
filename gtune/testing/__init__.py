"""Contract suites shipped with gtune, for new backends and plugins.

A new result store backend, evaluator or strategy plugin is checked by the same tests
as gtune's own: subclass the suite in a test module (named ``Test...`` so pytest
collects it) and provide the fixture the suite names.

- :class:`~gtune.testing.store.StoreContract` -- a ``store_url`` fixture: the URL of a
  fresh, empty store of the backend;
- :class:`~gtune.testing.evaluator.EvaluatorContract` -- ``evaluator`` and ``configs``
  fixtures: an evaluator and configurations it can measure;
- :class:`~gtune.testing.strategy.StrategyContract` -- a ``strategy`` fixture (and,
  where the strategy needs particular parameters, ``case``: the space, evaluator and
  problem it searches).

These modules import pytest (a development dependency); gtune itself never imports them.
"""

from __future__ import annotations

from gtune.testing.evaluator import EvaluatorContract
from gtune.testing.store import StoreContract
from gtune.testing.strategy import SearchCase, StrategyContract, synthetic_case

__all__ = ["EvaluatorContract", "SearchCase", "StoreContract", "StrategyContract", "synthetic_case"]
