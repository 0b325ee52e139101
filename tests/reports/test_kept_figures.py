"""The one layer of figures kept between requests (``reports.kept_figures``): one per store, gone with it,
none for a store that records no changes; a figure is dropped by a later change touching its span
(and only then), and everything by another epoch of the store process."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sightline import settings as registry
from sightline.database import open_database
from sightline.reports.kept_figures import MOST_BYTES, Kept, kept_of
from sightline.store.changes import HOUR, Changes
from sightline.store.client import StoreClient


class _Store:
    def __init__(self) -> None:
        self.records = Changes()

    def changes(self, site_id: int, after: int) -> dict[str, Any]:
        return self.records.since(site_id, after)


def test_a_figure_kept_during_a_sync_from_a_later_number_is_not_handed_out_unchecked() -> None:
    store = _Store()
    kept = Kept(store.changes)
    old = kept.sync(1)  # a request reads hour 0 from here on, slowly
    store.records.record({1: [(0, 1)]})  # a change of hour 0, after that read began
    kept.put((1, HOUR, 2 * HOUR, "a"), "a", kept.sync(1), 10)  # another request keeps hour 1
    answered = store.changes

    def racing(site_id: int, after: int) -> dict[str, Any]:  # the slow read is kept meanwhile
        kept.put((1, 0, HOUR, "b"), "read before the change", old, 10)
        return answered(site_id, after)

    kept._changes = racing
    now = kept.sync(1)  # asks for the changes after hour 1's number: not hour 0's
    assert kept.get((1, HOUR, 2 * HOUR, "a"), now) == "a"
    assert kept.get((1, 0, HOUR, "b"), now) is None
    kept._changes = answered
    assert kept.get((1, 0, HOUR, "b"), kept.sync(1)) is None
    assert len(kept) == 1  # the next sync asked from its number and dropped it


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
    now = kept.sync(1)
    assert [kept.get((1, h * HOUR, (h + 1) * HOUR, "shape"), now) for h in range(3)] == [0, None, 2]
    assert kept.get((2, 0, HOUR, "shape"), kept.sync(2)) == "other site"
    stale = kept.sync(1)
    store.records.record({1: [(0, 1)]})  # committed after the read that ``stale`` came before
    kept.put((1, 0, HOUR, "late"), "read before the change", stale, 10)
    assert kept.get((1, 0, HOUR, "late"), stale) == "read before the change"  # its own request
    now = kept.sync(1)
    assert kept.get((1, 0, HOUR, "late"), now) is None
    assert kept.get((1, 2 * HOUR, 3 * HOUR, "shape"), now) == 2
    store.records = Changes()  # the store process started again
    kept.sync(2)
    assert len(kept) == 0


def test_syncing_many_sites_in_one_request_drops_what_syncing_each_drops() -> None:
    store = _Store()
    asked: list[list[tuple[int, int]]] = []

    def many(pairs: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
        asked.append(list(pairs))
        return [store.changes(site_id, after) for site_id, after in pairs]

    each, together = Kept(store.changes), Kept(store.changes, many=many)
    for kept in (each, together):
        seen = kept.sync_many([1, 2, 3])
        for site_id in (1, 2, 3):
            kept.put((site_id, 0, HOUR, "x"), site_id, seen[site_id], 10)
            kept.put((site_id, HOUR, 2 * HOUR, "x"), site_id, seen[site_id], 10)
    store.records.record({1: [(0, 1)], 3: [(HOUR, HOUR + 1)]})
    answers = [each.sync_many([1, 2, 3]), together.sync_many([1, 2, 3])]
    left = [
        sorted(
            (s, low)
            for s in (1, 2, 3)
            for low in (0, HOUR)
            if k.get((s, low, low + HOUR, "x"), a[s]) is not None
        )
        for k, a in zip((each, together), answers, strict=True)
    ]
    assert left[0] == left[1] == [(1, HOUR), (2, 0), (2, HOUR), (3, 0)]
    assert len(asked) == 2  # one request to the store per sync of every site


def test_the_layer_holds_as_much_as_the_server_is_told_and_drops_the_least_recently_used_past_it(
    tmp_path: Path,
) -> None:
    settings = registry.load({"data_dir": str(tmp_path), "reports_kept_mb": "2"}, environ={})
    store = StoreClient(settings, open_database(f"sqlite:///{tmp_path / 'sightline.db'}"))
    kept = kept_of(store)
    assert kept is not None
    assert kept.most_bytes == 2 << 20
    assert kept_of(_Store()).most_bytes == MOST_BYTES  # type: ignore[union-attr]
    answer = {"epoch": "e", "number": 1, "watermark": 0, "removed": 0, "spans": [], "everything": False}
    kept._changes = lambda site_id, after: answer
    seen = kept.sync(1)
    for hour in range(3):
        kept.put((1, hour * HOUR, (hour + 1) * HOUR, "a"), hour, seen, 1 << 20)
    assert kept.get((1, 0, HOUR, "a"), seen) is None  # the first pushed out by the third
    assert kept.get((1, HOUR, 2 * HOUR, "a"), seen) == 1
    assert kept.get((1, 2 * HOUR, 3 * HOUR, "a"), seen) == 2
