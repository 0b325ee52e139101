"""Cookieless sites and the owner's exclusion link, in Chromium."""

from __future__ import annotations

import re

from playwright.sync_api import BrowserContext, Page

from tests.sdk.helpers import Site, Stored, open_page, wait_until
from tests.support.shop import Shop

STORAGE = "() => [Object.keys(localStorage), Object.keys(sessionStorage), document.cookie]"


def test_a_cookieless_site_stores_nothing_on_the_device_and_two_page_loads_are_one_visitor_and_visit(
    page: Page, context: BrowserContext, shop: Shop, site: Site, stored: Stored
) -> None:
    site.change(cookieless=True, recording_enabled=True)
    open_page(page, shop.url())
    assert page.evaluate("analytics.status()") == {
        "events": "ready",
        "recording": "disabled",
        "feedback": "disabled",
    }
    assert page.evaluate("analytics.getVisitorId()") is None
    assert page.evaluate("analytics.getSessionContext().visitorId") is None
    stored.wait(1)
    page.click("#next")
    page.wait_for_url("**/next")
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    first, second = stored.wait(2)
    assert page.evaluate(STORAGE) == [[], [], ""]
    assert context.cookies() == []
    assert re.fullmatch(r"[0-9a-f]{32}", first.visitor_id)
    assert second.visitor_id == first.visitor_id
    assert second.session_id == first.session_id
    assert [first.path, second.path] == ["/", "/next"]


def test_identify_names_a_cookieless_visitor_without_storing_it(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    site.change(cookieless=True)
    open_page(page, shop.url())
    page.evaluate("analytics.identify('member-42')")
    assert page.evaluate("analytics.getVisitorId()") == "member-42"
    page.evaluate("analytics.event('signup')")
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    events = stored.wait(2)
    assert [e.visitor_id for e in events][1] == "member-42"
    assert page.evaluate(STORAGE) == [[], [], ""]


def test_turning_cookieless_on_removes_what_an_earlier_visit_stored(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url())
    stored.wait(1)
    assert "sightline_visitor" in page.evaluate("Object.keys(localStorage)")
    site.change(cookieless=True)
    page.reload()
    page.wait_for_function("() => window.analytics && analytics.status().events === 'ready'")
    stored.wait(2)
    assert page.evaluate(STORAGE) == [[], [], ""]


def test_the_owners_exclusion_link_keeps_this_browser_out_until_it_is_undone(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    open_page(page, shop.url("/?sightline=exclude"), ready=False)
    wait_until(page, lambda: page.evaluate("analytics.status().events") == "disabled")
    open_page(page, shop.url("/later"), ready=False)
    assert page.evaluate("analytics.status().events") == "disabled"
    page.wait_for_timeout(500)
    assert stored.all() == []
    open_page(page, shop.url("/?sightline=include"))
    [event] = stored.wait(1)
    assert event.path == "/"
