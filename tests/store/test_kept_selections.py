"""Selections the embedded store keeps for the reports: reused while nothing is written to their
site, read again after a write recorded for it (a fed batch, an erasure; ``store.changes``),
dropped after their grace, bounded in number."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sightline.store import kept_selections as kept_module
from sightline.store.engines import Embedded

SELECTION = "SELECT visit, visitor FROM visits WHERE site_id = $site ORDER BY visit"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Embedded]:
    opened = Embedded(tmp_path / "data", 256)
    opened.execute(
        "INSERT INTO visits (site_id, visit, session, visitor, born, start, last, pageviews, events, source, "
        "utm_source, utm_medium, utm_campaign, browser, os, device, country, region, city, version, "
        "channel) SELECT 1, i, i, 100 + i, 0, 0, 0, 1, 0, '', '', '', '', '', '', '', '', '', '', 0, '' "
        "FROM range(1, 4) AS r(i)"
    )
    yield opened
    opened.close()


def rows_of(store: Embedded, name: str | None) -> list[tuple[int, int]]:
    assert name is not None
    return [(int(a), int(b)) for a, b in store.query(f"SELECT * FROM {name} ORDER BY 1", {})]


def test_a_selection_asked_again_before_any_write_is_the_same_table_with_the_same_rows(
    store: Embedded,
) -> None:
    first = store.keep(SELECTION, {"site": 1})
    assert store.keep(SELECTION, {"site": 1}) == first
    assert rows_of(store, first) == [(1, 101), (2, 102), (3, 103)]
    other = store.keep(SELECTION, {"site": 2})
    assert other != first
    assert rows_of(store, other) == []


def test_an_erasure_makes_the_next_ask_read_the_store_again_without_the_erased_rows(store: Embedded) -> None:
    first = store.keep(SELECTION, {"site": 1})
    store.execute("DELETE FROM visits WHERE visitor = $v", {"v": 102})
    again = store.keep(SELECTION, {"site": 1})
    assert again != first
    assert rows_of(store, again) == [(1, 101), (3, 103)]
    assert rows_of(store, first) == [(1, 101), (2, 102), (3, 103)]  # a query on its way still reads it


def test_a_fed_batch_makes_the_next_ask_read_the_store_again(store: Embedded) -> None:
    first = store.keep(SELECTION, {"site": 1})
    empty_events = store._con.sql("SELECT * FROM events LIMIT 0").to_arrow_table()
    empty_visits = store._con.sql("SELECT * FROM visits LIMIT 0").to_arrow_table()
    store.write(0, 5, empty_events, empty_visits, {1: [(0, 1)]})
    assert store.keep(SELECTION, {"site": 1}) != first


def test_a_batch_fed_for_another_site_leaves_the_selection_as_it_is(store: Embedded) -> None:
    first = store.keep(SELECTION, {"site": 1}, 1)
    empty_events = store._con.sql("SELECT * FROM events LIMIT 0").to_arrow_table()
    empty_visits = store._con.sql("SELECT * FROM visits LIMIT 0").to_arrow_table()
    store.write(0, 5, empty_events, empty_visits, {2: [(0, 1)]})
    assert store.keep(SELECTION, {"site": 1}, 1) == first
    store.write(5, 6, empty_events, empty_visits, {1: [(0, 1)]})
    assert store.keep(SELECTION, {"site": 1}, 1) != first


def test_a_replaced_table_stays_for_its_grace_and_is_dropped_after_it(
    store: Embedded, monkeypatch: pytest.MonkeyPatch
) -> None:
    def tables() -> set[str]:
        found = store.query("SELECT table_name FROM duckdb_tables() WHERE database_name = 'kept'", {})
        return {f"kept.{row[0]}" for row in found}

    first = store.keep(SELECTION, {"site": 1})
    store.execute("DELETE FROM visits WHERE visitor = $v", {"v": 101})
    second = store.keep(SELECTION, {"site": 1})
    assert tables() == {first, second}  # a query on its way may still name the first
    monkeypatch.setattr(kept_module, "GRACE", 0.0)
    store.execute("DELETE FROM visits WHERE visitor = $v", {"v": 102})
    third = store.keep(SELECTION, {"site": 1})
    assert tables() == {third}


def test_at_most_the_bound_number_of_selections_are_kept_the_least_recently_used_going_first(
    store: Embedded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_module, "MOST", 2)
    a = store.keep(SELECTION, {"site": 1})
    b = store.keep(SELECTION, {"site": 2})
    assert store.keep(SELECTION, {"site": 1}) == a  # now the most recently used
    store.keep(SELECTION, {"site": 3})  # evicts site 2's
    assert len(store.kept) == 2
    assert store.keep(SELECTION, {"site": 1}) == a
    assert store.keep(SELECTION, {"site": 2}) != b


def test_concurrent_asks_for_one_selection_read_it_once(store: Embedded) -> None:
    names: list[str | None] = []
    threads = [
        threading.Thread(target=lambda: names.append(store.keep(SELECTION, {"site": 1}))) for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(names)) == 1
    tables = store.query("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'kept'", {})
    assert tables == [(1,)]


def test_a_selection_too_big_to_keep_serves_its_request_and_is_read_again_next_time(
    store: Embedded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kept_module, "MOST_ROWS", 2)
    small = store.keep(SELECTION + " LIMIT 2", {"site": 1})
    big = store.keep(SELECTION, {"site": 1})
    assert rows_of(store, big) == [(1, 101), (2, 102), (3, 103)]
    assert store.keep(SELECTION, {"site": 1}) != big
    assert store.keep(SELECTION + " LIMIT 2", {"site": 1}) == small  # the kept one stays


def test_an_ask_while_a_write_is_under_way_waits_for_it_and_reads_the_store_again(store: Embedded) -> None:
    first = store.keep(SELECTION, {"site": 1})
    names: list[str | None] = []
    asking = threading.Thread(target=lambda: names.append(store.keep(SELECTION, {"site": 1})))
    with store.kept.writing():  # a write that may have committed already: not handed out before it ends
        asking.start()
        asking.join(timeout=0.3)
        assert asking.is_alive()
        assert names == []
        store.changes.record({1: [(0, 1)]})  # its record, made before the write ends
    asking.join()
    assert names != [first]
    assert names[0] is not None
