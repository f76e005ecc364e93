"""Shared helpers of the store tests (the contract's helpers are in gtune.testing.store)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any


def raw_execute(url: str, sql: str, args: Sequence[Any] = ()) -> list[Any]:
    """Run SQL on a store behind gtune's back (to damage or age it)."""
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as con:
            cur = con.execute(sql.replace("?", "%s"), tuple(args))
            return list(cur.fetchall()) if cur.description else []
    path = url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as con:
        return con.execute(sql, tuple(args)).fetchall()
