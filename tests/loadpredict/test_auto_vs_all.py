"""benchmarks/predict/auto_vs_all.py's bookkeeping, without a device: kernels dealt to
processes (one per GPU) without overlap, done kernels skipped, and the report's regret
and wall-time share computed from the kernel files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
avsa = load_script(ROOT / "benchmarks" / "predict" / "auto_vs_all.py")
SPECS = [
    "stencils/heat3d.stencil.yaml@32x32x32",
    "stencils/box27.stencil.yaml@32x32x32",
    "stencils/jacobi2d.stencil.yaml@64x64",
]


def arm(wall: float, technique: str) -> dict[str, object]:
    return {"wall_s": wall, "technique": technique, "searched": [technique], "config": {"WX": 8}}


def test_shares_are_disjoint_cover_the_undone_and_skip_the_done(tmp_path: Path) -> None:
    specs = [str(ROOT / s) for s in SPECS]
    names = [avsa.load(s)[0] for s in specs]
    done = {"auto": arm(1, "vec"), "all": arm(2, "vec"), "remeasured": {"auto_s": 1, "all_s": 1}}
    avsa.write_entry(avsa.kernel_file(tmp_path, names[1]), done)
    avsa.write_entry(avsa.kernel_file(tmp_path, names[2]), {"auto": arm(1, "vec")})  # half
    shares = [avsa.share(tmp_path, specs, f"{k}/2") for k in (1, 2)]
    assert set(shares[0]).isdisjoint(shares[1])
    assert set(shares[0]) | set(shares[1]) == {names[0], names[2]}


def test_report_regret_and_wall_share_from_the_kernel_files(tmp_path: Path) -> None:
    entries = {
        "a@8x8": (arm(30, "vec"), arm(100, "vec"), 1.0e-4, 1.0e-4),
        "b@8x8": (arm(60, "vec"), arm(120, "stream"), 1.1e-4, 1.0e-4),
        "c@8x8": (arm(10, "vec"), arm(20, "vec"), None, None),  # not re-measured yet
    }
    for name, (auto, every, ta, tb) in entries.items():
        entry: dict[str, object] = {"auto": auto, "all": every}
        if ta is not None:
            entry["remeasured"] = {"auto_s": ta, "all_s": tb}
        avsa.write_entry(avsa.kernel_file(tmp_path, name), entry)
    lines = avsa.report(tmp_path)
    rows = json.loads((tmp_path / "auto_vs_all.json").read_text())
    assert set(rows) == {"a@8x8", "b@8x8"}
    assert math.isclose(rows["b@8x8"]["regret"], 1.1)
    assert math.isclose(rows["a@8x8"]["wall_share"], 0.3)
    summary = lines[-1]
    assert f"geometric mean {math.sqrt(1.1):.4f}" in summary and "worst 1.100" in summary
    assert "(1 above 1.05)" in summary and "total 90 / 220 s" in summary
    assert (tmp_path / "auto_vs_all.md").read_text().count("| a@8x8 |") == 1


def test_a_tuning_starts_only_if_the_longest_of_its_arm_would_end_in_time(
    tmp_path: Path,
) -> None:
    assert avsa.longest(tmp_path, "all") == 0.0
    avsa.write_entry(avsa.kernel_file(tmp_path, "a@8x8"), {"all": arm(250, "vec")})
    avsa.write_entry(avsa.kernel_file(tmp_path, "b@8x8"), {"all": arm(90, "vec")})
    assert avsa.longest(tmp_path, "all") == 250 and avsa.longest(tmp_path, "auto") == 0.0


class _H200:
    """The shipped H200 model's device, as a card matches it (vendor, name, type)."""

    vendor, name, type = "NVIDIA Corporation", "NVIDIA H200", "GPU"


def test_holdout_refits_the_shipped_model_without_the_family(tmp_path: Path) -> None:
    """The real stencils and the lifted corpus are held out of the model that picks
    their technique: each family's model folder has the shipped dataset less its rows,
    and installed for a block (GTUNE_MODELS) it is the model found for the device."""
    import os

    from gtune.loadpredict.dataset import Dataset
    from gtune.loadpredict.models import find_model

    assert avsa.family_of("stencils/heat3d.stencil.yaml@512x512x512") == "real"
    assert avsa.family_of("benchmarks/predict/corpus/lifted_star7.stencil.yaml@8x8x8") == "lifted"
    shipped = find_model(_H200(), "hybrid")
    assert shipped is not None and shipped.path is not None
    every = Dataset.read_csv(shipped.path.parent / shipped.dataset).rows
    for family in ("real", "lifted"):
        folder = avsa.holdout_model(tmp_path, family, _H200())
        rows = Dataset.read_csv(folder / shipped.dataset).rows
        left = {r.kernel for r in every} - {r.kernel for r in rows}
        assert left and all("@" in k for k in left)  # sized kernels only, never the suite
        assert not any(avsa.SUITE.match(k.split("@")[0]) for k in left)  # flat suite rows stay
        assert all(k.startswith("lifted_") == (family == "lifted") for k in left)
        before = os.environ.get("GTUNE_MODELS")
        with avsa.environ("GTUNE_MODELS", str(folder)):
            card = find_model(_H200(), "hybrid")
            assert card is not None and card.path == folder / f"{card.name}.model.json"
            assert f"without the {family} family" in card.source
        assert os.environ.get("GTUNE_MODELS") == before


def test_only_the_arms_asked_for_are_tuned(tmp_path: Path, monkeypatch) -> None:
    """``--arms all`` tunes the reference alone; the auto arm is left for later."""
    asked: list[str] = []

    def fake(kernel: object, device: object, technique: str) -> dict[str, object]:
        asked.append(technique)
        return {**arm(1, technique), "tuned_s": 1e-4}

    monkeypatch.setattr(avsa, "tuned", fake)
    avsa.tune_arms(tmp_path, {"a@8x8": object(), "b@8x8": object()}, None, math.inf, None, ("all",))
    files = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "kernels").glob("*.json")}
    assert {k: sorted(v) for k, v in files.items()} == {"a_at_8x8": ["all"], "b_at_8x8": ["all"]}
    assert asked == ["all", "all"]


def test_a_retired_arm_is_kept_aside_and_measured_again(tmp_path: Path) -> None:
    """After a change of policy, `--retire auto:SUFFIX` keeps the old auto arm and its
    re-measured pair under new names, and the kernel is dealt out again."""
    spec = str(ROOT / SPECS[0])
    name = avsa.load(spec)[0]
    path = avsa.kernel_file(tmp_path, name)
    old = {"auto": arm(1, "vec"), "all": arm(2, "vec"), "remeasured": {"auto_s": 1, "all_s": 1}}
    avsa.write_entry(path, old)
    assert avsa.share(tmp_path, [spec], "1/1") == {}
    assert avsa.main([str(tmp_path), "--retire", "auto:before_x"]) == 0
    entry = avsa.read_entry(path)
    assert entry["auto_before_x"] == old["auto"] and entry["all"] == old["all"]
    assert entry["remeasured_before_x"] == old["remeasured"]
    assert "auto" not in entry and "remeasured" not in entry
    assert set(avsa.share(tmp_path, [spec], "1/1")) == {name}
    # the same suffix twice would lose the first: refused
    avsa.write_entry(path, {**entry, "auto": arm(1, "vec")})
    with pytest.raises(SystemExit, match="exists already"):
        avsa.main([str(tmp_path), "--retire", "auto:before_x"])


def test_row_family_keeps_suite_rows_at_any_size_in_no_family() -> None:
    """Suite kernels are named with their size at any size but 256^3: they stay in every
    held-out model (a flat suite row is not a real stencil)."""
    assert avsa.row_family("dense_3d_xyz_r1") is None
    assert avsa.row_family("dense_3d_xyz_r1@1024x1024x32") is None
    assert avsa.row_family("thumbtack_3d_z_r1@1024x1024x32") is None
    assert avsa.row_family("heat3d@512x512x512") == "real"
    assert avsa.row_family("lifted_star7@512x512x512") == "lifted"


def test_picks_same_compares_techniques_scout_and_its_length() -> None:
    """picks.py: an earlier arm stands for a refitted model only where the choice is the
    same: first technique, scout, and the scout's estimated length within 15 %."""
    from gtune.loadpredict.policy import TechniqueChoice

    picks = load_script(ROOT / "benchmarks" / "predict" / "picks.py")

    def choice(first: str, scout: str | None, length: float | None) -> TechniqueChoice:
        return TechniqueChoice(
            [first],
            "",
            predicted=first,
            probability=0.9,
            scout=scout,
            scout_share=0.2 if scout else 0.0,
            scout_length=length,
        )

    assert picks.same(choice("vec", "stream", 0.22), choice("vec", "stream", 0.21))
    assert not picks.same(choice("vec", "stream", 0.22), choice("vec", "stream", 0.30))
    assert not picks.same(choice("vec", "stream", 0.22), choice("stream", "vec", 3.5))
    assert not picks.same(choice("vec", "stream", 0.22), choice("vec", None, None))
