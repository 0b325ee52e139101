"""The one layer of figures kept between requests (``reports.kept``): one per store, gone with it,
none for a store that records no changes; a figure is dropped by a later change touching its span
(and only then), and everything by another epoch of the store process."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from sightline.reports.kept import Kept, kept_of
from sightline.store.changes import HOUR, Changes


class _Store:
    def __init__(self) -> None:
        self.records = Changes()

    def changes(self, site_id: int, after: int) -> dict[str, Any]:
        return self.records.since(site_id, after)


def test_each_store_has_one_layer_of_its_own_which_goes_with_it() -> None:
    first, second = _Store(), _Store()
    kept = kept_of(first)
    assert kept is not None
    assert kept_of(first) is kept
    assert kept_of(second) is not kept
    assert kept_of(object()) is None  # records no changes: keeps nothing
    gone = weakref.ref(kept)
    del first, kept
    gc.collect()
    assert gone() is None


def test_a_figure_goes_when_a_later_change_touches_its_span_and_stays_otherwise() -> None:
    store = _Store()
    kept = Kept(store.changes)
    seen = kept.sync(1)
    for hour in range(3):
        kept.put((1, hour * HOUR, (hour + 1) * HOUR, "shape"), hour, seen, 10)
    kept.put((2, 0, HOUR, "shape"), "other site", seen, 10)
    store.records.record({1: [(HOUR + 5, HOUR + 6)]}, removed=False)
    kept.sync(1)
    assert [kept.get((1, h * HOUR, (h + 1) * HOUR, "shape")) for h in range(3)] == [0, None, 2]
    assert kept.get((2, 0, HOUR, "shape")) == "other site"
    stale = kept.sync(1)
    store.records.record({1: [(0, 1)]})  # committed after the read that ``stale`` came before
    kept.put((1, 0, HOUR, "late"), "read before the change", stale, 10)
    kept.sync(1)
    assert kept.get((1, 0, HOUR, "late")) is None
    assert kept.get((1, 2 * HOUR, 3 * HOUR, "shape")) == 2
    store.records = Changes()  # the store process started again
    kept.sync(2)
    assert len(kept) == 0
