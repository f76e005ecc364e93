"""The stencil suite: shapes, the optimizing template, generation and references.

``StencilDefinition`` is a linear stencil a user writes (``NAME.stencil.yaml``, read by
``load_definition``); ``StencilShape`` defines which offsets a pattern reads;
``synthetic`` draws its weights;
``write_stencil`` renders the template and the kernel description; ``garvey104`` is
the 104-kernel suite of seed 001 Table 2.
"""

from __future__ import annotations

from gtune.stencils.definition import StencilDefinition, load_definition, parse_definition
from gtune.stencils.generate import Generated, garvey104, generate, parse_size, suite, synthetic
from gtune.stencils.patterns import ORIENTATIONS, PATTERNS, StencilShape
from gtune.stencils.render import (
    WeightedStencil,
    describe,
    render_source,
    template_source,
    write_stencil,
)

__all__ = [
    "ORIENTATIONS",
    "PATTERNS",
    "Generated",
    "StencilDefinition",
    "StencilShape",
    "WeightedStencil",
    "describe",
    "garvey104",
    "generate",
    "load_definition",
    "parse_definition",
    "parse_size",
    "render_source",
    "suite",
    "synthetic",
    "template_source",
    "write_stencil",
]
