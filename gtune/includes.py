"""Headers a kernel ``#include``s: part of what the compiler reads, so of its identity.

An OpenCL compiler looks for ``#include "name"`` in the folders given with ``-I`` and in
the directory the building process runs in; gtune adds the kernel's own folder (``-I``)
when the source includes anything. :func:`headers_digest` hashes every file any of those
places holds under an included name, and the headers those include in turn, so that a
changed header changes the kernel's identity and results measured with the old one are
not served again. Where a name resolves in several places every candidate counts: a
conservative identity, never a stale one.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^">\n]+)[">]', re.MULTILINE)
MAX_HEADERS = 256
"""Most header files followed from one kernel."""
MAX_HEADER_BYTES = 4 * 1024 * 1024


def included_names(text: bytes) -> list[str]:
    """The names ``text`` includes, in order."""
    return [m.group(1).decode("utf-8", "replace").strip() for m in _INCLUDE.finditer(text)]


def include_dirs(options: Iterable[str]) -> list[Path]:
    """The ``-I`` folders among compiler options (``-I dir`` or ``-Idir``)."""
    dirs: list[Path] = []
    items = list(options)
    i = 0
    while i < len(items):
        opt = str(items[i])
        if opt == "-I" and i + 1 < len(items):
            dirs.append(Path(str(items[i + 1])))
            i += 2
            continue
        if opt.startswith("-I") and len(opt) > 2:
            dirs.append(Path(opt[2:]))
        i += 1
    return dirs


def headers_digest(source: str, folder: Path | None, options: Sequence[str]) -> str:
    """A hash of every header ``source`` includes (transitively), by name and content;
    empty when it includes nothing."""
    first = included_names(source.encode("utf-8", "surrogatepass"))
    if not first:
        return ""
    places = [*([folder] if folder is not None else []), *include_dirs(options), Path.cwd()]
    digest = hashlib.sha256()
    queue: list[tuple[str, Path | None]] = [(name, folder) for name in first]
    seen: set[Path] = set()
    while queue and len(seen) < MAX_HEADERS:
        name, near = queue.pop(0)
        digest.update(b"include:" + name.encode("utf-8", "surrogatepass") + b"\0")
        for base in dict.fromkeys([*([near] if near is not None else []), *places]):
            path = base / name
            try:
                full = path.resolve()
                if full in seen or not full.is_file():
                    continue
                seen.add(full)
                with open(full, "rb") as fh:
                    text = fh.read(MAX_HEADER_BYTES + 1)
            except OSError:
                continue
            digest.update(os.fsencode(name) + b"=" + hashlib.sha256(text).digest())
            queue += [(inner, full.parent) for inner in included_names(text)]
    return digest.hexdigest()


def kernel_include_option(folder: Path | None, source: str) -> list[str]:
    """``-I`` for the kernel's own folder when the source includes anything (and the
    folder's path can be passed as one option)."""
    if folder is None or not included_names(source.encode("utf-8", "surrogatepass")):
        return []
    text = str(folder.resolve())
    return [] if any(c.isspace() for c in text) else [f"-I{text}"]
