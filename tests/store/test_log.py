"""Reading the durable log in batches: every column as the log holds it, on SQLite (each row joined
into one text and split by Arrow) and PostgreSQL (tuples), values holding the separator included."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import orjson

from sightline.database import Database
from sightline.store.epoch import micros
from sightline.store.log import SEPARATOR, LogReader
from tests.reports import helpers

AT = datetime(2026, 3, 29, 1, 30, 0, 7, tzinfo=UTC)


def _read_all(db: Database, limit: int) -> list[dict[str, object]]:
    reader, after, out = LogReader(db), 0, []
    while batch := reader.read(after, None, limit).to_pylist():
        out += batch
        after = int(str(batch[-1]["id"]))
    return out


def _seed(db: Database, paths: list[str]) -> int:
    _, site = helpers.create_site(db, "log.example.com")
    rows = [helpers.pageview(site, AT + timedelta(seconds=n), f"v{n}", path) for n, path in enumerate(paths)]
    rows[0] = replace(rows[0], referrer_source="google.com", utm_campaign="spring", props={"plan": "pro"})
    helpers.insert_events(db, rows)
    return site


def test_a_batch_reads_every_column_the_store_needs_with_missing_values_as_empty(db: Database) -> None:
    site = _seed(db, ["/", "/pricing"])
    first, second = _read_all(db, 10)
    assert (first["site_id"], first["time"], first["visitor_id"], first["session_id"]) == (
        site,
        micros(AT),
        "v0",
        "s-v0",
    )
    assert (first["name"], first["path"], first["referrer_source"], first["utm_campaign"]) == (
        "pageview",
        "/",
        "google.com",
        "spring",
    )
    assert orjson.loads(str(first["props"])) == {"plan": "pro"}
    assert (first["browser"], first["os"], first["device_type"]) == ("Chrome", "Linux", "desktop")
    assert not second["referrer_source"]
    assert not second["props"]
    assert second["time"] == micros(AT + timedelta(seconds=1))


def test_a_value_holding_the_column_separator_is_read_whole(db: Database) -> None:
    paths = ["/a", f"/odd{SEPARATOR}path{SEPARATOR}", "/b", "/c"]
    _seed(db, paths)
    assert [row["path"] for row in _read_all(db, 3)] == paths
    assert [row["path"] for row in _read_all(db, 1)] == paths
