"""The grouped engine against real recorded timings.

The expected visit order of each shipped spec is computed here from seed 001's
description of the heuristic (§6.2.1–6.2.3, §8.3.4), written out as plain Python
predicates over the recorded configurations, and the engine's evaluations must match
it exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pytest
import yaml

from gtune.exceptions import InputError
from gtune.heuristics import (
    Budget,
    GroupedSearch,
    SearchProblem,
    drive,
    get_strategy,
    parse_spec,
    tune,
)
from gtune.kernel import Config, canonical_config
from gtune.measure import Result, Status

from .conftest import Recorded

Point = Mapping[str, int]


def pow2(lo: int, hi: int) -> set[int]:
    out, v = set(), lo
    while v <= hi:
        out.add(v)
        v *= 2
    return out


@dataclass
class RefStep:
    params: list[str]
    allowed: Callable[[Point, Point], bool]  # (candidate, current best) -> in the step?
    rounds: str = "all"


def x_step(n: Mapping[str, int]) -> RefStep:
    return RefStep(
        ["WX", "BX", "CX", "VX"],
        lambda c, b: (
            c["WX"] in pow2(1, n["NX"])
            and c["BX"] in pow2(1, n["NX"] // c["WX"])
            and c["CX"] in pow2(1, n["NX"] // (c["WX"] * c["BX"]))
        ),
    )


def dim_step(w: str, c_: str, size: int) -> RefStep:
    # BY and BZ do not exist in heat3d: they read as 1.
    return RefStep([w, c_], lambda c, b: c[w] in pow2(1, size) and c[c_] in pow2(1, size // c[w]))


def shape_step(n: Mapping[str, int]) -> RefStep:
    return RefStep(
        ["WX", "WY", "WZ"],
        lambda c, b: (
            c["WX"] in pow2(1, n["NX"])
            and c["WY"] in pow2(1, n["NY"])
            and c["WZ"] in pow2(1, n["NZ"])
            and c["WX"] * c["WY"] * c["WZ"] == b["WX"] * b["WY"] * b["WZ"]
        ),
    )


def merge_shape_step(n: Mapping[str, int]) -> RefStep:
    """The outputs per work-item reshaped at their number (CX*CY*CZ)."""
    return RefStep(
        ["CX", "CY", "CZ"],
        lambda c, b: (
            c["CX"] in pow2(1, n["NX"])
            and c["CY"] in pow2(1, n["NY"])
            and c["CZ"] in pow2(1, n["NZ"])
            and c["CX"] * c["CY"] * c["CZ"] == b["CX"] * b["CY"] * b["CZ"]
        ),
    )


def tile_shape_step(n: Mapping[str, int]) -> RefStep:
    """The tile in y reshaped at its height (WY*CY kept) while the outputs per
    work-item in x move within a factor 4 of their best."""
    return RefStep(
        ["WY", "CY", "CX"],
        lambda c, b: (
            c["WY"] in pow2(1, n["NY"])
            and c["CY"] in pow2(1, n["NY"])
            and c["CX"] in pow2(max(1, b["CX"] // 4), b["CX"] * 4)
            and c["WY"] * c["CY"] == b["WY"] * b["CY"]
        ),
    )


def dims_steps(n: Mapping[str, int]) -> list[RefStep]:
    return [x_step(n), dim_step("WY", "CY", n["NY"]), dim_step("WZ", "CZ", n["NZ"])]


def opts_steps(n: Mapping[str, int]) -> list[RefStep]:
    ws = ["WX", "WY", "WZ"]
    sizes = [n["NX"], n["NY"], n["NZ"]]
    return [
        RefStep(
            ws,
            lambda c, b: all(c[w] in pow2(1, s) for w, s in zip(ws, sizes, strict=True)),
            "first",
        ),
        RefStep(
            ["WX", "WY", "WZ", "CX", "CY", "CZ"],
            lambda c, b: all(
                c[w] in pow2(1, s)
                and c["C" + w[1]] in pow2(1, s)
                and c[w] * c["C" + w[1]] == b[w] * b["C" + w[1]]
                for w, s in zip(ws, sizes, strict=False)
            ),
            "later",
        ),
        RefStep(["BX", "VX"], lambda c, b: c["BX"] in pow2(1, n["NX"] // c["WX"])),
        RefStep(
            ["CX", "CY", "CZ"],
            lambda c, b: (
                c["CX"] in pow2(1, n["NX"] // (c["WX"] * c["BX"]))
                and c["CY"] in pow2(1, n["NY"] // c["WY"])
                and c["CZ"] in pow2(1, n["NZ"] // c["WZ"])
            ),
        ),
    ]


REFERENCES: dict[str, tuple[dict[str, int], Callable[[Mapping[str, int]], list[RefStep]]]] = {
    "group-by-dimension": ({"WY": 1, "WZ": 1, "CY": 1, "CZ": 1}, dims_steps),
    "hybrid": (
        {"WY": 1, "WZ": 1, "CY": 1, "CZ": 1},
        # the chunk steps and the others for streaming or 2D arrays only measure the
        # current point here (no STREAM, 3D): nothing new
        lambda n: [*dims_steps(n), merge_shape_step(n), shape_step(n), tile_shape_step(n)],
    ),
    "hybrid-restricted": (
        {"WY": 1, "WZ": 1, "CY": 1, "CZ": 1},
        lambda n: [*dims_steps(n), shape_step(n)],
    ),
    "group-by-optimization": ({"BX": 1, "CX": 1, "CY": 1, "CZ": 1}, opts_steps),
}


def simulate(
    recorded: Recorded,
    valid: Sequence[Config],
    start: Mapping[str, int],
    steps: Sequence[RefStep],
    rounds: int,
    objective: Callable[[Point], float],
) -> list[Config]:
    """Seed 001's grouped search, written out directly: the configurations measured."""
    params = recorded.parameters
    default = recorded.kernel.default_config() or {}
    matching = [c for c in valid if all(c[k] == v for k, v in start.items())]
    free = [p for p in params if p not in start]
    point = min(
        matching,
        key=lambda c: ([c[p] != default.get(p) for p in free], [c[p] for p in params]),
    )
    measured: list[Config] = []
    seen: set[str] = set()
    best = math.inf
    previous: list[int] | None = None
    before = dict(point)
    for r in range(rounds):
        active = [
            i for i, s in enumerate(steps) if s.rounds == "all" or (s.rounds == "first") == (r == 0)
        ]
        if previous == active and point == before:
            break
        previous, before = active, dict(point)
        for i in active:
            step = steps[i]
            candidates = [
                c
                for c in valid
                if all(c[p] == point[p] for p in params if p not in step.params)
                and step.allowed(c, point)
            ]
            candidates.sort(key=lambda c: [c[p] for p in step.params])
            current = dict(point)
            for c in candidates:
                if canonical_config(c) not in seen:
                    seen.add(canonical_config(c))
                    measured.append(c)
                if objective(c) < best:
                    best, current = objective(c), dict(c)
            point = current
    return measured


def run_spec(recorded: Recorded, name: str, technique: str | None, **kw):  # type: ignore[no-untyped-def]
    space = recorded.space(technique)
    evaluator = recorded.replay(kw.pop("replace", None))
    outcome = tune(name, space, evaluator, recorded.problem(), **kw)
    return outcome, evaluator, space


@pytest.mark.parametrize("technique", ["global", "local", None])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_shipped_spec_visits_exactly_what_the_paper_describes(
    recorded: Recorded, name: str, technique: str | None
) -> None:
    outcome, evaluator, space = run_spec(recorded, name, technique)
    start, make_steps = REFERENCES[name]
    valid = list(space.enumerate())
    if name == "hybrid-restricted":
        valid = [c for c in valid if c["WX"] >= 16 and c["WY"] <= 32 and c["WZ"] <= 32]
    expected = simulate(recorded, valid, start, make_steps(recorded.sizes), 3, recorded.objective)
    assert evaluator.calls == expected
    assert [e.config for e in outcome.trace] == expected
    assert outcome.evaluations == len(expected)
    measured_ok = [c for c in expected if recorded.by_key[canonical_config(c)].ok]
    assert outcome.best_config == min(measured_ok, key=recorded.objective)
    assert outcome.compile_s == pytest.approx(
        sum(recorded.by_key[canonical_config(c)].compile_s for c in expected)
    )
    assert outcome.run_s == pytest.approx(
        sum(recorded.by_key[canonical_config(c)].run_s for c in expected)
    )


def test_technique_is_fixed_by_the_space(recorded: Recorded) -> None:
    for technique in ("global", "local"):
        _outcome, evaluator, _ = run_spec(recorded, "hybrid", technique)
        inside = recorded.technique_of(technique)
        assert evaluator.calls and all(inside(c) for c in evaluator.calls)


def test_failed_configurations_are_never_best(recorded: Recorded) -> None:
    first, _, _ = run_spec(recorded, "hybrid", "global")
    assert first.best_config is not None
    best = first.best_result
    assert best is not None
    broken = Result(
        config=best.config,
        status=Status.WRONG_RESULT,
        compile_s=best.compile_s,
        times_s=best.times_s,
        message="mismatch",
    )
    again, _, _space = run_spec(
        recorded, "hybrid", "global", replace={canonical_config(best.config): broken}
    )
    assert again.best_config != first.best_config
    assert again.best_result is not None and again.best_result.ok
    assert any(e.config == first.best_config and not e.result.ok for e in again.trace)


def test_refused_configurations_feed_back_into_the_space(recorded: Recorded) -> None:
    victim = recorded.space("global").subspace({}, recorded.parameters)[0]
    refused = Result(config=victim, status=Status.LAUNCH_FAILED, message="invalid work-group")
    outcome, _, space = run_spec(
        recorded, "exhaustive", "global", replace={canonical_config(victim): refused}
    )
    assert outcome.failed >= 1
    violation = space.is_valid(victim)
    assert violation is not None and "refused" in violation.constraint


def test_evaluation_budget_stops_mid_step(recorded: Recorded) -> None:
    full, _, _ = run_spec(recorded, "hybrid", "global")
    outcome, evaluator, _ = run_spec(recorded, "hybrid", "global", budget=Budget(evaluations=7))
    assert [c for c in evaluator.calls] == [e.config for e in full.trace[:7]]
    assert outcome.evaluations == 7
    assert "budget of 7 evaluations" in outcome.stop_reason


def test_seconds_budget_counts_compile_and_run_time(recorded: Recorded) -> None:
    full, _, _ = run_spec(recorded, "hybrid", "global")
    costs = [e.result.compile_s + e.result.run_s for e in full.trace]
    limit = sum(costs[:10]) - costs[9] / 2  # reached during the 10th evaluation
    outcome, _, _ = run_spec(recorded, "hybrid", "global", budget=Budget(seconds=limit))
    assert outcome.evaluations == 10
    assert "s of compile and run time" in outcome.stop_reason


def test_spec_budget_applies_unless_overridden(recorded: Recorded) -> None:
    spec = parse_spec(
        yaml.safe_load(
            "budget: {evaluations: 5}\nsteps: [{tune: {WX: '1:NX:*2', CX: '1:NX/WX:*2'}}]"
        ),
        "budget.yaml",
    )
    own, _, _ = run_spec(recorded, "grouped", "global", options={"spec": spec})
    assert own.evaluations == 5
    wider, _, _ = run_spec(
        recorded, "grouped", "global", options={"spec": spec}, budget=Budget(evaluations=6)
    )
    assert wider.evaluations == 6


def test_early_stop_when_a_round_changes_nothing(recorded: Recorded) -> None:
    # n = 10 extra rounds: the search must stop once a round leaves the best unchanged.
    outcome, _, _ = run_spec(recorded, "hybrid", "global", options={"repeat": 10})
    rounds = {s.round for s in outcome.steps}
    assert max(rounds) < 10
    assert any("did not change during the round" in n for n in outcome.notes)
    last = [s for s in outcome.steps if s.round == max(rounds)]
    assert not any(s.improved for s in last)
    # Stopping lost nothing: allowing exactly the rounds it ran, or one more, measures
    # the same configurations (the extra round would only revisit them).
    for repeat in (max(rounds), max(rounds) + 1):
        same, _, _ = run_spec(recorded, "hybrid", "global", options={"repeat": repeat})
        assert [e.config for e in same.trace] == [e.config for e in outcome.trace]
    # The engine asked to measure nothing twice.
    keys = [canonical_config(e.config) for e in outcome.trace]
    assert len(keys) == len(set(keys))


def test_empty_step_is_skipped_with_a_note(recorded: Recorded) -> None:
    spec = parse_spec(
        yaml.safe_load(
            """
            steps:
              - name: impossible
                tune: {WX: "1:NX:*2"}
                where: ["WX > NX"]
              - name: x
                tune: {WX: "1:NX:*2"}
            """
        ),
        "skip.yaml",
    )
    outcome, evaluator, _ = run_spec(recorded, "grouped", "global", options={"spec": spec})
    assert outcome.steps[0].note == "no valid points; skipped"
    assert outcome.steps[0].candidates == 0
    assert [n for n in outcome.notes if "no valid points" in n] == [
        "no valid points here, skipped: 'impossible' (round 1)"
    ]
    assert evaluator.calls and all(s.step == "x" for s in outcome.trace)


def test_best_expressions_and_products(recorded: Recorded) -> None:
    """``best.WX`` reads the best so far; keep_product holds WX*CX at its value."""
    spec = parse_spec(
        yaml.safe_load(
            """
            repeat: 0
            start: {WY: 1, WZ: 1, CY: 1, CZ: 1}
            steps:
              - tune: {WX: "1:NX:*2"}
              - tune: {WX: "best.WX/2:best.WX*2:*2", CX: "*"}
                keep_product: ["WX*CX"]
            """
        ),
        "best.yaml",
    )
    outcome, _, _ = run_spec(recorded, "grouped", "global", options={"spec": spec})
    first = [e.config for e in outcome.trace if e.step == "step 1"]
    winner = min(first, key=recorded.objective)
    second = next(s for s in outcome.steps if s.step == "step 2")
    lo, hi = winner["WX"] // 2, winner["WX"] * 2
    space = recorded.space("global")
    expected = [
        c
        for c in space.enumerate()
        if lo <= c["WX"] <= hi
        and c["WX"] * c["CX"] == winner["WX"] * winner["CX"]
        and all(c[p] == winner[p] for p in recorded.parameters if p not in ("WX", "CX"))
    ]
    assert second.candidates == len(expected)


def test_ask_tell_protocol(recorded: Recorded) -> None:
    space = recorded.space("global")
    spec = get_strategy("hybrid")
    searcher = spec.searcher(space, recorded.problem(), spec.configure({}))
    assert isinstance(searcher, GroupedSearch)
    batch = searcher.ask()
    assert batch is not None and batch.step == "x"
    with pytest.raises(RuntimeError, match="tell"):
        searcher.ask()
    evaluator = recorded.replay()
    searcher.tell(list(evaluator.evaluate_batch(batch.configs)))
    assert searcher.point == min(batch.configs, key=recorded.objective)
    # Outside streaming, BX == VX: the x merge step holds the current point only.
    merge = searcher.ask()
    assert merge is not None and merge.step == "x merge"
    assert merge.configs == [searcher.point]
    searcher.tell(list(evaluator.evaluate_batch(merge.configs)))
    # The x vectors step tunes BX and VX for 2D streaming only: here the current point.
    vectors = searcher.ask()
    assert vectors is not None and vectors.step == "x vectors"
    assert vectors.configs == [searcher.point]
    searcher.tell(list(evaluator.evaluate_batch(vectors.configs)))
    nxt = searcher.ask()
    assert nxt is not None and nxt.step == "y"
    # drive() finishes the same search from here.
    searcher.tell(list(evaluator.evaluate_batch(nxt.configs)))
    outcome = drive(searcher, evaluator, strategy="hybrid")
    # the chunk for the tile moves WY with the chunk under streaming only: here the
    # current point, then z
    assert [s.step for s in outcome.steps[:2]] == ["chunk for the tile", "z"]


def test_start_outside_the_space_falls_back_with_a_note(recorded: Recorded) -> None:
    spec = parse_spec(
        yaml.safe_load("start: {LOCAL: 1}\nrepeat: 0\nsteps: [{tune: {WX: '1:NX:*2'}}]"),
        "start.yaml",
    )
    outcome, evaluator, _ = run_spec(recorded, "grouped", "global", options={"spec": spec})
    assert any("not valid in this space" in n for n in outcome.notes)
    assert evaluator.calls and all(c["LOCAL"] == 0 for c in evaluator.calls)


def test_spec_for_another_kernel_is_rejected_before_measuring(recorded: Recorded) -> None:
    spec = parse_spec(yaml.safe_load("steps: [{tune: {TILE: '1:8:*2'}}]"), "other.yaml")
    evaluator = recorded.replay()
    with pytest.raises(InputError, match="unknown parameter 'TILE'"):
        tune(
            "grouped",
            recorded.space("global"),
            evaluator,
            recorded.problem(),
            options={"spec": spec},
        )
    assert evaluator.calls == []


def test_search_problem_from_kernel(recorded: Recorded) -> None:
    problem = SearchProblem.from_kernel(recorded.kernel)
    assert dict(problem.sizes) == recorded.sizes
    assert problem.default == recorded.kernel.default_config()
    assert set(problem.domains) == set(recorded.parameters)


def test_example_specs_run(recorded: Recorded) -> None:
    from gtune.heuristics import load_spec

    from .conftest import ROOT

    examples = sorted((ROOT / "specs").glob("*.yaml"))
    assert examples
    for path in examples:
        spec = load_spec(path)
        outcome, evaluator, space = run_spec(recorded, "grouped", "global", options={"spec": spec})
        assert outcome.best_config is not None
        assert all(space.is_valid(c) is None for c in evaluator.calls)
        if spec.budget is not None and spec.budget.evaluations is not None:
            assert outcome.evaluations <= spec.budget.evaluations
