"""Append-only result storage.

Search code never sees this module: a :class:`~gtune.measure.StoredEvaluator` writes
each result through as soon as it exists, so Ctrl-C or ``kill -9`` loses nothing, and a
second run of the same work reads results back instead of measuring again.

The store sits behind the small :class:`ResultStore` interface; SQLite is the embedded
default. Rows are keyed by (device identity, kernel identity, configuration); the kernel
identity hashes source, description and problem size.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gtune.exceptions import InputError
from gtune.kernel import canonical_config
from gtune.measure.result import Result

DEFAULT_DB = "gtune-results.db"


def default_path() -> Path:
    return Path(os.environ.get("GTUNE_DB", DEFAULT_DB))


@dataclass(frozen=True)
class StoredRow:
    device: str
    kernel_id: str
    kernel_name: str
    problem: Mapping[str, int]
    result: Result
    created: float

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
    def add(
        self,
        result: Result,
        *,
        device: str,
        kernel_id: str,
        kernel_name: str = "",
        problem: Mapping[str, int] | None = None,
    ) -> bool:
        """Append one result; returns False if that configuration was already stored."""
        ...

    def results(
        self, *, device: str | None = None, kernel_id: str | None = None
    ) -> list[Result]: ...

    def rows(
        self, *, device: str | None = None, kernel: str | None = None
    ) -> Iterator[StoredRow]: ...

    def close(self) -> None: ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    device TEXT NOT NULL,
    kernel_id TEXT NOT NULL,
    kernel_name TEXT NOT NULL,
    problem TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    compile_s REAL NOT NULL,
    times TEXT NOT NULL,
    median_s REAL,
    message TEXT NOT NULL,
    error_code INTEGER,
    max_error REAL,
    extra TEXT NOT NULL,
    created REAL NOT NULL,
    UNIQUE (device, kernel_id, config)
);
CREATE INDEX IF NOT EXISTS results_kernel ON results (kernel_name, device);
"""


class SQLiteStore:
    """One SQLite file; every ``add`` is its own committed transaction."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot open result store: {exc}", source=self.path) from None

    def add(
        self,
        result: Result,
        *,
        device: str,
        kernel_id: str,
        kernel_name: str = "",
        problem: Mapping[str, int] | None = None,
    ) -> bool:
        cur = self._db.execute(
            "INSERT OR IGNORE INTO results (device, kernel_id, kernel_name, problem, config,"
            " status, compile_s, times, median_s, message, error_code, max_error, extra, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                device,
                kernel_id,
                kernel_name,
                json.dumps(dict(problem or {}), sort_keys=True),
                canonical_config(result.config),
                result.status.value,
                result.compile_s,
                json.dumps(list(result.times_s)),
                result.median_s if result.times_s else None,
                result.message,
                result.error_code,
                result.max_error,
                json.dumps(dict(result.extra), default=str),
                time.time(),
            ),
        )
        return cur.rowcount == 1

    def _select(self, where: str, args: tuple[Any, ...]) -> Iterator[StoredRow]:
        query = (
            "SELECT device, kernel_id, kernel_name, problem, config, status, compile_s, times,"
            " message, error_code, max_error, extra, created FROM results"
            + (f" WHERE {where}" if where else "")
            + " ORDER BY id"
        )
        for row in self._db.execute(query, args):
            result = Result.from_dict(
                {
                    "config": json.loads(row[4]),
                    "status": row[5],
                    "compile_s": row[6],
                    "times_s": json.loads(row[7]),
                    "message": row[8],
                    "error_code": row[9],
                    "max_error": row[10],
                    "extra": json.loads(row[11]),
                }
            )
            yield StoredRow(row[0], row[1], row[2], json.loads(row[3]), result, row[12])

    def results(self, *, device: str | None = None, kernel_id: str | None = None) -> list[Result]:
        clauses, args = [], []
        if device is not None:
            clauses.append("device = ?")
            args.append(device)
        if kernel_id is not None:
            clauses.append("kernel_id = ?")
            args.append(kernel_id)
        return [r.result for r in self._select(" AND ".join(clauses), tuple(args))]

    def rows(self, *, device: str | None = None, kernel: str | None = None) -> Iterator[StoredRow]:
        """Rows filtered by device (identity or prefix) and kernel (name or identity)."""
        clauses, args = [], []
        if device:
            clauses.append("device LIKE ?")
            args.append(device + "%")
        if kernel:
            clauses.append("(kernel_name = ? OR kernel_id LIKE ?)")
            args += [kernel, kernel + "%"]
        return self._select(" AND ".join(clauses), tuple(args))

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
