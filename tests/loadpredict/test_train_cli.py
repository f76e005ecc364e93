"""``gtune train`` and ``gtune models`` end to end on the real default OpenCL device."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gtune.loadpredict import Dataset
from tests.inprocess import Cli

pytestmark = [pytest.mark.opencl, pytest.mark.slow]

# two small suite kernels, three techniques, four configurations each; the compile
# helpers gtune's default (none where one would be all: on a CPU device a single
# helper is measured alone, its builds overlapping nothing, one more process to start)
TINY = [
    "train",
    "--suite",
    "garvey104",
    "--kernels",
    "star_3d_xyz_r1,dense_1d_x_r1",
    "--no-real",
    "--sizes",
    "16x16x16",
    "--budget",
    "4",
    "--name",
    "tiny",
    "--techniques",
    "global,local,vec",
]


def _stale(csv_path: Path, kernel: str) -> None:
    """Make ``kernel``'s row look labelled on another version of the kernel."""
    rows = Dataset.read_csv(csv_path).rows
    Dataset([replace(r, identity="0" * 16) if r.kernel == kernel else r for r in rows]).write_csv(
        csv_path
    )


def test_train_rejects_bad_flags_with_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process (gtune.cli.main, what the program runs; as tests/test_hardening.py
    does): each refusal is the command line's own, with no interpreter to start."""
    from gtune.cli import main

    for bad in (
        ["--sizes", "16x16"],
        ["--budget", "nans"],
        ["--kernels", "no_such_kernel"],
        ["--kernels", "star_3d_xyz_r1", "--techniques", "global,warp"],
        ["--kernels", "star_3d_xyz_r1", "--techniques", "global"],
        ["--kernels", "star_3d_xyz_r1", "--deepen", "50"],  # the first search unbounded
        ["--kernels", "star_3d_xyz_r1", "--budget", "60s", "--deepen", "50"],
        ["--kernels", "star_3d_xyz_r1", "--budget", "50", "--deepen", "50"],
        ["--kernels", "star_3d_xyz_r1", "--budget", "5", "--deepen", "50", "--deepen-margin", "0"],
    ):
        db, out = str(tmp_path / "x.db"), str(tmp_path / "o")
        code = main(["--db", db, "train", "--suite", "garvey104", "--out", out, *bad])
        err = capsys.readouterr().err
        assert code == 2, (bad, err)
        assert "Traceback" not in err and "gtune: error" in err


def test_train_labels_on_workers_and_in_process_resumes_and_installs(
    tmp_path: Path, gtune_here: Cli
) -> None:
    """Each technique's search a task on one of two local workers: the dataset has the
    rows an in-process collection makes, from the same searches, and a second call
    finds everything done. In this process, on the same store, the collection labels
    the same rows, installs its model, keeps a row of another version of its kernel
    unless told to label it again, and searches deeper where labels are close calls.

    (One test: the in-process collection's first run measured the same searches the
    workers measure here; in-process measuring is covered by its deeper searches below
    and by test_a_time_limit_before_any_label_keeps_the_measurements_and_says_so.)"""
    db, models = tmp_path / "t.db", tmp_path / "models"
    env = {"GTUNE_MODELS": str(models)}
    common = TINY
    spread = gtune_here(*common, "--out", str(tmp_path / "a"), "--workers-per-device", "2", db=db)
    assert spread.returncode == 0, spread.stderr
    assert "configurations measured in" in spread.stderr  # where the time went
    pieces = [
        json.loads(line)
        for line in (tmp_path / "a" / "collect" / "tasks.jsonl").read_text().splitlines()
    ]
    assert len(pieces) == 6 and len({p["worker"] for p in pieces}) == 2
    cluster_rows = Dataset.read_csv(tmp_path / "a" / "tiny.csv").rows
    assert sorted(r.kernel for r in cluster_rows) == ["dense_1d_x_r1", "star_3d_xyz_r1"]
    # in this process, on the same store: the same searches, every result served
    installed = [*common, "--out", str(tmp_path / "b"), "--install"]
    local = gtune_here(*installed, db=db, env_extra=env)
    assert local.returncode == 0, local.stderr
    assert "configurations measured" not in local.stderr
    local_rows = Dataset.read_csv(tmp_path / "b" / "tiny.csv").rows
    assert {(r.kernel, r.label) for r in local_rows} == {(r.kernel, r.label) for r in cluster_rows}
    for a, b in zip(
        sorted(cluster_rows, key=lambda r: r.kernel),
        sorted(local_rows, key=lambda r: r.kernel),
        strict=True,
    ):
        assert a.times == b.times
    for row in local_rows:
        searched = {t for t, v in row.times.items() if v == v and v < float("inf")}
        assert {"global", "local"} <= searched <= {"global", "local", "vec"}
        assert row.label in searched
        # the budget is per technique: every technique's search got its share
        assert max(row.configs.values()) >= 4
    cv = json.loads((tmp_path / "b" / "tiny.cv.json").read_text())
    assert cv["kernels"] == 2 and 0.0 <= cv["penalty_weighted_accuracy"] <= 1.0
    # each row names the kernel it was labelled on; a row of another version of its
    # kernel (here: made so by hand) is labelled again with --relabel-changed only
    assert all(len(r.identity) == 16 for r in local_rows)
    _stale(tmp_path / "b" / "tiny.csv", "star_3d_xyz_r1")
    # the installed model is kept unless --force, said before any labelling
    refused = gtune_here(*installed, db=db, env_extra=env)
    assert refused.returncode == 2 and "--force" in refused.stderr, refused.stderr
    assert (
        str(models / "tiny.csv") in refused.stderr
        and "labelling" not in refused.stdout + refused.stderr
    )
    installed.append("--force")
    kept = gtune_here(*installed, db=db, env_extra=env)
    assert kept.returncode == 0 and "labelled again" not in kept.stderr, kept.stderr
    assert "configurations measured" not in kept.stderr
    relabel = gtune_here(*installed, "--relabel-changed", db=db, env_extra=env)
    assert relabel.returncode == 0, relabel.stderr
    assert "labelled again (1: the kernel changed since its row): star_3d_xyz_r1" in " ".join(
        relabel.stderr.split()
    )
    assert "configurations measured" not in relabel.stderr  # the store serves the kernel
    assert Dataset.read_csv(tmp_path / "b" / "tiny.csv").rows == local_rows  # identity back
    listed = gtune_here("models", "--json", env_extra=env)
    assert listed.returncode == 0, listed.stderr
    assert "tiny" in [m["name"] for m in json.loads(listed.stdout)]
    again = gtune_here(*common, "--out", str(tmp_path / "a"), "--workers-per-device", "2", db=db)
    assert again.returncode == 0, again.stderr
    assert "configurations measured" not in again.stderr  # nothing left to measure
    assert Dataset.read_csv(tmp_path / "a" / "tiny.csv").rows == cluster_rows
    # a row of another version of its kernel, labelled again on the workers: the
    # ledger's searches recorded this version, so they are served, nothing measured
    _stale(tmp_path / "a" / "tiny.csv", "dense_1d_x_r1")
    relabel = gtune_here(
        *common, "--out", str(tmp_path / "a"), "--workers-per-device", "2", "--relabel-changed",
        db=db,
    )  # fmt: skip
    assert relabel.returncode == 0, relabel.stderr
    assert "labelled again (1" in relabel.stderr and "dense_1d_x_r1" in relabel.stderr
    assert "configurations measured" not in relabel.stderr
    assert Dataset.read_csv(tmp_path / "a" / "tiny.csv").rows == cluster_rows
    # a ledger entry that searched another version of its kernel is not served: with the
    # row gone and one entry's identity changed by hand, that search runs again
    ledger = tmp_path / "a" / "collect" / "tasks.jsonl"
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    stale = next(e for e in entries if e["label"] == "dense_1d_x_r1")
    stale["kernel_identity"] = "0" * 64
    ledger.write_text("".join(json.dumps(e) + "\n" for e in entries))
    Dataset([r for r in cluster_rows if r.kernel != "dense_1d_x_r1"]).write_csv(
        tmp_path / "a" / "tiny.csv"
    )
    # (one search to run: one worker, not a second one started to wait)
    rerun = gtune_here(*common, "--out", str(tmp_path / "a"), "--workers-per-device", "1", db=db)
    assert rerun.returncode == 0, rerun.stderr
    after = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [e["key"] for e in after[len(entries) :]] == [stale["key"]]
    assert after[-1]["kernel_identity"] == next(
        e["kernel_identity"] for e in entries if e["label"] == "dense_1d_x_r1" and e is not stale
    )
    assert Dataset.read_csv(tmp_path / "a" / "tiny.csv").rows == cluster_rows
    # every kernel a close call (margin 10: up to 11 times as slow): the two fastest
    # searched to 6 each, on the workers and in this process alike, the first 4 from
    # the store
    deeper = ["--deepen", "6", "--deepen-margin", "10"]
    spread = gtune_here(
        *common, *deeper, "--out", str(tmp_path / "a"), "--workers-per-device", "2", db=db
    )
    assert spread.returncode == 0, spread.stderr
    assert spread.stderr.count("searched deeper (6 each)") == 2
    deep_rows = {r.kernel: r for r in Dataset.read_csv(tmp_path / "a" / "tiny.csv").rows}
    for first in cluster_rows:
        row = deep_rows[first.kernel]
        pair = sorted(first.times, key=lambda t: first.times[t])[:2]
        assert row.deepened == 6
        for t in first.times:
            assert row.times[t] <= first.times[t]
            assert (
                row.configs[t] > first.configs[t]
                if t in pair
                else row.configs[t] == first.configs[t]
            )
    local = gtune_here(*common, *deeper, "--out", str(tmp_path / "b"), db=db)
    assert local.returncode == 0, local.stderr
    local_deep = {r.kernel: r for r in Dataset.read_csv(tmp_path / "b" / "tiny.csv").rows}
    assert {k: (r.times, r.deepened) for k, r in local_deep.items()} == {
        k: (r.times, r.deepened) for k, r in deep_rows.items()
    }
    again = gtune_here(*common, *deeper, "--out", str(tmp_path / "b"), db=db)
    assert again.returncode == 0 and "searched deeper" not in again.stderr, again.stderr


def test_a_time_limit_before_any_label_keeps_the_measurements_and_says_so(
    tmp_path: Path, gtune_here: Cli
) -> None:
    db, out = tmp_path / "t.db", tmp_path / "model"
    args = [
        "train",
        "--suite",
        "garvey104",
        "--kernels",
        "star_3d_xyz_r1",
        "--no-real",
        "--sizes",
        "32x32x32",
        "--budget",
        "400",
        "--compile-workers",
        "1",
        "--techniques",
        "global,local",
        "--max-minutes",
        "0.1",
        "--out",
        str(out),
    ]
    proc = gtune_here(*args, db=db)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "--max-minutes" in proc.stderr and "time limit ended" in proc.stderr
    # what the message promises: the measurements are in the store (on a loaded
    # machine the limit can end before the workers have measured anything: it says so)
    from gtune.store import open_store

    with open_store(db) as store:
        if "kept in the store" in proc.stderr:
            assert len(store.results()) > 0
        else:
            assert "no configuration had finished" in proc.stderr and not store.results()


def test_collect_script_refuses_a_store_of_another_device(tmp_path: Path) -> None:
    """benchmarks/predict/collect.sh grows one device's dataset: given a store directory
    whose dataset is another device's, it runs nothing and exits with 2."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    store = tmp_path / "store"
    store.mkdir()
    (store / "nvidia-h200-hybrid.csv").write_text("kernel\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    script = root / "benchmarks" / "predict" / "collect.sh"
    done = subprocess.run(
        ["bash", str(script), str(store), str(out), "0:0", "1"],
        capture_output=True, text=True, env=env, cwd=root, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "another device's dataset" in done.stderr and "nvidia-h200-hybrid.csv" in done.stderr
    assert "Traceback" not in done.stderr and not list(out.iterdir())
    bad = subprocess.run(
        ["bash", str(script), str(store), str(out), "no-such-device", "1"],
        capture_output=True, text=True, env=env, cwd=root, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "no OpenCL device matches" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.opencl
@pytest.mark.slow
def test_collect_script_packs_what_it_measured_when_stopped_early(tmp_path: Path) -> None:
    """A SIGTERM to collect.sh (a `timeout` shorter than its minutes) stops `gtune train`
    at once and still packs the store: the measurements made so far come back."""
    import os
    import signal
    import subprocess
    import sys
    import tarfile
    import time

    from gtune.store import open_store

    root = Path(__file__).resolve().parents[2]
    store = tmp_path / "store"
    store.mkdir()
    with gzip.open(store / "labels.db.gz", "wb"):
        pass  # an empty store: train creates its tables
    out = tmp_path / "out"
    out.mkdir()
    work = tmp_path / "work"  # collect.sh's working store lands here (mktemp -d)
    work.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "TMPDIR": str(work),
        # one kernel at 32^3 (the script's --sizes overridden: at its 256^3 this test
        # took 45 s on PoCL, 7 s so); its searches (budget 100 each) still run far
        # longer than the wait for the first measurement below
        "TRAIN_ARGS": "--kernels dense_1d_x_r1 --sizes 32x32x32",
    }
    script = root / "benchmarks" / "predict" / "collect.sh"
    proc = subprocess.Popen(
        ["bash", str(script), str(store), str(out), "0:0", "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root,
    )  # fmt: skip

    def measured_so_far() -> int:
        for db in work.glob("*/labels.db"):
            try:
                with open_store(db, readonly=True) as s:
                    return len(s.results())
            except Exception:  # created, not yet a store: nothing measured
                return 0
        return 0

    deadline = time.monotonic() + 180
    while measured_so_far() == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(1)
    before = measured_so_far()
    assert before > 0 and proc.poll() is None  # measuring, far from its 30 minutes
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert "stopped early; packing what was measured" in err, err
    packed = out / "collect.tar.gz"
    assert packed.exists(), err
    with tarfile.open(packed) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    log = (tmp_path / "unpacked" / "collect.log").read_text()
    assert "train exit status" in log and "train exit status 0" not in log
    parts = sorted(out.glob("labels.db.gz.part.*"))  # the store beside the tar, in parts
    assert parts, err
    joined = tmp_path / "labels.db.gz"
    joined.write_bytes(b"".join(part.read_bytes() for part in parts))
    db = tmp_path / "labels.db"
    with gzip.open(joined, "rb") as src:
        db.write_bytes(src.read())
    with open_store(db) as s:
        measured = len(s.results())
    assert measured >= before  # what train measured before the signal came back
