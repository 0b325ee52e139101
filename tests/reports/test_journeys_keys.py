"""Journeys order a visit's events by a key relative to its first hit of the start (cheaper for the
engine than (time, id) itself), and by (time, id) when that key cannot order them exactly: events
of the same moment logged more than a million ids away from the first hit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from sightline.reports.filters import Filters
from sightline.reports.journeys import journeys
from sightline.reports.steps import Step
from sightline.store import schema
from sightline.store.dialects import DUCKDB
from sightline.store.feed import micros
from tests.reports.logged import logged_run

SITE = 1
START = datetime(2026, 11, 2, 9, tzinfo=UTC)
SPAN = (datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))


def _store(far: int) -> duckdb.DuckDBPyConnection:
    """One visit: ``/`` (id 10), then four events of one moment logged ``far`` ids later, written to
    the table in an order that is not the log's."""
    con = duckdb.connect()
    for statement in schema.DUCKDB:
        con.execute(statement)
    moment = START + timedelta(minutes=1)
    later = ((3, "pageview", "/c"), (1, "pageview", "/a"), (4, "signup", "/c"), (2, "pageview", "/b"))
    events = [(START, 10, "pageview", "/")] + [(moment, far + n, name, path) for n, name, path in later]
    for at, id_, name, path in events:
        con.execute(
            "INSERT INTO events VALUES ($site, $t, $id, 7, 8, $name, $path, [], $start, '(none)', '', '', "
            "'', 'Chrome', 'Linux', 'desktop', '(none)', '', '')",
            {"site": SITE, "t": micros(at), "id": id_, "name": name, "path": path, "start": micros(START)},
        )
    return con


@pytest.mark.parametrize("far", [100, 5_000_000])
def test_events_of_one_moment_follow_the_log_order_however_far_their_ids_are(far: int) -> None:
    con = _store(far)
    seen: list[str] = []
    run = logged_run(con, seen)
    got = journeys(run, DUCKDB, SITE, SPAN, Filters(), Step("page", "/"), "next", 3)
    assert got == [{"steps": ["page:/a", "page:/b", "page:/c"], "visitors": 1}]
    last = journeys(run, DUCKDB, SITE, SPAN, Filters(), Step("event", "signup"), "previous", 3)
    assert last == [{"steps": ["page:/c", "page:/b", "page:/a"], "visitors": 1}]
    # Ids a million apart from the first hit: the relative key is loose, the exact one answers.
    assert len(seen) == (4 if far > 2**20 else 2)
