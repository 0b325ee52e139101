"""The realtime view refreshes itself, and the open dashboard reloads its figures, in real Chromium."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from sightline.database import open_database
from tests.reports import helpers
from tests.support.server import LiveServer
from tests.web.conftest import Console, unique

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def _visit(server: LiveServer, site_id: int, visitor: str, path: str, source: str | None = None) -> None:
    assert server.database_url is not None
    db = open_database(server.database_url, migrate=False)
    event = helpers.Event(
        site_id,
        datetime.now(UTC) - timedelta(seconds=20),
        visitor,
        f"{visitor}-visit",
        "pageview",
        path,
        source,
        None,
        None,
        None,
        "Chrome",
        "Linux",
        "desktop",
    )
    helpers.insert_events(db, [event])
    db.dispose()


@pytest.fixture
def live_site(console: Console, console_server: LiveServer) -> int:
    tab = console.signed_in()
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Live shop", "domain": unique("live") + ".example.com"}
    )
    assert isinstance(site, dict)
    tab.context.close()
    _visit(console_server, site["id"], "a", "/pricing", "news.ycombinator.com")
    _visit(console_server, site["id"], "b", "/pricing")
    _visit(console_server, site["id"], "c", "/docs")
    with console_server.client() as client:  # the dashboard's figures reload once a minute only
        client.post(
            "/api/login", json={"email": "owner@example.com", "password": "correct horse battery staple"}
        )
        helpers.wait_caught_up(client)
    return int(site["id"])


def test_the_realtime_view_shows_who_is_on_the_site_and_refreshes_by_itself(
    console: Console, console_server: LiveServer, live_site: int
) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{live_site}/reports")
    tab.get_by_role("link", name=re.compile(r"^3 visitors in the last 5 minutes$")).click()
    expect(tab.get_by_role("heading", level=1, name="Realtime: Live shop")).to_be_visible()
    now = tab.locator(".realtime-figure").first
    expect(now).to_have_text(re.compile(r"^3\s*visitors in the last 5 minutes"), timeout=30_000)
    pages = tab.locator('table[data-dimension="realtime-pages"] tbody tr')
    expect(pages.first).to_contain_text("/pricing")
    expect(pages.first.locator("td")).to_have_text("2")
    sources = tab.locator('table[data-dimension="realtime-sources"]')
    expect(sources).to_contain_text("news.ycombinator.com")
    expect(sources).to_contain_text("Direct / none")

    # A new visitor arrives: the view shows it without a reload (it refreshes every 10 s).
    _visit(console_server, live_site, "d", "/checkout")
    expect(now).to_have_text(re.compile(r"^4\s*visitors"), timeout=40_000)
    expect(tab.locator('table[data-dimension="realtime-pages"]')).to_contain_text("/checkout")
    # The per-minute chart of the last 30 minutes counts the four pageviews in its last minutes.
    per_minute = re.compile(r"^Visitors per minute over the last 30 minutes: (0, ){27}")
    chart = tab.get_by_role("img", name=per_minute)
    expect(chart).to_have_accessible_name(re.compile(r"4 pageviews in all\.$"))
    expect(chart.locator("rect")).to_have_count(30)


def test_the_open_dashboard_reloads_its_figures(
    console: Console, console_server: LiveServer, live_site: int
) -> None:
    tab = console.signed_in()
    tab.clock.install()
    tab.goto(f"/sites/{live_site}/reports?range=today")
    visitors = tab.locator('.report-card[data-metric="visitors"] .report-card-value')
    expect(visitors).to_have_text("3", timeout=30_000)
    _visit(console_server, live_site, "e", "/about")
    _visit(console_server, live_site, "f", "/about")
    with console_server.client() as client:
        client.post(
            "/api/login", json={"email": "owner@example.com", "password": "correct horse battery staple"}
        )
        helpers.wait_caught_up(client)
    tab.clock.run_for(61_000)
    expect(visitors).to_have_text("5")
    expect(tab.locator('.report-panel table[data-dimension="page"]')).to_contain_text("/about")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_realtime_view_fits_the_screen_in_both_themes(
    console: Console, live_site: int, scheme: str, size: str
) -> None:
    tab = console.signed_in(scheme=scheme, viewport=SIZES[size])
    tab.goto(f"/sites/{live_site}/realtime")
    expect(tab.locator('table[data-dimension="realtime-pages"] tbody tr').first).to_be_visible(timeout=30_000)
    width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    bars = tab.locator(".realtime-minutes rect").evaluate_all(
        "rects => rects.filter(r => r.getBoundingClientRect().height > 0).map(r => getComputedStyle(r).fill)"
    )
    assert bars, "the minute with the visits has no bar"
    assert len(set(bars)) == 1
    assert bars[0] != "none"
    console.shoot(tab, f"realtime-{scheme}-{size}")


def test_todays_sources_beyond_the_top_ten_are_in_the_details(
    console: Console, console_server: LiveServer
) -> None:
    tab = console.signed_in()
    site = console.api(tab, "POST", "/api/sites", {"name": "Many", "domain": unique("many") + ".example.com"})
    assert isinstance(site, dict)
    for n in range(12):
        _visit(console_server, site["id"], f"v{n}", "/", f"source{n:02}.example.org")
    with console_server.client() as client:
        client.post(
            "/api/login", json={"email": "owner@example.com", "password": "correct horse battery staple"}
        )
        helpers.wait_caught_up(client)
    tab.goto(f"/sites/{site['id']}/realtime")
    sources = tab.locator('table[data-dimension="realtime-sources"] tbody tr')
    expect(sources).to_have_count(10)
    expect(tab.get_by_text("Top 10 shown")).to_be_visible()
    tab.get_by_role("button", name="Details: all of today's sources").click()
    dialog = tab.get_by_role("dialog")
    expect(dialog.locator("tbody tr")).to_have_count(12)
    expect(dialog).to_contain_text("source11.example.org")
