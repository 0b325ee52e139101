"""A backlog fed into ClickHouse over HTTP, as after an outage or an upgrade: a server whose log
(SQLite or PostgreSQL) holds more events than one feeding batch feeds them through clickhouse-
connect's HTTP client into the stand-in that enforces a server's default limits (or the server
``SIGHTLINE_TEST_CLICKHOUSE_URL`` names), and then answers every report.

The default is 60,000 events: a first batch of 20,000, then a catch-up batch with the rest (its
visit lookup alone would pass the server's limits as a bound parameter); set
``SIGHTLINE_TEST_BACKLOG_EVENTS=1000000`` for the million-event run (docs/scaling.md)."""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from bench.reports_data import generate
from sqlalchemy import insert

from sightline.database import open_database
from sightline.database.tables.events import EVENT_COLUMNS
from sightline.database.tables.events import events as events_table
from sightline.reports.params import DIMENSIONS, NAMED, NAMED_PATHS
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, sign_in
from tests.support.server import LiveServer, create_owner

EVENTS = int(os.environ.get("SIGHTLINE_TEST_BACKLOG_EVENTS", "60000"))
END = datetime.now(UTC)


def _fill(url: str, site: int) -> int:
    """The backlog written straight into the log; returns the pageviews among it."""
    pageviews = 0
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        marks = ", ".join("?" for _ in EVENT_COLUMNS)
        statement = f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) VALUES ({marks})"
        for rows in generate(site, EVENTS, 20, END):
            pageviews += sum(1 for row in rows if row[4] == "pageview")
            with conn:
                conn.executemany(statement, rows)
        conn.close()
        return pageviews
    db = open_database(url, migrate=False)
    try:
        for rows in generate(site, EVENTS, 20, END):
            pageviews += sum(1 for row in rows if row[4] == "pageview")
            values = [dict(zip(EVENT_COLUMNS, row, strict=True)) for row in rows]
            for value in values:
                value["time"] = datetime.fromisoformat(value["time"]).replace(tzinfo=UTC)
            with db.begin() as writing:
                writing.execute(insert(events_table), values)
    finally:
        db.dispose()
    return pageviews


def _reports(site: int) -> list[tuple[str, dict[str, Any]]]:
    asked: list[tuple[str, dict[str, Any]]] = [
        ("summary", {"range": "30d"}),
        ("timeseries", {"range": "30d"}),
        ("vitals", {"range": "30d"}),
        ("heatmap", {"range": "30d", "path": "/", "viewport": "desktop"}),
        ("realtime", {}),
    ]
    for dimension in DIMENSIONS:
        extra: dict[str, Any] = {}
        if dimension in NAMED:
            extra["name"] = "/" if dimension in NAMED_PATHS else "signup"
        asked.append(("breakdown", {"range": "30d", "dimension": dimension, **extra}))
    return asked


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_backlog_is_fed_over_http_and_every_report_answers(
    request: pytest.FixtureRequest, tmp_path: Path, clickhouse: Any, backend: str
) -> None:
    env = {"SIGHTLINE_EVENTS_URL": clickhouse.url(f"backlog_{backend}_{uuid.uuid4().hex[:8]}")}
    url = database_url_for(request, backend, tmp_path)
    server = LiveServer(tmp_path / "data", url, env=env)
    server.start()
    try:
        create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        owner = sign_in(server)
        site = owner.post("/api/sites", json={"name": "Backlog", "domain": "backlog.example.com"}).json()[
            "id"
        ]
        pageviews = _fill(url, site)
        started = time.monotonic()
        deadline = started + max(120, EVENTS / 1000)
        store: dict[str, Any] = {}
        while time.monotonic() < deadline:
            store = owner.get("/api/health").json()["services"]["store"]
            if store["fed_events"] >= EVENTS:
                break
            time.sleep(1)
        assert store["fed_events"] == EVENTS, store
        print(f"{backend}: {EVENTS} events fed over HTTP in {time.monotonic() - started:.0f} s")
        for name, params in _reports(site):
            answer = owner.get(f"/api/sites/{site}/reports/{name}", params=params)
            assert answer.status_code == 200, (name, params, answer.text)
        summary = owner.get(f"/api/sites/{site}/reports/summary", params={"range": "30d"}).json()
        assert summary["current"]["pageviews"] == pageviews
        owner.close()
    finally:
        server.stop()
