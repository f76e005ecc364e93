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


def apply_patch(original: str, patch: str) -> str:
    """``original`` with the unified diff ``patch`` applied (hunks in order)."""
    lines = original.splitlines(keepends=True)
    out: list[str] = []
    at = 0  # the next line of ``lines`` not yet copied
    body = patch.splitlines(keepends=True)
    i = 0
    while i < len(body):
        m = HUNK.match(body[i])
        i += 1
        if not m:
            continue  # the file headers (---, +++) and anything before the first hunk
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        if start < at:
            raise PatchError(f"hunk {m.group(0)} overlaps the one before")
        out += lines[at:start]
        at = start
        while i < len(body) and not body[i].startswith("@@"):
            tag, text = body[i][:1], body[i][1:]
            i += 1
            if tag == "\\":  # "\ No newline at end of file"
                continue
            if tag in (" ", "-"):
                if at >= len(lines) or lines[at].rstrip("\n") != text.rstrip("\n"):
                    raise PatchError(f"hunk {m.group(0)}: line {at + 1} is not {text!r}")
                at += 1
                if tag == " ":
                    out.append(lines[at - 1])
            elif tag == "+":
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
