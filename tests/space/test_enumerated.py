"""EnumeratedSpace: queries as numpy masks, no solver involved."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gtune.exceptions import InputError
from gtune.expr import Expr
from gtune.space import EnumeratedSpace, NamedConstraint, Space

RULE = NamedConstraint("a_times_b", Expr("A * B <= 8"))


def small() -> EnumeratedSpace:
    dom = {"A": [1, 2, 4, 8], "B": [1, 2, 4, 8], "C": [0, 1]}
    rows = [(a, b, c) for a, b, c in itertools.product(dom["A"], dom["B"], dom["C"]) if a * b <= 8]
    return EnumeratedSpace(["A", "B", "C"], rows[::-1], domains=dom, constraints=[RULE])


def test_is_a_space_with_sizes_and_order() -> None:
    s = small()
    assert isinstance(s, Space)
    assert s.size_unpruned() == 32
    assert s.size() == 20
    listed = list(s.enumerate())
    assert listed == sorted(listed, key=lambda c: (c["A"], c["B"], c["C"]))
    assert len({tuple(c.values()) for c in listed}) == 20


def test_is_valid_names_domain_constraint_and_membership() -> None:
    s = small()
    assert s.is_valid({"A": 2, "B": 4, "C": 1}) is None
    v = s.is_valid({"A": 4, "B": 4, "C": 0})
    assert v is not None and v.constraint == "a_times_b"
    v = s.is_valid({"A": 3, "B": 1, "C": 0})
    assert v is not None and v.constraint == "domain of A"
    v = s.is_valid({"A": 1, "B": 1})
    assert v is not None and v.constraint == "missing parameter"


def test_subspace_varies_only_free_parameters() -> None:
    s = small()
    got = s.subspace({"B": 2, "C": 1}, ["A"])
    assert [c["A"] for c in got] == [1, 2, 4]
    assert all(c["B"] == 2 and c["C"] == 1 for c in got)
    got = s.subspace({"C": 0}, ["A", "B"], extra=[Expr("A == B")])
    assert [(c["A"], c["B"]) for c in got] == [(1, 1), (2, 2)]
    with pytest.raises(InputError, match="neither free nor fixed"):
        s.subspace({"C": 0}, ["A"])
    with pytest.raises(InputError, match="unknown parameter"):
        s.subspace({"C": 0, "B": 1, "Q": 1}, ["A"])


def test_sample_is_distinct_valid_and_seeded() -> None:
    s = small()
    a = s.sample(7, seed=3)
    assert a == s.sample(7, seed=3)
    assert len({tuple(c.values()) for c in a}) == 7
    assert all(s.is_valid(c) is None for c in a)
    assert len(s.sample(100)) == 20


def test_sample_is_uniform() -> None:
    s = small()
    counts: dict[tuple[int, ...], int] = {}
    for seed in range(2000):
        for c in s.sample(1, seed=seed):
            key = tuple(c.values())
            counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 20
    assert max(counts.values()) < 3 * min(counts.values())


def test_exclude_is_shared_with_restrictions_and_named() -> None:
    seen: list[tuple[dict[str, int], str]] = []
    s = small()
    s._on_exclude = lambda c, r: seen.append((c, r))
    narrow = s.restrict([Expr("C == 1")], "only C")
    assert narrow.size() == 10
    s.exclude({"A": 1, "B": 1, "C": 1}, "CL_INVALID_WORK_GROUP_SIZE")
    assert s.size() == 19 and narrow.size() == 9
    v = narrow.is_valid({"A": 1, "B": 1, "C": 1})
    assert v is not None and v.constraint == "refused at run time"
    assert "CL_INVALID_WORK_GROUP_SIZE" in str(v)
    assert seen == [({"A": 1, "B": 1, "C": 1}, "CL_INVALID_WORK_GROUP_SIZE")]
    v = narrow.is_valid({"A": 1, "B": 1, "C": 0})
    assert v is not None and v.constraint == "only C: C == 1"


def test_limit_work_group_uses_the_local_size_expression() -> None:
    dom = {"A": [1, 2, 4, 8], "B": [1, 2, 4, 8], "C": [0, 1]}
    rows = list(itertools.product(*dom.values()))
    s = EnumeratedSpace(["A", "B", "C"], rows, domains=dom, work_group_size=Expr("A * B"))
    limited = s.limit_work_group(4)
    assert limited.size() == sum(1 for a, b, _ in rows if a * b <= 4)
    v = limited.is_valid({"A": 8, "B": 1, "C": 0})
    assert v is not None and v.constraint == "kernel_work_group_size"


def test_bad_construction_is_reported() -> None:
    with pytest.raises(InputError, match="outside its domain"):
        EnumeratedSpace(["A"], [[3]], domains={"A": [1, 2]})
    with pytest.raises(InputError, match="empty"):
        EnumeratedSpace(["A"], [], domains={"A": []})
    with pytest.raises(InputError, match="shape"):
        EnumeratedSpace(["A", "B"], [[1, 2, 3]])


@st.composite
def rows_in_domains(draw: st.DrawFn) -> tuple[dict[str, list[int]], list[tuple[int, ...]]]:
    """Domains of small, negative or far-apart values (beyond one lookup table), and
    rows drawn from them in any order, with repeats."""
    values = st.one_of(st.integers(-50, 50), st.integers(-(2**53), 2**53))
    names = ["A", "B", "C"][: draw(st.integers(1, 3))]
    domains = {n: sorted(draw(st.sets(values, min_size=1, max_size=6))) for n in names}
    row = st.tuples(*(st.sampled_from(domains[n]) for n in names))
    return domains, draw(st.lists(row, max_size=40))


@settings(max_examples=200, deadline=None)
@given(rows_in_domains(), st.data())
def test_rows_are_sorted_unique_and_restrictions_keep_the_order(
    case: tuple[dict[str, list[int]], list[tuple[int, ...]]], data: st.DataObject
) -> None:
    domains, rows = case
    names = list(domains)
    assume(rows)
    space = EnumeratedSpace(names, rows, domains=domains)
    assert [tuple(r) for r in space.array.tolist()] == sorted(set(rows))
    for r in set(rows):
        assert space.is_valid(dict(zip(names, r, strict=True))) is None
    first = names[0]
    bound = data.draw(st.sampled_from(domains[first]))
    narrow = space.restrict([Expr(f"{first} <= {bound}")])
    assert [tuple(r) for r in narrow.array.tolist()] == sorted(
        r for r in set(rows) if r[0] <= bound
    )
    outside = max(domains[first]) + 1
    assert narrow.is_valid({**dict(zip(names, rows[0], strict=True)), first: outside}) is not None


@given(st.integers(-(2**62), 2**62))
def test_a_value_outside_its_domain_is_named_however_far(value: int) -> None:
    domain = [-(2**62), -7, 0, 3, 2**33, 2**62]
    assume(value not in domain)
    with pytest.raises(InputError, match=f"B={value} is outside its domain"):
        EnumeratedSpace(["A", "B"], [[1, 0], [1, value]], domains={"A": [1], "B": domain})
