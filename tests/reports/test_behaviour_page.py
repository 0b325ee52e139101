"""Autocapture's reports through the API and in the dashboard, in real Chromium: 404 pages and where
their visitors came from, outbound links and downloads, time on page and scroll depth, web vitals;
at 1280x800 and 390x844 in both themes, with axe-core. (The figures themselves are checked on both
store engines in test_autocapture.py.)"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import expect

from sightline.database import open_database
from tests.conftest import sign_in
from tests.reports import helpers
from tests.reports.capture_data import FILES, seed
from tests.reports.helpers import Event
from tests.support.axe import assert_accessible
from tests.support.server import LiveServer
from tests.web.conftest import Console, unique

pytestmark = pytest.mark.parametrize("console_server", ["sqlite"], indirect=True)
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def captured(console_server: LiveServer) -> tuple[int, list[Event]]:
    client = sign_in(console_server)
    try:
        return _seed(client, console_server)
    finally:
        client.close()


def _seed(client: httpx.Client, console_server: LiveServer) -> tuple[int, list[Event]]:
    site = client.post("/api/sites", json={"name": "Capture shop", "domain": unique("cap") + ".example.com"})
    assert site.status_code == 201, site.text
    site_id = int(site.json()["id"])
    rows = seed(site_id, seed=11)
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, sorted(rows, key=lambda e: e.time))
    db.dispose()
    helpers.wait_caught_up(client)
    return site_id, rows


def _get(client: httpx.Client, site: int, report: str, **params: Any) -> httpx.Response:
    return client.get(f"/api/sites/{site}/reports/{report}", params={"range": "7d", **params})


def test_the_api_answers_each_autocapture_table_and_the_periods_web_vitals(
    console_server: LiveServer, captured: tuple[int, list[Event]]
) -> None:
    site, rows = captured
    client = sign_in(console_server)
    try:
        _check_api(client, site, rows)
    finally:
        client.close()


def _check_api(client: httpx.Client, site: int, rows: list[Event]) -> None:
    missing = Counter(e.path for e in rows if e.name == "404")
    body = _get(client, site, "breakdown", dimension="not_found").json()
    assert [(r["value"], r["events"]) for r in body["rows"]] == sorted(
        missing.items(), key=lambda item: (-item[1], item[0])
    )
    top = body["rows"][0]["value"]
    referrers = _get(client, site, "breakdown", dimension="not_found_referrers", name=top).json()
    assert referrers["name"] == top
    assert sum(r["events"] for r in referrers["rows"]) == missing[top]
    downloads = _get(client, site, "breakdown", dimension="file_downloads", limit="1").json()
    assert downloads["rows"][0]["value"] in FILES
    assert downloads["more"] is True
    rage = _get(client, site, "breakdown", dimension="rage_clicks", limit="100").json()["rows"]
    assert set(rage[0]) == {"value", "page", "visitors", "events", "clicks"}
    assert sum(r["events"] for r in rage) == sum(
        1 for e in rows if e.name == "heatmap_click" and e.props["rage"]
    )
    vitals = _get(client, site, "vitals").json()
    assert [v["name"] for v in vitals["vitals"]] == ["LCP", "INP", "CLS", "FCP", "TTFB"]
    assert sum(v["samples"] for v in vitals["vitals"]) == sum(1 for e in rows if e.name == "web_vital")
    assert vitals["source"] == "store"
    csv = client.get(
        f"/api/sites/{site}/reports/export/breakdown.csv", params={"range": "7d", "dimension": "web_vitals"}
    )
    assert csv.status_code == 200
    assert csv.text.splitlines()[0] == "value,visitors,visits,lcp,lcp_rating,inp,inp_rating,cls,cls_rating"


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        (
            {"dimension": "not_found_referrers"},
            "name",
            "The parameter 'name' (the missing page's path) is required",
        ),
        (
            {"dimension": "not_found_referrers", "name": "typo"},
            "name",
            "must be a page path starting with '/'",
        ),
        (
            {"dimension": "engagement", "name": "/x"},
            "name",
            "only used with dimension=prop or not_found_referrers",
        ),
        ({"dimension": "heatmap"}, "dimension", "must be one of"),
        ({"dimension": "clicked_elements"}, "name", "The parameter 'name' (the page's path) is required"),
        (
            {"dimension": "clicked_elements", "name": "/", "viewport": "watch"},
            "viewport",
            "desktop, tablet, phone",
        ),
        (
            {"dimension": "pages", "viewport": "phone"},
            "viewport",
            "only used with dimension=clicked_elements",
        ),
    ],
)
def test_a_bad_autocapture_table_request_is_a_422_naming_the_parameter(
    console_server: LiveServer,
    captured: tuple[int, list[Event]],
    params: dict[str, str],
    field: str,
    message: str,
) -> None:
    site, _ = captured
    client = sign_in(console_server)
    try:
        response = _get(client, site, "breakdown", **params)
    finally:
        client.close()
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["field"] == field
    assert message in error["message"]


def test_the_heatmap_api_answers_a_pages_clicks_per_element_cell_and_window_width(
    console_server: LiveServer, captured: tuple[int, list[Event]]
) -> None:
    site, rows = captured
    clicks = [e for e in rows if e.name == "heatmap_click"]
    per_page = Counter[str]()
    for e in clicks:
        per_page[e.path] += e.props["clicks"]
    top = min(per_page, key=lambda path: (-per_page[path], path))
    client = sign_in(console_server)
    try:
        pages = _get(client, site, "breakdown", dimension="heatmap_pages", limit="100").json()
        assert [(r["value"], r["clicks"]) for r in pages["rows"]] == sorted(
            per_page.items(), key=lambda item: (-item[1], item[0])
        )
        body = _get(client, site, "heatmap", path=top, viewport="desktop").json()
        assert (body["path"], body["viewport"], body["clicks"]) == (top, "desktop", per_page[top])
        assert body["viewports"] == {"desktop": per_page[top], "tablet": 0, "phone": 0}
        # The seed clicks at x 0.5, y 0.25: the cells whose centres are 0.525 and 0.275.
        assert {(s["x"], s["y"]) for s in body["spots"]} == {(0.525, 0.275)}
        assert sum(s["clicks"] for s in body["spots"]) == per_page[top]
        assert body["more"] is False
        assert _get(client, site, "heatmap", path=top, viewport="phone").json()["spots"] == []
        elements = _get(client, site, "breakdown", dimension="clicked_elements", name=top, viewport="desktop")
        assert sum(r["clicks"] for r in elements.json()["rows"]) == per_page[top]
        assert elements.json()["viewport"] == "desktop"
        csv = client.get(
            f"/api/sites/{site}/reports/export/breakdown.csv",
            params={"range": "7d", "dimension": "clicked_elements", "name": top, "viewport": "desktop"},
        )
        assert csv.status_code == 200
        assert csv.text.splitlines()[0] == "value,visitors,clicks"
        for params, field in (
            ({}, "path"),
            ({"path": "pricing"}, "path"),
            ({"path": "/", "viewport": "4k"}, "viewport"),
        ):
            refused = _get(client, site, "heatmap", **params)
            assert refused.status_code == 422
            assert refused.json()["error"]["field"] == field
        snapshot = client.get(f"/api/sites/{site}/recordings/snapshot", params={"path": top})
        assert snapshot.json() == {"recording_enabled": False, "snapshot": None}
        refused = client.get(f"/api/sites/{site}/recordings/snapshot", params={"path": top, "viewport": "4k"})
        assert refused.status_code == 422
        assert refused.json()["error"]["field"] == "viewport"
        assert client.get(f"/api/sites/{site}/recordings/snapshot").json()["error"]["field"] == "path"
    finally:
        client.close()


def test_the_dashboard_lists_404s_with_their_referrers_links_engagement_and_web_vitals(
    console: Console, captured: tuple[int, list[Event]]
) -> None:
    site, rows = captured
    tab = console.signed_in()
    tab.goto(f"/sites/{site}/reports?range=7d")
    missing = tab.locator('table[data-dimension="not_found"]')
    hits = Counter(e.path for e in rows if e.name == "404")
    top = min(hits, key=lambda path: (-hits[path], path))  # the table's order: hits, then path
    expect(missing.locator("tbody tr").first.locator("th")).to_contain_text(top)
    missing.get_by_role("button", name=top, exact=True).click()
    referrers = tab.locator('table[data-dimension="not_found_referrers"]')
    expect(referrers.locator("tbody tr").first).to_be_visible()
    expect(referrers.locator("tbody th").first).to_have_text(re.compile(r"^(Page /|From )"))
    tab.get_by_role("button", name="All 404 pages").click()
    expect(missing).to_be_visible()

    links = tab.locator("section", has=tab.get_by_role("heading", name="Outbound links and downloads"))
    expect(links.locator('table[data-dimension="outbound_links"]')).to_contain_text("https://")
    links.get_by_role("button", name="File downloads").click()
    expect(links.locator('table[data-dimension="file_downloads"]')).to_contain_text("cdn.example.com")

    heat = tab.locator('table[data-dimension="heatmap_pages"]')
    link = heat.locator("tbody tr").first.locator("th a")
    expect(link).to_have_attribute("href", re.compile(rf"^/sites/{site}/heatmap\?range=7d&path=%2F"))
    expect(link).to_have_attribute("target", "_top")

    frustrated = tab.locator("section", has=tab.get_by_role("heading", name="Frustrated clicks"))
    for kind in ("rage", "dead"):
        if kind == "dead":
            frustrated.get_by_role("button", name="Dead clicks").click()
        row = frustrated.locator(f'table[data-dimension="{kind}_clicks"] tbody th').first
        expect(row).to_contain_text(" on /")
        # The row opens the heatmap of the page the element is on (text and link read together:
        # the table may re-render in between as the store takes in the last events).
        text, href = row.locator("a").evaluate("a => [a.textContent, a.getAttribute('href')]")
        page = text.rsplit(" on ", 1)[1]
        assert href == f"/sites/{site}/heatmap?range=7d&path={quote(page, safe='')}", (text, href)

    engagement = tab.locator('table[data-dimension="engagement"]')
    expect(engagement.locator("thead")).to_contain_text("Time on page")
    expect(engagement.locator("tbody tr").first.locator("td").nth(2)).to_have_text(re.compile(r"^\d+%$"))
    cards = tab.locator(".vital-card")
    expect(cards).to_have_count(5)
    expect(cards.first).to_contain_text("LCP")
    expect(cards.first.locator(".vital-rating")).to_have_text(re.compile(r"^(good|needs improvement|poor)$"))
    vitals = tab.locator('table[data-dimension="web_vitals"]')
    expect(vitals.locator("tbody tr").first.locator(".visually-hidden").first).to_have_text(
        re.compile(r"\((good|needs improvement|poor)\)")
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_autocapture_panels_fit_the_screen_and_pass_axe_in_both_themes(
    console: Console, captured: tuple[int, list[Event]], scheme: str, size: str
) -> None:
    site, _ = captured
    tab = console.signed_in(scheme=scheme, viewport=SIZES[size])
    tab.goto(f"/sites/{site}/reports?range=7d")
    expect(tab.locator(".vital-card")).to_have_count(5)
    expect(tab.locator('table[data-dimension="web_vitals"] tbody tr').first).to_be_visible()
    tab.wait_for_load_state("networkidle")
    width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    assert_accessible(tab, f"the reports' autocapture panels ({scheme}, {size})")
    tab.locator(".vital-card").first.scroll_into_view_if_needed()
    console.shoot(tab, f"reports-autocapture-{scheme}-{size}")
