"""A store in a PostgreSQL database, shared by every machine that can reach it (psycopg 3)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from gtune.exceptions import EnvironmentProblem
from gtune.store._sql import SQLStore, StoreError

_SETUP_LOCK = 0x67_74_75_6E_65  # pg_advisory_xact_lock key serialising schema set-up
RECONNECT_S = 30.0
"""How long operations are retried on new connections after the server went away."""


def redact(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    netloc = f"{parts.username or ''}:***@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


class PostgresStore(SQLStore):
    """A store in the PostgreSQL database named by ``url`` (``postgresql://...``).

    Tables are created on first use; every write is its own transaction, so rows are
    visible to other processes as soon as they are written.
    """

    placeholder = "%s"
    id_column = "BIGSERIAL PRIMARY KEY"
    lock_rows = " FOR UPDATE"

    def __init__(self, url: str, *, readonly: bool = False) -> None:
        self.url = url
        self._db: Any = None
        try:
            import psycopg
        except ImportError:
            raise EnvironmentProblem(
                "a PostgreSQL store needs psycopg 3",
                source=self.location,
                hint="pip install 'gtune[postgres]'",
            ) from None
        self.errors = (psycopg.Error,)
        try:
            self._db = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise EnvironmentProblem(
                f"cannot connect to the result store: {cause}",
                source=self.location,
                hint="is the server running, and are the URL's host, port, user and "
                "database right?",
            ) from None
        try:
            self._setup(readonly=readonly)
        except BaseException:
            self.close()
            raise

    @property
    def location(self) -> str:
        return redact(self.url)

    def _cursor_execute(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        cur = self._db.execute(sql, tuple(args))
        return list(cur.fetchall()) if cur.description else []

    def _cursor_executemany(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        with self._db.cursor() as cur:
            cur.executemany(sql, [tuple(a) for a in args])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            with self._db.transaction():
                yield
        except self.errors as exc:
            raise self._fail(exc, "write") from None

    def _setup(self, *, readonly: bool) -> None:
        if readonly:
            super()._setup(readonly=True)
            return
        # Serialise first-time creation and migration between processes.
        with self._transaction():
            self._exec("SELECT pg_advisory_xact_lock(?)", (_SETUP_LOCK,), "write")
            super()._setup_in_transaction()

    def _tables(self) -> set[str]:
        return {
            str(r[0])
            for r in self._exec(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema()"
            )
        }

    def _after_migration(self) -> None:
        self._exec(
            "SELECT setval(pg_get_serial_sequence('results', 'id'),"
            " COALESCE((SELECT MAX(id) FROM results), 0) + 1, false)",
            doing="write",
        )

    # -- a server that restarts ----------------------------------------------------
    # Every operation is retried on a new connection while the old one is lost (a
    # server restart, a dropped network), for up to RECONNECT_S seconds. Operations are
    # safe to repeat: a result whose commit was lost with the connection is not written
    # twice (its claim is gone, so ``add`` declines), claims are idempotent.

    def _lost(self) -> bool:
        db = self._db
        return db is None or bool(getattr(db, "closed", False) or getattr(db, "broken", False))

    def _reconnect(self) -> None:
        import psycopg

        try:
            fresh = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
        except psycopg.Error:
            return  # still down: the next try says so
        with contextlib.suppress(Exception):
            self._db.close()
        self._db = fresh

    def _retry(self, method: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        deadline: float | None = None
        while True:
            try:
                return method(self, *args, **kw)
            except StoreError as exc:
                if not self._lost():
                    raise
                now = time.monotonic()
                deadline = deadline or now + RECONNECT_S
                if now >= deadline:
                    raise StoreError(
                        f"lost the connection to the result store and could not reconnect "
                        f"within {RECONNECT_S:.0f} s ({exc.message})",
                        source=self.location,
                        hint="is the server running?",
                    ) from None
                time.sleep(0.5)
                self._reconnect()

    def schema_version(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.schema_version, *args, **kw)

    def add(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.add, *args, **kw)

    def results(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.results, *args, **kw)

    def rows(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.rows, *args, **kw)

    def latest(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.latest, *args, **kw)

    def last_row_id(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.last_row_id, *args, **kw)

    def refusals(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.refusals, *args, **kw)

    def count(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.count, *args, **kw)

    def claim(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.claim, *args, **kw)

    def claimed(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.claimed, *args, **kw)

    def release(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.release, *args, **kw)

    def renew(self, *args: Any, **kw: Any) -> Any:
        return self._retry(SQLStore.renew, *args, **kw)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
