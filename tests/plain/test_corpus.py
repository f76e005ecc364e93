"""The plain-kernel corpus, tuned for real on OpenCL: correct kernels verify, and the
deliberately wrong variant of each is caught (wrong_result, or refused as unverified),
never reported as a verified best."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gtune.api import tune
from gtune.budget import Budget
from gtune.measure import Status
from gtune.plain import plain_kernel
from gtune.tuning import ConfirmPolicy, TuningReport
from tests.inprocess import Cli

# the tests' evaluators share the module's worker processes (a fresh interpreter, pyopencl
# and a driver context per kernel otherwise); the CLI tests start their own
pytestmark = [pytest.mark.opencl, pytest.mark.usefixtures("shared_workers")]

CORPUS = Path(__file__).parents[1] / "data" / "corpus"
REF = str(CORPUS / "corpus_ref.py")

# name -> (plain_kernel keyword arguments, how the wrong variant is caught)
CASES: dict[str, tuple[dict[str, Any], str]] = {
    "grad_two": (
        {"sizes": [48, 32], "scalars": {"inv2h": "0.5"}, "reference": f"{REF}:gradient"},
        "wrong_result",
    ),
    "blur_u8": ({"sizes": [48, 32], "reference": f"{REF}:blur_u8"}, "wrong_result"),
    "hotspot_tile": (
        {
            "sizes": [64, 48],
            "params": {"WX": [8, 16, 32], "BLOCK_SIZE": "WX"},
            "local_size": ["WX", "WX"],
            "global_size": ["(NX + (WX - 2) - 1) / (WX - 2) * WX", "(NY + WX - 3) / (WX - 2) * WX"],
            "scalars": {
                "grid_cols": "NX",
                "grid_rows": "NY",
                "Cap": "0.5",
                "Rx": "0.8",
                "Ry": "0.7",
                "Rz": "4.0",
                "step": "0.01",
            },
            "default": {"WX": 16},
            "reference": f"{REF}:hotspot",
        },
        "wrong_result",
    ),
    "jacobi_nonconst": ({"sizes": [32, 16]}, "unverified"),
    "blur_block": (
        {
            "sizes": [128, 8],
            "params": {"block_size_x": "WX", "block_size_y": "WY"},
            "default": {"WX": 16, "WY": 1},
        },
        "wrong_result",
    ),
    "laplace_typedef": (
        {"sizes": [30, 20], "global_size": ["(NX + WX - 1) / WX * WX", "(NY + WY - 1) / WY * WY"]},
        "unverified",
    ),
    "weights_constant": ({"sizes": [32, 16], "reference": f"{REF}:weighted"}, "wrong_result"),
    "blur_padded": (
        {"sizes": [32, 16], "arrays": {"in": ["NX+2", "NY+2"]}, "reference": f"{REF}:blur_padded"},
        "wrong_result",
    ),
    "heat_march": (
        {"sizes": [16, 16, 8], "global_size": ["NX", "NY"], "scalars": {"alpha": "1/8"}},
        "unverified",
    ),
    "box_int": ({"sizes": [32, 16], "reference": f"{REF}:box"}, "wrong_result"),
    "blur_float4": (
        {
            "sizes": [64, 16],
            "global_size": ["NX / 4", "NY"],
            "scalars": {"w4": "NX / 4", "h": "NY"},
            "reference": f"{REF}:blur_rows",
        },
        "wrong_result",
    ),
}


@pytest.fixture(scope="module")
def device():
    from gtune.measure import select_device

    return select_device(None)


# The confirmation round in one round, no extra ones: its further rounds only make the
# medians robust to noise on the machine, and no test here reads the times; one round
# still confirms the candidates as a search does (the commands' tests below confirm
# with gtune run's defaults).
CONFIRM = ConfirmPolicy(rounds=1, extra_rounds=0)


def _tune(path: Path, kwargs: Mapping[str, Any], device: Any, budget: str = "4") -> TuningReport:
    """Tuned with a budget of 4 by default: besides the default (the reference), a
    few configurations to verify, what every check below reads."""
    kernel = plain_kernel(path, **kwargs)
    return tune(
        kernel,
        device=device,
        budget=Budget.parse(budget),
        store="sqlite://",
        compile_workers=0,
        runs=1,
        confirm=CONFIRM,
    )


def _results(report: TuningReport) -> list[Any]:
    return [e.result for run in report.runs for e in run.outcome.trace]


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_kernel_verifies(name: str, device):
    kwargs, _ = CASES[name]
    report = _tune(CORPUS / f"{name}.cl", kwargs, device)
    results = _results(report)
    assert report.best_result is not None, report.notes
    # verified, but for the reference configuration's own results (the others' yardstick)
    unverified = [r for r in results if r.extra.get("unverified")]
    assert all("the reference configuration" in str(r.extra["unverified"]) for r in unverified)
    assert len({tuple(sorted(r.config.items())) for r in unverified}) <= 1
    assert len(unverified) < len(results)
    assert all(r.status is Status.OK for r in results), [r.message for r in results]
    if "default" in kwargs:
        assert report.default_config == kwargs["default"] and report.speedup is not None


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_wrong_variant_is_caught(name: str, device):
    """Every result of a wrong variant is caught (a budget of 3 shows it as 6 would);
    blur_block, wrong only away from its hard-coded block, takes 6 to see both kinds."""
    kwargs, caught = CASES[name]
    budget = "6" if name == "blur_block" else "3"
    report = _tune(CORPUS / f"{name}_wrong.cl", kwargs, device, budget)
    results = _results(report)
    best = report.best_result
    if caught == "unverified":
        assert results and all(r.extra.get("unverified") for r in results)
        assert best is None or best.extra.get("unverified")
    elif name == "blur_block":
        # a hard-coded block of 16 is right only at WX=16 (or with a single work-group)
        wrong = [r for r in results if r.status is Status.WRONG_RESULT]
        assert wrong and all(r.config["WX"] not in (16, 128) for r in wrong)
        assert best is not None and best.config["WX"] in (16, 128)
    else:
        assert results and all(r.status is Status.WRONG_RESULT for r in results)
        assert best is None


def test_cli_run_shows_inferences_and_unverified(tmp_path: Path, gtune_here: Cli) -> None:
    out = tmp_path / "r.json"
    args = ["--size", "32x16", "--budget", "4", "--runs", "1", "--json", str(out)]
    proc = gtune_here("run", str(CORPUS / "jacobi_nonconst_wrong.cl"), *args, db=tmp_path / "r.db")
    assert proc.returncode == 0, proc.stderr
    assert "inferred: out: input: only read" in proc.stderr
    assert "UNVERIFIED" in proc.stdout and "nothing to compare" in proc.stdout
    assert "nothing to compare" in json.loads(out.read_text())["unverified"]


def test_cli_measure_accepts_plain_kernels(tmp_path: Path, gtune_here: Cli) -> None:
    kernel = str(CORPUS / "blur_block.cl")
    ties = ["--param", "block_size_x=WX", "--param", "block_size_y=WY"]
    proc = gtune_here(
        "measure",
        kernel,
        "--size",
        "64x8",
        *ties,
        "--config",
        "WX=32",
        "--json",
        db=tmp_path / "r.db",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "ok" and data["config"] == {"WX": 32, "WY": 1}
    assert "inferred: work-group" in proc.stderr


# Kernels wrong only for some parameter values: name -> (flags, when a config is wrong,
# the parameters the code of a right configuration depends on: None for all of them)
PARTLY: dict[str, tuple[dict[str, Any], Any, tuple[str, ...] | None]] = {
    "smooth_vec": (
        {
            "sizes": [24, 20],  # 27 configurations, 6 of them at VW = 4
            "params": {"VW": [1, 2, 4]},
            "global_size": ["NX / VW", "NY"],
            "scalars": {"debug": "0"},
            "default": {"WX": 4, "WY": 2, "VW": 1},
        },
        lambda c: c["VW"] == 4,
        ("VW",),  # WX and WY are only the work-group's shape
    ),
    "tile_square": (
        {
            "sizes": [48, 44],
            "params": {"TS": "WX", "WPT": [1, 2, 4, 8]},
            "local_size": ["WX", "WX"],
            "global_size": ["NX", "(NY+WPT-1)/WPT"],
            "default": {"WX": 4, "WPT": 1},
        },
        lambda c: c["WPT"] > 1,
        None,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PARTLY))
def test_partly_wrong_variants_are_caught_at_every_wrong_configuration(name: str, device):
    """Every wrong configuration of the space is caught. Of the right ones, where their
    code depends on a few parameters only (smooth_vec: VW; its WX and WY shape the
    work-group, not the code), one per value of those runs: the right code is the
    correct variant's, which the tuning above verifies too."""
    from gtune.measure import OpenCLEvaluator
    from gtune.tuning import build_space

    flags, wrong_at, right_by = PARTLY[name]
    report = _tune(CORPUS / f"{name}.cl", flags, device)
    assert report.best_result is not None and report.speedup is not None
    assert all(r.status is Status.OK for r in _results(report))
    assert (report.verification or "").startswith("verified against the default configuration")
    kernel = plain_kernel(CORPUS / f"{name}_wrong.cl", **flags)
    configs = list(build_space(kernel, device).enumerate())
    assert any(wrong_at(c) for c in configs) and not all(wrong_at(c) for c in configs)
    if right_by is not None:
        right = {tuple(c[p] for p in right_by): c for c in configs if not wrong_at(c)}
        configs = [c for c in configs if wrong_at(c)] + list(right.values())
    with OpenCLEvaluator(kernel, device, runs=1, compile_workers=0) as ev:
        for config in configs:
            result = ev.evaluate(config)
            expected = Status.WRONG_RESULT if wrong_at(config) else Status.OK
            assert result.status is expected, (config, result.message)


def test_cli_run_counts_wrong_results_and_names_the_verification(
    tmp_path: Path, gtune_here: Cli
) -> None:
    out = tmp_path / "r.json"
    flags = ["--param", "block_size_x=WX", "--param", "block_size_y=WY", "--default", "WX=16,WY=1"]
    proc = gtune_here(
        "run",
        str(CORPUS / "blur_block_wrong.cl"),
        "--size",
        "128x8",
        *flags,
        "--budget",
        "6",
        "--runs",
        "1",
        "--json",
        str(out),
        db=tmp_path / "r.db",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    statuses = data["statuses"]
    assert sum(statuses.values()) == data["evaluations"] and statuses.get("wrong_result")
    assert "wrong_result" in proc.stdout and "outcomes" in proc.stdout
    assert data["verification"] == (
        "verified against the default configuration's output (WX=16 WY=1): output"
    )
    most = 2 * (data["evaluations"] - statuses.get("ok", 0)) > data["evaluations"]
    assert any(n.startswith("most configurations failed") for n in data["notes"]) == most
    assert "if every array is read or written whole" in proc.stdout
