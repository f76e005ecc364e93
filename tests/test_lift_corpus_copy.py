"""``benchmarks/lift_corpus.py``'s copy of the same bytes: the fair 100 % for a kernel of
small elements (pure: shapes only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import ROOT, load_script

corpus = load_script(ROOT / "benchmarks" / "lift_corpus.py")


def volume(size: str) -> int:
    n = 1
    for v in size.split("x"):
        n *= int(v)
    return n


@pytest.mark.parametrize(
    ("size", "in_bytes", "out_bytes"),
    [("8192x8192", 1, 1), ("8192x8192", 1, 2), ("8192x8192", 1, 4), ("512x512x256", 8, 8)],
)
def test_the_copy_moves_the_kernels_bytes_at_its_row_length(
    size: str, in_bytes: int, out_bytes: int
) -> None:
    moved = volume(size) * (in_bytes + out_bytes)
    same = corpus.same_bytes_size(size, moved)
    assert volume(same) * 8 == moved  # a float copy reads and writes one array each
    assert same.split("x")[0] == size.split("x")[0]


def test_a_float_kernel_keeps_its_own_copy() -> None:
    assert corpus.same_bytes_size("8192x8192", 8192 * 8192 * 8) == "8192x8192"
    assert corpus.same_bytes_size("512x512x512", 8 * 512**3) == "512x512x512"


@given(
    nx=st.integers(1, 64),
    ny=st.integers(1, 64),
    moved=st.integers(0, 10**6),
)
def test_the_same_bytes_or_the_size_itself(nx: int, ny: int, moved: int) -> None:
    size = f"{nx}x{ny}"
    same = corpus.same_bytes_size(size, moved)
    assert same == size or volume(same) * 8 == moved


def _run(run: Path, budget: int, name: str) -> None:
    """A whole run's report with one kernel (the fields the summary reads)."""
    k = {
        "size": "64x64",
        "dtype": "float32",
        "times_s": {"original": 2e-6, "plain": 2e-6, "lifted": 1e-6},
        "lifted_over_plain": 2.0,
        "lifted_over_original": 2.0,
        "gbs": {"lifted": 90.0, "plain": 45.0},
    }
    run.mkdir(parents=True)
    data = {
        "device": "dev",
        "budget": budget,
        "rounds": 3,
        "copy_all": {"64x64": [{"gbs": 100.0, "config": None}]},
        "kernels": {name: k},
    }
    (run / "lift_corpus.json").write_text(json.dumps(data))


def test_a_merge_of_runs_of_other_budgets_says_each_kernels(tmp_path: Path) -> None:
    """Rows of a run at 300 configurations keep that budget beside rows searched to the
    end: the header says the budgets differ and a column gives each row's."""
    base = tmp_path
    _run(base / "a", 300, "box")
    _run(base / "b", 0, "blur")
    data = corpus.merge(base / "out", [base / "a", base / "b"])
    assert {n: k["budget"] for n, k in data["kernels"].items()} == {"box": 300, "blur": 0}
    md = (base / "out" / "lift_corpus.md").read_text()
    assert "Budgets differ by kernel" in md and "No budget" not in md
    rows = {line.split(" | ")[0].strip("| "): line for line in md.splitlines() if "64x64 |" in line}
    assert rows["box"].endswith("| 300 |") and rows["blur"].endswith("| 0 |")
    alone = corpus.merge(base / "one", [base / "b"])
    assert "No budget" in (base / "one" / "lift_corpus.md").read_text() and alone["budget"] == 0


def test_a_size_whose_copy_did_not_run_keeps_its_row_without_shares() -> None:
    """A copy that cannot run at a size (8194x8194: no work-group divides it) leaves the
    kernels of that size measured, their share of the copy "no copy", and the others'."""
    best = {
        "8194x8194": {"gbs": None, "config": None, "error": "no configuration"},
        "8192x8192": {"gbs": 4000.0},
    }
    odd = {"size": "8194x8194", "gbs": {"lifted": 3000.0, "plain": 1500.0}}
    even = {"size": "8192x8192", "gbs": {"lifted": 3000.0, "plain": 1500.0}}
    even["same_bytes_copy"] = "8192x8192"
    corpus.set_fractions(odd, best)
    corpus.set_fractions(even, best)
    assert odd["copy_gbs"] is None and "fraction_of_copy" not in odd
    assert corpus.percent(odd.get("fraction_of_copy")) == "no copy"
    assert (even["fraction_of_copy"], even["plain_fraction_of_copy"]) == (0.75, 0.375)
    assert even["fraction_of_same_bytes_copy"] == 0.75
    assert corpus.gbs_text(best["8194x8194"]) == "not measured (no configuration)"
    assert corpus.gbs_text(best["8192x8192"]) == "4000 GB/s"
