"""The overview's spans the embedded store keeps beside its file (``store.kept_days``): a row is kept
only when no change after its read touched it, leaves with any write of its span in that write's
own transaction (its keys' file once the write committed), outlives a clean close, and is dropped
at the next open when another program wrote; a keys' file no row names, or whose check word does
not match, is never read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pytest

from sightline.store.changes import EVERYTHING, HOUR
from sightline.store.engines import Embedded
from sightline.store.kept_days import TABLE
from sightline.store.kept_files import Files

DAY = 24 * HOUR
KEYS = np.array([3, 5, 9], dtype=np.uint64)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Embedded]:
    opened = Embedded(tmp_path / "data", 256)
    yield opened
    opened.close()


def _rows(store: Embedded) -> list[tuple[int, int, int]]:
    found = store.query(f"SELECT site_id, low, high FROM {TABLE} ORDER BY 1, 2", {})
    return [(int(s), int(a), int(b)) for s, a, b in found]


def _files(store: Embedded) -> list[str]:
    return sorted(path.name for path in store.days.files.iterdir()) if store.days.files.is_dir() else []


def _keep(store: Embedded, rows: list[tuple[int, int, int, int, int, np.ndarray]], epoch: str = "") -> int:
    """Keeps ``rows`` (site, change number, low, high, pageviews, keys) as the server does: their
    keys written to files, the rows handed to the store."""
    return store.keep_days(epoch or store.changes.epoch, Files(store.days.files).named(rows))


def _days(store: Embedded, sites: tuple[int, ...] = (1, 2), days: int = 3) -> int:
    """Keeps ``days`` days of each of ``sites``, read at the latest change; how many were kept."""
    number = store.changes.number
    return _keep(
        store, [(site, number, d * DAY, (d + 1) * DAY, 7, KEYS) for site in sites for d in range(days)]
    )


def _loaded(store: Embedded, asked: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int, list[int]]]:
    """The rows asked whose keys' files read whole, with their keys."""
    found = Files(store.days.files).opened(store.kept_days(asked))
    read = [
        (site, low, high, pageviews, keys.count, keys.read()) for site, low, high, pageviews, keys in found
    ]
    return [
        (s, a, b, pv, keys.tolist())
        for s, a, b, pv, count, keys in read
        if keys is not None and len(keys) == count
    ]


def test_a_kept_day_comes_back_with_its_pageviews_and_visitor_keys(store: Embedded) -> None:
    assert _days(store) == 6
    assert _loaded(store, [(2, DAY, 2 * DAY), (3, DAY, 2 * DAY)]) == [(2, DAY, 2 * DAY, 7, [3, 5, 9])]
    assert len(_files(store)) == 6
    assert _days(store) == 6  # kept again: replaced, not doubled
    assert len(_rows(store)) == 6
    assert len(_files(store)) == 6  # the replaced rows' files deleted


def test_a_keys_file_changed_cut_short_or_gone_is_read_as_no_keys(store: Embedded) -> None:
    _days(store, sites=(1,), days=3)
    found = {row[1]: Path(row[5]) for row in store.kept_days([(1, d * DAY, (d + 1) * DAY) for d in range(3)])}
    found[0].write_bytes(found[0].read_bytes()[:-8])  # cut short
    words = bytearray(found[DAY].read_bytes())
    words[0] ^= 1  # a key changed
    found[DAY].write_bytes(bytes(words))
    assert [row[1] for row in _loaded(store, [(1, d * DAY, (d + 1) * DAY) for d in range(3)])] == [2 * DAY]
    found[2 * DAY].unlink()
    assert _loaded(store, [(1, d * DAY, (d + 1) * DAY) for d in range(3)]) == []


def test_a_span_of_several_days_replaces_those_as_long_that_end_within_it_and_no_other(
    store: Embedded,
) -> None:
    number = store.changes.number
    month = 30 * DAY
    rows = [
        (1, number, 0, month, 9, KEYS),  # the 30 days before
        (1, number, month - DAY, 2 * month - DAY, 9, KEYS),  # yesterday's 30 days
        (1, number, month - 2 * DAY, month + 5 * DAY, 9, KEYS),  # 7 days, ending within the next 30
        (2, number, month - DAY, 2 * month - DAY, 9, KEYS),  # another site's
    ]
    assert _keep(store, rows) == 4
    assert _keep(store, [(1, number, month, 2 * month, 9, KEYS)]) == 1  # today's 30 days
    assert _rows(store) == [
        (1, 0, month),
        (1, month - 2 * DAY, month + 5 * DAY),
        (1, month, 2 * month),
        (2, month - DAY, 2 * month - DAY),
    ]
    assert len(_files(store)) == 4


def test_a_write_deletes_the_days_it_touched_in_its_own_transaction_and_no_other(store: Embedded) -> None:
    _days(store)
    store.execute("DELETE FROM events WHERE site_id = 1", changed={1: [(DAY + HOUR, DAY + 2 * HOUR)]})
    assert (1, DAY, 2 * DAY) not in _rows(store)
    assert len(_rows(store)) == len(_files(store)) == 5  # the other days of site 1, and every day of site 2
    store.execute("DELETE FROM events WHERE site_id = 2", changed={2: [EVERYTHING]})
    assert [row[0] for row in _rows(store)] == [1, 1]
    store.execute("DELETE FROM events WHERE site_id = 1", changed={1: [(10 * DAY, 10 * DAY + HOUR)]})
    assert len(_rows(store)) == len(_files(store)) == 2  # a write after the last day touches none
    with pytest.raises(duckdb.Error), store._transaction({1: [(0, DAY)]}) as cursor:
        cursor.execute("SELECT no_such_column FROM events")
    assert len(_rows(store)) == len(_files(store)) == 2  # a write that failed deleted nothing either
    store.reset()
    assert _rows(store) == []
    assert _files(store) == []


def test_a_day_a_change_touched_after_its_read_or_read_by_another_process_is_not_kept(
    store: Embedded,
) -> None:
    number, epoch = store.changes.number, store.changes.epoch
    store.execute("DELETE FROM events WHERE site_id = 1", changed={1: [(DAY, DAY + HOUR)]})
    rows = [(1, number, d * DAY, (d + 1) * DAY, 1, KEYS) for d in range(3)]
    assert _keep(store, rows, epoch) == 2  # the day the change touched is not kept
    assert (1, DAY, 2 * DAY) not in _rows(store)
    assert _keep(store, [(2, store.changes.number, 0, DAY, 1, KEYS)], "another process") == 0
    assert len(_files(store)) == 2  # the files of the rows not kept are deleted


def test_kept_days_outlive_a_clean_close_and_go_when_another_program_wrote_the_file(tmp_path: Path) -> None:
    store = Embedded(tmp_path / "data", 256)
    _days(store)
    left = Files(store.days.files).save(KEYS)  # written by a server whose row never came
    store.close()
    store = Embedded(tmp_path / "data", 256)
    assert len(_rows(store)) == 6
    assert len(_files(store)) == 6
    assert left not in _files(store)  # a file no row names is deleted
    assert len(_loaded(store, [(1, 0, DAY), (2, 2 * DAY, 3 * DAY)])) == 2
    store.close()
    other = duckdb.connect(str(store.path))  # an older Sightline, which knows nothing of the days
    other.execute(
        "INSERT INTO visit_counts VALUES (9, 1); "
        "INSERT INTO store_state VALUES ('watermark', 12) ON CONFLICT (name) DO UPDATE SET value = 12"
    )
    other.close()
    store = Embedded(tmp_path / "data", 256)
    assert _rows(store) == []
    assert _files(store) == []
    store.close()


def test_a_table_of_an_older_layout_holding_the_keys_is_replaced_at_open(tmp_path: Path) -> None:
    Embedded(tmp_path / "data", 256).close()
    older = duckdb.connect(str(tmp_path / "data" / "store.duckdb"))
    older.execute(f"DROP TABLE {TABLE}")
    older.execute(
        f"CREATE TABLE {TABLE} (site_id INTEGER NOT NULL, low BIGINT NOT NULL, high BIGINT NOT NULL, "
        "pageviews BIGINT NOT NULL, visitors BLOB NOT NULL)"
    )
    older.execute(f"INSERT INTO {TABLE} VALUES (1, 0, {DAY}, 7, $keys)", {"keys": KEYS.tobytes()})
    older.close()
    store = Embedded(tmp_path / "data", 256)
    try:
        assert _rows(store) == []
        assert _days(store) == 6
        assert len(_loaded(store, [(1, 0, DAY)])) == 1
    finally:
        store.close()
