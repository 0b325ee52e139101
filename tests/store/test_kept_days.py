"""The overview's days the embedded store keeps in its file (``store.kept_days``): a row is kept only
when no change after its read touched it, leaves with any write of its span in that write's own
transaction, outlives a clean close, and is dropped at the next open when another program wrote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pytest

from sightline.store.changes import EVERYTHING, HOUR
from sightline.store.engines import Embedded
from sightline.store.kept_days import TABLE

DAY = 24 * HOUR
KEYS = np.array([3, 5, 9], dtype=np.uint64).tobytes()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Embedded]:
    opened = Embedded(tmp_path / "data", 256)
    yield opened
    opened.close()


def _rows(store: Embedded) -> list[tuple[int, int, int]]:
    found = store.query(f"SELECT site_id, low, high FROM {TABLE} ORDER BY 1, 2", {})
    return [(int(s), int(a), int(b)) for s, a, b in found]


def _days(store: Embedded, sites: tuple[int, ...] = (1, 2), days: int = 3) -> int:
    """Keeps ``days`` days of each of ``sites``, read at the latest change; how many were kept."""
    number = store.changes.number
    rows = [(site, number, d * DAY, (d + 1) * DAY, 7, KEYS) for site in sites for d in range(days)]
    return store.keep_days(store.changes.epoch, rows)


def test_a_kept_day_comes_back_with_its_pageviews_and_visitor_keys(store: Embedded) -> None:
    assert _days(store) == 6
    [(site, low, high, pageviews, keys)] = store.kept_days([(2, DAY, 2 * DAY), (3, DAY, 2 * DAY)])
    assert (site, low, high, pageviews) == (2, DAY, 2 * DAY, 7)
    assert np.frombuffer(keys, dtype=np.uint64).tolist() == [3, 5, 9]
    assert _days(store) == 6  # kept again: replaced, not doubled
    assert len(_rows(store)) == 6


def test_a_write_deletes_the_days_it_touched_in_its_own_transaction_and_no_other(store: Embedded) -> None:
    _days(store)
    store.execute("DELETE FROM events WHERE site_id = 1", changed={1: [(DAY + HOUR, DAY + 2 * HOUR)]})
    assert (1, DAY, 2 * DAY) not in _rows(store)
    assert len(_rows(store)) == 5  # the other days of site 1, and every day of site 2, stay
    store.execute("DELETE FROM events WHERE site_id = 2", changed={2: [EVERYTHING]})
    assert [row[0] for row in _rows(store)] == [1, 1]
    store.execute("DELETE FROM events WHERE site_id = 1", changed={1: [(10 * DAY, 10 * DAY + HOUR)]})
    assert len(_rows(store)) == 2  # a write after the last day touches none
    with pytest.raises(duckdb.Error), store._transaction({1: [(0, DAY)]}) as cursor:
        cursor.execute("SELECT no_such_column FROM events")
    assert len(_rows(store)) == 2  # a write that failed deleted nothing either
    store.reset()
    assert _rows(store) == []


def test_a_day_a_change_touched_after_its_read_or_read_by_another_process_is_not_kept(
    store: Embedded,
) -> None:
    number, epoch = store.changes.number, store.changes.epoch
    store.execute("DELETE FROM events WHERE site_id = 1", changed={1: [(DAY, DAY + HOUR)]})
    rows = [(1, number, d * DAY, (d + 1) * DAY, 1, KEYS) for d in range(3)]
    assert store.keep_days(epoch, rows) == 2  # the day the change touched is not kept
    assert (1, DAY, 2 * DAY) not in _rows(store)
    assert store.keep_days("another process", [(2, store.changes.number, 0, DAY, 1, KEYS)]) == 0


def test_kept_days_outlive_a_clean_close_and_go_when_another_program_wrote_the_file(tmp_path: Path) -> None:
    store = Embedded(tmp_path / "data", 256)
    _days(store)
    store.close()
    store = Embedded(tmp_path / "data", 256)
    assert len(_rows(store)) == 6
    store.close()
    other = duckdb.connect(str(store.path))  # an older Sightline, which knows nothing of the days
    other.execute(
        "INSERT INTO visit_counts VALUES (9, 1); "
        "INSERT INTO store_state VALUES ('watermark', 12) ON CONFLICT (name) DO UPDATE SET value = 12"
    )
    other.close()
    store = Embedded(tmp_path / "data", 256)
    assert _rows(store) == []
    store.close()
