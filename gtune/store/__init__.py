"""Append-only result storage, opened from a URL.

Search code never sees this package: a :class:`~gtune.measure.StoredEvaluator` writes
each result through as soon as it exists, so Ctrl-C or ``kill -9`` loses nothing, and a
second run of the same work reads results back instead of measuring again.

Stores implement :class:`~gtune.result.ResultStore`. :func:`open_store` picks the
backend from a URL: a bare path or ``sqlite:///path`` (the embedded default), or
``postgresql://...`` for a store shared by many processes and machines. Rows are keyed
by (device identity, kernel identity, configuration); every row ever written is kept and
the latest is the configuration's current result.
"""

from __future__ import annotations

import os
from pathlib import Path

from gtune.exceptions import InputError
from gtune.result import ResultStore, StoredRow
from gtune.store._sql import SCHEMA_VERSION, StoreError, owner_id
from gtune.store.postgres import PostgresStore
from gtune.store.sqlite import SQLiteStore

DEFAULT_DB = "gtune-results.db"


def default_url() -> str:
    """``$GTUNE_DB`` when set, else ``./gtune-results.db``."""
    return os.environ.get("GTUNE_DB") or DEFAULT_DB


def default_path() -> Path:
    """The default store's location: ``$GTUNE_DB``, else ``./gtune-results.db``."""
    return Path(default_url())


def open_store(url: str | Path | None = None, *, readonly: bool = False) -> ResultStore:
    """The store at ``url``: a path, ``sqlite:///relative.db``, ``sqlite:////abs.db``,
    ``sqlite://`` (in memory) or ``postgresql://user@host/db`` (also with
    ``?host=/socket/dir``). ``None`` means ``$GTUNE_DB`` or ``./gtune-results.db``.

    The store is checked when opened: a store that cannot be written (unless
    ``readonly``), a server that cannot be reached, or a schema newer than this gtune
    raises a :class:`~gtune.exceptions.GtuneError` naming it, before any work starts.
    """
    if isinstance(url, Path):
        return SQLiteStore(url, readonly=readonly)
    text = default_url() if url is None else url
    source = "store" if url is not None else "$GTUNE_DB"
    if not text.strip():
        raise InputError("empty result store location", source=source)
    scheme, sep, rest = text.partition("://")
    if not sep:
        if text.lower().startswith(("sqlite:", "postgresql:", "postgres:")):
            raise InputError(
                f"bad store URL {text!r}; expected sqlite:///PATH or postgresql://...",
                source=source,
            )
        return SQLiteStore(text, readonly=readonly)
    scheme = scheme.lower()
    if scheme in ("postgresql", "postgres"):
        return PostgresStore(text, readonly=readonly)
    if scheme == "sqlite":
        if rest in ("", "/", "/:memory:"):
            return SQLiteStore(":memory:", readonly=readonly)
        if not rest.startswith("/"):
            raise InputError(
                f"bad SQLite URL {text!r}; expected sqlite:///relative/path or "
                "sqlite:////absolute/path",
                source=source,
            )
        return SQLiteStore(rest[1:], readonly=readonly)
    raise InputError(
        f"unknown kind of result store {scheme!r}; expected a path, sqlite:///PATH or "
        "postgresql://...",
        source=source,
    )


__all__ = [
    "DEFAULT_DB",
    "SCHEMA_VERSION",
    "PostgresStore",
    "ResultStore",
    "SQLiteStore",
    "StoreError",
    "StoredRow",
    "default_path",
    "default_url",
    "open_store",
    "owner_id",
]
