"""Journeys order a visit's events by a key relative to its first hit of the start (cheaper for the
engine than (time, id) itself), and by (time, id) when that key cannot order them exactly: events
of the same moment logged more than 2^25 ids, or more than 38 hours, away from the first hit."""

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
from tests.support.store_rows import EVENTS

SITE = 1
START = datetime(2026, 11, 2, 9, tzinfo=UTC)
SPAN = (datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))


def _store(far: int, later: timedelta) -> duckdb.DuckDBPyConnection:
    """One visit: ``/`` (id 10), then four events of one moment ``later``, logged ``far`` ids later,
    written to the table in an order that is not the log's."""
    con = duckdb.connect()
    for statement in schema.DUCKDB:
        con.execute(statement)
    moment = START + later
    steps = ((3, "pageview", "/c"), (1, "pageview", "/a"), (4, "signup", "/c"), (2, "pageview", "/b"))
    events = [(START, 10, "pageview", "/")] + [(moment, far + n, name, path) for n, name, path in steps]
    for at, id_, name, path in events:
        con.execute(
            f"INSERT INTO {EVENTS} VALUES ($site, $t, $id, 7, 8, $name, $path, [], $start, '(none)', '', '', "
            "'', 'Chrome', 'Linux', 'desktop', '(none)', '', '', 'direct')",
            {"site": SITE, "t": micros(at), "id": id_, "name": name, "path": path, "start": micros(START)},
        )
    return con


@pytest.mark.parametrize(
    ("far", "later", "loose"),
    [
        (100, timedelta(minutes=1), False),
        (50_000_000, timedelta(minutes=1), True),
        (100, timedelta(hours=40), True),
    ],
)
def test_events_of_one_moment_follow_the_log_order_however_far_their_ids_and_times_are(
    far: int, later: timedelta, loose: bool
) -> None:
    con = _store(far, later)
    seen: list[str] = []
    run = logged_run(con, seen)
    got = journeys(run, DUCKDB, SITE, SPAN, Filters(), Step("page", "/"), "next", 3)
    assert got == [{"steps": ["page:/a", "page:/b", "page:/c"], "visitors": 1}]
    last = journeys(run, DUCKDB, SITE, SPAN, Filters(), Step("event", "signup"), "previous", 3)
    assert last == [{"steps": ["page:/c", "page:/b", "page:/a"], "visitors": 1}]
    # Steps 2^25 ids or 38 hours from the first hit: the relative key is loose, the exact one
    # answers; from "signup", whose nearest events are a few ids and no time away, it is not ("/"
    # is, but it is no step of the path).
    assert len(seen) == (3 if loose else 2)
