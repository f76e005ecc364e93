"""Random sampling (seed 001 §5.1, §8.1, Rand): the best of N random configurations.

By default the sample is drawn from the pruned space, so every configuration can run.
``unpruned`` draws from the product of the parameter domains as the paper did; the
illegal configurations drawn are then either recorded as pruned without running
(``illegal: record``, counted apart from the evaluations) or sent to the evaluator to
fail for real (``illegal: evaluate``, counting their compile time as the paper did).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from gtune.exceptions import InputError
from gtune.heuristics.search import Searcher, SearchProblem
from gtune.heuristics.strategies.base import BATCH_OPTION, ListSearcher, Option, Strategy
from gtune.kernel import Config
from gtune.measure.evaluator import pruned
from gtune.measure.result import Result
from gtune.space.base import Space


class RandomStrategy(Strategy):
    name: ClassVar[str] = "random"
    doc: ClassVar[str] = "best of N configurations drawn at random (Rand)"
    seeded: ClassVar[bool] = False  # the baseline: N uniform draws, the default not added
    options: ClassVar[Mapping[str, Option]] = {
        "n": Option(1000, "how many configurations to draw", (int,), bounds=(1, 10_000_000)),
        "seed": Option(0, "random seed", (int,)),
        "unpruned": Option(False, "draw from the unpruned product of the domains", (bool,)),
        "illegal": Option(
            "record",
            "with unpruned: record illegal draws as pruned, or evaluate them",
            (str,),
            ("record", "evaluate"),
        ),
        "batch": BATCH_OPTION,
    }

    def searcher(
        self, space: Space, problem: SearchProblem, options: Mapping[str, Any]
    ) -> Searcher:
        n = options["n"]
        if n < 1:
            raise InputError(f"option 'n' of strategy 'random' must be at least 1, got {n}")
        if not options["unpruned"]:
            configs = space.sample(n, seed=options["seed"])
            return ListSearcher(configs, "random", options["batch"])
        domains = _domains(space, problem)
        configs = _sample_product(space.parameters, domains, n, options["seed"])
        known: dict[int, Result] = {}
        if options["illegal"] == "record":
            for i, config in enumerate(configs):
                violation = space.is_valid(config)
                if violation is not None:
                    known[i] = pruned(config, str(violation))
        return ListSearcher(configs, "random (unpruned)", options["batch"], known=known)


def _domains(space: Space, problem: SearchProblem) -> Mapping[str, Sequence[int]]:
    domains = problem.domains or getattr(space, "domains", None) or {}
    missing = [p for p in space.parameters if p not in domains]
    if missing:
        raise InputError(
            f"sampling the unpruned space needs the domain of every parameter; {missing[0]} "
            "has none (build the problem with SearchProblem.from_kernel)"
        )
    return domains


def _sample_product(
    parameters: Sequence[str], domains: Mapping[str, Sequence[int]], n: int, seed: int
) -> list[Config]:
    """``n`` distinct points of the product of the domains, uniformly."""
    values = [sorted(domains[p]) for p in parameters]
    total = math.prod(len(v) for v in values)
    picks = random.Random(seed).sample(range(total), min(n, total))
    out: list[Config] = []
    for index in picks:
        config: Config = {}
        for p, vals in zip(reversed(parameters), reversed(values), strict=True):
            index, digit = divmod(index, len(vals))
            config[p] = vals[digit]
        out.append({p: config[p] for p in parameters})
    return out
