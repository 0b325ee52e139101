"""The reports page in real Chromium shows the figures of a seeded site, filters by a click, and
works by keyboard, in light and dark, on a desktop and a phone."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Locator, Page, expect

from sightline.database import open_database
from tests.reports import helpers
from tests.support.server import LiveServer
from tests.web.conftest import PHONE, Console, unique


@pytest.fixture
def seeded_site(console: Console, console_server: LiveServer) -> tuple[int, list[helpers.Event]]:
    tab = console.signed_in()
    site = console.api(
        tab, "POST", "/api/sites", {"name": "Shop reports", "domain": f"{unique('shop')}.example.com"}
    )
    assert isinstance(site, dict)
    site_id = int(site["id"])
    now = datetime.now(UTC)
    rows = helpers.generate(site_id, now - timedelta(days=1), visits=120, days=5, seed=11)
    rows += [
        helpers.Event(
            site_id,
            now - timedelta(seconds=40),
            "live-1",
            "live-1",
            "pageview",
            "/",
            None,
            None,
            None,
            None,
            "Chrome",
            "Linux",
            "desktop",
        ),
        helpers.Event(
            site_id,
            now - timedelta(seconds=80),
            "live-2",
            "live-2",
            "pageview",
            "/docs",
            None,
            None,
            None,
            None,
            "Firefox",
            "Linux",
            "desktop",
        ),
    ]
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, rows)
    db.dispose()
    tab.context.close()
    with console_server.client() as client:
        assert (
            client.post(
                "/api/login", json={"email": "owner@example.com", "password": "correct horse battery staple"}
            ).status_code
            == 200
        )
        helpers.wait_caught_up(client)
    return site_id, rows


def _card(tab: Page, metric: str) -> Locator:
    return tab.locator(f'.report-card[data-metric="{metric}"] .report-card-value')


def test_the_reports_page_shows_the_seeded_figures_and_filters_by_a_click(
    console: Console, seeded_site: tuple[int, list[helpers.Event]]
) -> None:
    site_id, rows = seeded_site
    today = datetime.now(UTC).date()
    first, last = today - timedelta(days=6), today - timedelta(days=1)
    span = helpers.span_of(first, last, "UTC")
    expected = helpers.expected_summary(rows, span)
    tab = console.signed_in()
    tab.goto(f"/sites/{site_id}/reports?range=custom&from={first}&to={last}")
    expect(tab.get_by_role("heading", level=1)).to_have_text("Reports: Shop reports")
    expect(_card(tab, "visitors")).to_have_text(str(expected["visitors"]))
    expect(_card(tab, "visits")).to_have_text(str(expected["visits"]))
    expect(_card(tab, "pageviews")).to_have_text(str(expected["pageviews"]))
    expect(tab.locator(".report-chart canvas").first).to_be_visible()
    expect(tab.get_by_role("status").filter(has_text="in the last 5 minutes")).to_have_text(
        "2 visitors in the last 5 minutes"
    )
    pages = helpers.expected_breakdown(rows, span, "pages")
    top = max(pages.items(), key=lambda kv: (kv[1]["pageviews"], kv[0]))
    table = tab.locator('table[data-dimension="page"]')
    expect(table.locator("tbody tr").first).to_contain_text(top[0])
    expect(table.locator("tbody tr").first.locator("td").nth(1)).to_have_text(str(top[1]["pageviews"]))
    console.shoot(tab, "reports-light")

    # A click on the page filters the whole dashboard by the visits that viewed it.
    table.get_by_role("button", name=top[0], exact=True).click()
    expect(tab).to_have_url(re.compile(r"page=" + re.escape(top[0].replace("/", "%2F"))))
    filtered = helpers.expected_filtered(rows, span, page=top[0])
    expect(tab.locator(".filter-chip")).to_contain_text(top[0])
    expect(_card(tab, "visits")).to_have_text(str(filtered["visits"]))
    expect(_card(tab, "visitors")).to_have_text(str(filtered["visitors"]))
    tab.get_by_role("button", name="Remove the page filter").click()
    expect(_card(tab, "visits")).to_have_text(str(expected["visits"]))


def test_the_reports_page_works_by_keyboard_in_dark_and_on_a_phone(
    console: Console, seeded_site: tuple[int, list[helpers.Event]]
) -> None:
    site_id, rows = seeded_site
    tab = console.signed_in(scheme="dark", viewport=PHONE)
    tab.goto(f"/sites/{site_id}/reports")
    expect(tab.get_by_role("button", name="7 days")).to_have_attribute("aria-pressed", "true")
    thirty = tab.get_by_role("button", name="30 days")
    tab.wait_for_load_state("networkidle")  # the first figures drawn: nothing takes the focus away
    thirty.focus()
    expect(thirty).to_be_focused()
    thirty.press("Enter")  # the key goes to the button even if a late redraw moved the focus
    expect(tab).to_have_url(re.compile(r"range=30d"))
    expect(thirty).to_have_attribute("aria-pressed", "true")
    start = helpers.span_of(datetime.now(UTC).date() - timedelta(days=29), datetime.now(UTC).date(), "UTC")[0]
    expected = helpers.expected_summary(rows, (start, datetime.now(UTC) + timedelta(hours=1)))
    expect(_card(tab, "visits")).to_have_text(str(expected["visits"]))
    bounce = tab.locator('.report-card[data-metric="bounce_rate"]')
    bounce.focus()
    tab.keyboard.press("Space")
    expect(bounce).to_have_attribute("aria-pressed", "true")
    console.shoot(tab, "reports-dark-phone")
    # Past the screen's edge and not inside a box that scrolls sideways by itself (the UTM tabs):
    # what would make the page itself scroll.
    wide = tab.evaluate(
        """() => {
              const edge = document.documentElement.clientWidth + 1;
              const scrolled = (e) => {
                for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
                  const x = getComputedStyle(a).overflowX;
                  if (x !== 'visible' && x !== 'clip' && a.getBoundingClientRect().right <= edge) return true;
                }
                return false;
              };
              return [...document.querySelectorAll('main *')]
                .filter((e) => e.getBoundingClientRect().right > edge && !scrolled(e))
                .map((e) => e.tagName + '.' + e.className).slice(0, 8);
            }"""
    )
    assert tab.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert wide == [], f"the page scrolls sideways on a phone: {wide}"


def test_every_period_is_chosen_by_menu_or_key_and_the_comparison_by_a_choice(
    console: Console, seeded_site: tuple[int, list[helpers.Event]]
) -> None:
    site_id, rows = seeded_site
    tab = console.signed_in(viewport=PHONE)
    tab.goto(f"/sites/{site_id}/reports")
    tab.wait_for_load_state("networkidle")
    periods = tab.get_by_label("More periods")
    periods.select_option("yesterday")
    expect(tab).to_have_url(re.compile(r"range=yesterday"))
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    expected = helpers.expected_summary(rows, helpers.span_of(yesterday, yesterday, "UTC"))
    expect(_card(tab, "visits")).to_have_text(str(expected["visits"]))
    tab.locator("main h1").click()  # the focus off the menu: keys go to the page
    for key, name in (("m", "month"), ("l", "last_month"), ("y", "12mo"), ("a", "all"), ("d", "today")):
        tab.keyboard.press(key)
        expect(tab).to_have_url(re.compile(rf"range={name}(&|$)"))
    expect(tab.get_by_role("button", name="Today")).to_have_attribute("aria-pressed", "true")
    tab.get_by_label("Compare with").select_option("year")
    expect(tab).to_have_url(re.compile(r"compare=year"))
    tab.reload()
    expect(tab.get_by_label("Compare with")).to_have_value("year")
    tab.locator("main h1").click()
    tab.keyboard.press("x")
    expect(tab).to_have_url(re.compile(r"compare=false"))
    expect(tab.get_by_label("Compare with")).to_have_value("off")
    console.shoot(tab, "reports-periods-phone")


def test_realtime_is_a_period_chosen_by_r_that_updates_itself_and_compares_with_nothing(
    console: Console, console_server: LiveServer, seeded_site: tuple[int, list[helpers.Event]]
) -> None:
    site_id, _ = seeded_site
    tab = console.signed_in(viewport=PHONE)
    tab.goto(f"/sites/{site_id}/reports")
    tab.wait_for_load_state("networkidle")
    tab.locator("main h1").click()  # keys go to the page
    tab.keyboard.press("r")
    expect(tab).to_have_url(re.compile(r"range=realtime(&|$)"))
    expect(tab.get_by_label("More periods")).to_have_value("realtime")
    # The last 30 minutes hold the two visits of the last 80 seconds, none of the older days.
    expect(_card(tab, "visits")).to_have_text("2")
    expect(tab.get_by_label("Compare with")).to_have_count(0)
    expect(tab.locator("main table.visually-hidden caption")).to_contain_text("per minute")
    # A visit arriving while the page is open is shown without a reload.
    late = helpers.pageview(site_id, datetime.now(UTC), "live-3", "/pricing")
    assert console_server.database_url is not None
    db = open_database(console_server.database_url, migrate=False)
    helpers.insert_events(db, [late])
    db.dispose()
    expect(_card(tab, "visits")).to_have_text("3", timeout=45_000)
    console.shoot(tab, "reports-realtime-phone")
