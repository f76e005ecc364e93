"""The docs stay true: the API reference is current, every public name has a docstring,
the troubleshooting page quotes messages gtune still gives, the pages are linked."""

from __future__ import annotations

import importlib.util
import re

from tests.conftest import ROOT

DOCS = ROOT / "docs"


def _builder():  # docs/build_api.py, imported from its file
    spec = importlib.util.spec_from_file_location("build_api", DOCS / "build_api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_current() -> None:
    build_api = _builder()
    text = build_api.build()
    assert (DOCS / "api.md").read_text() == text, "run: python docs/build_api.py"
    for name in ("gtune.tune", "gtune.ProgressBar", "gtune.Campaign", "gtune.tuning.Observer"):
        assert f"`{name}`" in text


def test_every_public_name_has_a_docstring() -> None:
    assert _builder().missing_docstrings() == []


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


def test_pages_are_linked_and_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in ("docs/troubleshooting.md", "docs/faq.md", "docs/api.md", "CHANGELOG.md"):
        assert f"]({page})" in readme, page
        assert (ROOT / page).exists()
    for doc in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text()):
            assert (doc.parent / target).exists(), f"{doc.name} links to missing {target}"
