"""The confirmation round on replayed real measurements (no device)."""

from __future__ import annotations

import pytest

from gtune.budget import Budget
from gtune.exceptions import InputError
from gtune.kernel import canonical_config
from gtune.measure.result import Result
from gtune.measure.stats import faster_beyond_noise
from gtune.tuning import CancelToken, ConfirmPolicy, TuningSession, run_tuning
from gtune.tuning.budget import SPARE_ROUNDS
from gtune.tuning.confirm import (
    Confirmation,
    ConfirmedConfig,
    confirm,
    pick_candidates,
    side_by_side,
)
from tests.heuristics.conftest import Recorded


def test_candidates_are_the_fastest_distinct_ok_results(recorded: Recorded):
    results = recorded.results + recorded.results[:5]  # repeats are counted once
    picked = pick_candidates(results, 3)
    assert len(picked) == 3
    assert len({canonical_config(r.config) for r in picked}) == 3
    ok = sorted(r.objective for r in recorded.results if r.ok)
    assert [r.objective for r in picked] == ok[:3]


def test_round_robin_rotates_and_pools_every_run(recorded: Recorded):
    replay = recorded.replay()
    candidates = pick_candidates(recorded.results, 3)
    default = recorded.kernel.default_config()
    assert default is not None
    out = confirm(candidates, default, replay, ConfirmPolicy(candidates=3, rounds=3))
    n = len(out.entries)
    distinct = {canonical_config(default)} | {canonical_config(r.config) for r in candidates}
    assert out.rounds_done == 3 and n == len(distinct)
    calls = [canonical_config(c) for c in replay.calls]
    first = calls[:n]
    for r in range(3):  # every round measures each once, starting one further along
        assert calls[r * n : (r + 1) * n] == first[r:] + first[:r]
    for e in out.entries:
        recorded_times = recorded.by_key[canonical_config(e.config)].times_s
        assert sorted(e.times_s) == sorted(list(recorded_times) * 3)
    best = out.best
    assert best is not None
    assert best.median_s == min(e.median_s for e in out.entries if e.ok)
    default_entry = out.default
    assert default_entry is not None and default_entry.is_default
    assert out.significant == faster_beyond_noise(best.times_s, default_entry.times_s)


def test_the_defaults_time_in_the_search_is_kept_when_it_is_no_candidate(
    recorded: Recorded,
):
    default = recorded.kernel.default_config()
    assert default is not None
    key = canonical_config(default)
    others = [r for r in recorded.results if canonical_config(r.config) != key]
    searched = recorded.by_key[key]
    out = confirm(
        pick_candidates(others, 2),
        default,
        recorded.replay(),
        ConfirmPolicy(candidates=2, rounds=1),
        searched=recorded.results,
    )
    assert out.default is not None and out.default.search_s == searched.median_s
    bare = confirm(pick_candidates(others, 2), default, recorded.replay(), ConfirmPolicy(rounds=1))
    assert bare.default is not None and bare.default.search_s is None


def test_a_best_within_the_noise_is_no_significant_speedup(recorded: Recorded):
    times = list(recorded.results[0].times_s)
    config = dict(recorded.results[0].config)
    twin = ConfirmedConfig({**config, "WX": config["WX"] * 2}, times_s=times[::-1])
    default = ConfirmedConfig(config, is_default=True, times_s=times)
    c = Confirmation([default, twin], confidence=0.95, rounds_done=1)
    assert not c.significant
    assert c.speedup is not None
    assert "no significant speedup" in c.verdict or c.best_is_default


def test_failed_configuration_leaves_the_round(recorded: Recorded):
    ok = pick_candidates(recorded.results, 2)
    broken = Result(config=dict(ok[1].config), status=recorded.results[0].status.WRONG_RESULT)
    replay = recorded.replay({canonical_config(broken.config): broken})
    out = confirm(ok, None, replay, ConfirmPolicy(candidates=2, rounds=3))
    bad = next(e for e in out.entries if not e.ok)
    assert bad.rounds == 1, "a configuration that failed is not measured again"
    assert out.best is not None and out.best.config == ok[0].config
    assert out.speedup is None and "no default" in out.verdict


def test_room_and_cancel_limit_the_round(recorded: Recorded):
    candidates = pick_candidates(recorded.results, 3)
    none_left = confirm(candidates, None, recorded.replay(), ConfirmPolicy(), room=lambda: 0)
    assert none_left.rounds_done == 0 and none_left.best is None
    assert any("no time" in n for n in none_left.notes)
    token = CancelToken()
    token.cancel()
    stopped = confirm(candidates, None, recorded.replay(), ConfirmPolicy(), cancel=token)
    assert stopped.rounds_done == 0


def test_spare_rounds_fill_only_the_time_known_to_be_left(recorded: Recorded):
    candidates = pick_candidates(recorded.results, 2)
    policy = ConfirmPolicy(candidates=2, rounds=3, spare_rounds=4)
    n = len(candidates)
    # room for everything: the asked rounds and every spare one
    full = confirm(candidates, None, recorded.replay(), policy, room=lambda: 10 * n * 7)
    assert full.rounds_done == 7 and not full.notes
    # no time limit known: the asked rounds only
    unbounded = confirm(candidates, None, recorded.replay(), policy)
    assert unbounded.rounds_done == 3 and not unbounded.notes
    # room shrinking by one round each time: two spare rounds fit, then no note (the
    # asked rounds were all measured)
    left = iter(range(5 * n, -1, -n))
    some = confirm(candidates, None, recorded.replay(), policy, room=lambda: next(left))
    assert some.rounds_done == 5 and not some.notes
    for e in some.entries:
        assert e.rounds == 5
    with pytest.raises(InputError, match="spare"):
        ConfirmPolicy(spare_rounds=-1)


def test_a_wall_time_budget_spends_its_reserve_on_spare_rounds(replay_session: TuningSession):
    timed = run_tuning(
        replay_session,
        technique="global",
        budget=Budget(wall_seconds=60.0),
        confirm_policy=ConfirmPolicy(rounds=3),
    )
    assert timed.confirmation is not None
    assert timed.confirmation.rounds_done == 3 + SPARE_ROUNDS
    plain = run_tuning(replay_session, technique="global", confirm_policy=ConfirmPolicy(rounds=3))
    assert plain.confirmation is not None and plain.confirmation.rounds_done == 3


def test_run_reports_the_confirmed_answer(replay_session: TuningSession):
    report = run_tuning(replay_session, technique="global", confirm_policy=ConfirmPolicy())
    c = report.confirmation
    assert c is not None and report.confirmed
    assert report.best_config == report.ordered(c.best.config if c.best else None)
    assert report.default_result is not None and report.default_s == c.default.median_s  # type: ignore[union-attr]
    assert report.speedup == c.speedup
    assert report.significant == c.significant
    assert any(n.startswith("confirmation round:") for n in report.notes)
    assert report.to_dict()["confirmation"]["entries"]


def test_side_by_side_measures_each_winner_once_per_round(recorded: Recorded):
    a, b = pick_candidates(recorded.results, 2)
    broken = Result(config=dict(b.config), status=recorded.results[0].status.TIMEOUT)
    replay = recorded.replay({canonical_config(broken.config): broken})
    winners = {"hybrid": a, "expert": a, "random": b, "dims": None}
    out, entries = side_by_side(winners, replay, ConfirmPolicy(rounds=3))
    calls = [canonical_config(c) for c in replay.calls]
    # a shared winner is measured once a round; the failed one leaves after its first
    assert calls.count(canonical_config(a.config)) == 3
    assert calls.count(canonical_config(b.config)) == 1
    assert entries["hybrid"] is entries["expert"] and "dims" not in entries
    assert entries["hybrid"].ok and not entries["random"].ok
    assert sorted(entries["hybrid"].times_s) == sorted(list(a.times_s) * 3)
    assert out.rounds_done == 3


def test_side_by_side_with_nothing_found_measures_nothing(recorded: Recorded):
    replay = recorded.replay()
    out, entries = side_by_side({"hybrid": None}, replay, ConfirmPolicy())
    assert entries == {} and replay.calls == [] and out.best is None


def test_the_verdict_states_the_coverage_obtained():
    fast = ConfirmedConfig({"WX": 8}, times_s=[1.0, 1.01, 1.02])
    slow = ConfirmedConfig({"WX": 1}, is_default=True, times_s=[2.0, 2.01, 2.02])
    c = Confirmation([slow, fast], confidence=0.95, rounds_done=1)
    assert c.significant and c.coverage == 0.75
    assert "75% confidence: too few runs for 95%" in c.verdict and "95% confidence" not in c.verdict
    more = Confirmation(
        [
            ConfirmedConfig({"WX": 8}, times_s=[1.0 + i / 100 for i in range(9)]),
            ConfirmedConfig({"WX": 1}, is_default=True, times_s=[2.0 + i / 100 for i in range(9)]),
        ],
        confidence=0.95,
        rounds_done=3,
    )
    assert more.coverage >= 0.95 and more.verdict.endswith(", 95% confidence")
