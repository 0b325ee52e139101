"""The world the conversions tests read (``test_conversions.py``, ``test_retention_journeys.py``):
a real server on each pair of engines (SQLite with DuckDB, PostgreSQL with ClickHouse's SQL through
embedded chDB), two sites in two time zones with goals and 30 days of generated visits, some ending
in a purchase, and the raw events for the oracle."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, sign_in
from tests.reports import helpers
from tests.reports.helpers import Event
from tests.support.server import LiveServer, create_owner

NOW = datetime.now(UTC)
ENGINES = [("sqlite", "duckdb"), ("postgresql", "clickhouse")]
ZONES = ["UTC", "America/New_York"]
WEEKDAYS = {"monday": 0, "sunday": 6, "saturday": 5}  # a site's first day of the week: Monday is 0
GOALS: list[dict[str, Any]] = [
    {"name": "Pricing page", "kind": "page", "match": "exact", "path": "/pricing"},
    {"name": "Blog", "kind": "page", "match": "prefix", "path": "/blog/"},
    {"name": "Any docs", "kind": "page", "match": "glob", "path": "/d*s"},
    {"name": "Signup", "kind": "event", "event": "signup"},
    {"name": "Pro signup", "kind": "event", "event": "signup", "prop": {"key": "plan", "value": "pro"}},
    {
        "name": "Purchase",
        "kind": "event",
        "event": "purchase",
        "revenue": {"prop": "amount", "currency": "EUR"},
    },
    {"name": "Never", "kind": "event", "event": "nobody-sends-this"},
]


def with_purchases(rows: list[Event], seed: int) -> list[Event]:
    """Some visits end with a purchase: amounts with cents, whole ones, and one that is no number."""
    rng = random.Random(seed)
    out = list(rows)
    last: dict[str, Event] = {}
    for e in rows:
        last[e.session_id] = e
    for e in last.values():
        if rng.random() < 0.15:
            amount = rng.choice([19.99, 5, 120.5, "n/a"])
            out.append(
                replace(
                    e,
                    time=e.time + timedelta(seconds=3),
                    name="purchase",
                    props={"amount": amount, "plan": "pro"},
                )
            )
    out.sort(key=lambda e: (e.session_id, e.time))
    return out


class Seeded:
    def __init__(
        self,
        owner: httpx.Client,
        sites: dict[str, int],
        rows: dict[str, list[Event]],
        goals: dict[str, dict[int, dict[str, Any]]],
    ) -> None:
        self.owner, self.sites, self.rows, self.goals = owner, sites, rows, goals

    def get(self, zone: str, report: str, **params: Any) -> dict[str, Any]:
        response = self.owner.get(f"/api/sites/{self.sites[zone]}/reports/{report}", params=params)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def days(self, zone: str, first: int, last: int) -> tuple[dict[str, str], tuple[datetime, datetime]]:
        today = NOW.astimezone(ZoneInfo(zone)).date()
        a, b = today - timedelta(days=first), today - timedelta(days=last)
        return {"range": "custom", "from": a.isoformat(), "to": b.isoformat()}, helpers.span_of(a, b, zone)


@pytest.fixture(scope="module", params=ENGINES, ids=["-".join(pair) for pair in ENGINES])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    backend, engine = request.param
    directory = tmp_path_factory.mktemp(f"conversions-{backend}-{engine}")
    env = {"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true"}
    if engine == "clickhouse":
        env["SIGHTLINE_EVENTS_URL"] = f"chdb://{directory / 'clickhouse'}"
    live = LiveServer(directory / "data", database_url_for(request, backend, directory), env=env)
    live.start()
    create_owner(live, OWNER_EMAIL, OWNER_PASSWORD)
    yield live
    live.stop()


@pytest.fixture(scope="module")
def seeded(server: LiveServer) -> Iterator[Seeded]:
    owner = sign_in(server)
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    sites: dict[str, int] = {}
    rows: dict[str, list[Event]] = {}
    goals: dict[str, dict[int, dict[str, Any]]] = {}
    for n, zone in enumerate(ZONES):
        site_id = owner.post("/api/sites", json={"name": zone, "domain": f"conv{n}.example.com"}).json()["id"]
        assert owner.patch(f"/api/sites/{site_id}", json={"timezone": zone}).status_code == 200
        sites[zone] = site_id
        goals[zone] = {}
        for goal in GOALS:
            created = owner.post(f"/api/sites/{site_id}/goals", json=goal)
            assert created.status_code == 201, created.text
            goals[zone][created.json()["id"]] = goal
        rows[zone] = with_purchases(
            helpers.generate(site_id, NOW - timedelta(minutes=20), 400, 30, seed=10 + n), n
        )
        helpers.insert_events(db, rows[zone])
    db.dispose()
    helpers.wait_caught_up(owner)
    yield Seeded(owner, sites, rows, goals)
    owner.close()


def goal_id(s: Seeded, zone: str, name: str) -> int:
    return next(i for i, g in s.goals[zone].items() if g["name"] == name)
