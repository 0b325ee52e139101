"""Goals, revenue, filters on every dimension and funnels from a real server, on both store engines
(DuckDB, and ClickHouse's SQL through embedded chDB), checked against the raw events (``oracle``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from tests.reports import helpers, oracle
from tests.reports.conversions_world import (
    GOALS,
    NOW,
    ZONES,
    Seeded,
    goal_id,
    seeded,
    server,
    with_purchases,
)
from tests.support.server import LiveServer

__all__ = ["seeded", "server"]


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
    purchase = expected[goal_id(seeded, zone, "Purchase")]
    assert purchase["conversions"] > 0
    assert purchase["revenue"]["total"] > 0
    if not filters:
        assert all(
            expected[goal_id(seeded, zone, g)]["visitors"] > 0
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
        k: (v[0] if v[:1] == "!" else "") + str(goal_id(seeded, zone, v.lstrip("!"))) if k == "goal" else v
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
    helpers.stored(server, owner, rows)
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


def test_a_revenue_of_half_a_cent_rounds_up_to_the_cent_as_the_amounts_add_up_exactly(
    server: LiveServer, seeded: Seeded
) -> None:
    """1.005 is 1.00499999999999989... as a binary float, which rounds down to 1.00; the amounts are
    read as decimals and added exactly on both engines, so the total and the average are 1.01."""
    owner = seeded.owner
    site = owner.post("/api/sites", json={"name": "cents", "domain": "cents.example.com"}).json()["id"]
    purchase = next(goal for goal in GOALS if goal["name"] == "Purchase")
    assert owner.post(f"/api/sites/{site}/goals", json=purchase).status_code == 201
    visit = helpers.pageview(site, NOW - timedelta(minutes=30), "buyer", "/checkout")
    rows = [
        visit,
        replace(visit, time=visit.time + timedelta(seconds=5), name="purchase", props={"amount": "1.005"}),
    ]
    helpers.stored(server, owner, rows)
    dates, _ = seeded.days("UTC", 2, 0)
    body = owner.get(f"/api/sites/{site}/reports/breakdown", params={"dimension": "goals", **dates}).json()
    assert body["rows"][0]["revenue"] == {"total": 1.01, "average": 1.01, "currency": "EUR"}
