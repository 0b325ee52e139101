"""A single-page app's visit leaves one exit page, the last it viewed: when the visit moves on
after the store has read its first pageview, the earlier page leaves no "0 exits" row behind."""

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
from tests.web.conftest import PHONE, Console

APP = "<h1>App</h1><button id='go' onclick=\"history.pushState({}, '', '/app/settings')\">Settings</button>"


@pytest.fixture
def shop() -> Iterator[Shop]:
    ensure_built()
    server = Shop(body=APP)
    yield server
    server.close()


def _report(owner: httpx.Client, site_id: int, kind: str, **params: str) -> dict[str, Any]:
    body: dict[str, Any] = owner.get(
        f"/api/sites/{site_id}/reports/{kind}", params={"range": "today", **params}
    ).json()
    return body


def _until_pageviews(owner: httpx.Client, site_id: int, count: int) -> None:
    deadline = time.monotonic() + 30
    while _report(owner, site_id, "summary")["current"]["pageviews"] < count:
        assert time.monotonic() < deadline, f"{count} pageviews never reached the reports"
        time.sleep(0.3)
    wait_caught_up(owner)


def test_a_single_page_app_visit_that_moves_on_leaves_no_phantom_exit_row(
    browser: Browser, console: Console, owner: httpx.Client, shop: Shop
) -> None:
    site = owner.post("/api/sites", json={"name": "SPA", "domain": shop.domain}).json()
    shop.use(console.server.base_url, site["key"])
    visitor = browser.new_context(user_agent=DESKTOP_CHROME)
    tab = visitor.new_page()
    tab.goto(shop.url("/app"))
    tab.wait_for_function("window.analytics && window.analytics.status().events === 'ready'")
    _until_pageviews(owner, site["id"], 1)
    exits = _report(owner, site["id"], "breakdown", dimension="exit_pages")["rows"]
    assert [(row["value"], row["visits"]) for row in exits] == [("/app", 1)]

    tab.click("#go")  # the visit moves on inside the app, after the store read its first page
    _until_pageviews(owner, site["id"], 2)
    tab.close()
    visitor.close()

    exits = _report(owner, site["id"], "breakdown", dimension="exit_pages")["rows"]
    assert [(row["value"], row["visits"]) for row in exits] == [("/app/settings", 1)]
    entries = _report(owner, site["id"], "breakdown", dimension="entry_pages")["rows"]
    assert [(row["value"], row["visits"]) for row in entries] == [("/app", 1)]

    for scheme in ("light", "dark"):
        page = console.signed_in(scheme=scheme, viewport=PHONE)
        page.goto(f"/sites/{site['id']}/reports?range=today")
        page.get_by_role("button", name="Exit pages").click()
        table = page.locator('table[data-dimension="exit_page"]')
        expect(table.locator("tbody tr")).to_have_count(1)
        expect(table).to_contain_text("/app/settings")
        expect(table.locator("tbody td.num")).to_have_text(["1", "100%"])
        console.shoot(page, f"reports-exit-pages-{scheme}-phone")
