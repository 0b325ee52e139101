"""The visitor sketch: exact while small, within 2 % of the exact count when large, and mergeable."""

from __future__ import annotations

import pytest

from sightline.reports.sketch import SPARSE_MAX, Sketch, merge_all, visitor_hash


def _hashes(prefix: str, n: int) -> list[int]:
    return [visitor_hash(f"{prefix}-{i}") for i in range(n)]


@pytest.mark.parametrize("n", [0, 1, 17, 1000, SPARSE_MAX])
def test_small_sets_are_counted_exactly(n: int) -> None:
    sketch = Sketch.of(_hashes("small", n) * 2)
    assert sketch.count() == n
    assert not sketch.dense
    assert Sketch.load(sketch.dump()).count() == n


@pytest.mark.parametrize("n", [SPARSE_MAX + 1, 5_000, 20_000, 100_000, 400_000])
def test_large_sets_are_within_two_percent(n: int) -> None:
    sketch = Sketch.of(_hashes(f"large{n}", n))
    assert sketch.dense
    assert abs(sketch.count() - n) <= 0.02 * n
    assert len(sketch.dump()) == 16385


def test_merging_counts_the_union_once_whatever_the_forms() -> None:
    a, b, c = _hashes("a", 1500), _hashes("b", 30_000), _hashes("c", 10)
    parts = [Sketch.of(a), Sketch.of(b), Sketch.of(c), Sketch.of(a[:700]), Sketch.of(b[:100])]
    merged = merge_all(p.dump() for p in parts)
    total = len(a) + len(b) + len(c)
    assert abs(merged.count() - total) <= 0.02 * total
    assert merged.count() == Sketch.of(a + b + c).count()
    stepwise = Sketch()
    for p in parts:
        stepwise.merge(Sketch.load(p.dump()))
    assert stepwise.count() == merged.count()


def test_two_small_sets_merge_exactly_until_they_outgrow_the_sparse_form() -> None:
    left, right = _hashes("l", 1200), _hashes("r", 800)
    merged = Sketch.of(left).merge(Sketch.of(right + left[:100]))
    assert merged.count() == 2000
    assert not merged.dense
    merged.merge(Sketch.of(_hashes("x", 100)))
    assert merged.dense
    assert abs(merged.count() - 2100) <= 42


def test_visitor_hashes_are_stable_and_spread() -> None:
    assert visitor_hash("v-1") == visitor_hash("v-1")
    assert len({visitor_hash(f"v-{i}") for i in range(10_000)}) == 10_000
    assert merge_all([None, b""]).count() == 0
