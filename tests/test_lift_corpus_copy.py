"""``benchmarks/lift_corpus.py``'s copy of the same bytes: the fair 100 % for a kernel of
small elements (pure: shapes only)."""

from __future__ import annotations

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
