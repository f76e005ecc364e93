"""``tests/durations.json`` names every test file (but a candidate template's): under
``--shard`` a file with no recorded seconds makes every share collect, import and
rewrite every test module (``pytest_ignore_collect`` in conftest.py steps aside), some
ten seconds of CPU a share, and shares the new file out by its markers' guesses."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_test_file_has_recorded_seconds() -> None:
    recorded = json.loads((ROOT / "tests" / "durations.json").read_text())["files"]
    files = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("test_*.py")
        if not p.name.endswith("_candidate.py")
    }
    missing = sorted(files - set(recorded))
    assert not missing, (
        f"no recorded seconds for {missing}: run them with --record-durations "
        "tests/durations.json (a CI-like run: GTUNE_TEST_JOBS=3), or add an estimate"
    )
    gone = sorted(set(recorded) - files)
    assert not gone, f"tests/durations.json names files that are gone: {gone}"
    assert all(isinstance(v, int | float) and v >= 0 for v in recorded.values())
