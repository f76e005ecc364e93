"""Expert search (seed 001 §8.1, ExpS): exhaustive over a subspace an expert picked.

The default limits are the paper's: VX <= 4 (longer vectors rarely pay), WX >= 32
(coalescing), WY*CY <= 4 and WZ*CZ <= 4 (enough work-groups). A limit naming a
parameter the kernel lacks is dropped, with a note.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from gtune.exceptions import InputError
from gtune.expr import Expr
from gtune.heuristics.search import Searcher, SearchProblem
from gtune.heuristics.strategies.base import BATCH_OPTION, ListSearcher, Option, Strategy
from gtune.space.base import Space

PAPER_LIMITS = ("VX <= 4", "WX >= 32", "WY * CY <= 4", "WZ * CZ <= 4")


class ExpertStrategy(Strategy):
    name: ClassVar[str] = "expert"
    doc: ClassVar[str] = "exhaustive search of the subspace within an expert's limits (ExpS)"
    options: ClassVar[Mapping[str, Option]] = {
        "limits": Option(
            list(PAPER_LIMITS),
            "constraints an expert would impose (expressions over parameters)",
            (list, tuple),
        ),
        "batch": BATCH_OPTION,
    }

    def searcher(
        self, space: Space, problem: SearchProblem, options: Mapping[str, Any]
    ) -> Searcher:
        params = set(space.parameters)
        kept: list[Expr] = []
        notes: list[str] = []
        for i, text in enumerate(options["limits"]):
            if not isinstance(text, str):
                raise InputError(f"expert limits are expressions, got {text!r}")
            e = Expr(text, f"expert limits[{i}]")
            missing = sorted(e.names - params - set(problem.sizes))
            if missing:
                notes.append(f"expert limit {text!r} dropped: the kernel has no {missing[0]}")
                continue
            kept.append(e)
        restricted = space.restrict(kept, label="expert") if kept else space
        configs = list(restricted.enumerate())
        if not configs:
            notes.append("no configuration of the space is within the expert's limits")
        return ListSearcher(configs, "expert", options["batch"], notes=notes)
