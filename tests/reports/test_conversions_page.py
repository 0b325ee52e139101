"""End to end in real Chromium: a visitor browses a customer page with the real SDK; the owner
adds a goal in the site's settings, sees it convert in the Goals panel, filters by it, and builds
a funnel from the visit's steps on the conversions page, then saves it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from sightline.database import open_database
from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.reports import helpers
from tests.reports.helpers import wait_caught_up
from tests.support.axe import assert_accessible
from tests.support.browser import DESKTOP_CHROME, ensure_built
from tests.support.server import LiveServer
from tests.support.shop import Shop
from tests.web.conftest import Console, unique

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def shop() -> Iterator[Shop]:
    ensure_built()
    server = Shop()
    yield server
    server.close()


def test_a_funnel_built_in_the_console_counts_a_visit_the_sdk_sent(
    browser: Browser, console: Console, owner: httpx.Client, shop: Shop
) -> None:
    created = owner.post("/api/sites", json={"name": "Funnel shop", "domain": shop.domain})
    assert created.status_code == 201, created.text
    site = created.json()
    shop.use(console.server.base_url, site["key"])

    visitor = browser.new_context(user_agent=DESKTOP_CHROME)
    tab = visitor.new_page()
    tab.goto(shop.url("/"))
    tab.wait_for_function("window.analytics && window.analytics.status().events === 'ready'")
    tab.click("#next")
    tab.wait_for_url(shop.url("/next"))
    tab.wait_for_function("window.analytics && window.analytics.status().events === 'ready'")
    tab.evaluate("window.analytics.event('signup', {plan: 'pro', amount: 49.5})")
    tab.close()
    visitor.close()

    deadline = time.monotonic() + 30
    summary = f"/api/sites/{site['id']}/reports/summary"
    while owner.get(summary, params={"range": "today"}).json()["current"]["pageviews"] < 2:
        assert time.monotonic() < deadline, "the visit never reached the reports"
        time.sleep(0.3)
    wait_caught_up(owner)
    deadline = time.monotonic() + 30
    events = f"/api/sites/{site['id']}/reports/breakdown"
    while not owner.get(events, params={"range": "today", "dimension": "events"}).json()["rows"]:
        assert time.monotonic() < deadline, "the signup event never reached the reports"
        time.sleep(0.3)

    page = console.signed_in()
    page.goto(f"/sites/{site['id']}/settings#goals")
    goals = page.locator("section", has=page.get_by_role("heading", name="Goals", exact=True))
    goals.get_by_role("button", name="Add a goal").click()
    goals.get_by_label("Goal name").fill("Signup")
    goals.get_by_label("send a custom event").check()
    goals.get_by_label("Event name").fill("signup")
    goals.get_by_label("Revenue from the numeric prop (optional)").fill("amount")
    goals.get_by_role("button", name="Add the goal").click()
    expect(goals.locator("table")).to_contain_text("Sent the event signup")
    stored = owner.get(f"/api/sites/{site['id']}/goals").json()["goals"]
    assert [(g["name"], g["event"], g["revenue"]) for g in stored] == [
        ("Signup", "signup", {"prop": "amount", "currency": "EUR"})
    ]

    page.goto(f"/sites/{site['id']}/reports?range=today")
    panel = page.locator('table[data-dimension="goals"]')
    expect(panel).to_contain_text("Signup")
    expect(panel.locator("tbody tr").first.locator("td").first).to_have_text("1")
    expect(panel).to_contain_text("49.50")
    panel.get_by_role("button", name="Signup").click()
    expect(page.locator(".filter-chip")).to_contain_text("Goal is Signup")
    expect(page.locator('.report-card[data-metric="visits"] .report-card-value')).to_have_text("1")

    page.goto(f"/sites/{site['id']}/conversions?range=today")
    funnel = page.locator("section", has=page.get_by_role("heading", name="Funnel"))
    funnel.get_by_label("Step 2", exact=True).fill("/next")
    funnel.get_by_role("button", name="Add a step").click()
    funnel.get_by_label("Step 3 kind").select_option("event")
    funnel.get_by_label("Step 3", exact=True).fill("signup")
    funnel.get_by_role("button", name="Show the funnel").click()
    rows = funnel.locator(".funnel-table").first.locator("tbody tr")
    expect(rows).to_have_count(3)
    for n in range(3):
        expect(rows.nth(n).locator("td").first).to_have_text("1")
    expect(rows.nth(2)).to_contain_text("signup (event)")
    funnel.get_by_label("Save as").fill("Shop funnel")
    funnel.get_by_role("button", name="Save the funnel").click()
    expect(funnel).to_contain_text('The funnel "Shop funnel" is saved.')
    saved = owner.get(f"/api/sites/{site['id']}/funnels").json()["funnels"]
    assert [(f["name"], f["steps"]) for f in saved] == [
        ("Shop funnel", ["page:/", "page:/next", "event:signup"])
    ]
    journeys = page.locator("section", has=page.get_by_role("heading", name="Journeys"))
    expect(journeys.locator(".journey-path").first).to_contain_text("/next")
    console.shoot(page, "conversions-funnel")


def test_journeys_suggestions_and_custom_events_show_the_owners_events_and_readable_captures(
    console: Console, console_server: LiveServer
) -> None:
    """The SDK's measurements (web vitals, engagement, heatmap clicks) are never journey steps nor
    suggested; the click captures are, under readable names; one visitor reads "1 visitor"."""
    names = ["pageview", "web_vital", "engagement", "heatmap_click", "outbound_link", "web_vital", "Signup"]

    def rows(site_id: int, start: datetime) -> list[dict[str, Any]]:
        return [
            replace(
                helpers.pageview(site_id, start + timedelta(seconds=i), "reader", "/pricing"), name=name
            ).row()
            for i, name in enumerate(names)
        ]

    site_id = helpers.site_with_rows(console_server, "Paths", f"{unique('paths')}.example.com", rows)
    tab = console.signed_in()
    tab.goto(f"/sites/{site_id}/reports?range=today")
    events = tab.locator('table[data-dimension="event"]')
    expect(events).to_contain_text("Signup")
    expect(events).to_contain_text("Outbound link (automatic)")
    expect(events).not_to_contain_text("outbound_link")

    tab.goto(f"/sites/{site_id}/conversions?range=today")
    journeys = tab.locator("section", has=tab.get_by_role("heading", name="Journeys"))
    journeys.get_by_label("Start").fill("/pricing")
    journeys.get_by_role("button", name="Show", exact=True).click()
    path = journeys.locator(".journey-path")
    expect(path).to_have_count(1)
    expect(path).to_contain_text("/pricing → Outbound link (automatic) → Signup (event)")
    expect(path.locator(".journey-count")).to_have_text("1 visitor")
    suggested = tab.locator(f"#step-suggestions-event-{site_id} option")
    expect(suggested).to_have_count(2)
    assert sorted(suggested.evaluate_all("(all) => all.map((o) => o.value)")) == ["Signup", "outbound_link"]
    pages = tab.locator(f"#step-suggestions-page-{site_id} option")
    expect(pages).to_have_count(1)
    # Weekly cohorts before this one had no new visitors: each says so once, not a row of dashes.
    cohorts = tab.locator(".retention-table tbody tr")
    expect(cohorts.last.locator("td").nth(1)).to_have_text("100%")
    empty = cohorts.filter(has=tab.locator("td.retention-empty"))
    expect(empty.first.locator("td.retention-empty")).to_have_text("No new visitors this week")
    assert empty.count() == cohorts.count() - 1
    assert tab.locator(".retention-table tbody td", has_text="\N{EN DASH}").count() == 0
    console.shoot(tab, "journeys-readable")


def test_journeys_under_a_custom_period_and_a_filter_show_paths_and_the_filter_in_words(
    console: Console, console_server: LiveServer
) -> None:
    """A custom period's `from` date and the journey's `from` step travel side by side: the
    journeys answer, with no refusal, and the page names its filter as the chips do."""

    def rows(site_id: int, start: datetime) -> list[dict[str, Any]]:
        return [
            replace(
                helpers.pageview(site_id, start + timedelta(seconds=i), "reader", path), language="de"
            ).row()
            for i, path in enumerate(["/", "/pricing"])
        ]

    site_id = helpers.site_with_rows(console_server, "Custom", f"{unique('custom')}.example.com", rows)
    tab = console.signed_in()
    day = datetime.now(UTC).date().isoformat()
    tab.goto(f"/sites/{site_id}/conversions?range=custom&from={day}&to={day}&language=de")
    expect(tab.locator(".report-note")).to_contain_text("Filtered: Language is German")
    journeys = tab.locator("section", has=tab.get_by_role("heading", name="Journeys"))
    expect(journeys.get_by_label("Start")).to_have_value("/")
    expect(journeys.locator(".journey-path")).to_contain_text("/ → /pricing")
    expect(journeys.locator(".report-error")).to_have_count(0)


def test_direct_traffic_has_one_name_in_the_funnel_breakdown_and_the_dashboard(
    console: Console, console_server: LiveServer
) -> None:
    tab = console.signed_in()
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Direct", "domain": f"{unique('direct')}.example.com"}
    )
    assert isinstance(site, dict)
    site_id = int(site["id"])
    at = datetime.now(UTC) - timedelta(seconds=30)
    rows = [
        helpers.pageview(site_id, at, "walk-in", "/"),
        helpers.pageview(site_id, at + timedelta(seconds=5), "walk-in", "/pricing"),
    ]
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    with console_server.client() as client:
        assert (
            client.post("/api/login", json={"email": OWNER_EMAIL, "password": OWNER_PASSWORD}).status_code
            == 200
        )
        wait_caught_up(client)

    tab.goto(f"/sites/{site_id}/reports?range=today")
    expect(tab.locator('table[data-dimension="source"]')).to_contain_text("Direct / none")
    tab.goto(f"/sites/{site_id}/conversions?range=today")
    funnel = tab.locator("section", has=tab.get_by_role("heading", name="Funnel", exact=True))
    funnel.get_by_label("Step 2", exact=True).fill("/pricing")
    funnel.get_by_label("Breakdown").select_option("source")
    funnel.get_by_role("button", name="Show the funnel").click()
    expect(funnel).to_contain_text("Direct / none")
    expect(funnel).not_to_contain_text("Unknown")


def test_secondary_actions_and_the_conversions_fields_are_drawn_as_controls(console: Console) -> None:
    tab = console.signed_in()
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Looks", "domain": f"{unique('looks')}.example.com"}
    )
    assert isinstance(site, dict)
    outline = (
        "(e) => { const s = getComputedStyle(e); return [parseFloat(s.borderTopWidth), s.borderTopColor]; }"
    )
    tab.goto(f"/sites/{site['id']}/reports")
    for name in ("Add a filter", "Funnels, retention, journeys"):
        width, colour = tab.get_by_role("button" if name.startswith("Add") else "link", name=name).evaluate(
            outline
        )
        assert width >= 1, name
        assert colour not in ("rgba(0, 0, 0, 0)", "transparent"), name
    tab.goto(f"/sites/{site['id']}/conversions")
    width, colour = tab.get_by_role("button", name="Add a step").evaluate(outline)
    assert width >= 1
    assert colour != "rgba(0, 0, 0, 0)"
    for field in (tab.get_by_label("Breakdown"), tab.get_by_label("Step 1", exact=True)):
        box = field.bounding_box()
        assert box is not None
        assert box["height"] >= 36, box


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_conversions_page_has_the_consoles_one_period_menu_and_fits_the_screen(
    console: Console, scheme: str, size: str
) -> None:
    tab = console.signed_in(scheme=scheme, viewport=SIZES[size])
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Periods", "domain": f"{unique('periods')}.example.com"}
    )
    assert isinstance(site, dict)
    tab.goto(f"/sites/{site['id']}/conversions?range=7d")
    periods = tab.get_by_role("group", name="Date range")
    expect(periods.get_by_role("button", name="7 days")).to_have_attribute("aria-pressed", "true")
    # The menu's further periods, its keyboard shortcuts and its custom range, but no realtime
    # and no comparison: the funnels, retention and journeys compare with nothing.
    more = tab.get_by_label("More periods")
    expect(more.locator("option")).not_to_contain_text(["Realtime"])
    expect(tab.get_by_label("Compare with")).to_have_count(0)
    more.select_option("month")
    expect(tab).to_have_url(re.compile(r"/conversions\?.*range=month"))
    tab.keyboard.press("d")
    expect(tab).to_have_url(re.compile(r"range=today"))
    expect(periods.get_by_role("button", name="Today")).to_have_attribute("aria-pressed", "true")
    periods.get_by_role("button", name="Custom").click()
    expect(tab.get_by_role("textbox", name="From")).to_be_visible()
    width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    console.shoot(tab, f"conversions-periods-{scheme}-{size}")
    assert_accessible(tab, f"the conversions page's periods ({scheme}, {size})")
