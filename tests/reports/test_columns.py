"""The column store: the same figures as the database for every report and filter, copied once
per batch even when a batch fails halfway, rebuilt when damaged or made by another version, and
left off (reports read the database) when another process holds it or the setting says so."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sightline.reports import raw
from sightline.reports.columns import queries as columnar
from sightline.reports.columns import sync as copying
from sightline.reports.columns.store import BUILDING, FILE_NAME, OFF, READY, ColumnStore
from sightline.reports.params import DIMENSIONS
from sightline.reports.raw import Filters, Span
from sightline.reports.rollup import RollupJob
from sightline.storage import Database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, StartServer, sign_in
from tests.reports import helpers
from tests.support.server import create_owner

NOW = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
FILTERS = [
    Filters(),
    Filters(source="google.com"),
    Filters(source="(none)"),
    Filters(page="/pricing"),
    Filters(event="signup"),
    Filters(page="/docs", source="google.com"),
    Filters(page="/pricing", event="download", source="twitter.com"),
    Filters(page="/nowhere"),
]
CUSTOM_EVENTS = ("signup", "download", "never_sent")


def _copy_all(db: Database, store: ColumnStore, batch: int = 300) -> int:
    copied = 0
    while n := copying.sync(db, store, batch):
        copied += n
    return copied


@pytest.fixture
def seeded(db: Database) -> tuple[int, list[helpers.Event]]:
    _, site = helpers.create_site(db, "columns.example.com")
    rows = helpers.generate(site, NOW + timedelta(minutes=30), visits=400, days=8, seed=3)
    rows.sort(key=lambda e: e.time)  # visits interleaved, as traffic arrives
    helpers.insert_events(db, rows)
    RollupJob(db).catch_up()
    return site, rows


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ColumnStore]:
    opened = ColumnStore(tmp_path, 256)
    opened.open()
    yield opened
    opened.close()


def _spans() -> list[Span]:
    days = [(NOW - timedelta(days=n + 1), NOW - timedelta(days=n)) for n in range(8)][::-1]
    return days


def _ranked(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rows by value: ties may be ordered differently by the engines' collations."""
    return {row["value"]: row for row in rows}


@pytest.mark.parametrize(
    "filters", FILTERS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.describe().items())
)
def test_the_column_store_answers_every_report_as_the_database_does(
    db: Database, seeded: tuple[int, list[helpers.Event]], store: ColumnStore, filters: Filters
) -> None:
    site, _ = seeded
    # small batches: a visit's row is replaced as its later events arrive in later batches
    assert _copy_all(db, store) > 0
    assert store.state == READY
    spans = _spans()
    whole = (spans[0][0], spans[-1][1])
    odd = (NOW - timedelta(days=5, minutes=30), NOW - timedelta(days=1, minutes=30))  # half-hour zone
    with db.read() as conn, store.reader() as cur:
        for span in [*spans, whole, odd]:
            assert columnar.totals(cur, site, span, filters) == raw.totals(conn, site, span, filters)
        assert columnar.series(cur, site, spans, filters) == raw.series(conn, site, spans, filters)
        for name, dimension in DIMENSIONS.items():
            names = CUSTOM_EVENTS if name == "props" else (None,)
            for event in names:
                prefix = f"{event}\x1f" if event else None
                args = (site, whole, filters, dimension.dim, dimension.order, 100, prefix)
                ours, more = columnar.breakdown(cur, *args)
                theirs, their_more = raw.breakdown(conn, *args)
                assert _ranked(ours) == _ranked(theirs), (name, event)
                assert more == their_more
                ranks = [row[dimension.order] for row in ours]
                assert ranks == sorted(ranks, reverse=True)
                top, more = columnar.breakdown(cur, *args[:5], 2, prefix)
                assert [r[dimension.order] for r in top] == ranks[:2]
                assert more == (len(ours) > 2)
        chosen = columnar.totals(cur, site, whole, filters)["visits"]
    assert (chosen > 0) == (filters.page != "/nowhere")


def _copied_events(store: ColumnStore) -> int:
    with store.reader() as cur:
        row = cur.execute("SELECT count(*) FROM hits").fetchone()
    return int(row[0]) if row else 0


def test_a_batch_that_fails_halfway_copies_nothing_and_the_next_try_copies_it_once(
    db: Database, seeded: tuple[int, list[helpers.Event]], store: ColumnStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, rows = seeded
    assert copying.sync(db, store, 500) == 500
    real = copying.MERGED
    monkeypatch.setattr(copying, "MERGED", "SELECT error('the process died here')")
    with pytest.raises(duckdb.Error):
        copying.sync(db, store, 500)
    assert (store.watermark, _copied_events(store)) == (500, 500)  # the hits of the batch rolled back
    monkeypatch.setattr(copying, "MERGED", real)
    assert _copy_all(db, store) == len(rows) - 500
    assert _copied_events(store) == len(rows)
    with store.reader() as cur:
        visits = cur.execute(
            "SELECT count(*), count(DISTINCT sk), sum(list_sum(page_views)) FROM visits"
        ).fetchone()
    assert visits == (
        len({e.session_id for e in rows}),
        len({e.session_id for e in rows}),
        sum(1 for e in rows if e.name == "pageview"),
    )


def _reopened_after(db: Database, directory: Path, change: Callable[[ColumnStore], None]) -> ColumnStore:
    """A store copied in full, closed, changed by ``change``, and opened again."""
    first = ColumnStore(directory, 256)
    first.open()
    _copy_all(db, first, 5000)
    change(first)
    first.close()
    again = ColumnStore(directory, 256)
    again.open()
    return again


def _damage(store: ColumnStore) -> None:
    store.close()
    store.path.write_bytes(b"not a database file" * 1000)


def _from_another_engine(store: ColumnStore) -> None:
    with store.writer() as cur:
        cur.execute("UPDATE meta SET engine = '0.0.1'")


@pytest.mark.parametrize("change", [_damage, _from_another_engine], ids=["damaged", "another-engine"])
def test_a_damaged_copy_or_one_of_another_engine_version_is_rebuilt_from_the_database(
    db: Database,
    seeded: tuple[int, list[helpers.Event]],
    tmp_path: Path,
    change: Callable[[ColumnStore], None],
) -> None:
    _, rows = seeded
    again = _reopened_after(db, tmp_path, change)
    try:
        assert (again.state, again.watermark, _copied_events(again)) == (BUILDING, 0, 0)
        assert _copy_all(db, again, 5000) == len(rows)
        assert again.state == READY
    finally:
        again.close()


def test_a_copy_held_by_another_process_stays_off(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(path)!r}); "
            "print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        store = ColumnStore(tmp_path, 256)
        store.open()
        assert store.state == OFF
        assert path.exists()  # left alone: it is not ours to rebuild
    finally:
        holder.communicate("", timeout=30)


def _filtered_source(start_server: StartServer, env: dict[str, str]) -> tuple[str, dict[str, Any]]:
    server = start_server(env=env)
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(server)
    site = owner.post("/api/sites", json={"name": "Shop", "domain": "shop.example.com"}).json()["id"]
    deadline = time.monotonic() + 30
    while True:
        health = owner.get("/api/health").json()["services"]["reports"]
        if health["columns"] != BUILDING or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    body = owner.get(f"/api/sites/{site}/reports/summary", params={"source": "google.com"}).json()
    owner.close()
    return body["source"], health


def test_filtered_reports_read_the_column_store_once_it_is_ready(start_server: StartServer) -> None:
    source, health = _filtered_source(start_server, {})
    assert (source, health["columns"], health["columns_pending_events"]) == ("columns", READY, 0)


def test_with_the_column_store_switched_off_filtered_reports_read_the_database(
    start_server: StartServer,
) -> None:
    source, health = _filtered_source(start_server, {"SIGHTLINE_REPORT_COLUMNS": "false"})
    assert (source, health["columns"], health["columns_pending_events"]) == ("events", OFF, None)


def test_a_time_series_too_long_for_a_lookup_list_searches_the_edges_with_the_same_figures(
    db: Database, seeded: tuple[int, list[helpers.Event]], store: ColumnStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, _ = seeded
    _copy_all(db, store, 5000)
    monkeypatch.setattr(columnar, "MAX_QUANTA", 3)
    spans = _spans()
    with db.read() as conn, store.reader() as cur:
        for filters in (Filters(), Filters(page="/pricing")):
            assert columnar.series(cur, site, spans, filters) == raw.series(conn, site, spans, filters)
