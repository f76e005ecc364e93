"""Baselines (expert search, random sampling, exhaustive) and the strategy registry."""

from __future__ import annotations

import pytest

from gtune.exceptions import InputError, RecordingMissing
from gtune.heuristics import (
    Budget,
    Strategy,
    available_strategies,
    get_strategy,
    register_strategy,
    tune,
)
from gtune.heuristics.strategies import ExhaustiveStrategy
from gtune.kernel import canonical_config
from gtune.measure import Status

from .conftest import Recorded


def test_expert_search_is_exhaustive_within_the_paper_limits(recorded: Recorded) -> None:
    space = recorded.space()
    evaluator = recorded.replay()
    outcome = tune("expert", space, evaluator, recorded.problem())
    # §8.1: VX <= 4, WX >= 32, WY*CY <= 4, WZ*CZ <= 4; NX is 16 here, so WX >= 32 admits
    # nothing and the limit must be loosened for this problem.
    assert outcome.evaluations == 0 and evaluator.calls == []
    assert any("no configuration" in n for n in outcome.notes)

    limits = ["VX <= 4", "WX >= 8", "WY * CY <= 4", "WZ * CZ <= 4"]
    outcome = tune(
        "expert", space, recorded.replay(), recorded.problem(), options={"limits": limits}
    )
    expected = [
        c
        for c in recorded.configs
        if c["VX"] <= 4 and c["WX"] >= 8 and c["WY"] * c["CY"] <= 4 and c["WZ"] * c["CZ"] <= 4
    ]
    got = [e.config for e in outcome.trace]
    assert sorted(map(canonical_config, got)) == sorted(map(canonical_config, expected))
    ok = [c for c in expected if recorded.by_key[canonical_config(c)].ok]
    assert outcome.best_config == min(ok, key=recorded.objective)


def test_expert_drops_limits_on_missing_parameters(recorded: Recorded) -> None:
    outcome = tune(
        "expert",
        recorded.space("global"),
        recorded.replay(),
        recorded.problem(),
        options={"limits": ["BY <= 2", "WX >= 16"]},
    )
    assert any("'BY <= 2' dropped" in n for n in outcome.notes)
    assert outcome.evaluations > 0 and all(e.config["WX"] >= 16 for e in outcome.trace)


def test_random_sampling_from_the_pruned_space(recorded: Recorded) -> None:
    space = recorded.space("local")
    outcome = tune(
        "random", space, recorded.replay(), recorded.problem(), options={"n": 40, "seed": 3}
    )
    keys = [canonical_config(e.config) for e in outcome.trace]
    assert len(keys) == 40 == len(set(keys))
    assert all(space.is_valid(e.config) is None for e in outcome.trace)
    ok = [e.config for e in outcome.trace if e.result.ok]
    assert outcome.best_config == min(ok, key=recorded.objective)
    same = tune(
        "random", space, recorded.replay(), recorded.problem(), options={"n": 40, "seed": 3}
    )
    other = tune(
        "random", space, recorded.replay(), recorded.problem(), options={"n": 40, "seed": 4}
    )
    assert [e.config for e in same.trace] == [e.config for e in outcome.trace]
    assert [e.config for e in other.trace] != [e.config for e in outcome.trace]
    # More draws than configurations: the whole space, once each.
    everything = tune("random", space, recorded.replay(), recorded.problem(), options={"n": 10_000})
    assert everything.evaluations == space.size()


def test_random_sampling_of_the_unpruned_space_records_illegal_draws(recorded: Recorded) -> None:
    space = recorded.space()
    evaluator = recorded.replay()
    outcome = tune(
        "random",
        space,
        evaluator,
        recorded.problem(),
        options={"n": 300, "unpruned": True, "seed": 1},
    )
    assert len(outcome.trace) == 300
    pruned = [e for e in outcome.trace if e.result.status is Status.PRUNED]
    run = [e for e in outcome.trace if e.result.status is not Status.PRUNED]
    assert outcome.pruned == len(pruned) > 0 and outcome.evaluations == len(run)
    assert all(space.is_valid(e.config) is not None for e in pruned)
    assert all(e.result.message for e in pruned)  # names the violated constraint
    assert [e.config for e in run] == evaluator.calls
    assert outcome.compile_s == pytest.approx(sum(e.result.compile_s for e in run))


def test_random_unpruned_evaluate_mode_sends_illegal_draws_to_the_evaluator(
    recorded: Recorded,
) -> None:
    # A replay evaluator has no measurement for an illegal configuration: it says so.
    with pytest.raises(RecordingMissing, match="never measured"):
        tune(
            "random",
            recorded.space(),
            recorded.replay(),
            recorded.problem(),
            options={"n": 300, "unpruned": True, "illegal": "evaluate"},
        )


def test_exhaustive_finds_the_recorded_optimum(recorded: Recorded) -> None:
    outcome = tune("exhaustive", recorded.space(), recorded.replay(), recorded.problem())
    ok = [r for r in recorded.results if r.ok]
    assert outcome.evaluations == len(recorded.results)
    assert outcome.best_result == min(ok, key=lambda r: r.objective)
    half = tune(
        "exhaustive",
        recorded.space(),
        recorded.replay(),
        recorded.problem(),
        budget=Budget(evaluations=100),
    )
    assert half.evaluations == 100


def test_registry_lists_and_rejects(recorded: Recorded) -> None:
    names = available_strategies()
    for name in ("expert", "random", "exhaustive", "grouped", "hybrid", "dims", "opts"):
        assert name in names
    with pytest.raises(InputError, match=r"unknown strategy 'hybird'; available: .*hybrid"):
        get_strategy("hybird")
    with pytest.raises(InputError, match="already exists"):
        register_strategy("random", ExhaustiveStrategy)
    assert get_strategy("dims").name == "dims"


def test_options_are_checked(recorded: Recorded) -> None:
    random = get_strategy("random")
    with pytest.raises(InputError, match="has no option 'samples'; its options: batch, illegal"):
        random.configure({"samples": 10})
    with pytest.raises(InputError, match="option 'n' of strategy 'random' must be int"):
        random.configure({"n": "ten"})
    with pytest.raises(InputError, match="must be one of record, evaluate"):
        random.configure({"illegal": "skip"})
    with pytest.raises(InputError, match="must be int, got True"):
        random.configure({"seed": True})
    with pytest.raises(InputError, match="at least 1"):
        tune("random", recorded.space(), recorded.replay(), recorded.problem(), options={"n": 0})
    for name in available_strategies():
        strategy = get_strategy(name)
        assert isinstance(strategy, Strategy) and strategy.doc
        assert all(o.doc for o in strategy.options.values())
        assert set(strategy.configure({})) == set(strategy.options)


def test_outcome_serialises(recorded: Recorded) -> None:
    import json

    outcome = tune("hybrid", recorded.space("global"), recorded.replay(), recorded.problem())
    data = json.loads(json.dumps(outcome.to_dict()))
    assert data["evaluations"] == outcome.evaluations == len(data["trace"])
    assert data["best_config"] == outcome.best_config
    assert [s["step"] for s in data["steps"]][:9] == [
        "x",
        "x merge",
        "x vectors",
        "y",
        "chunk for the tile",
        "z",
        "merge shape",
        "work-group shape",
        "tile shape",
    ]
