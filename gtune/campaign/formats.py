"""Results in the community's formats.

*Export* to the T4 tuning-results schema (schema_version 1.0.0), read by Kernel Tuner's
and KTT's analysis tools: per configuration the configuration, the objectives, the
times split into compilation, runs, framework, search and validation, and the
invalidity class. gtune's times are written in seconds; each measurement names its
unit.

*Import* of Kernel Tuner cache files (cache schema 1.x, times in milliseconds) into a
gtune store, keyed by a gtune kernel description whose parameters have the cache's
names, so Kernel Tuner's measurements can sit beside gtune's in reports.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import math
import platform
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtune.exceptions import ExpressionError, InputError
from gtune.inputs import read_text
from gtune.kernel import TunableKernel, canonical_config
from gtune.measure.result import Result, Status
from gtune.store import ResultStore, StoredRow
from gtune.store.ranking import base_id

T4_VERSION = "1.0.0"

INVALIDITY = {
    Status.OK: "correct",
    Status.PRUNED: "constraints",
    Status.BUILD_FAILED: "compile",
    Status.LAUNCH_FAILED: "runtime",
    Status.CRASHED: "runtime",
    Status.TIMEOUT: "timeout",
    Status.WRONG_RESULT: "correctness",
}

KT_INVALID = {
    "InvalidConfig": Status.PRUNED,
    "CompilationFailedConfig": Status.BUILD_FAILED,
    "RuntimeFailedConfig": Status.LAUNCH_FAILED,
    "ErrorConfig": Status.CRASHED,
}
"""Kernel Tuner's error classes, as its caches write them: in ``time`` (before 1.4) or in
``__error__`` (1.4 and later, where ``time`` is then absent)."""


def _iso(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).isoformat(timespec="seconds")


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def t4_result(row: StoredRow) -> dict[str, Any]:
    """One stored result as a T4 result, in the keys and units (milliseconds) Kernel
    Tuner's own T4 writer uses, so its tools and the autotuning-methodology tools read
    it as they read Kernel Tuner's."""
    r = row.result
    extra = dict(r.extra)
    verify = float(extra.get("verify_s", 0.0) or 0.0)
    worker = float(extra.get("worker_s", 0.0) or 0.0)
    wait = float(extra.get("wait_s", 0.0) or 0.0)  # the device lock: not gtune's work
    framework = max(0.0, worker - r.run_s - verify - wait)
    measurements: list[dict[str, Any]] = []
    if r.ok:
        measurements.append({"name": "time", "value": _ms(r.median_s), "unit": "ms"})
    return {
        "timestamp": _iso(row.created),
        "configuration": dict(r.config),
        "objectives": ["time"],
        "times": {
            "compilation": _ms(r.compile_s),
            "benchmark": _ms(r.run_s),
            "framework": _ms(framework),
            "search_algorithm": _ms(float(extra.get("search_s", 0.0) or 0.0)),
            "validation": _ms(verify),
            "runtimes": [_ms(t) for t in r.times_s],
        },
        "invalidity": INVALIDITY[r.status],
        "correctness": 0 if r.status is Status.WRONG_RESULT else 1,
        "measurements": measurements,
    }


def export_t4(rows: Iterable[StoredRow], *, device_name: str = "") -> dict[str, Any]:
    """The rows of one kernel on one device as a T4 results document."""
    rows = list(rows)
    metadata: dict[str, Any] = {
        "timeunit": "milliseconds",
        "compute_api": "OpenCL",
        "autotuner": "gtune",
        "autotuner_version": _version("gtune"),
    }
    if rows:
        first = rows[0]
        metadata.update(
            device=device_name or first.device,
            device_identity=first.device,
            kernel=first.kernel_name,
            kernel_id=base_id(first.kernel_id),
            problem_size=dict(first.problem),
            timestamp=_iso(min(r.created for r in rows)),
        )
    return {
        "schema_version": T4_VERSION,
        "metadata": metadata,
        "results": [t4_result(r) for r in rows],
    }


def t4_file_name(rows: Sequence[StoredRow]) -> str:
    """A file name for one kernel on one device: ``heat3d_32x32x32_DEVICE.t4.json``."""
    first = rows[0]
    size = "x".join(str(v) for v in first.problem.values()) or "nosize"
    parts = (first.kernel_name.replace(":", "-"), size, first.device)
    return "_".join("".join(c if c.isalnum() or c in "-." else "-" for c in p) for p in parts) + (
        ".t4.json"
    )


def export_t4_metadata(
    groups: Mapping[tuple[str, str], Sequence[StoredRow]], files: Mapping[tuple[str, str], str]
) -> dict[str, Any]:
    """The T4 metadata document of an export: the machine, the software, and which
    results file holds which kernel on which device."""
    requirements = [
        f"{name}=={_version(name)}"
        for name in ("gtune", "numpy", "pyopencl", "scikit-learn", "psycopg")
        if _version(name)
    ]
    devices = sorted({key[0] for key in groups})
    return {
        "schema_version": T4_VERSION,
        "metadata": {
            "hardware": {
                "hardware_description": [{"device_identity": d} for d in devices],
                "operating_system": platform.system() or "unidentified OS",
            },
            "environment": {
                "device_query": {"opencl": {"devices": devices}},
                "requirements": requirements,
            },
            "timeunit": "milliseconds",
            "results": [
                {
                    "file": files[key],
                    "kernel": rows[0].kernel_name,
                    "kernel_id": base_id(rows[0].kernel_id),
                    "device_identity": rows[0].device,
                    "problem_size": dict(rows[0].problem),
                    "count": len(rows),
                }
                for key, rows in groups.items()
            ],
        },
    }


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return ""


KT_MAX_BYTES = 1024**3
"""Largest Kernel Tuner cache file read (a 200,000-entry cache is about 60 MB)."""
KT_TIME_S = (1e-9, 3600.0)
"""Plausible run times of one configuration: over a nanosecond, at most an hour."""
KT_OTHER_MAX_S = 86400.0
"""Most seconds a compile, verification, search or framework time may be (a day)."""
KT_EXAMPLES = 3  # examples kept per refusal reason
KT_BATCH = 2000  # results written per store transaction


@dataclass
class KtRefusals:
    """The cache entries an import refused: how many for each reason, with examples."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, entry_key: str, detail: str) -> None:
        self.counts[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < KT_EXAMPLES:
            shown.append(f"cache[{entry_key!r}]: {detail}")

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def lines(self) -> list[str]:
        """One line per reason, most frequent first: ``N reason (e.g. ...; ...)``."""
        return [
            f"{n} {reason} (e.g. {'; '.join(self.examples[reason])})"
            for reason, n in self.counts.most_common()
        ]


@dataclass(frozen=True)
class KtImport:
    """What an import did: ``added`` results stored, ``kept`` already there, ``refused``
    entries and why; ``limits``: whether the device's limits were checked too (a space
    of the device was given), not only the description's domains and constraints."""

    entries: int
    added: int
    kept: int
    refused: KtRefusals
    limits: bool


Progress = Callable[[str, int, int], None]
"""Told (phase, done, total) as an import goes: ``checking`` the entries, ``storing``."""


def read_kt_cache(path: Path) -> dict[str, Any]:
    """A Kernel Tuner cache file, read whole: a regular file (a FIFO or device is refused
    before it is opened) of at most :data:`KT_MAX_BYTES`, JSON with a ``cache`` mapping
    and ``tune_params_keys`` (without them no entry says which of its keys are
    parameters)."""
    text = read_text(path, limit=KT_MAX_BYTES, what="Kernel Tuner cache file").strip()
    # Kernel Tuner leaves a cache of an unfinished run without its closing braces.
    if text.endswith(","):
        text = text[:-1] + "}}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a Kernel Tuner cache file: {exc}", source=path) from None
    except RecursionError:
        raise InputError("not a Kernel Tuner cache file: nested too deeply", source=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("cache"), dict):
        raise InputError("not a Kernel Tuner cache file (no cache: mapping)", source=path)
    keys = data.get("tune_params_keys")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise InputError(
            "no tune_params_keys (a list of parameter names): which keys of an entry are "
            "parameters is unknown, and every entry would land on one configuration",
            source=path,
            hint="Kernel Tuner writes tune_params_keys in every cache: the parameter names in "
            "the order of the cache's keys",
        )
    if len(set(keys)) != len(keys):
        raise InputError("tune_params_keys names a parameter twice", source=path)
    return data


class _EntryCheck:
    """Turns one cache entry into a gtune result, or says why it is refused: parameter
    values must be integers in the description's domains meeting its constraints (all of
    the space's rules, device limits included, when a space is given), the cache key
    must spell its values, times must be plausible."""

    def __init__(
        self, kernel: TunableKernel, keys: Sequence[str], source: str, space: Any | None
    ) -> None:
        unknown = [k for k in keys if k not in set(kernel.parameter_names)]
        if unknown:
            raise InputError(
                f"the cache tunes {', '.join(unknown)}, which {kernel.label} does not declare",
                source=source,
            )
        self.kernel, self.keys, self.space = kernel, list(keys), space
        missing = [p.name for p in kernel.parameters if p.name not in keys and p.default is None]
        if missing:
            raise InputError(
                f"the cache does not tune {', '.join(missing)} and {kernel.label} gives "
                "no default for it",
                source=source,
            )
        self.fixed = {
            p.name: int(p.default)
            for p in kernel.parameters
            if p.name not in keys and p.default is not None
        }
        sizes = set(kernel.sizes)
        self.domains: dict[str, frozenset[int] | None] = {}
        for p in kernel.parameters:  # domains of the problem size alone: read once
            try:
                fixed = p.domain.names() <= sizes
                self.domains[p.name] = (
                    frozenset(p.domain.values(dict(kernel.sizes))) if fixed else None
                )
            except (InputError, ExpressionError):
                self.domains[p.name] = None
        known = sizes | set(kernel.parameter_names)
        self.constraints = [(i, c) for i, c in enumerate(kernel.constraints) if c.names <= known]

    def config(self, entry: Mapping[str, Any]) -> tuple[dict[str, int] | None, str, str]:
        """The entry's configuration, or (None, reason, detail)."""
        config: dict[str, int] = {}
        for k in self.keys:
            v = entry.get(k)
            if isinstance(v, bool) or not isinstance(v, int | float):
                return None, "parameter values that are not integers", f"{k}={v!r}"
            if isinstance(v, float) and not (math.isfinite(v) and v.is_integer()):
                return None, "parameter values that are not integers", f"{k}={v!r}"
            config[k] = int(v)
        config.update(self.fixed)
        return config, "", ""

    def invalid(self, config: Mapping[str, int]) -> tuple[str, str] | None:
        """(reason, detail) if ``config`` is outside the space."""
        if self.space is not None:
            v = self.space.is_valid(config)
            if v is None:
                return None
            reason = (
                "outside the domain"
                if v.constraint.startswith("domain of")
                else ("breaking a constraint")
            )
            return reason, str(v)
        for name, allowed in self.domains.items():
            if allowed is not None and config[name] not in allowed:
                return "outside the domain", f"{name}={config[name]}"
        dependent = {n for n, allowed in self.domains.items() if allowed is None}
        if dependent:  # domains of other parameters: evaluated for this configuration
            bad = [b for b in self.kernel.outside_domain(config) if b.split("=")[0] in dependent]
            if bad:
                return "outside the domain", ", ".join(bad)
        env = self.kernel.env(config)
        for i, c in self.constraints:
            try:
                ok = bool(c.evaluate(env))
            except (ExpressionError, ArithmeticError, ValueError):
                ok = False
            if not ok:
                return "breaking a constraint", f"constraints[{i}]: {c.text}"
        return None


def _kt_seconds(value: Any, top: float, low: float = 0.0) -> float | None:
    """Milliseconds as seconds, or None when not a plausible time in [low, top]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    v = float(value) / 1000.0
    if not math.isfinite(v) or v < low or v > top or (low > 0 and v <= 0):
        return None
    return v


def _kt_result(entry: Mapping[str, Any], config: dict[str, int]) -> tuple[Result | None, str, str]:
    """The result an entry records, or (None, reason, detail)."""
    extra: dict[str, Any] = {"imported_from": "kernel_tuner"}
    compile_s = 0.0
    for name, key in (
        ("compile_time", "compile_s"),
        ("verification_time", "verify_s"),
        ("strategy_time", "search_s"),
        ("framework_time", "framework_s"),
    ):
        raw = entry.get(name)
        seconds = 0.0 if raw is None else _kt_seconds(raw, KT_OTHER_MAX_S)
        if seconds is None:
            return None, "implausible times", f"{name}={raw!r}"
        if key == "compile_s":
            compile_s = seconds
        else:
            extra[key] = seconds
    time_value = entry.get("time")
    error = entry.get("__error__")
    if error is not None or isinstance(time_value, str):
        name = str(error if error is not None else time_value)
        status = KT_INVALID.get(name)
        if status is None:
            field_name = "__error__" if error is not None else "time"
            return None, "unknown Kernel Tuner errors", f"{field_name}={name!r}"
        return Result(config, status, compile_s, message=name, extra=extra), "", ""
    raw_times = entry.get("times")
    if raw_times is None:
        raw_times = [time_value]
    elif time_value is not None and _kt_seconds(time_value, KT_TIME_S[1], KT_TIME_S[0]) is None:
        return None, "implausible times", f"time={time_value!r} ms"
    if not isinstance(raw_times, list) or not raw_times:
        return None, "implausible times", f"times={raw_times!r}"
    times = []
    for t in raw_times:
        seconds = _kt_seconds(t, KT_TIME_S[1], KT_TIME_S[0])
        if seconds is None:
            return None, "implausible times", f"time={t!r} ms"
        times.append(seconds)
    return Result(config, Status.OK, compile_s, tuple(times), extra=extra), "", ""


def check_kt_cache(
    data: Mapping[str, Any],
    kernel: TunableKernel,
    source: str,
    *,
    space: Any | None = None,
    progress: Progress | None = None,
) -> tuple[list[Result], KtRefusals]:
    """The cache's entries as gtune results for ``kernel``'s parameters, and the entries
    refused, by reason (:class:`_EntryCheck`); a configuration given twice counts once.
    ``space`` (a :class:`~gtune.space.Space` of the device) checks the device's rules
    too."""
    check = _EntryCheck(kernel, list(data.get("tune_params_keys") or []), source, space)
    refused = KtRefusals()
    results: list[Result] = []
    seen: set[str] = set()
    cache: Mapping[str, Any] = data["cache"]
    total = len(cache)
    for n, (entry_key, entry) in enumerate(cache.items(), 1):
        if progress is not None and n % 5000 == 0:
            progress("checking", n, total)
        if not isinstance(entry, dict):
            refused.add("entries that are not objects", entry_key, type(entry).__name__)
            continue
        config, reason, detail = check.config(entry)
        if config is None:
            refused.add(reason, entry_key, detail)
            continue
        spelled = ",".join(str(entry[k]) for k in check.keys)
        if check.keys and spelled != str(entry_key):
            refused.add("keys that do not spell their values", entry_key, f"values {spelled}")
            continue
        bad = check.invalid(config)
        if bad is not None:
            refused.add(bad[0], entry_key, bad[1])
            continue
        canon = canonical_config(config)
        if canon in seen:
            refused.add("configurations given twice", entry_key, canon)
            continue
        result, reason, detail = _kt_result(entry, config)
        if result is None:
            refused.add(reason, entry_key, detail)
            continue
        seen.add(canon)
        results.append(result)
    if progress is not None:
        progress("checking", total, total)
    return results, refused


def import_kt(
    path: Path,
    kernel: TunableKernel,
    store: ResultStore,
    device: str,
    *,
    space: Any | None = None,
    progress: Progress | None = None,
    data: Mapping[str, Any] | None = None,
) -> KtImport:
    """Add a cache file's valid entries to ``store`` (in batches, one transaction each);
    what was added, already there and refused (:func:`check_kt_cache`). ``data``: the
    file as :func:`read_kt_cache` read it already."""
    if data is None:
        data = read_kt_cache(path)
    results, refused = check_kt_cache(data, kernel, str(path), space=space, progress=progress)
    kernel_id = kernel.identity()
    have = {canonical_config(r.config) for r in store.results(device=device, kernel_id=kernel_id)}
    new = [r for r in results if canonical_config(r.config) not in have]
    kept = len(results) - len(new)
    added = 0
    problem = dict(kernel.sizes)
    add_many = getattr(store, "add_many", None)
    for i in range(0, len(new), KT_BATCH):
        batch = new[i : i + KT_BATCH]
        if add_many is not None:
            added += int(
                add_many(
                    batch,
                    device=device,
                    kernel_id=kernel_id,
                    kernel_name=kernel.store_name,
                    problem=problem,
                )
            )
        else:
            for r in batch:
                stored = store.add(
                    r,
                    device=device,
                    kernel_id=kernel_id,
                    kernel_name=kernel.store_name,
                    problem=problem,
                )
                added += 1 if stored else 0
        if progress is not None:
            progress("storing", i + len(batch), len(new))
    return KtImport(
        entries=len(data["cache"]),
        added=added,
        kept=kept + len(new) - added,
        refused=refused,
        limits=space is not None,
    )
