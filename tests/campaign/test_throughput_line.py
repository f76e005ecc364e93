"""`gtune campaign`'s closing line: configurations per second of searching, the
workers' start told apart (pure: a campaign's result as plain data)."""

from __future__ import annotations

from pathlib import Path

from gtune.api import CampaignResult
from gtune.commands.campaign import throughput


def test_the_start_is_told_apart_from_the_searching(tmp_path: Path) -> None:
    rows = [
        {"measured": 60, "worker": "tcp://a", "wall_s": 20.0},
        {"measured": 40, "worker": "tcp://b", "wall_s": 20.0},
    ]
    started = CampaignResult(summaries=rows, out_dir=tmp_path, wall_s=30.0, start_s=5.0)
    line = throughput(started)
    assert line.startswith("100 configurations measured in 30 s (5 s starting the workers)")
    assert "4.0/s of searching on 2 worker(s)" in line and "2.5/s per busy worker" in line
    # a result without a recorded start (an in-process campaign): over its wall time
    plain = CampaignResult(summaries=rows, out_dir=tmp_path, wall_s=25.0)
    assert "100 configurations measured in 25 s: 4.0/s on 2 worker(s)" in throughput(plain)
    assert throughput(CampaignResult(out_dir=tmp_path, wall_s=3.0)) == ""
