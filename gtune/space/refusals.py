"""Configurations a device refused at run time, remembered across runs.

A configuration that passes every rule can still be refused by the driver (a kernel
needs more registers than a work-group of that size allows: seed 000, section 5.4.1).
Each refusal is stored per device and kernel in ``$GTUNE_CACHE/refused/<device>.json``,
so that later spaces for that device omit it without trying again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gtune.exceptions import InputError
from gtune.kernel import Config


class RefusalStore:
    """Refused configurations of one device, by kernel identity."""

    def __init__(self, device_identity: str, root: Path) -> None:
        safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in device_identity)
        self.path = root / "refused" / f"{safe}.json"
        self.device_identity = device_identity

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"device": self.device_identity, "kernels": {}}
        try:
            data = json.loads(self.path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(
                f"cannot read the record of refused configurations: {exc}",
                source=self.path,
                hint="delete the file to start a new record",
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("kernels"), dict):
            raise InputError("malformed record of refused configurations", source=self.path)
        return data

    def load(self, kernel_identity: str) -> list[tuple[Config, str]]:
        entries = self._read()["kernels"].get(kernel_identity, [])
        return [({k: int(v) for k, v in e["config"].items()}, str(e["reason"])) for e in entries]

    def add(self, kernel_identity: str, config: Mapping[str, int], reason: str) -> None:
        data = self._read()
        entries = data["kernels"].setdefault(kernel_identity, [])
        entry = {"config": {k: int(config[k]) for k in sorted(config)}, "reason": reason}
        if entry not in entries:
            entries.append(entry)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)

    def rows(self, kernel_identity: str, parameters: Sequence[str]) -> dict[tuple[int, ...], str]:
        """Refusals of this kernel as rows in ``parameters`` order (others skipped)."""
        out: dict[tuple[int, ...], str] = {}
        for config, reason in self.load(kernel_identity):
            if set(config) == set(parameters):
                out[tuple(config[p] for p in parameters)] = reason
        return out
