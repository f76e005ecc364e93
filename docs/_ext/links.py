"""An MkDocs hook: links from a page to files outside docs/ (``../benchmarks/...``,
``../examples/``) work in the GitHub view of the repository as they are, but not in the
built site, and ``mkdocs build --strict`` counts them as broken. This hook checks each
such link against the repository (a target that git does not track is an error, so
strict builds fail on it as on any broken link) and rewrites it to the file's page in
the repository's web view (``repo_url`` in mkdocs.yml)."""

from __future__ import annotations

import logging
import posixpath
import re
import subprocess
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.links")

LINK = re.compile(r"(\]\()([^)\s#]+)((?:#[^)\s]*)?\))")
FENCE = re.compile(r"^(```|~~~)")


def _tracked(root: Path) -> set[str]:
    """The repository's tracked files and the folders holding them."""
    proc = subprocess.run(
        ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=False
    )
    files = proc.stdout.splitlines()
    if proc.returncode != 0 or not files:  # no git here: what is on disk
        files = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    known = set(files)
    for f in files:
        parts = f.split("/")
        known.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return known


_KNOWN: dict[Path, set[str]] = {}


def on_pre_build(config: Any, **kwargs: Any) -> None:
    """Each build (``mkdocs serve`` rebuilds) reads the repository's files afresh."""
    _KNOWN.clear()


def _rewrite(line: str, page_dir: str, root: Path, repo_url: str, src: str) -> str:
    def one(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return match.group(0)
        path = posixpath.normpath(posixpath.join("docs", page_dir, target))
        if path.startswith("docs/") or path == "docs":
            return match.group(0)  # inside docs/: MkDocs checks it
        known = _KNOWN.setdefault(root, _tracked(root))
        if path not in known:
            log.warning("%s links to '%s': %s is not in the repository", src, target, path)
            return match.group(0)
        kind = "blob" if (root / path).is_file() else "tree"
        return f"{match.group(1)}{repo_url}/{kind}/main/{path}{match.group(3)}"

    return LINK.sub(one, line)


def on_page_markdown(markdown: str, page: Any, config: Any, **kwargs: Any) -> str:
    """Links leaving docs/ checked against the repository and pointed at its web view."""
    root = Path(config["config_file_path"]).resolve().parent
    repo_url = str(config["repo_url"] or "").rstrip("/")
    src = page.file.src_uri
    page_dir = posixpath.dirname(src)
    out, fenced = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        out.append(line if fenced else _rewrite(line, page_dir, root, repo_url, src))
    return "\n".join(out)
