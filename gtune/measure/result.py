"""The outcome of measuring one configuration (defined in :mod:`gtune.result`)."""

from gtune.result import Result, Status

__all__ = ["Result", "Status"]
