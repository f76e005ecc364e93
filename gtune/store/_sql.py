"""What the SQLite and PostgreSQL stores share: schema, queries, claims, row parsing.

A backend supplies a connection, its placeholder style, its column type for row ids,
how to list tables, how to run a transaction and which exceptions its driver raises;
everything else is written once here, so both behave the same.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Self

from gtune.exceptions import InputError
from gtune.result import Result, Status, StoredRow, config_key

SCHEMA_VERSION = 2
"""1: the first store (one row per configuration, no meta table); 2: append-only rows,
claims, and a meta table holding this number."""

_CHUNK = 400  # keys per IN (...) list, well under every backend's parameter limit

_RESULT_COLUMNS = (
    "device, kernel_id, kernel_name, problem, config, status, compile_s, times, median_s,"
    " message, error_code, max_error, extra, created"
)
_SELECT = (
    "SELECT id, device, kernel_id, kernel_name, problem, config, status, compile_s, times,"
    " message, error_code, max_error, extra, created FROM results"
)
_LATEST = "id IN (SELECT MAX(id) FROM results GROUP BY device, kernel_id, config)"


class StoreError(InputError):
    """A result store that cannot be opened, written or read (named in the message)."""


def owner_id() -> str:
    """This process, as a claim owner: host, process id and a random part."""
    return f"{socket.gethostname()}/{os.getpid()}/{os.urandom(4).hex()}"


def _owner_dead(owner: str) -> bool:
    """The owner is a process of this host that cannot measure now: it no longer
    exists, has ended but is not yet reaped (a zombie, which ``kill(pid, 0)`` still
    finds), or is stopped (SIGSTOP, Ctrl-Z). Its claims may be taken over at once: a
    stopped owner that continues checks its claims before measuring and before writing
    (``StoredEvaluator``), so nothing is measured into the store twice."""
    host, _, rest = owner.partition("/")
    pid_text = rest.partition("/")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return _process_state(pid) in ("Z", "X", "T")


def _process_state(pid: int) -> str:
    """The state letter Linux gives the process (``R``, ``S``, ``T``, ``Z``, ...), or
    an empty string where ``/proc`` does not say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()
    return fields[0] if fields else ""


def _like_escape(text: str) -> str:
    """``text`` matched literally inside a LIKE pattern (``\\`` is the escape)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _chunks(keys: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(keys), _CHUNK):
        yield keys[i : i + _CHUNK]


class SQLStore:
    """The store logic over a DB-API connection; subclasses provide the dialect."""

    placeholder = "?"
    id_column = "INTEGER PRIMARY KEY AUTOINCREMENT"
    lock_rows = ""  # what locks selected rows until the transaction ends, where needed
    errors: tuple[type[Exception], ...] = ()
    _readonly = False
    _empty = False

    # -- backend hooks ------------------------------------------------------------

    @property
    def location(self) -> str:
        raise NotImplementedError

    def _cursor_execute(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Run one statement; rows for a query, [] otherwise."""
        raise NotImplementedError

    def _cursor_executemany(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _transaction(self) -> AbstractContextManager[None]:
        """A write transaction, serialised against other writers where it matters."""
        raise NotImplementedError

    def _tables(self) -> set[str]:
        raise NotImplementedError

    def _after_migration(self) -> None:
        """Backend fix-ups after rows were copied with their ids (sequences)."""

    def close(self) -> None:
        raise NotImplementedError

    # -- plumbing -----------------------------------------------------------------

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def _fail(self, exc: Exception, doing: str) -> StoreError:
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return StoreError(f"cannot {doing} the result store: {cause}", source=self.location)

    def _exec(self, sql: str, args: Sequence[Any] = (), doing: str = "read") -> list[Any]:
        try:
            return self._cursor_execute(self._sql(sql), args)
        except self.errors as exc:
            raise self._fail(exc, doing) from None

    def _execmany(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        try:
            self._cursor_executemany(self._sql(sql), args)
        except self.errors as exc:
            raise self._fail(exc, "write") from None

    def _write_txn(self) -> AbstractContextManager[None]:
        if self._readonly:
            raise StoreError("opened read-only; cannot write", source=self.location)
        return self._transaction()

    # -- schema -------------------------------------------------------------------

    def _results_table(self, name: str) -> str:
        return (
            f"CREATE TABLE IF NOT EXISTS {name} ("
            f" id {self.id_column},"
            " device TEXT NOT NULL, kernel_id TEXT NOT NULL, kernel_name TEXT NOT NULL,"
            " problem TEXT NOT NULL, config TEXT NOT NULL, status TEXT NOT NULL,"
            " compile_s DOUBLE PRECISION NOT NULL, times TEXT NOT NULL,"
            " median_s DOUBLE PRECISION, message TEXT NOT NULL, error_code INTEGER,"
            " max_error DOUBLE PRECISION, extra TEXT NOT NULL,"
            " created DOUBLE PRECISION NOT NULL)"
        )

    def _create_schema(self) -> None:
        self._exec(self._results_table("results"), doing="write")
        for stmt in (
            "CREATE INDEX IF NOT EXISTS results_key ON results (device, kernel_id, config)",
            "CREATE INDEX IF NOT EXISTS results_kernel ON results (kernel_name, device)",
            "CREATE TABLE IF NOT EXISTS claims (device TEXT NOT NULL, kernel_id TEXT NOT NULL,"
            " config TEXT NOT NULL, owner TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL,"
            " PRIMARY KEY (device, kernel_id, config))",
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ):
            self._exec(stmt, doing="write")

    def _stored_version(self, tables: set[str]) -> int | None:
        """The schema version found: None for an empty database, 1 for the first store."""
        if "meta" in tables:
            rows = self._exec("SELECT value FROM meta WHERE key = 'version'")
            text = str(rows[0][0]) if rows else ""
            if not (text.isascii() and text.isdigit() and len(text) <= 9):  # "²" is a digit
                raise StoreError(
                    f"the meta table holds no valid schema version ({text!r})",
                    source=self.location,
                    hint="this is not a gtune store, or it was damaged",
                )
            return int(text)
        if "results" in tables:
            return 1
        return None

    def _check_version(self, version: int | None) -> None:
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(
                f"written by a newer gtune (schema version {version}; this gtune reads up "
                f"to {SCHEMA_VERSION})",
                source=self.location,
                hint="upgrade gtune to use this store",
            )

    def _migrate_from_1(self) -> None:
        """Version 1 kept one row per configuration (UNIQUE key): copy into the
        append-only table, keeping ids and times."""
        self._exec("DROP TABLE IF EXISTS results_v2", doing="write")
        self._exec(self._results_table("results_v2"), doing="write")
        self._exec(
            f"INSERT INTO results_v2 (id, {_RESULT_COLUMNS})"
            f" SELECT id, {_RESULT_COLUMNS} FROM results ORDER BY id",
            doing="write",
        )
        self._exec("DROP TABLE results", doing="write")
        self._exec("ALTER TABLE results_v2 RENAME TO results", doing="write")
        self._after_migration()

    def _setup(self, *, readonly: bool) -> None:
        """Check the schema version; create or migrate the schema and prove the store
        can be written (unless ``readonly``), so a run fails before it measures."""
        self._readonly = readonly
        if readonly:
            tables = self._tables()
            self._check_version(self._stored_version(tables))
            self._empty = "results" not in tables
            return
        with self._transaction():
            self._setup_in_transaction()

    def _setup_in_transaction(self) -> None:
        tables = self._tables()
        version = self._stored_version(tables)
        self._check_version(version)
        if version == 1:
            self._migrate_from_1()
        self._create_schema()
        self._exec(
            "INSERT INTO meta (key, value) VALUES ('version', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
            doing="write",
        )
        # A write on every open: a store that cannot be written fails here.
        self._exec(
            "INSERT INTO meta (key, value) VALUES ('opened', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (repr(time.time()),),
            doing="write",
        )

    def schema_version(self) -> int:
        if self._empty:
            return SCHEMA_VERSION
        return self._stored_version(self._tables()) or SCHEMA_VERSION

    # -- rows ---------------------------------------------------------------------

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
        values = (
            device,
            kernel_id,
            kernel_name,
            json.dumps(dict(problem or {}), sort_keys=True),
            config_key(result.config),
            result.status.value,
            float(result.compile_s),
            json.dumps([float(t) for t in result.times_s]),
            result.median_s if result.times_s else None,
            result.message,
            result.error_code,
            result.max_error,
            json.dumps(dict(result.extra), default=str),
            time.time(),
        )
        marks = ", ".join("?" * len(values))
        with self._write_txn():
            if owner is not None:
                holder = self._exec(
                    "SELECT owner FROM claims WHERE device = ? AND kernel_id = ? AND config = ?"
                    + self.lock_rows,
                    (device, kernel_id, values[4]),
                )
                if not holder or str(holder[0][0]) != owner:
                    return False  # the claim was taken over: the new owner's result counts
            self._exec(f"INSERT INTO results ({_RESULT_COLUMNS}) VALUES ({marks})", values, "write")
            if owner is not None:
                self._exec(
                    "DELETE FROM claims WHERE device = ? AND kernel_id = ? AND config = ?"
                    " AND owner = ?",
                    (device, kernel_id, values[4], owner),
                    "write",
                )
        return True

    def add_many(
        self,
        results: Sequence[Result],
        *,
        device: str,
        kernel_id: str,
        kernel_name: str = "",
        problem: Mapping[str, int] | None = None,
    ) -> int:
        """Append ``results`` in one transaction (an import: no claims); how many."""
        problem_text = json.dumps(dict(problem or {}), sort_keys=True)
        now = time.time()
        rows = [
            (
                device,
                kernel_id,
                kernel_name,
                problem_text,
                config_key(r.config),
                r.status.value,
                float(r.compile_s),
                json.dumps([float(t) for t in r.times_s]),
                r.median_s if r.times_s else None,
                r.message,
                r.error_code,
                r.max_error,
                json.dumps(dict(r.extra), default=str),
                now,
            )
            for r in results
        ]
        if not rows:
            return 0
        marks = ", ".join("?" * len(rows[0]))
        with self._write_txn():
            self._execmany(f"INSERT INTO results ({_RESULT_COLUMNS}) VALUES ({marks})", rows)
        return len(rows)

    def _parse(self, row: Sequence[Any]) -> StoredRow:
        try:
            result = Result.from_dict(
                {
                    "config": json.loads(row[5]),
                    "status": row[6],
                    "compile_s": row[7],
                    "times_s": json.loads(row[8]),
                    "message": row[9],
                    "error_code": row[10],
                    "max_error": row[11],
                    "extra": json.loads(row[12]),
                }
            )
            problem = json.loads(row[4])
            if not isinstance(problem, dict):
                raise ValueError("problem is not a mapping")
            return StoredRow(
                str(row[1]),
                str(row[2]),
                str(row[3]),
                {str(k): int(v) for k, v in problem.items()},
                result,
                float(row[13]),
                int(row[0]),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise StoreError(
                f"row {row[0]} is malformed ({type(exc).__name__}: {exc})",
                source=self.location,
                hint="delete that row (or restore the store from a copy)",
            ) from None

    def _select(self, where: Sequence[str], args: Sequence[Any]) -> list[StoredRow]:
        if self._empty:
            return []
        query = _SELECT + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        return [self._parse(r) for r in self._exec(query, args)]

    def results(self, *, device: str | None = None, kernel_id: str | None = None) -> list[Result]:
        where, args = [_LATEST], []
        if device is not None:
            where.append("device = ?")
            args.append(device)
        if kernel_id is not None:
            where.append("kernel_id = ?")
            args.append(kernel_id)
        return [r.result for r in self._select(where, args)]

    def rows(
        self, *, device: str | None = None, kernel: str | None = None, history: bool = False
    ) -> Iterator[StoredRow]:
        where: list[str] = [] if history else [_LATEST]
        args: list[Any] = []
        if device:
            where.append("device LIKE ?")
            args.append(device + "%")
        if kernel:
            # The name, its file part (before ``:``), its function part or an id prefix.
            like = _like_escape(kernel)
            where.append(
                "(kernel_name = ? OR kernel_name LIKE ? ESCAPE '\\'"
                " OR kernel_name LIKE ? ESCAPE '\\' OR kernel_id LIKE ? ESCAPE '\\')"
            )
            args += [kernel, like + ":%", "%:" + like, like + "%"]
        return iter(self._select(where, args))

    def latest(self, device: str, kernel_id: str, keys: Sequence[str]) -> dict[str, StoredRow]:
        out: dict[str, StoredRow] = {}
        for part in _chunks(list(dict.fromkeys(keys))):
            marks = ", ".join("?" * len(part))
            for row in self._select(
                ["device = ?", "kernel_id = ?", f"config IN ({marks})"],
                [device, kernel_id, *part],
            ):
                out[config_key(row.result.config)] = row  # ascending ids: the last wins
        return out

    def last_row_id(self) -> int:
        if self._empty:
            return 0
        rows = self._exec("SELECT MAX(id) FROM results")
        return int(rows[0][0] or 0)

    def refusals(self, device: str, kernel_id: str) -> list[tuple[dict[str, int], str]]:
        rows = self._select(
            [
                "device = ?",
                "kernel_id = ?",
                "status IN (?, ?)",
                "id IN (SELECT MAX(id) FROM results WHERE device = ? AND kernel_id = ?"
                " GROUP BY config)",
            ],
            [
                device,
                kernel_id,
                Status.BUILD_FAILED.value,
                Status.LAUNCH_FAILED.value,
                device,
                kernel_id,
            ],
        )
        return [
            (dict(r.result.config), f"{r.result.status.value}: {r.result.message}".strip(": "))
            for r in rows
        ]

    def count(self) -> int:
        if self._empty:
            return 0
        return int(self._exec("SELECT COUNT(*) FROM results")[0][0])

    # -- claims -------------------------------------------------------------------

    def _claims(self, device: str, kernel_id: str, keys: Sequence[str]) -> list[Any]:
        out: list[Any] = []
        for part in _chunks(keys):
            marks = ", ".join("?" * len(part))
            out += self._exec(
                "SELECT config, owner, expires FROM claims WHERE device = ? AND kernel_id = ?"
                f" AND config IN ({marks})",
                [device, kernel_id, *part],
            )
        return out

    def claim(
        self, device: str, kernel_id: str, keys: Sequence[str], owner: str, lease_s: float
    ) -> set[str]:
        keys = sorted(set(keys))  # one lock order for every process
        if not keys:
            return set()
        now = time.time()
        with self._write_txn():
            dead = {o for _, o, _ in self._claims(device, kernel_id, keys) if _owner_dead(o)}
            for gone in dead:
                self._exec("DELETE FROM claims WHERE owner = ?", (gone,), "write")
            self._execmany(
                "INSERT INTO claims (device, kernel_id, config, owner, expires)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (device, kernel_id, config) DO UPDATE"
                " SET owner = excluded.owner, expires = excluded.expires"
                " WHERE claims.expires < ? OR claims.owner = excluded.owner",
                [(device, kernel_id, k, owner, now + lease_s, now) for k in keys],
            )
            held = {c for c, o, _ in self._claims(device, kernel_id, keys) if o == owner}
        return held

    def claimed(self, device: str, kernel_id: str, keys: Sequence[str]) -> dict[str, str]:
        now = time.time()
        return {
            str(c): str(o)
            for c, o, expires in self._claims(device, kernel_id, list(keys))
            if expires >= now and not _owner_dead(str(o))
        }

    def release(self, device: str, kernel_id: str, keys: Sequence[str], owner: str) -> None:
        keys = list(keys)
        if not keys:
            return
        with self._write_txn():
            for part in _chunks(keys):
                marks = ", ".join("?" * len(part))
                self._exec(
                    "DELETE FROM claims WHERE device = ? AND kernel_id = ? AND owner = ?"
                    f" AND config IN ({marks})",
                    [device, kernel_id, owner, *part],
                    "write",
                )

    def renew(self, device: str, kernel_id: str, owner: str, lease_s: float) -> None:
        with self._write_txn():
            self._exec(
                "UPDATE claims SET expires = ? WHERE device = ? AND kernel_id = ? AND owner = ?",
                (time.time() + lease_s, device, kernel_id, owner),
                "write",
            )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
