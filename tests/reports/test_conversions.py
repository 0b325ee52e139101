"""Goals, revenue and filters on every dimension from a real server, on both store engines
(DuckDB, and ClickHouse's SQL through embedded chDB), checked against the raw events (``oracle``)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD, database_url_for, sign_in
from tests.reports import helpers, oracle
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


def _goal_id(s: Seeded, zone: str, name: str) -> int:
    return next(i for i, g in s.goals[zone].items() if g["name"] == name)


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("filters", [{}, {"source": "google.com"}, {"browser": "!Safari"}, {"page": "~doc"}])
def test_the_goals_panel_counts_every_goal_against_the_raw_events(
    seeded: Seeded, zone: str, filters: dict[str, str]
) -> None:
    dates, span = seeded.days(zone, 20, 0)
    body = seeded.get(zone, "breakdown", dimension="goals", limit="100", **dates, **filters)
    expected = oracle.expected_goals(seeded.rows[zone], span, seeded.goals[zone], filters)
    assert {row["goal_id"]: row for row in body["rows"]} == expected
    assert len(body["rows"]) == len(GOALS)
    assert body["more"] is False
    ranked = [row["visitors"] for row in body["rows"]]
    assert ranked == sorted(ranked, reverse=True)
    purchase = expected[_goal_id(seeded, zone, "Purchase")]
    assert purchase["conversions"] > 0
    assert purchase["revenue"]["total"] > 0
    if not filters:
        assert all(
            expected[_goal_id(seeded, zone, g)]["visitors"] > 0
            for g in ("Pricing page", "Blog", "Any docs", "Pro signup")
        )


def test_the_goals_panel_pages_and_searches_by_goal_name(seeded: Seeded) -> None:
    first = seeded.get("UTC", "breakdown", dimension="goals", limit="2", range="30d")
    second = seeded.get("UTC", "breakdown", dimension="goals", limit="2", offset="2", range="30d")
    assert first["more"] is True
    assert len(first["rows"]) == 2
    assert not {r["goal_id"] for r in first["rows"]} & {r["goal_id"] for r in second["rows"]}
    found = seeded.get("UTC", "breakdown", dimension="goals", search="SIGNUP", range="30d")
    assert sorted(r["value"] for r in found["rows"]) == ["Pro signup", "Signup"]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    "filters",
    [
        {"goal": "Purchase"},
        {"goal": "!Signup"},
        {"goal": "Any docs", "device": "desktop"},
        {"source": "!(none)"},
        {"source": "~.com", "os": "~LIN"},
        {"utm_campaign": "launch"},
        {"utm_medium": "!email", "browser": "Chrome"},
        {"entry_page": "/pricing"},
        {"exit_page": "!/", "page": "!/docs"},
        {"event": "!signup", "page": "/blog/hello"},
        {"event": "~down"},
        {"prop": "plan:pro"},
        {"prop": "!size:2", "device": "!mobile"},
    ],
)
def test_filters_on_every_dimension_select_the_visits_the_raw_events_say(
    seeded: Seeded, zone: str, filters: dict[str, str]
) -> None:
    params = {
        k: (v[0] if v[:1] == "!" else "") + str(_goal_id(seeded, zone, v.lstrip("!"))) if k == "goal" else v
        for k, v in filters.items()
    }
    dates, span = seeded.days(zone, 25, 1)
    rows = seeded.rows[zone]
    chosen = oracle.chosen_visits(rows, span, params, seeded.goals[zone])
    assert chosen, "a filter that selects nothing proves little"
    body = seeded.get(zone, "summary", **dates, **params)
    assert body["filters"] == params
    assert body["current"] == helpers.figures(
        len(chosen),
        len({v.visitor_id for v in chosen}),
        sum(len(v.pageviews) for v in chosen),
        sum(1 for v in chosen if v.bounced),
        sum(v.duration for v in chosen),
    )
    series = seeded.get(zone, "timeseries", **dates, **params)
    assert sum(p["visits"] for p in series["points"]) == len(chosen)
    browsers = seeded.get(zone, "breakdown", dimension="browsers", limit="100", **dates, **params)
    expected = {
        b: sum(1 for v in chosen if v.events[0].browser == b) for b in {v.events[0].browser for v in chosen}
    }
    assert {r["value"]: r["visits"] for r in browsers["rows"]} == expected


def test_a_one_pageview_visit_that_sent_a_custom_event_is_engaged_not_a_bounce(seeded: Seeded) -> None:
    dates, span = seeded.days("UTC", 29, 0)
    chosen = oracle.chosen_visits(seeded.rows["UTC"], span, {}, {})
    engaged = [v for v in chosen if len(v.pageviews) == 1 and len(v.events) > 1]
    assert engaged, "the seed has one-pageview visits with a custom event"
    body = seeded.get("UTC", "summary", **dates)
    bounces = sum(1 for v in chosen if v.bounced)
    assert body["current"]["bounce_rate"] == round(bounces / len(chosen), 4)
    assert bounces < sum(1 for v in chosen if len(v.pageviews) <= 1)


def test_bad_filter_values_are_refused_naming_the_parameter(seeded: Seeded) -> None:
    site = seeded.sites["UTC"]
    for name, value in (
        ("prop", "nocolon"),
        ("prop", "~plan:pro"),
        ("entry_page", "pricing"),
        ("country", ""),
    ):
        response = seeded.owner.get(f"/api/sites/{site}/reports/summary", params={name: value})
        assert response.status_code == 422, (name, value, response.text)
        assert response.json()["error"]["field"] == name


FUNNELS = [
    ["page:/", "page:/pricing"],
    ["page:/", "page:/pricing", "event:signup", "event:purchase"],
    ["page:/", "page:/"],
    ["page:/blog/*", "page:/**", "event:download"],
    ["page:/pricing", "page:/"],  # the usual order reversed
    ["page:/", "event:nobody-sends-this", "page:/pricing"],  # steps no visit reaches
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("steps", FUNNELS)
@pytest.mark.parametrize("filters", [{}, {"device": "desktop"}])
def test_funnels_count_steps_in_order_within_a_visit_as_the_raw_events_say(
    seeded: Seeded, zone: str, steps: list[str], filters: dict[str, str]
) -> None:
    dates, span = seeded.days(zone, 20, 0)
    body = seeded.get(zone, "funnel", step=steps, **dates, **filters)
    chosen = oracle.chosen_visits(seeded.rows[zone], span, filters, {})
    assert body["steps"] == oracle.expected_funnel(chosen, steps)
    assert body["steps"][1]["visitors"] > 0 or "event:nobody-sends-this" in steps


def test_a_funnel_splits_by_a_dimension_and_each_value_matches_the_raw_events(seeded: Seeded) -> None:
    steps = ["page:/", "page:/pricing", "event:signup"]
    dates, span = seeded.days("UTC", 25, 0)
    body = seeded.get("UTC", "funnel", step=steps, dimension="browsers", **dates)
    chosen = oracle.chosen_visits(seeded.rows["UTC"], span, {}, {})
    assert body["dimension"] == "browsers"
    got = {row["value"]: row["steps"] for row in body["breakdown"]}
    browsers = {v.events[0].browser for v in chosen}
    assert got == {
        b: oracle.expected_funnel([v for v in chosen if v.events[0].browser == b], steps) for b in browsers
    }


def test_a_saved_funnel_runs_by_its_id_and_bad_steps_are_refused(seeded: Seeded) -> None:
    site = seeded.sites["UTC"]
    steps = ["page:/", "event:signup"]
    created = seeded.owner.post(f"/api/sites/{site}/funnels", json={"name": "Signup", "steps": steps})
    assert created.status_code == 201, created.text
    funnel_id = created.json()["id"]
    assert seeded.owner.get(f"/api/sites/{site}/funnels").json()["funnels"][-1]["steps"] == steps
    by_id = seeded.get("UTC", "funnel", funnel=str(funnel_id), range="30d")
    assert by_id["steps"] == seeded.get("UTC", "funnel", step=steps, range="30d")["steps"]
    for bad, field in (
        ({"name": "x", "steps": ["page:/"]}, "steps"),
        ({"name": "x", "steps": ["/", "page:/"]}, "steps.0"),
    ):
        refused = seeded.owner.post(f"/api/sites/{site}/funnels", json=bad)
        assert refused.status_code == 422
        assert refused.json()["error"]["field"] == field
    cases: list[tuple[dict[str, Any], str | None]] = [
        ({"step": ["page:/"]}, "step"),
        ({"step": ["page:/", "pricing"]}, "step"),
        ({"step": ["page:/"] * 9}, "step"),
        ({"step": ["page:/", "page:/x"], "dimension": "pages"}, "dimension"),
        ({"funnel": "999999"}, None),
    ]
    for params, wanted in cases:
        response = seeded.owner.get(f"/api/sites/{site}/reports/funnel", params=params)
        assert response.status_code in (404, 422), response.text
        if wanted:
            assert response.json()["error"]["field"] == wanted
    assert seeded.owner.delete(f"/api/funnels/{funnel_id}").status_code == 204


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    ("interval", "first", "periods", "week_start"),
    [
        ("week", 27, 4, "monday"),
        ("week", 27, 4, "sunday"),
        ("week", 27, 4, "saturday"),
        ("day", 9, 5, "sunday"),
    ],
)
def test_retention_cohorts_match_the_raw_visits_in_weeks_from_the_sites_first_weekday(
    seeded: Seeded, zone: str, interval: str, first: int, periods: int, week_start: str
) -> None:
    changed = seeded.owner.patch(f"/api/sites/{seeded.sites[zone]}", json={"week_start": week_start})
    assert changed.status_code == 200, changed.text
    assert changed.json()["week_start"] == week_start
    dates, _ = seeded.days(zone, first, 0)
    body = seeded.get(zone, "retention", interval=interval, periods=str(periods), **dates)
    tz = ZoneInfo(zone)
    first_day = date.fromisoformat(dates["from"])
    last_day = date.fromisoformat(dates["to"])
    if interval == "week":  # the first cohort is the week holding the range's first day
        first_day -= timedelta(days=(first_day.weekday() - WEEKDAYS[week_start]) % 7)
        starts = {date.fromisoformat(c["start"]).weekday() for c in body["cohorts"]}
        assert starts == {WEEKDAYS[week_start]}
    start = datetime.combine(first_day, time(), tz).astimezone(UTC)
    chosen = oracle.chosen_visits(seeded.rows[zone], (start, NOW + timedelta(hours=2)), {}, {})
    expected = oracle.expected_retention(
        seeded.rows[zone], chosen, zone, first_day, last_day, interval, periods, datetime.now(UTC)
    )
    assert body["cohorts"] == expected
    assert any(share > 0 for c in expected for share in c["returning"][1:]), "some visitors come back"
    assert tz is not None


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    ("start", "direction", "depth"),
    [("page:/", "next", 3), ("page:/pricing", "previous", 2), ("event:signup", "next", 1)],
)
def test_journeys_follow_the_visits_steps_as_the_raw_events_say(
    seeded: Seeded, zone: str, start: str, direction: str, depth: int
) -> None:
    dates, span = seeded.days(zone, 20, 0)
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("from", start),
        ("direction", direction),
        ("depth", str(depth)),
        *dates.items(),
    ]
    response = seeded.owner.get(f"/api/sites/{seeded.sites[zone]}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    chosen = oracle.chosen_visits(seeded.rows[zone], span, {}, {})
    expected = oracle.expected_journeys(chosen, start, direction, depth)
    got = [(tuple(p["steps"]), p["visitors"]) for p in body["paths"]]
    # The 50 paths with the most visitors; among equals, in the order of their steps (a shorter
    # path before the longer ones it begins).
    ranked = sorted(expected.items(), key=lambda item: (-item[1], item[0]))
    assert got == ranked[:50]


@pytest.mark.parametrize(
    ("start", "direction", "depth", "path"),
    [
        ("page:/", "next", 3, ["page:/docs", "event:signup", "page:/pricing"]),
        ("page:/", "next", 2, ["page:/docs", "event:signup"]),
        ("page:/blog", "previous", 3, ["page:/pricing", "event:signup", "page:/docs"]),
        ("page:/blog", "previous", 2, ["page:/pricing", "event:signup"]),
    ],
)
def test_journeys_order_events_of_the_same_moment_by_their_arrival(
    server: LiveServer, seeded: Seeded, start: str, direction: str, depth: int, path: list[str]
) -> None:
    """Three events of a visit at the same microsecond follow one another in the log's order, also
    where the path's depth cuts between them."""
    owner = seeded.owner
    domain = f"same-moment-{start[6:]}-{direction}-{depth}.example.com"
    site = owner.post("/api/sites", json={"name": "same moment", "domain": domain}).json()["id"]
    dates, span = seeded.days("UTC", 1, 0)
    at = span[0] + timedelta(hours=3)
    moment = at + timedelta(minutes=1)
    rows = [
        replace(helpers.pageview(site, at, "tied", "/"), site_id=site),
        replace(helpers.pageview(site, moment, "tied", "/docs"), site_id=site),
        replace(helpers.pageview(site, moment, "tied", "/x"), site_id=site, name="signup"),
        replace(helpers.pageview(site, moment, "tied", "/pricing"), site_id=site),
        replace(helpers.pageview(site, at + timedelta(minutes=2), "tied", "/blog"), site_id=site),
    ]
    db = open_database(server.database_url or "", migrate=False)
    try:
        helpers.insert_events(db, rows)
    finally:
        db.dispose()
    helpers.wait_caught_up(owner)
    chosen = oracle.chosen_visits(rows, span, {}, {})
    assert oracle.expected_journeys(chosen, start, direction, depth) == {tuple(path): 1}
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("from", start),
        ("direction", direction),
        ("depth", str(depth)),
        *dates.items(),
    ]
    response = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    assert response.json()["paths"] == [{"steps": path, "visitors": 1}]


def test_journeys_leave_out_the_sdks_measurements_and_keep_its_click_captures(
    server: LiveServer, seeded: Seeded
) -> None:
    owner = seeded.owner
    site = owner.post("/api/sites", json={"name": "passive", "domain": "passive-steps.example.com"}).json()[
        "id"
    ]
    dates, span = seeded.days("UTC", 1, 0)
    at = span[0] + timedelta(hours=3)
    names = ["pageview", "web_vital", "engagement", "heatmap_click", "outbound_link", "web_vital", "Signup"]
    rows = [
        replace(
            helpers.pageview(site, at + timedelta(seconds=i), "reader", "/pricing"), site_id=site, name=name
        )
        for i, name in enumerate(names)
    ]
    db = open_database(server.database_url or "", migrate=False)
    try:
        helpers.insert_events(db, rows)
    finally:
        db.dispose()
    helpers.wait_caught_up(owner)
    expected = ["event:outbound_link", "event:Signup"]
    chosen = oracle.chosen_visits(rows, span, {}, {})
    assert oracle.expected_journeys(chosen, "page:/pricing", "next", 3) == {tuple(expected): 1}
    params: list[tuple[str, str | int | float | bool | None]] = [
        ("from", "page:/pricing"),
        ("direction", "next"),
        ("depth", "3"),
        *dates.items(),
    ]
    response = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    assert response.json()["paths"] == [{"steps": expected, "visitors": 1}]


def test_journeys_keep_the_fifty_paths_with_most_visitors_and_among_equals_the_first_by_steps(
    server: LiveServer, seeded: Seeded
) -> None:
    """More than 50 paths, most of one visitor each: the cut keeps those with more visitors, then
    the first by their steps, a path that ends before one it begins (the cut falls between them)."""
    owner = seeded.owner
    made = owner.post("/api/sites", json={"name": "many paths", "domain": "many-paths.example.com"})
    site = made.json()["id"]
    dates, span = seeded.days("UTC", 1, 0)
    at = span[0] + timedelta(hours=5)
    walks = [[f"/p{n:02}", f"/q{n % 7}"] for n in range(60)]  # 60 paths of one visitor each
    walks += [["/p30"], ["/p30"], ["/p59", "/q3", "/r"], ["/p59", "/q3", "/r"], ["/p47"]]
    rows = [
        replace(helpers.pageview(site, at + timedelta(minutes=i, seconds=k), f"v{i}", path), site_id=site)
        for i, walk in enumerate(walks)
        for k, path in enumerate(["/", *walk])
    ]
    db = open_database(server.database_url or "", migrate=False)
    try:
        helpers.insert_events(db, rows)
    finally:
        db.dispose()
    helpers.wait_caught_up(owner)
    expected = oracle.expected_journeys(oracle.chosen_visits(rows, span, {}, {}), "page:/", "next", 3)
    assert len(expected) == 63
    params: list[tuple[str, str | int | float | bool | None]] = [("from", "page:/"), *dates.items()]
    response = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
    assert response.status_code == 200, response.text
    got = [(tuple(p["steps"]), p["visitors"]) for p in response.json()["paths"]]
    assert got[:2] == [(("page:/p30",), 2), (("page:/p59", "page:/q3", "page:/r"), 2)]
    assert got[2:4] == [(("page:/p00", "page:/q0"), 1), (("page:/p01", "page:/q1"), 1)]
    assert got[-1] == (("page:/p47",), 1)  # the 50th: before ("page:/p47", "page:/q5"), left out
    assert got == sorted(expected.items(), key=lambda item: (-item[1], item[0]))[:50]


def test_a_custom_range_and_a_journeys_start_both_named_from_are_told_apart(seeded: Seeded) -> None:
    site = seeded.sites["UTC"]
    today = NOW.date().isoformat()
    response = seeded.owner.get(
        f"/api/sites/{site}/reports/journeys",
        params=[("from", "page:/"), ("range", "custom"), ("from", today), ("to", today)],
    )
    assert response.status_code == 200, response.text
    assert response.json()["range"]["from"] == today
    missing = seeded.owner.get(f"/api/sites/{site}/reports/journeys")
    assert missing.status_code == 422
    assert missing.json()["error"]["field"] == "from"


@pytest.mark.parametrize("filters", [{}, {"page": "~doc"}])
def test_the_goals_panel_counts_a_hundred_goals_against_the_raw_events(
    server: LiveServer, seeded: Seeded, filters: dict[str, str]
) -> None:
    """More goals than one 62-bit mask holds: the goals past the 62nd, a prop goal and a revenue
    goal among them, count as the first ones do."""
    owner = seeded.owner
    domain = f"many{len(filters)}.example.com"
    site = owner.post("/api/sites", json={"name": "many", "domain": domain}).json()["id"]
    goals: dict[int, dict[str, Any]] = {}
    for copy in range(15):
        for goal in GOALS:
            if len(goals) == 100:
                break
            made = {**goal, "name": f"{goal['name']} {copy}"}
            created = owner.post(f"/api/sites/{site}/goals", json=made)
            assert created.status_code == 201, created.text
            goals[created.json()["id"]] = made
    rows = with_purchases(helpers.generate(site, NOW - timedelta(minutes=20), 120, 10, seed=77), 77)
    db = open_database(server.database_url or "", migrate=False)
    try:
        helpers.insert_events(db, rows)
    finally:
        db.dispose()
    helpers.wait_caught_up(owner)
    dates, span = seeded.days("UTC", 8, 0)
    response = owner.get(
        f"/api/sites/{site}/reports/breakdown",
        params={"dimension": "goals", "limit": "100", **dates, **filters},
    )
    assert response.status_code == 200, response.text
    got = {row["goal_id"]: row for row in response.json()["rows"]}
    expected = oracle.expected_goals(rows, span, goals, filters)
    assert got == expected
    assert len(got) == 100
    last = {
        name: max(i for i, g in goals.items() if g["name"].startswith(name))
        for name in ("Pro signup", "Purchase")
    }
    assert got[last["Pro signup"]]["visitors"] > 0
    assert got[last["Purchase"]]["revenue"]["total"] > 0


@dataclass(frozen=True)
class LateArrival:
    """A visit whose first pageview is fed last, at one edge of the range: ``fed`` first, then
    ``late`` (minutes from the edge, path), each as ``(visitor, [(minutes, path), ...])``."""

    edge: str  # start | end: the range's edge the visits are placed around
    days: tuple[int, int]  # the range: from so many days ago to so many days ago
    fed: tuple[tuple[str, tuple[tuple[int, str], ...]], ...]
    late: tuple[str, tuple[tuple[int, str], ...]]
    kept: str  # the one visit that started in the range
    steps: tuple[str, str]
    journeys: tuple[tuple[str, str], ...]  # (from, direction), 3 deep


LATE_ARRIVALS = [
    # The visit that truly began before the range stays out of it.
    LateArrival(
        "start",
        (2, 0),
        (("early", ((10, "/"), (12, "/pricing"))), ("inside", ((20, "/"), (25, "/pricing")))),
        ("early", ((-5, "/"),)),
        "s-inside",
        ("page:/", "page:/pricing"),
        (("page:/", "next"), ("page:/pricing", "previous")),
    ),
    # A visit that began before midnight at the range's end, whose pageviews after midnight were fed
    # before the one before it: it started in the range, so its steps after midnight count.
    LateArrival(
        "end",
        (4, 2),
        (("crossing", ((10, "/pricing"), (12, "/docs"))), ("outside", ((20, "/pricing"), (25, "/docs")))),
        ("crossing", ((-5, "/"),)),
        "s-crossing",
        ("page:/pricing", "page:/docs"),
        (("page:/pricing", "previous"),),
    ),
]


@pytest.mark.parametrize("case", LATE_ARRIVALS, ids=[c.edge for c in LATE_ARRIVALS])
def test_a_visit_whose_first_event_arrives_last_counts_by_its_true_start_in_funnels_and_journeys(
    server: LiveServer, seeded: Seeded, case: LateArrival
) -> None:
    """Funnels and journeys read events by the visit start they were fed with, which a later,
    earlier event moves back: each visit counts in the range it truly started in."""
    owner = seeded.owner
    domain = f"late-{case.edge}.example.com"
    site = owner.post("/api/sites", json={"name": f"late {case.edge}", "domain": domain}).json()["id"]
    dates, span = seeded.days("UTC", *case.days)
    edge = span[0] if case.edge == "start" else span[1]

    def visit(who: str, times_paths: tuple[tuple[int, str], ...]) -> list[Event]:
        return [
            replace(helpers.pageview(site, edge + timedelta(minutes=at), who, path), site_id=site)
            for at, path in times_paths
        ]

    fed = [e for who, times_paths in case.fed for e in visit(who, times_paths)]
    late = visit(*case.late)
    db = open_database(server.database_url or "", migrate=False)
    try:
        helpers.insert_events(db, fed)
        helpers.wait_caught_up(owner)
        helpers.insert_events(db, late)
        helpers.wait_caught_up(owner)
    finally:
        db.dispose()
    chosen = oracle.chosen_visits(fed + late, span, {}, {})
    assert [v.session_id for v in chosen] == [case.kept]
    steps = list(case.steps)
    asked: list[tuple[str, str | int | float | bool | None]] = [("step", s) for s in steps]
    funnel = owner.get(f"/api/sites/{site}/reports/funnel", params=asked + list(dates.items()))
    assert funnel.status_code == 200, funnel.text
    assert funnel.json()["steps"] == oracle.expected_funnel(chosen, steps)
    assert funnel.json()["steps"][1]["visitors"] == 1
    for start, direction in case.journeys:
        params: list[tuple[str, str | int | float | bool | None]] = [
            ("from", start),
            ("direction", direction),
            ("depth", "3"),
            *dates.items(),
        ]
        journeys = owner.get(f"/api/sites/{site}/reports/journeys", params=params)
        assert journeys.status_code == 200, journeys.text
        got = {tuple(p["steps"]): p["visitors"] for p in journeys.json()["paths"]}
        assert got == oracle.expected_journeys(chosen, start, direction, 3)
        assert sum(got.values()) == 1
