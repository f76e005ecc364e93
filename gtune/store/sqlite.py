"""The embedded store: one SQLite file (write-ahead log, a committed transaction per write)."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gtune.store._sql import SQLStore, StoreError

_log = logging.getLogger("gtune.store")


class SQLiteStore(SQLStore):
    """A store in one SQLite file (``":memory:"`` for a throw-away one).

    Several processes may share the file; SQLite serialises their writes.
    ``readonly`` opens an existing file without writing to it (a missing file reads as
    an empty store).
    """

    errors = (sqlite3.Error,)

    def __init__(self, path: str | Path | None = None, *, readonly: bool = False) -> None:
        from gtune.store import default_path

        self.path = Path(path) if path is not None else default_path()
        self._db: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the open file
        self._first_id = 0  # the last row when opened: rows after it are this run's
        memory = str(path) == ":memory:"
        if not memory:
            self._check_kind()
        if not memory and self.path.is_file() and self.path.stat().st_size == 0:
            # Not silent: an empty file may be a store whose contents were lost (a copy
            # cut short, a disk that filled up), not only one another process is creating.
            _log.warning(
                "%s is an empty file: it holds no results; a new result store %s",
                self.path,
                "is read as empty" if readonly else "is created in it",
            )
        if readonly and not memory:
            if not self.path.exists():
                parent = self.path.parent
                while not parent.exists() and parent != parent.parent:
                    parent = parent.parent
                if not parent.is_dir():
                    raise StoreError(
                        f"cannot be a store: {parent} is not a folder", source=self.path
                    )
                self._readonly = self._empty = True
                return
            uri = self.path.resolve().as_uri()
            self._db = self._connect(f"{uri}?mode=ro", uri=True)
            try:
                self._tables()
            except StoreError:
                # A write-ahead-log store in a folder this user cannot write: read the
                # file as it is (no other process can be writing it either).
                self.close()
                self._db = self._connect(f"{uri}?immutable=1", uri=True)
        else:
            if not memory:
                self._check_path()
            self._db = self._connect(str(self.path), uri=False)
        try:
            if not memory and not readonly:
                self._write_ahead_log()
                self._exec("PRAGMA synchronous=FULL", doing="write")
            self._setup(readonly=readonly)
            if not memory and not readonly:
                self._identity = self._file_identity()
                self._first_id = self.last_row_id()
        except BaseException:
            self.close()
            raise

    def _write_ahead_log(self) -> None:
        """Switch the file to write-ahead logging once. Processes that open a new store
        at the same moment race for this switch, and SQLite answers the loser "locked"
        at once (no busy handler covers it): retry for up to a minute."""
        conn = self._conn()
        deadline = time.monotonic() + 60.0
        pause = 0.005
        while True:
            try:
                mode = conn.execute("PRAGMA journal_mode").fetchone()
                if mode and str(mode[0]).lower() == "wal":
                    return
                conn.execute("PRAGMA journal_mode=WAL").fetchall()
                return
            except sqlite3.OperationalError as exc:
                text = str(exc).lower()
                if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                    raise self._fail(exc, "write") from None
            except sqlite3.Error as exc:
                raise self._fail(exc, "write") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.25)

    def _check_kind(self) -> None:
        """A path that exists must be a regular file (its write-ahead log and shared
        memory files too): a FIFO would block the open forever (signals unheard), a
        device or socket is no store, a folder gives SQLite's "disk I/O error"."""
        for path in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
            try:
                mode = path.stat().st_mode
            except (FileNotFoundError, NotADirectoryError):
                continue  # a new file (a folder in the way: said when it is created)
            except OSError as exc:
                raise StoreError(
                    f"cannot read the result store: {exc.strerror or exc}", source=path
                ) from None
            if not stat.S_ISREG(mode):
                raise StoreError(
                    f"is {_kind(mode)}, not a result store (a store is a regular file, or a "
                    "new file in a folder)",
                    source=path,
                    hint="give --db the path of a store file (or set $GTUNE_DB)",
                )

    def _file_identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _check_same_file(self) -> None:
        """The path still names the file this connection writes: a store file deleted
        or replaced under a running gtune is reported, not written into unseen."""
        if self._identity is None or self._file_identity() == self._identity:
            return
        self._identity = None  # said once; the connection writes nowhere visible now
        try:  # the open connection still reads the unlinked file
            rows = self._conn().execute(
                "SELECT COUNT(*) FROM results WHERE id > ?", (self._first_id,)
            )
            written = int(rows.fetchone()[0])
        except sqlite3.Error:
            written = -1
        lost = (
            "the results stored in it since this process opened it may have gone with it"
            if written < 0
            else f"the {written} result(s) stored in it since this process opened it went with it"
            if written
            else "no result of this process was in it"
        )
        raise StoreError(
            f"the result store file was deleted or replaced while gtune was using it: {lost}; "
            "nothing more is stored",
            source=self.path,
            hint="run again: whatever the store at this path holds is served, the rest "
            "measured again",
        )

    def _check_path(self) -> None:
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder {str(parent)!r} for the result store: "
                f"{exc.strerror or exc}",
                source=self.path,
            ) from None
        if self.path.is_dir():
            raise StoreError("is a folder, not a result store", source=self.path)

    def _connect(self, target: str, *, uri: bool) -> sqlite3.Connection:
        try:
            return sqlite3.connect(target, timeout=60.0, isolation_level=None, uri=uri)
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open the result store: {exc}",
                source=self.path,
                hint="give --db a writable path (or set $GTUNE_DB)",
            ) from None

    @property
    def location(self) -> str:
        return str(self.path)

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError("the result store is closed", source=self.path)
        return self._db

    def _cursor_execute(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._conn().execute(sql, tuple(args)).fetchall()

    def _cursor_executemany(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        self._conn().executemany(sql, [tuple(a) for a in args])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        identity = self._identity
        self._check_same_file()
        self._exec("BEGIN IMMEDIATE", doing="write")
        try:
            yield
        except BaseException:
            if self._db is not None and self._db.in_transaction:
                self._db.rollback()
            raise
        self._exec("COMMIT", doing="write")
        if identity is not None:
            self._check_same_file()

    def _tables(self) -> set[str]:
        return {r[0] for r in self._exec("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"
