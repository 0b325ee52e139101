"""The Channels tab of the dashboard's Sources panel in real Chromium: channels by their readable
names, a click filters by one with its chip, and the panel fits 390 px in both themes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from sightline.database import open_database
from tests.reports import helpers
from tests.support.server import LiveServer
from tests.web.conftest import WHOLE_TABS, Console, unique

PHONE = {"width": 390, "height": 844}
# (source, utm_source, utm_medium, visits) seeded today.
VISITS = [
    ("ChatGPT", None, None, 3),
    ("Google", None, None, 2),
    (None, None, None, 1),
    ("news", "news", "email", 1),
]


@pytest.fixture(scope="module")
def channel_site(console_server: LiveServer) -> int:
    with console_server.client() as client:
        signed = client.post(
            "/api/login", json={"email": "owner@example.com", "password": "correct horse battery staple"}
        )
        assert signed.status_code == 200
        site = client.post(
            "/api/sites", json={"name": "Channels", "domain": unique("channels") + ".example.com"}
        ).json()
        now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        start = max(now - timedelta(hours=1), now.replace(hour=0))
        rows = [
            helpers.Event(
                site["id"],
                start + timedelta(seconds=10 * n + i),
                f"v-{n}-{i}",
                f"s-{n}-{i}",
                "pageview",
                "/",
                source,
                utm_source,
                utm_medium,
                None,
                "Chrome",
                "Linux",
                "desktop",
            )
            for n, (source, utm_source, utm_medium, count) in enumerate(VISITS)
            for i in range(count)
        ]
        assert console_server.database_url is not None
        db = open_database(console_server.database_url, migrate=False)
        helpers.insert_events(db, rows)
        db.dispose()
        helpers.wait_caught_up(client)
        return int(site["id"])


def test_the_channels_tab_names_each_channel_and_a_click_filters_by_it(
    console: Console, channel_site: int
) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{channel_site}/reports?range=today")
    panel = tab.locator(".report-panel").filter(has=tab.get_by_role("heading", name="Sources"))
    strip = panel.locator(".segmented")
    # On a desktop the five tabs show whole, on one line (a phone's strip scrolls sideways).
    sizes = strip.evaluate("s => [s.scrollWidth, s.clientWidth, s.parentElement.clientWidth]")
    assert sizes[0] <= sizes[1], f"the Sources tabs are cut at 1280 px: {sizes}"
    panel.get_by_role("button", name="Channels", exact=True).click()
    table = panel.locator('table[data-dimension="channel"]')
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table.locator("tbody tr th")).to_have_text(["AI assistants", "Organic search", "Direct", "E-mail"])
    expect(table.locator("tbody tr").first.locator("td").first).to_have_text("3")
    table.get_by_role("button", name="AI assistants").click()
    expect(tab).to_have_url(re.compile(r"channel=ai_assistants"))
    chip = tab.locator(".filter-chip")
    expect(chip).to_contain_text("Channel is AI assistants")
    expect(table.locator("tbody tr th")).to_have_text(["AI assistants"])
    panel.get_by_role("button", name="Sources", exact=True).click()
    expect(panel.locator('table[data-dimension="source"] tbody tr th')).to_have_text(["ChatGPT"])
    chip.get_by_role("button", name="Remove the channel filter").click()
    expect(tab).not_to_have_url(re.compile(r"channel="))


def test_the_filter_form_offers_the_channels_by_name(console: Console, channel_site: int) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{channel_site}/reports?range=today")
    tab.get_by_role("button", name="Add a filter").click()
    form = tab.get_by_role("form", name="Add a filter")
    form.locator("select").nth(0).select_option("channel")
    form.locator("select").nth(1).select_option("!")
    form.locator("select").nth(2).select_option(label="Direct")  # the channel, by its name
    form.get_by_role("button", name="Apply").click()
    expect(tab).to_have_url(re.compile(r"channel=%21direct"))
    expect(tab.locator(".filter-chip")).to_contain_text("Channel is not Direct")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_channels_tab_fits_390_px_in_both_themes(
    console: Console, channel_site: int, scheme: str
) -> None:
    tab = console.signed_in(scheme=scheme, viewport=PHONE)
    tab.goto(f"/sites/{channel_site}/reports?range=today&channel=~search")
    panel = tab.locator(".report-panel").filter(has=tab.get_by_role("heading", name="Sources"))
    panel.get_by_role("button", name="Channels", exact=True).click()
    expect(panel.locator('table[data-dimension="channel"] tbody tr th')).to_have_text(["Organic search"])
    expect(tab.locator(".filter-chip")).to_contain_text("Channel contains search")
    tab.wait_for_load_state("networkidle")
    width = tab.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the dashboard scrolls sideways at 390 px ({scheme}): {width}"
    cut = panel.locator(".segmented").evaluate(WHOLE_TABS)
    assert cut == [], f"Sources tabs cut at 390 px: {cut}"
    console.shoot(tab, f"reports-channels-{scheme}-390")
