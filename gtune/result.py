"""What a measurement produces and where it is kept: :class:`Result`, :class:`Status`
and the :class:`ResultStore` interface.

This module sits below everything else (it imports nothing from gtune), so the
evaluators, the searches and every store backend can name these types.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, Self


class Status(StrEnum):
    """How a configuration fared; classified from OpenCL error codes, never message text."""

    OK = "ok"
    PRUNED = "pruned"  # never run: violates a constraint
    BUILD_FAILED = "build_failed"
    LAUNCH_FAILED = "launch_failed"  # invalid work-group size, out of resources, ...
    WRONG_RESULT = "wrong_result"
    TIMEOUT = "timeout"
    CRASHED = "crashed"

    @property
    def is_refusal(self) -> bool:
        """The driver refused the configuration: it should never be tried again there."""
        return self in (Status.BUILD_FAILED, Status.LAUNCH_FAILED)


@dataclass(frozen=True)
class Result:
    """One configuration measured (or refused): its status, compile seconds, every timed
    run's seconds, the verification's largest error and what the worker reported in
    ``extra``. ``objective`` is what searches minimise (the median; inf unless ok)."""

    config: Mapping[str, int]
    status: Status
    compile_s: float = 0.0
    times_s: tuple[float, ...] = ()
    message: str = ""
    error_code: int | None = None
    max_error: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s) if self.times_s else float("inf")

    @property
    def mean_s(self) -> float:
        return statistics.fmean(self.times_s) if self.times_s else float("inf")

    @property
    def min_s(self) -> float:
        return min(self.times_s) if self.times_s else float("inf")

    @property
    def run_s(self) -> float:
        """Device seconds spent running (all timed runs)."""
        return float(sum(self.times_s))

    @property
    def objective(self) -> float:
        """What searches minimise: the median time, infinite for anything not ok."""
        return self.median_s if self.ok else float("inf")

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": dict(self.config),
            "status": self.status.value,
            "compile_s": self.compile_s,
            "times_s": list(self.times_s),
            "median_s": self.median_s if self.times_s else None,
            "message": self.message,
            "error_code": self.error_code,
            "max_error": self.max_error,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        return cls(
            config={k: int(v) for k, v in data["config"].items()},
            status=Status(data["status"]),
            compile_s=float(data.get("compile_s") or 0.0),
            times_s=tuple(float(t) for t in data.get("times_s") or ()),
            message=str(data.get("message") or ""),
            error_code=data.get("error_code"),
            max_error=data.get("max_error"),
            extra=dict(data.get("extra") or {}),
        )


def config_key(config: Mapping[str, int]) -> str:
    """The configuration as stable JSON text: the store's key (names sorted)."""
    return json.dumps({k: int(config[k]) for k in sorted(config)}, separators=(",", ":"))


@dataclass(frozen=True)
class StoredRow:
    """One row of a store: a result with what it was measured on and when.

    ``row_id`` grows with every row written, so the latest row of a configuration is
    the one with the largest id.
    """

    device: str
    kernel_id: str
    kernel_name: str
    problem: Mapping[str, int]
    result: Result
    created: float
    row_id: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = self.result.to_dict()
        data.update(
            device=self.device,
            kernel_id=self.kernel_id,
            kernel=self.kernel_name,
            problem=dict(self.problem),
            created=self.created,
        )
        return data


class ResultStore(Protocol):
    """Append-only storage of results, shared by every process that opens the same URL.

    Every row ever written is kept; the current result of (device, kernel, configuration)
    is its latest row. Configurations are keyed by :func:`config_key`. Claims let
    concurrent processes split work: a process claims the keys it is about to measure,
    and others wait for those instead of measuring them too.
    """

    @property
    def location(self) -> str:
        """Where the store lives (a path or a URL without password), for messages."""
        ...

    def add(
        self,
        result: Result,
        *,
        device: str,
        kernel_id: str,
        kernel_name: str = "",
        problem: Mapping[str, int] | None = None,
        owner: str | None = None,
    ) -> bool:
        """Append one result (it becomes the configuration's current result); with
        ``owner``, only while ``owner`` holds the claim on the configuration, dropping it
        in the same transaction (False, nothing written: the claim was taken over)."""
        ...

    def results(self, *, device: str | None = None, kernel_id: str | None = None) -> list[Result]:
        """The current result of every configuration matching the filters."""
        ...

    def rows(
        self, *, device: str | None = None, kernel: str | None = None, history: bool = False
    ) -> Iterator[StoredRow]:
        """Rows filtered by device (identity or prefix) and kernel (name or identity
        prefix): the current ones, or every row ever written with ``history``."""
        ...

    def latest(self, device: str, kernel_id: str, keys: Sequence[str]) -> dict[str, StoredRow]:
        """The current row of each of ``keys`` that has one (a batch lookup)."""
        ...

    def last_row_id(self) -> int:
        """The id of the newest row (0 for an empty store)."""
        ...

    def refusals(self, device: str, kernel_id: str) -> list[tuple[dict[str, int], str]]:
        """Configurations the driver refused (current status build or launch failure)."""
        ...

    def claim(
        self, device: str, kernel_id: str, keys: Sequence[str], owner: str, lease_s: float
    ) -> set[str]:
        """Claim ``keys`` for ``owner`` for ``lease_s`` seconds; returns those now held
        by ``owner`` (free ones, expired ones, ones of a dead local process, its own)."""
        ...

    def claimed(self, device: str, kernel_id: str, keys: Sequence[str]) -> dict[str, str]:
        """Live claims among ``keys``: key to owner."""
        ...

    def release(self, device: str, kernel_id: str, keys: Sequence[str], owner: str) -> None:
        """Drop ``owner``'s claims on ``keys``."""
        ...

    def renew(self, device: str, kernel_id: str, owner: str, lease_s: float) -> None:
        """Extend every claim ``owner`` holds on this kernel by ``lease_s`` from now."""
        ...

    def schema_version(self) -> int: ...

    def count(self) -> int:
        """Rows ever written."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...
