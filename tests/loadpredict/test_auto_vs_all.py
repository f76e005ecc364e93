"""benchmarks/predict/auto_vs_all.py's bookkeeping, without a device: kernels dealt to
processes (one per GPU) without overlap, done kernels skipped, and the report's regret
and wall-time share computed from the kernel files."""

from __future__ import annotations

import json
import math
from pathlib import Path

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
