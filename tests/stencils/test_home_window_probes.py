"""Issue 49's memory probes: benchmarks/home_probe.py's analysis of the L2 partitions'
homes and its permuted copies' pairing (pure), and benchmarks/window_probe.py's copy in
interleaved streams (its order, and the copy itself on PoCL)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
home_probe = load_script(ROOT / "benchmarks" / "home_probe.py")
window_probe = load_script(ROOT / "benchmarks" / "window_probe.py")


def parity_hash(lines: np.ndarray, address_bits: list[int]) -> np.ndarray:
    mask = sum(1 << b for b in address_bits)
    return (np.bitwise_count((lines << 7) & mask) % 2).astype(np.uint8)


@given(st.sets(st.integers(min_value=7, max_value=20), min_size=1, max_size=6))
@settings(max_examples=25, deadline=None)
def test_a_linear_hash_of_the_address_is_recovered(bits: set[int]) -> None:
    lines = np.arange(home_probe.PAGE_LINES)
    homes = parity_hash(lines, sorted(bits))
    mask, const, fit = home_probe.gf2_fit(
        ((lines[:, None] >> np.arange(14)) & 1).astype(np.uint8), homes
    )
    assert fit == 1.0
    assert const == 0
    assert [b + 7 for b in mask] == sorted(bits)


def test_homes_described_by_runs_pages_and_fit() -> None:
    """Homes in runs of 4 lines (bits 9 and 13), every other 2 MiB the complement: the
    fit, the runs and the pages say so; random homes fit half and share no runs."""
    lines = np.arange(4 * home_probe.PAGE_LINES)
    homes = parity_hash(lines % home_probe.PAGE_LINES, [9, 13]) ^ (
        (lines // home_probe.PAGE_LINES) % 2
    ).astype(np.uint8)
    d = home_probe.describe_homes(homes)
    assert d["fit_first_2MiB"] == 1.0
    assert d["mask_address_bits"] == [9, 13]
    assert d["uniform_runs_of_4"] == 1.0 and d["uniform_runs_of_8"] < 1.0
    assert d["pages"] == 4 and d["pages_same_or_complement"] == 1.0
    assert d["page_agreement_sample"] == [1.0, 0.0, 1.0, 0.0]
    noise = np.random.default_rng(3).integers(0, 2, 2 * home_probe.PAGE_LINES)
    r = home_probe.describe_homes(noise.astype(np.uint8))
    assert r["fit_first_2MiB"] < 0.6
    assert r["uniform_runs_of_4"] < 0.2


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=300))
@settings(max_examples=60, deadline=None)
def test_pairs_copy_every_line_once_within_a_side(homes: list[tuple[bool, bool]]) -> None:
    a = np.array([h[0] for h in homes], dtype=np.uint8)
    b = np.array([h[1] for h in homes], dtype=np.uint8)
    p0, p1 = home_probe.pair_lists(a, b)
    both = np.concatenate([p0, p1])
    n = len(homes)
    assert sorted(both[:, 0].tolist()) == list(range(n))  # each source once
    assert sorted(both[:, 1].tolist()) == list(range(n))  # each destination once
    assert (a[p1[:, 0]] == 1).all() and (b[p1[:, 1]] == 1).all()
    same = min(int((a == 0).sum()), int((b == 0).sum()))
    assert (a[p0[:same, 0]] == 0).all() and (b[p0[:same, 1]] == 0).all()
    # what is left over crosses: a side-0 source to a side-1 destination, or back
    assert (a[p0[same:, 0]] != b[p0[same:, 1]]).all()


@pytest.mark.parametrize("k", [1, 2, 8, 64])
def test_streams_cover_every_chunk_once_each_in_order(k: int) -> None:
    groups = 256
    order = window_probe.chunk_order(groups, k)
    assert sorted(order.tolist()) == list(range(groups))
    per_stream = order.reshape(groups // k, k).T  # stream s: work-groups s, s + k, ...
    assert (np.diff(per_stream, axis=1) == 1).all()
    assert (per_stream[:, 0] == np.arange(k) * (groups // k)).all()


@pytest.mark.bench  # the probe run end to end
@pytest.mark.opencl
def test_window_probe_copies_on_pocl_and_stops_on_a_wrong_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def probe(out: str) -> int:
        small = ["--device", "pthread", "--size", "32", "--rounds", "1", "--reps", "1"]
        return int(window_probe.main([str(tmp_path / out), *small]))

    assert probe("ok") == 0
    data = json.loads((tmp_path / "ok" / "window.json").read_text())
    assert all(data["checks"].values())
    assert [r["streams"] for r in data["rows"]] == [1, 2, 8, 32]  # K dividing 64 groups
    wrong = window_probe.SOURCE.replace("b[i] = a[i];", "if (k != 8) b[i] = a[i];")
    monkeypatch.setattr(window_probe, "SOURCE", wrong)
    with pytest.raises(SystemExit, match="wrong with K = 8"):
        probe("bad")
    assert not (tmp_path / "bad" / "window.json").exists()


@pytest.mark.opencl
def test_home_probe_names_what_it_needs_on_another_device(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="NVIDIA only"):
        home_probe.main([str(tmp_path), "--device", "pthread"])


def pocl_copies(copies: str) -> tuple[dict[str, bool], dict[str, bool]]:
    """home_probe's copies on PoCL (every work-group on side 0: the SM read replaced),
    homes drawn at random: the checks of each copy, with ``copies`` as the source."""
    import pyopencl as cl
    import xhalo_probe

    _, context, queue = xhalo_probe.open_device("pthread")
    n = 16**3 * 8  # 1,024 lines
    rng = np.random.default_rng(5)
    homes = {k: rng.integers(0, 2, n * 4 // 128).astype(np.uint8) for k in ("input", "output")}
    host = rng.random(n, dtype=np.float32)
    mf = cl.mem_flags
    ab = (
        cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host),
        cl.Buffer(context, mf.READ_WRITE, size=n * 4),
    )
    tables = {"part": ",".join(["0"] * 512), "rand": ",".join(["1"] * 512)}
    launches, perm = home_probe.copy_launches(
        context, queue, tables, homes, ab, n, groups=3, smid="sm = 0u;", source=copies
    )
    assert sorted(perm.tolist()) == list(range(len(perm)))
    assert (perm != np.arange(len(perm))).any()  # a permutation, not the identity
    checks = home_probe.check_copies(queue, launches, host, ab[1], perm)
    return checks, {k: k in home_probe.PERMUTED for k in checks}


@pytest.mark.bench  # the probe run end to end
@pytest.mark.opencl
def test_home_probes_copies_copy_every_line_and_a_swapped_pair_is_caught() -> None:
    checks, permuted = pocl_copies(home_probe.COPIES)
    assert checks == {k: True for k in checks}
    assert set(checks) == {"copy4", "dyn", "part", "wpart", "rand", "local", "far", "prand"}
    swapped = (
        home_probe.COPIES.replace("(size_t)(e.x)", "(size_t)(e.Y)")
        .replace("(size_t)(e.y)", "(size_t)(e.x)")
        .replace("(size_t)(e.Y)", "(size_t)(e.y)")
    )
    assert swapped != home_probe.COPIES
    checks, permuted = pocl_copies(swapped)
    assert checks == {k: not permuted[k] for k in checks}
