"""CSV exports: report tables match the report API, raw events stream from the log, cells are safe."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from sightline.database import Database, open_database
from tests.reports.helpers import Event, insert_events, pageview, wait_caught_up
from tests.support.server import LiveServer
from tests.support.team import client, close_member_clients

__all__ = ["close_member_clients"]


@pytest.fixture
def server_db(console_server: LiveServer) -> Iterator[Database]:
    url = console_server.database_url or f"sqlite:///{console_server.data_dir / 'sightline.db'}"
    database = open_database(url)
    yield database
    database.dispose()


def _rows(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    return list(csv.DictReader(io.StringIO(response.text)))


@pytest.fixture
def seeded(owner: httpx.Client, server_db: Database) -> tuple[int, list[Event]]:
    site_id = int(
        owner.post(
            "/api/sites", json={"name": "Shop", "domain": f"x{uuid.uuid4().hex[:8]}.example.com"}
        ).json()["id"]
    )
    now = datetime.now(UTC).replace(microsecond=0)
    rows = [
        replace(pageview(site_id, now - timedelta(hours=30), "a", "/", "google.com"), language="de"),
        pageview(site_id, now - timedelta(hours=29), "a", "/pricing"),
        pageview(site_id, now - timedelta(hours=5), "b", "/"),
        pageview(site_id, now - timedelta(hours=4), "c", '=HYPERLINK("http://evil")', "=cmd"),
        pageview(site_id, now - timedelta(days=40), "old", "/ancient"),
    ]
    insert_events(server_db, rows)
    wait_caught_up(owner)
    return site_id, rows


def test_a_breakdown_exports_the_same_rows_as_the_report_api(
    owner: httpx.Client, seeded: tuple[int, list[Event]]
) -> None:
    site_id, _ = seeded
    query = "dimension=pages&range=7d&limit=100"
    answer = owner.get(f"/api/sites/{site_id}/reports/breakdown?{query}").json()
    rows = _rows(owner.get(f"/api/sites/{site_id}/reports/export/breakdown.csv?{query}"))
    assert [r["value"] for r in rows] == [
        ("'" + r["value"]) if r["value"].startswith("=") else r["value"] for r in answer["rows"]
    ]
    assert [int(r["pageviews"]) for r in rows] == [r["pageviews"] for r in answer["rows"]]
    assert any(r["value"].startswith("'=HYPERLINK") for r in rows), "a formula is written as text"
    bad = owner.get(f"/api/sites/{site_id}/reports/export/breakdown.csv?dimension=nope")
    assert bad.status_code == 422


def test_the_summary_and_time_series_export_their_figures(
    owner: httpx.Client, seeded: tuple[int, list[Event]]
) -> None:
    site_id, _ = seeded
    summary = owner.get(f"/api/sites/{site_id}/reports/summary?range=7d&compare=true").json()
    rows = {
        r["metric"]: r
        for r in _rows(owner.get(f"/api/sites/{site_id}/reports/export/summary.csv?range=7d&compare=true"))
    }
    assert int(rows["visitors"]["current"]) == summary["current"]["visitors"] == 3
    assert "previous" in rows["visitors"]
    points = _rows(owner.get(f"/api/sites/{site_id}/reports/export/timeseries.csv?range=7d"))
    assert sum(int(p["pageviews"]) for p in points) == 4
    assert len(points) == len(owner.get(f"/api/sites/{site_id}/reports/timeseries?range=7d").json()["points"])


def test_the_raw_events_of_a_period_stream_from_the_log(
    owner: httpx.Client, seeded: tuple[int, list[Event]]
) -> None:
    site_id, inserted = seeded
    rows = _rows(owner.get(f"/api/sites/{site_id}/events.csv?range=7d"))
    expected = sorted((e for e in inserted if e.visitor_id != "old"), key=lambda e: e.time)
    assert [r["visitor_id"] for r in rows] == [e.visitor_id for e in expected]
    assert [r["event"] for r in rows] == ["pageview"] * 4
    assert rows[0]["referrer_source"] == "google.com"
    assert [r["language"] for r in rows] == ["de", "", "", ""]
    assert rows[-1]["path"] == '\'=HYPERLINK("http://evil")'
    assert rows[-1]["referrer_source"] == "'=cmd"
    assert datetime.fromisoformat(rows[0]["time"].replace("Z", "+00:00")) == expected[0].time
    assert (
        len(_rows(owner.get(f"/api/sites/{site_id}/events.csv?range=custom&from=2000-01-01&to=2000-01-02")))
        == 0
    )
    refused = owner.get(f"/api/sites/{site_id}/events.csv?range=7d&page=/")
    assert refused.status_code == 422


def test_api_keys_and_shared_links_export_tables_but_never_raw_events(
    owner: httpx.Client, console_server: LiveServer, seeded: tuple[int, list[Event]]
) -> None:
    site_id, _ = seeded
    key = owner.post("/api/keys", json={"name": "exports", "site_id": site_id}).json()["key"]
    reader = client(console_server)
    reader.headers["Authorization"] = f"Bearer {key}"
    assert _rows(reader.get(f"/api/sites/{site_id}/reports/export/breakdown.csv?dimension=sources"))
    assert reader.get(f"/api/sites/{site_id}/events.csv").status_code == 401
    link = (
        owner.post(f"/api/sites/{site_id}/shares", json={}).json()["url"].removeprefix(console_server.origin)
    )
    visitor = client(console_server)
    assert _rows(visitor.get(f"{link}/api/reports/export/breakdown.csv?dimension=pages&range=7d"))
    assert visitor.get(f"{link}/api/reports/../../events.csv").status_code == 404
