"""Click heatmaps' reports on both store engines (DuckDB, and ClickHouse over HTTP), checked
against the raw ``heatmap_click`` events: the pages with clicks, one page's clicked elements, its
clicks per element and position cell (the overlay's dots), per width class, with filters."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from sightline.database import open_database
from sightline.reports import heatmaps, queries
from sightline.store.engines import Engine
from sightline.store.feed import Feeder
from tests.conftest import BACKENDS, database_url_for
from tests.reports import helpers
from tests.reports.capture_data import NOW, SPAN
from tests.reports.helpers import Event
from tests.store.conftest import module_engine

__all__ = ["module_engine"]

SELECTORS = [
    "html>body>main>button#buy",
    "html>body>nav>a:nth-of-type(2)",
    "div#hero>img",
    "html>body>footer",
]
# Positions on a cell's edge, where a floor of the wrong kind or a float's error would show.
EDGES = [0.0, 1.0, 0.05, 0.15, 0.35, 0.999, 0.5, 0.95]
# The switch of the console -> the SDK's classes.
SWITCH = {"desktop": ("laptop", "desktop"), "tablet": ("tablet",), "phone": ("mobile",)}


def seed(site: int, seed: int = 5) -> list[Event]:
    """Visits of pageviews, each page maybe followed by a few heatmap clicks anywhere on it."""
    rng = random.Random(seed)
    out: list[Event] = []
    for visit in helpers.visits_of(
        helpers.generate(site, NOW - timedelta(hours=2), visits=90, days=3, seed=seed)
    ):
        at = visit.start
        for i in range(rng.choice([1, 2, 3])):
            view = replace(
                visit.events[0], time=at, name="pageview", path=rng.choice(helpers.PAGES), props={}
            )
            if i:
                view.referrer_source = None
            out.append(view)
            width = rng.choice(["mobile", "tablet", "laptop", "desktop"])
            for n in range(rng.choice([0, 1, 2, 4])):
                x = rng.choice(EDGES) if rng.random() < 0.3 else round(rng.random(), 3)
                y = rng.choice(EDGES) if rng.random() < 0.3 else round(rng.random(), 3)
                clicks = rng.choice([1, 1, 1, 2, 4])
                props = {
                    "selector": rng.choice(SELECTORS),
                    "x": x,
                    "y": y,
                    "viewport": width,
                    "clicks": clicks,
                    "rage": clicks >= 3,
                    "dead": rng.random() < 0.2,
                }
                out.append(
                    replace(view, time=at + timedelta(seconds=n + 1), name="heatmap_click", props=props)
                )
            at += timedelta(seconds=rng.randrange(30, 300))
    return out


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
    """The clicks of one seed in a database of ``backend``, fed once into each engine: every test
    of the module only reads them."""
    db = open_database(database_url_for(request, backend, tmp_path_factory.mktemp("heat")))
    _, site = helpers.create_site(db, "heat.example.com")
    rows = seed(site)
    helpers.insert_events(db, sorted(rows, key=lambda e: e.time))
    Feeder(db, engine).catch_up()
    db.dispose()
    return site, rows


def clicks_of(rows: list[Event], path: str | None = None, viewport: str | None = None) -> list[Event]:
    return [
        e
        for e in rows
        if e.name == "heatmap_click"
        and (path is None or e.path == path)
        and (viewport is None or e.props["viewport"] in SWITCH[viewport])
    ]


def per(rows: list[Event], key: Any) -> list[dict[str, Any]]:
    """Visitors and clicks per ``key(event)``, most clicked first, then by value."""
    people: dict[str, set[str]] = defaultdict(set)
    total: dict[str, int] = defaultdict(int)
    for e in rows:
        people[key(e)].add(e.visitor_id)
        total[key(e)] += e.props["clicks"]
    found = [{"value": k, "visitors": len(people[k]), "clicks": total[k]} for k in total]
    return sorted(found, key=lambda r: (-r["clicks"], r["value"]))


def cell(share: float) -> int:
    return min(math.floor(share * 20), 19)


def expected_spots(rows: list[Event]) -> list[dict[str, Any]]:
    total: dict[tuple[str, int, int], int] = defaultdict(int)
    for e in rows:
        total[(e.props["selector"], cell(e.props["x"]), cell(e.props["y"]))] += e.props["clicks"]
    ordered = sorted(total.items(), key=lambda item: (-item[1], item[0]))
    return [
        {"selector": s, "x": round((cx + 0.5) / 20, 4), "y": round((cy + 0.5) / 20, 4), "clicks": n}
        for (s, cx, cy), n in ordered
    ]


def test_the_pages_with_clicks_list_their_visitors_and_clicks(fed: Any, engine: Engine) -> None:
    site, rows = fed
    found, more = heatmaps.pages(
        engine.query, engine.dialect, site, SPAN, queries.Filters(), queries.Page(100)
    )
    assert found == per(clicks_of(rows), lambda e: e.path)
    assert not more
    assert len(found) == len(helpers.PAGES)


@pytest.mark.parametrize("viewport", [None, "desktop", "tablet", "phone"])
def test_a_pages_clicked_elements_count_the_clicks_of_the_chosen_window_width(
    fed: Any, engine: Engine, viewport: str | None
) -> None:
    site, rows = fed
    for path in helpers.PAGES:
        found, _ = heatmaps.elements(
            engine.query, engine.dialect, site, SPAN, queries.Filters(), queries.Page(100), path, viewport
        )
        assert found == per(clicks_of(rows, path, viewport), lambda e: e.props["selector"]), path


def test_the_clicked_elements_page_and_search_like_every_table(fed: Any, engine: Engine) -> None:
    site, rows = fed
    path = "/pricing"
    everything = per(clicks_of(rows, path), lambda e: e.props["selector"])
    assert len(everything) == len(SELECTORS)
    pages = [
        heatmaps.elements(
            engine.query, engine.dialect, site, SPAN, queries.Filters(), queries.Page(2, offset), path, None
        )
        for offset in (0, 2)
    ]
    assert pages[0][0] + pages[1][0] == everything
    assert [more for _, more in pages] == [True, False]
    searched, _ = heatmaps.elements(
        engine.query,
        engine.dialect,
        site,
        SPAN,
        queries.Filters(),
        queries.Page(100, 0, "BUTTON"),
        path,
        None,
    )
    assert searched == [r for r in everything if "button" in r["value"]]


@pytest.mark.parametrize("viewport", [None, "desktop", "phone"])
def test_the_spots_sum_each_elements_clicks_per_position_cell(
    fed: Any, engine: Engine, viewport: str | None
) -> None:
    site, rows = fed
    for path in helpers.PAGES:
        found, more = heatmaps.spots(
            engine.query, engine.dialect, site, SPAN, queries.Filters(), path, viewport
        )
        mine = clicks_of(rows, path, viewport)
        assert found == expected_spots(mine), path
        assert not more
        assert sum(s["clicks"] for s in found) == sum(e.props["clicks"] for e in mine)
    edge = [e for e in clicks_of(rows) if e.props["x"] in (0.15, 1.0)]
    assert edge, "the seed puts clicks on cell edges"


def test_the_clicks_per_window_width_add_up_to_the_pages_clicks(fed: Any, engine: Engine) -> None:
    site, rows = fed
    for path in helpers.PAGES:
        found = heatmaps.widths(engine.query, engine.dialect, site, SPAN, queries.Filters(), path)
        assert found == {
            name: sum(e.props["clicks"] for e in clicks_of(rows, path, name)) for name in SWITCH
        }, path
        assert all(found.values()), "every width class has clicks in the seed"


def test_filters_select_the_visits_whose_clicks_the_heatmap_counts(fed: Any, engine: Engine) -> None:
    site, rows = fed
    chosen = {v.session_id for v in helpers.visits_of(rows) if v.source == "google.com"}
    filtered = [e for e in rows if e.session_id in chosen]
    assert 0 < len(clicks_of(filtered)) < len(clicks_of(rows))
    only = queries.Filters(source="google.com")
    found, _ = heatmaps.spots(engine.query, engine.dialect, site, SPAN, only, "/docs", "desktop")
    assert found == expected_spots(clicks_of(filtered, "/docs", "desktop"))
    pages, _ = heatmaps.pages(engine.query, engine.dialect, site, SPAN, only, queries.Page(100))
    assert pages == per(clicks_of(filtered), lambda e: e.path)
    viewed = queries.Filters(page="/signup")
    visits = {v.session_id for v in helpers.visits_of(rows) if any(e.path == "/signup" for e in v.pageviews)}
    elements, _ = heatmaps.elements(
        engine.query, engine.dialect, site, SPAN, viewed, queries.Page(100), "/", None
    )
    assert elements == per(
        clicks_of([e for e in rows if e.session_id in visits], "/"), lambda e: e.props["selector"]
    )
