"""Kernel Tuner interop for real on PoCL: a Kernel Tuner 1.5 cache (failed configurations
as ``__error__`` entries) imports under the device's own identity and warm-starts a later
``gtune run`` on that device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.inprocess import Cli

pytestmark = [pytest.mark.opencl, pytest.mark.slow]

HEAT = str(ROOT / "stencils" / "heat3d.cl")
RUN = ["run", HEAT, "--size", "16x16x8", "--technique", "global", "--budget", "8", "--no-confirm"]


def _kt_cache(rows: list[dict[str, object]], device_name: str) -> dict[str, object]:
    """Measurements gtune made, written the way Kernel Tuner 1.5 writes its cache."""
    keys = sorted(rows[0]["config"])  # type: ignore[call-overload]
    cache: dict[str, object] = {}
    for r in rows:
        config = dict(r["config"])  # type: ignore[call-overload]
        entry: dict[str, object] = {
            **config,
            "compile_time": float(r["compile_s"]) * 1000,  # type: ignore[arg-type]
            "verification_time": 0,
            "benchmark_time": 0,
            "strategy_time": 0,
            "framework_time": 0,
            "timestamp": "2026-11-25 12:00:00.000000+00:00",
        }
        if r["status"] == "ok":
            times = [t * 1000 for t in r["times_s"]]  # type: ignore[attr-defined]
            entry.update(time=sorted(times)[len(times) // 2], times=times)
        else:
            entry["__error__"] = "RuntimeFailedConfig"
        cache[",".join(str(config[k]) for k in keys)] = entry
    # a configuration Kernel Tuner could not compile: no time at all
    last = list(cache)[-1]
    broken = {k: v for k, v in cache[last].items() if k not in ("time", "times")}  # type: ignore[attr-defined]
    cache[last] = {**broken, "__error__": "CompilationFailedConfig", "compile_time": 12.5}
    return {
        "schema_version": "1.2.0",
        "device_name": device_name,
        "kernel_name": "stencil",
        "problem_size": [16, 16, 8],
        "tune_params_keys": keys,
        "tune_params": {k: sorted({int(r["config"][k]) for r in rows}) for k in keys},  # type: ignore[index]
        "objective": "time",
        "cache": cache,
    }


def test_a_kernel_tuner_15_cache_warm_starts_a_run_on_the_same_device(
    tmp_path: Path, gtune_here: Cli
) -> None:
    devices = json.loads(gtune_here("devices", "--json").stdout)["devices"]
    first_db, second_db = tmp_path / "first.db", tmp_path / "second.db"
    first = gtune_here(*RUN, "--json", str(tmp_path / "first.json"), db=first_db)
    assert first.returncode == 0, first.stderr
    report = json.loads((tmp_path / "first.json").read_text())
    device = next(d for d in devices if d["identity"] == report["device_identity"])
    rows = json.loads(gtune_here("results", "--format", "json", db=first_db).stdout)["results"]
    cache = tmp_path / "kt_cache.json"
    cache.write_text(json.dumps(_kt_cache(rows, device["name"]), indent=1))

    imported = gtune_here(
        "import-kt", str(cache), "--kernel", HEAT, "--size", "16x16x8", db=second_db
    )
    assert imported.returncode == 0, imported.stderr
    assert f"on {device['identity']}" in imported.stderr and "note" not in imported.stderr
    assert "0 refused" in imported.stderr and "unchecked" not in imported.stderr
    stored = json.loads(gtune_here("results", "--format", "json", db=second_db).stdout)["results"]
    assert {r["device"] for r in stored} == {device["identity"]}
    assert any(r["status"] == "build_failed" for r in stored)

    second = gtune_here(*RUN, "--json", str(tmp_path / "second.json"), db=second_db)
    assert second.returncode == 0, second.stderr
    again = json.loads((tmp_path / "second.json").read_text())
    assert again["reused"] > 0 and again["measured"] < report["measured"]
