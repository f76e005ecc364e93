"""Searches seeded with the kernel's default; a warning when a budget is too small."""

from __future__ import annotations

import logging

import pytest

import gtune
from gtune.heuristics import SearchProblem, get_strategy, nearest_config
from gtune.heuristics.search import SEED_STEP, Seeded
from gtune.space import technique_space
from gtune.tuning import TuningSession
from tests.heuristics.conftest import Recorded


def test_every_search_starts_with_the_default_and_never_ends_worse(
    replay_session: TuningSession,
) -> None:
    kernel = replay_session.kernel
    report = gtune.tune(kernel, session=replay_session, technique="global", budget=6, confirm=None)
    (run,) = report.runs
    assert run.outcome is not None
    first = run.outcome.trace[0]
    default = kernel.default_config()
    assert default is not None
    assert first.step == SEED_STEP and first.config == {
        p: default[p] for p in replay_session.space.parameters
    }
    assert first.result.ok
    assert run.outcome.best_s <= first.result.median_s
    # the grouped search moved from the default: its first group varies only that
    # group's parameters, every other one stays at the default's value
    second = [e for e in run.outcome.trace[1:] if e.step == run.outcome.trace[1].step]
    varied = {p for e in second for p, v in e.config.items() if v != first.config[p]}
    assert varied and len(varied) < len(first.config)


def test_seeding_can_be_turned_off(replay_session: TuningSession) -> None:
    report = gtune.tune(
        replay_session.kernel,
        session=replay_session,
        technique="global",
        budget=6,
        confirm=None,
        seed_default=False,
    )
    assert report.runs[0].outcome is not None
    assert all(e.step != SEED_STEP for e in report.runs[0].outcome.trace)


def test_nearest_config_is_the_default_when_valid_else_the_closest_valid(
    recorded: Recorded,
) -> None:
    kernel = recorded.kernel
    space = recorded.space()
    default = kernel.default_config()
    assert default is not None
    assert nearest_config(space, default) == {p: default[p] for p in space.parameters}
    local = technique_space(space, kernel, "local")
    near = nearest_config(local, default)
    assert near is not None and local.is_valid(near) is None
    assert near != {p: default[p] for p in local.parameters}  # the default loads globally
    # nothing valid in the space differs from the default in fewer parameters
    fewest = min(sum(c[p] != default[p] for p in local.parameters) for c in local.enumerate())
    assert sum(near[p] != default[p] for p in local.parameters) == fewest


def test_seeded_searcher_counts_the_default(recorded: Recorded) -> None:
    space = recorded.space()
    problem = SearchProblem.from_kernel(recorded.kernel)
    random = get_strategy("random")
    inner = random.searcher(space, problem, random.configure({"n": 7}))
    seeded = Seeded(inner, dict(recorded.kernel.default_config() or {}))
    assert seeded.expected_evaluations() == (inner.expected_evaluations() or 0) + 1
    batch = seeded.ask()
    assert batch is not None and batch.step == SEED_STEP and len(batch.configs) == 1


def test_random_and_exhaustive_stay_as_they_are(replay_session: TuningSession) -> None:
    # random sampling is the baseline (N uniform draws); exhaustive measures the default
    # anyway: neither gets a seed
    assert not get_strategy("random").seeded and not get_strategy("exhaustive").seeded
    report = gtune.tune(
        replay_session.kernel,
        session=replay_session,
        strategy="random",
        technique="global",
        strategy_options={"n": 5},
        confirm=None,
    )
    assert report.runs[0].outcome is not None
    assert report.evaluations == 5
    assert all(e.step != SEED_STEP for e in report.runs[0].outcome.trace)


def test_a_budget_too_small_for_the_first_group_is_warned_about(
    replay_session: TuningSession, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="gtune"):
        small = gtune.tune(
            replay_session.kernel, session=replay_session, technique="all", budget=8, confirm=None
        )
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "too few to finish its first group" in warned[0]
    assert warned[0] in small.notes
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gtune"):
        roomy = gtune.tune(
            replay_session.kernel,
            session=replay_session,
            technique="global",
            budget=400,
            confirm=None,
        )
    assert not any("first group" in n for n in roomy.notes)
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
    # one search (one technique, or a plain kernel): no advice to search fewer
    one = gtune.tune(
        replay_session.kernel, session=replay_session, technique="global", budget=3, confirm=None
    )
    warned = [n for n in one.notes if "first group" in n]
    assert len(warned) == 1 and "the search's first group" in warned[0]
    assert "technique" not in warned[0] and "each of" not in warned[0]


def test_technique_of_reads_a_recorded_configuration_without_a_newer_parameter() -> None:
    """A result recorded before the template had RIM names no RIM: it ran at RIM's
    default (0), which every technique accepts."""
    from pathlib import Path

    from gtune.description import load_kernel
    from gtune.tuning.techniques import technique_of

    root = Path(__file__).resolve().parents[2]
    kernel = load_kernel(root / "stencils" / "heat3d.yaml", {"NX": 64, "NY": 64, "NZ": 64})
    assert "RIM" in kernel.parameter_names
    old = {"WX": 16, "WY": 4, "WZ": 1, "BX": 4, "VX": 4, "CX": 1, "CY": 1, "CZ": 2}
    old |= {"LOCAL": 0, "IMAGE": 0, "STREAM": 0, "ZC": 1}
    assert technique_of(kernel, old) == "vec"
    assert technique_of(kernel, {**old, "RIM": 1}) == "vec"
    scalar = {**old, "BX": 1, "VX": 1, "CX": 32, "CZ": 1, "STREAM": 1, "ZC": 8}
    assert technique_of(kernel, scalar) == "stream"
