"""Autocapture's reports on both store engines (DuckDB, and ClickHouse over HTTP), checked
against the raw events they came from: 404 pages and their referrers, outbound links and file
downloads, time on page and scroll depth, web vitals, and bounces that passive events leave alone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from sightline.database import Database, open_database
from sightline.reports import autocapture, queries, tables
from sightline.store.engines import Engine
from sightline.store.feed import Feeder
from tests.conftest import BACKENDS, database_url_for
from tests.reports import helpers
from tests.reports.capture_data import MISSING, NOW, SPAN, p75, rated, seed
from tests.reports.helpers import Event
from tests.store.conftest import ENGINES, module_engine, opened_engine

__all__ = ["module_engine"]


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def engine(module_engine: Engine) -> Engine:
    return module_engine


@pytest.fixture(scope="module")
def fed(
    request: pytest.FixtureRequest, backend: str, engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, list[Event]]:
    """The seed's events in a database of ``backend``, fed once into each engine: the tests that
    take it only read them."""
    db = open_database(database_url_for(request, backend, tmp_path_factory.mktemp("capture")))
    _, site = helpers.create_site(db, "capture.example.com")
    rows = seed(site)
    helpers.insert_events(db, sorted(rows, key=lambda e: e.time))
    Feeder(db, engine).catch_up()
    db.dispose()
    return site, rows


@pytest.fixture(params=ENGINES)
def fresh_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A new engine of each kind, for a test that feeds events of its own."""
    yield from opened_engine(request, request.param, tmp_path)


def table(engine: Engine, site: int, dim: str, name: str | None = None, **page: Any) -> list[dict[str, Any]]:
    found, _ = autocapture.breakdown(
        engine.query,
        engine.dialect,
        site,
        SPAN,
        queries.Filters(),
        dim,
        queries.Page(**{"limit": 100, **page}),
        name,
    )
    return found


def ranked(rows: dict[str, dict[str, Any]], by: str) -> list[dict[str, Any]]:
    return sorted(({"value": k, **v} for k, v in rows.items()), key=lambda r: (-r[by], r["value"]))


def test_404_pages_list_each_missing_path_with_its_visitors_visits_and_hits(fed: Any, engine: Engine) -> None:
    site, rows = fed
    hits = [e for e in rows if e.name == "404"]
    expected: dict[str, dict[str, Any]] = {}
    for path in {e.path for e in hits}:
        mine = [e for e in hits if e.path == path]
        expected[path] = {
            "visitors": len({e.visitor_id for e in mine}),
            "visits": len({e.session_id for e in mine}),
            "events": len(mine),
        }
    assert hits
    assert table(engine, site, "not_found") == ranked(expected, "events")


def test_a_404_paths_referrers_are_the_page_viewed_before_it_or_the_visits_source(
    fed: Any, engine: Engine
) -> None:
    site, rows = fed
    by_visit = helpers.visits_of(rows)
    for path in MISSING:
        found: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"visitors": set(), "events": 0})
        for visit in by_visit:
            for e in visit.events:
                if e.name != "404" or e.path != path:
                    continue
                before = [p for p in visit.pageviews if p.time < e.time and p.path != path]
                key = (before[-1].path, "page") if before else (visit.source, "source")
                found[key]["visitors"].add(e.visitor_id)
                found[key]["events"] += 1
        expected = sorted(
            (
                {"value": v, "kind": k, "visitors": len(f["visitors"]), "events": f["events"]}
                for (v, k), f in found.items()
            ),
            key=lambda r: (-r["events"], r["value"], r["kind"]),
        )
        assert table(engine, site, "not_found_referrers", path) == expected
        assert {r["kind"] for r in expected} == {"page", "source"}


@pytest.mark.parametrize(
    ("dim", "event"), [("outbound_links", "outbound_link"), ("file_downloads", "file_download")]
)
def test_outbound_links_and_downloads_list_each_url_with_visitors_and_clicks(
    fed: Any, engine: Engine, dim: str, event: str
) -> None:
    site, rows = fed
    clicks = [e for e in rows if e.name == event]
    expected = {
        url: {
            "visitors": len({e.visitor_id for e in clicks if e.props["url"] == url}),
            "events": sum(1 for e in clicks if e.props["url"] == url),
        }
        for url in {e.props["url"] for e in clicks}
    }
    assert table(engine, site, dim) == ranked(expected, "events")
    assert table(engine, site, dim, search="CDN.EXAMPLE" if dim == "file_downloads" else "GITHUB") == [
        r
        for r in ranked(expected, "events")
        if ("cdn.example" if dim == "file_downloads" else "github") in r["value"]
    ]


def test_time_on_page_adds_up_a_visits_seconds_and_scroll_depth_is_its_deepest_point(
    fed: Any, engine: Engine
) -> None:
    site, rows = fed
    per: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    visitor: dict[str, str] = {}
    for e in rows:
        if e.name == "engagement":
            per[e.path][e.session_id].append(e.props)
            visitor[e.session_id] = e.visitor_id
    expected = {}
    for path, visits in per.items():
        seconds = [sum(p["seconds"] for p in props) for props in visits.values()]
        depth = [max(p["scroll"] for p in props) for props in visits.values()]
        expected[path] = {
            "visitors": len({visitor[s] for s in visits}),
            "visits": len(visits),
            "time_on_page": round(sum(seconds) / len(seconds)),
            "scroll_depth": round(sum(depth) / len(depth)),
        }
    found = table(engine, site, "engagement")
    assert found == ranked(expected, "visits")
    assert table(engine, site, "engagement", limit=2, offset=1) == found[1:3]


def test_web_vitals_give_each_pages_p75_of_lcp_inp_and_cls_with_ratings(fed: Any, engine: Engine) -> None:
    site, rows = fed
    vitals = [e for e in rows if e.name == "web_vital"]
    expected = {}
    for path in {e.path for e in vitals}:
        mine = [e for e in vitals if e.path == path]
        row: dict[str, Any] = {
            "visitors": len({e.visitor_id for e in mine}),
            "visits": len({e.session_id for e in mine}),
        }
        for name in ("LCP", "INP", "CLS"):
            values = [e.props["value"] for e in mine if e.props["name"] == name]
            figure = round(p75(values), 3 if name == "CLS" else 0) if values else None
            row[name.lower()] = figure
            row[f"{name.lower()}_rating"] = None if figure is None else rated(name, figure)
        expected[path] = row
    found = table(engine, site, "web_vitals")
    assert found == ranked(expected, "visits")
    assert any(r["lcp_rating"] == "poor" for r in found)
    assert any(r["cls"] is not None for r in found)


def test_the_periods_web_vitals_give_p75_rating_and_how_measurements_rate(fed: Any, engine: Engine) -> None:
    site, rows = fed
    found = autocapture.vitals(engine.query, engine.dialect, site, SPAN, queries.Filters())
    assert [v["name"] for v in found] == ["LCP", "INP", "CLS", "FCP", "TTFB"]
    for item in found:
        mine = [e.props for e in rows if e.name == "web_vital" and e.props["name"] == item["name"]]
        figure = round(p75([p["value"] for p in mine]), 3 if item["name"] == "CLS" else 0)
        assert item["p75"] == figure
        assert item["rating"] == rated(item["name"], figure)
        assert item["samples"] == len(mine)
        for key, word in (("good", "good"), ("needs_improvement", "needs-improvement"), ("poor", "poor")):
            assert item[key] == round(sum(1 for p in mine if p["rating"] == word) / len(mine), 4)


@pytest.mark.parametrize("flag", ["rage", "dead"])
def test_rage_and_dead_clicks_list_each_element_and_page_with_visitors_bursts_and_clicks(
    fed: Any, engine: Engine, flag: str
) -> None:
    site, rows = fed
    found: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"visitors": set(), "events": 0, "clicks": 0}
    )
    for e in rows:
        if e.name == "heatmap_click" and e.props[flag]:
            item = found[(e.props["selector"], e.path)]
            item["visitors"].add(e.visitor_id)
            item["events"] += 1
            item["clicks"] += e.props["clicks"]
    expected = sorted(
        (
            {
                "value": s,
                "page": p,
                "visitors": len(f["visitors"]),
                "events": f["events"],
                "clicks": f["clicks"],
            }
            for (s, p), f in found.items()
        ),
        key=lambda r: (-r["events"], r["value"], r["page"]),
    )
    assert expected
    assert table(engine, site, f"{flag}_clicks") == expected
    assert table(engine, site, f"{flag}_clicks", search="PRICING") == [
        r for r in expected if "pricing" in r["page"]
    ]


def test_no_web_vitals_leaves_every_figure_empty(db: Database, fresh_engine: Engine) -> None:
    engine = fresh_engine
    _, site = helpers.create_site(db, "quiet.example.com")
    found = autocapture.vitals(engine.query, engine.dialect, site, SPAN, queries.Filters())
    assert found[0] == {
        "name": "LCP",
        "p75": None,
        "rating": None,
        "samples": 0,
        "good": 0.0,
        "needs_improvement": 0.0,
        "poor": 0.0,
    }


def test_passive_autocapture_events_leave_a_one_page_visit_a_bounce(
    db: Database, fresh_engine: Engine
) -> None:
    engine = fresh_engine
    _, site = helpers.create_site(db, "bounce.example.com")
    start = NOW - timedelta(hours=1)
    shape = Event(site, start, "v", "", "pageview", "/", None, None, None, None, "Chrome", "Linux", "desktop")
    visits: list[list[tuple[str, dict[str, Any]]]] = [
        [
            ("engagement", {"seconds": 40, "scroll": 80}),
            ("web_vital", {"name": "LCP", "value": 900, "rating": "good"}),
        ],
        [("heatmap_click", {"selector": "body", "x": 0.5, "y": 0.5}), ("404", {"path": "/"})],
        [("outbound_link", {"url": "https://github.com/"})],
        [("signup", {})],
        [],
    ]
    rows: list[Event] = []
    for n, extra in enumerate(visits):
        view = replace(shape, visitor_id=f"v{n}", session_id=f"s{n}", time=start + timedelta(minutes=n))
        rows.append(view)
        rows += [
            replace(view, time=view.time + timedelta(seconds=k + 1), name=e, props=p)
            for k, (e, p) in enumerate(extra)
        ]
    helpers.insert_events(db, rows)
    Feeder(db, engine).catch_up()
    figures = queries.totals(engine.query, engine.dialect, site, SPAN, queries.Filters())
    # Bounces: the visit with engagement and a web vital, the one with a heatmap click and a 404,
    # and the plain one; the outbound click and the custom event engage theirs.
    assert (figures["visits"], figures["bounces"]) == (5, 3)
    assert figures["bounces"] == sum(1 for v in helpers.visits_of(rows) if v.bounced)


def test_the_custom_events_table_leaves_out_measurements_that_have_reports_of_their_own(
    fed: Any, engine: Engine
) -> None:
    site, rows = fed
    found, _ = tables.breakdown(
        engine.query, engine.dialect, site, SPAN, queries.Filters(), "event", "events", queries.Page(100)
    )
    shown = {r["value"]: r["events"] for r in found}
    assert shown == {
        name: sum(1 for e in rows if e.name == name)
        for name in {e.name for e in rows} - {"pageview", "engagement", "web_vital", "heatmap_click"}
    }
    assert "404" in shown
    assert "outbound_link" in shown


def test_filters_select_the_visits_whose_autocapture_events_the_tables_count(
    fed: Any, engine: Engine
) -> None:
    site, rows = fed
    chosen = {v.session_id for v in helpers.visits_of(rows) if v.source == "google.com"}
    filtered = [e for e in rows if e.session_id in chosen]
    assert 0 < len(filtered) < len(rows)
    found, _ = autocapture.breakdown(
        engine.query,
        engine.dialect,
        site,
        SPAN,
        queries.Filters(source="google.com"),
        "outbound_links",
        queries.Page(100),
        None,
    )
    clicks = [e for e in filtered if e.name == "outbound_link"]
    expected = {
        url: {
            "visitors": len({e.visitor_id for e in clicks if e.props["url"] == url}),
            "events": sum(1 for e in clicks if e.props["url"] == url),
        }
        for url in {e.props["url"] for e in clicks}
    }
    assert found == ranked(expected, "events")
    vitals = autocapture.vitals(
        engine.query, engine.dialect, site, SPAN, queries.Filters(source="google.com")
    )
    assert sum(v["samples"] for v in vitals) == sum(1 for e in filtered if e.name == "web_vital")
