"""The evaluator contract (:class:`gtune.testing.EvaluatorContract`, shipped in the
package) on gtune's evaluators: replaying a recording, the store in front of it, and
real OpenCL on the default device."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from gtune.description import load_kernel
from gtune.measure import OpenCLEvaluator, ReplayEvaluator, StoredEvaluator
from gtune.store import open_store
from gtune.testing import EvaluatorContract
from tests.heuristics.conftest import RECORDING, Recorded


@pytest.fixture(scope="module")
def recorded() -> Recorded:
    return Recorded(RECORDING)


class TestReplayEvaluator(EvaluatorContract):
    @pytest.fixture
    def configs(self, recorded: Recorded) -> Sequence[Mapping[str, int]]:
        return recorded.configs[:4]

    @pytest.fixture
    def evaluator(self, recorded: Recorded) -> Iterator[ReplayEvaluator]:
        ev = recorded.replay()
        yield ev
        ev.close()


class TestStoredEvaluator(EvaluatorContract):
    @pytest.fixture
    def configs(self, recorded: Recorded) -> Sequence[Mapping[str, int]]:
        return recorded.configs[:4]

    @pytest.fixture
    def evaluator(self, recorded: Recorded, tmp_path: Path) -> Iterator[StoredEvaluator]:
        store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
        ev = StoredEvaluator(recorded.replay(), store, device="dev", kernel_id="kid")
        yield ev
        ev.close()
        store.close()


@pytest.mark.opencl
class TestOpenCLEvaluator(EvaluatorContract):
    @pytest.fixture
    def configs(self) -> Sequence[Mapping[str, int]]:
        return [{"WX": 8, "WY": 4, "WZ": 1}, {"WX": 4, "WY": 2, "WZ": 1}]

    @pytest.fixture
    def evaluator(self, data_dir: Path) -> Iterator[OpenCLEvaluator]:
        ev = OpenCLEvaluator(load_kernel(data_dir / "naive7.cl"), runs=3, compile_workers=0)
        yield ev
        ev.close()
