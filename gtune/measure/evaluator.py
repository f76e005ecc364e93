"""The Evaluator protocol: configuration in, :class:`Result` out.

Search code sees only this protocol. Implementations: :class:`OpenCLEvaluator` (real
runs in an isolated worker process), :class:`ReplayEvaluator` (recorded real
measurements) and :class:`StoredEvaluator`, which puts a result store in front of
either so that nothing is measured twice and every result is written through.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from gtune.exceptions import InputError, RecordingMissing
from gtune.kernel import Config, canonical_config
from gtune.result import Result, ResultStore, Status, StoredRow, config_key
from gtune.store import owner_id


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


def completed(result: Result, defaults: Mapping[str, int]) -> Result:
    """``result`` with every parameter its configuration lacks at its default: a
    recording made before the kernel gained a parameter read as the kernel is now."""
    missing = {k: int(v) for k, v in defaults.items() if k not in result.config}
    return replace(result, config={**result.config, **missing}) if missing else result


class ReplayEvaluator(EvaluatorBase):
    """Serves recorded real measurements.

    Deterministic and instant: for testing search logic and offline experiments.
    ``calls`` lists the configurations asked for, in order. An unrecorded configuration
    is an error (``unrecorded="raise"``), or, with ``unrecorded="fail"``, answered as a
    configuration that did not run (status ``crashed``, message ``not recorded``), so a
    search replayed on a partial recording spends its budget as it would on the device
    but never takes an unmeasured configuration as its best; ``unrecorded_calls`` lists
    those configurations.

    ``defaults`` (the kernel's parameter defaults, :meth:`TunableKernel.default_config`)
    reads a recording made before the kernel gained a parameter: a recorded
    configuration without it ran with the parameter at its default (a template macro
    left undefined takes its default), and is served as that configuration.
    """

    def __init__(
        self,
        results: Iterable[Result],
        *,
        source: str = "recording",
        unrecorded: Literal["raise", "fail"] = "raise",
        defaults: Mapping[str, int] | None = None,
    ) -> None:
        if unrecorded not in ("raise", "fail"):
            raise InputError(f"unrecorded must be 'raise' or 'fail', got {unrecorded!r}")
        if defaults:
            results = (completed(r, defaults) for r in results)
        self._results = {canonical_config(r.config): r for r in results}
        self.source = source
        self.unrecorded = unrecorded
        self.calls: list[Config] = []
        self.unrecorded_calls: list[Config] = []

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
            if self.unrecorded == "fail":
                self.unrecorded_calls.append(dict(config))
                return Result(dict(config), Status.CRASHED, message="not recorded")
            raise RecordingMissing(
                f"configuration {key} was never measured", source=self.source
            ) from None


class StoredEvaluator(EvaluatorBase):
    """A result store in front of an evaluator: repeats are free, results written through.

    Each batch looks its configurations up in the store, so results that another
    process wrote meanwhile are served, not measured again. Before measuring, the
    evaluator claims the configurations it will measure; one claimed by another live
    process is waited for and then served from the store (a dead process's claim is
    taken over). While it waits, it measures its own claims, so two processes never
    wait on each other.

    A stored result is served unless its status is in ``remeasure`` (rows written
    before this evaluator started are measured again), or it is a ``timeout``
    recorded with a shorter timeout than ``timeout_s`` (default: the inner
    evaluator's ``timeout_s``). ``on_result`` is called for every result (fresh or
    from the store) with a flag saying whether it was measured now -- for progress
    display.
    """

    def __init__(
        self,
        inner: Evaluator,
        store: ResultStore,
        *,
        device: str,
        kernel_id: str,
        kernel_name: str = "",
        problem: Mapping[str, int] | None = None,
        on_result: Callable[[Result, bool], None] | None = None,
        remeasure: Iterable[Status] = frozenset(),
        timeout_s: float | None = None,
        lease_s: float = 300.0,
        poll_s: float = 0.1,
    ) -> None:
        self.inner = inner
        self.store = store
        self.device = device
        self.kernel_id = kernel_id
        self.kernel_name = kernel_name
        self.problem = dict(problem or {})
        self.on_result = on_result
        self.remeasure = frozenset(remeasure)
        if timeout_s is None:
            inner_timeout = getattr(inner, "timeout_s", None)
            if isinstance(inner_timeout, int | float):
                timeout_s = float(inner_timeout)
        self.timeout_s = timeout_s
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.owner = owner_id()
        self.measured = 0
        self.reused = 0
        self.waited = 0  # configurations served after waiting for another process
        # Rows up to this id existed before this evaluator: ``remeasure`` applies to them.
        self._before = store.last_row_id() if self.remeasure else 0
        self._known: dict[str, Result] = {}
        self._renewed = 0.0  # when this process last extended its claims
        #: Seconds spent reading and writing the store (claims included).
        self.store_s = 0.0

    # -- what the store may serve ------------------------------------------------

    def _servable(self, row: StoredRow) -> bool:
        result = row.result
        if result.status is Status.TIMEOUT and self.timeout_s is not None:
            had = result.extra.get("timeout_s")
            if isinstance(had, int | float) and had < self.timeout_s:
                return False
        return not (result.status in self.remeasure and row.row_id <= self._before)

    def _lookup(self, keys: Sequence[str]) -> None:
        """Serve what the store holds for ``keys`` (one query)."""
        if not keys:
            return
        began = time.monotonic()
        for key, row in self.store.latest(self.device, self.kernel_id, keys).items():
            if self._servable(row):
                self._known[key] = row.result
        self.store_s += time.monotonic() - began

    def known(self, config: Mapping[str, int]) -> Result | None:
        """The result the store would serve for ``config`` (None: it would be measured)."""
        key = config_key(config)
        if key not in self._known:
            self._lookup([key])
        return self._known.get(key)

    # -- writing ------------------------------------------------------------------

    def _write(self, key: str, result: Result) -> bool:
        """Store ``result`` as ``key``'s; False (nothing stored) when this process no
        longer holds the claim: another took it over and its result counts."""
        if config_key(result.config) != key:
            raise RuntimeError("evaluator returned results out of order")
        if (
            result.status is Status.TIMEOUT
            and self.timeout_s is not None
            and "timeout_s" not in result.extra
        ):
            result = replace(result, extra={**result.extra, "timeout_s": self.timeout_s})
        began = time.monotonic()
        written = self.store.add(
            result,
            device=self.device,
            kernel_id=self.kernel_id,
            kernel_name=self.kernel_name,
            problem=self.problem,
            owner=self.owner,
        )
        self.store_s += time.monotonic() - began
        if written:
            self._known[key] = result
        return written

    def _still_mine(self, key: str) -> bool:
        """Whether ``key`` is still this process's to measure: no result was stored for
        it meanwhile and this process holds its claim (claimed again). A claim taken
        over while this process was stopped or slow is not measured a second time."""
        self._lookup([key])
        if key in self._known:
            return False
        began = time.monotonic()
        held = self.store.claim(self.device, self.kernel_id, [key], self.owner, self.lease_s)
        self.store_s += time.monotonic() - began
        return key in held

    def _fresh(self, result: Result) -> Result:
        self.measured += 1
        if self.on_result:
            self.on_result(result, True)
        return result

    def _reuse(self, result: Result) -> Result:
        self.reused += 1
        if self.on_result:
            self.on_result(result, False)
        return result

    # -- evaluation ---------------------------------------------------------------

    def evaluate(self, config: Mapping[str, int]) -> Result:
        (result,) = self.evaluate_batch([config])  # runs the batch to its end
        return result

    def _claim(self, keys: list[str]) -> list[str]:
        """Claim ``keys``; those held are checked against the store once more (a result
        written just before its claim was released), and the rest are returned."""
        if not keys:
            return []
        began = time.monotonic()
        held = self.store.claim(self.device, self.kernel_id, keys, self.owner, self.lease_s)
        self._renewed = time.monotonic()
        self.store_s += self._renewed - began
        mine = [k for k in keys if k in held]
        self._lookup(mine)
        served = [k for k in mine if k in self._known]
        began = time.monotonic()
        self.store.release(self.device, self.kernel_id, served, self.owner)
        self.store_s += time.monotonic() - began
        return [k for k in mine if k not in self._known]

    def evaluate_batch(self, configs: Sequence[Mapping[str, int]]) -> Iterator[Result]:
        keys = [config_key(c) for c in configs]
        config_of: dict[str, Mapping[str, int]] = {}
        for key, config in zip(keys, configs, strict=True):
            config_of.setdefault(key, config)
        self._lookup([k for k in config_of if k not in self._known])
        mine = self._claim([k for k in config_of if k not in self._known])
        pending = deque(mine)  # claimed by this process, not yet measured
        fresh_now: set[str] = set(mine)  # measured in this batch, not yet reported
        own = self.inner.evaluate_batch([config_of[k] for k in mine]) if mine else None

        def measure_next() -> None:
            nonlocal own
            if own is None:
                raise RuntimeError("evaluator returned fewer results than asked for")
            key = pending[0]
            if not self._still_mine(key):  # taken over: the other process measures it
                pending.popleft()
                fresh_now.discard(key)
                _close(own)
                own = (
                    self.inner.evaluate_batch([config_of[k] for k in pending]) if pending else None
                )
                return
            try:
                result = next(own)
            except StopIteration:
                raise RuntimeError("evaluator returned fewer results than asked for") from None
            pending.popleft()
            if not self._write(key, result):
                fresh_now.discard(key)  # taken over while it was measured: await that
            if pending:
                if time.monotonic() - self._renewed > self.lease_s / 10:
                    self.store.renew(self.device, self.kernel_id, self.owner, self.lease_s)
                    self._renewed = time.monotonic()
            else:
                _close(own)
                own = None

        try:
            for key in keys:
                if key in fresh_now:
                    while key in fresh_now and key not in self._known:
                        measure_next()
                if key in fresh_now:
                    fresh_now.discard(key)
                    yield self._fresh(self._known[key])
                elif key in self._known:
                    yield self._reuse(self._known[key])
                else:
                    result, fresh = self._await(key, config_of[key], pending, measure_next)
                    yield self._fresh(result) if fresh else self._reuse(result)
        finally:
            if own is not None:
                _close(own)
            if pending:
                self.store.release(self.device, self.kernel_id, list(pending), self.owner)

    def _await(
        self,
        key: str,
        config: Mapping[str, int],
        pending: deque[str],
        measure_next: Callable[[], None],
    ) -> tuple[Result, bool]:
        """A configuration claimed by another process: its result once stored. Own
        claims are measured meanwhile; a claim dropped without a result is taken over."""
        while True:
            self._lookup([key])
            if key in self._known:
                self.waited += 1
                return self._known[key], False
            if pending:
                measure_next()
                continue
            if key not in self.store.claimed(self.device, self.kernel_id, [key]):
                if self._claim([key]):
                    try:
                        result = self.inner.evaluate(config)
                        written = self._write(key, result)
                    except BaseException:
                        self.store.release(self.device, self.kernel_id, [key], self.owner)
                        raise
                    if written:
                        return result, True
                continue
            time.sleep(self.poll_s)

    def close(self) -> None:
        self.inner.close()


def _close(results: Iterator[Result]) -> None:
    """Stop a batch early (a generator drops its pending work when closed)."""
    close = getattr(results, "close", None)
    if close is not None:
        close()


def pruned(config: Mapping[str, int], reason: str) -> Result:
    """A result for a configuration that was never run because it is illegal."""
    return Result(config=dict(config), status=Status.PRUNED, message=reason)
