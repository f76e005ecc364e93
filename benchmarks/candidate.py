"""A candidate stencil template, as a whole ``stencil.cl`` or as a patch of the package's.

Candidates are kept as unified diffs against ``gtune/data/templates/stencil.cl``
(``benchmarks/candidates/*.patch``, written with ``diff -u``): a reader sees the change
alone, and the tree does not hold a second copy of a 1,800-line template. The hunks are
applied here, in Python (no ``patch`` program is needed on the GPU host), each at the
line its header names, its context and removed lines checked exactly; a patch that does
not fit the template (the template changed since) stops with the hunk that failed.

    python3 benchmarks/candidate.py benchmarks/candidates/X.patch > X.cl
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[1] / "gtune" / "data" / "templates" / "stencil.cl"
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """A patch that does not apply to the template."""


def _hunks(patch: str) -> list[tuple[str, int, list[tuple[str, str]]]]:
    """Each hunk of ``patch``: its header, the 0-based line it names, its tagged lines."""
    hunks: list[tuple[str, int, list[tuple[str, str]]]] = []
    for line in patch.splitlines(keepends=True):
        m = HUNK.match(line)
        if m:
            start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
            hunks.append((m.group(0), start, []))
        elif hunks and line[:1] in (" ", "-", "+"):
            hunks[-1][2].append((line[:1], line[1:]))
    return hunks  # the file headers (---, +++), "\ No newline" and the rest are skipped


def _find(lines: list[str], old: list[str], near: int, at: int) -> int | None:
    """The line nearest ``near`` (not before ``at``) where ``old`` stands, as ``patch``
    finds a hunk whose lines moved since the diff was made."""
    want = [t.rstrip("\n") for t in old]

    def fits(k: int) -> bool:
        return k + len(want) <= len(lines) and all(
            lines[k + n].rstrip("\n") == w for n, w in enumerate(want)
        )

    for d in range(len(lines) + 1):
        for k in (near - d, near + d) if d else (near,):
            if k >= at and fits(k):
                return k
    return None


def apply_patch(original: str, patch: str) -> str:
    """``original`` with the unified diff ``patch`` applied (hunks in order). A hunk
    applies where its context and removed lines stand exactly, at the line its header
    names or, the template having changed above it, the nearest line where they do."""
    lines = original.splitlines(keepends=True)
    out: list[str] = []
    at = 0  # the next line of ``lines`` not yet copied
    shift = 0  # how far the hunks before this one moved
    for header, named, body in _hunks(patch):
        if named + shift < at:
            raise PatchError(f"hunk {header} overlaps the one before")
        old = [text for tag, text in body if tag in (" ", "-")]
        start = _find(lines, old, named + shift, at)
        if start is None:
            k = named + shift
            first = lines[k].rstrip("\n") if k < len(lines) else "the end"
            raise PatchError(
                f"hunk {header}: its lines are nowhere in the template (line {k + 1} is {first!r})"
            )
        shift = start - named
        out += lines[at:start]
        at = start
        for tag, text in body:
            if tag in (" ", "-"):
                at += 1
                if tag == " ":
                    out.append(lines[at - 1])
            else:
                out.append(text if text.endswith("\n") else text + "\n")
    return "".join(out + lines[at:])


def read_variant(path: Path) -> str:
    """The candidate's whole template: ``path`` itself, or the package's template with
    ``path`` applied when it is a ``.patch`` or ``.diff``."""
    if path.suffix in (".patch", ".diff"):
        try:
            return apply_patch(TEMPLATE.read_text(), path.read_text())
        except PatchError as exc:
            raise PatchError(f"{path}: {exc}") from None
    return path.read_text()


if __name__ == "__main__":
    try:
        sys.stdout.write(read_variant(Path(sys.argv[1])))
    except (OSError, PatchError, IndexError) as exc:
        print(f"candidate: {exc}", file=sys.stderr)
        sys.exit(2)
