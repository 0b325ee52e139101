"""Every site at a glance (``GET /api/overview``) on a real server, for each log database and
store engine: each site's figures are the ones its own summary and time series answer, for every
range; a viewer sees only their sites, an API key only its own; a bad range names its field."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, sign_in
from tests.imports.helpers import csv_text, imported
from tests.reports import helpers
from tests.support.server import LiveServer, create_owner
from tests.support.team import client, close_member_clients, new_member

__all__ = ["close_member_clients"]

ZONES = ["UTC", "America/New_York", "Asia/Kolkata"]
NOW = datetime.now(UTC)
ENGINES = [
    ("sqlite", "duckdb"),
    ("postgresql", "duckdb"),
    ("sqlite", "clickhouse"),
    ("postgresql", "clickhouse"),
]
RANGES = ["today", "yesterday", "7d", "30d", "month", "last_month", "12mo", "all"]


@pytest.fixture(scope="module", params=ENGINES, ids=["-".join(pair) for pair in ENGINES])
def console_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    backend, engine = request.param
    directory = tmp_path_factory.mktemp(f"overview-{backend}-{engine}")
    env = {"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true"}
    if engine == "clickhouse":
        clickhouse = request.getfixturevalue("clickhouse")
        env["SIGHTLINE_EVENTS_URL"] = clickhouse.url(f"overview_{backend}_{uuid.uuid4().hex[:8]}")
    server = LiveServer(directory / "data", database_url_for(request, backend, directory), env=env)
    server.start()
    create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def seeded(console_server: LiveServer) -> Iterator[tuple[httpx.Client, dict[str, int]]]:
    """Three sites in three time zones with 40 days of events, an empty site, and a site with
    imported history only (days 2 to 44 before today)."""
    owner = sign_in(console_server)
    sites: dict[str, int] = {}
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    for n, zone in enumerate(ZONES):
        created = owner.post("/api/sites", json={"name": f"Site {zone}", "domain": f"glance{n}.example.com"})
        assert created.status_code == 201, created.text
        site_id = created.json()["id"]
        assert owner.patch(f"/api/sites/{site_id}", json={"timezone": zone}).status_code == 200
        sites[zone] = site_id
        rows = helpers.generate(site_id, NOW - timedelta(minutes=20), visits=300 + 100 * n, days=40, seed=n)
        helpers.insert_events(db, rows)
    db.dispose()
    empty = owner.post("/api/sites", json={"name": "Quiet", "domain": "glance-quiet.example.com"})
    sites["quiet"] = empty.json()["id"]
    history = owner.post("/api/sites", json={"name": "Imported", "domain": "glance-imported.example.com"})
    sites["imported"] = history.json()["id"]
    days = [(NOW.date() - timedelta(days=n)).isoformat() for n in range(2, 45)]
    figures = csv_text(["date", "visitors", "visits", "pageviews"], [(d, 30, 40, 90) for d in days])
    imported(owner, sites["imported"], "history.csv", figures.encode())
    helpers.wait_caught_up(owner)
    yield owner, sites
    owner.close()


def _overview(reader: httpx.Client, **params: str) -> dict[str, Any]:
    response = reader.get("/api/overview", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _expected(owner: httpx.Client, site_id: int, params: dict[str, str]) -> dict[str, Any]:
    """What the site's own dashboard answers for the period: the summary (with its comparison)
    and the time series."""
    summary = owner.get(f"/api/sites/{site_id}/reports/summary", params={**params, "compare": "true"}).json()
    series = owner.get(f"/api/sites/{site_id}/reports/timeseries", params=params).json()
    now, before = summary["current"]["visitors"], summary["previous"]["visitors"]
    return {
        "visitors": now,
        "pageviews": summary["current"]["pageviews"],
        "change": round((now - before) / before, 4) if before else None,
        "series": [{"date": p["time"], "visitors": p["visitors"]} for p in series["points"]],
        "interval": series["interval"],
        "from": summary["range"]["from"],
        "to": summary["range"]["to"],
    }


@pytest.mark.parametrize("name", [*RANGES, "custom"])
def test_each_sites_figures_are_those_of_its_own_summary_and_time_series(
    seeded: tuple[httpx.Client, dict[str, int]], name: str
) -> None:
    owner, sites = seeded
    params = {"range": name}
    if name == "custom":
        today = NOW.date()
        params.update(
            {"from": (today - timedelta(days=12)).isoformat(), "to": (today - timedelta(days=3)).isoformat()}
        )
    body = _overview(owner, **params)
    assert body["range"] == name
    by_id = {site["site_id"]: site for site in body["sites"]}
    assert set(by_id) == set(sites.values())
    for site_id in sites.values():
        expected = _expected(owner, site_id, params)
        shown = by_id[site_id]
        assert {key: shown[key] for key in expected} == expected, (name, site_id)
    if name in ("7d", "30d", "custom"):
        assert all(by_id[sites[zone]]["visitors"] > 0 for zone in ZONES)
    assert by_id[sites["quiet"]]["visitors"] == 0
    assert by_id[sites["quiet"]]["change"] is None
    if name in ("7d", "30d", "custom"):
        assert by_id[sites["imported"]]["visitors"] > 0  # imported history, as the summary adds it
    ranked = [site["visitors"] for site in body["sites"]]
    assert ranked == sorted(ranked, reverse=True)


def test_a_one_day_range_is_hour_by_hour_and_a_longer_one_day_by_day(
    seeded: tuple[httpx.Client, dict[str, int]],
) -> None:
    owner, _ = seeded
    today = _overview(owner, range="today")
    assert {site["interval"] for site in today["sites"]} == {"hour"}
    assert all(len(site["series"]) >= 1 for site in today["sites"])
    week = _overview(owner, range="7d")
    assert {site["interval"] for site in week["sites"]} == {"day"}
    assert all(len(site["series"]) == 7 for site in week["sites"])
    assert all(site["series"][0]["date"] == site["from"] for site in week["sites"])


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"range": "week"}, "range"),
        ({"range": "custom"}, "from"),
        ({"range": "custom", "from": "2026-03-02", "to": "2026-03-01"}, "to"),
        ({"range": "7d", "from": "2026-01-01"}, "from"),
        ({"colour": "blue"}, "colour"),
        ({"page": "/x"}, "page"),
    ],
)
def test_a_bad_parameter_is_refused_with_422_naming_it(
    seeded: tuple[httpx.Client, dict[str, int]], params: dict[str, str], field: str
) -> None:
    owner, _ = seeded
    response = owner.get("/api/overview", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == {
        "code": "invalid_parameter",
        "message": response.json()["error"]["message"],
        "field": field,
    }


def test_a_viewer_given_one_site_sees_that_site_only(
    console_server: LiveServer, seeded: tuple[httpx.Client, dict[str, int]]
) -> None:
    owner, sites = seeded
    viewer = new_member(console_server, owner, "viewer", [sites["UTC"]])
    body = _overview(viewer, range="30d")
    assert [site["site_id"] for site in body["sites"]] == [sites["UTC"]]
    mine = next(s for s in _overview(owner, range="30d")["sites"] if s["site_id"] == sites["UTC"])
    assert body["sites"][0] == mine
    admin = new_member(console_server, owner, "admin")
    assert len(_overview(admin)["sites"]) == len(sites)


def test_an_api_key_reads_the_overview_of_its_sites_only(
    console_server: LiveServer, seeded: tuple[httpx.Client, dict[str, int]]
) -> None:
    owner, sites = seeded
    scoped = owner.post("/api/keys", json={"name": "one", "site_id": sites["Asia/Kolkata"]}).json()
    every = owner.post("/api/keys", json={"name": "all"}).json()
    for key, expected in ((scoped, [sites["Asia/Kolkata"]]), (every, sorted(sites.values()))):
        reader = client(console_server)
        reader.headers["Authorization"] = f"Bearer {key['key']}"
        del reader.headers["Origin"]
        body = _overview(reader, range="7d")
        assert sorted(site["site_id"] for site in body["sites"]) == expected
    anonymous = client(console_server)
    assert anonymous.get("/api/overview").status_code == 401


def test_an_owner_without_sites_gets_an_empty_list(console_server: LiveServer) -> None:
    email = f"o{uuid.uuid4().hex[:8]}@example.com"
    create_owner(console_server, email, "a long enough password here")
    alone = sign_in(console_server, email, "a long enough password here")
    try:
        assert _overview(alone, range="30d")["sites"] == []
        assert alone.get("/api/overview", params={"range": "custom"}).status_code == 422
    finally:
        alone.close()
