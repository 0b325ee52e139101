"""The reports API's parameters, ownership and time zones, on a real server (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.conftest import sign_in
from tests.support.server import LiveServer, create_owner


@pytest.fixture(scope="module")
def other(console_server: LiveServer) -> Iterator[httpx.Client]:
    """A second owner, signed in."""
    create_owner(console_server, "other-reports@example.com", "another long enough password")
    client = sign_in(console_server, "other-reports@example.com", "another long enough password")
    yield client
    client.close()


@pytest.fixture
def site_id(owner: httpx.Client) -> int:
    sites = owner.get("/api/sites").json()["sites"]
    existing = [s["id"] for s in sites if s["domain"] == "reports-api.example.com"]
    if existing:
        return int(existing[0])
    created = owner.post("/api/sites", json={"name": "Reports", "domain": "reports-api.example.com"})
    assert created.status_code == 201
    return int(created.json()["id"])


@pytest.mark.parametrize(
    ("report", "params", "field"),
    [
        ("summary", {"range": "week"}, "range"),
        ("summary", {"range": "custom"}, "from"),
        ("summary", {"range": "custom", "from": "2026-01-31"}, "to"),
        ("summary", {"range": "custom", "from": "2026-02-30", "to": "2026-03-01"}, "from"),
        ("summary", {"range": "custom", "from": "2026-03-02", "to": "2026-03-01"}, "to"),
        ("summary", {"range": "custom", "from": "2020-01-01", "to": "2026-01-01"}, "to"),
        ("summary", {"range": "7d", "from": "2026-01-01"}, "from"),
        ("summary", {"compare": "yes"}, "compare"),
        ("summary", {"page": "pricing"}, "page"),
        ("summary", {"page": ""}, "page"),
        ("summary", {"source": "x" * 256}, "source"),
        ("summary", {"event": "a\x01b"}, "event"),
        ("summary", {"colour": "blue"}, "colour"),
        ("timeseries", {"dimension": "pages"}, "dimension"),
        ("breakdown", {}, "dimension"),
        ("breakdown", {"dimension": "planets"}, "dimension"),
        ("breakdown", {"dimension": "pages", "limit": "0"}, "limit"),
        ("breakdown", {"dimension": "pages", "limit": "101"}, "limit"),
        ("breakdown", {"dimension": "pages", "limit": "ten"}, "limit"),
        ("breakdown", {"dimension": "props"}, "name"),
        ("breakdown", {"dimension": "pages", "name": "signup"}, "name"),
        ("realtime", {"range": "7d"}, "range"),
    ],
)
def test_a_bad_parameter_is_refused_with_422_naming_it(
    owner: httpx.Client, site_id: int, report: str, params: dict[str, str], field: str
) -> None:
    response = owner.get(f"/api/sites/{site_id}/reports/{report}", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert response.json()["error"]["code"] == "invalid_parameter"


def test_a_repeated_parameter_is_refused(owner: httpx.Client, site_id: int) -> None:
    response = owner.get(f"/api/sites/{site_id}/reports/summary?range=7d&range=30d")
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "range"


@pytest.mark.parametrize("report", ["summary", "timeseries", "breakdown?dimension=pages", "realtime"])
def test_another_owners_site_and_unknown_sites_are_not_found(
    other: httpx.Client, site_id: int, report: str
) -> None:
    assert other.get(f"/api/sites/{site_id}/reports/{report}").status_code == 404
    assert other.get(f"/api/sites/999999/reports/{report}").status_code == 404


def test_reports_need_a_session(console_server: LiveServer, site_id: int) -> None:
    with console_server.client() as anonymous:
        assert anonymous.get(f"/api/sites/{site_id}/reports/summary").status_code == 401


def test_an_empty_site_reports_zeros_with_every_field(owner: httpx.Client, site_id: int) -> None:
    body = owner.get(
        f"/api/sites/{site_id}/reports/summary", params={"range": "30d", "compare": "true"}
    ).json()
    zero = {
        "visitors": 0,
        "visits": 0,
        "pageviews": 0,
        "views_per_visit": 0.0,
        "bounce_rate": 0.0,
        "visit_duration": 0,
    }
    assert body["current"] == zero
    assert body["previous"] == zero
    series = owner.get(f"/api/sites/{site_id}/reports/timeseries", params={"range": "today"}).json()
    assert series["interval"] == "hour"
    assert all(p["visits"] == 0 for p in series["points"])
    assert owner.get(f"/api/sites/{site_id}/reports/breakdown?dimension=sources").json()["rows"] == []


def test_a_site_starts_in_utc_and_takes_any_iana_time_zone(owner: httpx.Client, site_id: int) -> None:
    created = owner.post("/api/sites", json={"name": "Zone", "domain": "zone-default.example.com"})
    assert created.json()["timezone"] == "UTC"
    changed = owner.patch(f"/api/sites/{site_id}", json={"timezone": "Europe/Berlin"})
    assert changed.status_code == 200
    assert changed.json()["timezone"] == "Europe/Berlin"
    body = owner.get(f"/api/sites/{site_id}/reports/summary", params={"range": "today"}).json()
    assert body["timezone"] == "Europe/Berlin"
    start = datetime.fromisoformat(body["range"]["start"]).astimezone(ZoneInfo("Europe/Berlin"))
    assert (start.hour, start.minute) == (0, 0)
    assert start.date() == datetime.now(ZoneInfo("Europe/Berlin")).date()


def test_a_sites_weeks_start_on_monday_and_may_start_on_sunday_or_saturday(
    owner: httpx.Client, site_id: int
) -> None:
    created = owner.post("/api/sites", json={"name": "Weeks", "domain": "weeks-default.example.com"})
    assert created.json()["week_start"] == "monday"
    for day in ("sunday", "saturday", "monday"):
        changed = owner.patch(f"/api/sites/{site_id}", json={"week_start": day})
        assert changed.status_code == 200, changed.text
        assert changed.json()["week_start"] == day
        listed = {s["id"]: s for s in owner.get("/api/sites").json()["sites"]}
        assert listed[site_id]["week_start"] == day


@pytest.mark.parametrize("day", ["Monday", "tuesday", "", 1, None, "x" * 30])
def test_an_unknown_first_day_of_the_week_is_refused_naming_the_field(
    owner: httpx.Client, site_id: int, day: object
) -> None:
    response = owner.patch(f"/api/sites/{site_id}", json={"week_start": day})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == "week_start"


@pytest.mark.parametrize("zone", ["Mars/Olympus", "localtime", "", "../../etc/passwd", 5, None])
def test_an_unknown_time_zone_is_refused(owner: httpx.Client, site_id: int, zone: object) -> None:
    response = owner.patch(f"/api/sites/{site_id}", json={"timezone": zone})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "timezone"
