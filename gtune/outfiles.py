"""Writing output files: atomically, never through a link, never over a file unasked.

Every file gtune writes by a name the user gave (an exported kernel, a lifted
definition, a trained model, a report, a plot) goes through here:

- the text is written to a temporary file in the target's own folder and renamed over
  the target (:func:`os.replace`), so a reader never sees half a file and a failure
  leaves the old file as it was;
- a target that is a symbolic link, or anything but a regular file (a folder, a FIFO, a
  device), is refused: a link planted in an output folder would otherwise have gtune
  replace the file it points to;
- an existing regular file is kept unless ``force`` is given, with a message naming the
  file and the way to replace it (``--force`` on the command line).

Several files written together (:func:`check_targets` first) are all checked before any
is written, so a refusal leaves nothing half exported.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gtune.exceptions import InputError


class OutputExists(InputError):
    """An output file exists and overwriting it was not asked for."""


def check_target(path: str | Path, *, force: bool = False, flag: str = "--force") -> Path:
    """``path`` if gtune may write it: not a link, not a special file, and either new or
    (with ``force``) an existing regular file. ``flag`` is how a user asks to overwrite."""
    p = Path(path)
    try:
        info = os.lstat(p)
    except (FileNotFoundError, NotADirectoryError):
        return p  # a new file (creating its folder says what is wrong with the path)
    except OSError as exc:
        raise InputError(
            f"cannot inspect the output file: {exc.strerror or exc}", source=p
        ) from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(
            "is a symbolic link; gtune does not write through links (remove it, or choose "
            "another output name)",
            source=p,
        )
    if stat.S_ISDIR(info.st_mode):
        raise InputError("is a directory, expected an output file name", source=p)
    if not stat.S_ISREG(info.st_mode):
        raise InputError("is not a regular file (a FIFO, socket or device); not written", source=p)
    if not force:
        raise OutputExists(
            f"exists and is kept; give {flag} to replace it (force=True from Python)", source=p
        )
    return p


def check_targets(
    paths: Iterable[str | Path], *, force: bool = False, flag: str = "--force"
) -> list[Path]:
    """:func:`check_target` for each of ``paths``, before any of them is written."""
    return [check_target(p, force=force, flag=flag) for p in paths]


@contextlib.contextmanager
def replacing(path: str | Path, *, force: bool = False, flag: str = "--force") -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix) to write to; renamed over ``path``
    when the block ends without an error, removed otherwise. For writers that take a
    file name (a plot's ``savefig``); :func:`write_text` for text."""
    target = check_target(path, force=force, flag=flag)
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(
            dir=folder, prefix=f".{target.name}.", suffix=f".tmp{target.suffix}"
        )
    except FileExistsError:
        raise InputError(
            "cannot create its folder: a parent is not a directory", source=target
        ) from None
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", source=target) from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        # a link or file planted meanwhile is refused as it would have been before
        check_target(target, force=force, flag=flag)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", source=target) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write_text(path: str | Path, text: str, *, force: bool = False, flag: str = "--force") -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see the module's rules)."""
    return write_bytes(path, text.encode("utf-8"), force=force, flag=flag)


def write_bytes(
    path: str | Path, data: bytes, *, force: bool = False, flag: str = "--force"
) -> Path:
    """Write ``data`` to ``path`` atomically (see the module's rules)."""
    target = Path(path)
    with replacing(target, force=force, flag=flag) as tmp:
        try:
            tmp.write_bytes(data)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", source=target) from None
    return target


def save_figure(
    figure: Any, path: str | Path, *, force: bool = True, flag: str = "--force", **options: Any
) -> Path:
    """A matplotlib figure saved to ``path`` by the rules above (format from the name's
    suffix, PNG without one); ``options`` go to ``savefig``. ``force`` defaults to True:
    the commands check their plot files before the work that makes them."""
    target = Path(path)
    with replacing(target, force=force, flag=flag) as tmp:
        figure.savefig(tmp, format=target.suffix[1:].lower() or "png", **options)
    return target


def _umask() -> int:
    """The process's umask: from /proc where Linux shows it (setting and restoring it
    would race with other threads' files), else by setting it and setting it back."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


__all__ = [
    "OutputExists",
    "check_target",
    "check_targets",
    "replacing",
    "save_figure",
    "write_bytes",
    "write_text",
]
