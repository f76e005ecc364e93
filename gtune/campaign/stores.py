"""Opening the campaign's shared store from its URL (every worker opens its own)."""

from __future__ import annotations

from gtune.store import ResultStore, open_store


def open_campaign_store(url: str | None) -> ResultStore:
    """A path, ``sqlite:///PATH`` or ``postgresql://...``; None for the default store."""
    return open_store(url)
