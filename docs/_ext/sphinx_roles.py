"""A griffe extension for the API reference: gtune's docstrings cross-reference with
Sphinx roles (``:class:`~gtune.kernel.TunableKernel```), which Markdown does not know.
Each role becomes an optional mkdocs-autorefs link: a link where the target has a page
in the reference, plain code where it has none (a private module's class)."""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`(~?)([\w.]+)(\(\))?`")


def convert(text: str, module: str = "") -> str:
    """The docstring with its Sphinx roles as optional cross-references; a name without
    a dot is looked up in ``module``, the docstring's own module."""

    def autoref(match: re.Match[str]) -> str:
        short, target, call = match.group(1), match.group(2), match.group(3) or ""
        shown = (target.rsplit(".", 1)[-1] if short else target) + call
        if "." not in target and module:
            target = f"{module}.{target}"
        return (
            f'<autoref identifier="{html.escape(target)}" optional>'
            f"<code>{html.escape(shown)}</code></autoref>"
        )

    return ROLE.sub(autoref, text)


class SphinxRoles(griffe.Extension):
    """Rewrites every loaded object's docstring (see the module's docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value, obj.module.path)
