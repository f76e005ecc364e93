"""Opening the campaign's shared store from its URL (every worker opens its own)."""

from __future__ import annotations

from gtune.store import ResultStore, SQLiteStore


def open_campaign_store(url: str | None) -> ResultStore:
    """A bare path or ``sqlite:///PATH``; None for the default store."""
    if url is None:
        return SQLiteStore()
    path = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else url
    return SQLiteStore(path)
