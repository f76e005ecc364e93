"""Configurations a device refused at run time, remembered across runs.

A configuration that passes every rule can still be refused by the driver (a kernel
needs more registers than a work-group of that size allows: seed 000, section 5.4.1).
Refusals are not kept anywhere of their own: they are the configurations whose current
result in the result store is ``build_failed`` or ``launch_failed`` on that device, so
later spaces for the device omit them without trying again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gtune.kernel import Config
from gtune.result import Result, ResultStore, Status, config_key


class RefusalStore:
    """Refused configurations of one device, by kernel identity, read from ``store``."""

    def __init__(self, device_identity: str, store: ResultStore) -> None:
        self.device_identity = device_identity
        self.store = store

    def load(self, kernel_identity: str) -> list[tuple[Config, str]]:
        return self.store.refusals(self.device_identity, kernel_identity)

    def add(self, kernel_identity: str, config: Mapping[str, int], reason: str) -> None:
        """Record a refusal (nothing to do when the store already has it as the
        configuration's current result, as it does when the evaluator wrote it)."""
        key = config_key(config)
        current = self.store.latest(self.device_identity, kernel_identity, [key]).get(key)
        if current is not None and current.result.status.is_refusal:
            return
        self.store.add(
            Result(dict(config), Status.LAUNCH_FAILED, message=reason),
            device=self.device_identity,
            kernel_id=kernel_identity,
        )

    def rows(self, kernel_identity: str, parameters: Sequence[str]) -> dict[tuple[int, ...], str]:
        """Refusals of this kernel as rows in ``parameters`` order (others skipped)."""
        out: dict[tuple[int, ...], str] = {}
        for config, reason in self.load(kernel_identity):
            if set(config) == set(parameters):
                out[tuple(config[p] for p in parameters)] = reason
        return out
