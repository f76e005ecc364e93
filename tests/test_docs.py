"""The docs stay true: the API reference (mkdocstrings, docs/api.md) covers the public
API and every public name has a docstring, the site builds with no broken link, the
troubleshooting page quotes messages gtune still gives, the pages are linked."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
MKDOCS = Path(sys.executable).parent / "mkdocs"


def _reference() -> list[tuple[str, list[str] | None]]:
    """The modules docs/api.md renders (``::: module``), each with the members its
    ``members:`` option lists, or None for the module's ``__all__``."""
    found: list[tuple[str, list[str] | None]] = []
    for block in re.split(r"^(?=::: )", (DOCS / "api.md").read_text(), flags=re.M)[1:]:
        name = block.split()[1]
        listed = re.search(r"members:\n((?:\s+- \S+\n)+)", block)
        members = re.findall(r"- (\S+)", listed.group(1)) if listed else None
        found.append((name, members))
    return found


def _public(module: ModuleType, listed: list[str] | None) -> list[str]:
    names = listed if listed is not None else list(getattr(module, "__all__", []))
    return [n for n in names if not n.startswith("_")]


def _own_doc(obj: object) -> str:
    doc = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else None
    text = inspect.cleandoc(doc).strip() if doc else ""
    if inspect.isclass(obj) and text.startswith(f"{obj.__name__}("):
        return ""  # the signature dataclasses write in place of a docstring
    return text


def test_api_reference_renders_the_public_modules() -> None:
    modules = dict(_reference())
    for name in ("gtune", "gtune.tuning", "gtune.measure", "gtune.store", "gtune.campaign"):
        assert name in modules, f"docs/api.md does not render {name}"
    for name, listed in modules.items():
        module = importlib.import_module(name)
        assert _public(module, listed), f"{name}: nothing public to render"
        for member in listed or []:
            assert hasattr(module, member), f"docs/api.md lists {name}.{member}: gone"


def test_every_public_name_has_a_docstring() -> None:
    missing = []
    for name, listed in _reference():
        module = importlib.import_module(name)
        for member in _public(module, listed):
            obj = getattr(module, member)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not _own_doc(obj):
                missing.append(f"{name}.{member}")
    assert missing == []


def _roles() -> ModuleType:  # docs/_ext/sphinx_roles.py, imported from its file
    spec = importlib.util.spec_from_file_location("sphinx_roles", DOCS / "_ext" / "sphinx_roles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sphinx_roles_become_optional_cross_references() -> None:
    convert = _roles().convert
    text = convert("A :class:`~gtune.kernel.TunableKernel`, :func:`tune` and ``x``.", "gtune")
    assert text == (
        'A <autoref identifier="gtune.kernel.TunableKernel" optional><code>TunableKernel'
        '</code></autoref>, <autoref identifier="gtune.tune" optional><code>tune</code>'
        "</autoref> and ``x``."
    )


@pytest.mark.slow
@pytest.mark.skipif(not MKDOCS.exists(), reason="mkdocs is not installed (the docs extra)")
def test_site_builds_strict_with_the_api_and_links_out_of_docs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = subprocess.run(
        [str(MKDOCS), "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1", GTUNE_REPO_URL="https://example.org/g"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    api = (site / "api" / "index.html").read_text()
    for name in ("gtune.tune", "gtune.ProgressBar", "gtune.Campaign", "gtune.tuning.Observer"):
        assert f'id="{name}"' in api, name
    assert ":class:" not in api  # the roles were converted
    # A link out of docs/ points at the repository's web view, not at a missing page.
    assert 'href="https://example.org/g/tree/main/examples"' in api


def _source_text() -> str:
    """gtune's source, with string literals split over lines joined again."""
    text = "\n".join(p.read_text() for p in sorted((ROOT / "gtune").rglob("*.py")))
    return re.sub(r"\"\s*\n\s*f?\"", "", text)


def test_troubleshooting_quotes_messages_gtune_gives() -> None:
    page = (DOCS / "troubleshooting.md").read_text()
    quoted = re.findall(r"^### `([^`]+)`", page, re.M)
    quoted += re.findall(r"^### `[^`]+` / `([^`]+)`", page, re.M)
    assert len(quoted) >= 8
    source = _source_text()
    missing = [q for q in quoted if q not in source]
    assert missing == [], f"troubleshooting.md quotes messages gtune no longer gives: {missing}"


@pytest.mark.skipif(not MKDOCS.exists(), reason="mkdocs is not installed (the docs extra)")
def test_a_link_out_of_docs_is_checked_and_points_at_the_repository(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "data.csv").write_text("a,b\n")
    page = tmp_path / "docs" / "index.md"
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"site_name: t\nrepo_url: https://example.org/r\nhooks: [{DOCS / '_ext' / 'links.py'}]\n"
    )

    def build(text: str) -> subprocess.CompletedProcess[str]:
        page.write_text(text)
        cmd = [str(MKDOCS), "build", "--strict", "-f", str(config), "-d", str(tmp_path / "s")]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    good = build("[data](../data.csv) and [data again](../data.csv#L1)\n")
    assert good.returncode == 0, good.stderr[-2000:]
    html = (tmp_path / "s" / "index.html").read_text()
    assert 'href="https://example.org/r/blob/main/data.csv"' in html
    assert 'href="https://example.org/r/blob/main/data.csv#L1"' in html
    bad = build("[gone](../gone.csv)\n")
    assert bad.returncode != 0
    assert "index.md links to '../gone.csv': gone.csv is not in the repository" in bad.stderr


def _ignored(paths: list[Path]) -> set[Path]:
    """Those of ``paths`` that git ignores (raw benchmark data: not in a clone)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return set()
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--stdin"],
        input="\n".join(str(p) for p in paths),
        capture_output=True,
        text=True,
        check=False,
    )
    return {Path(line) for line in proc.stdout.splitlines()}


def test_pages_are_linked_and_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in ("docs/troubleshooting.md", "docs/faq.md", "docs/api.md", "CHANGELOG.md"):
        assert f"]({page})" in readme, page
        assert (ROOT / page).exists()
    report = ROOT / "benchmarks" / "results" / "REPORT.md"
    assert "](benchmarks/results/REPORT.md)" in readme
    links = []
    for doc in [ROOT / "README.md", report, *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text()):
            path = (doc.parent / target).resolve()
            assert path.exists(), f"{doc.name} links to missing {target}"
            links.append(path)
    # a link to a file git ignores works here, not in a clone (benchmarks/README.md,
    # "Raw data", says where raw stores and logs are)
    assert sorted(_ignored(links)) == []
