"""End to end: a visitor browses a customer page with the real SDK, and the owner sees the visit in
the reports (API and page), in real Chromium on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.reports.helpers import wait_caught_up
from tests.support.browser import DESKTOP_CHROME, ensure_built
from tests.support.shop import Shop
from tests.web.conftest import Console


@pytest.fixture
def shop() -> Iterator[Shop]:
    ensure_built()
    server = Shop()
    yield server
    server.close()


def _summary(owner: httpx.Client, site_id: int) -> dict[str, Any]:
    body: dict[str, Any] = owner.get(
        f"/api/sites/{site_id}/reports/summary", params={"range": "today"}
    ).json()
    return body


def test_a_visit_made_with_the_real_sdk_shows_in_the_reports(
    browser: Browser, console: Console, owner: httpx.Client, shop: Shop
) -> None:
    created = owner.post("/api/sites", json={"name": "SDK shop", "domain": shop.domain})
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
    tab.evaluate("window.analytics.event('signup', {plan: 'pro'})")
    tab.close()  # pagehide flushes what is queued
    visitor.close()

    deadline = time.monotonic() + 30
    while _summary(owner, site["id"])["current"]["pageviews"] < 2:
        assert time.monotonic() < deadline, "the visit never reached the reports"
        time.sleep(0.3)
    wait_caught_up(owner)
    current = _summary(owner, site["id"])["current"]
    assert (current["visitors"], current["visits"], current["pageviews"]) == (1, 1, 2)
    assert current["bounce_rate"] == 0.0
    events = owner.get(
        f"/api/sites/{site['id']}/reports/breakdown", params={"range": "today", "dimension": "events"}
    ).json()["rows"]
    assert events == [{"value": "signup", "visitors": 1, "events": 1}]

    page = console.signed_in()
    page.goto(f"/sites/{site['id']}/reports?range=today")
    expect(page.locator('.report-card[data-metric="visitors"] .report-card-value')).to_have_text("1")
    expect(page.locator('.report-card[data-metric="pageviews"] .report-card-value')).to_have_text("2")
    pages = page.locator('table[data-dimension="page"]')
    expect(pages).to_contain_text("/next")
    expect(page.locator('table[data-dimension="event"]')).to_contain_text("signup")
    console.shoot(page, "reports-real-sdk")
