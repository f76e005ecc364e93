"""A batch cut to the time left counts only the configurations that will be measured."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from gtune.heuristics import Batch, drive
from gtune.kernel import Config, canonical_config
from gtune.measure.evaluator import StoredEvaluator
from gtune.measure.result import Result
from gtune.store import open_store

from .conftest import Recorded


class _OneBatch:
    """Asks for ``configs`` once."""

    def __init__(self, configs: Sequence[Config]) -> None:
        self.configs = list(configs)
        self.notes: list[str] = []
        self.told: list[Result] = []
        self._asked = False

    def expected_evaluations(self) -> int | None:
        return len(self.configs)

    def ask(self) -> Batch | None:
        if self._asked:
            return None
        self._asked = True
        return Batch(self.configs, "x")

    def tell(self, results: Sequence[Result]) -> None:
        self.told = list(results)


class _Counting:
    """The recording, counting what it is asked to measure."""

    def __init__(self, recorded: Recorded) -> None:
        self.inner = recorded.replay()
        self.measured: list[Config] = []

    def evaluate(self, config: Mapping[str, int]) -> Result:
        self.measured.append(dict(config))
        return self.inner.evaluate(config)

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        for c in configs:
            yield self.evaluate(c)

    def close(self) -> None:
        pass


def test_stored_configurations_do_not_count_against_the_room(recorded: Recorded) -> None:
    configs = recorded.configs[:8]
    store = open_store("sqlite://")
    stored = StoredEvaluator(
        _Counting(recorded), store, device="d", kernel_id="k", kernel_name="heat3d"
    )
    list(stored.evaluate_batch(configs[:5]))  # an earlier search measured these five
    inner = stored.inner
    assert isinstance(inner, _Counting) and len(inner.measured) == 5
    # room for two more measurements: the five stored are served, two measured, one cut
    searcher = _OneBatch(configs)
    outcome = drive(
        searcher, stored, strategy="t", room=lambda: max(0, 2 - (len(inner.measured) - 5))
    )
    assert len(searcher.told) == 7
    assert [canonical_config(c) for c in inner.measured[5:]] == [
        canonical_config(c) for c in configs[5:7]
    ]
    assert outcome.stop_reason == "the time left has no room for another configuration"
    # an evaluator without a store: the room is the number of configurations handed out
    plain = _Counting(recorded)
    searcher = _OneBatch(configs)
    outcome = drive(searcher, plain, strategy="t", room=lambda: max(0, 2 - len(plain.measured)))
    assert len(plain.measured) == len(searcher.told) == 2
    store.close()


def test_a_cut_batch_goes_on_when_the_room_grows(recorded: Recorded) -> None:
    """The first configurations of a search carry its start-up, so the first pace is
    too slow: after the part that fitted, the room is asked again and the rest of the
    batch is measured when it now fits (a search is not ended by a first guess)."""
    configs = recorded.configs[:8]
    plain = _Counting(recorded)
    searcher = _OneBatch(configs)
    asked: list[int] = []

    def room() -> int:  # the pace, once measured, leaves room for many more
        asked.append(len(plain.measured))
        return 3 if len(asked) == 1 else 100

    outcome = drive(searcher, plain, strategy="t", room=room)
    assert len(plain.measured) == len(searcher.told) == 8
    assert asked[:2] == [0, 3]
    assert outcome.stop_reason == "search finished"
    # a room that stays short still ends the batch where it ends
    plain = _Counting(recorded)
    searcher = _OneBatch(configs)
    outcome = drive(searcher, plain, strategy="t", room=lambda: max(0, 5 - len(plain.measured)))
    assert len(plain.measured) == len(searcher.told) == 5
    assert outcome.stop_reason == "the time left has no room for another configuration"
