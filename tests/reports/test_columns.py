"""The column store: the same figures as the database for every report and filter, copied once
per batch even when a batch fails halfway, rebuilt when damaged or made by another version, and
left off (reports read the database) when another process holds it or the setting says so."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sightline.reports import raw
from sightline.reports.columns import queries as columnar
from sightline.reports.columns import sync as copying
from sightline.reports.columns.store import READY, ColumnStore
from sightline.reports.params import DIMENSIONS
from sightline.reports.raw import Filters, Span
from sightline.reports.rollup import RollupJob
from sightline.storage import Database
from tests.reports import helpers

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
        assert columnar.series(cur, site, spans, filters) == raw.series(
            conn, site, spans, filters, db.dialect
        )
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
