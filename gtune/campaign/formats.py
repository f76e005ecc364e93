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
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gtune.exceptions import InputError
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


def _kt_ms(value: Any, what: str, where: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected milliseconds, got {value!r}", source=where) from None
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{what}: expected milliseconds, got {value!r}", source=where)
    return v / 1000.0


def read_kt_cache(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", source=path) from None
    text = text.strip()
    # Kernel Tuner leaves a cache of an unfinished run without its closing braces.
    if text.endswith(","):
        text = text[:-1] + "}}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a Kernel Tuner cache file: {exc}", source=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("cache"), dict):
        raise InputError("not a Kernel Tuner cache file (no cache: mapping)", source=path)
    return data


def kt_results(data: Mapping[str, Any], kernel: TunableKernel, source: str) -> list[Result]:
    """Kernel Tuner cache entries as gtune results for ``kernel``'s parameters."""
    keys = list(data.get("tune_params_keys") or [])
    known = set(kernel.parameter_names)
    unknown = [k for k in keys if k not in known]
    if unknown:
        raise InputError(
            f"the cache tunes {', '.join(unknown)}, which {kernel.label} does not declare",
            source=source,
        )
    defaults = kernel.default_config()
    results: list[Result] = []
    for entry_key, entry in data["cache"].items():
        where = f"{source}: cache[{entry_key!r}]"
        if not isinstance(entry, dict):
            raise InputError("expected an object", source=where)
        try:
            config = {k: int(entry[k]) for k in keys}
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"bad parameter value: {exc}", source=where) from None
        for p in kernel.parameter_names:
            if p not in config and defaults is not None:
                config[p] = int(defaults[p])
        time_value = entry.get("time")
        compile_s = _kt_ms(entry.get("compile_time") or 0.0, "compile_time", where)
        extra = {
            "imported_from": "kernel_tuner",
            "verify_s": _kt_ms(entry.get("verification_time") or 0.0, "verification_time", where),
            "search_s": _kt_ms(entry.get("strategy_time") or 0.0, "strategy_time", where),
            "framework_s": _kt_ms(entry.get("framework_time") or 0.0, "framework_time", where),
        }
        error = entry.get("__error__")
        if error is not None or isinstance(time_value, str):
            name = str(error if error is not None else time_value)
            key = "__error__" if error is not None else "time"
            status = KT_INVALID.get(name)
            if status is None:
                raise InputError(
                    f"{key}: unknown Kernel Tuner error {name!r}; expected one of "
                    f"{', '.join(KT_INVALID)}",
                    source=where,
                )
            results.append(Result(config, status, compile_s, message=name, extra=extra))
            continue
        raw_times = entry.get("times") or [time_value]
        times = tuple(_kt_ms(t, "times", where) for t in raw_times)
        results.append(Result(config, Status.OK, compile_s, times, extra=extra))
    return results


def import_kt(
    path: Path, kernel: TunableKernel, store: ResultStore, device: str
) -> tuple[int, int]:
    """Add a cache file's entries to ``store``; returns (added, already there)."""
    data = read_kt_cache(path)
    kernel_id = kernel.identity()
    have = {canonical_config(r.config) for r in store.results(device=device, kernel_id=kernel_id)}
    added = kept = 0
    for r in kt_results(data, kernel, str(path)):
        if canonical_config(r.config) in have:
            kept += 1
            continue
        if store.add(
            r,
            device=device,
            kernel_id=kernel_id,
            kernel_name=kernel.store_name,
            problem=dict(kernel.sizes),
        ):
            added += 1
        else:
            kept += 1
    return added, kept
