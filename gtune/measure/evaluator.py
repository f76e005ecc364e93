"""The Evaluator protocol: configuration in, :class:`Result` out.

Search code sees only this protocol. Implementations: :class:`OpenCLEvaluator` (real
runs in an isolated worker process), :class:`ReplayEvaluator` (recorded real
measurements) and :class:`StoredEvaluator`, which puts a result store in front of
either so that nothing is measured twice and every result is written through.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from gtune.exceptions import InputError, RecordingMissing
from gtune.kernel import Config, canonical_config
from gtune.measure.result import Result, Status


@runtime_checkable
class Evaluator(Protocol):
    """Measures configurations of one kernel on one device for one problem."""

    def evaluate(self, config: Mapping[str, int]) -> Result: ...

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        """Results in the order of ``configs``; implementations may overlap work."""
        ...

    def close(self) -> None: ...


class EvaluatorBase:
    """Default ``evaluate_batch`` and context-manager support."""

    def evaluate(self, config: Mapping[str, int]) -> Result:
        raise NotImplementedError

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        for config in configs:
            yield self.evaluate(config)

    def close(self) -> None:
        return None

    def __enter__(self) -> EvaluatorBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReplayEvaluator(EvaluatorBase):
    """Serves recorded real measurements; an unrecorded configuration is an error.

    Deterministic and instant: for testing search logic and offline experiments.
    ``calls`` lists the configurations asked for, in order.
    """

    def __init__(self, results: Iterable[Result], *, source: str = "recording") -> None:
        self._results = {canonical_config(r.config): r for r in results}
        self.source = source
        self.calls: list[Config] = []

    @classmethod
    def from_json(cls, path: str | Path) -> ReplayEvaluator:
        """Load a recording written by ``gtune results --format json``."""
        p = Path(path)
        try:
            data = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read recording: {exc}", source=p) from None
        rows = data["results"] if isinstance(data, dict) else data
        return cls((Result.from_dict(r) for r in rows), source=str(p))

    def __len__(self) -> int:
        return len(self._results)

    def configs(self) -> list[Config]:
        return [dict(r.config) for r in self._results.values()]

    def evaluate(self, config: Mapping[str, int]) -> Result:
        key = canonical_config(config)
        self.calls.append(dict(config))
        try:
            return self._results[key]
        except KeyError:
            raise RecordingMissing(
                f"configuration {key} was never measured", source=self.source
            ) from None


class StoredEvaluator(EvaluatorBase):
    """A result store in front of an evaluator: repeats are free, results written through.

    ``on_result`` is called for every result (fresh or from the store) with a flag
    saying whether it was measured now -- for progress display.
    """

    def __init__(
        self,
        inner: Evaluator,
        store: Any,
        *,
        device: str,
        kernel_id: str,
        kernel_name: str = "",
        problem: Mapping[str, int] | None = None,
        on_result: Callable[[Result, bool], None] | None = None,
    ) -> None:
        self.inner = inner
        self.store = store
        self.device = device
        self.kernel_id = kernel_id
        self.kernel_name = kernel_name
        self.problem = dict(problem or {})
        self.on_result = on_result
        self.measured = 0
        self.reused = 0
        self._known: dict[str, Result] = {
            canonical_config(r.config): r for r in store.results(device=device, kernel_id=kernel_id)
        }

    def known(self, config: Mapping[str, int]) -> Result | None:
        return self._known.get(canonical_config(config))

    def _record(self, result: Result) -> Result:
        key = canonical_config(result.config)
        self.store.add(
            result,
            device=self.device,
            kernel_id=self.kernel_id,
            kernel_name=self.kernel_name,
            problem=self.problem,
        )
        self._known[key] = result
        self.measured += 1
        if self.on_result:
            self.on_result(result, True)
        return result

    def _reuse(self, result: Result) -> Result:
        self.reused += 1
        if self.on_result:
            self.on_result(result, False)
        return result

    def evaluate(self, config: Mapping[str, int]) -> Result:
        hit = self.known(config)
        if hit is not None:
            return self._reuse(hit)
        return self._record(self.inner.evaluate(config))

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        todo: list[Mapping[str, int]] = []
        seen: set[str] = set()
        for c in configs:
            key = canonical_config(c)
            if key not in self._known and key not in seen:
                todo.append(c)
                seen.add(key)
        fresh = self.inner.evaluate_batch(todo)
        for c in configs:
            key = canonical_config(c)
            if key in self._known:
                yield self._reuse(self._known[key])
            else:
                result = next(fresh)
                if canonical_config(result.config) != key:
                    raise RuntimeError("evaluator returned results out of order")
                yield self._record(result)

    def close(self) -> None:
        self.inner.close()


def pruned(config: Mapping[str, int], reason: str) -> Result:
    """A result for a configuration that was never run because it is illegal."""
    return Result(config=dict(config), status=Status.PRUNED, message=reason)
