"""Building the space of a kernel on a device: model, MiniZinc, refusals, one object."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gtune.device import DeviceLimits
from gtune.kernel import Config, TunableKernel
from gtune.result import ResultStore
from gtune.space.constraints import NamedConstraint
from gtune.space.enumerated import EnumeratedSpace, Exclusions
from gtune.space.model import SpaceModel, build_model, split_for_solver
from gtune.space.refusals import RefusalStore
from gtune.space.solve import SolveInfo, explain_unsatisfiable, solve
from gtune.space.vector import holds, row_columns


@dataclass
class SpaceBuild:
    """A solved space with the model it came from and how long it took."""

    space: EnumeratedSpace
    model: SpaceModel
    info: SolveInfo


def solve_space(
    kernel: TunableKernel,
    device: DeviceLimits,
    *,
    min_groups: bool = True,
    extra: Sequence[NamedConstraint] = (),
    use_cache: bool = True,
    remember_refusals: bool = True,
    workers: int | None = None,
    method: str = "fzn",
    allow_empty: bool = False,
    store: ResultStore | None = None,
    timeout: float | None = None,
    technique: str | None = None,
) -> SpaceBuild:
    """The valid configurations of ``kernel`` on ``device``, decided by MiniZinc.

    With a ``technique`` of the description, only that data-loading technique's: its
    rules go into the model, so the solver enumerates its configurations alone (the
    space :func:`technique_space` cuts from the whole, at a fraction of the solving
    where the technique is a small part of it: heat3d's temporal techniques at 512³
    are 26,000 of 2.4 million configurations).

    With a result ``store`` (and ``remember_refusals``), configurations the device
    refused in earlier runs are left out, and new refusals are recorded there.

    Raises :class:`~gtune.exceptions.UnsatisfiableSpace` naming the conflicting
    constraints when nothing is valid (unless ``allow_empty``). MiniZinc and Gecode run
    under ``timeout`` seconds (default ``$GTUNE_SOLVE_TIMEOUT`` or 600).
    """
    rules = technique_rules(kernel, technique) if technique is not None else []
    model = build_model(kernel, device, min_groups=min_groups, extra=[*extra, *rules])
    solver_model, after = split_for_solver(model)
    rows, info = solve(
        solver_model, use_cache=use_cache, workers=workers, method=method, timeout=timeout
    )
    if after and len(rows):
        env: dict[str, object] = dict(model.env)
        names = frozenset().union(*(c.expr.names for c in after))
        columns = row_columns(model.parameters, rows, names)
        env.update(columns)
        for c in after:  # each on the rows the ones before kept
            keep = holds(c.expr, env, len(rows))
            if not keep.all():
                rows = rows[keep]
                columns = {n: col[keep] for n, col in columns.items()}
                env.update(columns)
    if len(rows) == 0 and not allow_empty:
        raise explain_unsatisfiable(model, timeout)
    exclusions = Exclusions()
    hook = None
    if remember_refusals and store is not None:
        refused = RefusalStore(device.identity, store)
        kid = kernel.identity()
        exclusions = Exclusions(refused.rows(kid, model.parameters))

        def hook(config: Config, reason: str) -> None:
            refused.add(kid, config, reason)

    space = EnumeratedSpace(
        model.parameters,
        rows,
        domains=model.domains,
        constraints=model.constraints,
        env=model.env,
        label=f"{kernel.name} on {device.name}" + (f" [{technique}]" if technique else ""),
        exclusions=exclusions,
        on_exclude=hook,
        work_group_size=model.work_group_size,
    )
    return SpaceBuild(space, model, info)


def build_space(kernel: TunableKernel, device: DeviceLimits, **options: object) -> EnumeratedSpace:
    """Shorthand for ``solve_space(...).space`` (same options)."""
    return solve_space(kernel, device, **options).space  # type: ignore[arg-type]


def technique_rules(kernel: TunableKernel, technique: str) -> list[NamedConstraint]:
    """The rules that make a configuration one of ``technique``'s, named for it."""
    from gtune.exceptions import InputError

    if technique not in kernel.techniques:
        known = ", ".join(kernel.techniques) or "none"
        raise InputError(
            f"unknown technique {technique!r}; the description defines: {known}",
            source=kernel.label,
        )
    return [
        NamedConstraint(f"techniques.{technique}: {e.text}", e, "technique")
        for e in kernel.techniques[technique]
    ]


def technique_space(
    space: EnumeratedSpace, kernel: TunableKernel, technique: str
) -> EnumeratedSpace:
    """``space`` restricted to one data-loading technique of the description."""
    return space.restrict_named(technique_rules(kernel, technique), f"{space.label} [{technique}]")
