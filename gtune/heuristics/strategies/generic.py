"""A grouped heuristic for any kernel, built from its launch geometry and parameters.

The shipped specs are written for gtune's template (WX/WY/WZ, merge and vector
factors). A kernel written elsewhere names its parameters as it likes (``block_size_x``,
``TILE``, the macros given with ``--param``). This strategy builds the groups from the
kernel itself: the parameters that appear in each dimension of the launch's local size
are tuned together (the work-group shape, dimension by dimension), then all of them at
once keeping the work-group size (the hybrid heuristic's reshaping step, seed 001
§6.2.3), then every other parameter on its own, each with the rest at the best so far;
the rounds repeat until a round changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from gtune.exceptions import InputError
from gtune.expr import Expr
from gtune.heuristics.grouped import GroupedSearch
from gtune.heuristics.search import Searcher, SearchProblem
from gtune.heuristics.spec import HeuristicSpec, parse_spec
from gtune.heuristics.strategies.base import MAX_REPEAT_OPTION, Option, Strategy
from gtune.space.base import Space

_AXES = "xyz"


def work_group_groups(parameters: Sequence[str], local: Sequence[str] | None) -> list[list[str]]:
    """The parameters in each dimension of the local size (each named once, in order)."""
    groups: list[list[str]] = []
    seen: set[str] = set()
    for d, text in enumerate(local or ()):
        names = Expr(str(text), f"launch.local[{d}]").names
        group = [p for p in parameters if p in names and p not in seen]
        seen.update(group)
        groups.append(group)
    return groups


def generic_spec(
    parameters: Sequence[str], local: Sequence[str] | None, *, repeat: int = 2, seed: int = 0
) -> HeuristicSpec:
    """The groups for a kernel with these parameters and this launch's local size."""
    groups = work_group_groups(parameters, local)
    wg = [p for g in groups for p in g]
    steps: list[dict[str, Any]] = []
    for d, group in enumerate(groups):
        if group:
            axis = _AXES[d] if d < len(_AXES) else str(d)
            steps.append({"name": f"work-group {axis}", "tune": {p: "*" for p in group}})
    if sum(1 for g in groups if g) > 1:
        used = [str(text) for text, g in zip(local or (), groups, strict=False) if g]
        steps.append(
            {
                "name": "work-group shape",
                "tune": {p: "*" for p in wg},
                "keep_product": ["*".join(f"({t})" for t in used)],
            }
        )
    for p in parameters:
        if p not in wg:
            steps.append({"name": p, "tune": {p: "*"}})
    if not steps:
        raise InputError(
            "the kernel has no parameter to tune: its launch and every macro are fixed",
            hint="`gtune measure` times its one configuration (verified with --reference "
            "file.py:function); to tune the work-group, name its sizes (--local WX,WY) "
            "instead of numbers",
        )
    raw = {
        "name": "generic",
        "doc": "work-group shape from the launch geometry, then every other parameter",
        "repeat": repeat,
        "seed": seed,
        "steps": steps,
    }
    return parse_spec(raw, "generic (built from the kernel's launch and parameters)")


class GenericStrategy(Strategy):
    """Tune the work-group shape, then each other parameter, group by group."""

    name: ClassVar[str] = "generic"
    doc: ClassVar[str] = (
        "grouped heuristic built from the kernel: the parameters of the launch's local "
        "size dimension by dimension, then the work-group shape, then every other parameter"
    )
    options: ClassVar[Mapping[str, Option]] = {
        "local": Option(
            None,
            "the launch's local size, one expression per dimension (default: filled in "
            "from the kernel by gtune.tune; without it every parameter is its own group)",
            (list, tuple, type(None)),
        ),
        "repeat": Option(
            2,
            "extra rounds over the steps (stops early when nothing changes)",
            (int,),
            bounds=(0, MAX_REPEAT_OPTION),
        ),
        "seed": Option(0, "seed for sampled values", (int,)),
    }

    def searcher(
        self, space: Space, problem: SearchProblem, options: Mapping[str, Any]
    ) -> Searcher:
        if options["repeat"] < 0:
            raise InputError(f"option 'repeat' must be at least 0, got {options['repeat']}")
        spec = generic_spec(
            list(space.parameters), options["local"], repeat=options["repeat"], seed=options["seed"]
        )
        bound = spec.bind(space.parameters, problem.sizes)
        return GroupedSearch(bound, space, problem, seed=options["seed"])


__all__ = ["GenericStrategy", "generic_spec", "work_group_groups"]
