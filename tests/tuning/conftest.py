"""A replayed tuning session: the recording of heat3d at 16x4x4 measured on PoCL."""

from __future__ import annotations

import pytest

from gtune.device import DeviceLimits
from gtune.tuning import TuningSession
from tests.heuristics.conftest import RECORDING, Recorded


@pytest.fixture(scope="session")
def recorded() -> Recorded:
    return Recorded(RECORDING)


@pytest.fixture
def replay_session(recorded: Recorded) -> TuningSession:
    """A session whose space is the recorded one and whose evaluator replays it."""
    device = DeviceLimits.from_dict(recorded.data["device"])
    session = TuningSession(
        recorded.kernel,
        device,
        space=recorded.space(),
        evaluator_factory=lambda kernel, dev: recorded.replay(),
    )
    yield session
    session.close()
