"""Channels from a real server, on both store engines and both databases (SQLite with DuckDB,
PostgreSQL with ClickHouse's SQL through embedded chDB), checked against the raw events
(``oracle.channel_of``): the breakdown, the filter (is, is not, contains) alone and beside others,
comparisons, an API key and a shared link."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from sightline.channels import CHANNELS
from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, sign_in
from tests.reports import helpers, oracle
from tests.reports.helpers import Event
from tests.support.server import LiveServer, create_owner

NOW = datetime.now(UTC)
ENGINES = [("sqlite", "duckdb"), ("postgresql", "clickhouse")]
# (source as ingest stored it, utm_source, utm_medium): every channel, by referrer and by tags.
PLACES: list[tuple[str | None, str | None, str | None]] = [
    (None, None, None),
    ("Google", None, None),
    ("DuckDuckGo", None, None),
    ("google", "google", "cpc"),  # a landing page with utm tags, or an ad click's id
    ("Bing", None, "ppc"),
    ("Facebook", "fb", "paid"),
    ("linkedin", "linkedin", "paid_social"),
    ("Twitter", None, None),
    ("Hacker News", None, None),
    ("ChatGPT", None, None),
    ("chatgpt.com", "chatgpt.com", None),
    ("Perplexity", None, None),
    ("claude.ai", None, None),
    ("Gemini", None, None),
    ("copilot.microsoft.com", None, None),
    ("newsletter", "newsletter", "email"),
    ("Gmail", None, None),
    (None, None, "email"),
    ("blog.example.org", None, None),
    ("partner.example", "partner.example", "referral"),
]


def generate(site_id: int, visits: int, seed: int) -> list[Event]:
    rng = random.Random(seed)
    out: list[Event] = []
    for n in range(visits):
        source, utm_source, utm_medium = rng.choice(PLACES)
        at = NOW - timedelta(minutes=20) - timedelta(seconds=rng.randrange(20 * 86400))
        visitor = f"visitor-{rng.randrange(visits // 2)}"
        for i in range(rng.choice([1, 1, 2, 4])):
            first = i == 0
            out.append(
                Event(
                    site_id,
                    at,
                    visitor,
                    f"{site_id}-s-{n}",
                    "signup" if i == 2 else "pageview",
                    rng.choice(["/", "/pricing", "/docs"]),
                    source if first else None,
                    utm_source,
                    utm_medium,
                    None,
                    "Chrome",
                    "Windows",
                    rng.choice(["desktop", "mobile"]),
                )
            )
            at += timedelta(seconds=rng.randrange(5, 300))
    out.sort(key=lambda e: (e.session_id, e.time))
    return out


class Seeded:
    def __init__(self, server: LiveServer, owner: httpx.Client, site_id: int, rows: list[Event]) -> None:
        self.server, self.owner, self.site_id, self.rows = server, owner, site_id, rows

    def get(self, report: str, **params: Any) -> dict[str, Any]:
        response = self.owner.get(f"/api/sites/{self.site_id}/reports/{report}", params=params)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def days(self, first: int, last: int) -> tuple[dict[str, str], tuple[datetime, datetime]]:
        today = NOW.date()
        a, b = today - timedelta(days=first), today - timedelta(days=last)
        return {"range": "custom", "from": a.isoformat(), "to": b.isoformat()}, helpers.span_of(a, b, "UTC")


@pytest.fixture(scope="module", params=ENGINES, ids=["-".join(pair) for pair in ENGINES])
def seeded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    backend, engine = request.param
    directory = tmp_path_factory.mktemp(f"channels-{backend}-{engine}")
    env = {"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true"}
    if engine == "clickhouse":
        env["SIGHTLINE_EVENTS_URL"] = f"chdb://{directory / 'clickhouse'}"
    live = LiveServer(directory / "data", database_url_for(request, backend, directory), env=env)
    live.start()
    create_owner(live, OWNER_EMAIL, OWNER_PASSWORD)
    owner = sign_in(live)
    site = owner.post("/api/sites", json={"name": "Channels", "domain": "channels.example.com"})
    site_id = site.json()["id"]
    rows = generate(site_id, 500, seed=7)
    assert live.database_url is not None
    db = open_database(live.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    helpers.wait_caught_up(owner)
    yield Seeded(live, owner, site_id, rows)
    owner.close()
    live.stop()


def _expected_rows(visits: list[helpers.Visit]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in {oracle.channel(v) for v in visits}:
        mine = [v for v in visits if oracle.channel(v) == name]
        bounces = sum(1 for v in mine if v.bounced)
        out[name] = {
            "visitors": len({v.visitor_id for v in mine}),
            "visits": len(mine),
            "pageviews": sum(len(v.pageviews) for v in mine),
            "bounce_rate": round(bounces / len(mine), 4),
            "visit_duration": round(sum(v.duration for v in mine) / len(mine)),
        }
    return out


def test_every_channel_is_found_in_the_seed(seeded: Seeded) -> None:
    found = {oracle.channel(v) for v in helpers.visits_of(seeded.rows)}
    assert found == set(CHANNELS), "the seed covers each channel, so the tests below prove each"


@pytest.mark.parametrize("filters", [{}, {"device": "mobile"}, {"page": "/pricing"}])
def test_the_channels_breakdown_counts_each_channels_visits_as_the_raw_events_say(
    seeded: Seeded, filters: dict[str, str]
) -> None:
    dates, span = seeded.days(15, 1)
    body = seeded.get("breakdown", dimension="channels", limit="100", **dates, **filters)
    chosen = oracle.chosen_visits(seeded.rows, span, filters, {})
    expected = _expected_rows(chosen)
    got = {row["value"]: {k: row[k] for k in expected[row["value"]]} for row in body["rows"]}
    assert got == expected
    ranked = sorted((r["visits"] for r in expected.values()), reverse=True)
    assert [row["visits"] for row in body["rows"]] == ranked
    assert body["more"] is False


@pytest.mark.parametrize(
    "filters",
    [
        {"channel": "ai_assistants"},
        {"channel": "!direct"},
        {"channel": "~search"},
        {"channel": "paid_social", "device": "desktop"},
        {"channel": "organic_search", "page": "/docs"},
        {"channel": "!referral", "event": "signup"},
        {"channel": "email", "source": "!newsletter"},
    ],
)
def test_the_channel_filter_selects_the_visits_the_raw_events_say(
    seeded: Seeded, filters: dict[str, str]
) -> None:
    dates, span = seeded.days(19, 0)
    chosen = oracle.chosen_visits(seeded.rows, span, filters, {})
    assert chosen, "a filter that selects nothing proves little"
    body = seeded.get("summary", **dates, **filters)
    assert body["filters"] == filters
    assert body["current"] == helpers.figures(
        len(chosen),
        len({v.visitor_id for v in chosen}),
        sum(len(v.pageviews) for v in chosen),
        sum(1 for v in chosen if v.bounced),
        sum(v.duration for v in chosen),
    )
    sources = seeded.get("breakdown", dimension="sources", limit="100", **dates, **filters)
    assert {r["value"]: r["visits"] for r in sources["rows"]} == {
        s: sum(1 for v in chosen if v.source == s) for s in {v.source for v in chosen}
    }
    pages = seeded.get("breakdown", dimension="pages", limit="100", **dates, **filters)
    views = [e for v in chosen for e in v.pageviews]
    assert {r["value"]: r["pageviews"] for r in pages["rows"]} == {
        p: sum(1 for e in views if e.path == p) for p in {e.path for e in views}
    }


def test_a_comparison_under_a_channel_filter_counts_the_earlier_days_too(seeded: Seeded) -> None:
    dates, span = seeded.days(13, 7)
    previous = (span[0] - (span[1] - span[0]), span[0])
    filters = {"channel": "organic_social"}
    body = seeded.get("summary", compare="true", **dates, **filters)
    for key, within in (("current", span), ("previous", previous)):
        chosen = oracle.chosen_visits(seeded.rows, within, filters, {})
        assert chosen
        assert body[key]["visits"] == len(chosen)
        assert body[key]["visitors"] == len({v.visitor_id for v in chosen})


def test_an_unknown_channel_is_refused_naming_the_parameter_and_the_values(seeded: Seeded) -> None:
    for value in ("organic", "!AI", ""):
        response = seeded.owner.get(f"/api/sites/{seeded.site_id}/reports/summary", params={"channel": value})
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["field"] == "channel"
    assert "ai_assistants" in error["message"]


def test_an_api_key_and_a_shared_link_read_channels_as_the_console_does(seeded: Seeded) -> None:
    params = {"dimension": "channels", "limit": "100", "range": "30d", "channel": "!direct"}
    console = seeded.get("breakdown", **params)
    assert console["rows"]
    assert all(row["value"] != "direct" for row in console["rows"])
    key = seeded.owner.post("/api/keys", json={"name": "Channels"})
    assert key.status_code == 201, key.text
    with httpx.Client(base_url=seeded.server.origin) as bearer:
        bearer.headers["Authorization"] = f"Bearer {key.json()['key']}"
        answer = bearer.get(f"/api/sites/{seeded.site_id}/reports/breakdown", params=params)
        assert answer.status_code == 200, answer.text
        assert answer.json()["rows"] == console["rows"]
    share = seeded.owner.post(f"/api/sites/{seeded.site_id}/shares", json={})
    assert share.status_code == 201, share.text
    link = str(share.json()["url"]).removeprefix(seeded.server.origin)
    with httpx.Client(base_url=seeded.server.origin) as visitor:
        shared = visitor.get(f"{link}/api/reports/breakdown", params=params)
        assert shared.status_code == 200, shared.text
        assert shared.json()["rows"] == console["rows"]
