"""The evaluator starts in a thread while the space is solved (a fresh tuning only).

Starting the measuring workers and writing the problem (initial arrays, the reference's
outputs) takes seconds at realistic sizes, as solving the space does; a tuning that will
measure does both at once. A run the store answers still starts nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from gtune.device import DeviceLimits
from gtune.exceptions import InputError
from gtune.kernel import TunableKernel, canonical_config
from gtune.measure import ReplayEvaluator
from gtune.measure.evaluator import Evaluator
from gtune.store import open_store
from gtune.tuning import ConfirmPolicy, TuningSession, run_tuning
from tests.heuristics.conftest import Recorded

THREAD = "gtune-evaluator-start"


class Made:
    """An evaluator factory that records where it ran and what it made."""

    def __init__(self, recorded: Recorded, fail: bool = False) -> None:
        self.recorded = recorded
        self.fail = fail
        self.calls: list[tuple[str, bool]] = []  # (thread, whether the space was solved)
        self.closed: list[ReplayEvaluator] = []
        self.session: TuningSession | None = None
        self.release = threading.Event()
        self.release.set()

    def __call__(self, kernel: TunableKernel, device: DeviceLimits) -> Evaluator:
        solved = self.session is not None and self.session._space is not None
        self.calls.append((threading.current_thread().name, solved))
        self.release.wait(10)
        if self.fail:
            raise InputError("the reference function failed", source="heat3d.yaml")
        made = self.recorded.replay()
        closed = self.closed

        class Closing(ReplayEvaluator):
            def close(self) -> None:
                closed.append(made)

        made.__class__ = Closing
        return made


@pytest.fixture
def device(recorded: Recorded) -> DeviceLimits:
    return DeviceLimits.from_dict(recorded.data["device"])


def session_of(recorded: Recorded, device: DeviceLimits, made: Made, **kw: Any) -> TuningSession:
    session = TuningSession(recorded.kernel, device, evaluator_factory=made, **kw)
    made.session = session
    return session


def a_config(recorded: Recorded) -> Mapping[str, int]:
    return recorded.configs[0]


def test_a_fresh_session_makes_its_evaluator_in_a_thread_once(
    recorded: Recorded, device: DeviceLimits
) -> None:
    made = Made(recorded)
    made.release.clear()  # the thread waits until the test lets it finish
    with session_of(recorded, device, made) as session:
        assert session.start_early()
        assert not session.start_early()  # once
        made.release.set()
        result = session.raw.evaluate(a_config(recorded))
        assert result.ok
        assert session.raw.evaluate(a_config(recorded)).ok
    assert made.calls == [(THREAD, False)]
    assert len(made.closed) == 1


def test_a_session_the_store_answers_starts_nothing(
    recorded: Recorded, device: DeviceLimits
) -> None:
    store = open_store("sqlite://")
    default = recorded.kernel.default_config()
    assert default is not None
    stored = recorded.by_key[canonical_config(default)]
    store.add(
        stored,
        device=device.identity,
        kernel_id=recorded.kernel.identity(),
        kernel_name=recorded.kernel.store_name,
        problem=recorded.kernel.sizes,
    )
    made = Made(recorded)
    with session_of(recorded, device, made, store=store) as session:
        assert not session.start_early()
    assert made.calls == []
    store.close()


def test_a_given_space_starts_nothing_early(recorded: Recorded, device: DeviceLimits) -> None:
    made = Made(recorded)
    with session_of(recorded, device, made, space=recorded.space()) as session:
        assert not session.start_early()
    assert made.calls == []


def test_an_evaluator_that_cannot_start_fails_its_first_use(
    recorded: Recorded, device: DeviceLimits
) -> None:
    made = Made(recorded, fail=True)
    with session_of(recorded, device, made) as session:
        assert session.start_early()
        with pytest.raises(InputError, match="reference function failed"):
            session.raw.evaluate(a_config(recorded))
    assert made.calls == [(THREAD, False)]


def test_an_evaluator_made_ahead_and_never_used_is_closed(
    recorded: Recorded, device: DeviceLimits
) -> None:
    made = Made(recorded)
    session = session_of(recorded, device, made)
    assert session.start_early()
    session.close()  # the space failed, say: nothing measured
    assert len(made.closed) == 1
    made_failing = Made(recorded, fail=True)
    session = session_of(recorded, device, made_failing)
    assert session.start_early()
    session.close()  # its error belonged to a use that never came
    assert made_failing.closed == []


@pytest.mark.minizinc
def test_a_tuning_solves_its_space_while_the_evaluator_starts(
    recorded: Recorded, device: DeviceLimits, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A whole run: the factory is called in its thread before the space was solved, and
    the run finds what it finds with the space given."""
    monkeypatch.setenv("GTUNE_CACHE", str(tmp_path))  # solved now, not read from a cache
    made = Made(recorded)
    # the solved space holds configurations never recorded: answered as failed
    replay = ReplayEvaluator(recorded.by_key.values(), source="recording", unrecorded="fail")

    def factory(kernel: TunableKernel, dev: DeviceLimits) -> Evaluator:
        made(kernel, dev)
        return replay

    with TuningSession(recorded.kernel, device, evaluator_factory=factory) as session:
        made.session = session
        report = run_tuning(
            session, technique="global", confirm_policy=ConfirmPolicy(rounds=1), budget=None
        )
        assert session._space is not None  # solved by the run, after the factory began
    assert made.calls == [(THREAD, False)]
    assert report.best_config is not None and report.measured > 0


def test_the_thread_sees_the_worker_pools_of_its_caller(
    recorded: Recorded, device: DeviceLimits
) -> None:
    """Evaluators made inside ``reuse_workers`` share its pools (a context variable):
    made ahead in the thread, too."""
    from gtune.measure.pool import pool_for, reuse_workers

    seen: list[object] = []

    def factory(kernel: TunableKernel, dev: DeviceLimits) -> Evaluator:
        seen.append(pool_for(dev))
        return recorded.replay()

    with reuse_workers() as pools:
        with TuningSession(recorded.kernel, device, evaluator_factory=factory) as session:
            assert session.start_early()
            assert session.raw.evaluate(a_config(recorded)).ok
        assert seen and seen[0] is not None and seen[0] in pools.values()
