"""The outcome of measuring one configuration."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


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
