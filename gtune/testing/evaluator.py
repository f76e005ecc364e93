"""The contract every evaluator keeps (:class:`gtune.measure.evaluator.Evaluator`).

Subclass :class:`EvaluatorContract` and provide two fixtures: ``evaluator`` (a fresh
evaluator, closed by the fixture) and ``configs`` (at least two distinct configurations
it can measure).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gtune.kernel import canonical_config
from gtune.measure.evaluator import Evaluator
from gtune.measure.result import Result, Status


def _same(result: Result, config: Mapping[str, int]) -> bool:
    return canonical_config(result.config) == canonical_config(config)


class EvaluatorContract:
    """Results come one per configuration, in order, each for its configuration, with
    a status; an ok result has finite positive times; closing twice is harmless."""

    def test_batch_gives_one_result_per_configuration_in_order(
        self, evaluator: Evaluator, configs: Sequence[Mapping[str, int]]
    ) -> None:
        assert len(configs) >= 2, "the contract needs at least two configurations"
        batch = [*configs, configs[0]]
        got = list(evaluator.evaluate_batch(batch))
        assert len(got) == len(batch)
        for result, config in zip(got, batch, strict=True):
            assert _same(result, config), (result.config, config)
            assert isinstance(result.status, Status)

    def test_single_evaluation_matches_the_configuration(
        self, evaluator: Evaluator, configs: Sequence[Mapping[str, int]]
    ) -> None:
        result = evaluator.evaluate(configs[-1])
        assert _same(result, configs[-1])

    def test_ok_results_carry_times(
        self, evaluator: Evaluator, configs: Sequence[Mapping[str, int]]
    ) -> None:
        results = list(evaluator.evaluate_batch(configs))
        assert any(r.ok for r in results), "no configuration measured ok"
        for r in results:
            if r.ok:
                assert r.times_s and all(math.isfinite(t) and t > 0 for t in r.times_s)
                assert math.isfinite(r.objective) and r.objective > 0
            else:
                assert r.message, f"a {r.status.value} result says why"

    def test_stopping_a_batch_early_and_closing_twice(
        self, evaluator: Evaluator, configs: Sequence[Mapping[str, int]]
    ) -> None:
        batch = evaluator.evaluate_batch(configs)
        first = next(iter(batch))
        assert _same(first, configs[0])
        close = getattr(batch, "close", None)
        if close is not None:
            close()
        evaluator.close()
        evaluator.close()


__all__ = ["EvaluatorContract"]
