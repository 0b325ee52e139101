"""Selections the embedded store keeps for the reports: reused while nothing is written to their
site, read again after a write recorded for it (a fed batch, an erasure; ``store.changes``),
dropped after their grace, bounded in number."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sightline.store import kept_selections as kept_module
from sightline.store.changes import EVERYTHING, HOUR
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
    return [(int(a), int(b)) for a, b in store.query(f"SELECT visit, visitor FROM {name} ORDER BY 1", {})]


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
    monkeypatch.setattr(kept_module, "MOST_BYTES", 2 * 2 * kept_module.COLUMN_BYTES)  # 2 rows of 2 columns
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


SPANNED = (
    "SELECT visit, visitor, start FROM visits WHERE site_id = $site "
    "AND start >= $kept_low AND start < $kept_high ORDER BY visit"
)


def add_visit(store: Embedded, visit: int, start: int) -> None:
    """A visit of site 1 starting at ``start`` (µs), recorded as a feed records it: its start's hour."""
    store.execute(
        "INSERT INTO visits (site_id, visit, session, visitor, born, start, last, pageviews, events, source, "
        "utm_source, utm_medium, utm_campaign, browser, os, device, country, region, city, version, channel) "
        "VALUES (1, $v, $v, 100 + $v, $t, $t, $t, 1, 0, '', '', '', '', '', '', '', '', '', '', 0, '')",
        {"v": visit, "t": start},
        {1: [(start // HOUR * HOUR, start // HOUR * HOUR + HOUR)]},
    )


def test_a_selection_with_its_span_is_brought_up_to_date_in_place_for_the_hours_a_write_changed(
    store: Embedded,
) -> None:
    span = (0, 10 * HOUR)
    first = store.keep(SPANNED, {"site": 1}, 1, span)
    assert rows_of(store, first) == [(1, 101), (2, 102), (3, 103)]
    add_visit(store, 7, 5 * HOUR + 10)
    store.execute("DELETE FROM visits WHERE visit = 2", {}, {1: [(0, HOUR)]})
    assert store.keep(SPANNED, {"site": 1}, 1, span) == first  # the same table, up to date
    assert rows_of(store, first) == [(1, 101), (3, 103), (7, 107)]


def test_a_selection_with_its_span_reads_only_the_hours_a_write_changed_again(store: Embedded) -> None:
    """A row outside the changed hours stays as it was read (here, deliberately, a row the store
    no longer holds, written without its change record): only the recorded hours are read again."""
    span = (0, 10 * HOUR)
    first = store.keep(SPANNED, {"site": 1}, 1, span)
    store.execute("UPDATE visits SET visitor = 999 WHERE visit = 1", {}, {})
    add_visit(store, 8, 3 * HOUR)
    assert store.keep(SPANNED, {"site": 1}, 1, span) == first
    assert rows_of(store, first) == [(1, 101), (2, 102), (3, 103), (8, 108)]


def test_a_write_outside_a_selections_span_leaves_it_as_it_is(store: Embedded) -> None:
    span = (0, HOUR)
    first = store.keep(SPANNED, {"site": 1}, 1, span)
    add_visit(store, 9, 30 * HOUR)
    assert store.keep(SPANNED, {"site": 1}, 1, span) == first
    assert rows_of(store, first) == [(1, 101), (2, 102), (3, 103)]


def test_a_rebuild_reads_a_selection_with_its_span_again_as_a_new_table(store: Embedded) -> None:
    span = (0, 10 * HOUR)
    first = store.keep(SPANNED, {"site": 1}, 1, span)
    store.execute("DELETE FROM visits WHERE visit = 3", {}, None)  # every site changed, all of it
    again = store.keep(SPANNED, {"site": 1}, 1, span)
    assert again != first
    assert rows_of(store, again) == [(1, 101), (2, 102)]


def test_a_deleted_sites_change_selects_every_row_of_the_span_again_in_place(store: Embedded) -> None:
    span = (0, 10 * HOUR)
    first = store.keep(SPANNED, {"site": 1}, 1, span)
    store.execute("DELETE FROM visits WHERE visit = 3", {}, {1: [EVERYTHING]})
    assert store.keep(SPANNED, {"site": 1}, 1, span) == first
    assert rows_of(store, first) == [(1, 101), (2, 102)]
