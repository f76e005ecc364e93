"""A campaign: kernels × sizes × devices × strategies, as plain data.

A campaign file (YAML) or the equivalent flags expand into :class:`CampaignTask`
values -- each a :class:`gtune.TuningTask` (one tuning run, frozen, JSON-serialisable)
with the measuring settings of the file -- so that they can travel to any worker, local
or remote, and be recognised again on a rerun.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gtune.api import TuningTask
from gtune.exceptions import InputError

KNOWN_KEYS = {
    "name",
    "store",
    "kernels",
    "sizes",
    "devices",
    "strategies",
    "technique",
    "budget",
    "timeout",
    "compile_workers",
    "retries",
}


# The fields a campaign task's key and its ledger line (tasks.jsonl) are made of.
_LEDGER = (
    "kernel",
    "label",
    "sizes",
    "device",
    "strategy",
    "technique",
    "budget",
    "timeout_s",
    "compile_workers",
)


@dataclass(frozen=True)
class CampaignTask(TuningTask):
    """A :class:`~gtune.TuningTask` of a campaign (``kernel`` a path, ``device`` a
    selector, "" for the default) with how its worker measures: ``timeout_s`` per
    configuration and ``compile_workers``. ``confirm=False``: no confirmation round (one
    technique's search of a split task, see gtune.campaign.schedule)."""

    timeout_s: float = 60.0
    compile_workers: int | None = None

    @property
    def key(self) -> str:
        """Stable across runs: what the task is, not when it ran."""
        text = json.dumps(
            {k: v for k, v in asdict(self).items() if k in self._fields()}, sort_keys=True
        )
        what = f"{self.label}-{self.strategy}" + ("" if self.confirm else f"-{self.technique}")
        slug = re.sub(r"[^A-Za-z0-9]+", "-", what).strip("-")[:48]
        return f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"

    def _fields(self) -> tuple[str, ...]:
        # tasks with a confirmation round keep the keys of earlier versions
        return _LEDGER if self.confirm else (*_LEDGER, "confirm")

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k in self._fields()}
        data["sizes"] = [list(s) for s in self.sizes]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CampaignTask:
        return cls(
            kernel=str(data["kernel"]),
            label=str(data["label"]),
            sizes=tuple((str(k), int(v)) for k, v in data.get("sizes") or ()),
            device=str(data["device"] or ""),
            strategy=str(data["strategy"]),
            technique=str(data.get("technique", "auto")),
            budget=None if data.get("budget") is None else str(data["budget"]),
            timeout_s=float(data.get("timeout_s", 60.0)),
            compile_workers=(
                None if data.get("compile_workers") is None else int(data["compile_workers"])
            ),
            confirm=bool(data.get("confirm", True)),
        )


@dataclass(frozen=True)
class KernelSource:
    """Where kernels come from: one file, or a generated suite filtered by name."""

    path: str | None = None
    suite: str | None = None
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class CampaignSpec:
    """A campaign file, parsed: kernels (files or generated suites) × sizes × devices ×
    strategies, with the technique, budget, timeout, compile workers, retries and store
    every task shares. :func:`expand` turns it into :class:`CampaignTask` records."""

    name: str
    kernels: tuple[KernelSource, ...]
    sizes: tuple[str, ...] = ()  # "256x256x256"; () = each kernel's own size
    devices: tuple[str, ...] = ("",)  # selectors; "" = the default device
    strategies: tuple[str, ...] = ("hybrid",)
    technique: str = "auto"
    budget: str | None = None
    timeout_s: float = 60.0
    compile_workers: int | None = None
    retries: int = 2
    store: str | None = None
    base_dir: str = "."  # relative kernel paths are resolved from here
    extra: dict[str, Any] = field(default_factory=dict)


def _strs(raw: Any, key: str, source: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str | int):
        return (str(raw),)
    if isinstance(raw, list) and all(isinstance(x, str | int) for x in raw):
        return tuple(str(x) for x in raw)
    raise InputError(f"{key}: expected a string or a list of strings", source=source)


def parse_campaign(raw: Any, *, source: str, base_dir: Path) -> CampaignSpec:
    """A campaign from a parsed YAML mapping (see docs/campaigns.md)."""
    if not isinstance(raw, dict):
        raise InputError("a campaign file is a mapping (name:, kernels:, ...)", source=source)
    unknown = sorted(set(raw) - KNOWN_KEYS)
    if unknown:
        raise InputError(
            f"unknown key {unknown[0]!r}; known: {', '.join(sorted(KNOWN_KEYS))}", source=source
        )
    kernels_raw = raw.get("kernels")
    if not isinstance(kernels_raw, list) or not kernels_raw:
        raise InputError("kernels: give a list of kernel files or suites", source=source)
    kernels: list[KernelSource] = []
    for i, item in enumerate(kernels_raw):
        where = f"{source}: kernels[{i}]"
        if isinstance(item, str):
            kernels.append(KernelSource(path=item))
        elif isinstance(item, dict) and "suite" in item:
            extra = set(item) - {"suite", "names"}
            if extra:
                raise InputError(f"unknown key {sorted(extra)[0]!r}", source=where)
            kernels.append(
                KernelSource(
                    suite=str(item["suite"]), names=_strs(item.get("names"), "names", where)
                )
            )
        elif isinstance(item, dict) and "path" in item and set(item) == {"path"}:
            kernels.append(KernelSource(path=str(item["path"])))
        else:
            raise InputError(
                "expected a path, {path: FILE} or {suite: NAME, names: [...]}", source=where
            )
    sizes = _strs(raw.get("sizes"), "sizes", source)
    for s in sizes:
        if not re.fullmatch(r"[1-9]\d{0,5}(x[1-9]\d{0,5}){0,2}", s):
            raise InputError(f"sizes: bad size {s!r}; expected e.g. 256x256x256", source=source)
    devices = _strs(raw.get("devices"), "devices", source) or ("",)
    strategies = _strs(raw.get("strategies"), "strategies", source) or ("hybrid",)
    budget = raw.get("budget")
    if budget is not None and not re.fullmatch(r"[1-9]\d{0,8}s?", str(budget)):
        raise InputError(
            f"budget: expected a count (200) or seconds (90s), got {budget!r}", source=source
        )
    timeout = raw.get("timeout", 60.0)
    try:
        timeout_s = float(timeout)
        if not (0 < timeout_s < 86400):
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(
            f"timeout: expected seconds (0 < t < 86400), got {timeout!r}", source=source
        ) from None
    retries = raw.get("retries", 2)
    if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= 10:
        raise InputError(f"retries: expected an integer 0-10, got {retries!r}", source=source)
    workers = raw.get("compile_workers")
    if workers is not None and (
        not isinstance(workers, int) or isinstance(workers, bool) or not 0 <= workers <= 64
    ):
        raise InputError(
            f"compile_workers: expected an integer 0-64, got {workers!r}", source=source
        )
    given = raw.get("name")
    if given is not None and not (
        isinstance(given, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", given)
    ):
        raise InputError(
            f"name: expected letters, digits, '.', '_' or '-' (it names the campaign's "
            f"folder), got {given!r}",
            source=source,
        )
    name = given or re.sub(r"[^A-Za-z0-9._-]+", "-", Path(source).stem).strip(".-") or "campaign"
    store = raw.get("store")
    return CampaignSpec(
        name=name,
        kernels=tuple(kernels),
        sizes=sizes,
        devices=devices,
        strategies=strategies,
        technique=str(raw.get("technique", "auto")),
        budget=None if budget is None else str(budget),
        timeout_s=timeout_s,
        compile_workers=workers,
        retries=retries,
        store=None if store is None else str(store),
        base_dir=str(base_dir),
    )


def load_campaign(path: str | Path) -> CampaignSpec:
    """Read a campaign file (YAML; see docs/campaigns.md); paths in it are relative to it."""
    from gtune.description import read_yaml

    p = Path(path)
    return parse_campaign(read_yaml(p), source=str(p), base_dir=p.resolve().parent)


def _size_map(text: str, names: Sequence[str]) -> tuple[tuple[str, int], ...]:
    values = [int(v) for v in text.split("x")]
    if len(names) < len(values):
        values = values[: len(names)]
    return tuple(zip(names, values, strict=False))


MAX_TASKS = 20_000
"""Most tasks one campaign runs. Pieces are streamed (one per free worker slot in
flight, each summary appended to the ledger as it comes), but the plan of every task is
held and ranked in memory; a larger study is several campaigns (same folder and store:
each skips what the others finished)."""


def check_task_count(count: int, campaign: str) -> None:
    """Refuse a campaign of more than :data:`MAX_TASKS` tasks, before anything starts."""
    if count > MAX_TASKS:
        raise InputError(
            f"{count:,} tasks; a campaign runs at most {MAX_TASKS:,}",
            source=campaign,
            hint="split it into several campaigns (fewer kernels, sizes, devices or "
            "strategies each); they may share the output folder and the store",
        )


def expand(spec: CampaignSpec, work_dir: Path) -> list[CampaignTask]:
    """Every task of the campaign, suites rendered into ``work_dir``, in a stable order."""
    from gtune.description import load_kernel

    files: list[tuple[str, Path]] = []
    for src in spec.kernels:
        if src.path is not None:
            p = Path(src.path)
            if not p.is_absolute():
                p = Path(spec.base_dir) / p
            if not p.exists():
                raise InputError(f"kernel file {src.path} does not exist", source=spec.name)
            files.append((p.stem, p.resolve()))
            continue
        from gtune.stencils.generate import generate
        from gtune.stencils.generate import suite as suite_shapes

        try:
            shapes = suite_shapes(str(src.suite))
        except (KeyError, InputError):
            raise InputError(f"unknown suite {src.suite!r}", source=spec.name) from None
        if src.names:
            unknown = [n for n in src.names if not any(fnmatch.fnmatch(s.name, n) for s in shapes)]
            if unknown:
                raise InputError(
                    f"no kernel of {src.suite} matches {unknown[0]!r}", source=spec.name
                )
            shapes = [s for s in shapes if any(fnmatch.fnmatch(s.name, n) for n in src.names)]
        for g in generate(shapes, work_dir / str(src.suite)):
            files.append((g.stencil.name, g.description.resolve()))
    each = max(1, len(spec.sizes)) * len(spec.devices) * len(spec.strategies)
    check_task_count(len(files) * each, spec.name)  # before any task is made
    tasks: list[CampaignTask] = []
    for label, path in files:
        kernel = load_kernel(path)
        names = list(kernel.sizes)
        for size in spec.sizes or ("",):
            sizes = _size_map(size, names) if size else ()
            for device in spec.devices:
                for strategy in spec.strategies:
                    tasks.append(
                        CampaignTask(
                            kernel=str(path),
                            label=label,
                            sizes=sizes,
                            device=device,
                            strategy=strategy,
                            technique=spec.technique,
                            budget=spec.budget,
                            timeout_s=spec.timeout_s,
                            compile_workers=spec.compile_workers,
                        )
                    )
    return tasks
