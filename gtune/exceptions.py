"""The one exception hierarchy of gtune.

Every error a user can cause (bad files, bad options, missing tools) derives from
:class:`GtuneError`; the command line turns it into one message and exit status 2.
"""

from __future__ import annotations

from pathlib import Path


class GtuneError(Exception):
    """Root of all errors gtune raises on purpose.

    ``source`` names the file (and optionally the key or line) the error is about, so
    the message can say where to look.
    """

    def __init__(self, message: str, *, source: str | Path | None = None, hint: str = "") -> None:
        self.message = message
        self.source = str(source) if source is not None else None
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        text = f"{self.source}: {self.message}" if self.source else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class InputError(GtuneError):
    """A malformed file or option given by the user (description, spec, size, ...)."""


class ExpressionError(InputError):
    """An expression that does not parse, or names something unknown."""


class BuildError(GtuneError):
    """A kernel that does not compile; carries the build log."""

    def __init__(self, message: str, *, source: str | Path | None = None, log: str = "") -> None:
        self.log = log
        super().__init__(message, source=source)

    def render(self) -> str:
        text = super().render()
        if self.log:
            text += "\n--- build log ---\n" + _tail(self.log, 40)
        return text


class EnvironmentProblem(GtuneError):
    """Something missing on the machine: no OpenCL platform, no MiniZinc, no device."""


class UnsatisfiableSpace(GtuneError):
    """The device limits and the kernel's constraints admit no configuration."""


class RecordingMissing(GtuneError):
    """A replay evaluator was asked for a configuration that was never measured."""


def _tail(text: str, lines: int) -> str:
    parts = text.strip().splitlines()
    if len(parts) <= lines:
        return "\n".join(parts)
    return "\n".join([f"... ({len(parts) - lines} earlier lines)", *parts[-lines:]])
