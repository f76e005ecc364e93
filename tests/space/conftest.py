from __future__ import annotations

from pathlib import Path

import pytest
from space_helpers import h100_limits

from gtune.device import DeviceLimits


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GTUNE_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def h100() -> DeviceLimits:
    return h100_limits()
